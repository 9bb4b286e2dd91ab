/*
 * err_truncate.c: a gather where the last rank sends more than the root
 * expects (the type signatures differ): the error ends the whole job under
 * the default MPI_ERRORS_ARE_FATAL, nonzero and without a hang.  Registered
 * as should_fail.
 */
#include "check.h"

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    const int rank = world_rank();
    const int size = world_size();
    int send[8] = {0};
    int *recv = check_malloc(sizeof(int) * 4 * (size_t)size);
    const int count = rank == size - 1 && size > 1 ? 8 : 4;
    MPI_Gather(send, count, MPI_INT, recv, 4, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
    free(recv);
    MPI_Finalize();
    /* One rank alone cannot mismatch: fail on purpose. */
    return size == 1 ? 3 : 0;
}
