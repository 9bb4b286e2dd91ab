/*
 * alltoall_trunc.c: MPI_Alltoall where every rank sends more than the
 * others expect, under MPI_ERRORS_RETURN: every rank gets MPI_ERR_TRUNCATE,
 * for blocks small enough for shmpi's shared-memory Alltoall and for send
 * blocks that are not (their senders publish only their size), and a
 * correct Alltoall on the same communicator afterwards delivers every block.
 */
#include "coll_test.h"

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    const int rank = world_rank();
    const int size = world_size();
    int *send = check_malloc(sizeof(int) * 8192 * (size_t)size);
    int *recv = check_malloc(sizeof(int) * 8192 * (size_t)size);
    for (int i = 0; i < 8192 * size; ++i)
        send[i] = -1;
    errors_return(MPI_COMM_WORLD);
    /* Eight ints sent per block, four expected. */
    CHECK_CLASS(MPI_Alltoall(send, 8, MPI_INT, recv, 4, MPI_INT, MPI_COMM_WORLD), MPI_ERR_TRUNCATE);
    /* 32 KiB sent per block, 16 bytes expected. */
    CHECK_CLASS(MPI_Alltoall(send, 8192, MPI_INT, recv, 4, MPI_INT, MPI_COMM_WORLD), MPI_ERR_TRUNCATE);
    /* Then a correct one: block (i -> j) holds i * 1000 + 4 * j + k. */
    for (int j = 0; j < size; ++j)
        for (int k = 0; k < 4; ++k)
            send[4 * j + k] = rank * 1000 + 4 * j + k;
    CHECK_MPI(MPI_Alltoall(send, 4, MPI_INT, recv, 4, MPI_INT, MPI_COMM_WORLD));
    for (int i = 0; i < size; ++i)
        for (int k = 0; k < 4; ++k)
            CHECKF(recv[4 * i + k] == i * 1000 + 4 * rank + k, "block from rank %d, int %d: %d", i, k,
                   recv[4 * i + k]);
    free(send);
    free(recv);
    MPI_Finalize();
    return 0;
}
