/* Seed 004, example 4.4: as 4.3, received as one element of a contiguous
 * type of 100 ints per process: the types match by signature. */
#include "seed4.h"

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm comm = MPI_COMM_WORLD;
    int gsize, sendarray[100];
    int root = 0, *rbuf;
    MPI_Datatype rtype;
    MPI_Comm_size(comm, &gsize);
    const int rank = world_rank();
    for (int i = 0; i < 100; ++i)
        sendarray[i] = seed4_value(rank, 0, i);
    CHECK_MPI(MPI_Type_contiguous(100, MPI_INT, &rtype));
    CHECK_MPI(MPI_Type_commit(&rtype));
    rbuf = seed4_rbuf((long)gsize * 100);
    CHECK_MPI(MPI_Gather(sendarray, 100, MPI_INT, rbuf, 1, rtype, root, comm));
    if (rank == root)
        for (int r = 0; r < gsize; ++r)
            for (int i = 0; i < 100; ++i)
                CHECKF(rbuf[r * 100 + i] == seed4_value(r, 0, i), "rbuf[%d] = %d", r * 100 + i, rbuf[r * 100 + i]);
    CHECK_MPI(MPI_Type_free(&rtype));
    free(rbuf);
    MPI_Finalize();
    return 0;
}
