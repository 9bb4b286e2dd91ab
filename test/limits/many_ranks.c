/* many_ranks.c: a barrier-and-allreduce program that must run to the end
 * with far more ranks than cores (64 ranks on a 2-core machine, issue 7
 * point 3): waiting ranks must give their cores to the ranks that can make
 * progress.  Each of kRounds rounds is a barrier and an allreduce whose sum
 * every rank checks. */
#include <mpi.h>
#include <stdio.h>

#include "check.h"

enum { kRounds = 20 };

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    int rank = 0, size = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (int round = 0; round < kRounds; ++round) {
        MPI_Barrier(MPI_COMM_WORLD);
        long mine[2] = {rank + round, 1}, sum[2] = {-1, -1};
        MPI_Allreduce(mine, sum, 2, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
        const long want = (long)size * (size - 1) / 2 + (long)size * round;
        CHECKF(sum[0] == want && sum[1] == size, "round %d: sums %ld %ld, want %ld %d", round,
               sum[0], sum[1], want, size);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) printf("many_ranks: %d ranks, %d rounds of barrier and allreduce\n", size, kRounds);
    MPI_Finalize();
    return 0;
}
