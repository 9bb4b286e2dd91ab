/*
 * neighbor_diff.c: the neighborhood collectives on random virtual
 * topologies and random derived datatypes, described by the bytes they leave
 * in the receive buffers, for scripts/external-checks.sh's `diff` check.
 * The same source is built with shmpi's, MPICH's and Open MPI's mpicc and
 * run at the same rank count; diff_compare.py reads the outputs.
 *
 *   mpirun -n N neighbor_diff ROUNDS PREFIX [START]
 *
 * Each round draws (alike on every rank) one topology over MPI_COMM_WORLD,
 * without reordering:
 *   - a Cartesian grid of 1 to 3 dimensions, each periodic or not, whose
 *     sizes multiply to N (dimensions of 1 and 2, where a rank is its own
 *     neighbour or both of another's, among them);
 *   - a graph (MPI_Graph_create) of random undirected edges, self loops and
 *     repeated edges among them;
 *   - a distributed graph (MPI_Dist_graph_create_adjacent) of random
 *     directed edges, repeated ones and self loops among them, weighted or
 *     not;
 * then a derived datatype (diff_common.h's make_type) and a count.  Each
 * rank reports its neighbours (MPI_Cart_shift, MPI_Graph_neighbors,
 * MPI_Dist_graph_neighbors with the weights) and then, for
 * MPI_Neighbor_allgather, _allgatherv, _alltoall, _alltoallv, _alltoallw,
 * MPI_Ineighbor_alltoallv and _alltoallw, MPI_Ineighbor_alltoall and
 * _allgatherv started together, and
 * MPI_Neighbor_alltoall on an MPI_Comm_dup of the topology, the error class
 * and an FNV-1a hash of the receive buffer's every byte.  Receive buffers
 * start as 0xEE, so blocks from MPI_PROC_NULL, gaps between blocks and gaps
 * inside the type show.  The v and w forms give every message a count of
 * its own (0 among them), which both ends compute from the sender, the
 * receiver and which of the messages between them it is: for a grid its
 * direction (MPI-3.1 7.6: what goes to the neighbour below arrives in that
 * neighbour's block for the neighbour above), for graphs its place among
 * the messages between the pair (the k-th message fills the k-th block).
 * Ranks are printed as numbers, MPI_PROC_NULL as "null".  Each line is
 * judged on its own (mode `lines`): the peers differ with each other on
 * about 7% of them, each wrong where the other is right, and shmpi sides
 * with the right one every time:
 *   - MPICH 4.0.2's Neighbor_alltoall and Ineighbor_alltoall fill the
 *     blocks from a repeated neighbour in reverse order: right for the two
 *     blocks of one periodic dimension of 1 or 2 ranks (they must swap),
 *     wrong for repeated graph edges (two ranks, each the other's three
 *     sources and destinations, blocks 0 1 2 sent: 2 1 0 arrive; Open MPI
 *     and shmpi: 0 1 2) and for two such dimensions.  Its
 *     Neighbor_alltoallv and _alltoallw fill them in order: right for
 *     graphs, wrong for those dimensions;
 *   - Open MPI 4.1's Ineighbor_alltoall swaps nothing there
 *     (open-mpi/ompi#14430).
 * On one rank with dimensions {1 periodic, 1 periodic, 1} and blocks
 * s0..s5 sent, s1 s0 s3 s2 and nothing must arrive (MPI-4.1 example 8.10):
 * MPICH gives s3 s2 s1 s0 with both forms, Open MPI s0 s1 s2 s3 with the
 * nonblocking one.
 */
#include "diff_common.h"

enum {
    MAXN = 64, /* neighbours of a rank at most */
    ANY = 1000 /* the receiver of an allgatherv message: any of them */
};

static FILE *out;

/* One rank's view of the round's topology. */
struct topo {
    MPI_Comm comm;
    int indeg, outdeg;
    int src[MAXN], dst[MAXN];
    /* which of the messages between the pair a block is (see the header) */
    int tag_in[MAXN], tag_out[MAXN];
    /* some rank has more sources than destinations or fewer */
    int uneven;
    /* a periodic dimension of 1 or 2 ranks: both neighbours along it are
     * one rank */
    int short_ring;
};

/* The count (0 to c) of the message from s to d with tag k: both ends
 * compute it alike.  salt tells the calls of a round apart. */
static int msg_count(int s, int d, int k, int c, unsigned salt)
{
    /* (MPI_PROC_NULL's value differs between implementations) */
    if (s == MPI_PROC_NULL) s = -5;
    if (d == MPI_PROC_NULL) d = -5;
    uint64_t h = salt * 0xD6E8FEB86659FD93ULL ^ (uint64_t)(s + 7) * 0x9E3779B97F4A7C15ULL ^
                 (uint64_t)(d + 7) * 0xC2B2AE3D27D4EB4FULL ^ (uint64_t)(k + 1) * 0x165667B19E3779F9ULL;
    h ^= h >> 29;
    h *= 0xBF58476D1CE4E5B9ULL;
    h ^= h >> 32;
    return (int)(h % (uint64_t)(c + 1));
}

static void put_list(const char *what, int n, const int *ranks)
{
    fprintf(out, " %s", what);
    for (int i = 0; i < n; i++) {
        if (ranks[i] == MPI_PROC_NULL) fprintf(out, " null");
        else fprintf(out, " %d", ranks[i]);
    }
    fprintf(out, ";");
}

/* Tags of graph blocks: how many blocks before this one name the same
 * rank. */
static void occurrences(int n, const int *ranks, int *tags)
{
    for (int i = 0; i < n; i++) {
        tags[i] = 0;
        for (int j = 0; j < i; j++) tags[i] += ranks[j] == ranks[i];
    }
}

/* Draws and builds the round's topology; 0 when MPI refused it (reported). */
static int make_topo(int me, int np, struct topo *tp)
{
    const int kind = (int)rnd(3);
    int rc;
    tp->uneven = tp->short_ring = 0;
    if (kind == 0) {
        int nd = irnd(1, 3), dims[3], periods[3], left = np;
        for (int i = 0; i < nd; i++) {
            int divs[64], n = 0;
            for (int d = 1; d <= left; d++)
                if (left % d == 0) divs[n++] = d;
            dims[i] = i == nd - 1 ? left : divs[rnd((unsigned)n)];
            left /= dims[i];
            periods[i] = (int)rnd(2);
            tp->short_ring |= periods[i] && dims[i] <= 2;
        }
        fprintf(out, "cart");
        for (int i = 0; i < nd; i++) fprintf(out, " %d%s", dims[i], periods[i] ? "p" : "");
        rc = MPI_Cart_create(MPI_COMM_WORLD, nd, dims, periods, 0, &tp->comm);
        fprintf(out, ": %s;", error_class_name(rc));
        if (rc != MPI_SUCCESS) {
            fprintf(out, "\n");
            return 0;
        }
        tp->indeg = tp->outdeg = 2 * nd;
        for (int i = 0; i < nd; i++) {
            MPI_Cart_shift(tp->comm, i, 1, &tp->src[2 * i], &tp->src[2 * i + 1]);
            tp->dst[2 * i] = tp->src[2 * i];
            tp->dst[2 * i + 1] = tp->src[2 * i + 1];
            tp->tag_out[2 * i] = 2 * i;         /* sent down */
            tp->tag_out[2 * i + 1] = 2 * i + 1; /* sent up */
            tp->tag_in[2 * i] = 2 * i + 1;      /* from below: sent up */
            tp->tag_in[2 * i + 1] = 2 * i;      /* from above: sent down */
        }
        put_list("neighbours", tp->indeg, tp->src);
    } else if (kind == 1) {
        int deg[MAXN] = {0}, adj[MAXN][MAXN / 2], edges = irnd(0, 2 * np);
        for (int e = 0; e < edges; e++) {
            const int a = (int)rnd((unsigned)np), b = (int)rnd((unsigned)np);
            if (deg[a] >= MAXN / 2 || deg[b] >= MAXN / 2) continue;
            adj[a][deg[a]++] = b;
            if (a != b) adj[b][deg[b]++] = a;
        }
        int index[MAXN], flat[MAXN * MAXN / 2], total = 0;
        for (int r = 0; r < np; r++) {
            for (int i = 0; i < deg[r]; i++) flat[total++] = adj[r][i];
            index[r] = total;
        }
        fprintf(out, "graph %d edges", total);
        rc = MPI_Graph_create(MPI_COMM_WORLD, np, index, flat, 0, &tp->comm);
        fprintf(out, ": %s;", error_class_name(rc));
        if (rc != MPI_SUCCESS) {
            fprintf(out, "\n");
            return 0;
        }
        int n = -1;
        MPI_Graph_neighbors_count(tp->comm, me, &n);
        if (n < 0 || n > MAXN) {
            fprintf(out, " neighbours_count %d\n", n);
            MPI_Comm_free(&tp->comm);
            return 0;
        }
        MPI_Graph_neighbors(tp->comm, me, n, tp->src);
        tp->indeg = tp->outdeg = n;
        memcpy(tp->dst, tp->src, sizeof tp->src);
        occurrences(n, tp->src, tp->tag_in);
        occurrences(n, tp->dst, tp->tag_out);
        put_list("neighbours", n, tp->src);
    } else {
        int edges = irnd(0, 3 * np), s[3 * MAXN], d[3 * MAXN], nin = 0, nout = 0, srcs[MAXN], dsts[MAXN];
        int sw[MAXN], dw[MAXN];
        const int weighted = (int)rnd(2);
        int in_of[MAXN] = {0}, out_of[MAXN] = {0};
        for (int e = 0; e < edges; e++) {
            s[e] = (int)rnd((unsigned)np);
            d[e] = (int)rnd((unsigned)np);
            out_of[s[e]]++;
            in_of[d[e]]++;
        }
        for (int r = 0; r < np; r++) tp->uneven |= in_of[r] != out_of[r];
        for (int e = 0; e < edges; e++) {
            if (d[e] == me && nin < MAXN) { sw[nin] = e + 1; srcs[nin++] = s[e]; }
            if (s[e] == me && nout < MAXN) { dw[nout] = e + 1; dsts[nout++] = d[e]; }
        }
        fprintf(out, "dist_graph %d edges%s", edges, weighted ? " weighted" : "");
        rc = MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, nin, srcs, weighted ? sw : MPI_UNWEIGHTED, nout, dsts,
                                            weighted ? dw : MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &tp->comm);
        fprintf(out, ": %s;", error_class_name(rc));
        if (rc != MPI_SUCCESS) {
            fprintf(out, "\n");
            return 0;
        }
        int i1 = -1, o1 = -1, w = -1;
        MPI_Dist_graph_neighbors_count(tp->comm, &i1, &o1, &w);
        fprintf(out, " counts %d %d weighted %d;", i1, o1, w != 0);
        if (i1 != nin || o1 != nout) {
            fprintf(out, "\n");
            MPI_Comm_free(&tp->comm);
            return 0;
        }
        int rsw[MAXN], rdw[MAXN];
        MPI_Dist_graph_neighbors(tp->comm, nin, tp->src, weighted ? rsw : MPI_UNWEIGHTED, nout, tp->dst,
                                 weighted ? rdw : MPI_UNWEIGHTED);
        tp->indeg = nin;
        tp->outdeg = nout;
        occurrences(nin, tp->src, tp->tag_in);
        occurrences(nout, tp->dst, tp->tag_out);
        put_list("sources", nin, tp->src);
        put_list("destinations", nout, tp->dst);
        if (weighted) {
            put_list("source weights", nin, rsw);
            put_list("destination weights", nout, rdw);
        }
    }
    int status = -1;
    MPI_Topo_test(tp->comm, &status);
    fprintf(out, " topo_test %s\n", status == MPI_CART ? "cart" : status == MPI_GRAPH ? "graph"
                                   : status == MPI_DIST_GRAPH ? "dist_graph" : "other");
    return 1;
}

static void report(const char *op, int rc, const struct region *r)
{
    fprintf(out, "%s %s %016llx\n", op, error_class_name(rc), (unsigned long long)hash_of(r));
}

/* Element displacements for n blocks of the given counts, with gaps of 0
 * to 2 elements (drawn per rank); returns the elements they span. */
static int place_blocks(int n, const int *counts, int *displs)
{
    int at = 0;
    for (int i = 0; i < n; i++) {
        displs[i] = at + (int)rnd(3);
        at = displs[i] + counts[i];
    }
    return at;
}

/* MPI_Neighbor_alltoallw and MPI_Ineighbor_alltoallw of the blocks
 * alltoallv sent: the same counts, with byte displacements, every other
 * receive block as one element of a contiguous type of its count.  Not run where a rank's in- and out-degrees
 * differ: MPICH 4.0.2 mixes them up there, reads past the send buffer and
 * corrupts its heap (pmodels/mpich#6233), which ends its run. */
static void alltoallw_of(const struct topo *tp, MPI_Datatype t, struct region *sout, const int *scounts,
                         const int *sdispls, struct region *rin, const int *rcounts, const int *rdispls)
{
    const MPI_Aint ext = extent_of(t);
    MPI_Aint swd[MAXN], rwd[MAXN];
    MPI_Datatype sts[MAXN], rts[MAXN];
    int rwc[MAXN];
    for (int j = 0; j < tp->outdeg; j++) {
        swd[j] = sdispls[j] * ext;
        sts[j] = t;
    }
    for (int i = 0; i < tp->indeg; i++) {
        rwd[i] = rdispls[i] * ext;
        rts[i] = t;
        rwc[i] = rcounts[i];
        if (i % 2 == 1 && rcounts[i] > 0) {
            MPI_Type_contiguous(rcounts[i], t, &rts[i]);
            MPI_Type_commit(&rts[i]);
            rwc[i] = 1;
        }
    }
    clear(rin);
    int rc = MPI_Neighbor_alltoallw(at(sout), scounts, swd, sts, at(rin), rwc, rwd, rts, tp->comm);
    report("neighbor_alltoallw", rc, rin);
    if (tp->short_ring) fprintf(out, "ineighbor_alltoallw not run\n"); /* (as ineighbor_alltoallv) */
    else {
        clear(rin);
        MPI_Request req;
        rc = MPI_Ineighbor_alltoallw(at(sout), scounts, swd, sts, at(rin), rwc, rwd, rts, tp->comm, &req);
        if (rc == MPI_SUCCESS) rc = MPI_Wait(&req, MPI_STATUS_IGNORE);
        report("ineighbor_alltoallw", rc, rin);
    }
    for (int i = 0; i < tp->indeg; i++)
        if (rts[i] != t) MPI_Type_free(&rts[i]);
}

static void round_of(int me, int np, int round)
{
    state = 7777 + (uint64_t)round * 15485863;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    struct topo tp;
    if (!make_topo(me, np, &tp)) return;
    MPI_Comm_set_errhandler(tp.comm, MPI_ERRORS_RETURN);
    char desc[DESC] = "";
    MPI_Datatype t = make_type(2, &mixed_leaves, desc);
    MPI_Type_commit(&t);
    static const long scale[] = {1, 2, 3, 7, 50, 600, 5000};
    long c = scale[rnd(7)];
    const MPI_Aint ext = extent_of(t);
    while (c > 1 && c * ext * (MAXN / 4) > (4L << 20)) c /= 4;
    const int ci = (int)c, nin = tp.indeg, nout = tp.outdeg;
    fprintf(out, "type %s, count %d\n", desc, ci);
    /* (from here on, each rank draws for itself) */

    /* allgather: c elements to every out-neighbour */
    struct region one = region_for(t, c), rin = region_for(t, nin > 0 ? nin * c : 1);
    fill(&one, me);
    clear(&rin);
    int rc = MPI_Neighbor_allgather(at(&one), ci, t, at(&rin), ci, t, tp.comm);
    report("neighbor_allgather", rc, &rin);
    free(rin.mem);

    /* allgatherv: each sender its own count, gaps between the blocks */
    int rcounts[MAXN], rdispls[MAXN], scounts[MAXN], sdispls[MAXN];
    for (int i = 0; i < nin; i++) rcounts[i] = msg_count(tp.src[i], ANY, 0, ci, 1);
    int span = place_blocks(nin, rcounts, rdispls);
    struct region vin = region_for(t, span > 0 ? span : 1);
    clear(&vin);
    rc = MPI_Neighbor_allgatherv(at(&one), msg_count(me, ANY, 0, ci, 1), t, at(&vin), rcounts, rdispls, t, tp.comm);
    report("neighbor_allgatherv", rc, &vin);
    free(vin.mem);

    /* alltoall: block j to out-neighbour j */
    struct region sout = region_for(t, nout > 0 ? nout * c : 1), ain = region_for(t, nin > 0 ? nin * c : 1);
    fill(&sout, me);
    clear(&ain);
    rc = MPI_Neighbor_alltoall(at(&sout), ci, t, at(&ain), ci, t, tp.comm);
    report("neighbor_alltoall", rc, &ain);

    /* alltoallv: a count per message */
    for (int j = 0; j < nout; j++) scounts[j] = msg_count(me, tp.dst[j], tp.tag_out[j], ci, 2);
    for (int i = 0; i < nin; i++) rcounts[i] = msg_count(tp.src[i], me, tp.tag_in[i], ci, 2);
    const int sspan = place_blocks(nout, scounts, sdispls);
    span = place_blocks(nin, rcounts, rdispls);
    struct region vsout = region_for(t, sspan > 0 ? sspan : 1), vain = region_for(t, span > 0 ? span : 1);
    fill(&vsout, me);
    clear(&vain);
    rc = MPI_Neighbor_alltoallv(at(&vsout), scounts, sdispls, t, at(&vain), rcounts, rdispls, t, tp.comm);
    report("neighbor_alltoallv", rc, &vain);
    /* (Not on a short ring: Open MPI 4.1 matches the two blocks of one
     * neighbour wrongly there, with MPI_ERR_TRUNCATE where their counts
     * differ, and its run hangs later.) */
    if (tp.short_ring) fprintf(out, "ineighbor_alltoallv not run\n");
    else {
        clear(&vain);
        MPI_Request vreq;
        rc = MPI_Ineighbor_alltoallv(at(&vsout), scounts, sdispls, t, at(&vain), rcounts, rdispls, t, tp.comm, &vreq);
        if (rc == MPI_SUCCESS) rc = MPI_Wait(&vreq, MPI_STATUS_IGNORE);
        report("ineighbor_alltoallv", rc, &vain);
    }

    /* alltoallw: the same blocks (alltoallw_of) */
    if (tp.uneven) fprintf(out, "neighbor_alltoallw and ineighbor_alltoallw not run\n");
    else alltoallw_of(&tp, t, &vsout, scounts, sdispls, &vain, rcounts, rdispls);

    /* two nonblocking ones at once */
    for (int i = 0; i < nin; i++) rcounts[i] = msg_count(tp.src[i], ANY, 0, ci, 3);
    span = place_blocks(nin, rcounts, rdispls);
    struct region nvin = region_for(t, span > 0 ? span : 1);
    clear(&nvin);
    clear(&ain);
    MPI_Request req[2];
    int rc1 = MPI_Ineighbor_alltoall(at(&sout), ci, t, at(&ain), ci, t, tp.comm, &req[0]);
    int rc2 = MPI_Ineighbor_allgatherv(at(&one), msg_count(me, ANY, 0, ci, 3), t, at(&nvin), rcounts, rdispls, t,
                                       tp.comm, &req[1]);
    if (rc1 != MPI_SUCCESS) req[0] = MPI_REQUEST_NULL;
    if (rc2 != MPI_SUCCESS) req[1] = MPI_REQUEST_NULL;
    rc = MPI_Waitall(2, req, MPI_STATUSES_IGNORE);
    report("ineighbor_alltoall", rc1 != MPI_SUCCESS ? rc1 : rc, &ain);
    report("ineighbor_allgatherv", rc2 != MPI_SUCCESS ? rc2 : rc, &nvin);
    free(nvin.mem);

    /* the topology goes with MPI_Comm_dup */
    MPI_Comm dup;
    rc = MPI_Comm_dup(tp.comm, &dup);
    if (rc == MPI_SUCCESS) {
        clear(&ain);
        rc = MPI_Neighbor_alltoall(at(&sout), ci, t, at(&ain), ci, t, dup);
        MPI_Comm_free(&dup);
    }
    report("dup_neighbor_alltoall", rc, &ain);

    free(one.mem);
    free(sout.mem);
    free(ain.mem);
    free(vsout.mem);
    free(vain.mem);
    MPI_Type_free(&t);
    MPI_Comm_free(&tp.comm);
}

int main(int argc, char **argv)
{
    return rounds_main(argc, argv, "neighbor_diff", MAXN / 4, &out, round_of);
}
