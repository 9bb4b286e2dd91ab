/*
 * Bad input to the topology functions (issue 5, point 6), under
 * MPI_ERRORS_RETURN: each call must fail with the right error class, and
 * its message (MPI_Error_string) must name the function and the bad value.
 * The classes are shmpi's choices where MPI leaves them open, so this
 * program is shmpi-only.  Every rank makes the same bad calls (the
 * collective ones are rejected before any communication).
 */
#include "check.h"

static void expect(int rc, int cls, const char *fn, const char *value, const char *what)
{
    CHECKF(rc != MPI_SUCCESS, "%s succeeded", what);
    CHECKF(check_error_class(rc) == cls, "%s: error class %d, expected %d", what, check_error_class(rc), cls);
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    CHECK_MPI(MPI_Error_string(rc, msg, &len));
    CHECKF(strstr(msg, fn) != NULL, "%s: message \"%s\" does not name %s", what, msg, fn);
    CHECKF(value == NULL || strstr(msg, value) != NULL, "%s: message \"%s\" does not name the value %s", what, msg,
           value);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    const int size = world_size();
    CHECK_MPI(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MPI_Comm c = MPI_COMM_NULL;

    /* ndims < 0 */
    int dims[3] = {0, 0, 0};
    expect(MPI_Dims_create(4, -1, dims), MPI_ERR_DIMS, "MPI_Dims_create", "-1", "Dims_create ndims -1");
    expect(MPI_Cart_create(MPI_COMM_WORLD, -2, dims, dims, 0, &c), MPI_ERR_ARG, "MPI_Cart_create", "-2",
           "Cart_create ndims -2");
    /* negative dims entries */
    int neg[2] = {0, -3};
    expect(MPI_Dims_create(4, 2, neg), MPI_ERR_DIMS, "MPI_Dims_create", "-3", "Dims_create dims[1] -3");
    int negc[2] = {1, -3};
    const int periods[2] = {0, 0};
    expect(MPI_Cart_create(MPI_COMM_WORLD, 2, negc, periods, 0, &c), MPI_ERR_DIMS, "MPI_Cart_create", "-3",
           "Cart_create dims[1] -3");
    /* nnodes not divisible by the fixed dims (example 6.1) */
    int fixed[3] = {0, 3, 0};
    expect(MPI_Dims_create(7, 3, fixed), MPI_ERR_DIMS, "MPI_Dims_create", "7", "Dims_create(7, (0,3,0))");
    /* a grid larger than the group */
    int big[2] = {size + 1, 1};
    char value[32];
    snprintf(value, sizeof value, "%d", size + 1);
    expect(MPI_Cart_create(MPI_COMM_WORLD, 2, big, periods, 0, &c), MPI_ERR_ARG, "MPI_Cart_create", value,
           "Cart_create larger than the group");
    expect(MPI_Cart_map(MPI_COMM_WORLD, 2, big, periods, dims), MPI_ERR_ARG, "MPI_Cart_map", value,
           "Cart_map larger than the group");
    CHECK(c == MPI_COMM_NULL);

    /* coordinates out of range on non-periodic dimensions */
    int line[2] = {size, 1};
    const int mixed[2] = {0, 1};
    MPI_Comm cart;
    CHECK_MPI(MPI_Cart_create(MPI_COMM_WORLD, 2, line, mixed, 0, &cart));
    CHECK_MPI(MPI_Comm_set_errhandler(cart, MPI_ERRORS_RETURN));
    int r = -1;
    int out[2] = {size, 0};
    expect(MPI_Cart_rank(cart, out, &r), MPI_ERR_ARG, "MPI_Cart_rank", NULL,
           "Cart_rank beyond a non-periodic edge");
    int below[2] = {-1, 0};
    expect(MPI_Cart_rank(cart, below, &r), MPI_ERR_ARG, "MPI_Cart_rank", "-1", "Cart_rank below 0");
    int wraps[2] = {0, 5};  /* dimension 1 is periodic: fine */
    CHECK_MPI(MPI_Cart_rank(cart, wraps, &r));
    CHECK(r == 0);
    int coords[2];
    expect(MPI_Cart_coords(cart, size, 2, coords), MPI_ERR_RANK, "MPI_Cart_coords", NULL, "Cart_coords rank size");
    expect(MPI_Cart_coords(cart, -1, 2, coords), MPI_ERR_RANK, "MPI_Cart_coords", "-1", "Cart_coords rank -1");
    int s = 0, d = 0;
    expect(MPI_Cart_shift(cart, 2, 1, &s, &d), MPI_ERR_ARG, "MPI_Cart_shift", "2", "Cart_shift direction 2");
    CHECK_MPI(MPI_Comm_free(&cart));

    /* graph edges naming a missing node; too many nodes; negative nnodes */
    int index[2] = {1, 2};
    int edges[2] = {1, 2};
    expect(MPI_Graph_create(MPI_COMM_WORLD, 2 <= size ? 2 : 1, index, edges, 0, &c),
           MPI_ERR_ARG, "MPI_Graph_create", size >= 2 ? "edges[1]" : "edges[0]",
           "Graph_create with an edge to a missing node");
    int ok_edges[2] = {0, 0};
    snprintf(value, sizeof value, "%d", size + 1);
    int *many = check_malloc((size_t)(size + 1) * sizeof(int));
    for (int k = 0; k <= size; ++k)
        many[k] = 0;
    expect(MPI_Graph_create(MPI_COMM_WORLD, size + 1, many, ok_edges, 0, &c), MPI_ERR_ARG, "MPI_Graph_create",
           value, "Graph_create larger than the group");
    expect(MPI_Graph_create(MPI_COMM_WORLD, -1, index, ok_edges, 0, &c), MPI_ERR_ARG, "MPI_Graph_create", "-1",
           "Graph_create nnodes -1");
    free(many);
    int neg_index[2] = {-1, 1};
    expect(MPI_Graph_create(MPI_COMM_WORLD, 2 <= size ? 2 : 1, neg_index, ok_edges, 0, &c), MPI_ERR_ARG,
           "MPI_Graph_create", "index[0] is -1, a negative degree", "Graph_create with index[0] = -1");
    int one_index[1] = {1};
    int self[1] = {0};
    MPI_Comm graph;
    CHECK_MPI(MPI_Graph_create(MPI_COMM_WORLD, 1, one_index, self, 0, &graph));
    if (graph != MPI_COMM_NULL) {
        CHECK_MPI(MPI_Comm_set_errhandler(graph, MPI_ERRORS_RETURN));
        int n = 0;
        expect(MPI_Graph_neighbors_count(graph, 1, &n), MPI_ERR_RANK, "MPI_Graph_neighbors_count", "1",
               "Graph_neighbors_count rank 1 of 1");
        expect(MPI_Cartdim_get(graph, &n), MPI_ERR_TOPOLOGY, "MPI_Cartdim_get", NULL, "Cartdim_get on a graph");
        CHECK_MPI(MPI_Comm_free(&graph));
    }

    /* no dimensions: Dims_create has 1 node to place, a zero-dimensional
     * grid (rank 0's) nothing to shift along */
    expect(MPI_Dims_create(4, 0, NULL), MPI_ERR_DIMS, "MPI_Dims_create", "ndims is 0",
           "Dims_create of 4 nodes in 0 dimensions");
    CHECK_MPI(MPI_Dims_create(1, 0, NULL));
    MPI_Comm point;
    CHECK_MPI(MPI_Cart_create(MPI_COMM_WORLD, 0, NULL, NULL, 0, &point));
    CHECK((point != MPI_COMM_NULL) == (world_rank() == 0));
    if (point != MPI_COMM_NULL) {
        CHECK_MPI(MPI_Comm_set_errhandler(point, MPI_ERRORS_RETURN));
        int s0 = 0, d0 = 0;
        expect(MPI_Cart_shift(point, 0, 1, &s0, &d0), MPI_ERR_ARG, "MPI_Cart_shift", "no dimensions",
               "Cart_shift on a zero-dimensional grid");
        CHECK_MPI(MPI_Comm_free(&point));
    }

    /* wrong topology, or none */
    int nd = 0;
    expect(MPI_Cartdim_get(MPI_COMM_WORLD, &nd), MPI_ERR_TOPOLOGY, "MPI_Cartdim_get", NULL, "Cartdim_get on world");
    expect(MPI_Graphdims_get(MPI_COMM_WORLD, &nd, &nd), MPI_ERR_TOPOLOGY, "MPI_Graphdims_get", NULL,
           "Graphdims_get on world");
    int x = 0, y[8];
    expect(MPI_Neighbor_allgather(&x, 1, MPI_INT, y, 1, MPI_INT, MPI_COMM_WORLD), MPI_ERR_TOPOLOGY,
           "MPI_Neighbor_allgather", NULL, "Neighbor_allgather on world");
    int status = 0;
    CHECK_MPI(MPI_Topo_test(MPI_COMM_WORLD, &status));
    CHECK(status == MPI_UNDEFINED);

    /* distributed graphs naming a missing rank */
    int bad = size;
    snprintf(value, sizeof value, "%d", size);
    expect(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, &bad, MPI_UNWEIGHTED, 0, NULL, MPI_UNWEIGHTED,
                                          MPI_INFO_NULL, 0, &c),
           MPI_ERR_RANK, "MPI_Dist_graph_create_adjacent", value, "Dist_graph_create_adjacent source = size");
    int me = world_rank(), one = 1;
    expect(MPI_Dist_graph_create(MPI_COMM_WORLD, 1, &me, &one, &bad, MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &c),
           MPI_ERR_RANK, "MPI_Dist_graph_create", value, "Dist_graph_create destination = size");

    MPI_Finalize();
    return 0;
}
