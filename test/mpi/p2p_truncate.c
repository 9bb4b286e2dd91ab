/*
 * p2p_truncate: a message longer than the receive buffer gives an error of
 * class MPI_ERR_TRUNCATE under MPI_ERRORS_RETURN, writes nothing past the
 * buffer, and leaves the job working.
 *
 * Pairs (0,1), (2,3), ...: the even rank sends, the odd rank receives.  For
 * a small (eager-sized) and a large (1 MiB) message, received by Recv and by
 * Irecv + Wait, the receive buffer is shorter than the message; after each
 * truncation a correctly sized message on the same tag still arrives
 * intact, which shows the truncated one was consumed and the channel is in
 * order.  An odd last rank has no partner and only checks its handler.
 */
#include "check.h"

enum { GUARD = 256, GUARD_BYTE = 0xC3, TAG = 4 };

static void check_errhandler_is_return(void)
{
    MPI_Errhandler eh = MPI_ERRHANDLER_NULL;
    CHECK_MPI(MPI_Comm_get_errhandler(MPI_COMM_WORLD, &eh));
    CHECKF(eh == MPI_ERRORS_RETURN, "MPI_COMM_WORLD's handler is not MPI_ERRORS_RETURN");
}

/* Sends a message of `big` bytes that will be truncated, then one of
 * `small` bytes that fits. */
static void send_pair(int dest, int big, int small, uint64_t seed)
{
    unsigned char *buf = check_malloc((size_t)big);
    pattern_fill(buf, (size_t)big, world_rank(), seed);
    /* The sender is not told about the receiver's truncation. */
    CHECK_MPI(MPI_Send(buf, big, MPI_BYTE, dest, TAG, MPI_COMM_WORLD));
    pattern_fill(buf, (size_t)small, world_rank(), seed + 1);
    CHECK_MPI(MPI_Send(buf, small, MPI_BYTE, dest, TAG, MPI_COMM_WORLD));
    free(buf);
}

/* Receives a `big`-byte message into room for `room` bytes (room < big),
 * expecting MPI_ERR_TRUNCATE, then a `small`-byte message that fits. */
static void receive_pair(int src, int big, int room, int small, uint64_t seed,
                         int nonblocking)
{
    unsigned char *buf = check_malloc((size_t)room + GUARD);
    memset(buf, GUARD_BYTE, (size_t)room + GUARD);
    int rc;
    if (nonblocking) {
        MPI_Request req = MPI_REQUEST_NULL;
        CHECK_MPI(MPI_Irecv(buf, room, MPI_BYTE, src, TAG, MPI_COMM_WORLD, &req));
        rc = MPI_Wait(&req, MPI_STATUS_IGNORE);
        CHECKF(req == MPI_REQUEST_NULL, "the request of a truncated receive was not freed");
    } else {
        rc = MPI_Recv(buf, room, MPI_BYTE, src, TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    CHECKF(rc != MPI_SUCCESS, "%s of %d bytes into room for %d returned MPI_SUCCESS",
           nonblocking ? "Irecv+Wait" : "Recv", big, room);
    int cls = check_error_class(rc);
    CHECKF(cls == MPI_ERR_TRUNCATE, "%s of %d bytes into room for %d: error class %d, not "
           "MPI_ERR_TRUNCATE (%d)", nonblocking ? "Irecv+Wait" : "Recv", big, room, cls,
           MPI_ERR_TRUNCATE);
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    CHECK_MPI(MPI_Error_string(rc, text, &len));
    CHECKF(len > 0 && (int)strlen(text) == len, "MPI_Error_string of the truncation error gave "
           "length %d", len);
    for (int i = 0; i < GUARD; ++i)
        CHECKF(buf[room + i] == GUARD_BYTE,
               "truncated receive wrote byte %d past the end of its %d-byte buffer", i, room);

    /* The next message on the same channel is intact. */
    MPI_Status st;
    memset(buf, 0, (size_t)room);
    CHECK_MPI(MPI_Recv(buf, room, MPI_BYTE, src, TAG, MPI_COMM_WORLD, &st));
    int count = -1;
    CHECK_MPI(MPI_Get_count(&st, MPI_BYTE, &count));
    CHECKF(count == small, "message after the truncated one has %d bytes, expected %d", count,
           small);
    CHECK_PATTERN(buf, small, src, seed + 1);
    free(buf);
}

int main(int argc, char **argv)
{
    CHECK_MPI(MPI_Init(&argc, &argv));
    int rank = world_rank();
    int size = world_size();
    CHECKF(size >= 2, "needs at least 2 ranks, has %d", size);
    CHECK_MPI(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    check_errhandler_is_return();

    /* {message bytes, receive room, follow-up bytes} */
    const int cases[][3] = {
        {100, 40, 40},             /* small message, small room */
        {1, 0, 0},                 /* one byte into no room */
        {1 << 20, 1 << 16, 1000},  /* large message */
        {4 << 20, 100, 100},       /* large message, tiny room */
    };
    const int ncases = (int)(sizeof cases / sizeof cases[0]);

    for (int nonblocking = 0; nonblocking < 2; ++nonblocking) {
        for (int c = 0; c < ncases; ++c) {
            uint64_t seed = (uint64_t)(c * 2 + nonblocking) * 10;
            if (rank % 2 == 0 && rank + 1 < size)
                send_pair(rank + 1, cases[c][0], cases[c][2], seed);
            else if (rank % 2 == 1)
                receive_pair(rank - 1, cases[c][0], cases[c][1], cases[c][2], seed,
                             nonblocking);
        }
    }

    /* The job still works: one message around the ring. */
    int token = rank;
    CHECK_MPI(MPI_Sendrecv_replace(&token, 1, MPI_INT, (rank + 1) % size, 5,
                                   (rank + size - 1) % size, 5, MPI_COMM_WORLD,
                                   MPI_STATUS_IGNORE));
    CHECKF(token == (rank + size - 1) % size, "ring after truncations carried %d", token);

    CHECK_MPI(MPI_Finalize());
    return 0;
}
