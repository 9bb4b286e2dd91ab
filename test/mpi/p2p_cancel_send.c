/*
 * p2p_cancel_send: MPI_Cancel of sends (MPI-3.1 3.8.4).
 *
 * Once a send is marked for cancellation, a wait on it returns whatever
 * the receiver does, and either the send is cancelled (the receiver never
 * gets the message) or it completes (the receiver gets it), never both.
 * A send that no receive can match can therefore only end cancelled.
 *
 * (p2p_cancel_unmatched.c cancels sends while their receiver waits
 * elsewhere.)
 *
 * 1. Races: rank 0 starts a 300 KiB send while rank 1 posts its receive,
 *    and cancels it at once or after a short pause.  Rank 0 tells rank 1
 *    whether the cancel took.  If it did, rank 1's receive must still be
 *    pending, and rank 1 cancels it; if not, the receive completes with
 *    the data.  Repeated with a synchronous 16-byte send, and with sends of
 *    16 KiB and 900 bytes (eager under the usual limits; in shmpi longer
 *    than a cell, so they may go through the sender's stream buffer).
 *    Before each send, rank 0 sends three 8-byte messages on another tag,
 *    which rank 1 takes after the race: where the ring between the two is
 *    tiny (meson runs this program with 2-cell rings too), they fill it,
 *    and the raced send still waits in rank 0's queue when it is cancelled.
 * 2. On every rank: an MPI_Issend to itself that nothing receives, and a
 *    large MPI_Isend to itself, cancelled; then a message to itself on the
 *    same tag arrives as the only one.
 * Rank pairs (0,1), (2,3), ... run step 1; a last odd rank only 2.
 */
#include "cancel_send.h"

enum {
    TAG = 5,
    TAG_TOLD = 6,
    BIG = 1 << 20,
    RACES = 40,
    RACE_BYTES = 300 * 1024,
    MID_BYTES = 16 * 1024,
    SHORT_BYTES = 900,
    TAG_FILL = 7,
    FILLERS = 3,
};

/* Step 1: one race; `sync` picks a 16-byte MPI_Issend, else an MPI_Isend
 * of `bytes`. */
static void race(int rank, int peer, int sender, int round, int sync, int bytes, MPI_Comm comm)
{
    const int n = sync ? 16 : bytes;
    unsigned char *buf = malloc((size_t)n);
    MPI_Request r, fills[FILLERS];
    MPI_Status st;
    long filler[FILLERS];
    if (rank == sender) {
        for (int i = 0; i < FILLERS; ++i) {
            filler[i] = 1000L * round + i;
            CHECK_MPI(MPI_Isend(&filler[i], 1, MPI_LONG, peer, TAG_FILL, comm, &fills[i]));
        }
        fill(buf, n, round);
        if (sync) {
            CHECK_MPI(MPI_Issend(buf, n, MPI_BYTE, peer, TAG, comm, &r));
        } else {
            CHECK_MPI(MPI_Isend(buf, n, MPI_BYTE, peer, TAG, comm, &r));
        }
        for (volatile int spin = 0; spin < (round % 4) * 2000; ++spin) {
        }
        CHECK_MPI(MPI_Cancel(&r));
        CHECK_MPI(MPI_Wait(&r, &st));
        int cancelled = -1;
        CHECK_MPI(MPI_Test_cancelled(&st, &cancelled));
        CHECK_MPI(MPI_Send(&cancelled, 1, MPI_INT, peer, TAG_TOLD, comm));
        MPI_Status fill_st[FILLERS];
        CHECK_MPI(MPI_Waitall(FILLERS, fills, fill_st));
    } else {
        memset(buf, 0, (size_t)n);
        CHECK_MPI(MPI_Irecv(buf, n, MPI_BYTE, peer, TAG, comm, &r));
        int cancelled = -1;
        CHECK_MPI(MPI_Recv(&cancelled, 1, MPI_INT, peer, TAG_TOLD, comm, MPI_STATUS_IGNORE));
        if (cancelled) {
            int done = 1;
            CHECK_MPI(MPI_Test(&r, &done, &st));
            CHECKF(!done, "round %d: the send was cancelled, yet the receive got it", round);
            CHECK_MPI(MPI_Cancel(&r));
            CHECK_MPI(MPI_Wait(&r, &st));
            int flag = 0;
            CHECK_MPI(MPI_Test_cancelled(&st, &flag));
            CHECKF(flag, "round %d: a receive with nothing to match was not cancelled", round);
        } else {
            CHECK_MPI(MPI_Wait(&r, &st));
            int got = -1;
            CHECK_MPI(MPI_Get_count(&st, MPI_BYTE, &got));
            CHECKF(got == n, "round %d: %d bytes of %d", round, got, n);
            expect(buf, n, round, "raced message");
        }
        for (int i = 0; i < FILLERS; ++i) {
            long got = -1;
            CHECK_MPI(MPI_Recv(&got, 1, MPI_LONG, peer, TAG_FILL, comm, MPI_STATUS_IGNORE));
            CHECKF(got == 1000L * round + i, "round %d: filler %d is %ld", round, i, got);
        }
    }
    free(buf);
}

/* Step 2. */
static void to_myself(int rank)
{
    MPI_Comm self = MPI_COMM_SELF;
    unsigned char small[16], *big = malloc(BIG), got[16];
    fill(small, 16, 7);
    fill(big, BIG, 8);
    MPI_Request r;
    CHECK_MPI(MPI_Issend(small, 16, MPI_BYTE, 0, TAG, self, &r));
    expect_cancelled(&r, "MPI_Issend to itself");
    CHECK_MPI(MPI_Isend(big, BIG, MPI_BYTE, 0, TAG, self, &r));
    expect_cancelled(&r, "1 MiB MPI_Isend to itself");
    fill(small, 16, 9 + rank);
    MPI_Status st;
    CHECK_MPI(MPI_Sendrecv(small, 16, MPI_BYTE, 0, TAG, got, 16, MPI_BYTE, 0, TAG, self, &st));
    expect(got, 16, 9 + rank, "message to itself after the cancelled ones");
    int left = 1;
    CHECK_MPI(MPI_Iprobe(0, MPI_ANY_TAG, self, &left, &st));
    CHECKF(!left, "a cancelled message to itself is left over (tag %d)", st.MPI_TAG);
    free(big);
}

int main(int argc, char **argv)
{
    CHECK_MPI(MPI_Init(&argc, &argv));
    int rank = -1;
    CHECK_MPI(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    to_myself(rank);
    int me = -1;
    MPI_Comm pair = world_pair(&me);
    if (pair != MPI_COMM_NULL) {
        for (int round = 0; round < RACES; ++round) {
            const int bytes = round % 3 == 0 ? RACE_BYTES : round % 2 == 0 ? MID_BYTES : SHORT_BYTES;
            race(me, 1 - me, round % 2, round, round % 3 == 2, bytes, pair);
        }
        CHECK_MPI(MPI_Comm_free(&pair));
    }
    CHECK_MPI(MPI_Finalize());
    return 0;
}
