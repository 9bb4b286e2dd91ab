/*
 * err_handler_choice: which communicator's error handler an error of the
 * matched-receive and start calls goes to (MPI-3.1 8.3: an error is handled
 * by the handler of the communicator the call is about).  shmpi only: the
 * standard does not name the communicator of a message handle or of an
 * array of requests, and MPICH sends all of these to MPI_COMM_WORLD's.
 *
 * MPI_COMM_WORLD and a duplicate get counting handlers that return.
 *   MPI_Mrecv / MPI_Imrecv of a message probed on the duplicate, with a bad
 *     count or type, or truncated       -> the duplicate's handler; the
 *     message is still there after an argument error
 *   MPI_Mrecv of MPI_MESSAGE_NULL        -> MPI_COMM_WORLD's
 *   MPI_Start and MPI_Startall of an active request of the duplicate
 *                                        -> the duplicate's
 *   MPI_Startall with a negative count   -> MPI_COMM_WORLD's
 * Each case checks the error class too.  Runs at any size: rank r sends to
 * itself.
 */
#include "check.h"

static int world_calls, dup_calls, last_class;

static void on_world(MPI_Comm *comm, int *code, ...)
{
    (void)comm;
    ++world_calls;
    MPI_Error_class(*code, &last_class);
}

static void on_dup(MPI_Comm *comm, int *code, ...)
{
    (void)comm;
    ++dup_calls;
    MPI_Error_class(*code, &last_class);
}

/* The call returned an error of class `cls`, and exactly the handler that
 * `want_dup` names ran once for it. */
static void expect(int rc, int cls, int want_dup, const char *what)
{
    int got = MPI_SUCCESS;
    CHECKF(rc != MPI_SUCCESS, "%s succeeded", what);
    MPI_Error_class(rc, &got);
    CHECKF(got == cls, "%s: class %d, expected %d", what, got, cls);
    CHECKF(last_class == cls, "%s: the handler saw class %d, expected %d", what, last_class, cls);
    CHECKF(dup_calls == (want_dup ? 1 : 0) && world_calls == (want_dup ? 0 : 1),
           "%s: duplicate's handler ran %d times, MPI_COMM_WORLD's %d (expected the %s's, once)", what,
           dup_calls, world_calls, want_dup ? "duplicate" : "MPI_COMM_WORLD");
    dup_calls = world_calls = 0;
    last_class = -1;
}

/* Sends `n` ints to itself on `comm` and takes the message with MPI_Mprobe. */
static MPI_Message probed(MPI_Comm comm, int rank, int n, MPI_Request *send)
{
    static int out[4] = {1, 2, 3, 4};
    MPI_Message msg = MPI_MESSAGE_NULL;
    CHECK_MPI(MPI_Isend(out, n, MPI_INT, rank, 7, comm, send));
    CHECK_MPI(MPI_Mprobe(rank, 7, comm, &msg, MPI_STATUS_IGNORE));
    return msg;
}

int main(int argc, char **argv)
{
    int rank = 0;
    int in[4] = {0, 0, 0, 0};
    MPI_Comm dup = MPI_COMM_NULL;
    MPI_Errhandler world_eh = MPI_ERRHANDLER_NULL, dup_eh = MPI_ERRHANDLER_NULL;
    MPI_Request send = MPI_REQUEST_NULL, req = MPI_REQUEST_NULL;
    MPI_Request two[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    MPI_Status st;

    MPI_Init(&argc, &argv);
    rank = check_world_rank();
    CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    CHECK_MPI(MPI_Comm_create_errhandler(on_world, &world_eh));
    CHECK_MPI(MPI_Comm_create_errhandler(on_dup, &dup_eh));
    CHECK_MPI(MPI_Comm_set_errhandler(MPI_COMM_WORLD, world_eh));
    CHECK_MPI(MPI_Comm_set_errhandler(dup, dup_eh));

    /* Matched receives of a message probed on the duplicate. */
    MPI_Message msg = probed(dup, rank, 4, &send);
    expect(MPI_Mrecv(in, -1, MPI_INT, &msg, MPI_STATUS_IGNORE), MPI_ERR_COUNT, 1, "MPI_Mrecv count -1");
    expect(MPI_Imrecv(in, 4, MPI_DATATYPE_NULL, &msg, &req), MPI_ERR_TYPE, 1, "MPI_Imrecv MPI_DATATYPE_NULL");
    CHECK(msg != MPI_MESSAGE_NULL);
    CHECK_MPI(MPI_Mrecv(in, 4, MPI_INT, &msg, &st)); /* still there */
    CHECK(msg == MPI_MESSAGE_NULL && in[0] == 1 && in[3] == 4);
    CHECK_MPI(MPI_Wait(&send, MPI_STATUS_IGNORE));
    msg = probed(dup, rank, 4, &send);
    expect(MPI_Mrecv(in, 2, MPI_INT, &msg, MPI_STATUS_IGNORE), MPI_ERR_TRUNCATE, 1, "MPI_Mrecv truncated");
    CHECK_MPI(MPI_Wait(&send, MPI_STATUS_IGNORE));
    msg = MPI_MESSAGE_NULL;
    expect(MPI_Mrecv(in, 4, MPI_INT, &msg, MPI_STATUS_IGNORE), MPI_ERR_REQUEST, 0, "MPI_Mrecv MPI_MESSAGE_NULL");

    /* Starting an active persistent request of the duplicate. */
    CHECK_MPI(MPI_Recv_init(in, 1, MPI_INT, rank, 9, dup, &two[0]));
    CHECK_MPI(MPI_Send_init(in + 1, 1, MPI_INT, rank, 9, dup, &two[1]));
    CHECK_MPI(MPI_Start(&two[0]));
    expect(MPI_Start(&two[0]), MPI_ERR_REQUEST, 1, "MPI_Start of an active request");
    expect(MPI_Startall(2, two), MPI_ERR_REQUEST, 1, "MPI_Startall with an active request");
    expect(MPI_Startall(-1, two), MPI_ERR_COUNT, 0, "MPI_Startall count -1");
    CHECK_MPI(MPI_Start(&two[1])); /* nothing else started: the send is inactive */
    CHECK_MPI(MPI_Waitall(2, two, MPI_STATUSES_IGNORE));
    CHECK_MPI(MPI_Request_free(&two[0]));
    CHECK_MPI(MPI_Request_free(&two[1]));

    CHECK_MPI(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
    CHECK_MPI(MPI_Errhandler_free(&world_eh));
    CHECK_MPI(MPI_Errhandler_free(&dup_eh));
    CHECK_MPI(MPI_Comm_free(&dup));
    MPI_Finalize();
    return 0;
}
