/* coll_data.c: large collectives whose results every rank looks at, for a
 * run under valgrind's memcheck: a received byte that memcheck takes for
 * uninitialised (a peer wrote it with process_vm_writev, which memcheck in
 * this process does not see) is reported at the comparison that reads it.
 *
 * usage: coll_data
 *
 * Each rank contributes 1 MiB (262144 ints) to an MPI_Allgather, an
 * MPI_Alltoall and an MPI_Reduce (MPI_SUM, root 0), checks every int it
 * received and prints "ok R", or "bad R" and exits 1.  Standard MPI only:
 * builds with any MPI's mpicc. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

enum { kInts = 1 << 18 };

int main(int argc, char **argv)
{
    int rank = -1;
    int size = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int *mine = malloc(sizeof(int) * kInts);
    int *all = malloc(sizeof(int) * kInts * (size_t)size);
    if (mine == NULL || all == NULL) MPI_Abort(MPI_COMM_WORLD, 2);
    int bad = 0;

    for (int i = 0; i < kInts; ++i) mine[i] = rank * kInts + i;
    MPI_Allgather(mine, kInts, MPI_INT, all, kInts, MPI_INT, MPI_COMM_WORLD);
    for (long i = 0; i < (long)kInts * size; ++i) bad += all[i] != (int)i;

    const int block = kInts / size;
    for (int i = 0; i < kInts; ++i) mine[i] = rank * 1000 + i / block;
    MPI_Alltoall(mine, block, MPI_INT, all, block, MPI_INT, MPI_COMM_WORLD);
    for (int i = 0; i < block * size; ++i) bad += all[i] != (i / block) * 1000 + rank;

    for (int i = 0; i < kInts; ++i) mine[i] = i + rank;
    MPI_Reduce(mine, all, kInts, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        for (int i = 0; i < kInts; ++i) bad += all[i] != size * i + size * (size - 1) / 2;
    }

    printf("%s %d\n", bad == 0 ? "ok" : "bad", rank);
    free(mine);
    free(all);
    MPI_Finalize();
    return bad == 0 ? 0 : 1;
}
