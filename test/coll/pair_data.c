/*
 * pair_data.c: large exchanges beside small blocks whose bytes look like a
 * library's bookkeeping.  Rank 0 receives contiguously and the others do
 * not (or send it only a few bytes), so an implementation that lets two
 * ranks write each other's blocks hears an offer from one side only; the
 * other side's small data, now or from an earlier call, must never pass
 * for one.
 *
 *   A. Alltoallv: rank 0 sends 256 KiB to every other rank, which sends it
 *      8 bytes back.  In the program's call i (counting from 0) those 8
 *      bytes hold (i + i mod 64) * 2^24:
 *      shmpi numbers its calls 2^24 apart, and a 2-rank Alltoallv once took
 *      such bytes, inline beside their table, for the other side's offer
 *      and hung.
 *   B. Small Allgathers whose words hold call numbers 64 calls ahead (shmpi
 *      reuses a rank's line every 64 calls), between an Alltoall of 64 KiB
 *      blocks and an Allgather of 1 MiB blocks whose receive type leaves a
 *      gap after every byte on every rank but 0.  A stale line once passed
 *      for an offer there: a hang, and a write to a bad address.
 *
 * Every received byte is checked.  With two ranks that have a CPU each,
 * shmpi takes the pair writes; elsewhere the same exchanges go other ways
 * and must be just as right.
 */
#include "coll_test.h"

enum { kBig = 256 * 1024, kBlock = 64 * 1024, kGather = 1024 * 1024 };

/* The collective calls on MPI_COMM_WORLD so far: this program makes no
 * others, so it is the library's count less a constant. */
static int calls;

static unsigned char byte_of(int from, int to, size_t i, int call)
{
    return (unsigned char)(from * 131 + to * 17 + (int)(i % 251) + call * 7);
}

/* A: `count` Alltoallv calls. */
static void small_beside_large(int rank, int size, int count)
{
    unsigned char *send = check_malloc((size_t)kBig * (size_t)size);
    unsigned char *recv = check_malloc((size_t)kBig * (size_t)size);
    int *sc = check_malloc(sizeof(int) * (size_t)size), *sd = check_malloc(sizeof(int) * (size_t)size);
    int *rc = check_malloc(sizeof(int) * (size_t)size), *rd = check_malloc(sizeof(int) * (size_t)size);
    for (int r = 0; r < size; ++r) {
        sd[r] = rd[r] = r * kBig;
        /* Rank 0 sends kBig to each other rank and gets 8 bytes back. */
        sc[r] = rank == 0 ? (r == 0 ? 0 : kBig) : (r == 0 ? 8 : 0);
        rc[r] = rank == 0 ? (r == 0 ? 0 : 8) : (r == 0 ? kBig : 0);
    }
    for (int k = 0; k < count; ++k, ++calls) {
        const int call = calls;
        const uint64_t word = ((uint64_t)call + (uint64_t)(call % 64)) << 24;
        for (int r = 0; r < size; ++r) {
            unsigned char *at = send + (size_t)r * kBig;
            if (rank == 0) {
                for (size_t i = 0; i < (size_t)sc[r]; ++i)
                    at[i] = byte_of(rank, r, i, call);
            } else if (sc[r] == 8) {
                memcpy(at, &word, 8);
            }
        }
        memset(recv, 0xA5, (size_t)kBig * (size_t)size);
        CHECK_MPI(MPI_Alltoallv(send, sc, sd, MPI_BYTE, recv, rc, rd, MPI_BYTE, MPI_COMM_WORLD));
        for (int r = 0; r < size; ++r) {
            const unsigned char *at = recv + (size_t)r * kBig;
            if (rank == 0 && r != 0) {
                uint64_t got;
                memcpy(&got, at, 8);
                CHECKF(got == word, "Alltoallv call %d: 8 bytes from rank %d read %#llx, sent %#llx", call, r,
                       (unsigned long long)got, (unsigned long long)word);
                CHECKF(at[8] == 0xA5, "Alltoallv call %d: byte 8 from rank %d written", call, r);
            } else if (rank != 0 && r == 0) {
                for (size_t i = 0; i < kBig; ++i)
                    CHECKF(at[i] == byte_of(0, rank, i, call), "Alltoallv call %d: byte %zu from rank 0 is %u",
                           call, i, at[i]);
            } else {
                CHECKF(at[0] == 0xA5, "Alltoallv call %d: an empty block from rank %d written", call, r);
            }
        }
    }
    free(send);
    free(recv);
    free(sc);
    free(sd);
    free(rc);
    free(rd);
}

/* Every rank's `block` bytes (counting from `from`'s block for it) at a
 * stride of 2 on ranks other than 0, densely on rank 0. */
static void check_gapped(const unsigned char *recv, int rank, int from, size_t block, int call, int to_of,
                         const char *what)
{
    for (size_t i = 0; i < block; ++i) {
        const unsigned char want = byte_of(from, to_of, i, call);
        const unsigned char got = rank == 0 ? recv[i] : recv[2 * i];
        CHECKF(got == want, "%s call %d: byte %zu from rank %d is %u, sent %u", what, call, i, from, got, want);
        if (rank != 0)
            CHECKF(recv[2 * i + 1] == 0xA5, "%s call %d: the gap after byte %zu from rank %d written", what,
                   call, i, from);
    }
}

/* An Alltoall of kBlock bytes a block (`alltoall`) or an Allgather of
 * kGather, rank 0 receiving densely and the others into `gapped`. */
static void large_call(int alltoall, int rank, int size, int call, unsigned char *send, unsigned char *recv,
                       MPI_Datatype gapped)
{
    const size_t block = alltoall ? kBlock : kGather;
    for (int r = 0; r < (alltoall ? size : 1); ++r)
        for (size_t i = 0; i < block; ++i)
            send[(size_t)r * block + i] = byte_of(rank, r, i, call);
    memset(recv, 0xA5, 2 * block * (size_t)size);
    const MPI_Datatype type = rank == 0 ? MPI_BYTE : gapped;
    const int count = rank == 0 ? (int)block : 1;
    if (alltoall)
        CHECK_MPI(MPI_Alltoall(send, (int)block, MPI_BYTE, recv, count, type, MPI_COMM_WORLD));
    else
        CHECK_MPI(MPI_Allgather(send, (int)block, MPI_BYTE, recv, count, type, MPI_COMM_WORLD));
    for (int r = 0; r < size; ++r)
        check_gapped(recv + (size_t)r * (rank == 0 ? 1 : 2) * block, rank, r, block, call, alltoall ? rank : 0,
                     alltoall ? "Alltoall" : "Allgather");
}

/* `bytes` bytes, each followed by a gap of one, as one element. */
static MPI_Datatype gapped_bytes(int bytes)
{
    MPI_Datatype gaps, gapped;
    CHECK_MPI(MPI_Type_vector(bytes, 1, 2, MPI_BYTE, &gaps));
    CHECK_MPI(MPI_Type_create_resized(gaps, 0, 2 * (MPI_Aint)bytes, &gapped));
    CHECK_MPI(MPI_Type_commit(&gapped));
    CHECK_MPI(MPI_Type_free(&gaps));
    return gapped;
}

/* B: `rounds` rounds of small, small, Alltoall, small, small, Allgather. */
static void large_after_small(int rank, int size, int rounds)
{
    unsigned char *send = check_malloc((size_t)kGather * (size_t)size);
    unsigned char *recv = check_malloc(2 * (size_t)kGather * (size_t)size);
    MPI_Datatype block_gaps = gapped_bytes(kBlock), gather_gaps = gapped_bytes(kGather);
    uint64_t *all = check_malloc(3 * sizeof(uint64_t) * (size_t)size);
    for (int round = 0; round < rounds; ++round) {
        for (int pos = 0; pos < 6; ++pos, ++calls) {
            const int call = calls;
            if (pos == 2 || pos == 5) {
                large_call(pos == 2, rank, size, call, send, recv, pos == 2 ? block_gaps : gather_gaps);
            } else {
                /* The call 64 ahead is a large one (64 = 4 mod 6), whose
                 * number in shmpi's count is ours plus some small d: every
                 * d below 64 has its round. */
                const uint64_t ahead = ((uint64_t)call + 64 + (uint64_t)(round % 64)) << 24;
                uint64_t mine[3] = {ahead, ahead, ahead};
                CHECK_MPI(MPI_Allgather(mine, 3, MPI_UINT64_T, all, 3, MPI_UINT64_T, MPI_COMM_WORLD));
                for (int r = 0; r < 3 * size; ++r)
                    CHECKF(all[r] == ahead, "small Allgather call %d: word %d is %#llx", call, r,
                           (unsigned long long)all[r]);
            }
        }
    }
    CHECK_MPI(MPI_Type_free(&block_gaps));
    CHECK_MPI(MPI_Type_free(&gather_gaps));
    free(all);
    free(send);
    free(recv);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    const int rank = world_rank();
    const int size = world_size();
    small_beside_large(rank, size, 128);
    /* 11 rounds before the first large call has a small one 64 calls back,
     * then 64 rounds for every offset. */
    large_after_small(rank, size, 11 + 64);
    MPI_Finalize();
    return 0;
}
