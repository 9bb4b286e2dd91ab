/*
 * The neighbourhood collectives (MPI_Neighbor_allgather(v),
 * MPI_Neighbor_alltoall(v, w)) on Cartesian grids (periodic, not periodic,
 * mixed), on a graph and on distributed graphs (adjacent and general
 * constructors).  Topologies with repeated edges (a periodic dimension of
 * one or two processes; the shuffle-exchange graph of example 6.2, with its
 * self loops) run in neighbor_dup.c, which includes this file.
 *
 * Each call is checked twice: against the same exchange written with
 * MPI_Isend / MPI_Irecv (the point-to-point reference: byte for byte, the
 * gaps between blocks included), and against the values computed by hand
 * from the neighbour lists.  Blocks of MPI_PROC_NULL neighbours and the
 * gaps between blocks must keep their sentinel.  Each collective runs
 * several times back to back with different data, so messages of
 * consecutive calls cannot be confused.  MPI_Ineighbor_alltoallv and
 * _alltoallw, with the arguments of their blocking forms, must leave the
 * same bytes.
 *
 * Block order, from MPI-3.1 7.6: for a Cartesian grid, for each dimension
 * the neighbour one step down, then one step up; a block sent to the
 * neighbour below arrives in that neighbour's block for the neighbour above.
 * For graphs, Graph_neighbors / Dist_graph_neighbors order; the k-th
 * message between a pair fills the k-th matching block.
 */
#include "check.h"

/* GCC 11 and later take MPI_UNWEIGHTED, a small integer cast to a pointer
 * in Open MPI's header, for an empty array where the prototype says
 * `int []`, and warn. */
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 11
#pragma GCC diagnostic ignored "-Wstringop-overread"
#pragma GCC diagnostic ignored "-Wstringop-overflow"
#endif

#define SENTINEL (-123456789)
#define MAXN 64

typedef struct {
    MPI_Comm comm;
    const char *name;
    int cart;          /* directional block matching */
    int nin, nout;
    int src[MAXN], dst[MAXN];
} Topo;

static int hash3(int a, int b, int c)
{
    unsigned x = (unsigned)a * 2654435761u ^ (unsigned)(b + 7) * 40503u ^ (unsigned)(c + 13) * 97u;
    x ^= x >> 13;
    x *= 0x5bd1e995u;
    x ^= x >> 15;
    return (int)(x & 0x3fffffff);
}

/* Occurrences of list[k] among list[0 .. k-1]. */
static int occurrence(const int *list, int k)
{
    int n = 0;
    for (int j = 0; j < k; ++j)
        if (list[j] == list[k])
            ++n;
    return n;
}

static void fill_lists(Topo *t)
{
    int status = -1;
    CHECK_MPI(MPI_Topo_test(t->comm, &status));
    t->cart = status == MPI_CART;
    if (status == MPI_CART) {
        int nd = 0;
        CHECK_MPI(MPI_Cartdim_get(t->comm, &nd));
        for (int d = 0; d < nd; ++d)
            CHECK_MPI(MPI_Cart_shift(t->comm, d, 1, &t->src[2 * d], &t->src[2 * d + 1]));
        t->nin = t->nout = 2 * nd;
        memcpy(t->dst, t->src, sizeof t->src);
    } else if (status == MPI_GRAPH) {
        int rank = -1;
        CHECK_MPI(MPI_Comm_rank(t->comm, &rank));
        CHECK_MPI(MPI_Graph_neighbors_count(t->comm, rank, &t->nin));
        CHECK(t->nin <= MAXN);
        CHECK_MPI(MPI_Graph_neighbors(t->comm, rank, MAXN, t->src));
        t->nout = t->nin;
        memcpy(t->dst, t->src, sizeof t->src);
    } else {
        CHECK(status == MPI_DIST_GRAPH);
        int weighted = 0;
        CHECK_MPI(MPI_Dist_graph_neighbors_count(t->comm, &t->nin, &t->nout, &weighted));
        CHECK(t->nin <= MAXN && t->nout <= MAXN);
        CHECK_MPI(MPI_Dist_graph_neighbors(t->comm, MAXN, t->src, MPI_UNWEIGHTED, MAXN, t->dst,
                                           MPI_UNWEIGHTED));
    }
}

/* The seed of what I send in block k, and of what I expect in block i. */
static int send_seed(const Topo *t, int me, int k, int iter)
{
    if (t->cart)
        return hash3(me, k, iter);
    return hash3(me, t->dst[k] * 64 + occurrence(t->dst, k), iter);
}

static int recv_seed(const Topo *t, int me, int i, int iter)
{
    if (t->cart)
        return hash3(t->src[i], i ^ 1, iter);
    return hash3(t->src[i], me * 64 + occurrence(t->src, i), iter);
}

/* Element counts of the v-forms: what a sends b (symmetric in meaning). */
static int vcount(int a, int b) { return 1 + (a * 7 + b * 3) % 4; }

/* The point-to-point reference: the same exchange with Isend/Irecv. */
static void reference(const Topo *t, const int *sendbuf, const int *scounts, const int *sdispls, int *recvbuf,
                      const int *rcounts, const int *rdispls)
{
    MPI_Request req[2 * MAXN];
    int n = 0;
    for (int i = 0; i < t->nin; ++i)
        CHECK_MPI(MPI_Irecv(recvbuf + rdispls[i], rcounts[i], MPI_INT, t->src[i], 100 + (t->cart ? (i ^ 1) : 0),
                            t->comm, &req[n++]));
    for (int k = 0; k < t->nout; ++k)
        CHECK_MPI(MPI_Isend(sendbuf + sdispls[k], scounts[k], MPI_INT, t->dst[k], 100 + (t->cart ? k : 0), t->comm,
                            &req[n++]));
    CHECK_MPI(MPI_Waitall(n, req, MPI_STATUSES_IGNORE));
}

static void check_same(const Topo *t, const char *what, const int *got, const int *ref, int n)
{
    for (int x = 0; x < n; ++x)
        CHECKF(got[x] == ref[x], "%s on %s: element %d is %d, the point-to-point reference has %d", what, t->name, x,
               got[x], ref[x]);
}

static void fill(int *buf, int n, int value)
{
    for (int x = 0; x < n; ++x)
        buf[x] = value;
}

/* Block i of recvbuf at displs[i] with counts[i] elements: from a real
 * neighbour it holds seed + x; from MPI_PROC_NULL the sentinel. */
static void check_blocks(const Topo *t, const char *what, const int *recvbuf, const int *counts, const int *displs,
                         int me, int iter, int allgather)
{
    for (int i = 0; i < t->nin; ++i) {
        const int seed = allgather ? hash3(t->src[i], -1, iter) : recv_seed(t, me, i, iter);
        for (int x = 0; x < counts[i]; ++x) {
            const int want = t->src[i] == MPI_PROC_NULL ? SENTINEL : seed + x;
            CHECKF(recvbuf[displs[i] + x] == want,
                   "%s on %s, iteration %d: block %d (from %d) element %d is %d, expected %d", what, t->name, iter, i,
                   t->src[i], x, recvbuf[displs[i] + x], want);
        }
    }
}

static void run(Topo *t)
{
    fill_lists(t);
    int me = -1;
    CHECK_MPI(MPI_Comm_rank(t->comm, &me));
    const int cnt = 3;
    int sendbuf[MAXN * 8], recvbuf[MAXN * 8 + 64], refbuf[MAXN * 8 + 64];
    int scounts[MAXN], sdispls[MAXN], rcounts[MAXN], rdispls[MAXN], zeros[MAXN];
    memset(zeros, 0, sizeof zeros);
    const int rlen = (int)(sizeof recvbuf / sizeof recvbuf[0]);

    for (int iter = 0; iter < 4; ++iter) {
        /* Neighbor_allgather: everyone sends the same block. */
        fill(sendbuf, cnt, 0);
        for (int x = 0; x < cnt; ++x)
            sendbuf[x] = hash3(me, -1, iter) + x;
        for (int i = 0; i < t->nin; ++i) {
            rcounts[i] = cnt;
            rdispls[i] = i * cnt;
        }
        for (int k = 0; k < t->nout; ++k)
            scounts[k] = cnt;
        fill(recvbuf, rlen, SENTINEL);
        fill(refbuf, rlen, SENTINEL);
        CHECK_MPI(MPI_Neighbor_allgather(sendbuf, cnt, MPI_INT, recvbuf, cnt, MPI_INT, t->comm));
        reference(t, sendbuf, scounts, zeros, refbuf, rcounts, rdispls);
        check_same(t, "MPI_Neighbor_allgather", recvbuf, refbuf, rlen);
        check_blocks(t, "MPI_Neighbor_allgather", recvbuf, rcounts, rdispls, me, iter, 1);

        /* Neighbor_allgatherv: my count is vcount(me, 0); gaps of i. */
        const int mycount = vcount(me, 0);
        for (int x = 0; x < mycount; ++x)
            sendbuf[x] = hash3(me, -1, iter) + x;
        int at = 0;
        for (int i = 0; i < t->nin; ++i) {
            rcounts[i] = t->src[i] == MPI_PROC_NULL ? 2 : vcount(t->src[i], 0);
            rdispls[i] = at + i % 2;
            at = rdispls[i] + rcounts[i];
        }
        for (int k = 0; k < t->nout; ++k)
            scounts[k] = mycount;
        fill(recvbuf, rlen, SENTINEL);
        fill(refbuf, rlen, SENTINEL);
        CHECK_MPI(MPI_Neighbor_allgatherv(sendbuf, mycount, MPI_INT, recvbuf, rcounts, rdispls, MPI_INT, t->comm));
        reference(t, sendbuf, scounts, zeros, refbuf, rcounts, rdispls);
        check_same(t, "MPI_Neighbor_allgatherv", recvbuf, refbuf, rlen);
        check_blocks(t, "MPI_Neighbor_allgatherv", recvbuf, rcounts, rdispls, me, iter, 1);

        /* Neighbor_alltoall: block k for destination k. */
        for (int k = 0; k < t->nout; ++k) {
            for (int x = 0; x < cnt; ++x)
                sendbuf[k * cnt + x] = send_seed(t, me, k, iter) + x;
            scounts[k] = cnt;
            sdispls[k] = k * cnt;
        }
        for (int i = 0; i < t->nin; ++i) {
            rcounts[i] = cnt;
            rdispls[i] = i * cnt;
        }
        fill(recvbuf, rlen, SENTINEL);
        fill(refbuf, rlen, SENTINEL);
        CHECK_MPI(MPI_Neighbor_alltoall(sendbuf, cnt, MPI_INT, recvbuf, cnt, MPI_INT, t->comm));
        reference(t, sendbuf, scounts, sdispls, refbuf, rcounts, rdispls);
        check_same(t, "MPI_Neighbor_alltoall", recvbuf, refbuf, rlen);
        check_blocks(t, "MPI_Neighbor_alltoall", recvbuf, rcounts, rdispls, me, iter, 0);

        /* Neighbor_alltoallw with the same send blocks (byte displacements)
         * and a strided receive type: element x of block i lands at
         * 2 * (i * cnt + x); the odd places keep the sentinel. */
        {
            MPI_Datatype strided;
            CHECK_MPI(MPI_Type_vector(cnt, 1, 2, MPI_INT, &strided));
            CHECK_MPI(MPI_Type_commit(&strided));
            int ones[MAXN];
            MPI_Aint sd[MAXN], rd[MAXN];
            MPI_Datatype st[MAXN], rt[MAXN];
            for (int k = 0; k < t->nout; ++k) {
                ones[k] = 1;
                sd[k] = (MPI_Aint)(k * cnt * (int)sizeof(int));
                st[k] = MPI_INT;
            }
            for (int i = 0; i < t->nin; ++i) {
                rd[i] = (MPI_Aint)(2 * i * cnt * (int)sizeof(int));
                rt[i] = strided;
            }
            int sendcounts[MAXN];
            for (int k = 0; k < t->nout; ++k)
                sendcounts[k] = cnt;
            fill(recvbuf, rlen, SENTINEL);
            CHECK_MPI(MPI_Neighbor_alltoallw(sendbuf, sendcounts, sd, st, recvbuf, ones, rd, rt, t->comm));
            for (int i = 0; i < t->nin; ++i)
                for (int x = 0; x < cnt; ++x) {
                    const int want = t->src[i] == MPI_PROC_NULL ? SENTINEL : recv_seed(t, me, i, iter) + x;
                    CHECKF(recvbuf[2 * (i * cnt + x)] == want && recvbuf[2 * (i * cnt + x) + 1] == SENTINEL,
                           "MPI_Neighbor_alltoallw on %s: block %d element %d is %d (then %d), expected %d", t->name,
                           i, x, recvbuf[2 * (i * cnt + x)], recvbuf[2 * (i * cnt + x) + 1], want);
                }
            /* MPI_Ineighbor_alltoallw with the same arguments: the same
             * bytes, gaps included. */
            {
                MPI_Request req;
                fill(refbuf, rlen, SENTINEL);
                CHECK_MPI(MPI_Ineighbor_alltoallw(sendbuf, sendcounts, sd, st, refbuf, ones, rd, rt, t->comm, &req));
                CHECK_MPI(MPI_Wait(&req, MPI_STATUS_IGNORE));
                for (int x = 0; x < rlen; ++x)
                    CHECKF(refbuf[x] == recvbuf[x],
                           "MPI_Ineighbor_alltoallw on %s: element %d is %d, MPI_Neighbor_alltoallw put %d", t->name, x,
                           refbuf[x], recvbuf[x]);
            }
            CHECK_MPI(MPI_Type_free(&strided));

            /* Empty blocks may name MPI_DATATYPE_NULL: nothing moves. */
            int zeros[MAXN];
            for (int k = 0; k < MAXN; ++k) {
                zeros[k] = 0;
                st[k] = MPI_DATATYPE_NULL;
                rt[k] = MPI_DATATYPE_NULL;
            }
            fill(recvbuf, rlen, SENTINEL);
            CHECK_MPI(MPI_Neighbor_alltoallw(sendbuf, zeros, sd, st, recvbuf, zeros, rd, rt, t->comm));
            for (int x = 0; x < rlen; ++x)
                CHECKF(recvbuf[x] == SENTINEL, "an empty MPI_Neighbor_alltoallw on %s wrote recvbuf[%d]", t->name, x);
        }

        /* Neighbor_alltoallv: vcount(me, dest) to each, blocks in reverse
         * order in the send buffer, gaps in the receive buffer. */
        at = 0;
        for (int k = t->nout - 1; k >= 0; --k) {
            scounts[k] = t->dst[k] == MPI_PROC_NULL ? 1 : vcount(me, t->dst[k]);
            sdispls[k] = at;
            for (int x = 0; x < scounts[k]; ++x)
                sendbuf[at + x] = send_seed(t, me, k, iter) + x;
            at += scounts[k];
        }
        at = 0;
        for (int i = 0; i < t->nin; ++i) {
            rcounts[i] = t->src[i] == MPI_PROC_NULL ? 1 : vcount(t->src[i], me);
            rdispls[i] = at + 1;
            at = rdispls[i] + rcounts[i];
        }
        fill(recvbuf, rlen, SENTINEL);
        fill(refbuf, rlen, SENTINEL);
        CHECK_MPI(MPI_Neighbor_alltoallv(sendbuf, scounts, sdispls, MPI_INT, recvbuf, rcounts, rdispls, MPI_INT,
                                         t->comm));
        reference(t, sendbuf, scounts, sdispls, refbuf, rcounts, rdispls);
        check_same(t, "MPI_Neighbor_alltoallv", recvbuf, refbuf, rlen);
        check_blocks(t, "MPI_Neighbor_alltoallv", recvbuf, rcounts, rdispls, me, iter, 0);
        /* MPI_Ineighbor_alltoallv with the same arguments */
        {
            MPI_Request req;
            fill(recvbuf, rlen, SENTINEL);
            CHECK_MPI(MPI_Ineighbor_alltoallv(sendbuf, scounts, sdispls, MPI_INT, recvbuf, rcounts, rdispls, MPI_INT,
                                              t->comm, &req));
            CHECK_MPI(MPI_Wait(&req, MPI_STATUS_IGNORE));
            check_same(t, "MPI_Ineighbor_alltoallv", recvbuf, refbuf, rlen);
        }
    }
    CHECK_MPI(MPI_Comm_free(&t->comm));
}

/* Repeated edges.  On a Cartesian grid with a periodic dimension of 1 or 2
 * processes both neighbours along it are one process, and only the
 * block-matching rule of MPI-4.0's errata to MPI-3.1 7.6 (block s of the
 * sender lands in block s^1 of the receiver) says which block goes where;
 * on a graph with a repeated edge, the k-th message of the pair fills the
 * k-th block.  Debian's MPICH 4.0 gets both wrong (fixed later: MPICH pull
 * requests 5777 and 7945), so these topologies run in the shmpi-only
 * program neighbor_dup.c, which includes this file with
 * NEIGHBOR_DEGENERATE defined; this program runs the others. */
static int degenerate(int ndims, const int *dims, const int *periods)
{
    for (int d = 0; d < ndims; ++d)
        if (periods[d] && dims[d] <= 2)
            return 1;
    return 0;
}

#ifdef NEIGHBOR_DEGENERATE
static const int want_degenerate = 1;
#else
static const int want_degenerate = 0;
#endif

static void cart(const char *name, int ndims, const int *fixed, const int *periods)
{
    int dims[4] = {0, 0, 0, 0};
    memcpy(dims, fixed, (size_t)ndims * sizeof(int));
    CHECK_MPI(MPI_Dims_create(world_size(), ndims, dims));
    if (degenerate(ndims, dims, periods) != want_degenerate)
        return;
    Topo t = {0};
    t.name = name;
    CHECK_MPI(MPI_Cart_create(MPI_COMM_WORLD, ndims, dims, periods, 0, &t.comm));
    run(&t);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    const int size = world_size();
    const int me = world_rank();

    cart("a periodic 2-D grid", 2, (const int[]){0, 0}, (const int[]){1, 1});
    cart("a non-periodic 2-D grid", 2, (const int[]){0, 0}, (const int[]){0, 0});
    cart("a mixed 3-D grid", 3, (const int[]){0, 0, 0}, (const int[]){1, 0, 1});
    cart("a periodic ring", 1, (const int[]){0}, (const int[]){1});
    cart("a grid with a periodic dimension of 1", 2, (const int[]){0, 1}, (const int[]){0, 1});

    /* Graph: shuffle-exchange on the largest power of two that fits, the
     * remaining processes as isolated nodes.  Nodes 0 and 2^n-1 are their
     * own shuffle and unshuffle: two self loops, a repeated edge. */
    if (want_degenerate) {
        int n = 0;
        while ((2 << n) <= size)
            ++n;
        const int p = 1 << n;
        int index[MAXN], edges[3 * MAXN], e = 0;
        for (int a = 0; a < size; ++a) {
            if (a < p) {
                edges[e++] = n == 0 ? a : a ^ 1;
                edges[e++] = n == 0 ? a : ((a << 1) | (a >> (n - 1))) & (p - 1);
                edges[e++] = n == 0 ? a : ((a >> 1) | ((a & 1) << (n - 1))) & (p - 1);
            }
            index[a] = e;
        }
        Topo t = {0};
        t.name = "the shuffle-exchange graph";
        CHECK_MPI(MPI_Graph_create(MPI_COMM_WORLD, size, index, edges, 0, &t.comm));
        run(&t);
    }

    /* Graph: a ring with chords (k-1, k+1, and k+n/2 for even n > 3), no
     * repeated edges from 3 processes on. */
    if (!want_degenerate && size >= 3) {
        int index[MAXN], edges[3 * MAXN], e = 0;
        for (int k = 0; k < size; ++k) {
            edges[e++] = (k + size - 1) % size;
            edges[e++] = (k + 1) % size;
            if (size > 3 && size % 2 == 0)
                edges[e++] = (k + size / 2) % size;
            index[k] = e;
        }
        Topo t = {0};
        t.name = "a ring graph with chords";
        CHECK_MPI(MPI_Graph_create(MPI_COMM_WORLD, size, index, edges, 0, &t.comm));
        run(&t);
    }

    /* Distributed graphs: i -> i+1, i -> i+3 (distinct, and no self loops,
     * from 4 processes on); the degenerate program adds two self loops on 0
     * and runs every size. */
    if (want_degenerate || size >= 4) {
        int dst[4], src[MAXN], nd = 0, ns = 0;
        for (int a = 0; a < size; ++a) {
            const int out[4] = {(a + 1) % size, (a + 3) % size, 0, 0};
            const int nout = a == 0 && want_degenerate ? 4 : 2;
            for (int j = 0; j < nout; ++j) {
                if (a == me)
                    dst[nd++] = out[j];
                if (out[j] == me)
                    src[ns++] = a;
            }
        }
        Topo t = {0};
        t.name = "an adjacent distributed graph";
        CHECK_MPI(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, ns, src, MPI_UNWEIGHTED, nd, dst, MPI_UNWEIGHTED,
                                                 MPI_INFO_NULL, 0, &t.comm));
        run(&t);

        /* The same edges, each named by its destination. */
        Topo u = {0};
        u.name = "a distributed graph";
        int degrees[MAXN];
        for (int j = 0; j < ns; ++j)
            degrees[j] = 1;
        int mine[MAXN];
        for (int j = 0; j < ns; ++j)
            mine[j] = me;
        CHECK_MPI(MPI_Dist_graph_create(MPI_COMM_WORLD, ns, src, degrees, mine, MPI_UNWEIGHTED, MPI_INFO_NULL, 0,
                                        &u.comm));
        run(&u);
    }

    MPI_Finalize();
    return 0;
}
