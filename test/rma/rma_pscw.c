/*
 * General active-target synchronisation (MPI-3.1 11.5.2): MPI_Win_post /
 * MPI_Win_start / MPI_Win_complete / MPI_Win_wait, and MPI_Win_test polled
 * in a loop instead of MPI_Win_wait.  Two patterns, several rounds each
 * with fresh data: a ring (each rank puts to its right neighbour and gets
 * from its left one, so each exposes its window to both neighbours), and a
 * star (every other rank puts into its own slot of rank 0's window and
 * accumulates into a shared sum there; in some rounds rank 0 takes part as
 * an origin too, in others not).
 */
#include "check.h"

enum {
    PUT_OFF = 0,   /* 4 ints: the left neighbour puts here */
    GET_OFF = 4,   /* 4 ints: the right neighbour gets these */
    SUM_OFF = 8,   /* 4 ints: the star's sums (rank 0) */
    SLOT_OFF = 12, /* n ints: the star's slots (rank 0) */
    MAX_RANKS = 64,
    ROUNDS = 6
};

static int value(int rank, int round, int i) { return 100000 * round + 100 * rank + i; }

/* A group of the listed world ranks (duplicates dropped). */
static MPI_Group group_of(const int *ranks, int count)
{
    MPI_Group world, g;
    int uniq[MAX_RANKS], m = 0;
    for (int i = 0; i < count; ++i) {
        int dup = 0;
        for (int j = 0; j < m; ++j)
            dup |= uniq[j] == ranks[i];
        if (!dup)
            uniq[m++] = ranks[i];
    }
    CHECK_MPI(MPI_Comm_group(MPI_COMM_WORLD, &world));
    CHECK_MPI(MPI_Group_incl(world, m, uniq, &g));
    CHECK_MPI(MPI_Group_free(&world));
    return g;
}

/* Ends the exposure epoch with MPI_Win_wait, or by polling MPI_Win_test. */
static void end_exposure(MPI_Win win, int use_test)
{
    if (!use_test) {
        CHECK_MPI(MPI_Win_wait(win));
        return;
    }
    int flag = 0;
    long polls = 0;
    while (!flag) {
        CHECK_MPI(MPI_Win_test(win, &flag));
        ++polls;
    }
    CHECK(polls >= 1);
}

static void ring(MPI_Win win, int *buf)
{
    const int rank = world_rank();
    int next, prev;
    ring_neighbours(&next, &prev);
    const int nb[2] = {prev, next};
    MPI_Group neighbours = group_of(nb, 2);
    for (int round = 0; round < ROUNDS; ++round) {
        for (int i = 0; i < 4; ++i) {
            buf[PUT_OFF + i] = -1;
            buf[GET_OFF + i] = value(rank, round, i);
        }
        int src[4], got[4];
        for (int i = 0; i < 4; ++i) {
            src[i] = value(rank, round, 50 + i);
            got[i] = -1;
        }
        CHECK_MPI(MPI_Win_post(neighbours, 0, win));
        CHECK_MPI(MPI_Win_start(neighbours, 0, win));
        CHECK_MPI(MPI_Put(src, 4, MPI_INT, next, PUT_OFF, 4, MPI_INT, win));
        CHECK_MPI(MPI_Get(got, 4, MPI_INT, prev, GET_OFF, 4, MPI_INT, win));
        CHECK_MPI(MPI_Win_complete(win));
        /* the access epoch is complete: the get's data has arrived */
        for (int i = 0; i < 4; ++i)
            CHECKF(got[i] == value(prev, round, i), "ring round %d: got[%d] = %d, expected %d",
                   round, i, got[i], value(prev, round, i));
        end_exposure(win, round % 2);
        for (int i = 0; i < 4; ++i) {
            CHECKF(buf[PUT_OFF + i] == value(prev, round, 50 + i),
                   "ring round %d: put element %d is %d, expected %d", round, i, buf[PUT_OFF + i],
                   value(prev, round, 50 + i));
            CHECK(buf[GET_OFF + i] == value(rank, round, i));
        }
    }
    CHECK_MPI(MPI_Group_free(&neighbours));
}

static void star(MPI_Win win, int *buf)
{
    const int rank = world_rank(), n = world_size();
    int all[MAX_RANKS] = {0}, zero = 0;
    for (int r = 0; r < n; ++r)
        all[r] = r;
    MPI_Group everyone = group_of(all, n);
    MPI_Group others = MPI_GROUP_EMPTY;
    if (n > 1)
        others = group_of(all + 1, n - 1);
    MPI_Group root = group_of(&zero, 1);

    for (int round = 0; round < ROUNDS; ++round) {
        /* even rounds: rank 0 is an origin too; odd rounds: only the others
         * (with one rank, odd rounds have no origin and are skipped) */
        const int root_joins = round % 2 == 0;
        if (!root_joins && n == 1)
            continue;
        const int origin = rank != 0 || root_joins;
        if (rank == 0) {
            for (int i = 0; i < 4; ++i)
                buf[SUM_OFF + i] = 1000 * round;
            for (int r = 0; r < n; ++r)
                buf[SLOT_OFF + r] = -1;
            CHECK_MPI(MPI_Win_post(root_joins ? everyone : others, 0, win));
        }
        if (origin) {
            const int mine = value(rank, round, 7);
            int add[4];
            for (int i = 0; i < 4; ++i)
                add[i] = (rank + 1) * (i + 1) + round;
            CHECK_MPI(MPI_Win_start(root, 0, win));
            CHECK_MPI(MPI_Put(&mine, 1, MPI_INT, 0, SLOT_OFF + rank, 1, MPI_INT, win));
            CHECK_MPI(MPI_Accumulate(add, 4, MPI_INT, 0, SUM_OFF, 4, MPI_INT, MPI_SUM, win));
            CHECK_MPI(MPI_Win_complete(win));
        }
        if (rank == 0) {
            end_exposure(win, round % 3 == 1);
            for (int i = 0; i < 4; ++i) {
                int want = 1000 * round;
                for (int r = root_joins ? 0 : 1; r < n; ++r)
                    want += (r + 1) * (i + 1) + round;
                CHECKF(buf[SUM_OFF + i] == want, "star round %d: sum[%d] = %d, expected %d", round,
                       i, buf[SUM_OFF + i], want);
            }
            for (int r = 0; r < n; ++r) {
                const int want = (r == 0 && !root_joins) ? -1 : value(r, round, 7);
                CHECKF(buf[SLOT_OFF + r] == want, "star round %d: slot %d = %d, expected %d", round,
                       r, buf[SLOT_OFF + r], want);
            }
        }
    }
    CHECK_MPI(MPI_Group_free(&everyone));
    if (others != MPI_GROUP_EMPTY)
        CHECK_MPI(MPI_Group_free(&others));
    CHECK_MPI(MPI_Group_free(&root));
}

int main(int argc, char **argv)
{
    CHECK_MPI(MPI_Init(&argc, &argv));
    const int n = world_size();
    CHECK(n <= MAX_RANKS);
    const int ints = SLOT_OFF + MAX_RANKS;

    int *buf = check_malloc(ints * sizeof(int));
    for (int i = 0; i < ints; ++i)
        buf[i] = -1;
    MPI_Win win;
    CHECK_MPI(MPI_Win_create(buf, ints * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD,
                             &win));
    ring(win, buf);
    star(win, buf);
    ring(win, buf); /* the ring again after the star */
    CHECK_MPI(MPI_Win_free(&win));
    free(buf);

    /* the same on an MPI_Win_allocate window (76 ints: a multiple of 16
     * bytes, as MPICH 4.0.2 (ch4:ucx) misplaces the windows of ranks above 0
     * of an MPI_Win_allocate whose size is not) */
    int *abuf = NULL;
    CHECK_MPI(MPI_Win_allocate(ints * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD,
                               &abuf, &win));
    ring(win, abuf);
    star(win, abuf);
    CHECK_MPI(MPI_Win_free(&win));

    CHECK_MPI(MPI_Finalize());
    return 0;
}
