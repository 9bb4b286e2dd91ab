/*
 * scatter.c: MPI_Scatter and MPI_Scatterv at every size of the test plan
 * from every root, out of place and with MPI_IN_PLACE at the root, on
 * MPI_COMM_WORLD and MPI_COMM_SELF, with count 0.  Scatterv sends rank r
 * bytes >> (r % 3) from blocks laid out in reverse rank order with gaps.
 */
#include "coll_test.h"

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    const int rank = world_rank();
    const int size = world_size();
    const size_t max = coll_buf_bytes();
    unsigned char *send = check_malloc((size_t)size * (max + 16));
    unsigned char *recv = check_malloc(max + COLL_GUARD);
    int *counts = check_malloc(sizeof(int) * (size_t)size);
    int *displs = check_malloc(sizeof(int) * (size_t)size);

    FOR_EACH_SIZE(bytes) {
        FOR_EACH_ROOT(root, size, bytes) {
            for (int in_place = 0; in_place <= 1; ++in_place) {
                const uint64_t seed = bytes * 13 + (uint64_t)root * 2 + (uint64_t)in_place;
                const int ip = in_place && rank == root;

                /* ---- MPI_Scatter: block r carries the pattern of r ---- */
                if (rank == root)
                    for (int r = 0; r < size; ++r)
                        pattern_fill(send + (size_t)r * bytes, bytes, r, seed);
                memset(recv, 0xee, bytes);
                guard_set(recv, bytes);
                CHECK_MPI(MPI_Scatter(send, (int)bytes, MPI_BYTE, ip ? MPI_IN_PLACE : recv, (int)bytes,
                                      MPI_BYTE, root, MPI_COMM_WORLD));
                if (ip) {
                    for (int r = 0; r < size; ++r)
                        CHECK_PATTERN(send + (size_t)r * bytes, bytes, r, seed);
                    for (size_t i = 0; i < bytes; ++i)
                        CHECKF(recv[i] == 0xee, "in place: the root's recvbuf was written");
                } else {
                    CHECK_PATTERN(recv, bytes, rank, seed);
                }
                CHECK_GUARD(recv, bytes);

                /* ---- MPI_Scatterv ---- */
                size_t at = 0;
                for (int r = size - 1; r >= 0; --r) {
                    counts[r] = (int)(bytes >> (r % 3));
                    displs[r] = (int)at;
                    at += (size_t)counts[r] + 16;
                }
                if (rank == root)
                    for (int r = 0; r < size; ++r)
                        pattern_fill(send + displs[r], (size_t)counts[r], r, seed + 1);
                const size_t mine = bytes >> (rank % 3);
                memset(recv, 0xee, mine);
                guard_set(recv, mine);
                CHECK_MPI(MPI_Scatterv(send, counts, displs, MPI_BYTE, ip ? MPI_IN_PLACE : recv, (int)mine,
                                       MPI_BYTE, root, MPI_COMM_WORLD));
                if (!ip)
                    CHECK_PATTERN(recv, mine, rank, seed + 1);
                CHECK_GUARD(recv, mine);
            }
        }
    }

    /* Doubles from the last rank. */
    {
        double *all = check_malloc(sizeof(double) * 2 * (size_t)size);
        double mine[2] = {0, 0};
        for (int r = 0; r < size; ++r) {
            all[2 * r] = r + 0.25;
            all[2 * r + 1] = -r - 0.5;
        }
        CHECK_MPI(MPI_Scatter(all, 2, MPI_DOUBLE, mine, 2, MPI_DOUBLE, size - 1, MPI_COMM_WORLD));
        CHECK(mine[0] == rank + 0.25 && mine[1] == -rank - 0.5);
        free(all);
    }

    pattern_fill(send, 100, rank, 3);
    CHECK_MPI(MPI_Scatter(send, 100, MPI_BYTE, recv, 100, MPI_BYTE, 0, MPI_COMM_SELF));
    CHECK_PATTERN(recv, 100, rank, 3);
    CHECK_MPI(MPI_Scatter(NULL, 0, MPI_INT, NULL, 0, MPI_INT, 0, MPI_COMM_WORLD));

    free(send);
    free(recv);
    free(counts);
    free(displs);
    MPI_Finalize();
    return 0;
}
