/*
 * deep_queues.c: waits that face very long queues stay linear.
 *
 * 1. Rank 0 waits in MPI_Probe for a message with tag 2 while rank 1 first
 *    sends it N messages with tag 1: the unexpected queue grows to N while
 *    the probe waits.  Then rank 0 receives the N messages and checks that
 *    they came in order.  The same with MPI_Mprobe.
 * 2. Rank 1 starts N MPI_Isends and completes them with one MPI_Waitall,
 *    while rank 0 receives them.
 * With N = 1,000,000 both take well under a second with linear waits; a
 * probe that rescanned the queue at every poll, or a Waitall that rescanned
 * its requests, took minutes (hence the test's timeout).  shmpi only: MPICH's
 * probe rescans its queue too.  Ranks beyond 1 only take part in the
 * barriers.
 */
#include "check.h"

enum { TAG_MANY = 1, TAG_LAST = 2 };

static void probe_behind(int rank, int n, int matched)
{
    if (rank == 1) {
        for (int i = 0; i < n; ++i)
            CHECK_MPI(MPI_Send(&i, 1, MPI_INT, 0, TAG_MANY, MPI_COMM_WORLD));
        const int last = -1;
        CHECK_MPI(MPI_Send(&last, 1, MPI_INT, 0, TAG_LAST, MPI_COMM_WORLD));
    } else if (rank == 0) {
        MPI_Status st;
        int v = 0;
        if (matched) {
            MPI_Message m;
            CHECK_MPI(MPI_Mprobe(1, TAG_LAST, MPI_COMM_WORLD, &m, &st));
            CHECK_MPI(MPI_Mrecv(&v, 1, MPI_INT, &m, MPI_STATUS_IGNORE));
        } else {
            CHECK_MPI(MPI_Probe(1, TAG_LAST, MPI_COMM_WORLD, &st));
            CHECK_MPI(MPI_Recv(&v, 1, MPI_INT, 1, TAG_LAST, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        }
        CHECKF(st.MPI_SOURCE == 1 && st.MPI_TAG == TAG_LAST && v == -1, "probe found tag %d from %d: %d",
               st.MPI_TAG, st.MPI_SOURCE, v);
        for (int i = 0; i < n; ++i) {
            CHECK_MPI(MPI_Recv(&v, 1, MPI_INT, 1, TAG_MANY, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            CHECKF(v == i, "message %d of %d carried %d", i, n, v);
        }
    }
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
}

static void waitall_many(int rank, int n)
{
    if (rank == 1) {
        int *vals = check_malloc(sizeof(int) * (size_t)n);
        MPI_Request *reqs = check_malloc(sizeof(MPI_Request) * (size_t)n);
        for (int i = 0; i < n; ++i) {
            vals[i] = 3 * i;
            CHECK_MPI(MPI_Isend(&vals[i], 1, MPI_INT, 0, TAG_MANY, MPI_COMM_WORLD, &reqs[i]));
        }
        CHECK_MPI(MPI_Waitall(n, reqs, MPI_STATUSES_IGNORE));
        for (int i = 0; i < n; ++i)
            CHECK(reqs[i] == MPI_REQUEST_NULL);
        free(vals);
        free(reqs);
    } else if (rank == 0) {
        for (int i = 0; i < n; ++i) {
            int v = 0;
            CHECK_MPI(MPI_Recv(&v, 1, MPI_INT, 1, TAG_MANY, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            CHECKF(v == 3 * i, "Isend %d of %d carried %d", i, n, v);
        }
    }
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
}

int main(int argc, char **argv)
{
    CHECK_MPI(MPI_Init(&argc, &argv));
    const int rank = world_rank();
    CHECKF(world_size() >= 2, "deep_queues needs 2 ranks, not %d", world_size());
    const int n = argc > 1 ? atoi(argv[1]) : 1000000;
    probe_behind(rank, n, 0);
    probe_behind(rank, n, 1);
    waitall_many(rank, n);
    CHECK_MPI(MPI_Finalize());
    return 0;
}
