/*
 * p2p_huge: one message of more than 1 GiB arrives intact.
 *
 * 1. Rank 0 fills 1.1 GiB with a pattern keyed by (rank, index) and sends it
 *    to rank 1 as MPI_UINT64_T elements (the count stays below INT_MAX).
 * 2. Rank 1 receives it, checks MPI_Get_count and every byte, and answers
 *    with one byte, so rank 0 knows the receive finished before it leaves.
 * Other ranks (if any) take no part.
 */
#include "check.h"

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    const int rank = world_rank();
    const size_t bytes = (size_t)1100 << 20;
    const int count = (int)(bytes / sizeof(uint64_t));
    CHECK(world_size() >= 2);

    if (rank == 0) {
        /* 1. */
        unsigned char *buf = check_malloc(bytes);
        pattern_fill(buf, bytes, 0, 1100);
        CHECK_MPI(MPI_Send(buf, count, MPI_UINT64_T, 1, 11, MPI_COMM_WORLD));
        unsigned char ack = 0;
        CHECK_MPI(MPI_Recv(&ack, 1, MPI_BYTE, 1, 12, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        CHECKF(ack == 1, "rank 1 answered %d", ack);
        free(buf);
    } else if (rank == 1) {
        /* 2. */
        unsigned char *buf = check_malloc(bytes);
        MPI_Status st;
        CHECK_MPI(MPI_Recv(buf, count, MPI_UINT64_T, 0, 11, MPI_COMM_WORLD, &st));
        int got = -1;
        CHECK_MPI(MPI_Get_count(&st, MPI_UINT64_T, &got));
        CHECKF(got == count, "MPI_Get_count says %d elements, sent %d", got, count);
        const size_t bad = pattern_mismatch(buf, bytes, 0, 1100);
        CHECKF(bad == bytes, "byte %zu of the 1.1 GiB message is wrong", bad);
        unsigned char ack = 1;
        CHECK_MPI(MPI_Send(&ack, 1, MPI_BYTE, 0, 12, MPI_COMM_WORLD));
        free(buf);
    }
    MPI_Finalize();
    return 0;
}
