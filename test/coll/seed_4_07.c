/*
 * seed_4_07.c: example 4.7 of seed 004: process i sends 100-i ints of
 * column i of its 100x150 C array (a vector type whose count depends on
 * the rank); the root places them `stride` apart.
 */
#include "check.h"

static int sendarray[100][150];

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm comm = MPI_COMM_WORLD;
    int gsize, *sptr;
    int root, *rbuf, stride = 101, myrank;
    MPI_Datatype stype;
    int *displs, i, *rcounts;
    MPI_Comm_rank(comm, &myrank);
    for (i = 0; i < 100; ++i)
        for (int j = 0; j < 150; ++j)
            sendarray[i][j] = myrank * 100000 + i * 150 + j;

    for (root = 0; root < world_size(); ++root) {
        /* ---- the example ---- */
        MPI_Comm_size(comm, &gsize);
        MPI_Comm_rank(comm, &myrank);
        rbuf = (int *)malloc(gsize * stride * sizeof(int));
        displs = (int *)malloc(gsize * sizeof(int));
        rcounts = (int *)malloc(gsize * sizeof(int));
        for (i = 0; i < gsize; ++i) {
            displs[i] = i * stride;
            rcounts[i] = 100 - i; /* note change from previous example */
        }
        /* Create datatype for the column we are sending */
        MPI_Type_vector(100 - myrank, 1, 150, MPI_INT, &stype);
        MPI_Type_commit(&stype);
        /* sptr is the address of start of "myrank" column */
        sptr = &sendarray[0][myrank];
        MPI_Gatherv(sptr, 1, stype, rbuf, rcounts, displs, MPI_INT, root, comm);
        /* ---- the check: rank r's column r, rows 0 .. 99-r ---- */
        if (myrank == root)
            for (int r = 0; r < gsize; ++r)
                for (int k = 0; k < 100 - r; ++k)
                    CHECKF(rbuf[r * stride + k] == r * 100000 + k * 150 + r, "rbuf[%d] = %d", r * stride + k,
                           rbuf[r * stride + k]);
        MPI_Type_free(&stype);
        free(rbuf);
        free(displs);
        free(rcounts);
    }
    MPI_Finalize();
    return 0;
}
