/*
 * MPI_Comm_free while requests on the communicator are still pending
 * (MPI-3.1 6.4.3: "Any pending operations that use this communicator will
 * complete normally; the object is actually deallocated only if there are
 * no other active references to it").  So the requests complete as usual,
 * and an error one of them reports goes to the freed communicator's error
 * handler, not to another communicator's, even one made after the free.
 *
 *   A. A receive whose message is too long, waited on after its
 *      communicator was freed and a new one was made: MPI_Wait returns
 *      MPI_ERR_TRUNCATE through the freed communicator's handler, once.
 *   B. The same through MPI_Waitall: MPI_ERR_IN_STATUS, one call of the
 *      freed communicator's handler, MPI_ERR_TRUNCATE in the status.
 *   C. Persistent requests made before the free are started and completed
 *      twice after it, and carry their data.
 *   D. A nonblocking barrier and a nonblocking allreduce started before the
 *      free complete after it with the right result.
 *   E. A message taken by MPI_Mprobe before the free is received by
 *      MPI_Mrecv after it.
 *   F. The freed communicator's handler, called for a request's error,
 *      uses the handle it is given: that call fails (the handle is freed)
 *      and goes to MPI_COMM_WORLD's handler, not back into this one.
 *
 * Ring neighbours: each rank receives from the previous one and sends to
 * the next (itself with one rank).
 *
 * A, B and F are under #ifdef SHMPI: which handler sees a wait's error is
 * where implementations differ.  MPI-3.1 8.3 attaches an error to the
 * communication object of the call; Open MPI 4.1 calls the request's
 * communicator's handler, but once the communicator is freed it reports
 * the error on a null communicator and aborts; MPICH 4.0.2 calls
 * MPI_COMM_WORLD's handler even while the communicator lives.  shmpi keeps
 * a freed communicator for its pending requests, handler included.
 */
#include "check.h"

#ifdef SHMPI
static int calls_old = 0;  /* the freed communicators' handler */
static int calls_new = 0;  /* the handler of communicators made later */
static int last_class = MPI_SUCCESS;

static void old_handler(MPI_Comm *comm, int *code, ...)
{
    (void)comm;
    ++calls_old;
    MPI_Error_class(*code, &last_class);
}

static void new_handler(MPI_Comm *comm, int *code, ...)
{
    (void)comm;
    (void)code;
    ++calls_new;
}

/* A duplicate of the world with `fn` as its error handler. */
static MPI_Comm dup_with(MPI_Comm_errhandler_function *fn)
{
    MPI_Comm c;
    MPI_Errhandler h;
    CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &c));
    CHECK_MPI(MPI_Comm_create_errhandler(fn, &h));
    CHECK_MPI(MPI_Comm_set_errhandler(c, h));
    CHECK_MPI(MPI_Errhandler_free(&h)); /* the communicator keeps it */
    return c;
}

/* Posts a receive of one int from `prev` on `c`, then sends two ints to
 * `next` (an eager message: the send completes without its receiver), so
 * that every rank's receive is too short. */
static MPI_Request truncating_recv(MPI_Comm c, int *in, int prev, int next, int tag)
{
    MPI_Request req;
    int out[2] = {world_rank(), 7};
    CHECK_MPI(MPI_Irecv(in, 1, MPI_INT, prev, tag, c, &req));
    CHECK_MPI(MPI_Send(out, 2, MPI_INT, next, tag, c));
    return req;
}

static int calls_nosy = 0;
static int nosy_rank_rc = MPI_SUCCESS;

/* Asks the communicator it was called for for its rank. */
static void nosy_handler(MPI_Comm *comm, int *code, ...)
{
    (void)code;
    ++calls_nosy;
    int r = -1;
    nosy_rank_rc = MPI_Comm_rank(*comm, &r);
}

/* A, B and F. */
static void handler_cases(int n, int next, int prev)
{
    const int rank = world_rank();
    /* A. MPI_Wait after the free. */
    {
        MPI_Comm old = dup_with(old_handler);
        int in = -1;
        MPI_Request req = truncating_recv(old, &in, prev, next, 11);
        CHECK_MPI(MPI_Comm_free(&old));
        CHECK(old == MPI_COMM_NULL);
        /* A new communicator, which may take the freed one's memory. */
        MPI_Comm later = dup_with(new_handler);
        MPI_Status st;
        const int rc = MPI_Wait(&req, &st);
        CHECKF(rc != MPI_SUCCESS, "a truncated receive returned MPI_SUCCESS");
        CHECKF(check_error_class(rc) == MPI_ERR_TRUNCATE, "class %d, want MPI_ERR_TRUNCATE",
               check_error_class(rc));
        CHECKF(calls_old == 1 && calls_new == 0,
               "handler calls: freed communicator's %d (want 1), later one's %d (want 0)", calls_old,
               calls_new);
        CHECKF(last_class == MPI_ERR_TRUNCATE, "the handler saw class %d", last_class);
        CHECK(req == MPI_REQUEST_NULL);
        /* The later communicator works, and its handler stays quiet. */
        int sum = 0, one = 1;
        CHECK_MPI(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, later));
        CHECKF(sum == n, "allreduce on the later communicator: %d, want %d", sum, n);
        CHECK_MPI(MPI_Comm_free(&later));
        CHECK(calls_new == 0);
    }

    /* B. MPI_Waitall after the free. */
    {
        calls_old = 0;
        last_class = MPI_SUCCESS;
        MPI_Comm old = dup_with(old_handler);
        int in = -1;
        MPI_Request reqs[2];
        reqs[0] = truncating_recv(old, &in, prev, next, 12);
        int self_in = -1, self_out = 42;
        CHECK_MPI(MPI_Irecv(&self_in, 1, MPI_INT, rank, 13, MPI_COMM_WORLD, &reqs[1]));
        CHECK_MPI(MPI_Send(&self_out, 1, MPI_INT, rank, 13, MPI_COMM_WORLD));
        CHECK_MPI(MPI_Comm_free(&old));
        MPI_Comm later = dup_with(new_handler);
        MPI_Status sts[2];
        const int rc = MPI_Waitall(2, reqs, sts);
        CHECKF(rc == MPI_ERR_IN_STATUS, "MPI_Waitall returned %d, want MPI_ERR_IN_STATUS", rc);
        CHECKF(calls_old == 1 && calls_new == 0, "handler calls: freed %d (want 1), later %d (want 0)",
               calls_old, calls_new);
        CHECKF(check_error_class(sts[0].MPI_ERROR) == MPI_ERR_TRUNCATE, "status 0: class %d",
               check_error_class(sts[0].MPI_ERROR));
        CHECKF(sts[1].MPI_ERROR == MPI_SUCCESS, "status 1: %d", sts[1].MPI_ERROR);
        CHECKF(self_in == 42, "the good receive got %d", self_in);
        CHECK_MPI(MPI_Comm_free(&later));
    }

    /* F. */
    {
        CHECK_MPI(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
        MPI_Comm old = dup_with(nosy_handler);
        int in = -1;
        MPI_Request req = truncating_recv(old, &in, prev, next, 15);
        CHECK_MPI(MPI_Comm_free(&old));
        const int rc = MPI_Wait(&req, MPI_STATUS_IGNORE);
        CHECKF(check_error_class(rc) == MPI_ERR_TRUNCATE, "class %d", check_error_class(rc));
        CHECKF(calls_nosy == 1, "the handler ran %d times", calls_nosy);
        CHECKF(check_error_class(nosy_rank_rc) == MPI_ERR_COMM, "MPI_Comm_rank on the freed handle: class %d",
               check_error_class(nosy_rank_rc));
        CHECK_MPI(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
    }
}
#endif

int main(int argc, char **argv)
{
    CHECK_MPI(MPI_Init(&argc, &argv));
    const int rank = world_rank();
    const int n = world_size();
    const int next = (rank + 1) % n;
    const int prev = (rank + n - 1) % n;

#ifdef SHMPI
    handler_cases(n, next, prev);
#endif

    /* C. Persistent requests outlive their communicator's handle. */
    {
        MPI_Comm old;
        CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &old));
        int in = -1, out = -1;
        MPI_Request reqs[2];
        CHECK_MPI(MPI_Recv_init(&in, 1, MPI_INT, prev, 14, old, &reqs[0]));
        CHECK_MPI(MPI_Send_init(&out, 1, MPI_INT, next, 14, old, &reqs[1]));
        CHECK_MPI(MPI_Comm_free(&old));
        for (int round = 0; round < 2; ++round) {
            out = 1000 * round + rank;
            CHECK_MPI(MPI_Startall(2, reqs));
            CHECK_MPI(MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE));
            CHECKF(in == 1000 * round + prev, "round %d: got %d, want %d", round, in,
                   1000 * round + prev);
        }
        CHECK_MPI(MPI_Request_free(&reqs[0]));
        CHECK_MPI(MPI_Request_free(&reqs[1]));
    }

    /* D. Nonblocking collectives started before the free. */
    {
        MPI_Comm old;
        CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &old));
        MPI_Request reqs[2];
        int mine = rank + 1, sum = 0;
        CHECK_MPI(MPI_Ibarrier(old, &reqs[0]));
        CHECK_MPI(MPI_Iallreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, old, &reqs[1]));
        CHECK_MPI(MPI_Comm_free(&old));
        CHECK_MPI(MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE));
        CHECKF(sum == n * (n + 1) / 2, "Iallreduce: %d, want %d", sum, n * (n + 1) / 2);
    }

    /* E. */
    {
        MPI_Comm old;
        CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &old));
        int out = 100 + rank, in = -1;
        MPI_Request sr;
        CHECK_MPI(MPI_Isend(&out, 1, MPI_INT, next, 16, old, &sr));
        MPI_Message msg;
        MPI_Status st;
        CHECK_MPI(MPI_Mprobe(prev, 16, old, &msg, &st));
        CHECK_MPI(MPI_Comm_free(&old));
        CHECK_MPI(MPI_Mrecv(&in, 1, MPI_INT, &msg, &st));
        CHECKF(in == 100 + prev, "Mrecv after the free got %d, want %d", in, 100 + prev);
        CHECK(msg == MPI_MESSAGE_NULL);
        /* Only now: a standard send may wait for its receive. */
        CHECK_MPI(MPI_Wait(&sr, MPI_STATUS_IGNORE));
    }

    CHECK_MPI(MPI_Finalize());
    return 0;
}
