/*
 * seed_4_04.c: example 4.4 of seed 004: as 4.3, but the root receives with
 * a derived type of 100 contiguous ints (recvcount 1): the type signatures
 * match per process, not for the whole gsize*100 ints.
 */
#include "check.h"

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm comm = MPI_COMM_WORLD;
    int gsize, sendarray[100];
    int root, *rbuf, myrank;
    MPI_Datatype rtype;
    MPI_Comm_rank(comm, &myrank);
    for (int i = 0; i < 100; ++i)
        sendarray[i] = myrank * 1000 + i;

    for (root = 0; root < world_size(); ++root) {
        /* ---- the example ---- */
        MPI_Comm_size(comm, &gsize);
        MPI_Type_contiguous(100, MPI_INT, &rtype);
        MPI_Type_commit(&rtype);
        rbuf = (int *)malloc(gsize * 100 * sizeof(int));
        MPI_Gather(sendarray, 100, MPI_INT, rbuf, 1, rtype, root, comm);
        /* ---- the check ---- */
        if (myrank == root)
            for (int r = 0; r < gsize; ++r)
                for (int i = 0; i < 100; ++i)
                    CHECKF(rbuf[r * 100 + i] == r * 1000 + i, "rbuf[%d] = %d", r * 100 + i, rbuf[r * 100 + i]);
        free(rbuf);
        MPI_Type_free(&rtype);
    }
    MPI_Finalize();
    return 0;
}
