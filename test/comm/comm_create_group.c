/*
 * comm_create_group: MPI_Comm_create_group (MPI-3.1 6.4.2), called by the
 * group's members only.
 *
 * 1. The even world ranks, in reverse order, make one communicator while
 *    the odd ranks make another (disjoint groups, same tag, at the same
 *    time): each has the group's size, ranks in the group's order, and
 *    carries an Allreduce, a Bcast and a ring of messages.
 * 2. Overlapping groups, called in the same order by every member: all
 *    ranks with tag 11, then ranks {0, last} with tag 12.
 * 3. The new communicators are isolated from the parent: a message sent
 *    on one is not received on another with the same source and tag.
 * 4. (Run first.)  Two calls one after the other with the same tag: rank 0 makes {0, 1}
 *    and then {0, 2}, while rank 2 joins {0, 2} at once and rank 1, which
 *    holds one more communicator than the others, joins {0, 1} late.  Rank
 *    0's first call must take rank 1's part, not rank 2's for the second.
 * (A group with a process outside the communicator: comm_errors, shmpi
 * only, since MPICH 4.0 fails an assertion there.)
 */
#define _POSIX_C_SOURCE 200809L /* nanosleep */
#include "check.h"

#include <time.h>

static void check_comm(MPI_Comm comm, const int *world_of, int n, const char *what)
{
    int size = -1, rank = -1, me = world_rank();
    CHECK_MPI(MPI_Comm_size(comm, &size));
    CHECK_MPI(MPI_Comm_rank(comm, &rank));
    CHECKF(size == n, "%s: size %d, want %d", what, size, n);
    CHECKF(rank >= 0 && rank < n && world_of[rank] == me, "%s: rank %d is not world rank %d's place",
           what, rank, me);
    int sum = -1, want = 0;
    for (int i = 0; i < n; ++i)
        want += world_of[i];
    CHECK_MPI(MPI_Allreduce(&me, &sum, 1, MPI_INT, MPI_SUM, comm));
    CHECKF(sum == want, "%s: Allreduce of world ranks gave %d, want %d", what, sum, want);
    int root_world = me;
    CHECK_MPI(MPI_Bcast(&root_world, 1, MPI_INT, n - 1, comm));
    CHECKF(root_world == world_of[n - 1], "%s: Bcast from the last rank gave %d", what, root_world);
    int next = (rank + 1) % n, prev = (rank + n - 1) % n, got = -1;
    CHECK_MPI(MPI_Sendrecv(&me, 1, MPI_INT, next, 5, &got, 1, MPI_INT, prev, 5, comm,
                           MPI_STATUS_IGNORE));
    CHECKF(got == world_of[prev], "%s: the ring gave %d from rank %d, want %d", what, got, prev,
           world_of[prev]);
}

/* 4., first of all: with nothing else made yet, rank 1's extra
 * communicator holds the id that ranks 0 and 2 propose. */
static void same_tag_one_after_the_other(MPI_Group world_group, int me, int n)
{
    if (n < 3)
        return;
    MPI_Comm extra = MPI_COMM_NULL, c01 = MPI_COMM_NULL, c02 = MPI_COMM_NULL;
    if (me == 1)
        CHECK_MPI(MPI_Comm_dup(MPI_COMM_SELF, &extra));
    int r01[2] = {0, 1}, r02[2] = {0, 2};
    MPI_Group g01, g02;
    CHECK_MPI(MPI_Group_incl(world_group, 2, r01, &g01));
    CHECK_MPI(MPI_Group_incl(world_group, 2, r02, &g02));
    if (me == 1) {
        /* Late, so that rank 2's message is likely there first (the
         * result must be right whatever the timing). */
        const struct timespec late = {0, 100 * 1000 * 1000};
        nanosleep(&late, NULL);
    }
    if (me == 0 || me == 1) {
        CHECK_MPI(MPI_Comm_create_group(MPI_COMM_WORLD, g01, 13, &c01));
        check_comm(c01, r01, 2, "{0, 1}");
    }
    if (me == 0 || me == 2) {
        CHECK_MPI(MPI_Comm_create_group(MPI_COMM_WORLD, g02, 13, &c02));
        check_comm(c02, r02, 2, "{0, 2}");
    }
    if (c01 != MPI_COMM_NULL)
        CHECK_MPI(MPI_Comm_free(&c01));
    if (c02 != MPI_COMM_NULL)
        CHECK_MPI(MPI_Comm_free(&c02));
    if (extra != MPI_COMM_NULL)
        CHECK_MPI(MPI_Comm_free(&extra));
    CHECK_MPI(MPI_Group_free(&g01));
    CHECK_MPI(MPI_Group_free(&g02));
}

int main(int argc, char **argv)
{
    CHECK_MPI(MPI_Init(&argc, &argv));
    int me = world_rank();
    int n = world_size();
    MPI_Group world_group;
    CHECK_MPI(MPI_Comm_group(MPI_COMM_WORLD, &world_group));
    same_tag_one_after_the_other(world_group, me, n);

    /* 1. */
    int parity = me % 2;
    int members[64], count = 0;
    CHECK(n <= 64);
    for (int r = n - 1; r >= 0; --r)
        if (r % 2 == parity)
            members[count++] = r;
    MPI_Group half;
    CHECK_MPI(MPI_Group_incl(world_group, count, members, &half));
    MPI_Comm half_comm = MPI_COMM_NULL;
    CHECK_MPI(MPI_Comm_create_group(MPI_COMM_WORLD, half, 7, &half_comm));
    CHECK(half_comm != MPI_COMM_NULL);
    check_comm(half_comm, members, count, parity ? "odd ranks" : "even ranks");

    /* 2. */
    int all[64];
    for (int r = 0; r < n; ++r)
        all[r] = r;
    MPI_Comm all_comm = MPI_COMM_NULL;
    CHECK_MPI(MPI_Comm_create_group(MPI_COMM_WORLD, world_group, 11, &all_comm));
    check_comm(all_comm, all, n, "every rank");
    int ends[2] = {0, n - 1};
    int nends = n > 1 ? 2 : 1;
    MPI_Comm ends_comm = MPI_COMM_NULL;
    if (me == 0 || me == n - 1) {
        MPI_Group ends_group;
        CHECK_MPI(MPI_Group_incl(world_group, nends, ends, &ends_group));
        CHECK_MPI(MPI_Comm_create_group(all_comm, ends_group, 12, &ends_comm));
        check_comm(ends_comm, ends, nends, "ranks 0 and last");
        CHECK_MPI(MPI_Group_free(&ends_group));
    }

    /* 3. Rank 0 sends on all_comm first, then on MPI_COMM_WORLD, same tag;
     * the last rank receives on MPI_COMM_WORLD first.  The world message
     * must be the one it gets there. */
    if (n > 1) {
        int a = 100, w = 200, got = -1;
        if (me == 0) {
            MPI_Request r[2];
            CHECK_MPI(MPI_Isend(&a, 1, MPI_INT, n - 1, 9, all_comm, &r[0]));
            CHECK_MPI(MPI_Isend(&w, 1, MPI_INT, n - 1, 9, MPI_COMM_WORLD, &r[1]));
            MPI_Status st[2];
            CHECK_MPI(MPI_Waitall(2, r, st));
        } else if (me == n - 1) {
            CHECK_MPI(MPI_Recv(&got, 1, MPI_INT, 0, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            CHECKF(got == 200, "on MPI_COMM_WORLD came %d", got);
            CHECK_MPI(MPI_Recv(&got, 1, MPI_INT, 0, 9, all_comm, MPI_STATUS_IGNORE));
            CHECKF(got == 100, "on the new communicator came %d", got);
        }
    }

    if (ends_comm != MPI_COMM_NULL)
        CHECK_MPI(MPI_Comm_free(&ends_comm));
    CHECK_MPI(MPI_Comm_free(&all_comm));
    CHECK_MPI(MPI_Comm_free(&half_comm));
    CHECK_MPI(MPI_Group_free(&half));
    CHECK_MPI(MPI_Group_free(&world_group));
    CHECK_MPI(MPI_Finalize());
    return 0;
}
