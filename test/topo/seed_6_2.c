/*
 * Seed 002, example 6.2: a shuffle-exchange graph of 2^n processes.  Node
 * a_1 ... a_n (binary) has three neighbours:
 *   exchange  (a_1, ..., a_n) = a_1, ..., a_{n-1}, not a_n
 *   shuffle   (a_1, ..., a_n) = a_2, ..., a_n, a_1
 *   unshuffle (a_1, ..., a_n) = a_n, a_1, ..., a_{n-1}
 * The program builds the graph with MPI_Graph_create, checks the table of
 * the example for n = 3 and the query functions, then runs the example's
 * three MPI_Sendrecv_replace permutations of a real A, checking A after
 * each: after the exchange A is the exchange neighbour's; the shuffle then
 * the unshuffle permutation bring that value back.
 */
#include "check.h"

static int bits_of(int size)
{
    int n = 0;
    while ((1 << n) < size)
        ++n;
    CHECKF((1 << n) == size, "the example needs 2^n processes, not %d", size);
    return n;
}

static int exchange_of(int a, int n) { return n == 0 ? a : a ^ 1; }
static int shuffle_of(int a, int n)
{
    return n == 0 ? a : ((a << 1) | (a >> (n - 1))) & ((1 << n) - 1);
}
static int unshuffle_of(int a, int n)
{
    return n == 0 ? a : ((a >> 1) | ((a & 1) << (n - 1))) & ((1 << n) - 1);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    const int size = world_size();
    const int n = bits_of(size);

    /* The graph: three neighbours per node, in the example's order. */
    int *index = check_malloc((size_t)size * sizeof(int));
    int *edges = check_malloc((size_t)size * 3 * sizeof(int));
    for (int a = 0; a < size; ++a) {
        edges[3 * a] = exchange_of(a, n);
        edges[3 * a + 1] = shuffle_of(a, n);
        edges[3 * a + 2] = unshuffle_of(a, n);
        index[a] = 3 * (a + 1);
    }
    if (n == 3) {
        /* The example's table, row by row: node, exchange, shuffle, unshuffle. */
        static const int table[8][4] = {{0, 1, 0, 0}, {1, 0, 2, 4}, {2, 3, 4, 1}, {3, 2, 6, 5},
                                        {4, 5, 1, 2}, {5, 4, 3, 6}, {6, 7, 5, 3}, {7, 6, 7, 7}};
        for (int a = 0; a < 8; ++a)
            for (int k = 0; k < 3; ++k)
                CHECKF(edges[3 * a + k] == table[a][k + 1], "node %d neighbour %d: %d, table says %d", a,
                       k + 1, edges[3 * a + k], table[a][k + 1]);
    }
    MPI_Comm comm;
    CHECK_MPI(MPI_Graph_create(MPI_COMM_WORLD, size, index, edges, 0, &comm));
    CHECK(comm != MPI_COMM_NULL);

    int status = -1;
    CHECK_MPI(MPI_Topo_test(comm, &status));
    CHECKF(status == MPI_GRAPH, "MPI_Topo_test: %d, expected MPI_GRAPH", status);
    int nnodes = -1, nedges = -1;
    CHECK_MPI(MPI_Graphdims_get(comm, &nnodes, &nedges));
    CHECKF(nnodes == size && nedges == 3 * size, "MPI_Graphdims_get: %d nodes %d edges", nnodes, nedges);
    int *gindex = check_malloc((size_t)size * sizeof(int));
    int *gedges = check_malloc((size_t)size * 3 * sizeof(int));
    CHECK_MPI(MPI_Graph_get(comm, nnodes, nedges, gindex, gedges));
    for (int i = 0; i < size; ++i)
        CHECKF(gindex[i] == index[i], "MPI_Graph_get: index[%d] %d, expected %d", i, gindex[i], index[i]);
    for (int i = 0; i < 3 * size; ++i)
        CHECKF(gedges[i] == edges[i], "MPI_Graph_get: edges[%d] %d, expected %d", i, gedges[i], edges[i]);

    /* The example. */
    int myrank = -1;
    CHECK_MPI(MPI_Comm_rank(comm, &myrank));
    CHECKF(myrank == world_rank(), "reorder = false kept rank %d as %d", world_rank(), myrank);
    int count = -1;
    CHECK_MPI(MPI_Graph_neighbors_count(comm, myrank, &count));
    CHECKF(count == 3, "MPI_Graph_neighbors_count: %d", count);
    int neighbors[3];
    CHECK_MPI(MPI_Graph_neighbors(comm, myrank, 3, neighbors));
    CHECK(neighbors[0] == exchange_of(myrank, n));
    CHECK(neighbors[1] == shuffle_of(myrank, n));
    CHECK(neighbors[2] == unshuffle_of(myrank, n));

    float A = (float)(100 + myrank);
    MPI_Status st;
    /* exchange */
    CHECK_MPI(MPI_Sendrecv_replace(&A, 1, MPI_FLOAT, neighbors[0], 0, neighbors[0], 0, comm, &st));
    CHECKF(A == (float)(100 + exchange_of(myrank, n)), "after exchange A = %g", (double)A);
    /* shuffle: send to shuffle(me), receive from unshuffle(me) */
    CHECK_MPI(MPI_Sendrecv_replace(&A, 1, MPI_FLOAT, neighbors[1], 0, neighbors[2], 0, comm, &st));
    CHECKF(A == (float)(100 + exchange_of(unshuffle_of(myrank, n), n)), "after shuffle A = %g", (double)A);
    /* unshuffle: send to unshuffle(me), receive from shuffle(me) */
    CHECK_MPI(MPI_Sendrecv_replace(&A, 1, MPI_FLOAT, neighbors[2], 0, neighbors[1], 0, comm, &st));
    CHECKF(A == (float)(100 + exchange_of(myrank, n)), "after unshuffle A = %g", (double)A);

    free(index);
    free(edges);
    free(gindex);
    free(gedges);
    CHECK_MPI(MPI_Comm_free(&comm));
    MPI_Finalize();
    return 0;
}
