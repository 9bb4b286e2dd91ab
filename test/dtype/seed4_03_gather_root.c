/* Seed 004, example 4.3: as 4.2, with the receive buffer allocated on the
 * root only (here the last rank). */
#include "seed4.h"

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm comm = MPI_COMM_WORLD;
    int gsize = 0, sendarray[100];
    int root, myrank, *rbuf = NULL;
    MPI_Comm_rank(comm, &myrank);
    root = world_size() - 1;
    for (int i = 0; i < 100; ++i)
        sendarray[i] = seed4_value(myrank, 0, i);
    if (myrank == root) {
        MPI_Comm_size(comm, &gsize);
        rbuf = seed4_rbuf((long)gsize * 100);
    }
    CHECK_MPI(MPI_Gather(sendarray, 100, MPI_INT, rbuf, 100, MPI_INT, root, comm));
    if (myrank == root) {
        for (int r = 0; r < gsize; ++r)
            for (int i = 0; i < 100; ++i)
                CHECKF(rbuf[r * 100 + i] == seed4_value(r, 0, i), "rbuf[%d] = %d", r * 100 + i, rbuf[r * 100 + i]);
        free(rbuf);
    }
    MPI_Finalize();
    return 0;
}
