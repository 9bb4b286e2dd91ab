/*
 * seed_4_09.c: example 4.9 of seed 004: the sender of 4.7, and a receive
 * side where the blocks are stride[i] ints apart, stride[i] varying with i.
 */
#include "check.h"

static int sendarray[100][150];

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm comm = MPI_COMM_WORLD;
    int gsize, *sptr;
    int root, *rbuf, *stride, myrank, bufsize;
    MPI_Datatype stype;
    int *displs, i, *rcounts, offset;
    MPI_Comm_rank(comm, &myrank);
    for (i = 0; i < 100; ++i)
        for (int j = 0; j < 150; ++j)
            sendarray[i][j] = myrank * 100000 + i * 150 + j;

    for (root = 0; root < world_size(); ++root) {
        /* ---- the example ---- */
        MPI_Comm_size(comm, &gsize);
        MPI_Comm_rank(comm, &myrank);
        stride = (int *)malloc(gsize * sizeof(int));
        /* stride[i] for i = 0 to gsize-1 is set somehow */
        for (i = 0; i < gsize; ++i)
            stride[i] = 100 - i + (i * 7) % 5;
        /* set up displs and rcounts vectors first */
        displs = (int *)malloc(gsize * sizeof(int));
        rcounts = (int *)malloc(gsize * sizeof(int));
        offset = 0;
        for (i = 0; i < gsize; ++i) {
            displs[i] = offset;
            offset += stride[i];
            rcounts[i] = 100 - i;
        }
        /* the required buffer size for rbuf is now easily obtained */
        bufsize = displs[gsize - 1] + rcounts[gsize - 1];
        rbuf = (int *)malloc(bufsize * sizeof(int));
        /* Create datatype for the column we are sending */
        MPI_Type_vector(100 - myrank, 1, 150, MPI_INT, &stype);
        MPI_Type_commit(&stype);
        sptr = &sendarray[0][myrank];
        MPI_Gatherv(sptr, 1, stype, rbuf, rcounts, displs, MPI_INT, root, comm);
        /* ---- the check ---- */
        if (myrank == root)
            for (int r = 0; r < gsize; ++r)
                for (int k = 0; k < 100 - r; ++k)
                    CHECKF(rbuf[displs[r] + k] == r * 100000 + k * 150 + r, "rbuf[%d] = %d", displs[r] + k,
                           rbuf[displs[r] + k]);
        MPI_Type_free(&stype);
        free(rbuf);
        free(displs);
        free(rcounts);
        free(stride);
    }
    MPI_Finalize();
    return 0;
}
