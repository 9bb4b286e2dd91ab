/* Seed 004, example 4.10, as the seed writes it: process i sends `num` ints
 * of column i; the root first gathers every num, then places the columns
 * one after another.  The column type is one int with the extent of a row,
 * made with MPI_Type_struct and MPI_UB (MPI-1 spellings: shmpi only). */
#include "seed4.h"

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm comm = MPI_COMM_WORLD;
    int gsize, *sptr;
    int root = 0, *rbuf, myrank, blocklen[2];
    MPI_Aint disp[2];
    MPI_Datatype stype, types[2];
    int *displs, i, *rcounts, num;
    MPI_Comm_size(comm, &gsize);
    MPI_Comm_rank(comm, &myrank);
    int(*sendarray)[150] = seed4_array(myrank);
    num = 10 + (myrank * 37) % 91;

    /* first the root gathers every num */
    rcounts = (int *)check_malloc((size_t)gsize * sizeof(int));
    CHECK_MPI(MPI_Gather(&num, 1, MPI_INT, rcounts, 1, MPI_INT, root, comm));

    /* the root now has rcounts; displs puts the data one after another
     * (rcounts, displs and rbuf mean something on the root only) */
    displs = (int *)check_malloc((size_t)gsize * sizeof(int));
    rbuf = NULL;
    if (myrank == root) {
        displs[0] = 0;
        for (i = 1; i < gsize; ++i)
            displs[i] = displs[i - 1] + rcounts[i - 1];
        rbuf = seed4_rbuf((long)gsize * (displs[gsize - 1] + rcounts[gsize - 1]));
    }

    /* one int, with the extent of a whole row */
    disp[0] = 0;
    disp[1] = 150 * sizeof(int);
    types[0] = MPI_INT;
    types[1] = MPI_UB;
    blocklen[0] = 1;
    blocklen[1] = 1;
    CHECK_MPI(MPI_Type_struct(2, blocklen, disp, types, &stype));
    CHECK_MPI(MPI_Type_commit(&stype));
    sptr = &sendarray[0][myrank];
    CHECK_MPI(MPI_Gatherv(sptr, num, stype, rbuf, rcounts, displs, MPI_INT, root, comm));
    if (myrank == root) {
        for (int r = 0; r < gsize; ++r) {
            CHECKF(rcounts[r] == 10 + (r * 37) % 91, "num of rank %d is %d", r, rcounts[r]);
            seed4_check_column(rbuf, displs[r], rcounts[r], r, r);
        }
        const long end = displs[gsize - 1] + rcounts[gsize - 1];
        seed4_check_untouched(rbuf, end, (long)gsize * end - end);
    }
    CHECK_MPI(MPI_Type_free(&stype));
    free(rcounts);
    free(displs);
    free(rbuf);
    free(sendarray);
    MPI_Finalize();
    return 0;
}
