/*
 * p2p_unexpected: thousands of messages sent before the receiver posts any
 * receive for them are all kept and delivered, in order.
 *
 * 1. Every rank but 0 (rank 0 itself in a 1-rank job) Isends its share of
 *    TOTAL_SMALL small messages (8 to 64 B) plus BIG_PER_SENDER messages
 *    of 1 MiB spread among them, all on one tag, then tells rank 0 'all
 *    sent' on another tag.
 * 2. Rank 0 first collects every 'all sent' notice, so every data message
 *    was started before it posts a single data receive.
 * 3. Rank 0 receives the first half of each sender's messages naming the
 *    sender (senders in descending order), then the rest with
 *    MPI_ANY_SOURCE; each sender's messages arrive in sequence, with the
 *    expected size and bytes.
 * 4. Rank 0 acks; the senders complete their Isends and free the buffers.
 */
#include "check.h"

enum {
    TOTAL_SMALL = 20000,
    BIG_PER_SENDER = 4,
    BIG = 1 << 20,
    SMALL_MAX = 64,
    TAG_DATA = 1,
    TAG_DONE = 2,
    TAG_ACK = 3,
};

typedef struct {
    int messages; /* per sender */
    int big_every; /* message i is big when (i + 1) % big_every == 0 */
} Plan;

static Plan plan_for(int nsenders)
{
    Plan p;
    int small = TOTAL_SMALL / nsenders;
    p.messages = small + BIG_PER_SENDER;
    p.big_every = p.messages / BIG_PER_SENDER;
    return p;
}

static int message_bytes(const Plan *p, int seq)
{
    if ((seq + 1) % p->big_every == 0)
        return BIG;
    return 8 + (seq * 7) % (SMALL_MAX - 7);
}

typedef struct {
    MPI_Request *reqs;
    unsigned char **bufs;
    int n;
} Outgoing;

/* 1. */
static Outgoing send_all(const Plan *p, int me)
{
    Outgoing out;
    out.n = p->messages;
    out.reqs = check_malloc(sizeof(MPI_Request) * (size_t)out.n);
    out.bufs = check_malloc(sizeof(unsigned char *) * (size_t)out.n);
    for (int seq = 0; seq < out.n; ++seq) {
        int n = message_bytes(p, seq);
        out.bufs[seq] = check_malloc((size_t)n);
        pattern_fill(out.bufs[seq], (size_t)n, me, (uint64_t)seq);
        CHECK_MPI(MPI_Isend(out.bufs[seq], n, MPI_BYTE, 0, TAG_DATA, MPI_COMM_WORLD,
                            &out.reqs[seq]));
    }
    return out;
}

/* 4. */
static void complete_sends(Outgoing *out)
{
    CHECK_MPI(MPI_Waitall(out->n, out->reqs, MPI_STATUSES_IGNORE));
    for (int i = 0; i < out->n; ++i) {
        CHECK(out->reqs[i] == MPI_REQUEST_NULL);
        free(out->bufs[i]);
    }
    free(out->reqs);
    free(out->bufs);
}

static void check_one(const Plan *p, const MPI_Status *st, const unsigned char *buf, int src,
                      int seq)
{
    CHECKF(st->MPI_SOURCE == src && st->MPI_TAG == TAG_DATA, "status source %d tag %d",
           st->MPI_SOURCE, st->MPI_TAG);
    int count = -1;
    CHECK_MPI(MPI_Get_count(st, MPI_BYTE, &count));
    CHECKF(count == message_bytes(p, seq),
           "message %d from rank %d has %d bytes, expected %d (out of order or lost)", seq, src,
           count, message_bytes(p, seq));
    CHECK_PATTERN(buf, count, src, (uint64_t)seq);
}

/* 3. Senders are ranks first..last. */
static void receive_all(const Plan *p, int first, int last)
{
    int size = last + 1;
    int *next = check_malloc(sizeof(int) * (size_t)size);
    for (int r = 0; r < size; ++r)
        next[r] = 0;
    unsigned char *buf = check_malloc(BIG);
    MPI_Status st;

    int half = p->messages / 2;
    for (int src = last; src >= first; --src) {
        for (; next[src] < half; ++next[src]) {
            CHECK_MPI(MPI_Recv(buf, BIG, MPI_BYTE, src, TAG_DATA, MPI_COMM_WORLD, &st));
            check_one(p, &st, buf, src, next[src]);
        }
    }
    long remaining = (long)(p->messages - half) * (last - first + 1);
    for (long i = 0; i < remaining; ++i) {
        CHECK_MPI(MPI_Recv(buf, BIG, MPI_BYTE, MPI_ANY_SOURCE, TAG_DATA, MPI_COMM_WORLD, &st));
        int src = st.MPI_SOURCE;
        CHECKF(src >= first && src <= last, "MPI_ANY_SOURCE receive got source %d", src);
        CHECKF(next[src] < p->messages, "more than %d messages from rank %d", p->messages, src);
        check_one(p, &st, buf, src, next[src]);
        ++next[src];
    }
    for (int src = first; src <= last; ++src)
        CHECKF(next[src] == p->messages, "got %d messages from rank %d, expected %d",
               next[src], src, p->messages);
    free(buf);
    free(next);
}

int main(int argc, char **argv)
{
    CHECK_MPI(MPI_Init(&argc, &argv));
    int rank = world_rank();
    int size = world_size();

    if (size == 1) {
        Plan p = plan_for(1);
        Outgoing out = send_all(&p, 0);
        receive_all(&p, 0, 0);
        complete_sends(&out);
    } else if (rank == 0) {
        Plan p = plan_for(size - 1);
        /* 2. */
        for (int src = 1; src < size; ++src) {
            int sent = -1;
            CHECK_MPI(MPI_Recv(&sent, 1, MPI_INT, src, TAG_DONE, MPI_COMM_WORLD,
                               MPI_STATUS_IGNORE));
            CHECKF(sent == p.messages, "rank %d announced %d messages, expected %d", src, sent,
                   p.messages);
        }
        receive_all(&p, 1, size - 1);
        for (int dst = 1; dst < size; ++dst)
            CHECK_MPI(MPI_Send(&dst, 1, MPI_INT, dst, TAG_ACK, MPI_COMM_WORLD));
    } else {
        Plan p = plan_for(size - 1);
        Outgoing out = send_all(&p, rank);
        CHECK_MPI(MPI_Send(&p.messages, 1, MPI_INT, 0, TAG_DONE, MPI_COMM_WORLD));
        int ack = -1;
        CHECK_MPI(MPI_Recv(&ack, 1, MPI_INT, 0, TAG_ACK, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        CHECKF(ack == rank, "ack carried %d", ack);
        complete_sends(&out);
    }

    CHECK_MPI(MPI_Finalize());
    return 0;
}
