/* Seed 004, example 4.7: process i sends the first 100 - i ints of column i
 * of its 100 x 150 array; the root places them `stride` ints apart. */
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
        rcounts[i] = 100 - i; /* differs from the previous example */
    }
    /* the type of the column this process sends */
    CHECK_MPI(MPI_Type_vector(100 - myrank, 1, 150, MPI_INT, &stype));
    CHECK_MPI(MPI_Type_commit(&stype));
    /* sptr is the address of column "myrank" */
    sptr = &sendarray[0][myrank];
    CHECK_MPI(MPI_Gatherv(sptr, 1, stype, rbuf, rcounts, displs, MPI_INT, root, comm));
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
