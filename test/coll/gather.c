/*
 * gather.c: MPI_Gather and MPI_Gatherv at every size of the test plan to
 * every root, out of place and with MPI_IN_PLACE at the root, on
 * MPI_COMM_WORLD and MPI_COMM_SELF, with count 0.  Gatherv gives rank r a
 * different count (bytes >> (r % 3)) and places the blocks in reverse rank
 * order with gaps, which must stay untouched.
 */
#include "coll_test.h"

#define GAP_BYTE 0x3c

/* MPI_Gather of `bytes` of each rank's pattern (seed `seed`) as bytes to
 * `root`, in place there when `ip`; the root checks every block and the
 * guard after them. */
static void gather_bytes(unsigned char *send, unsigned char *recv, size_t bytes, int root, int ip, uint64_t seed,
                         int rank, int size)
{
    pattern_fill(send, bytes, rank, seed);
    /* (recvbuf matters at the root only: the others leave theirs alone.) */
    if (rank == root) {
        memset(recv, 0xee, (size_t)size * bytes);
        if (ip)
            pattern_fill(recv + (size_t)root * bytes, bytes, root, seed);
        guard_set(recv, (size_t)size * bytes);
    }
    CHECK_MPI(MPI_Gather(ip ? MPI_IN_PLACE : send, (int)bytes, MPI_BYTE, recv, (int)bytes, MPI_BYTE, root,
                         MPI_COMM_WORLD));
    if (rank == root) {
        for (int r = 0; r < size; ++r)
            CHECK_PATTERN(recv + (size_t)r * bytes, bytes, r, seed);
        CHECK_GUARD(recv, (size_t)size * bytes);
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    const int rank = world_rank();
    const int size = world_size();
    const size_t max = coll_buf_bytes();
    unsigned char *send = check_malloc(max);
    /* Gatherv's layout needs room for every block plus a gap each. */
    const size_t rbytes = (size_t)size * (max + 16) + COLL_GUARD;
    unsigned char *recv = check_malloc(rbytes);
    int *counts = check_malloc(sizeof(int) * (size_t)size);
    int *displs = check_malloc(sizeof(int) * (size_t)size);

    FOR_EACH_SIZE(bytes) {
        FOR_EACH_ROOT(root, size, bytes) {
            for (int in_place = 0; in_place <= 1; ++in_place) {
                const uint64_t seed = bytes * 11 + (uint64_t)root * 2 + (uint64_t)in_place;
                const int ip = in_place && rank == root;

                /* ---- MPI_Gather ---- */
                gather_bytes(send, recv, bytes, root, ip, seed, rank, size);

                /* ---- MPI_Gatherv: rank r sends bytes >> (r % 3); blocks in
                 * reverse rank order, 16-byte gaps between them ---- */
                size_t at = 0;
                for (int r = size - 1; r >= 0; --r) {
                    counts[r] = (int)(bytes >> (r % 3));
                    displs[r] = (int)at;
                    at += (size_t)counts[r] + 16;
                }
                const size_t mine = bytes >> (rank % 3);
                pattern_fill(send, mine, rank, seed + 1);
                if (rank == root) {
                    memset(recv, GAP_BYTE, at);
                    if (ip)
                        pattern_fill(recv + displs[root], (size_t)counts[root], root, seed + 1);
                    guard_set(recv, at);
                }
                CHECK_MPI(MPI_Gatherv(ip ? MPI_IN_PLACE : send, (int)mine, MPI_BYTE, recv, counts, displs,
                                      MPI_BYTE, root, MPI_COMM_WORLD));
                if (rank == root) {
                    for (int r = 0; r < size; ++r) {
                        CHECK_PATTERN(recv + displs[r], (size_t)counts[r], r, seed + 1);
                        for (int g = 0; g < 16; ++g)
                            CHECKF(recv[displs[r] + counts[r] + g] == GAP_BYTE,
                                   "gap byte %d after rank %d's block was written", g, r);
                    }
                    CHECK_GUARD(recv, at);
                }
            }
        }
    }

    /* Blocks between the plan's sizes, back to back, roots and in place
     * changing: where a block outgrows shmpi's collective cells but not its
     * wide cells (ranks outnumbering CPUs), the members leave it there and
     * return, and the next call reuses those cells; one byte more than
     * 1 MiB stays in the member's buffer. */
    static const size_t between[] = {65537, 300000, 1048576, 1048577};
    for (int rep = 0; rep < 3; ++rep) {
        for (size_t i = 0; i < sizeof between / sizeof between[0]; ++i) {
            const size_t bytes = between[i];
            if (bytes > coll_max_bytes())
                continue;
            const int root = (rep + (int)i) % size;
            gather_bytes(send, recv, bytes, root, (rep + (int)i) % 3 == 1 && rank == root, bytes * 5 + (uint64_t)rep,
                         rank, size);
        }
    }

    /* Ints, so that an element is more than a byte. */
    {
        int mine[3] = {rank, -rank, 7 * rank};
        int *all = check_malloc(sizeof(int) * 3 * (size_t)size);
        CHECK_MPI(MPI_Gather(mine, 3, MPI_INT, all, 3, MPI_INT, size - 1, MPI_COMM_WORLD));
        if (rank == size - 1)
            for (int r = 0; r < size; ++r)
                CHECK(all[3 * r] == r && all[3 * r + 1] == -r && all[3 * r + 2] == 7 * r);
        free(all);
    }

    /* MPI_COMM_SELF and count 0. */
    pattern_fill(send, 100, rank, 3);
    CHECK_MPI(MPI_Gather(send, 100, MPI_BYTE, recv, 100, MPI_BYTE, 0, MPI_COMM_SELF));
    CHECK_PATTERN(recv, 100, rank, 3);
    CHECK_MPI(MPI_Gather(NULL, 0, MPI_INT, NULL, 0, MPI_INT, 0, MPI_COMM_WORLD));

    free(send);
    free(recv);
    free(counts);
    free(displs);
    MPI_Finalize();
    return 0;
}
