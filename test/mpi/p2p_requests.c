/*
 * p2p_requests: the completion family (Wait, Waitall, Waitany, Waitsome,
 * Test, Testall, Testany, Testsome) and MPI_Request_free.
 *
 * Pairs (0,1), (2,3), ...: the even rank ("receiver") posts receives into an
 * array of NSLOT requests in which some slots are MPI_REQUEST_NULL; the odd
 * rank ("sender") sends the messages only after a 'go', in an order unlike
 * the posting order (the tags differ, so completions come in any order).
 * Before the 'go' nothing can complete, so the Test* calls must report
 * nothing done.  Each step checks indices, statuses (source, tag, count),
 * the data, that completed requests became MPI_REQUEST_NULL, and what the
 * calls return once every entry is null:
 *   1. Wait and Test on MPI_REQUEST_NULL: at once, with the empty status.
 *   2. Testall (false before go), then Waitall: null entries get the empty
 *      status.
 *   3. Waitany until done, then MPI_UNDEFINED.
 *   4. Testany (false, MPI_UNDEFINED before go), polled until done, then
 *      flag true with MPI_UNDEFINED.
 *   5. Waitsome until done, then outcount MPI_UNDEFINED.
 *   6. Testsome (outcount 0 before go), polled until done, then
 *      MPI_UNDEFINED.
 *   7. Testall polled until true.
 *   8. Requests waited one by one in reverse posting order, on both sides
 *      (the sender uses Isend).
 *   9. MPI_Request_free on a send request: the data still arrives.
 * An odd last rank has no partner and runs step 1 only.
 */
#include "check.h"

enum {
    NSLOT = 10,
    TAG_GO = 900,
    TAG_ACK = 901,
};

/* Slots that hold MPI_REQUEST_NULL instead of a receive. */
static int is_null_slot(int s)
{
    return s == 2 || s == 5 || s == 9;
}

static int slot_bytes(int s)
{
    return s % 3 == 1 ? 300000 : 4 * s + 1;
}

static int slot_tag(int step, int s)
{
    return step * 100 + s;
}

/* The order in which the sender sends: odd slots downwards, then even
 * slots upwards, skipping null slots. */
static int send_order(int out[NSLOT])
{
    int n = 0;
    for (int s = NSLOT - 1; s >= 0; --s)
        if (s % 2 == 1 && !is_null_slot(s))
            out[n++] = s;
    for (int s = 0; s < NSLOT; ++s)
        if (s % 2 == 0 && !is_null_slot(s))
            out[n++] = s;
    return n;
}

static int active_slots(void)
{
    int n = 0;
    for (int s = 0; s < NSLOT; ++s)
        n += !is_null_slot(s);
    return n;
}

typedef struct {
    MPI_Request reqs[NSLOT];
    unsigned char *bufs[NSLOT];
    int done[NSLOT];
    int peer;
    int step;
} Posted;

static void post_receives(Posted *p, int peer, int step)
{
    p->peer = peer;
    p->step = step;
    for (int s = 0; s < NSLOT; ++s) {
        p->done[s] = 0;
        p->bufs[s] = NULL;
        p->reqs[s] = MPI_REQUEST_NULL;
        if (is_null_slot(s))
            continue;
        p->bufs[s] = check_malloc((size_t)slot_bytes(s));
        CHECK_MPI(MPI_Irecv(p->bufs[s], slot_bytes(s), MPI_BYTE, peer, slot_tag(step, s),
                            MPI_COMM_WORLD, &p->reqs[s]));
    }
}

static void send_go(const Posted *p)
{
    CHECK_MPI(MPI_Send(&p->step, 1, MPI_INT, p->peer, TAG_GO, MPI_COMM_WORLD));
}

/* Records the completion of slot s and checks its request, status, data. */
static void complete_slot(Posted *p, int s, const MPI_Status *st)
{
    CHECKF(s >= 0 && s < NSLOT, "step %d: completion index %d out of range", p->step, s);
    CHECKF(!is_null_slot(s), "step %d: completion reported for null slot %d", p->step, s);
    CHECKF(!p->done[s], "step %d: slot %d completed twice", p->step, s);
    CHECKF(p->reqs[s] == MPI_REQUEST_NULL,
           "step %d: slot %d's request was not set to MPI_REQUEST_NULL", p->step, s);
    p->done[s] = 1;
    if (st != MPI_STATUS_IGNORE) {
        CHECKF(st->MPI_SOURCE == p->peer && st->MPI_TAG == slot_tag(p->step, s),
               "step %d slot %d: status source %d tag %d", p->step, s, st->MPI_SOURCE,
               st->MPI_TAG);
        int count = -1;
        CHECK_MPI(MPI_Get_count(st, MPI_BYTE, &count));
        CHECKF(count == slot_bytes(s), "step %d slot %d: %d bytes, expected %d", p->step, s,
               count, slot_bytes(s));
    }
    CHECK_PATTERN(p->bufs[s], slot_bytes(s), p->peer, (uint64_t)slot_tag(p->step, s));
}

static void finish(Posted *p)
{
    for (int s = 0; s < NSLOT; ++s) {
        CHECKF(is_null_slot(s) || p->done[s], "step %d: slot %d never completed", p->step, s);
        CHECK(p->reqs[s] == MPI_REQUEST_NULL);
        free(p->bufs[s]);
    }
}

/* Nothing can have completed before the 'go': Testall, Testany and
 * Testsome all say so and leave the requests alone. */
static void expect_nothing_done(Posted *p)
{
    MPI_Request before[NSLOT];
    memcpy(before, p->reqs, sizeof before);
    int flag = -1;
    MPI_Status sts[NSLOT];
    CHECK_MPI(MPI_Testall(NSLOT, p->reqs, &flag, sts));
    CHECKF(flag == 0, "step %d: MPI_Testall true before anything was sent", p->step);
    int index = -1;
    MPI_Status st;
    CHECK_MPI(MPI_Testany(NSLOT, p->reqs, &index, &flag, &st));
    CHECKF(flag == 0 && index == MPI_UNDEFINED,
           "step %d: MPI_Testany before anything was sent: flag %d index %d", p->step, flag,
           index);
    int outcount = -1;
    int indices[NSLOT];
    CHECK_MPI(MPI_Testsome(NSLOT, p->reqs, &outcount, indices, sts));
    CHECKF(outcount == 0, "step %d: MPI_Testsome before anything was sent gave outcount %d",
           p->step, outcount);
    CHECKF(memcmp(before, p->reqs, sizeof before) == 0,
           "step %d: a Test call with nothing complete changed the requests", p->step);
}

/* The sender's side of steps 2-7: wait for go, send in send_order. */
static void send_step(int peer, int step)
{
    int go = -1;
    CHECK_MPI(MPI_Recv(&go, 1, MPI_INT, peer, TAG_GO, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    CHECKF(go == step, "go for step %d carried %d", step, go);
    int order[NSLOT];
    int n = send_order(order);
    for (int i = 0; i < n; ++i) {
        int s = order[i];
        unsigned char *buf = check_malloc((size_t)slot_bytes(s));
        pattern_fill(buf, (size_t)slot_bytes(s), world_rank(), (uint64_t)slot_tag(step, s));
        CHECK_MPI(MPI_Send(buf, slot_bytes(s), MPI_BYTE, peer, slot_tag(step, s),
                           MPI_COMM_WORLD));
        free(buf);
    }
}

/* 1. */
static void null_requests(void)
{
    MPI_Request req = MPI_REQUEST_NULL;
    MPI_Status st;
    status_poison(&st);
    CHECK_MPI(MPI_Wait(&req, &st));
    CHECK(req == MPI_REQUEST_NULL);
    CHECK_EMPTY_STATUS(st);
    int flag = 0;
    status_poison(&st);
    CHECK_MPI(MPI_Test(&req, &flag, &st));
    CHECKF(flag != 0, "MPI_Test on MPI_REQUEST_NULL gave flag false");
    CHECK_EMPTY_STATUS(st);
}

/* 2. */
static void step_waitall(int peer)
{
    Posted p;
    post_receives(&p, peer, 2);
    expect_nothing_done(&p);
    send_go(&p);
    MPI_Status sts[NSLOT];
    for (int s = 0; s < NSLOT; ++s)
        status_poison(&sts[s]);
    CHECK_MPI(MPI_Waitall(NSLOT, p.reqs, sts));
    for (int s = 0; s < NSLOT; ++s) {
        if (is_null_slot(s))
            CHECK_EMPTY_STATUS(sts[s]);
        else
            complete_slot(&p, s, &sts[s]);
    }
    finish(&p);
}

/* 3. */
static void step_waitany(int peer)
{
    Posted p;
    post_receives(&p, peer, 3);
    send_go(&p);
    for (int i = 0; i < active_slots(); ++i) {
        int index = -1;
        MPI_Status st;
        CHECK_MPI(MPI_Waitany(NSLOT, p.reqs, &index, &st));
        complete_slot(&p, index, &st);
    }
    int index = -1;
    MPI_Status st;
    status_poison(&st);
    CHECK_MPI(MPI_Waitany(NSLOT, p.reqs, &index, &st));
    CHECKF(index == MPI_UNDEFINED, "MPI_Waitany on all-null requests gave index %d", index);
    CHECK_EMPTY_STATUS(st);
    finish(&p);
}

/* 4. */
static void step_testany(int peer)
{
    Posted p;
    post_receives(&p, peer, 4);
    expect_nothing_done(&p);
    send_go(&p);
    int completed = 0;
    while (completed < active_slots()) {
        int index = -1;
        int flag = -1;
        MPI_Status st;
        CHECK_MPI(MPI_Testany(NSLOT, p.reqs, &index, &flag, &st));
        if (flag) {
            complete_slot(&p, index, &st);
            ++completed;
        } else {
            CHECKF(index == MPI_UNDEFINED, "MPI_Testany with flag false gave index %d", index);
        }
    }
    int index = -1;
    int flag = 0;
    MPI_Status st;
    status_poison(&st);
    CHECK_MPI(MPI_Testany(NSLOT, p.reqs, &index, &flag, &st));
    CHECKF(flag != 0 && index == MPI_UNDEFINED,
           "MPI_Testany on all-null requests: flag %d index %d", flag, index);
    CHECK_EMPTY_STATUS(st);
    finish(&p);
}

/* 5. and 6.: Waitsome or Testsome until done. */
static void step_some(int peer, int use_test)
{
    Posted p;
    post_receives(&p, peer, use_test ? 6 : 5);
    if (use_test)
        expect_nothing_done(&p);
    send_go(&p);
    int completed = 0;
    while (completed < active_slots()) {
        int outcount = -1;
        int indices[NSLOT];
        MPI_Status sts[NSLOT];
        if (use_test)
            CHECK_MPI(MPI_Testsome(NSLOT, p.reqs, &outcount, indices, sts));
        else
            CHECK_MPI(MPI_Waitsome(NSLOT, p.reqs, &outcount, indices, sts));
        CHECKF(outcount >= (use_test ? 0 : 1) && outcount <= active_slots() - completed,
               "%s gave outcount %d with %d requests pending", use_test ? "Testsome" : "Waitsome",
               outcount, active_slots() - completed);
        for (int i = 0; i < outcount; ++i)
            complete_slot(&p, indices[i], &sts[i]);
        completed += outcount;
    }
    int outcount = -1;
    int indices[NSLOT];
    MPI_Status sts[NSLOT];
    if (use_test)
        CHECK_MPI(MPI_Testsome(NSLOT, p.reqs, &outcount, indices, sts));
    else
        CHECK_MPI(MPI_Waitsome(NSLOT, p.reqs, &outcount, indices, sts));
    CHECKF(outcount == MPI_UNDEFINED, "%s on all-null requests gave outcount %d",
           use_test ? "Testsome" : "Waitsome", outcount);
    finish(&p);
}

/* 7. */
static void step_testall(int peer)
{
    Posted p;
    post_receives(&p, peer, 7);
    send_go(&p);
    int flag = 0;
    MPI_Status sts[NSLOT];
    while (!flag)
        CHECK_MPI(MPI_Testall(NSLOT, p.reqs, &flag, sts));
    for (int s = 0; s < NSLOT; ++s) {
        if (is_null_slot(s))
            CHECK_EMPTY_STATUS(sts[s]);
        else
            complete_slot(&p, s, &sts[s]);
    }
    finish(&p);
}

/* 8. Reverse-order waits.  The sender Isends everything, then waits for its
 * requests last to first. */
static void step_reverse_receiver(int peer)
{
    Posted p;
    post_receives(&p, peer, 8);
    send_go(&p);
    for (int s = NSLOT - 1; s >= 0; --s) {
        MPI_Status st;
        CHECK_MPI(MPI_Wait(&p.reqs[s], &st));
        if (is_null_slot(s))
            CHECK_EMPTY_STATUS(st);
        else
            complete_slot(&p, s, &st);
    }
    finish(&p);
}

static void step_reverse_sender(int peer)
{
    int go = -1;
    CHECK_MPI(MPI_Recv(&go, 1, MPI_INT, peer, TAG_GO, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    CHECKF(go == 8, "go for step 8 carried %d", go);
    int order[NSLOT];
    int n = send_order(order);
    MPI_Request reqs[NSLOT];
    unsigned char *bufs[NSLOT];
    for (int i = 0; i < n; ++i) {
        int s = order[i];
        bufs[i] = check_malloc((size_t)slot_bytes(s));
        pattern_fill(bufs[i], (size_t)slot_bytes(s), world_rank(), (uint64_t)slot_tag(8, s));
        CHECK_MPI(MPI_Isend(bufs[i], slot_bytes(s), MPI_BYTE, peer, slot_tag(8, s),
                            MPI_COMM_WORLD, &reqs[i]));
    }
    for (int i = n - 1; i >= 0; --i) {
        CHECK_MPI(MPI_Wait(&reqs[i], MPI_STATUS_IGNORE));
        CHECK(reqs[i] == MPI_REQUEST_NULL);
        free(bufs[i]);
    }
}

/* 9. The sender frees its send requests at once; it learns that the data
 * left its buffers from the receiver's ack. */
static void step_free_receiver(int peer)
{
    const int sizes[2] = {64, 1 << 20};
    for (int i = 0; i < 2; ++i) {
        unsigned char *buf = check_malloc((size_t)sizes[i]);
        MPI_Status st;
        CHECK_MPI(MPI_Recv(buf, sizes[i], MPI_BYTE, peer, 950 + i, MPI_COMM_WORLD, &st));
        int count = -1;
        CHECK_MPI(MPI_Get_count(&st, MPI_BYTE, &count));
        CHECKF(count == sizes[i], "message sent with a freed request: %d bytes, expected %d",
               count, sizes[i]);
        CHECK_PATTERN(buf, sizes[i], peer, 950u + (uint64_t)i);
        free(buf);
    }
    int ack = 1;
    CHECK_MPI(MPI_Send(&ack, 1, MPI_INT, peer, TAG_ACK, MPI_COMM_WORLD));
}

static void step_free_sender(int peer)
{
    const int sizes[2] = {64, 1 << 20};
    unsigned char *bufs[2];
    for (int i = 0; i < 2; ++i) {
        bufs[i] = check_malloc((size_t)sizes[i]);
        pattern_fill(bufs[i], (size_t)sizes[i], world_rank(), 950u + (uint64_t)i);
        MPI_Request req = MPI_REQUEST_NULL;
        CHECK_MPI(MPI_Isend(bufs[i], sizes[i], MPI_BYTE, peer, 950 + i, MPI_COMM_WORLD, &req));
        CHECK_MPI(MPI_Request_free(&req));
        CHECKF(req == MPI_REQUEST_NULL, "MPI_Request_free did not set the handle to null");
    }
    int ack = 0;
    CHECK_MPI(MPI_Recv(&ack, 1, MPI_INT, peer, TAG_ACK, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    CHECK(ack == 1);
    free(bufs[0]);
    free(bufs[1]);
}

int main(int argc, char **argv)
{
    CHECK_MPI(MPI_Init(&argc, &argv));
    int rank = world_rank();
    int size = world_size();
    CHECKF(size >= 2, "needs at least 2 ranks, has %d", size);

    null_requests();

    if (rank % 2 == 0 && rank + 1 < size) {
        int peer = rank + 1;
        step_waitall(peer);
        step_waitany(peer);
        step_testany(peer);
        step_some(peer, 0);
        step_some(peer, 1);
        step_testall(peer);
        step_reverse_receiver(peer);
        step_free_receiver(peer);
    } else if (rank % 2 == 1) {
        int peer = rank - 1;
        for (int step = 2; step <= 7; ++step)
            send_step(peer, step);
        step_reverse_sender(peer);
        step_free_sender(peer);
    }

    CHECK_MPI(MPI_Finalize());
    return 0;
}
