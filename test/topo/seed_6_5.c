/*
 * Seed 002, example 6.5: neighbours on a 2-D periodic grid for a Poisson
 * solver.  MPI_Dims_create picks the grid, MPI_Cart_create makes it with
 * reorder = true, MPI_Cart_get gives the own position (i, j), and
 * MPI_Cart_rank names the neighbours (i-1, j), (i+1, j), (i, j-1), (i, j+1)
 * (coordinates off the grid wrap).  (The seed's Fortran passes comm where
 * MPI_DIMS_CREATE wants the number of processes; that is its misprint.)
 * Then a few "iterations" exchange boundary values with the four
 * neighbours; each checks it got what its neighbour sent.
 */
#include "check.h"

#define NDIMS 2
#define NUM_NEIGH 4
#define N 100

/* The exchange of the example: send my boundary to each neighbour,
 * receive theirs.  u has N+2 rows of N+2 doubles (ghost cells around). */
static void exchange(double *u, MPI_Comm comm_cart, const int *neigh_rank, int it)
{
    double send[NUM_NEIGH][N], recv[NUM_NEIGH][N];
    int rank = -1;
    CHECK_MPI(MPI_Comm_rank(comm_cart, &rank));
    for (int k = 0; k < NUM_NEIGH; ++k)
        for (int x = 0; x < N; ++x)
            send[k][x] = rank * 1e6 + it * 1e3 + k * 100 + x;
    MPI_Request req[2 * NUM_NEIGH];
    /* Neighbour k receives my side k: it files it under side k ^ 1
     * (what comes from i-1 is the other's i+1 side). */
    for (int k = 0; k < NUM_NEIGH; ++k)
        CHECK_MPI(MPI_Irecv(recv[k], N, MPI_DOUBLE, neigh_rank[k], k ^ 1, comm_cart, &req[k]));
    for (int k = 0; k < NUM_NEIGH; ++k)
        CHECK_MPI(MPI_Isend(send[k], N, MPI_DOUBLE, neigh_rank[k], k, comm_cart, &req[NUM_NEIGH + k]));
    CHECK_MPI(MPI_Waitall(2 * NUM_NEIGH, req, MPI_STATUSES_IGNORE));
    for (int k = 0; k < NUM_NEIGH; ++k)
        for (int x = 0; x < N; ++x) {
            const double want = neigh_rank[k] * 1e6 + it * 1e3 + (k ^ 1) * 100 + x;
            CHECKF(recv[k][x] == want, "side %d from rank %d: %g, expected %g", k, neigh_rank[k],
                   recv[k][x], want);
        }
    /* The ghost cells of u. */
    for (int x = 0; x < N; ++x) {
        u[0 * (N + 2) + x + 1] = recv[0][x];
        u[(N + 1) * (N + 2) + x + 1] = recv[1][x];
        u[(x + 1) * (N + 2) + 0] = recv[2][x];
        u[(x + 1) * (N + 2) + N + 1] = recv[3][x];
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    const int reorder = 1;
    int dims[NDIMS] = {0, 0};
    int periods[NDIMS];
    int own_position[NDIMS], neigh_def[NDIMS], neigh_rank[NUM_NEIGH];
    MPI_Comm comm = MPI_COMM_WORLD, comm_cart;
    int size = -1;
    CHECK_MPI(MPI_Comm_size(comm, &size));

    CHECK_MPI(MPI_Dims_create(size, NDIMS, dims));
    periods[0] = 1;
    periods[1] = 1;
    CHECK_MPI(MPI_Cart_create(comm, NDIMS, dims, periods, reorder, &comm_cart));
    CHECK(comm_cart != MPI_COMM_NULL);
    CHECK_MPI(MPI_Cart_get(comm_cart, NDIMS, dims, periods, own_position));

    const int i = own_position[0];
    const int j = own_position[1];
    neigh_def[0] = i - 1;
    neigh_def[1] = j;
    CHECK_MPI(MPI_Cart_rank(comm_cart, neigh_def, &neigh_rank[0]));
    neigh_def[0] = i + 1;
    neigh_def[1] = j;
    CHECK_MPI(MPI_Cart_rank(comm_cart, neigh_def, &neigh_rank[1]));
    neigh_def[0] = i;
    neigh_def[1] = j - 1;
    CHECK_MPI(MPI_Cart_rank(comm_cart, neigh_def, &neigh_rank[2]));
    neigh_def[0] = i;
    neigh_def[1] = j + 1;
    CHECK_MPI(MPI_Cart_rank(comm_cart, neigh_def, &neigh_rank[3]));

    /* The same neighbours through MPI_Cart_shift. */
    int src = -1, dst = -1;
    CHECK_MPI(MPI_Cart_shift(comm_cart, 0, 1, &src, &dst));
    CHECK(src == neigh_rank[0] && dst == neigh_rank[1]);
    CHECK_MPI(MPI_Cart_shift(comm_cart, 1, 1, &src, &dst));
    CHECK(src == neigh_rank[2] && dst == neigh_rank[3]);

    static double u[(N + 2) * (N + 2)];
    for (int it = 1; it <= 5; ++it)
        exchange(u, comm_cart, neigh_rank, it);

    CHECK_MPI(MPI_Comm_free(&comm_cart));
    MPI_Finalize();
    return 0;
}
