/*
 * err_mismatch_size.c: an MPI_Bcast where the last rank expects 8 bytes
 * fewer than the root sends, 64 KiB against 64 KiB - 8: the two sizes
 * fall on both sides of the size at which shmpi's broadcast changes
 * algorithm, so the ranks run different protocols and would wait for each
 * other forever.  shmpi must end the job instead (see err_mismatch_zero.c).
 * With one rank there is nothing to mismatch, and it returns 3.  shmpi
 * only, should_fail.
 */
#include "coll_test.h"

enum { N = 65536 / 8 };

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    const int rank = world_rank();
    const int size = world_size();
    double *buf = check_malloc(sizeof(double) * N);
    for (int i = 0; i < N; ++i)
        buf[i] = i;
    MPI_Bcast(buf, rank == size - 1 && size > 1 ? N - 1 : N, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
    free(buf);
    MPI_Finalize();
    return size == 1 ? 3 : 0;
}
