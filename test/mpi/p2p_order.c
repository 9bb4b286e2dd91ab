/*
 * p2p_order: messages never overtake each other (MPI-3.1 3.5).
 *
 * 1. Pairs (0,1), (2,3), ...: the even rank sends NPAIR messages of mixed
 *    sizes (0 B to 1 MiB) on one tag, cycling through Send, Isend and Ssend;
 *    the odd rank receives them with a mix of Recv and windows of Irecv.
 *    Message i has a size and contents that depend on i, so a message that
 *    overtook another shows up as a wrong count or wrong bytes.
 * 2. Every rank but 0 sends NANY messages to rank 0, which receives them all
 *    with MPI_ANY_SOURCE: the messages of each sender still arrive in the
 *    order that sender sent them.
 */
#include "check.h"

enum {
    NPAIR = 240,   /* messages per pair in step 1 */
    NANY = 120,    /* messages per sender in step 2 */
    WINDOW = 8,    /* outstanding Isends / Irecvs */
    TAG_PAIR = 1,
    TAG_ANY = 2,
};

static const int pair_sizes[] = {0, 1, 3, 8, 100, 1000, 4096, 16384, 65536, 262144, 1 << 20};
static const int any_sizes[] = {0, 1, 8, 64, 512, 4096, 65536};
#define NELEMS(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* Deterministic per-(sender, seq) choice, known to both sides. */
static unsigned mix(int sender, int seq)
{
    unsigned x = (unsigned)seq * 2654435761u ^ (unsigned)(sender + 1) * 40503u;
    x ^= x >> 15;
    x *= 2246822519u;
    x ^= x >> 13;
    return x;
}

static int size_of(const int *table, int n, int sender, int seq)
{
    return table[mix(sender, seq) % (unsigned)n];
}

/* Sends `count` messages to `dest` on `tag`, sizes from `table`, contents
 * pattern (me, seed_base + seq); the send mode cycles Send, Isend, Ssend. */
static void send_sequence(int me, int dest, int tag, int count, const int *table, int ntable,
                          uint64_t seed_base)
{
    MPI_Request reqs[WINDOW];
    unsigned char *bufs[WINDOW];
    for (int w = 0; w < WINDOW; ++w) {
        reqs[w] = MPI_REQUEST_NULL;
        bufs[w] = NULL;
    }
    int slot = 0;
    for (int seq = 0; seq < count; ++seq) {
        int n = size_of(table, ntable, me, seq);
        int mode = (int)(mix(me, seq) >> 8) % 3;
        if (mode == 1) {
            /* Reuse the slot's buffer only after its Isend completed. */
            CHECK_MPI(MPI_Wait(&reqs[slot], MPI_STATUS_IGNORE));
            free(bufs[slot]);
            bufs[slot] = check_malloc((size_t)n);
            pattern_fill(bufs[slot], (size_t)n, me, seed_base + (uint64_t)seq);
            CHECK_MPI(MPI_Isend(bufs[slot], n, MPI_BYTE, dest, tag, MPI_COMM_WORLD, &reqs[slot]));
            slot = (slot + 1) % WINDOW;
        } else {
            unsigned char *buf = check_malloc((size_t)n);
            pattern_fill(buf, (size_t)n, me, seed_base + (uint64_t)seq);
            if (mode == 0)
                CHECK_MPI(MPI_Send(buf, n, MPI_BYTE, dest, tag, MPI_COMM_WORLD));
            else
                CHECK_MPI(MPI_Ssend(buf, n, MPI_BYTE, dest, tag, MPI_COMM_WORLD));
            free(buf);
        }
    }
    CHECK_MPI(MPI_Waitall(WINDOW, reqs, MPI_STATUSES_IGNORE));
    for (int w = 0; w < WINDOW; ++w)
        free(bufs[w]);
}

static void check_received(const MPI_Status *st, const unsigned char *buf, int sender, int seq,
                           int expected_size, uint64_t seed_base)
{
    int count = -1;
    CHECK_MPI(MPI_Get_count(st, MPI_BYTE, &count));
    CHECKF(count == expected_size,
           "message %d from rank %d has %d bytes, expected %d: a message overtook another",
           seq, sender, count, expected_size);
    CHECK_PATTERN(buf, count, sender, seed_base + (uint64_t)seq);
}

/* 1. The odd rank of a pair receives NPAIR messages from `src`, alternating
 * between blocking receives and windows of Irecv completed with Waitall. */
static void receive_pair(int src)
{
    const int max = 1 << 20;
    unsigned char *bufs[WINDOW];
    for (int w = 0; w < WINDOW; ++w)
        bufs[w] = check_malloc((size_t)max);
    int seq = 0;
    int window_no = 0;
    while (seq < NPAIR) {
        int k = NPAIR - seq < WINDOW ? NPAIR - seq : WINDOW;
        MPI_Status st[WINDOW];
        if (window_no % 2 == 0) {
            MPI_Request reqs[WINDOW];
            for (int w = 0; w < k; ++w)
                CHECK_MPI(MPI_Irecv(bufs[w], max, MPI_BYTE, src, TAG_PAIR, MPI_COMM_WORLD,
                                    &reqs[w]));
            CHECK_MPI(MPI_Waitall(k, reqs, st));
        } else {
            for (int w = 0; w < k; ++w)
                CHECK_MPI(MPI_Recv(bufs[w], max, MPI_BYTE, src, TAG_PAIR, MPI_COMM_WORLD,
                                   &st[w]));
        }
        for (int w = 0; w < k; ++w) {
            CHECKF(st[w].MPI_SOURCE == src && st[w].MPI_TAG == TAG_PAIR,
                   "status source %d tag %d", st[w].MPI_SOURCE, st[w].MPI_TAG);
            check_received(&st[w], bufs[w], src, seq + w,
                           size_of(pair_sizes, NELEMS(pair_sizes), src, seq + w), 0);
        }
        seq += k;
        ++window_no;
    }
    for (int w = 0; w < WINDOW; ++w)
        free(bufs[w]);
}

/* 2. Rank 0 receives NANY messages from each other rank with
 * MPI_ANY_SOURCE and checks each sender's sequence. */
static void receive_any(int size)
{
    const uint64_t seed_base = 1000000;
    int max = 0;
    for (int i = 0; i < NELEMS(any_sizes); ++i)
        max = any_sizes[i] > max ? any_sizes[i] : max;
    int *next = check_malloc(sizeof(int) * (size_t)size);
    for (int r = 0; r < size; ++r)
        next[r] = 0;
    unsigned char *bufs[WINDOW];
    for (int w = 0; w < WINDOW; ++w)
        bufs[w] = check_malloc((size_t)max);

    int total = NANY * (size - 1);
    int got = 0;
    int window_no = 0;
    while (got < total) {
        int k = total - got < WINDOW ? total - got : WINDOW;
        MPI_Status st[WINDOW];
        if (window_no % 2 == 0) {
            MPI_Request reqs[WINDOW];
            for (int w = 0; w < k; ++w)
                CHECK_MPI(MPI_Irecv(bufs[w], max, MPI_BYTE, MPI_ANY_SOURCE, TAG_ANY,
                                    MPI_COMM_WORLD, &reqs[w]));
            CHECK_MPI(MPI_Waitall(k, reqs, st));
        } else {
            for (int w = 0; w < k; ++w)
                CHECK_MPI(MPI_Recv(bufs[w], max, MPI_BYTE, MPI_ANY_SOURCE, TAG_ANY,
                                   MPI_COMM_WORLD, &st[w]));
        }
        /* Receives are matched in the order they were posted, so within the
         * window each sender's messages appear in its sequence order. */
        for (int w = 0; w < k; ++w) {
            int src = st[w].MPI_SOURCE;
            CHECKF(src >= 1 && src < size && st[w].MPI_TAG == TAG_ANY,
                   "status source %d tag %d", src, st[w].MPI_TAG);
            int seq = next[src]++;
            CHECKF(seq < NANY, "more than %d messages from rank %d", NANY, src);
            check_received(&st[w], bufs[w], src, seq,
                           size_of(any_sizes, NELEMS(any_sizes), src, seq), seed_base);
        }
        got += k;
        ++window_no;
    }
    for (int r = 1; r < size; ++r)
        CHECKF(next[r] == NANY, "received %d messages from rank %d, expected %d", next[r], r,
               NANY);
    for (int w = 0; w < WINDOW; ++w)
        free(bufs[w]);
    free(next);
}

int main(int argc, char **argv)
{
    CHECK_MPI(MPI_Init(&argc, &argv));
    int rank = world_rank();
    int size = world_size();
    CHECKF(size >= 2, "needs at least 2 ranks, has %d", size);

    /* 1. */
    if (rank % 2 == 0 && rank + 1 < size)
        send_sequence(rank, rank + 1, TAG_PAIR, NPAIR, pair_sizes, NELEMS(pair_sizes), 0);
    else if (rank % 2 == 1)
        receive_pair(rank - 1);

    /* 2. */
    if (rank == 0)
        receive_any(size);
    else
        send_sequence(rank, 0, TAG_ANY, NANY, any_sizes, NELEMS(any_sizes), 1000000);

    CHECK_MPI(MPI_Finalize());
    return 0;
}
