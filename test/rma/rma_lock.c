/*
 * Passive-target RMA (MPI-3.1 11.5.3, 11.5.4): counters on rank 0 that every
 * rank increments K times under MPI_Win_lock(MPI_LOCK_EXCLUSIVE), once with
 * MPI_Accumulate and once with MPI_Get + MPI_Win_flush + MPI_Put (a
 * read-modify-write that is only correct because the lock excludes the other
 * ranks); reads under MPI_LOCK_SHARED; MPI_Win_lock_all / unlock_all with
 * MPI_Win_flush, MPI_Win_flush_all and MPI_Win_flush_local; MPI_Win_sync
 * with local loads and stores; the request-based MPI_Rput, MPI_Rget and
 * MPI_Rget_accumulate (11.3.5) with MPI_Win_flush_local_all: a request's
 * completion makes only the origin buffer free, a flush the target's
 * memory, and the fetch-and-adds of all ranks on one counter hand out
 * every old value from 0 to n * K - 1 once.  Phases are ordered with
 * MPI_Barrier.
 */
#include "check.h"

enum {
    K = 10,      /* increments per rank */
    ACC_CTR = 0, /* counter incremented with MPI_Accumulate */
    RMW_CTR = 1, /* counter incremented with get + put */
    SLOTS = 2,   /* slots[n]: one per origin rank */
    MAX_RANKS = 64,
    /* after the slots and the local-store slot: the counter of
     * MPI_Rget_accumulate */
    FETCH_CTR = SLOTS + MAX_RANKS + 1
};

static int slot_value(int origin, int target, int phase)
{
    return 1000000 * phase + 1000 * origin + target;
}

/* Reads `count` ints at `disp` of `target`'s window under a shared lock. */
static void read_shared(MPI_Win win, int target, int disp, int count, int *out)
{
    CHECK_MPI(MPI_Win_lock(MPI_LOCK_SHARED, target, 0, win));
    CHECK_MPI(MPI_Get(out, count, MPI_INT, target, disp, count, MPI_INT, win));
    CHECK_MPI(MPI_Win_unlock(target, win));
}

/* Stores into the own window under an exclusive lock of oneself (valid in
 * both memory models). */
static void init_own(MPI_Win win, int *base, int ints, int phase)
{
    const int rank = world_rank();
    CHECK_MPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win));
    for (int i = 0; i < ints; ++i)
        base[i] = -1;
    base[ACC_CTR] = 0;
    base[RMW_CTR] = 0;
    base[SLOTS + MAX_RANKS] = slot_value(rank, rank, phase); /* read by the shared-lock phase */
    base[FETCH_CTR] = 0;
    CHECK_MPI(MPI_Win_unlock(rank, win));
}

static void counters(MPI_Win win, int start, const char *what)
{
    const int n = world_size();
    const int one = 1;
    /* Accumulate under an exclusive lock, one epoch per increment. */
    for (int k = 0; k < K; ++k) {
        CHECK_MPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win));
        CHECK_MPI(MPI_Accumulate(&one, 1, MPI_INT, 0, ACC_CTR, 1, MPI_INT, MPI_SUM, win));
        CHECK_MPI(MPI_Win_unlock(0, win));
    }
    /* Get, flush, put: the exclusive lock makes the increment atomic. */
    for (int k = 0; k < K; ++k) {
        int v = -99;
        CHECK_MPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win));
        CHECK_MPI(MPI_Get(&v, 1, MPI_INT, 0, RMW_CTR, 1, MPI_INT, win));
        CHECK_MPI(MPI_Win_flush(0, win));
        CHECKF(v >= start && v < start + n * K, "%s: counter read %d under the lock", what, v);
        v += 1;
        CHECK_MPI(MPI_Put(&v, 1, MPI_INT, 0, RMW_CTR, 1, MPI_INT, win));
        CHECK_MPI(MPI_Win_unlock(0, win));
    }
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    int c[2] = {-1, -1};
    read_shared(win, 0, ACC_CTR, 2, c);
    CHECKF(c[0] == start + n * K, "%s: accumulate counter is %d, expected %d", what, c[0],
           start + n * K);
    CHECKF(c[1] == start + n * K, "%s: get+put counter is %d, expected %d", what, c[1],
           start + n * K);
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
}

/* Every rank reads every rank's window under shared locks (held by several
 * ranks at once). */
static void shared_reads(MPI_Win win, int phase)
{
    const int rank = world_rank(), n = world_size();
    for (int i = 0; i < n; ++i) {
        const int t = (rank + i) % n;
        int v = -1;
        read_shared(win, t, SLOTS + MAX_RANKS, 1, &v);
        CHECKF(v == slot_value(t, t, phase), "shared read of rank %d: %d, expected %d", t, v,
               slot_value(t, t, phase));
    }
    /* Two shared locks on different targets held at once. */
    if (n >= 2) {
        const int a = (rank + 1) % n, b = (rank + n - 1) % n;
        int va = -1, vb = -1;
        CHECK_MPI(MPI_Win_lock(MPI_LOCK_SHARED, a, 0, win));
        if (b != a)
            CHECK_MPI(MPI_Win_lock(MPI_LOCK_SHARED, b, 0, win));
        CHECK_MPI(MPI_Get(&va, 1, MPI_INT, a, SLOTS + MAX_RANKS, 1, MPI_INT, win));
        CHECK_MPI(MPI_Get(&vb, 1, MPI_INT, b, SLOTS + MAX_RANKS, 1, MPI_INT, win));
        if (b != a)
            CHECK_MPI(MPI_Win_unlock(b, win));
        CHECK_MPI(MPI_Win_unlock(a, win));
        CHECK(va == slot_value(a, a, phase));
        CHECK(vb == slot_value(b, b, phase));
    }
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
}

/* lock_all with flush, flush_local, flush_all; then MPI_Win_sync. */
static void lock_all_phase(MPI_Win win, int *base, int phase)
{
    const int rank = world_rank(), n = world_size();
    CHECK_MPI(MPI_Win_lock_all(0, win));
    /* put to slot[rank] of each target, flush it, read it back */
    for (int i = 0; i < n; ++i) {
        const int t = (rank + i) % n;
        int v = slot_value(rank, t, phase), back = -1;
        CHECK_MPI(MPI_Put(&v, 1, MPI_INT, t, SLOTS + rank, 1, MPI_INT, win));
        CHECK_MPI(MPI_Win_flush(t, win));
        CHECK_MPI(MPI_Get(&back, 1, MPI_INT, t, SLOTS + rank, 1, MPI_INT, win));
        CHECK_MPI(MPI_Win_flush(t, win));
        CHECKF(back == v, "read back from rank %d after MPI_Win_flush: %d, expected %d", t, back,
               v);
    }
    /* flush_local: the origin buffer may be reused at once; one buffer for
     * all puts, each to a fresh target */
    int tmp = 0;
    for (int i = 0; i < n; ++i) {
        const int t = (rank + i) % n;
        tmp = slot_value(rank, t, phase + 1);
        CHECK_MPI(MPI_Put(&tmp, 1, MPI_INT, t, SLOTS + rank, 1, MPI_INT, win));
        CHECK_MPI(MPI_Win_flush_local(t, win));
        tmp = -12345; /* must not reach the target */
    }
    CHECK_MPI(MPI_Win_flush_all(win));
    /* every put is complete at its target: read them all back */
    int backs[MAX_RANKS];
    for (int t = 0; t < n; ++t)
        CHECK_MPI(MPI_Get(&backs[t], 1, MPI_INT, t, SLOTS + rank, 1, MPI_INT, win));
    CHECK_MPI(MPI_Win_flush_all(win));
    for (int t = 0; t < n; ++t)
        CHECKF(backs[t] == slot_value(rank, t, phase + 1),
               "after flush_local + flush_all, rank %d's slot %d is %d, expected %d", t, rank,
               backs[t], slot_value(rank, t, phase + 1));
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    /* all ranks' puts to me are complete: local loads after MPI_Win_sync */
    CHECK_MPI(MPI_Win_sync(win));
    for (int o = 0; o < n; ++o)
        CHECKF(base[SLOTS + o] == slot_value(o, rank, phase + 1),
               "local load of slot %d: %d, expected %d", o, base[SLOTS + o],
               slot_value(o, rank, phase + 1));
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));

    /* local stores, MPI_Win_sync, barrier: then the others read them */
    base[SLOTS + MAX_RANKS] = slot_value(rank, rank, phase + 2);
    CHECK_MPI(MPI_Win_sync(win));
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    for (int i = 0; i < n; ++i) {
        const int t = (rank + i) % n;
        int v = -1;
        CHECK_MPI(MPI_Get(&v, 1, MPI_INT, t, SLOTS + MAX_RANKS, 1, MPI_INT, win));
        CHECK_MPI(MPI_Win_flush(t, win));
        CHECKF(v == slot_value(t, t, phase + 2),
               "rank %d's local store seen as %d, expected %d (after MPI_Win_sync)", t, v,
               slot_value(t, t, phase + 2));
    }
    CHECK_MPI(MPI_Win_unlock_all(win));
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    /* and after unlock_all, under a shared lock again */
    shared_reads(win, phase + 2);
}

/* Request-based operations under lock_all. */
static void request_phase(MPI_Win win, int phase)
{
    const int rank = world_rank(), n = world_size();
    CHECK_MPI(MPI_Win_lock_all(0, win));
    /* MPI_Rput to slot[rank] of every target: completing the requests frees
     * the origin buffers (overwritten at once), MPI_Win_flush_local_all
     * changes nothing more there, MPI_Win_flush_all completes the puts at
     * the targets; then MPI_Rget reads them back. */
    int vals[MAX_RANKS], backs[MAX_RANKS];
    MPI_Request reqs[MAX_RANKS];
    for (int t = 0; t < n; ++t) {
        vals[t] = slot_value(rank, t, phase);
        CHECK_MPI(MPI_Rput(&vals[t], 1, MPI_INT, t, SLOTS + rank, 1, MPI_INT, win, &reqs[t]));
    }
    CHECK_MPI(MPI_Waitall(n, reqs, MPI_STATUSES_IGNORE));
    for (int t = 0; t < n; ++t)
        vals[t] = -12345; /* must not reach the target */
    CHECK_MPI(MPI_Win_flush_local_all(win));
    CHECK_MPI(MPI_Win_flush_all(win));
    for (int t = 0; t < n; ++t) {
        backs[t] = -1;
        CHECK_MPI(MPI_Rget(&backs[t], 1, MPI_INT, t, SLOTS + rank, 1, MPI_INT, win, &reqs[t]));
    }
    CHECK_MPI(MPI_Waitall(n, reqs, MPI_STATUSES_IGNORE)); /* an Rget's data is there at completion */
    for (int t = 0; t < n; ++t)
        CHECKF(backs[t] == slot_value(rank, t, phase), "MPI_Rget of rank %d's slot %d after MPI_Rput: %d, expected %d",
               t, rank, backs[t], slot_value(rank, t, phase));

    /* K fetch-and-adds of 1 by every rank on rank 0's counter, K requests
     * outstanding at once: accumulates on one element are atomic, so the
     * old values are 0 .. n * K - 1, each once. */
    int olds[K];
    MPI_Request fetch[K];
    const int one = 1;
    for (int k = 0; k < K; ++k) {
        olds[k] = -1;
        CHECK_MPI(MPI_Rget_accumulate(&one, 1, MPI_INT, &olds[k], 1, MPI_INT, 0, FETCH_CTR, 1, MPI_INT, MPI_SUM, win,
                                      &fetch[k]));
    }
    CHECK_MPI(MPI_Waitall(K, fetch, MPI_STATUSES_IGNORE));
    CHECK_MPI(MPI_Win_unlock_all(win));
    int all[MAX_RANKS * K];
    CHECK_MPI(MPI_Allgather(olds, K, MPI_INT, all, K, MPI_INT, MPI_COMM_WORLD));
    int seen[MAX_RANKS * K] = {0};
    for (int i = 0; i < n * K; ++i) {
        CHECKF(all[i] >= 0 && all[i] < n * K, "MPI_Rget_accumulate fetched %d, expected 0 to %d", all[i], n * K - 1);
        if (all[i] >= 0 && all[i] < n * K) {
            CHECKF(seen[all[i]] == 0, "MPI_Rget_accumulate fetched %d twice", all[i]);
            seen[all[i]] = 1;
        }
    }
    int c = -1;
    read_shared(win, 0, FETCH_CTR, 1, &c);
    CHECKF(c == n * K, "MPI_Rget_accumulate counter is %d, expected %d", c, n * K);
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
}

int main(int argc, char **argv)
{
    CHECK_MPI(MPI_Init(&argc, &argv));
    const int n = world_size();
    CHECK(n <= MAX_RANKS);
    /* FETCH_CTR + 1 ints, rounded up to a multiple of 16 bytes:
     * MPICH 4.0.2 (ch4:ucx) misplaces the windows of ranks above 0 of an
     * MPI_Win_allocate whose size is not a multiple of 16 bytes (a remote
     * access to rank 1 lands 8 bytes early). */
    const int ints = (FETCH_CTR + 1 + 3) / 4 * 4;

    /* MPI_Win_allocate */
    int *base = NULL;
    MPI_Win win;
    CHECK_MPI(MPI_Win_allocate(ints * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD,
                               &base, &win));
    init_own(win, base, ints, 1);
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    counters(win, 0, "Win_allocate");
    shared_reads(win, 1);
    lock_all_phase(win, base, 2);
    request_phase(win, 5);
    /* the counters again: the totals go on from n * K */
    counters(win, n * K, "Win_allocate (second round)");
    CHECK_MPI(MPI_Win_free(&win));

    /* MPI_Win_create on MPI_Alloc_mem memory (which passive target must
     * support on every implementation) */
    int *mem = NULL;
    CHECK_MPI(MPI_Alloc_mem(ints * sizeof(int), MPI_INFO_NULL, &mem));
    CHECK_MPI(
        MPI_Win_create(mem, ints * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    init_own(win, mem, ints, 7);
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    counters(win, 0, "Win_create");
    shared_reads(win, 7);
    lock_all_phase(win, mem, 8);
    request_phase(win, 11);
    CHECK_MPI(MPI_Win_free(&win));
    CHECK_MPI(MPI_Free_mem(mem));

    CHECK_MPI(MPI_Finalize());
    return 0;
}
