/*
 * RMA atomics (MPI-3.1 11.3.4, 11.7.1): MPI_Fetch_and_op (MPI_SUM on int and
 * long long, MPI_NO_OP, MPI_REPLACE), MPI_Compare_and_swap (a ticket counter
 * and a mutex built on it), MPI_Get_accumulate (MPI_SUM, MPI_NO_OP,
 * MPI_REPLACE), MPI_Accumulate with MPI_MAX, MPI_MIN, MPI_PROD, MPI_BOR,
 * MPI_BAND, MPI_BXOR, MPI_MAXLOC / MPI_MINLOC on MPI_2INT and MPI_REPLACE,
 * and the element-wise atomicity of concurrent accumulates.  All ranks
 * operate concurrently on one "home" rank's window; the values fetched by
 * all ranks are gathered and checked to form one consistent order.
 */
#include "check.h"

#include <limits.h>

/* The window's layout in bytes (disp_unit 1).  Its size is a multiple of
 * 16 bytes: MPICH 4.0.2 (ch4:ucx) misplaces the windows of ranks above 0 of
 * an MPI_Win_allocate whose size is not. */
enum {
    OFF_FAO_INT = 0,    /* int */
    OFF_FAO_LL = 8,     /* long long */
    OFF_SWAP = 16,      /* int, for MPI_REPLACE */
    OFF_TICKET = 20,    /* int, the CAS ticket counter */
    OFF_MUTEX = 24,     /* int, 0 = free, else owner + 1 */
    OFF_GUARDED = 28,   /* int, incremented inside the mutex */
    OFF_GACC = 32,      /* 4 ints */
    OFF_GSWAP = 48,     /* 2 ints */
    OFF_OPS = 56,       /* 8 ints: MAX, MIN, PROD, BOR, BAND, BXOR, REPLACE, spare */
    OFF_MAXLOC = 88,    /* 2 ints */
    OFF_MINLOC = 96,    /* 2 ints */
    OFF_ARRAY = 112,    /* ARR ints */
    ARR = 64,
    WIN_BYTES = OFF_ARRAY + ARR * 4, /* 368 */
    K = 8,              /* operations per rank in the counting tests */
    MAX_RANKS = 64
};

static int rank, nprocs;
static MPI_Win win;
static unsigned char *base;

static int *at_int(int off) { return (int *)(base + off); } /* local stores at setup only */

static void init_window(void)
{
    CHECK_MPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win));
    memset(base, 0, WIN_BYTES);
    *(long long *)(base + OFF_FAO_LL) = 5;
    *at_int(OFF_SWAP) = -1;
    at_int(OFF_GSWAP)[0] = -1;
    at_int(OFF_GSWAP)[1] = -2;
    int *ops = at_int(OFF_OPS);
    ops[0] = INT_MIN;  /* MAX */
    ops[1] = INT_MAX;  /* MIN */
    ops[2] = 1;        /* PROD */
    ops[3] = 0;        /* BOR */
    ops[4] = -1;       /* BAND */
    ops[5] = 0x5a5a;   /* BXOR */
    ops[6] = -1;       /* REPLACE */
    ops[7] = 4242;     /* never targeted */
    at_int(OFF_MAXLOC)[0] = -1000;
    at_int(OFF_MAXLOC)[1] = 999;
    at_int(OFF_MINLOC)[0] = 1000;
    at_int(OFF_MINLOC)[1] = 999;
    CHECK_MPI(MPI_Win_unlock(rank, win));
}

static void read_home(int home, int off, void *out, int count, MPI_Datatype type)
{
    CHECK_MPI(MPI_Win_lock(MPI_LOCK_SHARED, home, 0, win));
    CHECK_MPI(MPI_Get(out, count, type, home, off, count, type, win));
    CHECK_MPI(MPI_Win_unlock(home, win));
}

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

static int cmp_ll(const void *a, const void *b)
{
    long long x = *(const long long *)a, y = *(const long long *)b;
    return (x > y) - (x < y);
}

static void fetch_and_op_tests(int home)
{
    /* int MPI_SUM of 1: the fetched values of all ranks are 0 .. n*K-1 */
    int mine[K];
    long long mine_ll[K];
    const int one = 1;
    const long long step = (1LL << 33) + 3;
    CHECK_MPI(MPI_Win_lock_all(0, win));
    for (int k = 0; k < K; ++k) {
        CHECK_MPI(MPI_Fetch_and_op(&one, &mine[k], MPI_INT, home, OFF_FAO_INT, MPI_SUM, win));
        CHECK_MPI(MPI_Fetch_and_op(&step, &mine_ll[k], MPI_LONG_LONG, home, OFF_FAO_LL, MPI_SUM,
                                   win));
        CHECK_MPI(MPI_Win_flush(home, win));
    }
    CHECK_MPI(MPI_Win_unlock_all(win));
    int all[K * MAX_RANKS];
    long long all_ll[K * MAX_RANKS];
    CHECK_MPI(MPI_Allgather(mine, K, MPI_INT, all, K, MPI_INT, MPI_COMM_WORLD));
    CHECK_MPI(MPI_Allgather(mine_ll, K, MPI_LONG_LONG, all_ll, K, MPI_LONG_LONG, MPI_COMM_WORLD));
    qsort(all, (size_t)(K * nprocs), sizeof(int), cmp_int);
    qsort(all_ll, (size_t)(K * nprocs), sizeof(long long), cmp_ll);
    for (int i = 0; i < K * nprocs; ++i) {
        CHECKF(all[i] == i, "fetch_and_op int: sorted fetched value %d is %d", i, all[i]);
        CHECKF(all_ll[i] == 5 + i * step, "fetch_and_op long long: sorted fetched value %d is %lld",
               i, all_ll[i]);
    }
    /* each rank's own fetches increase */
    for (int k = 1; k < K; ++k)
        CHECK(mine[k] > mine[k - 1] && mine_ll[k] > mine_ll[k - 1]);

    /* MPI_NO_OP reads the totals and leaves them */
    int v = -1;
    long long vl = -1;
    CHECK_MPI(MPI_Win_lock(MPI_LOCK_SHARED, home, 0, win));
    const int ignored = 77; /* the origin of MPI_NO_OP is not used */
    const long long ignored_ll = 77;
    CHECK_MPI(MPI_Fetch_and_op(&ignored, &v, MPI_INT, home, OFF_FAO_INT, MPI_NO_OP, win));
    CHECK_MPI(MPI_Fetch_and_op(&ignored_ll, &vl, MPI_LONG_LONG, home, OFF_FAO_LL, MPI_NO_OP, win));
    CHECK_MPI(MPI_Win_unlock(home, win));
    CHECKF(v == K * nprocs, "MPI_NO_OP fetched %d, expected %d", v, K * nprocs);
    CHECKF(vl == 5 + K * nprocs * step, "MPI_NO_OP fetched %lld", vl);
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    read_home(home, OFF_FAO_INT, &v, 1, MPI_INT);
    CHECK(v == K * nprocs);

    /* MPI_REPLACE: a chain of swaps; the fetched values and the final value
     * are -1 and 100 .. 100+n-1, each once */
    const int swap_in = 100 + rank;
    int swapped = -7;
    CHECK_MPI(MPI_Win_lock(MPI_LOCK_SHARED, home, 0, win));
    CHECK_MPI(MPI_Fetch_and_op(&swap_in, &swapped, MPI_INT, home, OFF_SWAP, MPI_REPLACE, win));
    CHECK_MPI(MPI_Win_unlock(home, win));
    int chain[MAX_RANKS + 1];
    CHECK_MPI(MPI_Allgather(&swapped, 1, MPI_INT, chain, 1, MPI_INT, MPI_COMM_WORLD));
    read_home(home, OFF_SWAP, &chain[nprocs], 1, MPI_INT);
    qsort(chain, (size_t)nprocs + 1, sizeof(int), cmp_int);
    CHECKF(chain[0] == -1, "MPI_REPLACE: the initial value was fetched %s",
           chain[0] < -1 ? "never" : "?");
    for (int i = 1; i <= nprocs; ++i)
        CHECKF(chain[i] == 99 + i, "MPI_REPLACE: sorted value %d is %d, expected %d", i, chain[i],
               99 + i);
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
}

static void cas_tests(int home)
{
    /* Tickets: read, then CAS old -> old+1 until it succeeds. */
    int tickets[K];
    CHECK_MPI(MPI_Win_lock_all(0, win));
    int cur = 0;
    const int ignored = 0;
    CHECK_MPI(MPI_Fetch_and_op(&ignored, &cur, MPI_INT, home, OFF_TICKET, MPI_NO_OP, win));
    CHECK_MPI(MPI_Win_flush(home, win));
    for (int k = 0; k < K; ++k) {
        for (;;) {
            int next = cur + 1, old = -1;
            CHECK_MPI(MPI_Compare_and_swap(&next, &cur, &old, MPI_INT, home, OFF_TICKET, win));
            CHECK_MPI(MPI_Win_flush(home, win));
            CHECKF(old >= cur, "CAS fetched %d, older than the %d already seen", old, cur);
            if (old == cur) {
                tickets[k] = cur;
                cur = next;
                break;
            }
            cur = old;
        }
    }
    CHECK_MPI(MPI_Win_unlock_all(win));
    int all[K * MAX_RANKS];
    CHECK_MPI(MPI_Allgather(tickets, K, MPI_INT, all, K, MPI_INT, MPI_COMM_WORLD));
    qsort(all, (size_t)(K * nprocs), sizeof(int), cmp_int);
    for (int i = 0; i < K * nprocs; ++i)
        CHECKF(all[i] == i, "CAS tickets: sorted ticket %d is %d (not distinct and contiguous)", i,
               all[i]);
    int v = -1;
    read_home(home, OFF_TICKET, &v, 1, MPI_INT);
    CHECKF(v == K * nprocs, "ticket counter %d, expected %d", v, K * nprocs);

    /* A CAS mutex guarding a non-atomic get + put increment. */
    const int mine = rank + 1, zero = 0;
    CHECK_MPI(MPI_Win_lock_all(0, win));
    for (int k = 0; k < K / 2; ++k) {
        int old = -1;
        for (;;) {
            CHECK_MPI(MPI_Compare_and_swap(&mine, &zero, &old, MPI_INT, home, OFF_MUTEX, win));
            CHECK_MPI(MPI_Win_flush(home, win));
            CHECKF(old >= 0 && old <= nprocs && old != mine, "mutex word %d", old);
            if (old == 0)
                break;
        }
        int g = -1;
        CHECK_MPI(MPI_Get(&g, 1, MPI_INT, home, OFF_GUARDED, 1, MPI_INT, win));
        CHECK_MPI(MPI_Win_flush(home, win));
        ++g;
        CHECK_MPI(MPI_Put(&g, 1, MPI_INT, home, OFF_GUARDED, 1, MPI_INT, win));
        CHECK_MPI(MPI_Win_flush(home, win));
        /* release: swap back to 0; the word must still be ours */
        CHECK_MPI(MPI_Compare_and_swap(&zero, &mine, &old, MPI_INT, home, OFF_MUTEX, win));
        CHECK_MPI(MPI_Win_flush(home, win));
        CHECKF(old == mine, "mutex released by rank %d held %d", rank, old);
    }
    CHECK_MPI(MPI_Win_unlock_all(win));
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    int mg[2];
    read_home(home, OFF_MUTEX, mg, 2, MPI_INT);
    CHECKF(mg[0] == 0, "mutex left at %d", mg[0]);
    CHECKF(mg[1] == nprocs * (K / 2), "guarded counter %d, expected %d", mg[1], nprocs * (K / 2));
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
}

struct fetched { int old; int rank; };

static int cmp_fetched(const void *a, const void *b)
{
    const struct fetched *x = a, *y = b;
    return (x->old > y->old) - (x->old < y->old);
}

static void get_accumulate_tests(int home)
{
    /* MPI_SUM: element i gets (rank+1)*(i+1); per element, the fetched old
     * values ordered must be the running sums of the contributions. */
    int add[4], old[4] = {-5, -5, -5, -5};
    for (int i = 0; i < 4; ++i)
        add[i] = (rank + 1) * (i + 1);
    CHECK_MPI(MPI_Win_lock(MPI_LOCK_SHARED, home, 0, win));
    CHECK_MPI(MPI_Get_accumulate(add, 4, MPI_INT, old, 4, MPI_INT, home, OFF_GACC, 4, MPI_INT,
                                 MPI_SUM, win));
    CHECK_MPI(MPI_Win_unlock(home, win));
    int all[4 * MAX_RANKS];
    CHECK_MPI(MPI_Allgather(old, 4, MPI_INT, all, 4, MPI_INT, MPI_COMM_WORLD));
    int final[4] = {-1, -1, -1, -1};
    read_home(home, OFF_GACC, final, 4, MPI_INT);
    for (int i = 0; i < 4; ++i) {
        struct fetched f[MAX_RANKS];
        for (int r = 0; r < nprocs; ++r) {
            f[r].old = all[4 * r + i];
            f[r].rank = r;
        }
        qsort(f, (size_t)nprocs, sizeof f[0], cmp_fetched);
        int running = 0;
        for (int j = 0; j < nprocs; ++j) {
            CHECKF(f[j].old == running,
                   "get_accumulate element %d: fetched values do not chain (%d, expected %d)", i,
                   f[j].old, running);
            running += (f[j].rank + 1) * (i + 1);
        }
        CHECKF(final[i] == running, "get_accumulate element %d: final %d, expected %d", i,
               final[i], running);
        CHECK(final[i] == (i + 1) * nprocs * (nprocs + 1) / 2);
    }
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));

    /* MPI_NO_OP: fetches, changes nothing (the origin buffer is ignored) */
    int dummy[4] = {9, 9, 9, 9}, got[4] = {0};
    CHECK_MPI(MPI_Win_lock(MPI_LOCK_SHARED, home, 0, win));
    CHECK_MPI(MPI_Get_accumulate(dummy, 4, MPI_INT, got, 4, MPI_INT, home, OFF_GACC, 4, MPI_INT,
                                 MPI_NO_OP, win));
    CHECK_MPI(MPI_Win_unlock(home, win));
    for (int i = 0; i < 4; ++i)
        CHECKF(got[i] == final[i], "get_accumulate MPI_NO_OP element %d: %d, expected %d", i,
               got[i], final[i]);
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    read_home(home, OFF_GACC, got, 4, MPI_INT);
    for (int i = 0; i < 4; ++i)
        CHECK(got[i] == final[i]);

    /* MPI_REPLACE on 2 elements: per element, a chain of swaps */
    int in[2] = {100 + rank, 200 + rank}, out[2] = {-9, -9};
    CHECK_MPI(MPI_Win_lock(MPI_LOCK_SHARED, home, 0, win));
    CHECK_MPI(MPI_Get_accumulate(in, 2, MPI_INT, out, 2, MPI_INT, home, OFF_GSWAP, 2, MPI_INT,
                                 MPI_REPLACE, win));
    CHECK_MPI(MPI_Win_unlock(home, win));
    int allout[2 * MAX_RANKS];
    CHECK_MPI(MPI_Allgather(out, 2, MPI_INT, allout, 2, MPI_INT, MPI_COMM_WORLD));
    int fin[2];
    read_home(home, OFF_GSWAP, fin, 2, MPI_INT);
    for (int e = 0; e < 2; ++e) {
        int chain[MAX_RANKS + 1];
        for (int r = 0; r < nprocs; ++r)
            chain[r] = allout[2 * r + e];
        chain[nprocs] = fin[e];
        qsort(chain, (size_t)nprocs + 1, sizeof(int), cmp_int);
        CHECKF(chain[0] == -1 - e, "get_accumulate MPI_REPLACE element %d: smallest %d", e,
               chain[0]);
        for (int i = 1; i <= nprocs; ++i)
            CHECKF(chain[i] == 100 * (e + 1) + i - 1,
                   "get_accumulate MPI_REPLACE element %d: sorted value %d is %d", e, i, chain[i]);
    }
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
}

static void accumulate_op_tests(int home)
{
    const int contrib = (rank * 37) % 11 - 5; /* mixed signs, ties at n > 11 only */
    const int prodf = rank % 3 + 1;
    const int bor = 1 << rank, band = ~(1 << rank), bxor = (rank + 1) * 0x111;
    int loc[2] = {(rank * 5) % 3, rank}; /* ties: MAXLOC keeps the lowest index */
    CHECK_MPI(MPI_Win_lock(MPI_LOCK_SHARED, home, 0, win));
    CHECK_MPI(MPI_Accumulate(&contrib, 1, MPI_INT, home, OFF_OPS + 0, 1, MPI_INT, MPI_MAX, win));
    CHECK_MPI(MPI_Accumulate(&contrib, 1, MPI_INT, home, OFF_OPS + 4, 1, MPI_INT, MPI_MIN, win));
    CHECK_MPI(MPI_Accumulate(&prodf, 1, MPI_INT, home, OFF_OPS + 8, 1, MPI_INT, MPI_PROD, win));
    CHECK_MPI(MPI_Accumulate(&bor, 1, MPI_INT, home, OFF_OPS + 12, 1, MPI_INT, MPI_BOR, win));
    CHECK_MPI(MPI_Accumulate(&band, 1, MPI_INT, home, OFF_OPS + 16, 1, MPI_INT, MPI_BAND, win));
    CHECK_MPI(MPI_Accumulate(&bxor, 1, MPI_INT, home, OFF_OPS + 20, 1, MPI_INT, MPI_BXOR, win));
    CHECK_MPI(MPI_Accumulate(&rank, 1, MPI_INT, home, OFF_OPS + 24, 1, MPI_INT, MPI_REPLACE, win));
    CHECK_MPI(MPI_Accumulate(loc, 1, MPI_2INT, home, OFF_MAXLOC, 1, MPI_2INT, MPI_MAXLOC, win));
    CHECK_MPI(MPI_Accumulate(loc, 1, MPI_2INT, home, OFF_MINLOC, 1, MPI_2INT, MPI_MINLOC, win));
    CHECK_MPI(MPI_Win_unlock(home, win));
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));

    int want_max = INT_MIN, want_min = INT_MAX, want_prod = 1, want_bor = 0, want_band = -1,
        want_bxor = 0x5a5a;
    int maxloc[2] = {-1000, 999}, minloc[2] = {1000, 999};
    for (int r = 0; r < nprocs; ++r) {
        const int c = (r * 37) % 11 - 5;
        want_max = c > want_max ? c : want_max;
        want_min = c < want_min ? c : want_min;
        want_prod *= r % 3 + 1;
        want_bor |= 1 << r;
        want_band &= ~(1 << r);
        want_bxor ^= (r + 1) * 0x111;
        const int v = (r * 5) % 3;
        if (v > maxloc[0] || (v == maxloc[0] && r < maxloc[1])) {
            maxloc[0] = v;
            maxloc[1] = r;
        }
        if (v < minloc[0] || (v == minloc[0] && r < minloc[1])) {
            minloc[0] = v;
            minloc[1] = r;
        }
    }
    int ops[8], ml[4];
    read_home(home, OFF_OPS, ops, 8, MPI_INT);
    read_home(home, OFF_MAXLOC, ml, 4, MPI_INT);
    CHECKF(ops[0] == want_max, "MPI_MAX: %d, expected %d", ops[0], want_max);
    CHECKF(ops[1] == want_min, "MPI_MIN: %d, expected %d", ops[1], want_min);
    CHECKF(ops[2] == want_prod, "MPI_PROD: %d, expected %d", ops[2], want_prod);
    CHECKF(ops[3] == want_bor, "MPI_BOR: %#x, expected %#x", ops[3], want_bor);
    CHECKF(ops[4] == want_band, "MPI_BAND: %#x, expected %#x", ops[4], want_band);
    CHECKF(ops[5] == want_bxor, "MPI_BXOR: %#x, expected %#x", ops[5], want_bxor);
    CHECKF(ops[6] >= 0 && ops[6] < nprocs, "MPI_REPLACE: %d is no rank's value", ops[6]);
    CHECKF(ops[7] == 4242, "an untargeted element changed to %d", ops[7]);
    CHECKF(ml[0] == maxloc[0] && ml[1] == maxloc[1], "MPI_MAXLOC: (%d, %d), expected (%d, %d)",
           ml[0], ml[1], maxloc[0], maxloc[1]);
    CHECKF(ml[2] == minloc[0] && ml[3] == minloc[1], "MPI_MINLOC: (%d, %d), expected (%d, %d)",
           ml[2], ml[3], minloc[0], minloc[1]);
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
}

/* Many ranks add into the same elements at once: no update may be lost.
 * Each rank adds into every rank's array, in reps passes. */
static void elementwise_atomicity(void)
{
    enum { REPS = 12 };
    int add[ARR];
    for (int i = 0; i < ARR; ++i)
        add[i] = (rank + 1) * 1000 + i;
    CHECK_MPI(MPI_Win_lock_all(0, win));
    for (int rep = 0; rep < REPS; ++rep) {
        for (int j = 0; j < nprocs; ++j) {
            const int t = (rank + j + rep) % nprocs;
            CHECK_MPI(MPI_Accumulate(add, ARR, MPI_INT, t, OFF_ARRAY, ARR, MPI_INT, MPI_SUM, win));
        }
        if (rep % 4 == 3)
            CHECK_MPI(MPI_Win_flush_all(win));
    }
    CHECK_MPI(MPI_Win_unlock_all(win));
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    int got[ARR];
    read_home(rank, OFF_ARRAY, got, ARR, MPI_INT);
    for (int i = 0; i < ARR; ++i) {
        const int want = REPS * (1000 * nprocs * (nprocs + 1) / 2 + nprocs * i);
        CHECKF(got[i] == want, "concurrent MPI_SUM element %d: %d, expected %d", i, got[i], want);
    }
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
}

int main(int argc, char **argv)
{
    CHECK_MPI(MPI_Init(&argc, &argv));
    rank = world_rank();
    nprocs = world_size();
    CHECK(nprocs <= MAX_RANKS);
    CHECK_MPI(MPI_Win_allocate(WIN_BYTES, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win));
    init_window();
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    /* different home ranks, so targets other than rank 0 are exercised */
    fetch_and_op_tests(0);
    cas_tests(nprocs - 1);
    get_accumulate_tests(nprocs / 2);
    accumulate_op_tests(nprocs - 1);
    elementwise_atomicity();
    CHECK_MPI(MPI_Win_free(&win));
    CHECK_MPI(MPI_Finalize());
    return 0;
}
