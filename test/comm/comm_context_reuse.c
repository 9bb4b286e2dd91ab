/*
 * Many communicators made and freed, with the processes holding different
 * sets of them at every moment: every new communicator's traffic stays
 * apart from every live one's.  An MPI that gives freed communicators'
 * context ids to new ones (shmpi, MPICH) must find an id that no member
 * still uses; this catches one that picks an id some member holds.
 *
 * Each step makes communicators in one of five ways (dup, split with more
 * dups in one color than the other, create, create_group, intercomm_create
 * and merge), gives each a lifetime of 1 to 9 steps, and frees those whose
 * time is up, in the order they were made (the same order at every member).
 * Then one message on every live communicator, to the right neighbour with
 * the same tag, all sent before any is received and received in reverse
 * order, must arrive on its own communicator.  Two final loops duplicate
 * and free one communicator many times, with MPI_Comm_dup and with
 * MPI_Comm_idup.
 */
#include "check.h"

enum { STEPS = 100, MAX_LIVE = 64, TAG = 3, QUICK_DUPS = 400, IDUPS = 300 };

typedef struct {
    MPI_Comm comm;
    int dies_at;
    int label; /* the same at every member: which step made it, and j */
} Live;

static Live live[MAX_LIVE];
static int nlive = 0;

/* The j-th communicator made in `step` (j is the same at all its members,
 * and so is its lifetime). */
static void add(MPI_Comm c, int step, int j)
{
    if (c == MPI_COMM_NULL)
        return;
    CHECKF(nlive < MAX_LIVE, "more than %d live communicators", MAX_LIVE);
    live[nlive].comm = c;
    live[nlive].dies_at = step + 1 + (step * 7 + j * 3) % 9;
    live[nlive].label = 1 + step * 8 + j;
    ++nlive;
}

/* A new communicator works: the sum of its ranks, and its size. */
static void check_sum(MPI_Comm c)
{
    int r = 0;
    int n = 0;
    CHECK_MPI(MPI_Comm_rank(c, &r));
    CHECK_MPI(MPI_Comm_size(c, &n));
    int sum = -1;
    CHECK_MPI(MPI_Allreduce(&r, &sum, 1, MPI_INT, MPI_SUM, c));
    CHECKF(sum == n * (n - 1) / 2, "sum of ranks %d, expected %d (size %d)", sum, n * (n - 1) / 2, n);
}

/* One message on every live communicator and on MPI_COMM_WORLD. */
static void check_isolation(int step)
{
    MPI_Comm comms[MAX_LIVE + 1];
    int label[MAX_LIVE + 1];
    int k = 0;
    label[k] = 0;
    comms[k++] = MPI_COMM_WORLD;
    for (int i = 0; i < nlive; ++i) {
        label[k] = live[i].label;
        comms[k++] = live[i].comm;
    }
    int out[MAX_LIVE + 1];
    int rank[MAX_LIVE + 1];
    int size[MAX_LIVE + 1];
    MPI_Request req[MAX_LIVE + 1];
    for (int i = 0; i < k; ++i) {
        CHECK_MPI(MPI_Comm_rank(comms[i], &rank[i]));
        CHECK_MPI(MPI_Comm_size(comms[i], &size[i]));
        out[i] = 1000 * label[i] + rank[i];
        CHECK_MPI(MPI_Isend(&out[i], 1, MPI_INT, (rank[i] + 1) % size[i], TAG, comms[i], &req[i]));
    }
    for (int i = k - 1; i >= 0; --i) {
        const int from = (rank[i] + size[i] - 1) % size[i];
        int in = -1;
        CHECK_MPI(MPI_Recv(&in, 1, MPI_INT, from, TAG, comms[i], MPI_STATUS_IGNORE));
        CHECKF(in == 1000 * label[i] + from, "step %d: communicator %d of %d got %d from rank %d, expected %d",
               step, i, k, in, from, 1000 * label[i] + from);
    }
    for (int i = 0; i < k; ++i)
        CHECK_MPI(MPI_Wait(&req[i], MPI_STATUS_IGNORE));
}

int main(int argc, char **argv)
{
    CHECK_MPI(MPI_Init(&argc, &argv));
    const int me = world_rank();
    const int n = world_size();
    const int half = (n + 1) / 2; /* ranks below it: the first half */

    MPI_Group world_group;
    CHECK_MPI(MPI_Comm_group(MPI_COMM_WORLD, &world_group));

    for (int step = 0; step < STEPS; ++step) {
        const int first = nlive;
        switch (step % 5) {
        case 0: {
            MPI_Comm c;
            CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &c));
            add(c, step, 0);
            break;
        }
        case 1: {
            /* Colors hold different numbers of communicators afterwards. */
            const int color = me % 2;
            MPI_Comm s;
            CHECK_MPI(MPI_Comm_split(MPI_COMM_WORLD, color, n - me, &s));
            add(s, step, 0);
            for (int j = 0; j <= color * 2; ++j) {
                MPI_Comm d;
                CHECK_MPI(MPI_Comm_dup(s, &d));
                add(d, step, j + 1);
            }
            break;
        }
        case 2: {
            /* The even ranks only; the others get MPI_COMM_NULL. */
            int evens[64];
            int ne = 0;
            for (int r = 0; r < n && ne < 64; r += 2)
                evens[ne++] = r;
            MPI_Group g;
            CHECK_MPI(MPI_Group_incl(world_group, ne, evens, &g));
            MPI_Comm c;
            CHECK_MPI(MPI_Comm_create(MPI_COMM_WORLD, g, &c));
            CHECKF((c != MPI_COMM_NULL) == (me % 2 == 0), "MPI_Comm_create gave %s to rank %d",
                  c == MPI_COMM_NULL ? "MPI_COMM_NULL" : "a communicator", me);
            add(c, step, 0);
            CHECK_MPI(MPI_Group_free(&g));
            break;
        }
        case 3: {
            /* The first half only, and only its members call. */
            if (me < half) {
                int range[1][3] = {{0, half - 1, 1}};
                MPI_Group g;
                CHECK_MPI(MPI_Group_range_incl(world_group, 1, range, &g));
                MPI_Comm c;
                CHECK_MPI(MPI_Comm_create_group(MPI_COMM_WORLD, g, step, &c));
                add(c, step, 0);
                CHECK_MPI(MPI_Group_free(&g));
            }
            break;
        }
        default: {
            /* The two halves, joined by an intercommunicator, merged. */
            if (n < 2)
                break;
            const int low = me < half;
            MPI_Comm local;
            CHECK_MPI(MPI_Comm_split(MPI_COMM_WORLD, low, me, &local));
            MPI_Comm inter;
            CHECK_MPI(MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, low ? half : 0, step, &inter));
            int remote = 0;
            CHECK_MPI(MPI_Comm_remote_size(inter, &remote));
            CHECKF(remote == (low ? n - half : half), "remote size %d", remote);
            MPI_Comm merged;
            CHECK_MPI(MPI_Intercomm_merge(inter, !low, &merged));
            CHECK_MPI(MPI_Comm_free(&inter));
            add(local, step, 0);
            add(merged, step, 1);
            break;
        }
        }
        for (int i = first; i < nlive; ++i)
            check_sum(live[i].comm);
        check_isolation(step);
        /* Free those whose time is up, oldest first. */
        int kept = 0;
        for (int i = 0; i < nlive; ++i) {
            if (live[i].dies_at <= step) {
                CHECK_MPI(MPI_Comm_free(&live[i].comm));
                CHECKF(live[i].comm == MPI_COMM_NULL, "MPI_Comm_free must set the handle to MPI_COMM_NULL");
            } else {
                live[kept++] = live[i];
            }
        }
        nlive = kept;
    }
    check_isolation(STEPS);
    for (int i = 0; i < nlive; ++i)
        CHECK_MPI(MPI_Comm_free(&live[i].comm));
    nlive = 0;

    /* Many duplicates, one at a time, each used once. */
    for (int i = 0; i < QUICK_DUPS; ++i) {
        MPI_Comm c;
        CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &c));
        if (i % 100 == 0) {
            add(c, 0, 0);
            check_isolation(STEPS + i);
            nlive = 0;
        }
        CHECK_MPI(MPI_Comm_free(&c));
    }

    /* The same with MPI_Comm_idup (shmpi takes these ids from a job-wide
     * table without an agreement, and each one freed is taken again). */
    for (int i = 0; i < IDUPS; ++i) {
        MPI_Comm c;
        MPI_Request r;
        CHECK_MPI(MPI_Comm_idup(MPI_COMM_WORLD, &c, &r));
        CHECK_MPI(MPI_Wait(&r, MPI_STATUS_IGNORE));
        if (i % 100 == 0) {
            add(c, 0, 0);
            check_sum(c);
            check_isolation(STEPS + QUICK_DUPS + i);
            nlive = 0;
        }
        CHECK_MPI(MPI_Comm_free(&c));
    }

    CHECK_MPI(MPI_Group_free(&world_group));
    CHECK_MPI(MPI_Finalize());
    return 0;
}
