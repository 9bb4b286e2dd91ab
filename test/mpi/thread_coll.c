/*
 * thread_coll: collectives and communicator constructors from several
 * threads of each rank at once under MPI_THREAD_MULTIPLE (MPI-3.1 12.4.2:
 * collectives on different communicators may run concurrently; the program
 * orders those on one communicator).
 *
 * Each of kThreads threads owns a duplicate of MPI_COMM_WORLD.  On even
 * ranks thread t starts t * 20 ms late, on odd ranks (kThreads - 1 - t) *
 * 20 ms late, so the ranks enter the threads' collectives in opposite
 * orders: a library that kept one thread's collective from progressing
 * while another thread of its process waits in its own would hang here.
 * Each thread then runs kRounds rounds of:
 *   - MPI_Allreduce (8 ints, and 40,000 doubles through the large paths),
 *     MPI_Bcast from a rotating root, MPI_Reduce to a rotating root,
 *     MPI_Allgather, MPI_Barrier, MPI_Ibarrier + MPI_Wait, each result
 *     checked;
 *   - MPI_Comm_dup and MPI_Comm_split of its communicator (new context
 *     ids agreed by several threads of one process at once), an
 *     MPI_Allreduce on each new communicator to show that its messages
 *     reach no other communicator, and MPI_Comm_free.
 */
#include "thread_common.h"

enum { kThreads = 3, kRounds = 12, kLarge = 40000 };

static int rank, size;
static MPI_Comm comms[kThreads];

static void *worker(void *arg)
{
    const int t = (int)(intptr_t)arg;
    MPI_Comm comm = comms[t];
    nap_ms(20 * (rank % 2 == 0 ? t : kThreads - 1 - t));
    double *big = check_malloc(kLarge * sizeof(double));
    double *bigsum = check_malloc(kLarge * sizeof(double));
    int *all = check_malloc((size_t)size * sizeof(int));
    for (int round = 0; round < kRounds; ++round) {
        const int root = (round + t) % size;
        /* Allreduce, small: sum over ranks of (rank + t + round + i). */
        int mine[8], sum[8];
        for (int i = 0; i < 8; ++i)
            mine[i] = rank + t + round + i;
        CHECK_MPI(MPI_Allreduce(mine, sum, 8, MPI_INT, MPI_SUM, comm));
        for (int i = 0; i < 8; ++i) {
            const int want = size * (size - 1) / 2 + size * (t + round + i);
            CHECKF(sum[i] == want, "thread %d round %d: allreduce [%d] = %d, not %d", t, round, i, sum[i], want);
        }
        /* Allreduce, large (exact in doubles). */
        for (int i = 0; i < kLarge; ++i)
            big[i] = (double)(rank * 3 + t + (i % 97));
        CHECK_MPI(MPI_Allreduce(big, bigsum, kLarge, MPI_DOUBLE, MPI_SUM, comm));
        for (int i = 0; i < kLarge; ++i) {
            const double want = 3.0 * size * (size - 1) / 2 + (double)size * (t + (i % 97));
            CHECKF(bigsum[i] == want, "thread %d round %d: large allreduce [%d] = %g, not %g", t, round, i,
                   bigsum[i], want);
        }
        /* Bcast from a rotating root. */
        int b[4];
        for (int i = 0; i < 4; ++i)
            b[i] = rank == root ? 1000 * t + 10 * round + i : -1;
        CHECK_MPI(MPI_Bcast(b, 4, MPI_INT, root, comm));
        for (int i = 0; i < 4; ++i)
            CHECKF(b[i] == 1000 * t + 10 * round + i, "thread %d round %d: bcast [%d] = %d", t, round, i, b[i]);
        /* Reduce (MAX) to a rotating root. */
        int v = rank * 10 + t, mx = -1;
        CHECK_MPI(MPI_Reduce(&v, &mx, 1, MPI_INT, MPI_MAX, root, comm));
        if (rank == root)
            CHECKF(mx == (size - 1) * 10 + t, "thread %d round %d: reduce max = %d", t, round, mx);
        /* Allgather. */
        const int g = rank * 100 + t * 10 + round % 10;
        CHECK_MPI(MPI_Allgather(&g, 1, MPI_INT, all, 1, MPI_INT, comm));
        for (int r = 0; r < size; ++r)
            CHECKF(all[r] == r * 100 + t * 10 + round % 10, "thread %d round %d: allgather [%d] = %d", t, round,
                   r, all[r]);
        CHECK_MPI(MPI_Barrier(comm));
        MPI_Request req;
        CHECK_MPI(MPI_Ibarrier(comm, &req));
        CHECK_MPI(MPI_Wait(&req, MPI_STATUS_IGNORE));
        /* New communicators, agreed while other threads agree on theirs. */
        MPI_Comm dup, half;
        CHECK_MPI(MPI_Comm_dup(comm, &dup));
        CHECK_MPI(MPI_Comm_split(comm, rank % 2, -rank, &half));
        int one = 1, n = 0;
        CHECK_MPI(MPI_Allreduce(&one, &n, 1, MPI_INT, MPI_SUM, dup));
        CHECKF(n == size, "thread %d round %d: allreduce on the dup counts %d ranks", t, round, n);
        int half_size = 0, half_rank = -1;
        CHECK_MPI(MPI_Comm_size(half, &half_size));
        CHECK_MPI(MPI_Comm_rank(half, &half_rank));
        const int want_size = rank % 2 == 0 ? (size + 1) / 2 : size / 2;
        CHECKF(half_size == want_size, "thread %d round %d: split half has %d ranks, not %d", t, round, half_size,
               want_size);
        CHECK_MPI(MPI_Allreduce(&rank, &n, 1, MPI_INT, MPI_MAX, half));
        /* Keys are -rank: the highest world rank of the half is its rank 0. */
        int top = -1;
        CHECK_MPI(MPI_Allreduce(&half_rank, &top, 1, MPI_INT, MPI_MIN, half));
        CHECKF(top == 0, "thread %d round %d: smallest rank of the half is %d", t, round, top);
        if (half_rank == 0)
            CHECKF(n == rank, "thread %d round %d: the half's rank 0 is world rank %d, its max %d", t, round, rank,
                   n);
        CHECK_MPI(MPI_Comm_free(&dup));
        CHECK_MPI(MPI_Comm_free(&half));
    }
    free(big);
    free(bigsum);
    free(all);
    return NULL;
}

int main(int argc, char **argv)
{
    init_thread_multiple(&argc, &argv);
    rank = world_rank();
    size = world_size();
    for (int t = 0; t < kThreads; ++t)
        CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &comms[t]));
    pthread_t th[kThreads];
    start_threads(th, kThreads, worker);
    join_threads(th, kThreads);
    for (int t = 0; t < kThreads; ++t)
        CHECK_MPI(MPI_Comm_free(&comms[t]));
    CHECK_MPI(MPI_Finalize());
    return 0;
}
