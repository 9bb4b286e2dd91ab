/*
 * allgather.c: MPI_Allgather and MPI_Allgatherv at every size of the test
 * plan (the size of each rank's block; at 4 MiB the block is 4 MiB divided
 * by the rank count, to bound memory), out of place and with MPI_IN_PLACE,
 * on MPI_COMM_WORLD and MPI_COMM_SELF, with count 0.  Allgatherv gives rank
 * r bytes >> (r % 3) and lays the blocks out in reverse order with gaps.
 */
#include "coll_test.h"

#define GAP_BYTE 0x3c

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    const int rank = world_rank();
    const int size = world_size();
    const size_t max = coll_buf_bytes();
    unsigned char *send = check_malloc(max);
    unsigned char *recv = check_malloc((size_t)size * (max + 16) + COLL_GUARD);
    int *counts = check_malloc(sizeof(int) * (size_t)size);
    int *displs = check_malloc(sizeof(int) * (size_t)size);

    FOR_EACH_SIZE(size_bytes) {
        const size_t bytes = size_bytes > 65536 ? size_bytes / (size_t)size : size_bytes;
        for (int in_place = 0; in_place <= 1; ++in_place) {
            const uint64_t seed = size_bytes * 17 + (uint64_t)in_place;

            /* ---- MPI_Allgather ---- */
            pattern_fill(send, bytes, rank, seed);
            memset(recv, 0xee, (size_t)size * bytes);
            if (in_place)
                pattern_fill(recv + (size_t)rank * bytes, bytes, rank, seed);
            guard_set(recv, (size_t)size * bytes);
            CHECK_MPI(MPI_Allgather(in_place ? MPI_IN_PLACE : send, (int)bytes, MPI_BYTE, recv, (int)bytes,
                                    MPI_BYTE, MPI_COMM_WORLD));
            for (int r = 0; r < size; ++r)
                CHECK_PATTERN(recv + (size_t)r * bytes, bytes, r, seed);
            CHECK_GUARD(recv, (size_t)size * bytes);

            /* ---- MPI_Allgatherv ---- */
            size_t at = 0;
            for (int r = size - 1; r >= 0; --r) {
                counts[r] = (int)(bytes >> (r % 3));
                displs[r] = (int)at;
                at += (size_t)counts[r] + 16;
            }
            const size_t mine = bytes >> (rank % 3);
            pattern_fill(send, mine, rank, seed + 1);
            memset(recv, GAP_BYTE, at);
            if (in_place)
                pattern_fill(recv + displs[rank], mine, rank, seed + 1);
            guard_set(recv, at);
            CHECK_MPI(MPI_Allgatherv(in_place ? MPI_IN_PLACE : send, (int)mine, MPI_BYTE, recv, counts, displs,
                                     MPI_BYTE, MPI_COMM_WORLD));
            for (int r = 0; r < size; ++r) {
                CHECK_PATTERN(recv + displs[r], (size_t)counts[r], r, seed + 1);
                for (int g = 0; g < 16; ++g)
                    CHECKF(recv[displs[r] + counts[r] + g] == GAP_BYTE,
                           "gap byte %d after rank %d's block was written", g, r);
            }
            CHECK_GUARD(recv, at);
        }
    }

    {
        long mine = 1000L * rank - 3;
        long *all = check_malloc(sizeof(long) * (size_t)size);
        CHECK_MPI(MPI_Allgather(&mine, 1, MPI_LONG, all, 1, MPI_LONG, MPI_COMM_WORLD));
        for (int r = 0; r < size; ++r)
            CHECK(all[r] == 1000L * r - 3);
        free(all);
    }

    pattern_fill(send, 100, rank, 3);
    CHECK_MPI(MPI_Allgather(send, 100, MPI_BYTE, recv, 100, MPI_BYTE, MPI_COMM_SELF));
    CHECK_PATTERN(recv, 100, rank, 3);
    CHECK_MPI(MPI_Allgather(NULL, 0, MPI_INT, NULL, 0, MPI_INT, MPI_COMM_WORLD));

    free(send);
    free(recv);
    free(counts);
    free(displs);
    MPI_Finalize();
    return 0;
}
