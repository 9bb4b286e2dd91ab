/* Seed 004, example 4.8, as the seed writes it: the column is sent as
 * 100 - i elements of a one-int type whose extent is a whole row, made with
 * MPI_Type_struct and the MPI_UB marker (MPI-1 spellings: shmpi only). */
#include "seed4.h"

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm comm = MPI_COMM_WORLD;
    int gsize, *sptr;
    int root = 0, *rbuf, stride = 100, myrank, blocklen[2];
    MPI_Aint disp[2];
    MPI_Datatype stype, type[2];
    int *displs, i, *rcounts;
    MPI_Comm_size(comm, &gsize);
    MPI_Comm_rank(comm, &myrank);
    int(*sendarray)[150] = seed4_array(myrank);
    rbuf = seed4_rbuf((long)gsize * stride);
    displs = (int *)check_malloc((size_t)gsize * sizeof(int));
    rcounts = (int *)check_malloc((size_t)gsize * sizeof(int));
    for (i = 0; i < gsize; ++i) {
        displs[i] = i * stride;
        rcounts[i] = 100 - i;
    }
    /* one int, with the extent of a whole row */
    disp[0] = 0;
    disp[1] = 150 * sizeof(int);
    type[0] = MPI_INT;
    type[1] = MPI_UB;
    blocklen[0] = 1;
    blocklen[1] = 1;
    CHECK_MPI(MPI_Type_struct(2, blocklen, disp, type, &stype));
    CHECK_MPI(MPI_Type_commit(&stype));
    MPI_Aint extent;
    CHECK_MPI(MPI_Type_extent(stype, &extent));
    CHECKF(extent == 150 * sizeof(int), "extent %ld", (long)extent);
    sptr = &sendarray[0][myrank];
    CHECK_MPI(MPI_Gatherv(sptr, 100 - myrank, stype, rbuf, rcounts, displs, MPI_INT, root, comm));
    if (myrank == root)
        for (int r = 0; r < gsize; ++r) {
            seed4_check_column(rbuf, (long)r * stride, 100 - r, r, r);
            seed4_check_untouched(rbuf, (long)r * stride + 100 - r, r);
        }
    CHECK_MPI(MPI_Type_free(&stype));
    free(rcounts);
    free(displs);
    free(rbuf);
    free(sendarray);
    MPI_Finalize();
    return 0;
}
