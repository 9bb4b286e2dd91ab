/* Seed 004, example 4.10 in MPI-3 spelling: as seed4_10_gatherv_num_ub.c,
 * with the column type made by MPI_Type_create_resized, so MPICH and Open
 * MPI run it too. */
#include "seed4.h"

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm comm = MPI_COMM_WORLD;
    int gsize, *sptr;
    int root = 0, *rbuf, myrank;
    MPI_Datatype stype;
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

    CHECK_MPI(MPI_Type_create_resized(MPI_INT, 0, 150 * sizeof(int), &stype));
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
