/*
 * grequest: generalized requests (MPI-3.1 12.2) and the status calls their
 * query functions use (12.3).
 *
 * Each request's extra_state logs its callbacks in order ('q' query_fn,
 * 'f' free_fn, 'c' cancel_fn told complete=0, 'C' complete=1), and
 * query_fn fills the status from it: MPI_SOURCE, MPI_TAG, a count with
 * MPI_Status_set_elements(_x) and the cancelled flag with
 * MPI_Status_set_cancelled.
 *
 * 1. Completed before MPI_Wait: nothing runs before the wait, which calls
 *    query_fn then free_fn once each and returns the status query_fn made
 *    (MPI_Get_count, MPI_Get_elements, MPI_Test_cancelled read it back);
 *    query_fn gets a status of its own under MPI_STATUS_IGNORE.
 * 2. Completed between two MPI_Test calls: flag 0 and no callback, then
 *    flag 1 with "qf".  MPI_Testany and MPI_Testall likewise.
 * 3. MPI_Status_set_elements with predefined and derived types:
 *    MPI_Get_elements gives the count back, MPI_Get_count the count in
 *    whole elements or MPI_UNDEFINED, the other fields stay;
 *    MPI_Status_set_cancelled sets what MPI_Test_cancelled reads, both
 *    ways.
 * 4. MPI_Cancel calls cancel_fn with complete=0, then, after
 *    MPI_Grequest_complete, with complete=1; query_fn reports the
 *    cancellation.
 * 5. MPI_Waitall, MPI_Waitany, MPI_Waitsome and MPI_Testsome with
 *    generalized requests among receives from the ring neighbour: an
 *    incomplete generalized request is never reported, a complete one is,
 *    each status is its own request's.
 * 6. MPI_Request_get_status calls query_fn, not free_fn, and leaves the
 *    request to a later wait.
 * 7. MPI_Request_free before MPI_Grequest_complete: free_fn runs in
 *    MPI_Grequest_complete, once; after it: in MPI_Request_free.
 * 8. Under MPI_ERRORS_RETURN, a callback's error code is what the call
 *    returns: query_fn's and free_fn's from MPI_Wait, query_fn's from
 *    MPI_Request_get_status, cancel_fn's from MPI_Cancel, free_fn's from
 *    MPI_Request_free and MPI_Grequest_complete; MPI_Waitall returns
 *    MPI_ERR_IN_STATUS with the failed request's error in its status.
 * 9. MPI_Status_set_elements_x with counts above 2^31, read back with
 *    MPI_Get_elements_x (MPI_Get_elements and MPI_Get_count say
 *    MPI_UNDEFINED).
 * 10. MPI-3.1 3.2.5: the calls that complete one request (MPI_Wait,
 *    MPI_Test, MPI_Waitany, MPI_Testany, MPI_Request_get_status) leave the
 *    status's MPI_ERROR as it was, even when query_fn fails or writes
 *    MPI_ERROR itself (MPICH drops what query_fn writes there too).
 *
 * Checks under #ifdef SHMPI (shmpi's mpi.h defines it) are where MPICH
 * 4.0.2 departs from MPI-3.1 12.2 and 12.3: it calls free_fn in
 * MPI_Request_free before the request is complete; puts a code of class
 * MPI_ERR_OTHER, not the callback's, in the failed request's status from
 * MPI_Waitall; returns query_fn's error, not free_fn's, when both fail; and
 * MPI_Status_set_elements with a derived type takes the count as whole
 * elements of the type, not basic elements (pmodels/mpich#7764).
 */
#include "check.h"

typedef struct {
    char log[32];
    int len;
    int source;
    int tag;
    MPI_Datatype type;
    MPI_Count count; /* basic elements of `type` query_fn reports */
    int cancelled;
    int query_rc;
    int free_rc;
    int cancel_rc;
    int status_error; /* query_fn writes this to MPI_ERROR when nonzero */
    int null_status;  /* query_fn was given NULL */
} state;

static void note(state *s, char c)
{
    CHECKF(s->len < (int)sizeof s->log - 1, "too many callbacks: %s", s->log);
    s->log[s->len++] = c;
    s->log[s->len] = '\0';
}

static int query_fn(void *extra, MPI_Status *status)
{
    state *s = (state *)extra;
    note(s, 'q');
    if (status == NULL) {
        s->null_status = 1;
        return s->query_rc;
    }
    status->MPI_SOURCE = s->source;
    status->MPI_TAG = s->tag;
    if (s->status_error != 0)
        status->MPI_ERROR = s->status_error;
    if (s->count <= 2147483647)
        CHECK_MPI(MPI_Status_set_elements(status, s->type, (int)s->count));
    else
        CHECK_MPI(MPI_Status_set_elements_x(status, s->type, s->count));
    CHECK_MPI(MPI_Status_set_cancelled(status, s->cancelled));
    return s->query_rc;
}

static int free_fn(void *extra)
{
    state *s = (state *)extra;
    note(s, 'f');
    return s->free_rc;
}

static int cancel_fn(void *extra, int complete)
{
    state *s = (state *)extra;
    note(s, complete ? 'C' : 'c');
    return s->cancel_rc;
}

/* A fresh state whose query_fn reports `count` MPI_INTs from `source` with
 * `tag`, and a generalized request on it. */
static void start(state *s, int source, int tag, MPI_Count count, MPI_Request *req)
{
    memset(s, 0, sizeof *s);
    s->source = source;
    s->tag = tag;
    s->type = MPI_INT;
    s->count = count;
    *req = MPI_REQUEST_NULL;
    CHECK_MPI(MPI_Grequest_start(query_fn, free_fn, cancel_fn, s, req));
    CHECK(*req != MPI_REQUEST_NULL);
}

#define CHECK_LOG(s, want)                                                                         \
    CHECKF(strcmp((s).log, (want)) == 0, "callbacks \"%s\", expected \"%s\"", (s).log, (want))

/* One query_fn call or more (MPI-3.1 allows several), then free_fn once:
 * what a call completing several requests may make of one of them. */
#define CHECK_LOG_QUERIES_THEN_FREE(s)                                                             \
    do {                                                                                           \
        size_t q_ = strspn((s).log, "q");                                                          \
        CHECKF(q_ >= 1 && strcmp((s).log + q_, "f") == 0,                                          \
               "callbacks \"%s\", expected query_fn calls then free_fn once", (s).log);            \
    } while (0)

/* The status query_fn made from `s`: source, tag, count in MPI_INTs. */
static void check_status(const MPI_Status *st, const state *s)
{
    CHECKF(st->MPI_SOURCE == s->source && st->MPI_TAG == s->tag,
           "status source %d tag %d, expected %d %d", st->MPI_SOURCE, st->MPI_TAG, s->source,
           s->tag);
    int n = -1;
    CHECK_MPI(MPI_Get_count(st, MPI_INT, &n));
    CHECKF(n == (int)s->count, "MPI_Get_count %d, expected %d", n, (int)s->count);
    CHECK_MPI(MPI_Get_elements(st, MPI_INT, &n));
    CHECKF(n == (int)s->count, "MPI_Get_elements %d, expected %d", n, (int)s->count);
    int flag = -1;
    CHECK_MPI(MPI_Test_cancelled(st, &flag));
    CHECKF(flag == (s->cancelled != 0), "MPI_Test_cancelled %d, expected %d", flag,
           s->cancelled != 0);
}

/* 10. A call that completes one request left the MPI_ERROR status_poison()
 * put in `st`. */
static void check_error_kept(const MPI_Status *st, const char *call)
{
    MPI_Status poisoned;
    status_poison(&poisoned);
    CHECKF(st->MPI_ERROR == poisoned.MPI_ERROR, "%s on a generalized request changed MPI_ERROR from %d to %d",
           call, poisoned.MPI_ERROR, st->MPI_ERROR);
}

static void wait_after_complete(int me)
{
    state s;
    MPI_Request r;
    MPI_Status st;
    start(&s, me, 11, 5, &r);
    CHECK_LOG(s, "");
    CHECK_MPI(MPI_Grequest_complete(r));
    CHECK_LOG(s, ""); /* nothing is queried or freed before a wait */
    status_poison(&st);
    CHECK_MPI(MPI_Wait(&r, &st));
    CHECK(r == MPI_REQUEST_NULL);
    CHECK_LOG(s, "qf");
    CHECK(!s.null_status);
    check_status(&st, &s);
    check_error_kept(&st, "MPI_Wait");

    /* A query_fn that writes MPI_ERROR: the program's value stays. */
    start(&s, me, 13, 2, &r);
    s.status_error = MPI_ERR_OTHER;
    CHECK_MPI(MPI_Grequest_complete(r));
    status_poison(&st);
    CHECK_MPI(MPI_Wait(&r, &st));
    check_status(&st, &s);
    check_error_kept(&st, "MPI_Wait (query_fn sets MPI_ERROR)");

    /* MPI_STATUS_IGNORE: query_fn still runs, on a valid status. */
    start(&s, me, 12, 0, &r);
    CHECK_MPI(MPI_Grequest_complete(r));
    CHECK_MPI(MPI_Wait(&r, MPI_STATUS_IGNORE));
    CHECK(r == MPI_REQUEST_NULL);
    CHECK_LOG(s, "qf");
    CHECKF(!s.null_status, "query_fn got a NULL status under MPI_STATUS_IGNORE");
}

static void test_around_complete(int me)
{
    state s;
    MPI_Request r;
    MPI_Status st;
    int flag = -1;
    start(&s, me + 1, 21, 3, &r);
    for (int i = 0; i < 100; ++i) {
        flag = -1;
        CHECK_MPI(MPI_Test(&r, &flag, &st));
        CHECKF(flag == 0, "MPI_Test flag %d on a request not yet complete", flag);
    }
    CHECK(r != MPI_REQUEST_NULL);
    CHECK_LOG(s, "");
    CHECK_MPI(MPI_Grequest_complete(r));
    status_poison(&st);
    CHECK_MPI(MPI_Test(&r, &flag, &st));
    CHECKF(flag == 1, "MPI_Test flag %d after MPI_Grequest_complete", flag);
    CHECK(r == MPI_REQUEST_NULL);
    CHECK_LOG(s, "qf");
    check_status(&st, &s);
    check_error_kept(&st, "MPI_Test");

    /* MPI_Testany on a null request and a generalized one. */
    MPI_Request rs[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    int index = -1;
    start(&s, me, 22, 4, &rs[1]);
    CHECK_MPI(MPI_Testany(2, rs, &index, &flag, &st));
    CHECKF(flag == 0 && index == MPI_UNDEFINED, "MPI_Testany flag %d index %d before complete",
           flag, index);
    CHECK_MPI(MPI_Grequest_complete(rs[1]));
    status_poison(&st);
    CHECK_MPI(MPI_Testany(2, rs, &index, &flag, &st));
    CHECKF(flag == 1 && index == 1, "MPI_Testany flag %d index %d after complete", flag, index);
    CHECK(rs[1] == MPI_REQUEST_NULL);
    CHECK_LOG(s, "qf");
    check_status(&st, &s);
    check_error_kept(&st, "MPI_Testany");

    /* MPI_Testall: all or nothing. */
    state a, b;
    MPI_Status sts[2];
    start(&a, me, 23, 1, &rs[0]);
    start(&b, me, 24, 2, &rs[1]);
    CHECK_MPI(MPI_Grequest_complete(rs[0]));
    CHECK_MPI(MPI_Testall(2, rs, &flag, sts));
    CHECKF(flag == 0, "MPI_Testall flag %d with one request incomplete", flag);
    CHECK(rs[0] != MPI_REQUEST_NULL && rs[1] != MPI_REQUEST_NULL);
    CHECK(b.len == 0 && strspn(a.log, "q") == (size_t)a.len); /* nothing freed */
    CHECK_MPI(MPI_Grequest_complete(rs[1]));
    CHECK_MPI(MPI_Testall(2, rs, &flag, sts));
    CHECKF(flag == 1, "MPI_Testall flag %d with both complete", flag);
    CHECK(rs[0] == MPI_REQUEST_NULL && rs[1] == MPI_REQUEST_NULL);
    CHECK_LOG_QUERIES_THEN_FREE(a);
    CHECK_LOG_QUERIES_THEN_FREE(b);
    check_status(&sts[0], &a);
    check_status(&sts[1], &b);
}

static void set_elements(void)
{
    MPI_Status st;
    int n = -1;
    MPI_Count nx = -1;
    for (int count = 0; count <= 10; ++count) {
        status_poison(&st);
        CHECK_MPI(MPI_Status_set_elements(&st, MPI_DOUBLE, count));
        CHECK_MPI(MPI_Get_elements(&st, MPI_DOUBLE, &n));
        CHECKF(n == count, "MPI_DOUBLE: set %d elements, MPI_Get_elements %d", count, n);
        CHECK_MPI(MPI_Get_count(&st, MPI_DOUBLE, &n));
        CHECKF(n == count, "MPI_DOUBLE: set %d elements, MPI_Get_count %d", count, n);
    }
    /* Setting the count leaves the other fields alone. */
    status_poison(&st);
    CHECK_MPI(MPI_Status_set_elements(&st, MPI_INT, 4));
    CHECK(st.MPI_SOURCE == -12345 && st.MPI_TAG == -12345);

    int flag = -1;
    CHECK_MPI(MPI_Status_set_cancelled(&st, 1));
    CHECK_MPI(MPI_Test_cancelled(&st, &flag));
    CHECKF(flag == 1, "MPI_Test_cancelled %d after MPI_Status_set_cancelled(1)", flag);
    CHECK_MPI(MPI_Status_set_cancelled(&st, 0));
    CHECK_MPI(MPI_Test_cancelled(&st, &flag));
    CHECKF(flag == 0, "MPI_Test_cancelled %d after MPI_Status_set_cancelled(0)", flag);
    CHECK_MPI(MPI_Get_count(&st, MPI_INT, &n));
    CHECKF(n == 4, "MPI_Status_set_cancelled changed the count to %d", n);

#ifdef SHMPI
    /* Derived types: count is in basic elements.  MPICH 4.0.2 takes it as
     * whole elements of the type (pmodels/mpich#7764). */
    MPI_Datatype c3, pair;
    CHECK_MPI(MPI_Type_contiguous(3, MPI_INT, &c3));
    CHECK_MPI(MPI_Type_commit(&c3));
    /* {int, double}: two basic elements of different sizes */
    int lens[2] = {1, 1};
    MPI_Aint displs[2] = {0, 8};
    MPI_Datatype types[2] = {MPI_INT, MPI_DOUBLE};
    CHECK_MPI(MPI_Type_create_struct(2, lens, displs, types, &pair));
    CHECK_MPI(MPI_Type_commit(&pair));
    for (int count = 0; count <= 10; ++count) {
        status_poison(&st);
        CHECK_MPI(MPI_Status_set_elements(&st, c3, count));
        CHECK_MPI(MPI_Get_elements(&st, c3, &n));
        CHECKF(n == count, "contiguous(3): set %d elements, MPI_Get_elements %d", count, n);
        CHECK_MPI(MPI_Get_elements_x(&st, c3, &nx));
        CHECKF(nx == count, "contiguous(3): set %d elements, MPI_Get_elements_x %lld", count,
               (long long)nx);
        CHECK_MPI(MPI_Get_count(&st, c3, &n));
        CHECKF(n == (count % 3 == 0 ? count / 3 : MPI_UNDEFINED),
               "contiguous(3): set %d elements, MPI_Get_count %d", count, n);
        /* The same stream read as ints */
        CHECK_MPI(MPI_Get_count(&st, MPI_INT, &n));
        CHECKF(n == count, "contiguous(3): set %d elements, MPI_Get_count(MPI_INT) %d", count, n);

        status_poison(&st);
        CHECK_MPI(MPI_Status_set_elements(&st, pair, count));
        CHECK_MPI(MPI_Get_elements(&st, pair, &n));
        CHECKF(n == count, "{int, double}: set %d elements, MPI_Get_elements %d", count, n);
        CHECK_MPI(MPI_Get_count(&st, pair, &n));
        CHECKF(n == (count % 2 == 0 ? count / 2 : MPI_UNDEFINED),
               "{int, double}: set %d elements, MPI_Get_count %d", count, n);
    }
    CHECK_MPI(MPI_Type_free(&c3));
    CHECK_MPI(MPI_Type_free(&pair));
#endif
    (void)nx;
}

static void cancel(int me)
{
    state s;
    MPI_Request r;
    MPI_Status st;
    start(&s, me, 41, 0, &r);
    CHECK_MPI(MPI_Cancel(&r));
    CHECK_LOG(s, "c");
    CHECK(r != MPI_REQUEST_NULL);
    /* The program decides: this operation stops and reports it. */
    s.cancelled = 1;
    CHECK_MPI(MPI_Grequest_complete(r));
    CHECK_MPI(MPI_Cancel(&r));
    CHECK_LOG(s, "cC");
    status_poison(&st);
    CHECK_MPI(MPI_Wait(&r, &st));
    CHECK_LOG(s, "cCqf");
    check_status(&st, &s);
}

/* Generalized requests among receives from the previous rank of the ring,
 * whose messages the next rank's part of this function sends. */
static void mixed(int me)
{
    int next, prev;
    ring_neighbours(&next, &prev);
    int in = -1, out = me;
    state a, b;
    MPI_Request rs[3];
    MPI_Status sts[3];
    int index = -1, outcount = -1, indices[3];

    /* MPI_Waitall: a receive and a complete generalized request. */
    CHECK_MPI(MPI_Irecv(&in, 1, MPI_INT, prev, 51, MPI_COMM_WORLD, &rs[0]));
    start(&a, me, 52, 6, &rs[1]);
    CHECK_MPI(MPI_Grequest_complete(rs[1]));
    CHECK_MPI(MPI_Send(&out, 1, MPI_INT, next, 51, MPI_COMM_WORLD));
    for (int i = 0; i < 2; ++i)
        status_poison(&sts[i]);
    CHECK_MPI(MPI_Waitall(2, rs, sts));
    CHECK(rs[0] == MPI_REQUEST_NULL && rs[1] == MPI_REQUEST_NULL);
    CHECKF(in == prev, "received %d, expected %d", in, prev);
    CHECKF(sts[0].MPI_SOURCE == prev && sts[0].MPI_TAG == 51, "receive status source %d tag %d",
           sts[0].MPI_SOURCE, sts[0].MPI_TAG);
    CHECK_LOG_QUERIES_THEN_FREE(a);
    check_status(&sts[1], &a);

    /* MPI_Waitany: only the complete generalized request can be reported:
     * the receive's message comes after this Waitany, once the previous
     * rank has our go-ahead. */
    CHECK_MPI(MPI_Irecv(&in, 1, MPI_INT, prev, 53, MPI_COMM_WORLD, &rs[0]));
    start(&a, me, 54, 7, &rs[1]);
    start(&b, me, 55, 8, &rs[2]);
    CHECK_MPI(MPI_Grequest_complete(rs[2]));
    status_poison(&sts[0]);
    CHECK_MPI(MPI_Waitany(3, rs, &index, &sts[0]));
    CHECKF(index == 2, "MPI_Waitany index %d, expected 2 (the one complete request)", index);
    CHECK(rs[2] == MPI_REQUEST_NULL);
    CHECK_LOG(a, "");
    CHECK_LOG(b, "qf");
    check_status(&sts[0], &b);
    check_error_kept(&sts[0], "MPI_Waitany");
    /* Then the receive, while `a` stays incomplete. */
    int go = 0, go_in = -1;
    CHECK_MPI(MPI_Sendrecv(&go, 1, MPI_INT, prev, 50, &go_in, 1, MPI_INT, next, 50, MPI_COMM_WORLD,
                           MPI_STATUS_IGNORE));
    CHECK_MPI(MPI_Send(&out, 1, MPI_INT, next, 53, MPI_COMM_WORLD));
    CHECK_MPI(MPI_Waitany(3, rs, &index, &sts[0]));
    CHECKF(index == 0, "MPI_Waitany index %d, expected 0 (the receive)", index);
    CHECK(sts[0].MPI_SOURCE == prev && sts[0].MPI_TAG == 53);
    CHECK_LOG(a, "");
    /* MPI_Waitsome with only `a` left. */
    CHECK_MPI(MPI_Grequest_complete(rs[1]));
    CHECK_MPI(MPI_Waitsome(3, rs, &outcount, indices, sts));
    CHECKF(outcount == 1 && indices[0] == 1, "MPI_Waitsome outcount %d index %d", outcount,
           indices[0]);
    CHECK_LOG_QUERIES_THEN_FREE(a);
    check_status(&sts[0], &a);
    CHECK_MPI(MPI_Waitsome(3, rs, &outcount, indices, sts));
    CHECKF(outcount == MPI_UNDEFINED, "MPI_Waitsome outcount %d with no active request", outcount);

    /* MPI_Testsome: a complete and an incomplete generalized request and
     * a receive. */
    CHECK_MPI(MPI_Irecv(&in, 1, MPI_INT, prev, 56, MPI_COMM_WORLD, &rs[0]));
    start(&a, me, 57, 9, &rs[1]);
    start(&b, me, 58, 10, &rs[2]);
    CHECK_MPI(MPI_Grequest_complete(rs[1]));
    CHECK_MPI(MPI_Send(&out, 1, MPI_INT, next, 56, MPI_COMM_WORLD));
    int got_recv = 0, got_a = 0;
    while (!got_recv || !got_a) {
        CHECK_MPI(MPI_Testsome(3, rs, &outcount, indices, sts));
        CHECKF(outcount >= 0 && outcount <= 2, "MPI_Testsome outcount %d", outcount);
        for (int i = 0; i < outcount; ++i) {
            CHECKF(indices[i] != 2, "MPI_Testsome reported the incomplete generalized request");
            if (indices[i] == 0) {
                CHECK(!got_recv && sts[i].MPI_SOURCE == prev && sts[i].MPI_TAG == 56);
                got_recv = 1;
            } else {
                CHECK(indices[i] == 1 && !got_a);
                check_status(&sts[i], &a);
                got_a = 1;
            }
        }
    }
    CHECK_LOG_QUERIES_THEN_FREE(a);
    CHECK_LOG(b, "");
    CHECK_MPI(MPI_Testsome(3, rs, &outcount, indices, sts));
    CHECKF(outcount == 0, "MPI_Testsome outcount %d with only an incomplete request", outcount);
    CHECK_MPI(MPI_Grequest_complete(rs[2]));
    CHECK_MPI(MPI_Testsome(3, rs, &outcount, indices, sts));
    CHECKF(outcount == 1 && indices[0] == 2, "MPI_Testsome outcount %d index %d", outcount,
           indices[0]);
    CHECK_LOG_QUERIES_THEN_FREE(b);
    check_status(&sts[0], &b);
}

static void get_status(int me)
{
    state s;
    MPI_Request r;
    MPI_Status st;
    int flag = -1;
    start(&s, me, 61, 12, &r);
    CHECK_MPI(MPI_Request_get_status(r, &flag, &st));
    CHECKF(flag == 0, "MPI_Request_get_status flag %d before complete", flag);
    CHECK_LOG(s, "");
    CHECK_MPI(MPI_Grequest_complete(r));
    status_poison(&st);
    CHECK_MPI(MPI_Request_get_status(r, &flag, &st));
    CHECKF(flag == 1, "MPI_Request_get_status flag %d after complete", flag);
    CHECK_LOG(s, "q");
    check_status(&st, &s);
    check_error_kept(&st, "MPI_Request_get_status");
    /* The request is still there, and the status may change. */
    s.tag = 62;
    CHECK_MPI(MPI_Request_get_status(r, &flag, MPI_STATUS_IGNORE));
    CHECK(flag == 1);
    CHECK_LOG(s, "qq");
    CHECK(!s.null_status);
    CHECK_MPI(MPI_Wait(&r, &st));
    CHECK(r == MPI_REQUEST_NULL);
    CHECK_LOG(s, "qqqf");
    check_status(&st, &s);
    check_error_kept(&st, "MPI_Wait after MPI_Request_get_status");
}

static void request_free(int me)
{
    state s;
    MPI_Request r, copy;
    start(&s, me, 71, 0, &r);
    copy = r;
    CHECK_MPI(MPI_Request_free(&r));
    CHECK(r == MPI_REQUEST_NULL);
#ifdef SHMPI
    /* MPICH 4.0.2 calls free_fn here already. */
    CHECK_LOG(s, "");
#endif
    CHECK_MPI(MPI_Grequest_complete(copy));
    CHECK_LOG(s, "f");

    start(&s, me, 72, 0, &r);
    CHECK_MPI(MPI_Grequest_complete(r));
    CHECK_LOG(s, "");
    CHECK_MPI(MPI_Request_free(&r));
    CHECK(r == MPI_REQUEST_NULL);
    CHECK_LOG(s, "f");
}

static void callback_errors(int me)
{
    CHECK_MPI(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    /* Which communicator's handler sees errors of calls with none differs
     * between MPI-3.1 (MPI_COMM_WORLD) and MPI-4 (MPI_COMM_SELF). */
    CHECK_MPI(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    int cls, query_err, free_err;
    CHECK_MPI(MPI_Add_error_class(&cls));
    CHECK_MPI(MPI_Add_error_code(cls, &query_err));
    CHECK_MPI(MPI_Add_error_code(cls, &free_err));
    state s;
    MPI_Request r;
    MPI_Status st;
    int rc, flag = -1;

    /* query_fn fails: MPI_Wait returns its code; free_fn still runs. */
    start(&s, me, 81, 1, &r);
    s.query_rc = query_err;
    CHECK_MPI(MPI_Grequest_complete(r));
    status_poison(&st);
    rc = MPI_Wait(&r, &st);
    CHECKF(rc == query_err, "MPI_Wait returned %d, expected query_fn's %d", rc, query_err);
    CHECK(check_error_class(rc) == cls);
    CHECK(r == MPI_REQUEST_NULL);
    CHECK_LOG(s, "qf");
    check_error_kept(&st, "MPI_Wait (query_fn fails)");

    /* free_fn fails. */
    start(&s, me, 82, 1, &r);
    s.free_rc = free_err;
    CHECK_MPI(MPI_Grequest_complete(r));
    rc = MPI_Wait(&r, MPI_STATUS_IGNORE);
    CHECKF(rc == free_err, "MPI_Wait returned %d, expected free_fn's %d", rc, free_err);
    CHECK(r == MPI_REQUEST_NULL);
    CHECK_LOG(s, "qf");

#ifdef SHMPI
    /* Both fail: "the error code returned by the last callback, namely
     * free_fn" (MPI-3.1 12.2).  MPICH 4.0.2 returns query_fn's. */
    start(&s, me, 83, 1, &r);
    s.query_rc = query_err;
    s.free_rc = free_err;
    CHECK_MPI(MPI_Grequest_complete(r));
    rc = MPI_Wait(&r, MPI_STATUS_IGNORE);
    CHECKF(rc == free_err, "MPI_Wait returned %d, expected free_fn's %d", rc, free_err);
    CHECK_LOG(s, "qf");
#endif

    /* MPI_Request_get_status returns query_fn's error. */
    start(&s, me, 84, 1, &r);
    s.query_rc = query_err;
    CHECK_MPI(MPI_Grequest_complete(r));
    rc = MPI_Request_get_status(r, &flag, &st);
    CHECKF(rc == query_err, "MPI_Request_get_status returned %d, expected query_fn's %d", rc,
           query_err);
    CHECK_LOG(s, "q");
    s.query_rc = MPI_SUCCESS;
    CHECK_MPI(MPI_Wait(&r, &st));
    CHECK_LOG(s, "qqf");

    /* cancel_fn fails. */
    start(&s, me, 85, 1, &r);
    s.cancel_rc = query_err;
    rc = MPI_Cancel(&r);
    CHECKF(rc == query_err, "MPI_Cancel returned %d, expected cancel_fn's %d", rc, query_err);
    CHECK_LOG(s, "c");
    CHECK_MPI(MPI_Grequest_complete(r));
    CHECK_MPI(MPI_Wait(&r, &st));
    CHECK_LOG(s, "cqf");

    /* free_fn's error from MPI_Request_free and MPI_Grequest_complete. */
    start(&s, me, 86, 0, &r);
    s.free_rc = free_err;
    CHECK_MPI(MPI_Grequest_complete(r));
    rc = MPI_Request_free(&r);
    CHECKF(rc == free_err, "MPI_Request_free returned %d, expected free_fn's %d", rc, free_err);
    CHECK_LOG(s, "f");
#ifdef SHMPI
    /* MPICH 4.0.2 runs free_fn in MPI_Request_free. */
    MPI_Request copy;
    start(&s, me, 87, 0, &r);
    s.free_rc = free_err;
    copy = r;
    CHECK_MPI(MPI_Request_free(&r));
    rc = MPI_Grequest_complete(copy);
    CHECKF(rc == free_err, "MPI_Grequest_complete returned %d, expected free_fn's %d", rc,
           free_err);
    CHECK_LOG(s, "f");
#endif

    /* MPI_Waitall: MPI_ERR_IN_STATUS, the failed request's code in its
     * status; the other request is complete (MPI_SUCCESS) or, as MPI allows,
     * still pending (MPI_ERR_PENDING). */
    state a, b;
    MPI_Request rs[2];
    MPI_Status sts[2];
    start(&a, me, 88, 1, &rs[0]);
    start(&b, me, 89, 2, &rs[1]);
    a.query_rc = query_err;
    CHECK_MPI(MPI_Grequest_complete(rs[0]));
    CHECK_MPI(MPI_Grequest_complete(rs[1]));
    rc = MPI_Waitall(2, rs, sts);
    CHECKF(rc == MPI_ERR_IN_STATUS, "MPI_Waitall returned %d, expected MPI_ERR_IN_STATUS", rc);
    CHECK(rs[0] == MPI_REQUEST_NULL);
    CHECK_LOG_QUERIES_THEN_FREE(a);
    CHECKF(sts[0].MPI_ERROR != MPI_SUCCESS,
           "the failed request's status has MPI_ERROR MPI_SUCCESS");
#ifdef SHMPI
    /* MPICH 4.0.2 puts a code of class MPI_ERR_OTHER there. */
    CHECKF(sts[0].MPI_ERROR == query_err, "status MPI_ERROR %d, expected query_fn's %d",
           sts[0].MPI_ERROR, query_err);
#endif
    if (sts[1].MPI_ERROR == MPI_ERR_PENDING) {
        CHECK(rs[1] != MPI_REQUEST_NULL);
        CHECK_MPI(MPI_Wait(&rs[1], &sts[1]));
    } else {
        CHECKF(sts[1].MPI_ERROR == MPI_SUCCESS, "the other status has MPI_ERROR %d",
               sts[1].MPI_ERROR);
        CHECK(rs[1] == MPI_REQUEST_NULL);
    }
    CHECK_LOG_QUERIES_THEN_FREE(b);
    check_status(&sts[1], &b);

    CHECK_MPI(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
    CHECK_MPI(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL));
}

static void large_counts(int me)
{
    const MPI_Count big = ((MPI_Count)3 << 31) + 5; /* above 2^32 */
    state s;
    MPI_Request r;
    MPI_Status st;
    start(&s, me, 91, big, &r);
    CHECK_MPI(MPI_Grequest_complete(r));
    CHECK_MPI(MPI_Wait(&r, &st));
    CHECK_LOG(s, "qf");
    MPI_Count nx = -1;
    int n = 0;
    CHECK_MPI(MPI_Get_elements_x(&st, MPI_INT, &nx));
    CHECKF(nx == big, "MPI_Get_elements_x %lld, expected %lld", (long long)nx, (long long)big);
    CHECK_MPI(MPI_Get_elements(&st, MPI_INT, &n));
    CHECKF(n == MPI_UNDEFINED, "MPI_Get_elements %d for %lld elements, expected MPI_UNDEFINED", n,
           (long long)big);
    CHECK_MPI(MPI_Get_count(&st, MPI_INT, &n));
    CHECKF(n == MPI_UNDEFINED, "MPI_Get_count %d for %lld elements, expected MPI_UNDEFINED", n,
           (long long)big);

    /* Just above 2^31, and 2^40 bytes, and a derived type. */
    const MPI_Count counts[] = {((MPI_Count)1 << 31), ((MPI_Count)1 << 31) + 1, (MPI_Count)1 << 40};
    for (int i = 0; i < 3; ++i) {
        status_poison(&st);
        CHECK_MPI(MPI_Status_set_elements_x(&st, MPI_CHAR, counts[i]));
        CHECK_MPI(MPI_Get_elements_x(&st, MPI_CHAR, &nx));
        CHECKF(nx == counts[i], "MPI_Get_elements_x %lld, expected %lld", (long long)nx,
               (long long)counts[i]);
    }
#ifdef SHMPI
    /* Basic elements of a derived type (MPICH 4.0.2: pmodels/mpich#7764). */
    MPI_Datatype c3;
    CHECK_MPI(MPI_Type_contiguous(3, MPI_INT, &c3));
    CHECK_MPI(MPI_Type_commit(&c3));
    CHECK_MPI(MPI_Status_set_elements_x(&st, c3, big));
    CHECK_MPI(MPI_Get_elements_x(&st, c3, &nx));
    CHECKF(nx == big, "contiguous(3): MPI_Get_elements_x %lld, expected %lld", (long long)nx,
           (long long)big);
    CHECK_MPI(MPI_Get_elements_x(&st, MPI_INT, &nx));
    CHECKF(nx == big, "contiguous(3) read as MPI_INT: %lld, expected %lld", (long long)nx,
           (long long)big);
    CHECK_MPI(MPI_Type_free(&c3));
#endif
}

int main(int argc, char **argv)
{
    CHECK_MPI(MPI_Init(&argc, &argv));
    const int me = world_rank();
    wait_after_complete(me);
    test_around_complete(me);
    set_elements();
    cancel(me);
    mixed(me);
    get_status(me);
    request_free(me);
    callback_errors(me);
    large_counts(me);
    sync_all(MPI_COMM_WORLD);
    CHECK_MPI(MPI_Finalize());
    return 0;
}
