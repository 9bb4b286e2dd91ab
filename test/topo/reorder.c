/*
 * reorder = true: MPI_Cart_create and MPI_Graph_create may give processes
 * new ranks.  Whatever an implementation chooses, the result must be a
 * permutation of the processes it keeps, and messages between neighbours
 * must arrive; where the MPI promises it, MPI_Cart_map / MPI_Graph_map tell
 * each process the rank it gets.  Checked on a 2-D periodic grid over the whole job, on a grid of
 * all but one process, and on a ring graph.
 *
 * With TOPO_EXPECT_SPREAD=<m> in the environment (the shmpi-only run that
 * places rank r on NUMA node r % m of a synthetic machine, see
 * meson.build), it also checks what shmpi's reorder promises there: more
 * messages of a halo exchange over the whole grid stay on a NUMA node than
 * in rank order.
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

/* Everyone's world rank, indexed by rank in `comm`. */
static int *world_of_ranks(MPI_Comm comm, int size)
{
    int *w = check_malloc((size_t)size * sizeof(int));
    int me = world_rank();
    CHECK_MPI(MPI_Allgather(&me, 1, MPI_INT, w, 1, MPI_INT, comm));
    for (int a = 0; a < size; ++a)
        for (int b = a + 1; b < size; ++b)
            CHECKF(w[a] != w[b], "world rank %d has two ranks (%d and %d)", w[a], a, b);
    return w;
}

static void check_cart(int points, int expect_spread)
{
    int dims[2] = {0, 0};
    const int periods[2] = {1, 1};
    CHECK_MPI(MPI_Dims_create(points, 2, dims));
    int mapped = -2;
    CHECK_MPI(MPI_Cart_map(MPI_COMM_WORLD, 2, dims, periods, &mapped));
    MPI_Comm cart;
    CHECK_MPI(MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 1, &cart));
    int rank = MPI_UNDEFINED;
    if (cart != MPI_COMM_NULL)
        CHECK_MPI(MPI_Comm_rank(cart, &rank));
    CHECKF(rank == mapped || !map_matches_create(), "MPI_Cart_map said %d, MPI_Cart_create gave %d", mapped,
           rank);
    CHECKF(cart != MPI_COMM_NULL || points < world_size(), "a grid of all %d processes left this one out", points);
    if (cart == MPI_COMM_NULL)
        return;
    int size = -1;
    CHECK_MPI(MPI_Comm_size(cart, &size));
    CHECK(size == points);
    int *w = world_of_ranks(cart, size);

    /* Neighbours exchange ranks along both dimensions. */
    for (int d = 0; d < 2; ++d) {
        int src = -1, dst = -1, in = -1;
        CHECK_MPI(MPI_Cart_shift(cart, d, 1, &src, &dst));
        CHECK_MPI(MPI_Sendrecv(&rank, 1, MPI_INT, dst, 5, &in, 1, MPI_INT, src, 5, cart, MPI_STATUS_IGNORE));
        CHECKF(in == src, "along dimension %d: got %d from %d", d, in, src);
    }

    if (expect_spread > 0 && points == world_size()) {
        /* World rank r sits on node r % m: count the messages of a halo
         * exchange that stay on a node, reordered and in rank order. */
        int local = 0, local_identity = 0;
        for (int k = 0; k < size; ++k) {
            int c[2];
            CHECK_MPI(MPI_Cart_coords(cart, k, 2, c));
            for (int d = 0; d < 2; ++d)
                for (int step = -1; step <= 1; step += 2) {
                    int n[2] = {c[0], c[1]}, nb = -1;
                    n[d] += step;
                    CHECK_MPI(MPI_Cart_rank(cart, n, &nb));
                    local += w[k] % expect_spread == w[nb] % expect_spread;
                    local_identity += k % expect_spread == nb % expect_spread;
                }
        }
        if (rank == 0)
            printf("reorder: %d of %d halo messages stay on a node (%d in rank order)\n", local, 4 * size,
                   local_identity);
        CHECKF(local > local_identity, "reorder kept %d messages on a node, rank order %d", local, local_identity);
    }
    free(w);
    CHECK_MPI(MPI_Comm_free(&cart));
}

static void check_ring_graph(void)
{
    const int n = world_size();
    int *index = check_malloc((size_t)n * sizeof(int));
    int *edges = check_malloc((size_t)n * 2 * sizeof(int));
    for (int k = 0; k < n; ++k) {
        edges[2 * k] = (k + n - 1) % n;
        edges[2 * k + 1] = (k + 1) % n;
        index[k] = 2 * (k + 1);
    }
    int mapped = -2;
    CHECK_MPI(MPI_Graph_map(MPI_COMM_WORLD, n, index, edges, &mapped));
    MPI_Comm g;
    CHECK_MPI(MPI_Graph_create(MPI_COMM_WORLD, n, index, edges, 1, &g));
    CHECK(g != MPI_COMM_NULL);
    int rank = -1;
    CHECK_MPI(MPI_Comm_rank(g, &rank));
    CHECKF(rank == mapped || !map_matches_create(), "MPI_Graph_map said %d, MPI_Graph_create gave %d", mapped,
           rank);
    free(world_of_ranks(g, n));
    int nb[2], got[2];
    CHECK_MPI(MPI_Graph_neighbors(g, rank, 2, nb));
    MPI_Request req[4];
    for (int j = 0; j < 2; ++j)
        CHECK_MPI(MPI_Irecv(&got[j], 1, MPI_INT, nb[j], 9, g, &req[j]));
    for (int j = 0; j < 2; ++j)
        CHECK_MPI(MPI_Isend(&rank, 1, MPI_INT, nb[j], 9, g, &req[2 + j]));
    CHECK_MPI(MPI_Waitall(4, req, MPI_STATUSES_IGNORE));
    CHECK(got[0] == nb[0] && got[1] == nb[1]);
    free(index);
    free(edges);
    CHECK_MPI(MPI_Comm_free(&g));
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    const char *spread = getenv("TOPO_EXPECT_SPREAD");
    const int expect_spread = spread != NULL ? atoi(spread) : 0;
    check_cart(world_size(), expect_spread);
    if (world_size() > 1)
        check_cart(world_size() - 1, 0);
    check_ring_graph();
    MPI_Finalize();
    return 0;
}
