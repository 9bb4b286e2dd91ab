/*
 * Traffic on different communicators never mixes: the same source and tag
 * on several communicators at once (world, two dups, a congruent split, a
 * parity split), receives with MPI_ANY_SOURCE / MPI_ANY_TAG, unexpected
 * messages received communicator by communicator in another order than
 * they were sent, and collectives on one communicator while point-to-point
 * receives are posted on another.
 */
#include "check.h"

enum { NCOMM = 5, TAG = 5, NMSG = 40 };

int main(int argc, char **argv)
{
    CHECK_MPI(MPI_Init(&argc, &argv));
    const int rank = world_rank();
    const int size = world_size();

    MPI_Comm comms[NCOMM];
    comms[0] = MPI_COMM_WORLD;
    CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &comms[1]));
    CHECK_MPI(MPI_Comm_dup(comms[1], &comms[2]));
    CHECK_MPI(MPI_Comm_split(MPI_COMM_WORLD, 0, rank, &comms[3]));
    CHECK_MPI(MPI_Comm_split(comms[2], rank % 2, rank, &comms[4]));

    int crank[NCOMM], csize[NCOMM];
    for (int c = 0; c < NCOMM; ++c) {
        CHECK_MPI(MPI_Comm_rank(comms[c], &crank[c]));
        CHECK_MPI(MPI_Comm_size(comms[c], &csize[c]));
    }

    /* 1. One message to the right neighbour on every communicator, same tag;
     *    receives from any source posted in one order, sends in the other. */
    {
        int in[NCOMM], out[NCOMM];
        MPI_Request req[2 * NCOMM];
        for (int c = 0; c < NCOMM; ++c)
            CHECK_MPI(MPI_Irecv(&in[c], 1, MPI_INT, MPI_ANY_SOURCE, TAG, comms[c], &req[c]));
        for (int c = NCOMM - 1; c >= 0; --c) {
            out[c] = 1000 * c + crank[c];
            CHECK_MPI(MPI_Isend(&out[c], 1, MPI_INT, (crank[c] + 1) % csize[c], TAG, comms[c], &req[NCOMM + c]));
        }
        MPI_Status st[2 * NCOMM];
        CHECK_MPI(MPI_Waitall(2 * NCOMM, req, st));
        for (int c = 0; c < NCOMM; ++c) {
            const int left = (crank[c] - 1 + csize[c]) % csize[c];
            CHECKF(in[c] == 1000 * c + left, "communicator %d received %d, expected %d", c, in[c], 1000 * c + left);
            CHECKF(st[c].MPI_SOURCE == left && st[c].MPI_TAG == TAG, "communicator %d: source %d tag %d", c,
                   st[c].MPI_SOURCE, st[c].MPI_TAG);
        }
    }

    /* 2. Many unexpected messages spread over the communicators; received
     *    communicator by communicator, last one first, each in order. */
    {
        int out[NMSG];
        MPI_Request sreq[NMSG];
        for (int i = 0; i < NMSG; ++i) {
            const int c = i % NCOMM;
            out[i] = i;
            CHECK_MPI(MPI_Isend(&out[i], 1, MPI_INT, (crank[c] + 1) % csize[c], TAG, comms[c], &sreq[i]));
        }
        for (int c = NCOMM - 1; c >= 0; --c) {
            const int left = (crank[c] - 1 + csize[c]) % csize[c];
            for (int i = c; i < NMSG; i += NCOMM) {
                int v = -1;
                MPI_Status st;
                CHECK_MPI(MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, comms[c], &st));
                CHECKF(v == i && st.MPI_SOURCE == left, "communicator %d: got message %d from %d, expected %d from %d",
                       c, v, st.MPI_SOURCE, i, left);
            }
        }
        CHECK_MPI(MPI_Waitall(NMSG, sreq, MPI_STATUSES_IGNORE));
    }

    /* 3. Collectives on communicators with receives from any source and
     *    any tag pending on others: the collective traffic matches none of
     *    them. */
    {
        int in[NCOMM];
        MPI_Request req[NCOMM];
        for (int c = 0; c < NCOMM; ++c)
            CHECK_MPI(MPI_Irecv(&in[c], 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, comms[c], &req[c]));
        for (int c = 0; c < NCOMM; ++c) {
            int x = crank[c] + 1, sum = 0, root_val = c == 0 ? 77 : -1;
            CHECK_MPI(MPI_Allreduce(&x, &sum, 1, MPI_INT, MPI_SUM, comms[c]));
            CHECKF(sum == csize[c] * (csize[c] + 1) / 2, "allreduce on communicator %d gave %d", c, sum);
            if (crank[c] == 0)
                root_val = 100 + c;
            CHECK_MPI(MPI_Bcast(&root_val, 1, MPI_INT, 0, comms[c]));
            CHECK(root_val == 100 + c);
            CHECK_MPI(MPI_Barrier(comms[c]));
        }
        int flag = 1;
        for (int c = 0; c < NCOMM; ++c) {
            CHECK_MPI(MPI_Test(&req[c], &flag, MPI_STATUS_IGNORE));
            CHECKF(!flag, "a receive on communicator %d matched collective traffic", c);
        }
        /* No rank sends the real messages before every rank has tested. */
        CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
        for (int c = 0; c < NCOMM; ++c) {
            int v = 2000 + c;
            CHECK_MPI(MPI_Send(&v, 1, MPI_INT, (crank[c] + 1) % csize[c], 9, comms[c]));
        }
        CHECK_MPI(MPI_Waitall(NCOMM, req, MPI_STATUSES_IGNORE));
        for (int c = 0; c < NCOMM; ++c)
            CHECKF(in[c] == 2000 + c, "communicator %d received %d", c, in[c]);
    }

    /* 4. Probe sees only its own communicator's messages. */
    {
        int v = rank;
        MPI_Request r;
        CHECK_MPI(MPI_Isend(&v, 1, MPI_INT, (crank[1] + 1) % csize[1], TAG, comms[1], &r));
        MPI_Status st;
        CHECK_MPI(MPI_Probe(MPI_ANY_SOURCE, TAG, comms[1], &st));
        int flag = 1;
        for (int c = 2; c < NCOMM; ++c) {
            CHECK_MPI(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, comms[c], &flag, MPI_STATUS_IGNORE));
            CHECKF(!flag, "MPI_Iprobe on communicator %d saw a message sent on communicator 1", c);
        }
        int got = -1;
        CHECK_MPI(MPI_Recv(&got, 1, MPI_INT, st.MPI_SOURCE, TAG, comms[1], MPI_STATUS_IGNORE));
        CHECK(got == (rank - 1 + size) % size);
        CHECK_MPI(MPI_Wait(&r, MPI_STATUS_IGNORE));
    }

    for (int c = NCOMM - 1; c >= 1; --c)
        CHECK_MPI(MPI_Comm_free(&comms[c]));
    CHECK_MPI(MPI_Finalize());
    return 0;
}
