/*
 * p2p_match_deep: matching with thousands of receives or messages waiting
 * (MPI-3.1 3.5 and 3.8).  A message takes the first posted receive that
 * fits it, and a receive takes the first message that fits it.  This holds
 * for every mix of MPI_ANY_SOURCE and MPI_ANY_TAG, however deep the queues.
 *
 * Rank 1 sends, rank 0 receives; other ranks only wait in the final barrier.
 * A second communicator (a duplicate) carries the "go" messages, so they
 * never match anything under test.
 *
 * 1. Posted receives, answered in reverse.  Rank 0 posts NDEEP receives
 *    with tags 0 .. NDEEP-1 and says go.  Rank 1 sends tags NDEEP-1 .. 0.
 *    Every receive must hold the message of its own tag.
 * 2. Waiting messages, received in reverse.  Rank 1 sends NDEEP messages
 *    with tags 0 .. NDEEP-1 and says go.  Rank 0 receives tags NDEEP-1 .. 0.
 * 3. Mixed patterns, receives first.  NMIX receives, each for source 1 or
 *    MPI_ANY_SOURCE and for a tag from a set of NTAGS or MPI_ANY_TAG
 *    (pseudo-random).  Some are cancelled before any message is sent.
 *    Then one message per live receive, of pseudo-random tag and length.
 *    Both ranks compute the expected matching with a plain simulation:
 *    each message, in sending order, takes the first live pending receive
 *    in posting order that fits it.  The messages are generated against
 *    that simulation (each fits some receive still pending), so every
 *    receive gets exactly one.
 * 4. The same patterns, messages first: rank 1 sends them all and says go.
 *    Rank 0 then receives one at a time, in posting order, by MPI_Recv,
 *    MPI_Probe + MPI_Recv, MPI_Iprobe until found + MPI_Recv, or
 *    MPI_Mprobe + MPI_Mrecv.  A probe must describe the message the
 *    receive then gets.  With one sender, the standard's matching gives
 *    the simulation's answer whichever side comes first.
 */
#include "check.h"

enum {
    NDEEP = 10000, /* receives or messages queued in steps 1 and 2 (tags < 32767) */
    NMIX = 3000,   /* receives in steps 3 and 4 */
    NTAGS = 7,     /* distinct tags in steps 3 and 4 */
    MAXLEN = 4,    /* ints per message in steps 3 and 4 */
    TAG_GO = 1,
};

static void go(MPI_Comm side, int to)
{
    CHECK_MPI(MPI_Send(NULL, 0, MPI_INT, to, TAG_GO, side));
}

static void wait_go(MPI_Comm side, int from)
{
    CHECK_MPI(MPI_Recv(NULL, 0, MPI_INT, from, TAG_GO, side, MPI_STATUS_IGNORE));
}

/* Step 1 on rank 0: NDEEP receives posted, answered in reverse. */
static void deep_posted_recv(MPI_Comm comm, MPI_Comm side)
{
    int *got = malloc(sizeof(int) * NDEEP);
    MPI_Request *reqs = malloc(sizeof(MPI_Request) * NDEEP);
    CHECK(got != NULL && reqs != NULL);
    for (int t = 0; t < NDEEP; ++t) {
        got[t] = -1;
        CHECK_MPI(MPI_Irecv(&got[t], 1, MPI_INT, 1, t, comm, &reqs[t]));
    }
    go(side, 1);
    CHECK_MPI(MPI_Waitall(NDEEP, reqs, MPI_STATUSES_IGNORE));
    for (int t = 0; t < NDEEP; ++t)
        CHECKF(got[t] == 3 * t + 1, "receive for tag %d holds %d, not %d", t, got[t], 3 * t + 1);
    free(got);
    free(reqs);
}

/* Steps 1 and 2 on rank 1: the message of tag t holds 3t + 1 (step 1) or
 * 5t + 2 (step 2). */
static void deep_send(MPI_Comm comm, MPI_Comm side, int step)
{
    int *val = malloc(sizeof(int) * NDEEP);
    MPI_Request *reqs = malloc(sizeof(MPI_Request) * NDEEP);
    CHECK(val != NULL && reqs != NULL);
    if (step == 1)
        wait_go(side, 0);
    for (int k = 0; k < NDEEP; ++k) {
        const int t = step == 1 ? NDEEP - 1 - k : k;
        val[k] = step == 1 ? 3 * t + 1 : 5 * t + 2;
        CHECK_MPI(MPI_Isend(&val[k], 1, MPI_INT, 0, t, comm, &reqs[k]));
    }
    if (step == 2)
        go(side, 0);
    CHECK_MPI(MPI_Waitall(NDEEP, reqs, MPI_STATUSES_IGNORE));
    free(val);
    free(reqs);
}

/* Step 2 on rank 0: NDEEP messages waiting, received in reverse. */
static void deep_unexpected_recv(MPI_Comm comm, MPI_Comm side)
{
    wait_go(side, 1);
    for (int t = NDEEP - 1; t >= 0; --t) {
        int v = -1;
        MPI_Status st;
        CHECK_MPI(MPI_Recv(&v, 1, MPI_INT, 1, t, comm, &st));
        CHECKF(v == 5 * t + 2 && st.MPI_TAG == t, "receive for tag %d got tag %d holding %d", t, st.MPI_TAG, v);
    }
}

/* A receive's pattern and a message, for steps 3 and 4. */
struct pattern {
    int src;  /* 1 or MPI_ANY_SOURCE */
    int tag;  /* 0 .. NTAGS-1 or MPI_ANY_TAG */
    int live; /* 0: cancelled in step 3 */
};
struct message {
    int tag;
    int len;  /* ints */
    int recv; /* the receive it goes to */
};

static int fits(const struct pattern *p, int tag)
{
    return p->tag == MPI_ANY_TAG || p->tag == tag;
}

/* The patterns, the messages and the expected matching; the same on both
 * ranks.  `cancels`: whether some receives are cancelled (step 3). */
static int plan(struct pattern *pat, struct message *msg, int cancels, unsigned long long seed)
{
    check_seed(seed);
    for (int i = 0; i < NMIX; ++i) {
        const unsigned r = check_rand();
        pat[i].src = r % 3 == 0 ? MPI_ANY_SOURCE : 1;
        pat[i].tag = (r >> 4) % 4 == 0 ? MPI_ANY_TAG : (int)((r >> 8) % NTAGS);
        pat[i].live = !(cancels && (r >> 12) % 9 == 0);
    }
    int *pending = malloc(sizeof(int) * NMIX); /* 1 while waiting for its message */
    CHECK(pending != NULL);
    int npending = 0;
    for (int i = 0; i < NMIX; ++i) {
        pending[i] = pat[i].live;
        npending += pending[i];
    }
    int nmsg = 0;
    while (npending > 0) {
        /* A message for a pseudo-random pending receive ... */
        int want = (int)(check_rand() % (unsigned)npending);
        int target = 0;
        for (;; ++target) {
            if (pending[target] && want-- == 0)
                break;
        }
        struct message *m = &msg[nmsg++];
        m->tag = pat[target].tag != MPI_ANY_TAG ? pat[target].tag : (int)(check_rand() % NTAGS);
        m->len = 1 + (int)(check_rand() % MAXLEN);
        /* ... goes to the first pending receive that fits it. */
        for (int i = 0; i < NMIX; ++i) {
            if (pending[i] && fits(&pat[i], m->tag)) {
                m->recv = i;
                pending[i] = 0;
                --npending;
                break;
            }
        }
    }
    free(pending);
    return nmsg;
}

/* Message k's data: len ints, k * 16 + j. */
static void fill(int *buf, int k, int len)
{
    for (int j = 0; j < len; ++j)
        buf[j] = k * 16 + j;
}

/* The status of receive (or probe) i describes message k. */
static void check_status(const MPI_Status *st, int i, const struct message *msg, int k)
{
    CHECKF(st->MPI_SOURCE == 1 && st->MPI_TAG == msg[k].tag, "receive %d: source %d tag %d, expected message %d (tag %d)",
           i, st->MPI_SOURCE, st->MPI_TAG, k, msg[k].tag);
    int count = -1;
    CHECK_MPI(MPI_Get_count(st, MPI_INT, &count));
    CHECKF(count == msg[k].len, "receive %d: %d ints, expected message %d of %d", i, count, k, msg[k].len);
}

/* Receive i got message k. */
static void check_got(const int *buf, const MPI_Status *st, int i, const struct message *msg, int k)
{
    check_status(st, i, msg, k);
    for (int j = 0; j < msg[k].len; ++j)
        CHECKF(buf[j] == k * 16 + j, "receive %d: int %d is %d, expected message %d", i, j, buf[j], k);
}

static void mixed(MPI_Comm comm, MPI_Comm side, int me, int receives_first)
{
    struct pattern *pat = malloc(sizeof *pat * NMIX);
    struct message *msg = malloc(sizeof *msg * NMIX);
    CHECK(pat != NULL && msg != NULL);
    const int nmsg = plan(pat, msg, receives_first, receives_first ? 0x9e3779b97f4a7c15ull : 0x2545f4914f6cdd1dull);
    if (me == 1) {
        int *data = malloc(sizeof(int) * MAXLEN * (size_t)nmsg);
        MPI_Request *reqs = malloc(sizeof(MPI_Request) * (size_t)nmsg);
        CHECK(data != NULL && reqs != NULL);
        if (receives_first)
            wait_go(side, 0);
        for (int k = 0; k < nmsg; ++k) {
            fill(&data[MAXLEN * k], k, msg[k].len);
            CHECK_MPI(MPI_Isend(&data[MAXLEN * k], msg[k].len, MPI_INT, 0, msg[k].tag, comm, &reqs[k]));
        }
        if (!receives_first)
            go(side, 0);
        CHECK_MPI(MPI_Waitall(nmsg, reqs, MPI_STATUSES_IGNORE));
        free(data);
        free(reqs);
    } else if (me == 0) {
        int *from = malloc(sizeof(int) * NMIX); /* receive -> message */
        int *buf = malloc(sizeof(int) * MAXLEN * NMIX);
        CHECK(from != NULL && buf != NULL);
        for (int k = 0; k < nmsg; ++k)
            from[msg[k].recv] = k;
        if (receives_first) {
            MPI_Request *reqs = malloc(sizeof(MPI_Request) * NMIX);
            MPI_Status *sts = malloc(sizeof(MPI_Status) * NMIX);
            CHECK(reqs != NULL && sts != NULL);
            for (int i = 0; i < NMIX; ++i)
                CHECK_MPI(MPI_Irecv(&buf[MAXLEN * i], MAXLEN, MPI_INT, pat[i].src, pat[i].tag, comm, &reqs[i]));
            for (int i = 0; i < NMIX; ++i) {
                if (pat[i].live)
                    continue;
                CHECK_MPI(MPI_Cancel(&reqs[i]));
                MPI_Status st;
                CHECK_MPI(MPI_Wait(&reqs[i], &st));
                int cancelled = 0;
                CHECK_MPI(MPI_Test_cancelled(&st, &cancelled));
                CHECKF(cancelled, "receive %d was not cancelled, though no message was sent yet", i);
            }
            go(side, 1);
            CHECK_MPI(MPI_Waitall(NMIX, reqs, sts));
            for (int i = 0; i < NMIX; ++i) {
                if (pat[i].live)
                    check_got(&buf[MAXLEN * i], &sts[i], i, msg, from[i]);
            }
            free(reqs);
            free(sts);
        } else {
            wait_go(side, 1);
            for (int i = 0; i < NMIX; ++i) {
                int *b = &buf[MAXLEN * i];
                const int k = from[i];
                MPI_Status st, pst;
                switch (i % 4) {
                case 0: CHECK_MPI(MPI_Recv(b, MAXLEN, MPI_INT, pat[i].src, pat[i].tag, comm, &st)); break;
                case 1:
                    CHECK_MPI(MPI_Probe(pat[i].src, pat[i].tag, comm, &pst));
                    check_status(&pst, i, msg, k);
                    CHECK_MPI(MPI_Recv(b, MAXLEN, MPI_INT, pat[i].src, pat[i].tag, comm, &st));
                    break;
                case 2: {
                    int flag = 0;
                    while (!flag)
                        CHECK_MPI(MPI_Iprobe(pat[i].src, pat[i].tag, comm, &flag, &pst));
                    check_status(&pst, i, msg, k);
                    CHECK_MPI(MPI_Recv(b, MAXLEN, MPI_INT, pat[i].src, pat[i].tag, comm, &st));
                    break;
                }
                default: {
                    MPI_Message handle;
                    CHECK_MPI(MPI_Mprobe(pat[i].src, pat[i].tag, comm, &handle, &pst));
                    CHECK_MPI(MPI_Mrecv(b, MAXLEN, MPI_INT, &handle, &st));
                    break;
                }
                }
                check_got(b, &st, i, msg, k);
            }
        }
        free(from);
        free(buf);
    }
    free(pat);
    free(msg);
}

int main(int argc, char **argv)
{
    CHECK_MPI(MPI_Init(&argc, &argv));
    int me = 0, n = 0;
    CHECK_MPI(MPI_Comm_rank(MPI_COMM_WORLD, &me));
    CHECK_MPI(MPI_Comm_size(MPI_COMM_WORLD, &n));
    CHECKF(n >= 2, "needs at least 2 ranks, got %d", n);
    MPI_Comm side;
    CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &side));
    if (me == 0) {
        deep_posted_recv(MPI_COMM_WORLD, side);
        deep_unexpected_recv(MPI_COMM_WORLD, side);
    } else if (me == 1) {
        deep_send(MPI_COMM_WORLD, side, 1);
        deep_send(MPI_COMM_WORLD, side, 2);
    }
    mixed(MPI_COMM_WORLD, side, me, 1);
    mixed(MPI_COMM_WORLD, side, me, 0);
    CHECK_MPI(MPI_Comm_free(&side));
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    CHECK_MPI(MPI_Finalize());
    return 0;
}
