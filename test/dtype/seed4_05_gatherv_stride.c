/* Seed 004, example 4.5: 100 ints from every process, placed `stride` ints
 * apart on the root with MPI_Gatherv (stride >= 100). */
#include "seed4.h"

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm comm = MPI_COMM_WORLD;
    int gsize, sendarray[100];
    int root = 0, *rbuf, stride = 117;
    int *displs, i, *rcounts;
    MPI_Comm_size(comm, &gsize);
    const int rank = world_rank();
    for (i = 0; i < 100; ++i)
        sendarray[i] = seed4_value(rank, 0, i);
    rbuf = seed4_rbuf((long)gsize * stride);
    displs = (int *)check_malloc((size_t)gsize * sizeof(int));
    rcounts = (int *)check_malloc((size_t)gsize * sizeof(int));
    for (i = 0; i < gsize; ++i) {
        displs[i] = i * stride;
        rcounts[i] = 100;
    }
    CHECK_MPI(MPI_Gatherv(sendarray, 100, MPI_INT, rbuf, rcounts, displs, MPI_INT, root, comm));
    if (rank == root)
        for (int r = 0; r < gsize; ++r) {
            for (i = 0; i < 100; ++i)
                CHECKF(rbuf[r * stride + i] == seed4_value(r, 0, i), "rbuf[%d] = %d", r * stride + i,
                       rbuf[r * stride + i]);
            seed4_check_untouched(rbuf, (long)r * stride + 100, stride - 100);
        }
    free(rcounts);
    free(displs);
    free(rbuf);
    MPI_Finalize();
    return 0;
}
