/* Seed 004, example 4.9: as 4.7 on the sending side, with a different
 * stride[i] between the blocks on the root. */
#include "seed4.h"

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm comm = MPI_COMM_WORLD;
    int gsize, *sptr;
    int root = 0, *rbuf, *stride, myrank, bufsize;
    MPI_Datatype stype;
    int *displs, i, *rcounts, offset;
    MPI_Comm_size(comm, &gsize);
    MPI_Comm_rank(comm, &myrank);
    int(*sendarray)[150] = seed4_array(myrank);
    stride = (int *)check_malloc((size_t)gsize * sizeof(int));
    for (i = 0; i < gsize; ++i)
        stride[i] = 100 + 7 * (i % 3); /* any stride[i] >= 100 - i */
    /* set up the displs and rcounts vectors first */
    displs = (int *)check_malloc((size_t)gsize * sizeof(int));
    rcounts = (int *)check_malloc((size_t)gsize * sizeof(int));
    offset = 0;
    for (i = 0; i < gsize; ++i) {
        displs[i] = offset;
        offset += stride[i];
        rcounts[i] = 100 - i;
    }
    /* the size of rbuf is now easy to find */
    bufsize = displs[gsize - 1] + rcounts[gsize - 1];
    rbuf = seed4_rbuf(bufsize);
    /* the type of the column to send */
    CHECK_MPI(MPI_Type_vector(100 - myrank, 1, 150, MPI_INT, &stype));
    CHECK_MPI(MPI_Type_commit(&stype));
    sptr = &sendarray[0][myrank];
    CHECK_MPI(MPI_Gatherv(sptr, 1, stype, rbuf, rcounts, displs, MPI_INT, root, comm));
    if (myrank == root)
        for (int r = 0; r < gsize; ++r) {
            seed4_check_column(rbuf, displs[r], 100 - r, r, r);
            if (r + 1 < gsize)
                seed4_check_untouched(rbuf, displs[r] + 100 - r, stride[r] - (100 - r));
        }
    CHECK_MPI(MPI_Type_free(&stype));
    free(rcounts);
    free(displs);
    free(stride);
    free(rbuf);
    free(sendarray);
    MPI_Finalize();
    return 0;
}
