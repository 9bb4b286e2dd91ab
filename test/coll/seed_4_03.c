/*
 * seed_4_03.c: example 4.3 of seed 004: as 4.2, but only the root
 * allocates the receive buffer (the others pass NULL).
 */
#include "check.h"

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm comm = MPI_COMM_WORLD;
    int gsize = 0, sendarray[100];
    int root, myrank, *rbuf;
    MPI_Comm_rank(comm, &myrank);
    for (int i = 0; i < 100; ++i)
        sendarray[i] = myrank * 1000 + i;

    for (root = 0; root < world_size(); ++root) {
        rbuf = NULL;
        /* ---- the example ---- */
        if (myrank == root) {
            MPI_Comm_size(comm, &gsize);
            rbuf = (int *)malloc(gsize * 100 * sizeof(int));
        }
        MPI_Gather(sendarray, 100, MPI_INT, rbuf, 100, MPI_INT, root, comm);
        /* ---- the check ---- */
        if (myrank == root) {
            for (int r = 0; r < gsize; ++r)
                for (int i = 0; i < 100; ++i)
                    CHECKF(rbuf[r * 100 + i] == r * 1000 + i, "rbuf[%d] = %d", r * 100 + i, rbuf[r * 100 + i]);
            free(rbuf);
        }
    }
    MPI_Finalize();
    return 0;
}
