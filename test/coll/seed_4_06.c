/*
 * seed_4_06.c: example 4.6 of seed 004: the receive side of 4.5, but each
 * process sends column 0 of its 100x150 C array, described by a vector
 * type (100 blocks of 1 int, stride 150).
 */
#include "check.h"

static int sendarray[100][150];

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm comm = MPI_COMM_WORLD;
    int gsize;
    int root, *rbuf, stride = 103, myrank;
    MPI_Datatype stype;
    int *displs, i, *rcounts;
    MPI_Comm_rank(comm, &myrank);
    for (i = 0; i < 100; ++i)
        for (int j = 0; j < 150; ++j)
            sendarray[i][j] = myrank * 100000 + i * 150 + j;

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
        /* Create datatype for 1 column of array */
        MPI_Type_vector(100, 1, 150, MPI_INT, &stype);
        MPI_Type_commit(&stype);
        MPI_Gatherv(sendarray, 1, stype, rbuf, rcounts, displs, MPI_INT, root, comm);
        /* ---- the check: rank r's column 0 at r * stride ---- */
        if (myrank == root)
            for (int r = 0; r < gsize; ++r)
                for (int k = 0; k < 100; ++k)
                    CHECKF(rbuf[r * stride + k] == r * 100000 + k * 150, "rbuf[%d] = %d", r * stride + k,
                           rbuf[r * stride + k]);
        MPI_Type_free(&stype);
        free(rbuf);
        free(displs);
        free(rcounts);
    }
    MPI_Finalize();
    return 0;
}
