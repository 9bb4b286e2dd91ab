/*
 * MPI_Cart_sub with no dimension kept: MPI-3.1 7.5.7 says newcomm is then
 * associated with a zero-dimensional Cartesian topology, so every process
 * gets a communicator of its own (size 1, MPI_Cartdim_get 0).  The same
 * for a sub-grid of that.  Standard MPI, but marked shmpi-only in
 * meson.build: Debian's MPICH 4.0 returns MPI_COMM_NULL on all processes
 * but one.
 */
#include "check.h"

static void check_alone(MPI_Comm c)
{
    CHECK(c != MPI_COMM_NULL);
    int size = -1, rank = -1, status = -1, nd = -1;
    CHECK_MPI(MPI_Comm_size(c, &size));
    CHECK_MPI(MPI_Comm_rank(c, &rank));
    CHECKF(size == 1 && rank == 0, "size %d rank %d, expected a communicator of one", size, rank);
    CHECK_MPI(MPI_Topo_test(c, &status));
    CHECK(status == MPI_CART);
    CHECK_MPI(MPI_Cartdim_get(c, &nd));
    CHECKF(nd == 0, "MPI_Cartdim_get: %d", nd);
    int r = -1;
    CHECK_MPI(MPI_Cart_rank(c, NULL, &r));
    CHECK(r == 0);
    int x = world_rank(), y = -1;
    CHECK_MPI(MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, c));
    CHECK(y == x);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int dims[2] = {0, 0};
    const int periods[2] = {1, 0};
    CHECK_MPI(MPI_Dims_create(world_size(), 2, dims));
    MPI_Comm cart, none, none2;
    CHECK_MPI(MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart));
    const int remain[2] = {0, 0};
    CHECK_MPI(MPI_Cart_sub(cart, remain, &none));
    check_alone(none);
    CHECK_MPI(MPI_Cart_sub(none, NULL, &none2));
    check_alone(none2);
    CHECK_MPI(MPI_Comm_free(&none2));
    CHECK_MPI(MPI_Comm_free(&none));
    CHECK_MPI(MPI_Comm_free(&cart));
    MPI_Finalize();
    return 0;
}
