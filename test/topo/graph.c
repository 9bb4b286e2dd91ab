/*
 * Graph and distributed-graph topologies.
 *
 * MPI_Graph_create on a ring (with chords when even) over the first nnodes processes
 * (all of them, then one fewer): MPI_COMM_NULL beyond the graph, the query
 * functions return the graph as given, MPI_Graph_map agrees with
 * MPI_Graph_create(reorder = true), and a message to every neighbour
 * arrives.
 *
 * MPI_Dist_graph_create_adjacent and MPI_Dist_graph_create on the same
 * directed graph (i -> i+1, i -> i+2, and a self loop on rank 0), weighted
 * and unweighted: MPI_Topo_test, MPI_Dist_graph_neighbors_count, and
 * MPI_Dist_graph_neighbors (as sets for MPI_Dist_graph_create, whose order
 * MPI leaves open; in order for the adjacent form), with weights.
 *
 * MPI_WEIGHTS_EMPTY (MPI-3.1 7.5.4) from the ranks without edges of a
 * weighted distributed graph, both constructors: the graph is weighted
 * (MPI_Dist_graph_neighbors_count), and rank 0's one edge keeps its weight.
 */
#include "check.h"

/* Whether MPI_Cart_map / MPI_Graph_map name the rank that MPI_Cart_create /
 * MPI_Graph_create(reorder = true) then gives.  shmpi promises it and MPICH
 * does it; the standard only suggests it (MPI-3.1 7.5.8), and Open MPI 4.1
 * does not. */
static int map_matches_create(void)
{
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    CHECK_MPI(MPI_Get_library_version(lib, &len));
    return strncmp(lib, "shmpi", 5) == 0 || strncmp(lib, "MPICH", 5) == 0;
}

/* Node k of n: neighbours k-1, k+1 and, for even n > 3, k+n/2: a symmetric
 * graph (a neighbour of a neighbour is back). */
static void make_graph(int n, int *index, int *edges)
{
    int e = 0;
    for (int k = 0; k < n; ++k) {
        if (n > 1) {
            edges[e++] = (k + n - 1) % n;
            edges[e++] = (k + 1) % n;
        }
        if (n > 3 && n % 2 == 0)
            edges[e++] = (k + n / 2) % n;
        index[k] = e;
    }
}

static void check_graph(int nnodes)
{
    const int size = world_size();
    const int me = world_rank();
    int *index = check_malloc((size_t)nnodes * sizeof(int));
    int *edges = check_malloc((size_t)nnodes * 3 * sizeof(int));
    make_graph(nnodes, index, edges);
    const int nedges = nnodes > 0 ? index[nnodes - 1] : 0;

    for (int reorder = 0; reorder <= 1; ++reorder) {
        int mapped = -2;
        CHECK_MPI(MPI_Graph_map(MPI_COMM_WORLD, nnodes, index, edges, &mapped));
        MPI_Comm g;
        CHECK_MPI(MPI_Graph_create(MPI_COMM_WORLD, nnodes, index, edges, reorder, &g));
        if (!reorder)
            CHECKF((g == MPI_COMM_NULL) == (me >= nnodes), "rank %d of %d, graph of %d nodes: %s", me, size,
                   nnodes, g == MPI_COMM_NULL ? "MPI_COMM_NULL" : "a communicator");
        int r = MPI_UNDEFINED;
        if (g != MPI_COMM_NULL)
            CHECK_MPI(MPI_Comm_rank(g, &r));
        if (reorder)
            CHECKF(r == mapped || !map_matches_create(), "MPI_Graph_map said %d, MPI_Graph_create gave %d",
                   mapped, r);
        else
            CHECKF(r == (me < nnodes ? me : MPI_UNDEFINED), "reorder = false: rank %d became %d", me, r);
        if (g == MPI_COMM_NULL)
            continue;

        int status = -1, nn = -1, ne = -1;
        CHECK_MPI(MPI_Topo_test(g, &status));
        CHECK(status == MPI_GRAPH);
        CHECK_MPI(MPI_Graphdims_get(g, &nn, &ne));
        CHECKF(nn == nnodes && ne == nedges, "MPI_Graphdims_get: %d/%d, expected %d/%d", nn, ne, nnodes, nedges);
        int *gi = check_malloc((size_t)nnodes * sizeof(int));
        int *ge = check_malloc((size_t)(nedges + 1) * sizeof(int));
        CHECK_MPI(MPI_Graph_get(g, nnodes, nedges, gi, ge));
        for (int k = 0; k < nnodes; ++k)
            CHECK(gi[k] == index[k]);
        for (int k = 0; k < nedges; ++k)
            CHECK(ge[k] == edges[k]);
        for (int k = 0; k < nnodes; ++k) {
            int cnt = -1, nb[3];
            CHECK_MPI(MPI_Graph_neighbors_count(g, k, &cnt));
            const int first = k == 0 ? 0 : index[k - 1];
            CHECKF(cnt == index[k] - first, "node %d: %d neighbours, expected %d", k, cnt, index[k] - first);
            CHECK_MPI(MPI_Graph_neighbors(g, k, 3, nb));
            for (int j = 0; j < cnt; ++j)
                CHECK(nb[j] == edges[first + j]);
        }
        /* A message to every neighbour: the graph is symmetric, so each
         * process receives from each of its neighbours once per edge. */
        int cnt = 0, nb[3], got[3];
        CHECK_MPI(MPI_Graph_neighbors_count(g, r, &cnt));
        CHECK_MPI(MPI_Graph_neighbors(g, r, 3, nb));
        MPI_Request req[6];
        for (int j = 0; j < cnt; ++j)
            CHECK_MPI(MPI_Irecv(&got[j], 1, MPI_INT, nb[j], 3, g, &req[j]));
        for (int j = 0; j < cnt; ++j)
            CHECK_MPI(MPI_Isend(&r, 1, MPI_INT, nb[j], 3, g, &req[cnt + j]));
        CHECK_MPI(MPI_Waitall(2 * cnt, req, MPI_STATUSES_IGNORE));
        for (int j = 0; j < cnt; ++j)
            CHECKF(got[j] == nb[j], "message from neighbour %d says %d", nb[j], got[j]);
        free(gi);
        free(ge);
        CHECK_MPI(MPI_Comm_free(&g));
    }
    free(index);
    free(edges);
}

/* The directed graph of the distributed tests: i -> i+1, i -> i+2 (mod n),
 * and 0 -> 0; weight of a -> b is 10 * a + b. */
static int out_edges(int a, int n, int *dst)
{
    int k = 0;
    dst[k++] = (a + 1) % n;
    dst[k++] = (a + 2) % n;
    if (a == 0)
        dst[k++] = 0;
    return k;
}

static int in_edges(int b, int n, int *src)
{
    int k = 0;
    for (int a = 0; a < n; ++a) {
        int dst[3];
        const int m = out_edges(a, n, dst);
        for (int j = 0; j < m; ++j)
            if (dst[j] == b)
                src[k++] = a;
    }
    return k;
}

/* Sorted copies, to compare lists as multisets. */
static int cmp_int(const void *a, const void *b) { return *(const int *)a - *(const int *)b; }

static void check_same_set(const int *got, const int *want, int n, const char *what)
{
    int g[8], w[8];
    memcpy(g, got, (size_t)n * sizeof(int));
    memcpy(w, want, (size_t)n * sizeof(int));
    qsort(g, (size_t)n, sizeof(int), cmp_int);
    qsort(w, (size_t)n, sizeof(int), cmp_int);
    for (int i = 0; i < n; ++i)
        CHECKF(g[i] == w[i], "%s: element %d of the sorted list is %d, expected %d", what, i, g[i], w[i]);
}

static void check_dist(int adjacent, int weighted)
{
    const int n = world_size();
    const int me = world_rank();
    int src[8], dst[8], sw[8], dw[8];
    const int indeg = in_edges(me, n, src);
    const int outdeg = out_edges(me, n, dst);
    for (int j = 0; j < indeg; ++j)
        sw[j] = 10 * src[j] + me;
    for (int j = 0; j < outdeg; ++j)
        dw[j] = 10 * me + dst[j];
    MPI_Comm dg;
    if (adjacent) {
        CHECK_MPI(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, indeg, src, weighted ? sw : MPI_UNWEIGHTED,
                                                 outdeg, dst, weighted ? dw : MPI_UNWEIGHTED, MPI_INFO_NULL, 0,
                                                 &dg));
    } else {
        /* Each process names its out-edges (any process could name any). */
        const int degree = outdeg;
        CHECK_MPI(MPI_Dist_graph_create(MPI_COMM_WORLD, 1, &me, &degree, dst, weighted ? dw : MPI_UNWEIGHTED,
                                        MPI_INFO_NULL, 0, &dg));
    }
    int status = -1;
    CHECK_MPI(MPI_Topo_test(dg, &status));
    CHECKF(status == MPI_DIST_GRAPH, "MPI_Topo_test: %d", status);
    int gi = -1, go = -1, gw = -1;
    CHECK_MPI(MPI_Dist_graph_neighbors_count(dg, &gi, &go, &gw));
    CHECKF(gi == indeg && go == outdeg, "degrees %d/%d, expected %d/%d", gi, go, indeg, outdeg);
    CHECKF((gw != 0) == (weighted != 0), "weighted is %d", gw);
    int s[8], d[8], ws[8], wd[8];
    CHECK_MPI(MPI_Dist_graph_neighbors(dg, 8, s, weighted ? ws : MPI_UNWEIGHTED, 8, d,
                                       weighted ? wd : MPI_UNWEIGHTED));
    if (adjacent) {
        for (int j = 0; j < indeg; ++j)
            CHECK(s[j] == src[j] && (!weighted || ws[j] == sw[j]));
        for (int j = 0; j < outdeg; ++j)
            CHECK(d[j] == dst[j] && (!weighted || wd[j] == dw[j]));
    } else {
        check_same_set(s, src, indeg, "sources");
        check_same_set(d, dst, outdeg, "destinations");
        if (weighted) {
            for (int j = 0; j < indeg; ++j)
                CHECKF(ws[j] == 10 * s[j] + me, "source %d has weight %d", s[j], ws[j]);
            for (int j = 0; j < outdeg; ++j)
                CHECKF(wd[j] == 10 * me + d[j], "destination %d has weight %d", d[j], wd[j]);
        }
    }
    CHECK_MPI(MPI_Comm_free(&dg));
}

static void check_weights_empty(int adjacent)
{
    const int me = world_rank();
    const int deg = me == 0; /* rank 0 has a self loop of weight 7, the others nothing */
    int self = 0, w = 7, one = 1;
    MPI_Comm dg;
    if (adjacent)
        CHECK_MPI(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, deg, &self, deg ? &w : MPI_WEIGHTS_EMPTY, deg, &self,
                                                 deg ? &w : MPI_WEIGHTS_EMPTY, MPI_INFO_NULL, 0, &dg));
    else
        CHECK_MPI(MPI_Dist_graph_create(MPI_COMM_WORLD, deg, &self, &one, &self, deg ? &w : MPI_WEIGHTS_EMPTY,
                                        MPI_INFO_NULL, 0, &dg));
    int gi = -1, go = -1, gw = -1;
    CHECK_MPI(MPI_Dist_graph_neighbors_count(dg, &gi, &go, &gw));
    CHECKF(gi == deg && go == deg, "MPI_WEIGHTS_EMPTY graph (%s): degrees %d/%d, expected %d/%d",
           adjacent ? "adjacent" : "general", gi, go, deg, deg);
    CHECKF(gw != 0, "a graph made with MPI_WEIGHTS_EMPTY (%s) is not weighted", adjacent ? "adjacent" : "general");
    if (deg) {
        int s = -1, d = -1, ws = -1, wd = -1;
        CHECK_MPI(MPI_Dist_graph_neighbors(dg, 1, &s, &ws, 1, &d, &wd));
        CHECKF(s == 0 && d == 0 && ws == 7 && wd == 7, "rank 0's self loop: %d/%d, weights %d/%d", s, d, ws, wd);
    }
    CHECK_MPI(MPI_Comm_free(&dg));
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    const int size = world_size();
    check_graph(size);
    if (size > 1)
        check_graph(size - 1);
    for (int adjacent = 0; adjacent <= 1; ++adjacent)
        for (int weighted = 0; weighted <= 1; ++weighted)
            check_dist(adjacent, weighted);
    check_weights_empty(1);
    check_weights_empty(0);
    MPI_Finalize();
    return 0;
}
