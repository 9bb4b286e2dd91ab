/*
 * err_root_fatal.c: MPI_Bcast with a root outside the communicator, under
 * the default MPI_ERRORS_ARE_FATAL: the job ends nonzero, no rank hangs.
 * Registered as should_fail.
 */
#include "check.h"

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int x = 0;
    MPI_Bcast(&x, 1, MPI_INT, world_size(), MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
