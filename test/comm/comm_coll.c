/*
 * Every collective on derived communicators: splits of odd and uneven sizes
 * with ranks in reversed order (key = -rank), a communicator made by
 * MPI_Comm_create without world rank 0, a dup of the world and a dup of
 * MPI_COMM_SELF.  Results are computed by hand from the communicator rank.
 * A wrong translation of communicator ranks to processes, or traffic of one
 * communicator matched on another, shows as a wrong value.
 */
#include "check.h"

static void run_all(MPI_Comm comm, const char *what)
{
    int r = -1, n = -1;
    CHECK_MPI(MPI_Comm_rank(comm, &r));
    CHECK_MPI(MPI_Comm_size(comm, &n));
    int *a = check_malloc(sizeof(int) * (size_t)(n * n + 4 * n + 8));
    int *b = check_malloc(sizeof(int) * (size_t)(n * n + 4 * n + 8));
    int *counts = check_malloc(sizeof(int) * (size_t)n);
    int *displs = check_malloc(sizeof(int) * (size_t)n);
    int *rcounts = check_malloc(sizeof(int) * (size_t)n);
    int *rdispls = check_malloc(sizeof(int) * (size_t)n);

    CHECK_MPI(MPI_Barrier(comm));

    for (int root = 0; root < n; ++root) {
        /* Bcast */
        int v = r == root ? 10 * root + 7 : -1;
        CHECK_MPI(MPI_Bcast(&v, 1, MPI_INT, root, comm));
        CHECKF(v == 10 * root + 7, "%s: bcast from %d gave %d", what, root, v);

        /* Reduce (sum and max) */
        int x[2] = {r + 1, 2 * (r + 1)}, y[2] = {-1, -1};
        CHECK_MPI(MPI_Reduce(x, y, 2, MPI_INT, MPI_SUM, root, comm));
        if (r == root)
            CHECKF(y[0] == n * (n + 1) / 2 && y[1] == n * (n + 1), "%s: reduce to %d gave %d %d", what, root, y[0],
                   y[1]);
        CHECK_MPI(MPI_Reduce(x, y, 1, MPI_INT, MPI_MAX, root, comm));
        if (r == root)
            CHECKF(y[0] == n, "%s: max to %d gave %d", what, root, y[0]);

        /* Gather, gatherv (rank i sends i + 1 copies of i, one gap between blocks) */
        int sq = r * r;
        CHECK_MPI(MPI_Gather(&sq, 1, MPI_INT, a, 1, MPI_INT, root, comm));
        if (r == root)
            for (int i = 0; i < n; ++i)
                CHECKF(a[i] == i * i, "%s: gather to %d: block %d is %d", what, root, i, a[i]);
        for (int i = 0, off = 0; i < n; ++i) {
            counts[i] = i + 1;
            displs[i] = off;
            off += i + 2;
        }
        for (int k = 0; k <= r; ++k)
            b[k] = r;
        for (int k = 0; k < n * n + 4 * n; ++k)
            a[k] = -5;
        CHECK_MPI(MPI_Gatherv(b, r + 1, MPI_INT, a, counts, displs, MPI_INT, root, comm));
        if (r == root)
            for (int i = 0; i < n; ++i) {
                for (int k = 0; k <= i; ++k)
                    CHECKF(a[displs[i] + k] == i, "%s: gatherv to %d: block %d item %d is %d", what, root, i, k,
                           a[displs[i] + k]);
                CHECKF(a[displs[i] + i + 1] == -5, "%s: gatherv wrote into a gap", what);
            }

        /* Scatter, scatterv (the same blocks back) */
        for (int i = 0; i < n; ++i)
            a[i] = 100 * root + i;
        v = -1;
        CHECK_MPI(MPI_Scatter(a, 1, MPI_INT, &v, 1, MPI_INT, root, comm));
        CHECKF(v == 100 * root + r, "%s: scatter from %d gave %d", what, root, v);
        for (int i = 0; i < n; ++i)
            for (int k = 0; k <= i; ++k)
                a[displs[i] + k] = 1000 * root + i;
        for (int k = 0; k <= r; ++k)
            b[k] = -1;
        CHECK_MPI(MPI_Scatterv(a, counts, displs, MPI_INT, b, r + 1, MPI_INT, root, comm));
        for (int k = 0; k <= r; ++k)
            CHECKF(b[k] == 1000 * root + r, "%s: scatterv from %d: item %d is %d", what, root, k, b[k]);
    }

    /* Allreduce, also in place */
    int x = r + 1, s = -1;
    CHECK_MPI(MPI_Allreduce(&x, &s, 1, MPI_INT, MPI_SUM, comm));
    CHECKF(s == n * (n + 1) / 2, "%s: allreduce gave %d", what, s);
    s = r;
    CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, &s, 1, MPI_INT, MPI_MAX, comm));
    CHECKF(s == n - 1, "%s: allreduce in place gave %d", what, s);

    /* Allgather, allgatherv */
    int sq = r * r;
    CHECK_MPI(MPI_Allgather(&sq, 1, MPI_INT, a, 1, MPI_INT, comm));
    for (int i = 0; i < n; ++i)
        CHECKF(a[i] == i * i, "%s: allgather block %d is %d", what, i, a[i]);
    for (int k = 0; k <= r; ++k)
        b[k] = r;
    CHECK_MPI(MPI_Allgatherv(b, r + 1, MPI_INT, a, counts, displs, MPI_INT, comm));
    for (int i = 0; i < n; ++i)
        for (int k = 0; k <= i; ++k)
            CHECKF(a[displs[i] + k] == i, "%s: allgatherv block %d item %d is %d", what, i, k, a[displs[i] + k]);

    /* Alltoall: block j of rank i is 100 i + j */
    for (int j = 0; j < n; ++j)
        a[j] = 100 * r + j;
    CHECK_MPI(MPI_Alltoall(a, 1, MPI_INT, b, 1, MPI_INT, comm));
    for (int i = 0; i < n; ++i)
        CHECKF(b[i] == 100 * i + r, "%s: alltoall block %d is %d", what, i, b[i]);

    /* Alltoallv: rank i sends j + 1 copies of 1000 i + j to rank j */
    for (int j = 0, off = 0; j < n; ++j) {
        counts[j] = j + 1;
        displs[j] = off;
        for (int k = 0; k <= j; ++k)
            a[off + k] = 1000 * r + j;
        off += j + 1;
    }
    for (int i = 0; i < n; ++i) {
        rcounts[i] = r + 1;
        rdispls[i] = i * (r + 2);
    }
    CHECK_MPI(MPI_Alltoallv(a, counts, displs, MPI_INT, b, rcounts, rdispls, MPI_INT, comm));
    for (int i = 0; i < n; ++i)
        for (int k = 0; k <= r; ++k)
            CHECKF(b[rdispls[i] + k] == 1000 * i + r, "%s: alltoallv from %d item %d is %d", what, i, k,
                   b[rdispls[i] + k]);
    /* Alltoallv of nothing, from and to NULL buffers (allowed with every
     * count 0), displacements 0, 2, 4, ...: the sanitizer builds check that
     * nothing is copied from or to NULL. */
    for (int j = 0; j < n; ++j) {
        counts[j] = rcounts[j] = 0;
        displs[j] = rdispls[j] = 2 * j;
    }
    CHECK_MPI(MPI_Alltoallv(NULL, counts, displs, MPI_INT, NULL, rcounts, rdispls, MPI_INT, comm));

    /* Reduce_scatter_block: element j of rank i is i + j */
    for (int j = 0; j < n; ++j)
        a[j] = r + j;
    s = -1;
    CHECK_MPI(MPI_Reduce_scatter_block(a, &s, 1, MPI_INT, MPI_SUM, comm));
    CHECKF(s == n * (n - 1) / 2 + n * r, "%s: reduce_scatter_block gave %d", what, s);

    /* Reduce_scatter: block j has j + 1 elements, all r + 1 */
    int total = 0;
    for (int j = 0; j < n; ++j) {
        counts[j] = j + 1;
        total += j + 1;
    }
    for (int k = 0; k < total; ++k)
        a[k] = r + 1;
    CHECK_MPI(MPI_Reduce_scatter(a, b, counts, MPI_INT, MPI_SUM, comm));
    for (int k = 0; k <= r; ++k)
        CHECKF(b[k] == n * (n + 1) / 2, "%s: reduce_scatter item %d is %d", what, k, b[k]);

    /* Scan, exscan */
    x = r + 1;
    CHECK_MPI(MPI_Scan(&x, &s, 1, MPI_INT, MPI_SUM, comm));
    CHECKF(s == (r + 1) * (r + 2) / 2, "%s: scan gave %d", what, s);
    s = -77;
    CHECK_MPI(MPI_Exscan(&x, &s, 1, MPI_INT, MPI_SUM, comm));
    if (r > 0)
        CHECKF(s == r * (r + 1) / 2, "%s: exscan gave %d", what, s);

    CHECK_MPI(MPI_Barrier(comm));
    free(a);
    free(b);
    free(counts);
    free(displs);
    free(rcounts);
    free(rdispls);
}

int main(int argc, char **argv)
{
    CHECK_MPI(MPI_Init(&argc, &argv));
    const int rank = world_rank();

    MPI_Comm thirds, dup, self, nozero;
    CHECK_MPI(MPI_Comm_split(MPI_COMM_WORLD, rank % 3, -rank, &thirds));
    run_all(thirds, "split by rank % 3");

    CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    run_all(dup, "dup of world");

    MPI_Group wg, g;
    CHECK_MPI(MPI_Comm_group(MPI_COMM_WORLD, &wg));
    int zero = 0;
    CHECK_MPI(MPI_Group_excl(wg, 1, &zero, &g));
    CHECK_MPI(MPI_Comm_create(dup, g, &nozero));
    if (rank != 0)
        run_all(nozero, "world without rank 0");
    else
        CHECK(nozero == MPI_COMM_NULL);

    /* The split again, now interleaved with collectives on the dup. */
    run_all(thirds, "split by rank % 3, again");
    run_all(dup, "dup of world, again");

    CHECK_MPI(MPI_Comm_dup(MPI_COMM_SELF, &self));
    run_all(self, "dup of self");

    CHECK_MPI(MPI_Group_free(&g));
    CHECK_MPI(MPI_Group_free(&wg));
    if (nozero != MPI_COMM_NULL)
        CHECK_MPI(MPI_Comm_free(&nozero));
    CHECK_MPI(MPI_Comm_free(&self));
    CHECK_MPI(MPI_Comm_free(&dup));
    CHECK_MPI(MPI_Comm_free(&thirds));
    CHECK_MPI(MPI_Finalize());
    return 0;
}
