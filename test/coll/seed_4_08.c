/*
 * seed_4_08.c: example 4.8 of seed 004: as 4.7, but the sender describes
 * one int of a column with MPI_Type_struct and an MPI_UB marker at 150
 * ints, so that consecutive elements of the type walk down the column, and
 * sends 100-myrank of them.  MPI-1 spellings (MPI_Type_struct, MPI_UB),
 * which shmpi keeps for old code.
 */
#include "check.h"

static int sendarray[100][150];

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm comm = MPI_COMM_WORLD;
    int gsize, *sptr;
    int root, *rbuf, stride = 100, myrank, blocklen[2];
    MPI_Aint disp[2];
    MPI_Datatype stype, type[2];
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
            rcounts[i] = 100 - i;
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
        MPI_Gatherv(sptr, 100 - myrank, stype, rbuf, rcounts, displs, MPI_INT, root, comm);
        /* ---- the check ---- */
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
