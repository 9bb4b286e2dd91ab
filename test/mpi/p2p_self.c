/*
 * p2p_self: a rank sends to itself, on MPI_COMM_WORLD (to its own rank) and
 * on MPI_COMM_SELF (to rank 0).
 *
 * - Isend to self, then Recv, then Wait: for every size from 0 B to 1 MiB
 *   (the nonblocking send must not need the receive to be posted first).
 * - Irecv from self, then a blocking Send and an Ssend: the receive is
 *   already posted, so neither may block forever.
 * - Several Isends to self with different tags, received in another order.
 * - Sendrecv with itself as both partners.
 * - The two communicators keep their messages apart.
 * Every received byte is checked against the sender's pattern.
 */
#include "check.h"

static const int sizes[] = {0, 1, 7, 8, 1024, 65536, 1 << 20};
enum { NSIZES = sizeof sizes / sizeof sizes[0] };

/* Isend to self, Recv, Wait, on `comm` where this process has rank `me`. */
static void isend_then_recv(MPI_Comm comm, int me, int pattern_rank)
{
    for (int s = 0; s < NSIZES; ++s) {
        int n = sizes[s];
        unsigned char *out = check_malloc((size_t)n);
        unsigned char *in = check_malloc((size_t)n + 16);
        pattern_fill(out, (size_t)n, pattern_rank, (uint64_t)n);
        memset(in, 0, (size_t)n + 16);

        MPI_Request req = MPI_REQUEST_NULL;
        CHECK_MPI(MPI_Isend(out, n, MPI_BYTE, me, 10 + s, comm, &req));
        MPI_Status st;
        CHECK_MPI(MPI_Recv(in, n + 16, MPI_BYTE, me, 10 + s, comm, &st));
        CHECK_MPI(MPI_Wait(&req, MPI_STATUS_IGNORE));
        CHECK(req == MPI_REQUEST_NULL);

        int count = -1;
        CHECK_MPI(MPI_Get_count(&st, MPI_BYTE, &count));
        CHECKF(count == n, "self message of %d bytes received as %d", n, count);
        CHECKF(st.MPI_SOURCE == me && st.MPI_TAG == 10 + s, "status source %d tag %d",
               st.MPI_SOURCE, st.MPI_TAG);
        CHECK_PATTERN(in, n, pattern_rank, (uint64_t)n);
        free(out);
        free(in);
    }
}

/* The receive is posted first, so a blocking Send and an Ssend to self both
 * complete. */
static void irecv_then_send(MPI_Comm comm, int me, int pattern_rank)
{
    for (int s = 0; s < NSIZES; ++s) {
        int n = sizes[s];
        unsigned char *out = check_malloc((size_t)n);
        unsigned char *in = check_malloc((size_t)n);
        pattern_fill(out, (size_t)n, pattern_rank, 1000u + (uint64_t)n);

        for (int mode = 0; mode < 2; ++mode) {
            memset(in, 0, (size_t)n);
            MPI_Request req = MPI_REQUEST_NULL;
            CHECK_MPI(MPI_Irecv(in, n, MPI_BYTE, me, 20, comm, &req));
            if (mode == 0)
                CHECK_MPI(MPI_Send(out, n, MPI_BYTE, me, 20, comm));
            else
                CHECK_MPI(MPI_Ssend(out, n, MPI_BYTE, me, 20, comm));
            MPI_Status st;
            CHECK_MPI(MPI_Wait(&req, &st));
            int count = -1;
            CHECK_MPI(MPI_Get_count(&st, MPI_BYTE, &count));
            CHECKF(count == n, "%s to self of %d bytes received as %d",
                   mode == 0 ? "Send" : "Ssend", n, count);
            CHECK_PATTERN(in, n, pattern_rank, 1000u + (uint64_t)n);
        }
        free(out);
        free(in);
    }
}

/* Messages to self with distinct tags, received newest first by tag; and
 * messages with one tag, received in the order sent. */
static void tags_to_self(MPI_Comm comm, int me)
{
    enum { K = 16 };
    int out[K];
    MPI_Request reqs[K];
    for (int i = 0; i < K; ++i) {
        out[i] = 7000 + i;
        CHECK_MPI(MPI_Isend(&out[i], 1, MPI_INT, me, 100 + i, comm, &reqs[i]));
    }
    for (int i = K - 1; i >= 0; --i) {
        int v = -1;
        MPI_Status st;
        CHECK_MPI(MPI_Recv(&v, 1, MPI_INT, me, 100 + i, comm, &st));
        CHECKF(v == 7000 + i && st.MPI_TAG == 100 + i, "tag %d delivered %d (status tag %d)",
               100 + i, v, st.MPI_TAG);
    }
    CHECK_MPI(MPI_Waitall(K, reqs, MPI_STATUSES_IGNORE));

    for (int i = 0; i < K; ++i)
        CHECK_MPI(MPI_Isend(&out[i], 1, MPI_INT, me, 200, comm, &reqs[i]));
    for (int i = 0; i < K; ++i) {
        int v = -1;
        CHECK_MPI(MPI_Recv(&v, 1, MPI_INT, me, 200, comm, MPI_STATUS_IGNORE));
        CHECKF(v == 7000 + i, "message %d of one tag to self delivered %d (overtaken)", i, v);
    }
    CHECK_MPI(MPI_Waitall(K, reqs, MPI_STATUSES_IGNORE));
}

static void sendrecv_self(MPI_Comm comm, int me, int pattern_rank)
{
    int n = 1 << 20;
    unsigned char *out = check_malloc((size_t)n);
    unsigned char *in = check_malloc((size_t)n);
    pattern_fill(out, (size_t)n, pattern_rank, 77);
    MPI_Status st;
    CHECK_MPI(MPI_Sendrecv(out, n, MPI_BYTE, me, 30, in, n, MPI_BYTE, me, 30, comm, &st));
    CHECKF(st.MPI_SOURCE == me && st.MPI_TAG == 30, "status source %d tag %d", st.MPI_SOURCE,
           st.MPI_TAG);
    CHECK_PATTERN(in, n, pattern_rank, 77);
    free(out);
    free(in);
}

/* A message on one communicator never matches a receive on the other, even
 * with the same source rank and tag. */
static void comms_kept_apart(int rank)
{
    int on_world = 111;
    int on_self = 222;
    MPI_Request reqs[2];
    CHECK_MPI(MPI_Isend(&on_world, 1, MPI_INT, rank, 300, MPI_COMM_WORLD, &reqs[0]));
    CHECK_MPI(MPI_Isend(&on_self, 1, MPI_INT, 0, 300, MPI_COMM_SELF, &reqs[1]));
    int v = -1;
    CHECK_MPI(MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_SELF,
                       MPI_STATUS_IGNORE));
    CHECKF(v == on_self, "receive on MPI_COMM_SELF got %d, the MPI_COMM_WORLD message", v);
    CHECK_MPI(MPI_Recv(&v, 1, MPI_INT, rank, 300, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    CHECKF(v == on_world, "receive on MPI_COMM_WORLD got %d", v);
    CHECK_MPI(MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE));
}

int main(int argc, char **argv)
{
    CHECK_MPI(MPI_Init(&argc, &argv));
    int rank = world_rank();

    isend_then_recv(MPI_COMM_WORLD, rank, rank);
    irecv_then_send(MPI_COMM_WORLD, rank, rank);
    tags_to_self(MPI_COMM_WORLD, rank);
    sendrecv_self(MPI_COMM_WORLD, rank, rank);

    isend_then_recv(MPI_COMM_SELF, 0, rank);
    irecv_then_send(MPI_COMM_SELF, 0, rank);
    tags_to_self(MPI_COMM_SELF, 0);
    sendrecv_self(MPI_COMM_SELF, 0, rank);

    comms_kept_apart(rank);

    CHECK_MPI(MPI_Finalize());
    return 0;
}
