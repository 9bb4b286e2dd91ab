/*
 * minmaxloc.c: MPI_MINLOC and MPI_MAXLOC on every pair type, exactly as the
 * standard defines them: the pair with the smaller (larger) value wins, and
 * on equal values the one with the smaller index.  Each element has ties
 * between several ranks, with the indices deliberately not in rank order,
 * so a wrong tie rule or an order-dependent one shows.  Through
 * MPI_Allreduce, MPI_Reduce to every root and MPI_Reduce_local.
 */
#include "coll_test.h"

enum { N = 24 };

/* The value rank r contributes at element i: few distinct values, so many
 * ties; and its index: a permutation of the ranks that differs per
 * element. */
static int pair_value(int r, int i) { return (int)((unsigned)(r * 7 + i * 3) % 4u) - 1; }
static int pair_index(int r, int i, int size) { return (int)(((unsigned)r * 5u + (unsigned)i) % (unsigned)size) * 3 + 1; }

/* The expected (value, index) of element i for MAXLOC (want_max) or
 * MINLOC. */
static void expected(int size, int i, int want_max, int *value, int *index)
{
    *value = pair_value(0, i);
    *index = pair_index(0, i, size);
    for (int r = 1; r < size; ++r) {
        const int v = pair_value(r, i), k = pair_index(r, i, size);
        if ((want_max ? v > *value : v < *value) || (v == *value && k < *index)) {
            *value = v;
            *index = k;
        }
    }
}

/* One pair type: its C layout is struct { V value; I index; }. */
#define DEFINE_PAIR_TEST(NAME, V, I, MPIT)                                                  \
    static void test_##NAME(int rank, int size)                                             \
    {                                                                                       \
        struct {                                                                            \
            V value;                                                                        \
            I index;                                                                        \
        } in[N], out[N];                                                                    \
        for (int m = 0; m < 2; ++m) {                                                       \
            const MPI_Op op = m ? MPI_MAXLOC : MPI_MINLOC;                                  \
            for (int i = 0; i < N; ++i) {                                                   \
                in[i].value = (V)pair_value(rank, i);                                       \
                in[i].index = (I)pair_index(rank, i, size);                                 \
            }                                                                               \
            CHECK_MPI(MPI_Allreduce(in, out, N, MPIT, op, MPI_COMM_WORLD));                 \
            for (int i = 0; i < N; ++i) {                                                   \
                int v, k;                                                                   \
                expected(size, i, m, &v, &k);                                               \
                CHECKF(out[i].value == (V)v && out[i].index == (I)k,                        \
                       "%s %s element %d: (%g, %g), expected (%d, %d)", #MPIT,              \
                       m ? "MAXLOC" : "MINLOC", i, (double)out[i].value,                    \
                       (double)out[i].index, v, k);                                         \
            }                                                                               \
            for (int root = 0; root < size; ++root) {                                       \
                memset(out, 0, sizeof out);                                                 \
                CHECK_MPI(MPI_Reduce(in, out, N, MPIT, op, root, MPI_COMM_WORLD));          \
                if (rank != root)                                                           \
                    continue;                                                               \
                for (int i = 0; i < N; ++i) {                                               \
                    int v, k;                                                               \
                    expected(size, i, m, &v, &k);                                           \
                    CHECKF(out[i].value == (V)v && out[i].index == (I)k,                    \
                           "%s reduce to %d element %d", #MPIT, root, i);                   \
                }                                                                           \
            }                                                                               \
            /* Reduce_local: inout = in op inout, with a tie in every other \
             * element: the smaller index must win either way round. */    \
            for (int i = 0; i < N; ++i) {                                                   \
                in[i].value = (V)(i % 2 ? 3 : i);                                           \
                in[i].index = (I)(i % 4 < 2 ? 10 : 20);                                     \
                out[i].value = (V)(i % 2 ? 3 : N - i);                                      \
                out[i].index = (I)(i % 4 < 2 ? 20 : 10);                                    \
            }                                                                               \
            CHECK_MPI(MPI_Reduce_local(in, out, N, MPIT, op));                              \
            for (int i = 0; i < N; ++i) {                                                   \
                if (i % 2) {                                                                \
                    CHECKF(out[i].value == (V)3 && out[i].index == (I)10,                   \
                           "%s Reduce_local tie at %d: index %g", #MPIT, i,                 \
                           (double)out[i].index);                                           \
                } else {                                                                    \
                    const int a = i, b = N - i;                                             \
                    const int win_in = m ? a > b : a < b;                                   \
                    const int v = a == b ? a : (win_in ? a : b);                            \
                    const int k = a == b ? 10 : (win_in ? (i % 4 < 2 ? 10 : 20)             \
                                                       : (i % 4 < 2 ? 20 : 10));           \
                    CHECKF(out[i].value == (V)v && out[i].index == (I)k,                    \
                           "%s Reduce_local at %d", #MPIT, i);                              \
                }                                                                           \
            }                                                                               \
        }                                                                                   \
    }

DEFINE_PAIR_TEST(float_int, float, int, MPI_FLOAT_INT)
DEFINE_PAIR_TEST(double_int, double, int, MPI_DOUBLE_INT)
DEFINE_PAIR_TEST(long_int, long, int, MPI_LONG_INT)
DEFINE_PAIR_TEST(two_int, int, int, MPI_2INT)
DEFINE_PAIR_TEST(short_int, short, int, MPI_SHORT_INT)
DEFINE_PAIR_TEST(long_double_int, long double, int, MPI_LONG_DOUBLE_INT)
DEFINE_PAIR_TEST(two_real, float, float, MPI_2REAL)
DEFINE_PAIR_TEST(two_double_precision, double, double, MPI_2DOUBLE_PRECISION)
DEFINE_PAIR_TEST(two_integer, int32_t, int32_t, MPI_2INTEGER)

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    const int rank = world_rank();
    const int size = world_size();
    test_float_int(rank, size);
    test_double_int(rank, size);
    test_long_int(rank, size);
    test_two_int(rank, size);
    test_short_int(rank, size);
    test_long_double_int(rank, size);
    test_two_real(rank, size);
    test_two_double_precision(rank, size);
    test_two_integer(rank, size);

    /* The standard's remark: MAXLOC over (u_i, i) pairs gives the first
     * maximum.  Every rank contributes the same value. */
    struct {
        double value;
        int index;
    } in = {42.0, rank}, out = {0, -1};
    CHECK_MPI(MPI_Allreduce(&in, &out, 1, MPI_DOUBLE_INT, MPI_MAXLOC, MPI_COMM_WORLD));
    CHECKF(out.value == 42.0 && out.index == 0, "all equal: (%g, %d), expected (42, 0)", out.value, out.index);
    CHECK_MPI(MPI_Allreduce(&in, &out, 1, MPI_DOUBLE_INT, MPI_MINLOC, MPI_COMM_WORLD));
    CHECKF(out.value == 42.0 && out.index == 0, "all equal: (%g, %d), expected (42, 0)", out.value, out.index);

    MPI_Finalize();
    return 0;
}
