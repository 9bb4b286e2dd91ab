/*
 * p2p_bsend_space: the buffer of MPI_Bsend, sized exactly by the standard's
 * rule, suffices however its messages complete (MPI-3.1 3.6.1: each message
 * pending at once takes its MPI_Pack_size plus MPI_BSEND_OVERHEAD).
 *
 * Ranks form a ring; each sends to the next and receives from the previous.
 *   1. Out of order: a buffer for two 1 MiB messages and BATCH small ones.
 *      Each round buffers a large message first (longer than any eager
 *      limit, so its send stays pending until the successor receives it),
 *      then BATCHES batches of BATCH small ones of mixed sizes, some by
 *      MPI_Ibsend with MPI_Request_free, and after the first batch the
 *      second large message.  The successor receives and acknowledges each
 *      batch before the next is sent, and receives the large messages last.
 *      So the space of the small ones, complete before the large ones, must
 *      be taken back and reused while the large ones hold theirs: a buffer
 *      managed as a queue that frees only from its oldest end would run out
 *      in the second batch, and one that frees only from its ends, since
 *      the first batch lies between the two large messages, too.
 *   2. Burst: a buffer for exactly BURST messages of mixed sizes, all
 *      buffered before the successor receives any.
 *   3. Every message arrives intact (a pattern of sender, round and index):
 *      space given to two pending messages at once would show here.
 * MPI_Buffer_detach hands back the address and size that were attached.
 */
#include "check.h"

enum { TAG_LARGE = 1, TAG_LARGE2 = 2, TAG_SMALL = 3, TAG_ACK = 4, TAG_BURST = 5 };
enum { LARGE = 1 << 20, SMALL = 200, TINY = 8, BATCH = 64, BATCHES = 16, ROUNDS = 3, BURST = 2000 };

/* Message k's size: mixed, each a multiple of 8 (MPICH rounds the space it
 * takes up to 8 bytes). */
static int small_bytes(int k)
{
    return k % 3 == 2 ? TINY : SMALL;
}

static int pack_size(int bytes)
{
    int size = 0;
    CHECK_MPI(MPI_Pack_size(bytes, MPI_BYTE, MPI_COMM_WORLD, &size));
    return size;
}

/* Waits until the successor says it has received what we sent it, and says
 * so to the predecessor: then our messages are no longer pending. */
static void acknowledge(int next, int prev)
{
    MPI_Request ack;
    CHECK_MPI(MPI_Isend(NULL, 0, MPI_BYTE, prev, TAG_ACK, MPI_COMM_WORLD, &ack));
    CHECK_MPI(MPI_Recv(NULL, 0, MPI_BYTE, next, TAG_ACK, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    CHECK_MPI(MPI_Wait(&ack, MPI_STATUS_IGNORE));
}

static void detach_checked(void *pool, int size)
{
    void *back = NULL;
    int back_size = 0;
    CHECK_MPI(MPI_Buffer_detach(&back, &back_size));
    CHECKF(back == pool && back_size == size, "detach gave %p and %d, attached %p and %d", back,
           back_size, pool, size);
}

static void out_of_order(int rank, int next, int prev)
{
    /* The rule, for what may be pending at once: the two large messages
     * and one batch of small ones. */
    int size = 2 * (pack_size(LARGE) + MPI_BSEND_OVERHEAD);
    for (int k = 0; k < BATCH; ++k)
        size += pack_size(small_bytes(k)) + MPI_BSEND_OVERHEAD;
    char *pool = check_malloc((size_t)size);
    CHECK_MPI(MPI_Buffer_attach(pool, size));

    unsigned char *large = check_malloc(LARGE);
    unsigned char *large2 = check_malloc(LARGE);
    unsigned char *small[BATCH];
    for (int k = 0; k < BATCH; ++k)
        small[k] = check_malloc(SMALL);
    unsigned char *in = check_malloc(LARGE);

    for (int round = 0; round < ROUNDS; ++round) {
        const uint64_t large_seed = (uint64_t)round;
        pattern_fill(large, LARGE, rank, large_seed);
        CHECK_MPI(MPI_Bsend(large, LARGE, MPI_BYTE, next, TAG_LARGE, MPI_COMM_WORLD));
        /* Buffered: ours to overwrite at once. */
        memset(large, 0xee, LARGE);
        for (int b = 0; b < BATCHES; ++b) {
            for (int k = 0; k < BATCH; ++k) {
                const uint64_t seed = 1000 + ((uint64_t)round * BATCHES + (uint64_t)b) * BATCH + (uint64_t)k;
                pattern_fill(small[k], (size_t)small_bytes(k), rank, seed);
                if (k % 4 == 1) {
                    /* Not overwritten before the successor's acknowledgement,
                     * which comes after the send is complete. */
                    MPI_Request r;
                    CHECK_MPI(MPI_Ibsend(small[k], small_bytes(k), MPI_BYTE, next, TAG_SMALL,
                                         MPI_COMM_WORLD, &r));
                    CHECK_MPI(MPI_Request_free(&r));
                } else {
                    CHECK_MPI(MPI_Bsend(small[k], small_bytes(k), MPI_BYTE, next, TAG_SMALL,
                                        MPI_COMM_WORLD));
                    if (k % 4 == 0)
                        memset(small[k], 0xee, (size_t)small_bytes(k));
                }
            }
            for (int k = 0; k < BATCH; ++k) {
                const uint64_t seed = 1000 + ((uint64_t)round * BATCHES + (uint64_t)b) * BATCH + (uint64_t)k;
                MPI_Status st;
                CHECK_MPI(MPI_Recv(in, SMALL, MPI_BYTE, prev, TAG_SMALL, MPI_COMM_WORLD, &st));
                int count = -1;
                CHECK_MPI(MPI_Get_count(&st, MPI_BYTE, &count));
                CHECKF(count == small_bytes(k), "round %d batch %d message %d: %d bytes, sent %d",
                       round, b, k, count, small_bytes(k));
                CHECK_PATTERN(in, (size_t)count, prev, seed);
            }
            if (b == 0) {
                pattern_fill(large2, LARGE, rank, large_seed + 100);
                CHECK_MPI(MPI_Bsend(large2, LARGE, MPI_BYTE, next, TAG_LARGE2, MPI_COMM_WORLD));
                memset(large2, 0xee, LARGE);
            }
            acknowledge(next, prev);
        }
        CHECK_MPI(MPI_Recv(in, LARGE, MPI_BYTE, prev, TAG_LARGE, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        CHECK_PATTERN(in, LARGE, prev, large_seed);
        CHECK_MPI(MPI_Recv(in, LARGE, MPI_BYTE, prev, TAG_LARGE2, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        CHECK_PATTERN(in, LARGE, prev, large_seed + 100);
        acknowledge(next, prev);
    }
    detach_checked(pool, size);
    free(pool);
    free(large);
    free(large2);
    for (int k = 0; k < BATCH; ++k)
        free(small[k]);
    free(in);
}

static void burst(int rank, int next, int prev)
{
    int size = 0;
    for (int k = 0; k < BURST; ++k)
        size += pack_size(small_bytes(k)) + MPI_BSEND_OVERHEAD;
    char *pool = check_malloc((size_t)size);
    CHECK_MPI(MPI_Buffer_attach(pool, size));
    unsigned char *out = check_malloc((size_t)BURST * SMALL);
    for (int k = 0; k < BURST; ++k) {
        unsigned char *m = out + (size_t)k * SMALL;
        pattern_fill(m, (size_t)small_bytes(k), rank, 5000 + (uint64_t)k);
        if (k % 4 == 3) {
            MPI_Request r;
            CHECK_MPI(MPI_Ibsend(m, small_bytes(k), MPI_BYTE, next, TAG_BURST, MPI_COMM_WORLD, &r));
            CHECK_MPI(MPI_Request_free(&r));
        } else {
            CHECK_MPI(MPI_Bsend(m, small_bytes(k), MPI_BYTE, next, TAG_BURST, MPI_COMM_WORLD));
        }
    }
    unsigned char in[SMALL];
    for (int k = 0; k < BURST; ++k) {
        MPI_Status st;
        CHECK_MPI(MPI_Recv(in, SMALL, MPI_BYTE, prev, TAG_BURST, MPI_COMM_WORLD, &st));
        int count = -1;
        CHECK_MPI(MPI_Get_count(&st, MPI_BYTE, &count));
        CHECKF(count == small_bytes(k), "burst message %d: %d bytes, sent %d", k, count,
               small_bytes(k));
        CHECK_PATTERN(in, (size_t)count, prev, 5000 + (uint64_t)k);
    }
    acknowledge(next, prev);
    detach_checked(pool, size);
    free(pool);
    free(out);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    const int rank = world_rank();
    int next = 0;
    int prev = 0;
    ring_neighbours(&next, &prev);
    out_of_order(rank, next, prev);
    burst(rank, next, prev);
    MPI_Finalize();
    return 0;
}
