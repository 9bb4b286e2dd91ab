/* Seed 004, example 4.8 in MPI-3 spelling: the one-int type whose extent is
 * a whole row is made with MPI_Type_create_resized instead of
 * MPI_Type_struct and MPI_UB, so MPICH and Open MPI run it too. */
#include "seed4.h"

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm comm = MPI_COMM_WORLD;
    int gsize, *sptr;
    int root = 0, *rbuf, stride = 100, myrank;
    MPI_Datatype stype;
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
    CHECK_MPI(MPI_Type_create_resized(MPI_INT, 0, 150 * sizeof(int), &stype));
    CHECK_MPI(MPI_Type_commit(&stype));
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
