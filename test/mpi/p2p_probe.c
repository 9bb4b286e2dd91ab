/*
 * p2p_probe: MPI_Probe and MPI_Iprobe report the pending message without
 * consuming it, and its size is enough to receive it exactly.
 *
 * Pairs (0,1), (2,3), ...: the odd rank sends, the even rank probes.
 *   1. Before the sender has sent anything (it waits for a 'go'), Iprobe
 *      finds nothing; after the 'go', an Iprobe polling loop finds the
 *      message; its status gives the source, tag and byte count, and a Recv
 *      of exactly that many bytes gets it.
 *   2. Probe for messages of 0 B to 16 MiB (sizes the prober does not know):
 *      Probe with a specific source and tag, probe again with wildcards
 *      (same message: probing does not consume), then Recv exactly
 *      MPI_Get_count bytes from the probed source and tag.
 *   3. Probe by tag skips an earlier message with another tag; a wildcard
 *      Probe then finds the earlier one.
 *   4. Probe and Iprobe on MPI_PROC_NULL return at once with source
 *      MPI_PROC_NULL, tag MPI_ANY_TAG, count 0.
 *   5. When everything is received, Iprobe finds nothing.
 * An odd last rank has no partner and runs step 4 only.
 */
#include "check.h"

enum { TAG_GO = 1, TAG_POLL = 2, TAG_SIZES = 3, TAG_EARLY = 31, TAG_LATE = 32 };

static const int probe_sizes[] = {0, 1, 1000, 65539, 1 << 20, (16 << 20) - 1};
enum { NPROBE = sizeof probe_sizes / sizeof probe_sizes[0], POLL_BYTES = 12345 };

/* Receives exactly the probed message and checks it against the sender's
 * pattern for `seed`. */
static void receive_probed(const MPI_Status *st, int expected_bytes, uint64_t seed)
{
    int count = -1;
    CHECK_MPI(MPI_Get_count(st, MPI_BYTE, &count));
    CHECKF(count == expected_bytes, "probe reports %d bytes, %d were sent", count,
           expected_bytes);
    unsigned char *buf = check_malloc((size_t)count);
    MPI_Status rst;
    CHECK_MPI(MPI_Recv(buf, count, MPI_BYTE, st->MPI_SOURCE, st->MPI_TAG, MPI_COMM_WORLD,
                       &rst));
    int got = -1;
    CHECK_MPI(MPI_Get_count(&rst, MPI_BYTE, &got));
    CHECKF(got == count && rst.MPI_SOURCE == st->MPI_SOURCE && rst.MPI_TAG == st->MPI_TAG,
           "received %d bytes from %d tag %d after probing %d bytes from %d tag %d", got,
           rst.MPI_SOURCE, rst.MPI_TAG, count, st->MPI_SOURCE, st->MPI_TAG);
    CHECK_PATTERN(buf, count, st->MPI_SOURCE, seed);
    free(buf);
}

static void prober(int peer)
{
    /* 1. */
    int flag = -1;
    MPI_Status st;
    CHECK_MPI(MPI_Iprobe(peer, TAG_POLL, MPI_COMM_WORLD, &flag, &st));
    CHECKF(flag == 0, "MPI_Iprobe found a message before anything was sent");
    CHECK_MPI(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st));
    CHECKF(flag == 0, "wildcard MPI_Iprobe found a message before anything was sent");
    int go = 1;
    CHECK_MPI(MPI_Send(&go, 1, MPI_INT, peer, TAG_GO, MPI_COMM_WORLD));
    do {
        CHECK_MPI(MPI_Iprobe(peer, TAG_POLL, MPI_COMM_WORLD, &flag, &st));
    } while (!flag);
    CHECKF(st.MPI_SOURCE == peer && st.MPI_TAG == TAG_POLL, "Iprobe status source %d tag %d",
           st.MPI_SOURCE, st.MPI_TAG);
    receive_probed(&st, POLL_BYTES, 1);

    /* 2. */
    for (int i = 0; i < NPROBE; ++i) {
        CHECK_MPI(MPI_Probe(peer, TAG_SIZES, MPI_COMM_WORLD, &st));
        CHECKF(st.MPI_SOURCE == peer && st.MPI_TAG == TAG_SIZES,
               "Probe status source %d tag %d", st.MPI_SOURCE, st.MPI_TAG);
        int first = -1;
        CHECK_MPI(MPI_Get_count(&st, MPI_BYTE, &first));
        MPI_Status again;
        CHECK_MPI(MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &again));
        int second = -1;
        CHECK_MPI(MPI_Get_count(&again, MPI_BYTE, &second));
        CHECKF(again.MPI_SOURCE == peer && again.MPI_TAG == TAG_SIZES && second == first,
               "second probe found source %d tag %d, %d bytes; the first found %d bytes",
               again.MPI_SOURCE, again.MPI_TAG, second, first);
        receive_probed(&st, probe_sizes[i], 100u + (uint64_t)i);
    }

    /* 3. */
    CHECK_MPI(MPI_Probe(peer, TAG_LATE, MPI_COMM_WORLD, &st));
    CHECKF(st.MPI_TAG == TAG_LATE, "Probe for tag %d found tag %d", TAG_LATE, st.MPI_TAG);
    receive_probed(&st, 8, 200);
    CHECK_MPI(MPI_Probe(peer, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
    CHECKF(st.MPI_TAG == TAG_EARLY, "wildcard Probe found tag %d, expected %d", st.MPI_TAG,
           TAG_EARLY);
    receive_probed(&st, 16, 201);

    /* 5. */
    CHECK_MPI(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st));
    CHECKF(flag == 0, "MPI_Iprobe found a message (source %d tag %d) after all were received",
           st.MPI_SOURCE, st.MPI_TAG);
}

static void send_pattern(int peer, int n, int tag, uint64_t seed)
{
    unsigned char *buf = check_malloc((size_t)n);
    pattern_fill(buf, (size_t)n, world_rank(), seed);
    CHECK_MPI(MPI_Send(buf, n, MPI_BYTE, peer, tag, MPI_COMM_WORLD));
    free(buf);
}

static void sender(int peer)
{
    int go = 0;
    CHECK_MPI(MPI_Recv(&go, 1, MPI_INT, peer, TAG_GO, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    send_pattern(peer, POLL_BYTES, TAG_POLL, 1);
    for (int i = 0; i < NPROBE; ++i)
        send_pattern(peer, probe_sizes[i], TAG_SIZES, 100u + (uint64_t)i);
    send_pattern(peer, 16, TAG_EARLY, 201);
    send_pattern(peer, 8, TAG_LATE, 200);
}

/* 4. */
static void probe_proc_null(void)
{
    MPI_Status st;
    status_poison(&st);
    CHECK_MPI(MPI_Probe(MPI_PROC_NULL, 5, MPI_COMM_WORLD, &st));
    int count = -1;
    CHECK_MPI(MPI_Get_count(&st, MPI_BYTE, &count));
    CHECKF(st.MPI_SOURCE == MPI_PROC_NULL && st.MPI_TAG == MPI_ANY_TAG && count == 0,
           "Probe on MPI_PROC_NULL: source %d tag %d count %d", st.MPI_SOURCE, st.MPI_TAG,
           count);
    int flag = 0;
    status_poison(&st);
    CHECK_MPI(MPI_Iprobe(MPI_PROC_NULL, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st));
    CHECK_MPI(MPI_Get_count(&st, MPI_BYTE, &count));
    CHECKF(flag != 0 && st.MPI_SOURCE == MPI_PROC_NULL && st.MPI_TAG == MPI_ANY_TAG &&
               count == 0,
           "Iprobe on MPI_PROC_NULL: flag %d source %d tag %d count %d", flag, st.MPI_SOURCE,
           st.MPI_TAG, count);
}

int main(int argc, char **argv)
{
    CHECK_MPI(MPI_Init(&argc, &argv));
    int rank = world_rank();
    int size = world_size();
    CHECKF(size >= 2, "needs at least 2 ranks, has %d", size);

    probe_proc_null();
    if (rank % 2 == 0 && rank + 1 < size)
        prober(rank + 1);
    else if (rank % 2 == 1)
        sender(rank - 1);

    CHECK_MPI(MPI_Finalize());
    return 0;
}
