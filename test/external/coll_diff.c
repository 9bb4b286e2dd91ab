/*
 * coll_diff.c: collectives on random derived datatypes, described by the
 * bytes they leave in the receive buffers, for scripts/external-checks.sh's
 * `diff` check.  The same source is built with shmpi's, MPICH's and Open
 * MPI's mpicc and run at the same rank count; diff_compare.py reads the
 * outputs.
 *
 *   mpirun -n N coll_diff ROUNDS PREFIX [START]
 *
 * Each round draws (alike on every rank) a derived datatype whose elements
 * never overlap (strides and displacements grow; each level is resized to
 * explicit bounds around its data), a
 * count, a root and counts per rank, and runs Bcast, Gather, Scatter,
 * Allgather, Alltoall, Gatherv, Scatterv, Allgatherv, Alltoallv, a Sendrecv
 * ring, Ibcast, Igatherv, Iallgather, Ialltoall, Alltoallw and
 * Neighbor_allgather and _alltoall on a periodic ring with it; then Reduce,
 * Allreduce (MPI_BXOR, MPI_MAX, MPI_MINLOC on MPI_2INT), Iallreduce, Scan,
 * Exscan, Reduce_scatter and Reduce_scatter_block on as many ints as the
 * type's bytes.  Send buffers hold bytes that depend on the rank and
 * the offset; receive buffers start as 0xEE, gaps included, so a byte
 * written where the type has a gap shows.  Each rank adds to PREFIX.RANK,
 * per round from START (default 0) on, "== R", the type and then "OP HASH"
 * lines, HASH an FNV-1a hash of the receive buffer's every byte.  Messages
 * reach a few MiB, so the pipelined and single-copy paths are taken too.
 */
#include "diff_common.h"

static FILE *out;

static void report(const char *op, const struct region *r)
{
    fprintf(out, "%s %016llx\n", op, (unsigned long long)hash_of(r));
}

static void round_of(int me, int np, int round)
{
    state = 4242 + (uint64_t)round * 104729;
    char desc[DESC] = "";
    MPI_Datatype t = make_type(3, &mixed_leaves, desc);
    MPI_Type_commit(&t);
    int size;
    MPI_Type_size(t, &size);
    /* counts from one element to a few MiB a rank */
    static const long scale[] = {1, 2, 3, 17, 300, 5000, 40000};
    long c = scale[rnd(7)];
    while (c > 1 && c * (long)extent_of(t) * (np > 2 ? np : 2) > (8L << 20)) c /= 4;
    const int root = (int)rnd((unsigned)np);
    int counts[64], displs[64], rcounts[64], rdispls[64], total = 0;
    for (int i = 0; i < np; i++) {
        counts[i] = (int)rnd((unsigned)c + 1);
        displs[i] = total + (int)rnd(3);
        total = displs[i] + counts[i];
    }
    fprintf(out, "type %s, count %ld, root %d, size %d\n", desc, c, root, size);

    struct region one = region_for(t, c), all = region_for(t, c * np), big = region_for(t, total > 0 ? total : 1);
    struct region sone = region_for(t, c), sall = region_for(t, c * np), sbig = region_for(t, total > 0 ? total : 1);
    struct region sbig2 = region_for(t, 2 * c);
    fill(&sone, me);
    fill(&sall, me);
    fill(&sbig, me);
    fill(&sbig2, me);

    clear(&one);
    if (me == root) memcpy(one.mem, sone.mem, one.bytes);
    MPI_Bcast(at(&one), (int)c, t, root, MPI_COMM_WORLD);
    report("bcast", &one);

    clear(&all);
    MPI_Gather(at(&sone), (int)c, t, at(&all), (int)c, t, root, MPI_COMM_WORLD);
    if (me == root) report("gather", &all);

    clear(&one);
    MPI_Scatter(at(&sall), (int)c, t, at(&one), (int)c, t, root, MPI_COMM_WORLD);
    report("scatter", &one);

    clear(&all);
    MPI_Allgather(at(&sone), (int)c, t, at(&all), (int)c, t, MPI_COMM_WORLD);
    report("allgather", &all);

    const long per = c / np > 0 ? c / np : 1; /* per * np <= c * np elements */
    clear(&all);
    MPI_Alltoall(at(&sall), (int)per, t, at(&all), (int)per, t, MPI_COMM_WORLD);
    report("alltoall", &all);

    clear(&big);
    MPI_Gatherv(at(&sone), counts[me], t, at(&big), counts, displs, t, root, MPI_COMM_WORLD);
    if (me == root) report("gatherv", &big);

    clear(&one);
    MPI_Scatterv(at(&sbig), counts, displs, t, at(&one), counts[me], t, root, MPI_COMM_WORLD);
    report("scatterv", &one);

    clear(&big);
    MPI_Allgatherv(at(&sone), counts[me], t, at(&big), counts, displs, t, MPI_COMM_WORLD);
    report("allgatherv", &big);

    /* alltoallv: rank i sends (i + j) % 3 * per / 2 elements to j */
    {
        int sc[64], sd[64], s = 0, r = 0;
        for (int j = 0; j < np; j++) {
            sc[j] = (int)(((me + j) % 3) * per / 2);
            sd[j] = s;
            s += sc[j];
            rcounts[j] = (int)(((j + me) % 3) * per / 2);
            rdispls[j] = r + 1;
            r += rcounts[j] + 1;
        }
        struct region rv = region_for(t, r + 1);
        clear(&rv);
        MPI_Alltoallv(at(&sall), sc, sd, t, at(&rv), rcounts, rdispls, t, MPI_COMM_WORLD);
        report("alltoallv", &rv);
        free(rv.mem);
    }

    clear(&one);
    MPI_Sendrecv(at(&sone), (int)c, t, (me + 1) % np, 7, at(&one), (int)c, t, (me + np - 1) % np, 7, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    report("sendrecv", &one);

    /* the nonblocking forms, Alltoallw, and the neighborhood collectives
     * on a periodic ring */
    {
        MPI_Request rq;
        clear(&one);
        if (me == root) memcpy(one.mem, sone.mem, one.bytes);
        MPI_Ibcast(at(&one), (int)c, t, root, MPI_COMM_WORLD, &rq);
        MPI_Wait(&rq, MPI_STATUS_IGNORE);
        report("ibcast", &one);

        clear(&big);
        MPI_Igatherv(at(&sone), counts[me], t, at(&big), counts, displs, t, root, MPI_COMM_WORLD, &rq);
        MPI_Wait(&rq, MPI_STATUS_IGNORE);
        if (me == root) report("igatherv", &big);

        clear(&all);
        MPI_Iallgather(at(&sone), (int)c, t, at(&all), (int)c, t, MPI_COMM_WORLD, &rq);
        MPI_Wait(&rq, MPI_STATUS_IGNORE);
        report("iallgather", &all);

        clear(&all);
        MPI_Ialltoall(at(&sall), (int)per, t, at(&all), (int)per, t, MPI_COMM_WORLD, &rq);
        MPI_Wait(&rq, MPI_STATUS_IGNORE);
        report("ialltoall", &all);

        /* Alltoallw: byte displacements, every block one element apart */
        int wc[64], wsd[64], wrd[64];
        MPI_Datatype wt[64];
        const MPI_Aint ext = extent_of(t);
        for (int j = 0; j < np; j++) {
            wc[j] = (int)(per > 1 ? (j + me) % 2 + per / 2 : 1);
            wsd[j] = (int)(j * per * ext);
            wrd[j] = (int)((np - 1 - j) * per * ext);
            wt[j] = t;
        }
        /* (what j sends me, (j + me) % 2 + per / 2, is my wc[j]) */
        clear(&all);
        MPI_Alltoallw(at(&sall), wc, wsd, wt, at(&all), wc, wrd, wt, MPI_COMM_WORLD);
        report("alltoallw", &all);

        MPI_Comm ring;
        int dims[1] = {np}, periods[1] = {1};
        MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &ring);
        struct region two = region_for(t, 2 * c); /* the left neighbour's, then the right one's */
        clear(&two);
        MPI_Neighbor_allgather(at(&sone), (int)c, t, at(&two), (int)c, t, ring);
        report("neighbor_allgather", &two);
        clear(&two);
        MPI_Neighbor_alltoall(at(&sbig2), (int)c, t, at(&two), (int)c, t, ring);
        report("neighbor_alltoall", &two);
        free(two.mem);
        MPI_Comm_free(&ring);
    }

    /* Reductions take predefined types only: MPI-3.1 5.9.2 gives the
     * predefined operations no derived types (shmpi accepts those built of
     * one basic type, MPICH and Open MPI refuse them). */
    {
        const int ci = (int)(c * size / 8 + 1); /* ints: from one to about a MiB */
        int *si = malloc(sizeof(int) * 2 * (size_t)ci * (size_t)np), *ri = malloc(sizeof(int) * 2 * (size_t)ci * (size_t)np);
        struct region view = {(unsigned char *)ri, sizeof(int) * 2 * (size_t)ci, 0};
        for (int i = 0; i < 2 * ci * np; i++) si[i] = (int)((i * 5 + me * 3) % 17) - 8;
#define REDUCTION(name, call)                                                                                          \
        do {                                                                                                           \
            memset(ri, 0xEE, sizeof(int) * 2 * (size_t)ci * (size_t)np);                                               \
            call;                                                                                                      \
            report(name, &view);                                                                                       \
        } while (0)
        memset(ri, 0xEE, sizeof(int) * 2 * (size_t)ci * (size_t)np);
        MPI_Reduce(si, ri, ci, MPI_INT, MPI_SUM, root, MPI_COMM_WORLD);
        if (me == root) report("reduce_sum", &view);
        REDUCTION("allreduce_bxor", MPI_Allreduce(si, ri, ci, MPI_INT, MPI_BXOR, MPI_COMM_WORLD));
        REDUCTION("allreduce_minloc", MPI_Allreduce(si, ri, ci, MPI_2INT, MPI_MINLOC, MPI_COMM_WORLD));
        REDUCTION("allreduce_max", MPI_Allreduce(si, ri, ci, MPI_INT, MPI_MAX, MPI_COMM_WORLD));
        REDUCTION("scan_sum", MPI_Scan(si, ri, ci, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
        REDUCTION("reduce_scatter_block", MPI_Reduce_scatter_block(si, ri, ci / np + 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
        {
            int rc[64];
            for (int j = 0; j < np; j++) rc[j] = (ci / np) * (j % 3) / 2 + (j == 0);
            REDUCTION("reduce_scatter", MPI_Reduce_scatter(si, ri, rc, MPI_INT, MPI_PROD, MPI_COMM_WORLD));
            MPI_Request rq;
            REDUCTION("iallreduce", MPI_Iallreduce(si, ri, ci, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &rq);
                      MPI_Wait(&rq, MPI_STATUS_IGNORE));
        }
        if (me > 0) /* Exscan leaves rank 0's buffer undefined */
            REDUCTION("exscan_sum", MPI_Exscan(si, ri, ci, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
        else
            MPI_Exscan(si, ri, ci, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
#undef REDUCTION
        free(si);
        free(ri);
    }

    free(one.mem); free(all.mem); free(big.mem); free(sone.mem); free(sall.mem); free(sbig.mem); free(sbig2.mem);
    MPI_Type_free(&t);
}

int main(int argc, char **argv) { return rounds_main(argc, argv, "coll_diff", 64, &out, round_of); }
