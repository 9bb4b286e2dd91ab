/*
 * p2p_ssend: a synchronous send completes only once the matching receive
 * has started (MPI-3.1 3.4), whatever the message size.
 *
 * Pairs (0,1), (2,3), ...: for 0 B, 4 B, 1 KiB and 1 MiB
 *   1. the even rank Issends the data (tag DATA), then calls MPI_Test
 *      repeatedly for a while: the flag must stay false, since the odd rank
 *      has not posted its receive;
 *   2. the even rank sends 'go' (tag GO); the odd rank receives it and only
 *      then receives the data;
 *   3. MPI_Wait on the Issend completes, and the data arrived intact.
 * Then blocking Ssend of 0 B and 16 MiB: the receiver checks the data, and
 * a reply sent after the receive shows the Ssend is not stuck.
 * An odd last rank has no partner and does nothing.
 */
#define _POSIX_C_SOURCE 200809L /* nanosleep */

#include "check.h"

#include <time.h>

enum { TAG_DATA = 1, TAG_GO = 2, TAG_REPLY = 3, TESTS = 20 };

static void nap_ms(int ms)
{
    struct timespec t = {0, (long)ms * 1000 * 1000};
    while (nanosleep(&t, &t) != 0) {
    }
}

/* 1-3 on the sending side. */
static void issend_side(int peer, int n)
{
    unsigned char *buf = check_malloc((size_t)n);
    pattern_fill(buf, (size_t)n, world_rank(), (uint64_t)n);
    MPI_Request req = MPI_REQUEST_NULL;
    CHECK_MPI(MPI_Issend(buf, n, MPI_BYTE, peer, TAG_DATA, MPI_COMM_WORLD, &req));

    /* 1. Give the library time and calls to make progress; the receiver
     * cannot have posted the receive, so the send must not complete. */
    for (int i = 0; i < TESTS; ++i) {
        int flag = -1;
        CHECK_MPI(MPI_Test(&req, &flag, MPI_STATUS_IGNORE));
        CHECKF(flag == 0, "MPI_Issend of %d bytes completed (test %d) before the receiver "
               "posted its receive", n, i);
        CHECK(req != MPI_REQUEST_NULL);
        nap_ms(1);
    }

    /* 2. */
    int go = n;
    CHECK_MPI(MPI_Send(&go, 1, MPI_INT, peer, TAG_GO, MPI_COMM_WORLD));

    /* 3. */
    CHECK_MPI(MPI_Wait(&req, MPI_STATUS_IGNORE));
    CHECK(req == MPI_REQUEST_NULL);
    free(buf);
}

static void issend_receiver(int peer, int n)
{
    int go = -1;
    CHECK_MPI(MPI_Recv(&go, 1, MPI_INT, peer, TAG_GO, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    CHECKF(go == n, "go message carried %d, expected %d", go, n);
    unsigned char *buf = check_malloc((size_t)n);
    MPI_Status st;
    CHECK_MPI(MPI_Recv(buf, n, MPI_BYTE, peer, TAG_DATA, MPI_COMM_WORLD, &st));
    int count = -1;
    CHECK_MPI(MPI_Get_count(&st, MPI_BYTE, &count));
    CHECKF(count == n, "Issend of %d bytes arrived as %d", n, count);
    CHECK_PATTERN(buf, n, peer, (uint64_t)n);
    free(buf);
}

/* Blocking Ssend; the receiver answers after its receive, and the sender
 * takes the answer only after Ssend returned. */
static void ssend_side(int peer, int n)
{
    unsigned char *buf = check_malloc((size_t)n);
    pattern_fill(buf, (size_t)n, world_rank(), 5000u + (uint64_t)n);
    CHECK_MPI(MPI_Ssend(buf, n, MPI_BYTE, peer, TAG_DATA, MPI_COMM_WORLD));
    int reply = -1;
    CHECK_MPI(MPI_Recv(&reply, 1, MPI_INT, peer, TAG_REPLY, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    CHECKF(reply == n, "reply to the Ssend of %d bytes carried %d", n, reply);
    free(buf);
}

static void ssend_receiver(int peer, int n)
{
    unsigned char *buf = check_malloc((size_t)n);
    MPI_Status st;
    CHECK_MPI(MPI_Recv(buf, n, MPI_BYTE, peer, TAG_DATA, MPI_COMM_WORLD, &st));
    int count = -1;
    CHECK_MPI(MPI_Get_count(&st, MPI_BYTE, &count));
    CHECKF(count == n, "Ssend of %d bytes arrived as %d", n, count);
    CHECK_PATTERN(buf, n, peer, 5000u + (uint64_t)n);
    CHECK_MPI(MPI_Send(&n, 1, MPI_INT, peer, TAG_REPLY, MPI_COMM_WORLD));
    free(buf);
}

int main(int argc, char **argv)
{
    CHECK_MPI(MPI_Init(&argc, &argv));
    int rank = world_rank();
    int size = world_size();
    CHECKF(size >= 2, "needs at least 2 ranks, has %d", size);
    int sender = rank % 2 == 0 && rank + 1 < size;
    int receiver = rank % 2 == 1;

    const int isizes[] = {0, 4, 1024, 1 << 20};
    for (int i = 0; i < 4; ++i) {
        if (sender)
            issend_side(rank + 1, isizes[i]);
        else if (receiver)
            issend_receiver(rank - 1, isizes[i]);
    }

    const int ssizes[] = {0, 1 << 24};
    for (int i = 0; i < 2; ++i) {
        if (sender)
            ssend_side(rank + 1, ssizes[i]);
        else if (receiver)
            ssend_receiver(rank - 1, ssizes[i]);
    }

    CHECK_MPI(MPI_Finalize());
    return 0;
}
