/*
 * MPI_Comm_idup (MPI-3.1 6.4.2): a nonblocking MPI_Comm_dup.
 *
 *   A. Idup of MPI_COMM_WORLD, completed by MPI_Wait: same size and rank,
 *      MPI_CONGRUENT to the world, its own context (a message sent on the
 *      world is not received on the duplicate, and the other way round),
 *      collectives on it work.
 *   B. Three idups outstanding at once (of the world, of a split, of the
 *      world again), with a blocking MPI_Comm_dup of the world and a
 *      point-to-point exchange started in between, completed in reverse
 *      order with MPI_Waitall: every communicator made is distinct from all
 *      the others (MPI_Comm_compare gives MPI_CONGRUENT, never MPI_IDENT,
 *      and traffic on one never reaches another).
 *   C. Attributes: a keyval whose copy callback marks the value is copied
 *      into the duplicate when MPI_Comm_idup is called, not later.
 *   D. Completion by MPI_Test alone.
 *   E. 40 idup/free rounds, more than any pool of collective regions.
 */
#include "check.h"

static int copies = 0;

/* Copies the attribute value plus 1000, so the copy is recognisable. */
static int copy_plus(MPI_Comm old, int keyval, void *extra, void *in, void *out, int *flag)
{
    (void)old;
    (void)keyval;
    (void)extra;
    ++copies;
    *(void **)out = (void *)((intptr_t)in + 1000);
    *flag = 1;
    return MPI_SUCCESS;
}

/* Every rank sends its rank + `salt` to the next rank on `a`, tag 7; a
 * receive on `b` with the same source and tag must find nothing, and the
 * receive on `a` must get the value. */
static void check_isolated(MPI_Comm a, MPI_Comm b, int salt)
{
    int rank, n;
    CHECK_MPI(MPI_Comm_rank(a, &rank));
    CHECK_MPI(MPI_Comm_size(a, &n));
    const int next = (rank + 1) % n, prev = (rank + n - 1) % n;
    int out = rank + salt, in = -1;
    MPI_Request r;
    CHECK_MPI(MPI_Isend(&out, 1, MPI_INT, next, 7, a, &r));
    /* The message is on its way (its send was started); a probe on the
     * other communicator must not see it.  A barrier on `a` makes sure the
     * sender has started it before we look, ... */
    CHECK_MPI(MPI_Barrier(a));
    int found = 1;
    CHECK_MPI(MPI_Iprobe(prev, 7, b, &found, MPI_STATUS_IGNORE));
    CHECKF(!found, "a message sent on one communicator was visible on another (salt %d)", salt);
    /* Nobody goes on to a check that sends on `b` before every probe here
     * is done. */
    CHECK_MPI(MPI_Barrier(a));
    CHECK_MPI(MPI_Recv(&in, 1, MPI_INT, prev, 7, a, MPI_STATUS_IGNORE));
    CHECKF(in == prev + salt, "got %d, want %d", in, prev + salt);
    CHECK_MPI(MPI_Wait(&r, MPI_STATUS_IGNORE));
}

static void check_dup_of(MPI_Comm parent, MPI_Comm d)
{
    int pr, pn, dr, dn, cmp;
    CHECK(d != MPI_COMM_NULL);
    CHECK_MPI(MPI_Comm_rank(parent, &pr));
    CHECK_MPI(MPI_Comm_size(parent, &pn));
    CHECK_MPI(MPI_Comm_rank(d, &dr));
    CHECK_MPI(MPI_Comm_size(d, &dn));
    CHECKF(pr == dr && pn == dn, "rank %d size %d, parent rank %d size %d", dr, dn, pr, pn);
    CHECK_MPI(MPI_Comm_compare(parent, d, &cmp));
    CHECKF(cmp == MPI_CONGRUENT, "MPI_Comm_compare gave %d, want MPI_CONGRUENT", cmp);
    int sum = 0, one = pr + 1;
    CHECK_MPI(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, d));
    CHECKF(sum == pn * (pn + 1) / 2, "allreduce on the duplicate: %d", sum);
}

int main(int argc, char **argv)
{
    CHECK_MPI(MPI_Init(&argc, &argv));
    const int rank = world_rank();
    const int n = world_size();

    /* A. */
    {
        MPI_Comm d = MPI_COMM_NULL;
        MPI_Request r;
        CHECK_MPI(MPI_Comm_idup(MPI_COMM_WORLD, &d, &r));
        CHECK(r != MPI_REQUEST_NULL);
        CHECK_MPI(MPI_Wait(&r, MPI_STATUS_IGNORE));
        CHECK(r == MPI_REQUEST_NULL);
        check_dup_of(MPI_COMM_WORLD, d);
        check_isolated(MPI_COMM_WORLD, d, 100);
        check_isolated(d, MPI_COMM_WORLD, 200);
        CHECK_MPI(MPI_Comm_free(&d));
    }

    /* B. */
    {
        MPI_Comm half;
        CHECK_MPI(MPI_Comm_split(MPI_COMM_WORLD, rank % 2, -rank, &half));
        MPI_Comm d[3] = {MPI_COMM_NULL, MPI_COMM_NULL, MPI_COMM_NULL}, blocking;
        MPI_Request r[4];
        CHECK_MPI(MPI_Comm_idup(MPI_COMM_WORLD, &d[0], &r[0]));
        CHECK_MPI(MPI_Comm_idup(half, &d[1], &r[1]));
        /* A blocking dup while two idups are pending: it must not take a
         * context an idup took. */
        CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &blocking));
        CHECK_MPI(MPI_Comm_idup(MPI_COMM_WORLD, &d[2], &r[2]));
        int token = rank, got = -1;
        CHECK_MPI(MPI_Irecv(&got, 1, MPI_INT, (rank + n - 1) % n, 3, MPI_COMM_WORLD, &r[3]));
        CHECK_MPI(MPI_Send(&token, 1, MPI_INT, (rank + 1) % n, 3, MPI_COMM_WORLD));
        MPI_Request rev[4] = {r[3], r[2], r[1], r[0]};
        CHECK_MPI(MPI_Waitall(4, rev, MPI_STATUSES_IGNORE));
        CHECKF(got == (rank + n - 1) % n, "point-to-point beside the idups: got %d", got);
        check_dup_of(MPI_COMM_WORLD, d[0]);
        check_dup_of(half, d[1]);
        check_dup_of(MPI_COMM_WORLD, d[2]);
        check_dup_of(MPI_COMM_WORLD, blocking);
        MPI_Comm world_like[4] = {MPI_COMM_WORLD, d[0], d[2], blocking};
        for (int i = 0; i < 4; ++i) {
            for (int j = 0; j < 4; ++j) {
                if (i != j)
                    check_isolated(world_like[i], world_like[j], 10 * i + j);
            }
        }
        check_isolated(half, d[1], 300);
        check_isolated(d[1], half, 400);
        for (int i = 0; i < 3; ++i)
            CHECK_MPI(MPI_Comm_free(&d[i]));
        CHECK_MPI(MPI_Comm_free(&blocking));
        CHECK_MPI(MPI_Comm_free(&half));
    }

    /* C. */
    {
        int key;
        CHECK_MPI(MPI_Comm_create_keyval(copy_plus, MPI_COMM_NULL_DELETE_FN, &key, NULL));
        MPI_Comm parent;
        CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &parent));
        CHECK_MPI(MPI_Comm_set_attr(parent, key, (void *)(intptr_t)5));
        copies = 0;
        MPI_Comm d;
        MPI_Request r;
        CHECK_MPI(MPI_Comm_idup(parent, &d, &r));
        /* Changed after the call: the duplicate keeps what was there at it. */
        CHECK_MPI(MPI_Comm_set_attr(parent, key, (void *)(intptr_t)6));
        CHECK_MPI(MPI_Wait(&r, MPI_STATUS_IGNORE));
        CHECKF(copies == 1, "the copy callback ran %d times", copies);
        void *v = NULL;
        int flag = 0;
        CHECK_MPI(MPI_Comm_get_attr(d, key, &v, &flag));
        CHECKF(flag && (intptr_t)v == 1005, "the duplicate's attribute: flag %d value %ld", flag,
               (long)(intptr_t)v);
        CHECK_MPI(MPI_Comm_free(&d));
        CHECK_MPI(MPI_Comm_free(&parent));
        CHECK_MPI(MPI_Comm_free_keyval(&key));
    }

    /* D. */
    {
        MPI_Comm d;
        MPI_Request r;
        CHECK_MPI(MPI_Comm_idup(MPI_COMM_WORLD, &d, &r));
        int done = 0;
        while (!done)
            CHECK_MPI(MPI_Test(&r, &done, MPI_STATUS_IGNORE));
        check_dup_of(MPI_COMM_WORLD, d);
        CHECK_MPI(MPI_Comm_free(&d));
    }

    /* E. */
    for (int i = 0; i < 40; ++i) {
        MPI_Comm d;
        MPI_Request r;
        CHECK_MPI(MPI_Comm_idup(MPI_COMM_WORLD, &d, &r));
        CHECK_MPI(MPI_Wait(&r, MPI_STATUS_IGNORE));
        int v = rank * 3 + i, sum = 0;
        CHECK_MPI(MPI_Allreduce(&v, &sum, 1, MPI_INT, MPI_SUM, d));
        CHECKF(sum == 3 * n * (n - 1) / 2 + n * i, "round %d: allreduce %d", i, sum);
        CHECK_MPI(MPI_Comm_free(&d));
    }

    CHECK_MPI(MPI_Finalize());
    return 0;
}
