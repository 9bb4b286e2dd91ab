/*
 * user_op.c: operations made with MPI_Op_create.
 *
 *  - A non-commutative one: composition of affine maps x -> m*x + c (mod a
 *    prime), carried in MPI_2INT pairs.  Composition is associative but not
 *    commutative, so every reduction (Reduce to every root, Allreduce, Scan,
 *    Exscan, Reduce_scatter_block) must apply it in rank order; the result
 *    is checked against the composition done by hand.
 *  - The function receives the datatype handle the caller passed.
 *  - A commutative one (integer maximum) gives the obvious result.
 *  - MPI_Op_commutative reports what MPI_Op_create was told, MPI_Op_free
 *    sets the handle to MPI_OP_NULL, and predefined operations are
 *    commutative, except the one-sided MPI_REPLACE and MPI_NO_OP.
 */
#include "coll_test.h"

enum { N = 40, P = 1000003 };

typedef struct {
    int m;
    int c;
} affine;

static int wrong_type_seen = 0;
static int calls = 0;

/* inout = in, then inout: (inout o in)(x) = m2*(m1*x + c1) + c2. */
static void compose(void *invec, void *inoutvec, int *len, MPI_Datatype *datatype)
{
    const affine *in = invec;
    affine *io = inoutvec;
    if (*datatype != MPI_2INT)
        wrong_type_seen = 1;
    ++calls;
    for (int i = 0; i < *len; ++i) {
        const long long m = (long long)io[i].m * in[i].m % P;
        const long long c = ((long long)io[i].m * in[i].c + io[i].c) % P;
        io[i].m = (int)m;
        io[i].c = (int)c;
    }
}

static void int_max(void *invec, void *inoutvec, int *len, MPI_Datatype *datatype)
{
    (void)datatype;
    const int *in = invec;
    int *io = inoutvec;
    for (int i = 0; i < *len; ++i)
        if (in[i] > io[i])
            io[i] = in[i];
}

static affine map_of(int rank, int i)
{
    affine a = {(int)((unsigned)(rank * 31 + i * 17) % 97u) + 2, (int)((unsigned)(rank * 13 + i * 7) % 1009u)};
    return a;
}

/* The composition x_lo, then x_lo+1, ..., then x_hi-1 (rank order). */
static affine compose_range(int lo, int hi, int i)
{
    affine acc = map_of(lo, i);
    for (int r = lo + 1; r < hi; ++r) {
        affine a = acc, b = map_of(r, i);
        int one = 1;
        MPI_Datatype t = MPI_2INT;
        compose(&a, &b, &one, &t);
        acc = b;
    }
    return acc;
}

#define CHECK_MAP(got, want, what, i)                                                       \
    CHECKF((got).m == (want).m && (got).c == (want).c, "%s element %d: (%d, %d), expected (%d, %d)", \
           what, i, (got).m, (got).c, (want).m, (want).c)

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    const int rank = world_rank();
    const int size = world_size();

    MPI_Op op;
    CHECK_MPI(MPI_Op_create(compose, 0, &op));
    int commute = -1;
    CHECK_MPI(MPI_Op_commutative(op, &commute));
    CHECK(commute == 0);

    affine in[N * 16], out[N * 16];
    for (int i = 0; i < N; ++i)
        in[i] = map_of(rank, i);

    for (int root = 0; root < size; ++root) {
        memset(out, 0, sizeof out);
        CHECK_MPI(MPI_Reduce(in, out, N, MPI_2INT, op, root, MPI_COMM_WORLD));
        if (rank == root)
            for (int i = 0; i < N; ++i)
                CHECK_MAP(out[i], compose_range(0, size, i), "Reduce", i);
    }
    CHECK_MPI(MPI_Allreduce(in, out, N, MPI_2INT, op, MPI_COMM_WORLD));
    for (int i = 0; i < N; ++i)
        CHECK_MAP(out[i], compose_range(0, size, i), "Allreduce", i);
    memcpy(out, in, sizeof(affine) * N);
    CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, out, N, MPI_2INT, op, MPI_COMM_WORLD));
    for (int i = 0; i < N; ++i)
        CHECK_MAP(out[i], compose_range(0, size, i), "Allreduce in place", i);
    CHECK_MPI(MPI_Scan(in, out, N, MPI_2INT, op, MPI_COMM_WORLD));
    for (int i = 0; i < N; ++i)
        CHECK_MAP(out[i], compose_range(0, rank + 1, i), "Scan", i);
    CHECK_MPI(MPI_Exscan(in, out, N, MPI_2INT, op, MPI_COMM_WORLD));
    if (rank > 0)
        for (int i = 0; i < N; ++i)
            CHECK_MAP(out[i], compose_range(0, rank, i), "Exscan", i);

    /* Reduce_scatter_block: element i of the whole vector is map_of(r, i). */
    {
        const int each = 3;
        affine *all = check_malloc(sizeof(affine) * (size_t)(each * size));
        for (int i = 0; i < each * size; ++i)
            all[i] = map_of(rank, i);
        CHECK_MPI(MPI_Reduce_scatter_block(all, out, each, MPI_2INT, op, MPI_COMM_WORLD));
        for (int i = 0; i < each; ++i)
            CHECK_MAP(out[i], compose_range(0, size, rank * each + i), "Reduce_scatter_block", i);
        free(all);
    }

    /* Reduce_local: inout = in op inout, i.e. in first, then inout. */
    {
        affine a[N], b[N];
        for (int i = 0; i < N; ++i) {
            a[i] = map_of(3, i);
            b[i] = map_of(4, i);
        }
        CHECK_MPI(MPI_Reduce_local(a, b, N, MPI_2INT, op));
        for (int i = 0; i < N; ++i)
            CHECK_MAP(b[i], compose_range(3, 5, i), "Reduce_local", i);
    }
    CHECKF(!wrong_type_seen, "the user function saw a datatype other than the one passed (MPI_2INT)");
    CHECK(calls > 0 || size == 1);

    CHECK_MPI(MPI_Op_free(&op));
    CHECK(op == MPI_OP_NULL);

    /* A commutative user operation. */
    MPI_Op mx;
    CHECK_MPI(MPI_Op_create(int_max, 1, &mx));
    CHECK_MPI(MPI_Op_commutative(mx, &commute));
    CHECK(commute == 1);
    int v[N], w[N];
    for (int i = 0; i < N; ++i)
        v[i] = (rank * 37 + i * 11) % 53;
    CHECK_MPI(MPI_Allreduce(v, w, N, MPI_INT, mx, MPI_COMM_WORLD));
    for (int i = 0; i < N; ++i) {
        int want = 0;
        for (int r = 0; r < size; ++r)
            if ((r * 37 + i * 11) % 53 > want)
                want = (r * 37 + i * 11) % 53;
        CHECKF(w[i] == want, "user max element %d: %d, expected %d", i, w[i], want);
    }
    CHECK_MPI(MPI_Op_free(&mx));

    /* Predefined operations are commutative. */
    CHECK_MPI(MPI_Op_commutative(MPI_SUM, &commute));
    CHECK(commute == 1);
    CHECK_MPI(MPI_Op_commutative(MPI_MAXLOC, &commute));
    CHECK(commute == 1);
    /* Except the one-sided MPI_REPLACE (f(a, b) = b) and MPI_NO_OP
     * (f(a, b) = a). */
    CHECK_MPI(MPI_Op_commutative(MPI_REPLACE, &commute));
    CHECKF(commute == 0, "MPI_Op_commutative(MPI_REPLACE) gave %d", commute);
    CHECK_MPI(MPI_Op_commutative(MPI_NO_OP, &commute));
    CHECKF(commute == 0, "MPI_Op_commutative(MPI_NO_OP) gave %d", commute);

    /* Freeing a predefined operation is an error. */
    errors_return(MPI_COMM_WORLD);
    MPI_Op sum = MPI_SUM;
    CHECK_CLASS(MPI_Op_free(&sum), MPI_ERR_OP);
    errors_fatal(MPI_COMM_WORLD);

    MPI_Finalize();
    return 0;
}
