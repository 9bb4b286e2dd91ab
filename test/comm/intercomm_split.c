/*
 * MPI_Comm_split, MPI_Comm_create and MPI_Comm_idup on an
 * intercommunicator (MPI-3.1 6.4.2): the result of a split or create
 * connects the members of one color (or of the group each side passes) in
 * the two groups; an idup is a new intercommunicator with the same two
 * groups.  Needs two nonempty groups, so with one rank it only initialises
 * and finalises.
 *
 * The groups: world ranks [0, n/3 + 1) (A) and the rest (B), joined by
 * MPI_Intercomm_create over MPI_COMM_WORLD.
 *   split    color = local rank % 2, key = -local rank: each side of the
 *            result holds the ranks of that parity in reverse order; a
 *            parity with no member on the other side gives MPI_COMM_NULL.
 *            The result works: sizes, ranks, the remote group's world
 *            ranks, a message each way, and an MPI_Allreduce (the other
 *            side's largest world rank).
 *   create   each side passes the group of its local rank 0 alone: the
 *            two rank 0s get a 1-to-1 intercommunicator, the others
 *            MPI_COMM_NULL; with an empty group on one side everybody gets
 *            MPI_COMM_NULL.
 *   idup     two MPI_Comm_idup of the intercommunicator in flight at once,
 *            beside an MPI_Ibarrier on it, completed by one MPI_Waitall:
 *            both are intercommunicators congruent to it, and traffic on
 *            each stays on it (the same tag on both, received in the
 *            opposite order).
 */
#include "check.h"

static int g_rank; /* in MPI_COMM_WORLD */
static int g_size;

/* World rank of local rank r of group A (a = 1) or B. */
static int world_of(int a, int r, int na)
{
    return a ? r : na + r;
}

static void check_split(MPI_Comm inter, int in_a, int na)
{
    int lrank, lsize, rsize;
    CHECK_MPI(MPI_Comm_rank(inter, &lrank));
    CHECK_MPI(MPI_Comm_size(inter, &lsize));
    CHECK_MPI(MPI_Comm_remote_size(inter, &rsize));
    const int parity = lrank % 2;
    MPI_Comm part;
    CHECK_MPI(MPI_Comm_split(inter, parity, -lrank, &part));
    int mine = 0, theirs = 0, above = 0;
    for (int i = 0; i < lsize; i++)
        if (i % 2 == parity) {
            mine++;
            if (i > lrank)
                above++;
        }
    for (int i = 0; i < rsize; i++)
        if (i % 2 == parity)
            theirs++;
    if (theirs == 0) {
        CHECKF(part == MPI_COMM_NULL, "parity %d has no member on the other side", parity);
        return;
    }
    CHECK(part != MPI_COMM_NULL);
    int flag, psize, prsize, prank;
    CHECK_MPI(MPI_Comm_test_inter(part, &flag));
    CHECK(flag == 1);
    CHECK_MPI(MPI_Comm_size(part, &psize));
    CHECK_MPI(MPI_Comm_remote_size(part, &prsize));
    CHECK_MPI(MPI_Comm_rank(part, &prank));
    CHECKF(psize == mine, "local size %d, expected %d", psize, mine);
    CHECKF(prsize == theirs, "remote size %d, expected %d", prsize, theirs);
    CHECKF(prank == above, "rank %d, expected %d (keys reverse the order)", prank, above);

    /* The remote group, in world ranks: the other side's ranks of this
     * parity, highest local rank first. */
    MPI_Group remote, world_group;
    CHECK_MPI(MPI_Comm_remote_group(part, &remote));
    CHECK_MPI(MPI_Comm_group(MPI_COMM_WORLD, &world_group));
    int k = 0;
    for (int i = rsize - 1; i >= 0; i--) {
        if (i % 2 != parity)
            continue;
        int w = -1;
        CHECK_MPI(MPI_Group_translate_ranks(remote, 1, &k, world_group, &w));
        CHECKF(w == world_of(!in_a, i, na), "remote rank %d is world rank %d, expected %d", k, w,
               world_of(!in_a, i, na));
        k++;
    }
    CHECK_MPI(MPI_Group_free(&remote));
    CHECK_MPI(MPI_Group_free(&world_group));

    /* A message each way between ranks of equal rank on both sides. */
    if (prank < prsize) {
        int got = -1;
        CHECK_MPI(MPI_Sendrecv(&g_rank, 1, MPI_INT, prank, 5, &got, 1, MPI_INT, prank, 5, part,
                               MPI_STATUS_IGNORE));
        int expect = -1, j = 0;
        for (int i = rsize - 1; i >= 0; i--)
            if (i % 2 == parity && j++ == prank)
                expect = world_of(!in_a, i, na);
        CHECKF(got == expect, "got %d from remote rank %d, expected %d", got, prank, expect);
    }
    /* Ranks without a partner of equal rank still take part in this. */
    int biggest = -1, expect = -1;
    CHECK_MPI(MPI_Allreduce(&g_rank, &biggest, 1, MPI_INT, MPI_MAX, part));
    for (int i = 0; i < rsize; i++)
        if (i % 2 == parity && world_of(!in_a, i, na) > expect)
            expect = world_of(!in_a, i, na);
    CHECKF(biggest == expect, "allreduce gave %d, expected %d", biggest, expect);
    CHECK_MPI(MPI_Comm_free(&part));
}

static void check_create(MPI_Comm inter, int in_a, int na, int empty_b)
{
    int lrank;
    CHECK_MPI(MPI_Comm_rank(inter, &lrank));
    MPI_Group local, chosen;
    CHECK_MPI(MPI_Comm_group(inter, &local));
    const int zero = 0;
    if (!in_a && empty_b) {
        chosen = MPI_GROUP_EMPTY;
    } else {
        CHECK_MPI(MPI_Group_incl(local, 1, &zero, &chosen));
    }
    MPI_Comm made;
    CHECK_MPI(MPI_Comm_create(inter, chosen, &made));
    if (empty_b || lrank != 0) {
        CHECKF(made == MPI_COMM_NULL, "local rank %d got a communicator (empty side: %d)", lrank, empty_b);
    } else {
        CHECK(made != MPI_COMM_NULL);
        int size, rsize;
        CHECK_MPI(MPI_Comm_size(made, &size));
        CHECK_MPI(MPI_Comm_remote_size(made, &rsize));
        CHECK(size == 1 && rsize == 1);
        int got = -1;
        CHECK_MPI(MPI_Sendrecv(&g_rank, 1, MPI_INT, 0, 9, &got, 1, MPI_INT, 0, 9, made,
                               MPI_STATUS_IGNORE));
        CHECKF(got == world_of(!in_a, 0, na), "got %d, expected %d", got, world_of(!in_a, 0, na));
        CHECK_MPI(MPI_Comm_free(&made));
    }
    if (chosen != MPI_GROUP_EMPTY)
        CHECK_MPI(MPI_Group_free(&chosen));
    CHECK_MPI(MPI_Group_free(&local));
}

static void check_idup(MPI_Comm inter, int in_a, int na)
{
    int lrank, rsize;
    CHECK_MPI(MPI_Comm_rank(inter, &lrank));
    CHECK_MPI(MPI_Comm_remote_size(inter, &rsize));
    MPI_Comm d[2];
    MPI_Request reqs[3];
    CHECK_MPI(MPI_Comm_idup(inter, &d[0], &reqs[0]));
    CHECK_MPI(MPI_Ibarrier(inter, &reqs[1]));
    CHECK_MPI(MPI_Comm_idup(inter, &d[1], &reqs[2]));
    CHECK_MPI(MPI_Waitall(3, reqs, MPI_STATUSES_IGNORE));
    for (int k = 0; k < 2; k++) {
        int flag, result;
        CHECK_MPI(MPI_Comm_test_inter(d[k], &flag));
        CHECKF(flag == 1, "duplicate %d is not an intercommunicator", k);
        CHECK_MPI(MPI_Comm_compare(inter, d[k], &result));
        CHECKF(result == MPI_CONGRUENT, "duplicate %d compares as %d, not MPI_CONGRUENT", k, result);
    }
    /* Local rank r talks to remote rank r (when there is one): one message
     * on each duplicate with the same tag, received in the opposite order. */
    const int partner = lrank < rsize ? lrank : MPI_PROC_NULL;
    int got[2] = {-1, -1}, sent[2] = {g_rank * 10, g_rank * 10 + 1};
    MPI_Request rr[4];
    CHECK_MPI(MPI_Irecv(&got[1], 1, MPI_INT, partner, 3, d[1], &rr[0]));
    CHECK_MPI(MPI_Irecv(&got[0], 1, MPI_INT, partner, 3, d[0], &rr[1]));
    CHECK_MPI(MPI_Isend(&sent[0], 1, MPI_INT, partner, 3, d[0], &rr[2]));
    CHECK_MPI(MPI_Isend(&sent[1], 1, MPI_INT, partner, 3, d[1], &rr[3]));
    CHECK_MPI(MPI_Waitall(4, rr, MPI_STATUSES_IGNORE));
    if (partner != MPI_PROC_NULL) {
        const int w = world_of(!in_a, partner, na);
        CHECKF(got[0] == w * 10 && got[1] == w * 10 + 1, "got %d and %d from world rank %d", got[0], got[1], w);
    }
    /* And a collective on each. */
    for (int k = 0; k < 2; k++) {
        int biggest = -1;
        CHECK_MPI(MPI_Allreduce(&g_rank, &biggest, 1, MPI_INT, MPI_MAX, d[k]));
        const int expect = in_a ? g_size - 1 : na - 1;
        CHECKF(biggest == expect, "allreduce on duplicate %d gave %d, expected %d", k, biggest, expect);
        CHECK_MPI(MPI_Comm_free(&d[k]));
    }
}

int main(int argc, char **argv)
{
    CHECK_MPI(MPI_Init(&argc, &argv));
    CHECK_MPI(MPI_Comm_rank(MPI_COMM_WORLD, &g_rank));
    CHECK_MPI(MPI_Comm_size(MPI_COMM_WORLD, &g_size));
    if (g_size >= 2) {
        const int na = g_size / 3 + 1;
        const int in_a = g_rank < na;
        MPI_Comm local, inter;
        CHECK_MPI(MPI_Comm_split(MPI_COMM_WORLD, in_a, g_rank, &local));
        CHECK_MPI(MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, in_a ? na : 0, 11, &inter));
        check_split(inter, in_a, na);
        check_create(inter, in_a, na, 0);
        check_create(inter, in_a, na, 1);
        check_idup(inter, in_a, na);
        /* The parent still works after all that. */
        int sum = -1, expect = 0;
        CHECK_MPI(MPI_Allreduce(&g_rank, &sum, 1, MPI_INT, MPI_SUM, inter));
        for (int i = 0; i < g_size; i++)
            if ((i < na) != in_a)
                expect += i;
        CHECKF(sum == expect, "allreduce gave %d, expected %d", sum, expect);
        CHECK_MPI(MPI_Comm_free(&inter));
        CHECK_MPI(MPI_Comm_free(&local));
    }
    CHECK_MPI(MPI_Finalize());
    return 0;
}
