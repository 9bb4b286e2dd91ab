/*
 * seed_4_10.c: example 4.10 of seed 004: process i sends num ints of
 * column i of its 100x150 array, num varying by process and unknown to the
 * root: the root first gathers the nums, then places the columns one after
 * the other with MPI_Gatherv, the sender describing one int of a column
 * with MPI_Type_struct and MPI_UB (MPI-1 spellings).
 */
#include "check.h"

static int sendarray[100][150];

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm comm = MPI_COMM_WORLD;
    int gsize, *sptr;
    int root, *rbuf, myrank, blocklen[2];
    MPI_Aint disp[2];
    MPI_Datatype stype, type[2];
    int *displs, i, *rcounts, num;
    MPI_Comm_rank(comm, &myrank);
    for (i = 0; i < 100; ++i)
        for (int j = 0; j < 150; ++j)
            sendarray[i][j] = myrank * 100000 + i * 150 + j;
    num = 100 - (myrank * 37) % 100;

    for (root = 0; root < world_size(); ++root) {
        /* ---- the example ---- */
        MPI_Comm_size(comm, &gsize);
        MPI_Comm_rank(comm, &myrank);
        /* First, gather nums to root */
        rcounts = (int *)malloc(gsize * sizeof(int));
        MPI_Gather(&num, 1, MPI_INT, rcounts, 1, MPI_INT, root, comm);
        /* root now has correct rcounts, using these we set displs[] so
         * that data is placed contiguously (or concatenated) at receive end */
        displs = (int *)malloc(gsize * sizeof(int));
        rbuf = NULL;
        if (myrank == root) {
            displs[0] = 0;
            for (i = 1; i < gsize; ++i)
                displs[i] = displs[i - 1] + rcounts[i - 1];
            /* And, create receive buffer */
            rbuf = (int *)malloc(gsize * (displs[gsize - 1] + rcounts[gsize - 1]) * sizeof(int));
        }
        /* Create datatype for one int, with extent of entire row */
        disp[0] = 0;
        disp[1] = 150 * sizeof(int);
        type[0] = MPI_INT;
        type[1] = MPI_UB;
        blocklen[0] = 1;
        blocklen[1] = 1;
        MPI_Type_struct(2, blocklen, disp, type, &stype);
        MPI_Type_commit(&stype);
        sptr = &sendarray[0][myrank];
        MPI_Gatherv(sptr, num, stype, rbuf, rcounts, displs, MPI_INT, root, comm);
        /* ---- the check ---- */
        if (myrank == root) {
            for (int r = 0; r < gsize; ++r) {
                CHECKF(rcounts[r] == 100 - (r * 37) % 100, "rcounts[%d] = %d", r, rcounts[r]);
                for (int k = 0; k < rcounts[r]; ++k)
                    CHECKF(rbuf[displs[r] + k] == r * 100000 + k * 150 + r, "rbuf[%d] = %d", displs[r] + k,
                           rbuf[displs[r] + k]);
            }
        }
        MPI_Type_free(&stype);
        free(rbuf);
        free(displs);
        free(rcounts);
    }
    MPI_Finalize();
    return 0;
}
