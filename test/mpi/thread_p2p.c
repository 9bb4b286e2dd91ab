/*
 * thread_p2p: point-to-point calls from several threads of each rank at once
 * under MPI_THREAD_MULTIPLE (MPI-3.1 12.4).
 *
 * 1. MPI_Init_thread grants MPI_THREAD_MULTIPLE when asked, and
 *    MPI_Query_thread says so in every thread.
 * 2. Ring traffic: kThreads threads per rank each send to the right
 *    neighbour and receive from the left one, each on its own tag, messages
 *    of 0 B to 300 KB (eager, streamed and rendezvous), with MPI_Isend +
 *    MPI_Recv, MPI_Sendrecv, MPI_Ssend against MPI_Irecv + MPI_Wait, and
 *    MPI_Mprobe + MPI_Mrecv; every byte is checked.  With one rank the
 *    neighbour is the rank itself.
 * 3. A thread blocked in MPI_Recv from its own rank gets the message that
 *    another thread sends to it a while later: the receiver has gone to
 *    sleep by then, and nothing but the other thread can wake it.
 * 4. A generalized request completed by another thread (MPI_Grequest_complete)
 *    ends the MPI_Wait of the thread that waits on it.
 * 5. Wildcards: every thread receives kThreads messages with MPI_ANY_SOURCE
 *    and MPI_ANY_TAG on a communicator of its own; each message arrives
 *    exactly once, in the thread it was sent to.
 */
#include "thread_common.h"

enum { kThreads = 4, kRounds = 24 };

static int rank, size;
static MPI_Comm thread_comm[kThreads];

static int length_of(int round)
{
    static const int lengths[] = {0, 8, 1000, 4096, 40000, 100000, 300000};
    return lengths[round % (int)(sizeof lengths / sizeof lengths[0])];
}

static unsigned char byte_of(int from, int thread, int round, int i)
{
    return (unsigned char)(from * 31 + thread * 7 + round * 13 + i * 5 + (i >> 8));
}

static void fill(unsigned char *buf, int n, int from, int thread, int round)
{
    for (int i = 0; i < n; ++i)
        buf[i] = byte_of(from, thread, round, i);
}

static void expect(const unsigned char *buf, int n, int from, int thread, int round)
{
    for (int i = 0; i < n; ++i) {
        CHECKF(buf[i] == byte_of(from, thread, round, i),
               "thread %d round %d: byte %d of %d from rank %d is %d, not %d", thread, round, i, n, from,
               buf[i], byte_of(from, thread, round, i));
    }
}

static void *ring_traffic(void *arg)
{
    const int t = (int)(intptr_t)arg;
    const int right = (rank + 1) % size, left = (rank + size - 1) % size;
    int provided = -1;
    CHECK_MPI(MPI_Query_thread(&provided));
    CHECKF(provided == MPI_THREAD_MULTIPLE, "thread %d: MPI_Query_thread says %d", t, provided);
    unsigned char *out = check_malloc(300000), *in = check_malloc(300000);
    for (int round = 0; round < kRounds; ++round) {
        const int n = length_of(round + t);
        fill(out, n, rank, t, round);
        memset(in, 0xee, (size_t)n);
        MPI_Status st;
        switch (round % 4) {
        case 0: {
            MPI_Request r;
            CHECK_MPI(MPI_Isend(out, n, MPI_BYTE, right, t, MPI_COMM_WORLD, &r));
            CHECK_MPI(MPI_Recv(in, n, MPI_BYTE, left, t, MPI_COMM_WORLD, &st));
            CHECK_MPI(MPI_Wait(&r, MPI_STATUS_IGNORE));
            break;
        }
        case 1:
            CHECK_MPI(MPI_Sendrecv(out, n, MPI_BYTE, right, t, in, n, MPI_BYTE, left, t, MPI_COMM_WORLD, &st));
            break;
        case 2: {
            MPI_Request r;
            CHECK_MPI(MPI_Irecv(in, n, MPI_BYTE, left, t, MPI_COMM_WORLD, &r));
            CHECK_MPI(MPI_Ssend(out, n, MPI_BYTE, right, t, MPI_COMM_WORLD));
            CHECK_MPI(MPI_Wait(&r, &st));
            break;
        }
        default: {
            MPI_Request r;
            MPI_Message m;
            CHECK_MPI(MPI_Isend(out, n, MPI_BYTE, right, t, MPI_COMM_WORLD, &r));
            CHECK_MPI(MPI_Mprobe(left, t, MPI_COMM_WORLD, &m, &st));
            int count = -1;
            CHECK_MPI(MPI_Get_count(&st, MPI_BYTE, &count));
            CHECKF(count == n, "thread %d round %d: MPI_Mprobe says %d bytes, not %d", t, round, count, n);
            CHECK_MPI(MPI_Mrecv(in, n, MPI_BYTE, &m, &st));
            CHECK_MPI(MPI_Wait(&r, MPI_STATUS_IGNORE));
            break;
        }
        }
        int count = -1;
        CHECK_MPI(MPI_Get_count(&st, MPI_BYTE, &count));
        CHECKF(count == n && st.MPI_SOURCE == left && st.MPI_TAG == t,
               "thread %d round %d: got %d bytes from %d tag %d, not %d from %d tag %d", t, round, count,
               st.MPI_SOURCE, st.MPI_TAG, n, left, t);
        expect(in, n, left, t, round);
    }
    free(out);
    free(in);
    return NULL;
}

static void *late_self_send(void *arg)
{
    (void)arg;
    nap_ms(100);  /* the receiver has slept on its doorbell by now */
    const int value = 4242 + rank;
    CHECK_MPI(MPI_Send(&value, 1, MPI_INT, rank, 99, MPI_COMM_WORLD));
    return NULL;
}

static int query_fn(void *extra, MPI_Status *status)
{
    (void)extra;
    MPI_Status_set_elements(status, MPI_BYTE, 17);
    MPI_Status_set_cancelled(status, 0);
    status->MPI_SOURCE = MPI_UNDEFINED;
    status->MPI_TAG = 1717;
    return MPI_SUCCESS;
}

static int free_fn(void *extra)
{
    *(int *)extra += 1;
    return MPI_SUCCESS;
}

static int cancel_fn(void *extra, int complete)
{
    (void)extra;
    (void)complete;
    return MPI_SUCCESS;
}

static MPI_Request grequest;

static void *late_complete(void *arg)
{
    (void)arg;
    nap_ms(100);
    CHECK_MPI(MPI_Grequest_complete(grequest));
    return NULL;
}

static void *wildcard_receiver(void *arg)
{
    const int t = (int)(intptr_t)arg;
    int seen[kThreads * 64];
    memset(seen, 0, sizeof seen);
    /* Rank r sends message k (k < kThreads) to thread (k + r) % kThreads of
     * rank (r + k) % size: every thread of every rank gets one message per
     * rank and k that map to it. */
    int expected = 0;
    for (int r = 0; r < size; ++r) {
        for (int k = 0; k < kThreads; ++k) {
            if ((r + k) % size == rank && (k + r) % kThreads == t)
                ++expected;
        }
    }
    for (int i = 0; i < expected; ++i) {
        int msg[3];
        MPI_Status st;
        CHECK_MPI(MPI_Recv(msg, 3, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, thread_comm[t], &st));
        CHECKF(msg[0] == st.MPI_SOURCE && msg[1] == st.MPI_TAG && msg[2] == t,
               "thread %d: message {%d, %d, %d} came from %d with tag %d", t, msg[0], msg[1], msg[2],
               st.MPI_SOURCE, st.MPI_TAG);
        CHECKF(seen[msg[0] * kThreads + msg[1]]++ == 0, "thread %d: message %d of rank %d came twice", t,
               msg[1], msg[0]);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    init_thread_multiple(&argc, &argv);
    rank = world_rank();
    size = world_size();
    CHECK(size <= 64);

    /* 2. */
    pthread_t th[kThreads];
    start_threads(th, kThreads, ring_traffic);
    join_threads(th, kThreads);
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));

    /* 3. */
    pthread_t sender;
    CHECK(pthread_create(&sender, NULL, late_self_send, NULL) == 0);
    int got = -1;
    CHECK_MPI(MPI_Recv(&got, 1, MPI_INT, rank, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    CHECKF(got == 4242 + rank, "the late message to ourselves holds %d", got);
    CHECK(pthread_join(sender, NULL) == 0);

    /* 4. */
    int freed = 0;
    CHECK_MPI(MPI_Grequest_start(query_fn, free_fn, cancel_fn, &freed, &grequest));
    pthread_t completer;
    CHECK(pthread_create(&completer, NULL, late_complete, NULL) == 0);
    MPI_Status st;
    CHECK_MPI(MPI_Wait(&grequest, &st));
    CHECK(grequest == MPI_REQUEST_NULL);
    CHECKF(st.MPI_TAG == 1717 && freed == 1, "after the wait: tag %d, free_fn ran %d times", st.MPI_TAG, freed);
    CHECK(pthread_join(completer, NULL) == 0);

    /* 5. */
    for (int t = 0; t < kThreads; ++t)
        CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &thread_comm[t]));
    start_threads(th, kThreads, wildcard_receiver);
    MPI_Request sends[kThreads];
    int msgs[kThreads][3];
    for (int k = 0; k < kThreads; ++k) {
        msgs[k][0] = rank;
        msgs[k][1] = k;
        msgs[k][2] = (k + rank) % kThreads;
        CHECK_MPI(MPI_Isend(msgs[k], 3, MPI_INT, (rank + k) % size, k, thread_comm[msgs[k][2]], &sends[k]));
    }
    CHECK_MPI(MPI_Waitall(kThreads, sends, MPI_STATUSES_IGNORE));
    join_threads(th, kThreads);
    for (int t = 0; t < kThreads; ++t)
        CHECK_MPI(MPI_Comm_free(&thread_comm[t]));

    CHECK_MPI(MPI_Finalize());
    return 0;
}
