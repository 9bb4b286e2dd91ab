/*
 * alltoall.c: MPI_Alltoall and MPI_Alltoallv at every size of the test
 * plan (what each rank sends in all; each block is that divided by the rank
 * count, at least one byte when the size is not 0), out of place and with
 * MPI_IN_PLACE, on MPI_COMM_WORLD and MPI_COMM_SELF, with count 0.  Block
 * (i -> j) carries the pattern of sender i seeded with j.  Alltoallv sends
 * block + ((i + j) % 3) bytes from i to j, with the send and receive blocks
 * in reverse order.  Then Alltoalls of sizes between the plan's.
 */
#include "coll_test.h"

static uint64_t block_seed(uint64_t seed, int to) { return seed * 64 + (uint64_t)to; }

/* MPI_Alltoall of `block` bytes a block (in place when `in_place`); every
 * rank checks each block it received and the guard after them. */
static void alltoall_bytes(unsigned char *send, unsigned char *recv, size_t block, int in_place, uint64_t seed,
                           int rank, int size)
{
    unsigned char *out = in_place ? recv : send;
    for (int j = 0; j < size; ++j)
        pattern_fill(out + (size_t)j * block, block, rank, block_seed(seed, j));
    if (!in_place)
        memset(recv, 0xee, (size_t)size * block);
    guard_set(recv, (size_t)size * block);
    CHECK_MPI(MPI_Alltoall(in_place ? MPI_IN_PLACE : send, (int)block, MPI_BYTE, recv, (int)block, MPI_BYTE,
                           MPI_COMM_WORLD));
    for (int i = 0; i < size; ++i)
        CHECK_PATTERN(recv + (size_t)i * block, block, i, block_seed(seed, rank));
    CHECK_GUARD(recv, (size_t)size * block);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    const int rank = world_rank();
    const int size = world_size();
    const size_t max = coll_buf_bytes();
    const size_t room = max + (size_t)size * 16;
    unsigned char *send = check_malloc(room);
    unsigned char *recv = check_malloc(room + COLL_GUARD);
    int *scounts = check_malloc(sizeof(int) * (size_t)size);
    int *sdispls = check_malloc(sizeof(int) * (size_t)size);
    int *rcounts = check_malloc(sizeof(int) * (size_t)size);
    int *rdispls = check_malloc(sizeof(int) * (size_t)size);

    FOR_EACH_SIZE(total) {
        size_t block = total / (size_t)size;
        if (total > 0 && block == 0)
            block = 1;
        for (int in_place = 0; in_place <= 1; ++in_place) {
            const uint64_t seed = total * 19 + (uint64_t)in_place;

            /* ---- MPI_Alltoall ---- */
            alltoall_bytes(send, recv, block, in_place, seed, rank, size);

            /* ---- MPI_Alltoallv ---- */
            size_t sat = 0, rat = 0;
            for (int j = size - 1; j >= 0; --j) {
                scounts[j] = (int)(block + (size_t)((rank + j) % 3)) * (total > 0);
                sdispls[j] = (int)sat;
                sat += (size_t)scounts[j] + 8;
                rcounts[j] = (int)(block + (size_t)((j + rank) % 3)) * (total > 0);
                rdispls[j] = (int)rat;
                rat += (size_t)rcounts[j] + 8;
            }
            if (in_place) {
                /* The send data comes from recvbuf, described by the
                 * receive arguments. */
                for (int j = 0; j < size; ++j)
                    pattern_fill(recv + rdispls[j], (size_t)rcounts[j], rank, block_seed(seed + 1, j));
            } else {
                for (int j = 0; j < size; ++j)
                    pattern_fill(send + sdispls[j], (size_t)scounts[j], rank, block_seed(seed + 1, j));
                memset(recv, 0xee, rat);
            }
            guard_set(recv, rat);
            CHECK_MPI(MPI_Alltoallv(in_place ? MPI_IN_PLACE : send, scounts, sdispls, MPI_BYTE, recv, rcounts,
                                    rdispls, MPI_BYTE, MPI_COMM_WORLD));
            for (int i = 0; i < size; ++i)
                CHECK_PATTERN(recv + rdispls[i], (size_t)rcounts[i], i, block_seed(seed + 1, rank));
            CHECK_GUARD(recv, rat);
        }
    }

    /* Totals between the plan's sizes, back to back, in place every other
     * call: where a rank's blocks outgrow shmpi's collective cells but not
     * its wide cells (ranks outnumbering CPUs), they go there, and the next
     * call reuses those cells; 1088 KiB in all stays in the rank's
     * buffer. */
    static const size_t between[] = {65600, 300000, 1048576, 1114112};
    for (int rep = 0; rep < 3; ++rep) {
        for (size_t i = 0; i < sizeof between / sizeof between[0]; ++i) {
            if (between[i] > coll_max_bytes())
                continue;
            const size_t block = between[i] / (size_t)size;
            alltoall_bytes(send, recv, block, (rep + (int)i) % 2, between[i] * 3 + (uint64_t)rep, rank, size);
        }
    }

    {
        int *s = check_malloc(sizeof(int) * (size_t)size), *r = check_malloc(sizeof(int) * (size_t)size);
        for (int j = 0; j < size; ++j)
            s[j] = 100 * rank + j;
        CHECK_MPI(MPI_Alltoall(s, 1, MPI_INT, r, 1, MPI_INT, MPI_COMM_WORLD));
        for (int i = 0; i < size; ++i)
            CHECK(r[i] == 100 * i + rank);
        free(s);
        free(r);
    }

    pattern_fill(send, 100, rank, 3);
    CHECK_MPI(MPI_Alltoall(send, 100, MPI_BYTE, recv, 100, MPI_BYTE, MPI_COMM_SELF));
    CHECK_PATTERN(recv, 100, rank, 3);
    CHECK_MPI(MPI_Alltoall(NULL, 0, MPI_INT, NULL, 0, MPI_INT, MPI_COMM_WORLD));

    free(send);
    free(recv);
    free(scounts);
    free(sdispls);
    free(rcounts);
    free(rdispls);
    MPI_Finalize();
    return 0;
}
