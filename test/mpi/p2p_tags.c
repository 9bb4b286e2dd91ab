/*
 * p2p_tags: matching by tag and source, the wildcards, MPI_PROC_NULL and the
 * ignored statuses.
 *
 * 1. Specific tags pick messages out of order: rank 1 sends tags 5, 3, 9;
 *    rank 0 receives tag 9, then 3, then MPI_ANY_TAG (which must give 5).
 * 2. MPI_ANY_TAG receives take one sender's messages in the order sent.
 * 3. Posted receives are matched in posting order: Irecv(tag 5) then
 *    Irecv(MPI_ANY_TAG), both posted before the messages exist (rank 1
 *    sends only after a 'go'); rank 1 sends tag 6, then 5: the tag-6
 *    message goes to the wildcard receive.
 * 4. MPI_ANY_SOURCE with MPI_ANY_TAG, posted before the messages exist: one
 *    message from every other rank, each identified correctly by
 *    status.MPI_SOURCE and status.MPI_TAG.
 * 5. MPI_PROC_NULL: sends succeed at once; receives give source
 *    MPI_PROC_NULL, tag MPI_ANY_TAG, count 0 and leave the buffer alone.
 * 6. MPI_STATUS_IGNORE and MPI_STATUSES_IGNORE; the tag 32767 (the least
 *    MPI_TAG_UB allowed) works.
 *
 * Steps 1-3 run between ranks 0 and 1; step 4 uses all ranks.  Every step
 * ends with all of its messages received, so no step's wildcard receives can
 * match another step's messages.
 */
#include "check.h"

enum { TAG_GO = 1000 };

static void send_int(int value, int dest, int tag)
{
    CHECK_MPI(MPI_Send(&value, 1, MPI_INT, dest, tag, MPI_COMM_WORLD));
}

static int recv_int(int src, int tag, MPI_Status *st)
{
    int v = -1;
    CHECK_MPI(MPI_Recv(&v, 1, MPI_INT, src, tag, MPI_COMM_WORLD, st));
    return v;
}

#define CHECK_STATUS(st, src, tag)                                                          \
    CHECKF((st).MPI_SOURCE == (src) && (st).MPI_TAG == (tag),                              \
           "status source %d tag %d, expected source %d tag %d", (st).MPI_SOURCE,           \
           (st).MPI_TAG, (src), (tag))

/* 1. */
static void out_of_order_tags(int rank)
{
    if (rank == 1) {
        send_int(505, 0, 5);
        send_int(303, 0, 3);
        send_int(909, 0, 9);
    } else if (rank == 0) {
        MPI_Status st;
        int v = recv_int(1, 9, &st);
        CHECKF(v == 909, "receive for tag 9 got %d", v);
        CHECK_STATUS(st, 1, 9);
        v = recv_int(1, 3, &st);
        CHECKF(v == 303, "receive for tag 3 got %d", v);
        CHECK_STATUS(st, 1, 3);
        v = recv_int(1, MPI_ANY_TAG, &st);
        CHECKF(v == 505, "MPI_ANY_TAG receive got %d, expected the tag-5 message", v);
        CHECK_STATUS(st, 1, 5);
    }
}

/* 2. */
static void any_tag_keeps_order(int rank)
{
    enum { K = 20 };
    if (rank == 1) {
        for (int i = 0; i < K; ++i)
            send_int(i, 0, 40 + (i * 7) % K);
    } else if (rank == 0) {
        for (int i = 0; i < K; ++i) {
            MPI_Status st;
            int v = recv_int(1, MPI_ANY_TAG, &st);
            CHECKF(v == i, "MPI_ANY_TAG receive %d got message %d", i, v);
            CHECK_STATUS(st, 1, 40 + (i * 7) % K);
        }
    }
}

/* 3. */
static void posted_receives_match_in_order(int rank)
{
    if (rank == 0) {
        int a = -1;
        int b = -1;
        MPI_Request reqs[2];
        CHECK_MPI(MPI_Irecv(&a, 1, MPI_INT, 1, 5, MPI_COMM_WORLD, &reqs[0]));
        CHECK_MPI(MPI_Irecv(&b, 1, MPI_INT, 1, MPI_ANY_TAG, MPI_COMM_WORLD, &reqs[1]));
        send_int(0, 1, TAG_GO);
        MPI_Status st[2];
        CHECK_MPI(MPI_Waitall(2, reqs, st));
        CHECKF(a == 55 && b == 66, "tag-5 receive got %d, wildcard receive got %d", a, b);
        CHECK_STATUS(st[0], 1, 5);
        CHECK_STATUS(st[1], 1, 6);
    } else if (rank == 1) {
        (void)recv_int(0, TAG_GO, MPI_STATUS_IGNORE);
        send_int(66, 0, 6);
        send_int(55, 0, 5);
    }
}

/* 4. Rank 0 posts all its wildcard receives before any message exists,
 * then tells the others to send.  The senders wait for rank 0's ack before
 * going on, so their later messages cannot reach these receives. */
static void any_source_any_tag(int rank, int size)
{
    if (rank != 0) {
        int go = recv_int(0, TAG_GO, MPI_STATUS_IGNORE);
        CHECKF(go == rank, "go carried %d", go);
        send_int(rank, 0, 100 + rank);
        int ack = recv_int(0, TAG_GO, MPI_STATUS_IGNORE);
        CHECKF(ack == -rank, "ack carried %d", ack);
        return;
    }
    int n = size - 1;
    int *vals = check_malloc(sizeof(int) * (size_t)(n + 1));
    MPI_Request *reqs = check_malloc(sizeof(MPI_Request) * (size_t)(n + 1));
    MPI_Status *sts = check_malloc(sizeof(MPI_Status) * (size_t)(n + 1));
    for (int i = 0; i < n; ++i)
        CHECK_MPI(MPI_Irecv(&vals[i], 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD,
                            &reqs[i]));
    for (int r = 1; r < size; ++r)
        send_int(r, r, TAG_GO);
    CHECK_MPI(MPI_Waitall(n, reqs, sts));
    char *seen = check_malloc((size_t)size);
    memset(seen, 0, (size_t)size);
    for (int i = 0; i < n; ++i) {
        int v = vals[i];
        CHECKF(v >= 1 && v < size && !seen[v], "wildcard receive %d got payload %d", i, v);
        seen[v] = 1;
        CHECK_STATUS(sts[i], v, 100 + v);
    }
    for (int r = 1; r < size; ++r)
        send_int(-r, r, TAG_GO);
    free(seen);
    free(vals);
    free(reqs);
    free(sts);
}

/* 5. */
static void proc_null(void)
{
    int buf[4] = {1, 2, 3, 4};
    CHECK_MPI(MPI_Send(buf, 4, MPI_INT, MPI_PROC_NULL, 7, MPI_COMM_WORLD));
    CHECK_MPI(MPI_Ssend(buf, 4, MPI_INT, MPI_PROC_NULL, 7, MPI_COMM_WORLD));

    MPI_Status st;
    status_poison(&st);
    CHECK_MPI(MPI_Recv(buf, 4, MPI_INT, MPI_PROC_NULL, 7, MPI_COMM_WORLD, &st));
    int count = -1;
    CHECK_MPI(MPI_Get_count(&st, MPI_INT, &count));
    CHECKF(st.MPI_SOURCE == MPI_PROC_NULL && st.MPI_TAG == MPI_ANY_TAG && count == 0,
           "receive from MPI_PROC_NULL: source %d tag %d count %d", st.MPI_SOURCE, st.MPI_TAG,
           count);
    CHECKF(buf[0] == 1 && buf[1] == 2 && buf[2] == 3 && buf[3] == 4,
           "receive from MPI_PROC_NULL changed the buffer");

    /* Nonblocking: complete at once. */
    MPI_Request reqs[3];
    CHECK_MPI(MPI_Isend(buf, 4, MPI_INT, MPI_PROC_NULL, 7, MPI_COMM_WORLD, &reqs[0]));
    CHECK_MPI(MPI_Issend(buf, 4, MPI_INT, MPI_PROC_NULL, 7, MPI_COMM_WORLD, &reqs[1]));
    CHECK_MPI(MPI_Irecv(buf, 4, MPI_INT, MPI_PROC_NULL, MPI_ANY_TAG, MPI_COMM_WORLD, &reqs[2]));
    int flag = 0;
    MPI_Status sts[3];
    for (int i = 0; i < 3; ++i)
        status_poison(&sts[i]);
    CHECK_MPI(MPI_Testall(3, reqs, &flag, sts));
    CHECKF(flag != 0, "requests on MPI_PROC_NULL are not complete at once");
    CHECK(reqs[0] == MPI_REQUEST_NULL && reqs[1] == MPI_REQUEST_NULL &&
          reqs[2] == MPI_REQUEST_NULL);
    CHECK_MPI(MPI_Get_count(&sts[2], MPI_INT, &count));
    CHECKF(count == 0, "Irecv from MPI_PROC_NULL: count %d", count);
#if !defined(MPICH_NUMVERSION) || MPICH_NUMVERSION >= 40200000
    /* MPICH before 4.2 returns source 0 and tag 0 here (pmodels/mpich
     * issue 6805), so the reference run skips this one check. */
    CHECKF(sts[2].MPI_SOURCE == MPI_PROC_NULL && sts[2].MPI_TAG == MPI_ANY_TAG,
           "Irecv from MPI_PROC_NULL: source %d tag %d", sts[2].MPI_SOURCE, sts[2].MPI_TAG);
#endif
    CHECKF(buf[0] == 1 && buf[3] == 4, "Irecv from MPI_PROC_NULL changed the buffer");

    /* Sendrecv with both partners MPI_PROC_NULL. */
    int out = 9;
    int in = -1;
    status_poison(&st);
    CHECK_MPI(MPI_Sendrecv(&out, 1, MPI_INT, MPI_PROC_NULL, 1, &in, 1, MPI_INT, MPI_PROC_NULL, 1,
                           MPI_COMM_WORLD, &st));
    CHECKF(in == -1 && st.MPI_SOURCE == MPI_PROC_NULL && st.MPI_TAG == MPI_ANY_TAG,
           "Sendrecv with MPI_PROC_NULL: buffer %d, source %d, tag %d", in, st.MPI_SOURCE,
           st.MPI_TAG);
}

/* 6. */
static void ignored_statuses(int rank, int size)
{
    int right = (rank + 1) % size;
    int left = (rank + size - 1) % size;
    int vals[3] = {-1, -1, -1};
    MPI_Request reqs[3];
    for (int i = 0; i < 3; ++i)
        CHECK_MPI(MPI_Irecv(&vals[i], 1, MPI_INT, left, 32767, MPI_COMM_WORLD, &reqs[i]));
    send_int(rank * 10 + 0, right, 32767);
    send_int(rank * 10 + 1, right, 32767);
    send_int(rank * 10 + 2, right, 32767);
    CHECK_MPI(MPI_Wait(&reqs[0], MPI_STATUS_IGNORE));
    CHECK(reqs[0] == MPI_REQUEST_NULL);
    CHECK_MPI(MPI_Waitall(2, &reqs[1], MPI_STATUSES_IGNORE));
    CHECK(reqs[1] == MPI_REQUEST_NULL && reqs[2] == MPI_REQUEST_NULL);
    for (int i = 0; i < 3; ++i)
        CHECKF(vals[i] == left * 10 + i, "message %d on tag 32767 from rank %d carried %d", i,
               left, vals[i]);

    send_int(rank, right, 32766);
    int v = recv_int(left, 32766, MPI_STATUS_IGNORE);
    CHECKF(v == left, "Recv with MPI_STATUS_IGNORE got %d, expected %d", v, left);
}

int main(int argc, char **argv)
{
    CHECK_MPI(MPI_Init(&argc, &argv));
    int rank = world_rank();
    int size = world_size();
    CHECKF(size >= 2, "needs at least 2 ranks, has %d", size);

    out_of_order_tags(rank);
    any_tag_keeps_order(rank);
    posted_receives_match_in_order(rank);
    /* Steps 1-3 are over on rank 0 only once it received everything rank 1
     * sent, and no rank sends to rank 0 in step 4 before its 'go', so step
     * 4's wildcard receives cannot see other steps' messages. */
    any_source_any_tag(rank, size);
    proc_null();
    ignored_statuses(rank, size);

    CHECK_MPI(MPI_Finalize());
    return 0;
}
