/*
 * p2p_cancel_mprobe: MPI_Cancel, MPI_Request_get_status, matched probes
 * (MPI_Mprobe, MPI_Improbe, MPI_Mrecv, MPI_Imrecv) and MPI_Pcontrol.
 *
 *   1. A receive nobody sends to is cancelled: its wait returns,
 *      MPI_Test_cancelled says so, and a persistent receive cancelled the
 *      same way can be started again and receive.
 *   2. A receive cancelled after its message was sent is either cancelled
 *      (and the message stays for the next receive) or complete with the
 *      data: MPI allows both, and nothing is lost either way.
 *   3. MPI_Request_get_status reports completion without freeing the
 *      request.
 *   4. Every rank sends rank 0 a small and a large (1 MiB) message; rank 0
 *      takes them with MPI_Mprobe/MPI_Improbe on any source and tag, sizes
 *      its buffer from the status and receives with MPI_Mrecv/MPI_Imrecv.
 *   5. A message a matched probe took is invisible to other probes and
 *      receives: the next probe on the same source and tag finds the
 *      message after it.
 *   6. MPI_PROC_NULL: MPI_Mprobe gives MPI_MESSAGE_NO_PROC, whose MPI_Mrecv
 *      returns at once with source MPI_PROC_NULL and count 0.
 */
#include "check.h"

enum { TAG_NOBODY = 1, TAG_LATE = 2, TAG_LATE_GO = 3, TAG_SMALL = 4, TAG_LARGE = 5,
       TAG_PAIR = 6, TAG_PSTAT = 7, TAG_PERSIST = 8, TAG_PERSIST_GO = 9 };
enum { LARGE = 1 << 20 };

static void cancel_unmatched(int rank, int next, int prev)
{
    int x = -1;
    MPI_Request r;
    MPI_Status st;
    CHECK_MPI(MPI_Irecv(&x, 1, MPI_INT, MPI_ANY_SOURCE, TAG_NOBODY, MPI_COMM_WORLD, &r));
    CHECK_MPI(MPI_Cancel(&r));
    CHECK_MPI(MPI_Wait(&r, &st));
    int cancelled = 0;
    CHECK_MPI(MPI_Test_cancelled(&st, &cancelled));
    CHECK(cancelled);
    CHECK(x == -1);

    /* A persistent receive: cancelled once, then used.  The predecessor
     * sends only after the cancellation (TAG_PERSIST_GO). */
    CHECK_MPI(MPI_Recv_init(&x, 1, MPI_INT, prev, TAG_PERSIST, MPI_COMM_WORLD, &r));
    CHECK_MPI(MPI_Start(&r));
    CHECK_MPI(MPI_Cancel(&r));
    CHECK_MPI(MPI_Wait(&r, &st));
    CHECK_MPI(MPI_Test_cancelled(&st, &cancelled));
    CHECK(cancelled);
    MPI_Request go;
    CHECK_MPI(MPI_Isend(NULL, 0, MPI_BYTE, prev, TAG_PERSIST_GO, MPI_COMM_WORLD, &go));
    CHECK_MPI(MPI_Recv(NULL, 0, MPI_BYTE, next, TAG_PERSIST_GO, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    CHECK_MPI(MPI_Wait(&go, MPI_STATUS_IGNORE));
    CHECK_MPI(MPI_Start(&r));
    const int v = 500 + rank;
    CHECK_MPI(MPI_Send(&v, 1, MPI_INT, next, TAG_PERSIST, MPI_COMM_WORLD));
    CHECK_MPI(MPI_Wait(&r, &st));
    CHECK_MPI(MPI_Test_cancelled(&st, &cancelled));
    CHECK(!cancelled && x == 500 + prev);
    CHECK_MPI(MPI_Request_free(&r));
}

static void cancel_racing(int rank, int next, int prev)
{
    const int v = 900 + rank;
    MPI_Request sent[2];
    CHECK_MPI(MPI_Isend(&v, 1, MPI_INT, next, TAG_LATE, MPI_COMM_WORLD, &sent[0]));
    CHECK_MPI(MPI_Isend(NULL, 0, MPI_BYTE, next, TAG_LATE_GO, MPI_COMM_WORLD, &sent[1]));
    int x = -1;
    MPI_Request r;
    MPI_Status st;
    CHECK_MPI(MPI_Irecv(&x, 1, MPI_INT, prev, TAG_LATE, MPI_COMM_WORLD, &r));
    CHECK_MPI(MPI_Recv(NULL, 0, MPI_BYTE, prev, TAG_LATE_GO, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    CHECK_MPI(MPI_Cancel(&r));
    CHECK_MPI(MPI_Wait(&r, &st));
    int cancelled = -1;
    CHECK_MPI(MPI_Test_cancelled(&st, &cancelled));
    if (cancelled) {
        CHECK(x == -1);
        CHECK_MPI(MPI_Recv(&x, 1, MPI_INT, prev, TAG_LATE, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    }
    CHECKF(x == 900 + prev, "the raced message arrived as %d (cancelled %d)", x, cancelled);
    CHECK_MPI(MPI_Waitall(2, sent, MPI_STATUSES_IGNORE));
}

static void get_status(int rank, int next, int prev)
{
    int x = -1;
    MPI_Request r;
    MPI_Status st;
    CHECK_MPI(MPI_Irecv(&x, 1, MPI_INT, prev, TAG_PSTAT, MPI_COMM_WORLD, &r));
    const int v = 300 + rank;
    CHECK_MPI(MPI_Send(&v, 1, MPI_INT, next, TAG_PSTAT, MPI_COMM_WORLD));
    int flag = 0;
    while (!flag)
        CHECK_MPI(MPI_Request_get_status(r, &flag, &st));
    CHECK(r != MPI_REQUEST_NULL);
    CHECK(st.MPI_SOURCE == prev && st.MPI_TAG == TAG_PSTAT && x == 300 + prev);
    CHECK_MPI(MPI_Wait(&r, &st));
    CHECK(r == MPI_REQUEST_NULL && st.MPI_SOURCE == prev);
}

static void matched_probes(int rank, int size)
{
    /* On a communicator of its own, so that the wildcards see these
     * messages only. */
    MPI_Comm comm;
    CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &comm));
    if (rank != 0) {
        int small = rank;
        unsigned char *large = check_malloc(LARGE);
        pattern_fill(large, LARGE, rank, 7);
        CHECK_MPI(MPI_Send(&small, 1, MPI_INT, 0, TAG_SMALL, comm));
        CHECK_MPI(MPI_Send(large, LARGE, MPI_BYTE, 0, TAG_LARGE, comm));
        free(large);
        CHECK_MPI(MPI_Comm_free(&comm));
        return;
    }
    int smalls = 0;
    for (int k = 0; k < 2 * (size - 1); ++k) {
        MPI_Message msg = MPI_MESSAGE_NULL;
        MPI_Status st;
        if (k % 2 == 0) {
            CHECK_MPI(MPI_Mprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &msg, &st));
        } else {
            int flag = 0;
            while (!flag)
                CHECK_MPI(MPI_Improbe(MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &flag, &msg, &st));
        }
        CHECK(msg != MPI_MESSAGE_NULL && msg != MPI_MESSAGE_NO_PROC);
        int bytes = -1;
        CHECK_MPI(MPI_Get_count(&st, MPI_BYTE, &bytes));
        const int src = st.MPI_SOURCE;
        CHECK(src > 0 && src < size);
        unsigned char *buf = check_malloc((size_t)bytes);
        MPI_Status rst;
        if (k % 4 < 2) {
            CHECK_MPI(MPI_Mrecv(buf, bytes, MPI_BYTE, &msg, &rst));
        } else {
            MPI_Request r;
            CHECK_MPI(MPI_Imrecv(buf, bytes, MPI_BYTE, &msg, &r));
            CHECK_MPI(MPI_Wait(&r, &rst));
        }
        CHECK(msg == MPI_MESSAGE_NULL);
        CHECK(rst.MPI_SOURCE == src && rst.MPI_TAG == st.MPI_TAG);
        if (st.MPI_TAG == TAG_SMALL) {
            CHECK(bytes == (int)sizeof(int) && *(int *)buf == src);
            ++smalls;
        } else {
            CHECK(st.MPI_TAG == TAG_LARGE && bytes == LARGE);
            CHECK_PATTERN(buf, LARGE, src, 7);
        }
        free(buf);
    }
    CHECK(smalls == size - 1);
    CHECK_MPI(MPI_Comm_free(&comm));
}

static void probe_hides_taken(int rank)
{
    /* Rank 1 sends 1 then 2 ints with the same tag; rank 0 takes the first
     * with Mprobe, and a plain Probe then sees the second. */
    if (rank == 1) {
        int a[1] = {11};
        int b[2] = {21, 22};
        CHECK_MPI(MPI_Send(a, 1, MPI_INT, 0, TAG_PAIR, MPI_COMM_WORLD));
        CHECK_MPI(MPI_Send(b, 2, MPI_INT, 0, TAG_PAIR, MPI_COMM_WORLD));
    } else if (rank == 0) {
        MPI_Message msg;
        MPI_Status st;
        int n = -1;
        CHECK_MPI(MPI_Mprobe(1, TAG_PAIR, MPI_COMM_WORLD, &msg, &st));
        CHECK_MPI(MPI_Get_count(&st, MPI_INT, &n));
        CHECK(n == 1);
        CHECK_MPI(MPI_Probe(1, TAG_PAIR, MPI_COMM_WORLD, &st));
        CHECK_MPI(MPI_Get_count(&st, MPI_INT, &n));
        CHECKF(n == 2, "Probe after Mprobe saw a message of %d ints", n);
        int b[2] = {0, 0};
        CHECK_MPI(MPI_Recv(b, 2, MPI_INT, 1, TAG_PAIR, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        CHECK(b[0] == 21 && b[1] == 22);
        int a = 0;
        CHECK_MPI(MPI_Mrecv(&a, 1, MPI_INT, &msg, MPI_STATUS_IGNORE));
        CHECK(a == 11);
    }
}

static void proc_null(void)
{
    MPI_Message msg = MPI_MESSAGE_NULL;
    MPI_Status st;
    CHECK_MPI(MPI_Mprobe(MPI_PROC_NULL, 0, MPI_COMM_WORLD, &msg, &st));
    CHECK(msg == MPI_MESSAGE_NO_PROC && st.MPI_SOURCE == MPI_PROC_NULL);
    int x = 5;
    status_poison(&st);
    CHECK_MPI(MPI_Mrecv(&x, 1, MPI_INT, &msg, &st));
    int n = -1;
    CHECK_MPI(MPI_Get_count(&st, MPI_INT, &n));
    CHECK(msg == MPI_MESSAGE_NULL && st.MPI_SOURCE == MPI_PROC_NULL && st.MPI_TAG == MPI_ANY_TAG);
    CHECK(n == 0 && x == 5);
    int flag = 0;
    CHECK_MPI(MPI_Improbe(MPI_PROC_NULL, 0, MPI_COMM_WORLD, &flag, &msg, &st));
    CHECK(flag && msg == MPI_MESSAGE_NO_PROC);
    MPI_Request r;
    CHECK_MPI(MPI_Imrecv(&x, 1, MPI_INT, &msg, &r));
    CHECK_MPI(MPI_Wait(&r, &st));
    CHECK(st.MPI_SOURCE == MPI_PROC_NULL && x == 5);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    CHECK_MPI(MPI_Pcontrol(0));
    const int rank = world_rank();
    const int size = world_size();
    int next = 0;
    int prev = 0;
    ring_neighbours(&next, &prev);
    cancel_unmatched(rank, next, prev);
    cancel_racing(rank, next, prev);
    get_status(rank, next, prev);
    matched_probes(rank, size);
    if (size >= 2)
        probe_hides_taken(rank);
    proc_null();
    CHECK_MPI(MPI_Pcontrol(1));
    MPI_Finalize();
    return 0;
}
