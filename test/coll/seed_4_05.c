/*
 * seed_4_05.c: example 4.5 of seed 004: every process sends 100 ints; the
 * root places each set `stride` ints after the previous one (stride >= 100)
 * with MPI_Gatherv.  The ints between the sets stay untouched.
 */
#include "check.h"

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm comm = MPI_COMM_WORLD;
    int gsize, sendarray[100];
    int root, *rbuf, stride = 107, myrank;
    int *displs, i, *rcounts;
    MPI_Comm_rank(comm, &myrank);
    for (i = 0; i < 100; ++i)
        sendarray[i] = myrank * 1000 + i;

    for (root = 0; root < world_size(); ++root) {
        /* ---- the example ---- */
        MPI_Comm_size(comm, &gsize);
        rbuf = (int *)malloc(gsize * stride * sizeof(int));
        displs = (int *)malloc(gsize * sizeof(int));
        rcounts = (int *)malloc(gsize * sizeof(int));
        for (i = 0; i < gsize; ++i) {
            displs[i] = i * stride;
            rcounts[i] = 100;
        }
        for (i = 0; i < gsize * stride; ++i)
            rbuf[i] = -1;
        MPI_Gatherv(sendarray, 100, MPI_INT, rbuf, rcounts, displs, MPI_INT, root, comm);
        /* ---- the check ---- */
        if (myrank == root)
            for (int r = 0; r < gsize; ++r)
                for (int k = 0; k < stride; ++k)
                    CHECKF(rbuf[r * stride + k] == (k < 100 ? r * 1000 + k : -1), "rbuf[%d] = %d",
                           r * stride + k, rbuf[r * stride + k]);
        free(rbuf);
        free(displs);
        free(rcounts);
    }
    MPI_Finalize();
    return 0;
}
