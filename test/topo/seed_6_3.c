/*
 * Seed 002, example 6.3: a 2-D periodic grid holds one element A per
 * process; column j is skewed, shifted vertically (along dimension 0) by j
 * places, with MPI_Cart_shift(comm, 0, coords[1]) and
 * MPI_Sendrecv_replace.  Afterwards the process at (i, j) holds what
 * (i - j mod dims[0], j) held.
 */
#include "check.h"

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    const int size = world_size();
    int dims[2] = {0, 0};
    const int periods[2] = {1, 1};
    CHECK_MPI(MPI_Dims_create(size, 2, dims));
    MPI_Comm comm;
    CHECK_MPI(MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &comm));

    int rank = -1;
    CHECK_MPI(MPI_Comm_rank(comm, &rank));
    int coords[2];
    CHECK_MPI(MPI_Cart_coords(comm, rank, 2, coords));
    int source = -1, dest = -1;
    CHECK_MPI(MPI_Cart_shift(comm, 0, coords[1], &source, &dest));
    float A = (float)(1000 * coords[0] + coords[1]);
    MPI_Status st;
    CHECK_MPI(MPI_Sendrecv_replace(&A, 1, MPI_FLOAT, dest, 0, source, 0, comm, &st));

    const int from_i = ((coords[0] - coords[1]) % dims[0] + dims[0]) % dims[0];
    CHECKF(A == (float)(1000 * from_i + coords[1]), "(%d,%d) of %dx%d holds %g, expected %d", coords[0],
           coords[1], dims[0], dims[1], (double)A, 1000 * from_i + coords[1]);
    int src_coords[2];
    CHECK_MPI(MPI_Cart_coords(comm, source, 2, src_coords));
    CHECK(src_coords[0] == from_i && src_coords[1] == coords[1]);

    CHECK_MPI(MPI_Comm_free(&comm));
    MPI_Finalize();
    return 0;
}
