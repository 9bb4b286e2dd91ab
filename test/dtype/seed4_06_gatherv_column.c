/* Seed 004, example 4.6: the root gathers column 0 of every process's
 * 100 x 150 array, sent as one element of a vector type and received as
 * 100 MPI_INTs `stride` ints apart. */
#include "seed4.h"

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm comm = MPI_COMM_WORLD;
    int gsize;
    int root = 0, *rbuf, stride = 103;
    MPI_Datatype stype;
    int *displs, i, *rcounts;
    MPI_Comm_size(comm, &gsize);
    const int rank = world_rank();
    int(*sendarray)[150] = seed4_array(rank);
    rbuf = seed4_rbuf((long)gsize * stride);
    displs = (int *)check_malloc((size_t)gsize * sizeof(int));
    rcounts = (int *)check_malloc((size_t)gsize * sizeof(int));
    for (i = 0; i < gsize; ++i) {
        displs[i] = i * stride;
        rcounts[i] = 100;
    }
    /* the type of the first column of the array */
    CHECK_MPI(MPI_Type_vector(100, 1, 150, MPI_INT, &stype));
    CHECK_MPI(MPI_Type_commit(&stype));
    CHECK_MPI(MPI_Gatherv(sendarray, 1, stype, rbuf, rcounts, displs, MPI_INT, root, comm));
    if (rank == root)
        for (int r = 0; r < gsize; ++r) {
            seed4_check_column(rbuf, (long)r * stride, 100, r, 0);
            seed4_check_untouched(rbuf, (long)r * stride + 100, stride - 100);
        }
    CHECK_MPI(MPI_Type_free(&stype));
    free(rcounts);
    free(displs);
    free(rbuf);
    free(sendarray);
    MPI_Finalize();
    return 0;
}
