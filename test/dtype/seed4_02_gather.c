/* Seed 004, example 4.2: gather 100 ints from every process to the root. */
#include "seed4.h"

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm comm = MPI_COMM_WORLD;
    int gsize, sendarray[100];
    int root = 0, *rbuf;
    MPI_Comm_size(comm, &gsize);
    const int rank = world_rank();
    for (int i = 0; i < 100; ++i)
        sendarray[i] = seed4_value(rank, 0, i);
    rbuf = seed4_rbuf((long)gsize * 100);
    CHECK_MPI(MPI_Gather(sendarray, 100, MPI_INT, rbuf, 100, MPI_INT, root, comm));
    if (rank == root)
        for (int r = 0; r < gsize; ++r)
            for (int i = 0; i < 100; ++i)
                CHECKF(rbuf[r * 100 + i] == seed4_value(r, 0, i), "rbuf[%d] = %d", r * 100 + i, rbuf[r * 100 + i]);
    free(rbuf);
    MPI_Finalize();
    return 0;
}
