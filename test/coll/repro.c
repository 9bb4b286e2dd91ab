/*
 * repro.c: floating-point reductions are reproducible (seed 001's advice
 * to implementers).  Float sums of values of very different magnitudes,
 * where the order of the additions changes the result:
 *
 *  - repeated calls with the same arguments give the same bits;
 *  - MPI_Allreduce gives every rank the same bits;
 *  - MPI_Reduce to any root gives the same bits as MPI_Allreduce.
 *
 * Under shmpi the result must also be the canonical fold of its coll.hpp
 * (recursive bisection of the rank range, the split at lo + (n + 1) / 2),
 * which the test computes itself: whatever algorithm SHMPI_COLL selects,
 * the bits are the same.  Scan and Exscan give rank r the fold of ranks
 * 0..r (0..r-1) from left to right, in place or not, and so do their
 * nonblocking forms.
 */
#include "coll_test.h"

enum { N = 4099, REPEAT = 20 };

static float contribution(int rank, int i)
{
    static const float scale[13] = {1e-6f, 1e-5f, 1e-4f, 1e-3f, 1e-2f, 1e-1f, 1.0f,
                                    1e1f,  1e2f,  1e3f,  1e4f,  1e5f,  1e6f};
    const int v = coll_value(rank, (size_t)i, 77);
    /* Magnitudes from 1e-6 to 1e6: sums depend on the order. */
    return (float)v * scale[(rank * 7 + i) % 13] / 1000.0f;
}

#if defined(SHMPI)
/* The canonical fold of the contributions of ranks [lo, hi) at element i. */
static float canonical(int lo, int hi, int i)
{
    if (hi - lo == 1)
        return contribution(lo, i);
    const int mid = lo + (hi - lo + 1) / 2;
    const float a = canonical(lo, mid, i);
    const float b = canonical(mid, hi, i);
    return a + b;
}

/* The prefix reductions' fold of ranks [0, hi) at element i: left to right. */
static float chained(int hi, int i)
{
    float a = contribution(0, i);
    for (int r = 1; r < hi; ++r)
        a = a + contribution(r, i);
    return a;
}

/* Checks rank r's scan (hi = r + 1) or exscan (hi = r) result in `out`. */
static void check_prefix(const float *out, int hi, const char *what)
{
    for (int i = 0; i < N; ++i) {
        const float want = chained(hi, i);
        CHECKF(memcmp(&out[i], &want, sizeof want) == 0, "%s element %d: %a, folded left to right %a", what, i,
               (double)out[i], (double)want);
    }
}
#endif

static int same_bits(const float *a, const float *b, int n) { return memcmp(a, b, sizeof(float) * (size_t)n) == 0; }

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    const int rank = world_rank();
    const int size = world_size();
    float *in = check_malloc(sizeof(float) * N);
    float *first = check_malloc(sizeof(float) * N);
    float *out = check_malloc(sizeof(float) * N);
    float *all = check_malloc(sizeof(float) * N * (size_t)size);
    for (int i = 0; i < N; ++i)
        in[i] = contribution(rank, i);

    /* Allreduce: the same bits on every call ... */
    CHECK_MPI(MPI_Allreduce(in, first, N, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD));
    for (int k = 0; k < REPEAT; ++k) {
        CHECK_MPI(MPI_Allreduce(in, out, N, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD));
        CHECKF(same_bits(first, out, N), "call %d of MPI_Allreduce gave other bits than the first", k);
    }
    /* ... and on every rank. */
    CHECK_MPI(MPI_Gather(first, N, MPI_FLOAT, all, N, MPI_FLOAT, 0, MPI_COMM_WORLD));
    if (rank == 0)
        for (int r = 1; r < size; ++r)
            CHECKF(same_bits(all, all + (size_t)r * N, N), "rank %d's MPI_Allreduce result differs from rank 0's", r);

    /* Reduce to every root: the same bits as Allreduce, on every call. */
    for (int root = 0; root < size; ++root) {
        for (int k = 0; k < 3; ++k) {
            CHECK_MPI(MPI_Reduce(in, out, N, MPI_FLOAT, MPI_SUM, root, MPI_COMM_WORLD));
            if (rank == root)
                CHECKF(same_bits(first, out, N), "MPI_Reduce to %d differs from MPI_Allreduce", root);
        }
    }

#if defined(SHMPI)
    /* The canonical bracketing, whatever the algorithm. */
    for (int i = 0; i < N; ++i) {
        const float want = canonical(0, size, i);
        CHECKF(memcmp(&first[i], &want, sizeof want) == 0,
               "element %d: %a is not the canonical fold %a", i, (double)first[i], (double)want);
    }
    CHECK_MPI(MPI_Scan(in, out, N, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD));
    check_prefix(out, rank + 1, "MPI_Scan");
    memcpy(out, in, sizeof(float) * N);
    CHECK_MPI(MPI_Scan(MPI_IN_PLACE, out, N, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD));
    check_prefix(out, rank + 1, "MPI_Scan in place");
    MPI_Request req;
    CHECK_MPI(MPI_Iscan(in, out, N, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD, &req));
    CHECK_MPI(MPI_Wait(&req, MPI_STATUS_IGNORE));
    check_prefix(out, rank + 1, "MPI_Iscan");
    CHECK_MPI(MPI_Exscan(in, out, N, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD));
    if (rank > 0)
        check_prefix(out, rank, "MPI_Exscan");
    memcpy(out, in, sizeof(float) * N);
    CHECK_MPI(MPI_Exscan(MPI_IN_PLACE, out, N, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD));
    if (rank > 0)
        check_prefix(out, rank, "MPI_Exscan in place");
    CHECK_MPI(MPI_Iexscan(in, out, N, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD, &req));
    CHECK_MPI(MPI_Wait(&req, MPI_STATUS_IGNORE));
    if (rank > 0)
        check_prefix(out, rank, "MPI_Iexscan");
    /* In place gives the same bits. */
    memcpy(out, in, sizeof(float) * N);
    CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, out, N, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD));
    CHECKF(same_bits(first, out, N), "MPI_Allreduce in place differs");
#endif

    free(in);
    free(first);
    free(out);
    free(all);
    MPI_Finalize();
    return 0;
}
