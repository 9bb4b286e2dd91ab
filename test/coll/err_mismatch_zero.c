/*
 * err_mismatch_zero.c: an MPI_Allreduce where the last rank passes count 0
 * and the others count 1.  MPI makes that erroneous; with the shared-memory
 * algorithms the zero-count rank has nothing to do and leaves at once, so
 * the others would wait for its data forever.  shmpi must end the job
 * instead (the ranks publish each call's signature, and a waiting rank
 * compares them): the job fails, it does not hang.  The program returns 0
 * only if the call completed, which would make the test fail; with one rank
 * there is nothing to mismatch, and it returns 3.  shmpi only, should_fail.
 */
#include "coll_test.h"

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    const int rank = world_rank();
    const int size = world_size();
    double in = 1.0;
    double out = 0.0;
    MPI_Allreduce(&in, &out, rank == size - 1 ? 0 : 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    return size == 1 ? 3 : 0;
}
