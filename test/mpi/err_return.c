/*
 * err_return: argument errors reported through MPI_ERRORS_RETURN, error
 * classes and strings, and communicator error handlers.
 *
 * 1. The default handler of MPI_COMM_WORLD and MPI_COMM_SELF is
 *    MPI_ERRORS_ARE_FATAL; after MPI_Comm_set_errhandler, get returns what
 *    was set.
 * 2. Under MPI_ERRORS_RETURN on MPI_COMM_WORLD, bad arguments give errors
 *    of the right class, and nothing is sent:
 *      dest or source rank >= size or negative  -> MPI_ERR_RANK
 *      negative count                           -> MPI_ERR_COUNT
 *      negative tag on a send, bad receive tag  -> MPI_ERR_TAG
 *      MPI_COMM_NULL                            -> MPI_ERR_COMM (no
 *        communicator to take the handler from: MPI-3.1 raises such errors
 *        on MPI_COMM_WORLD, MPI-4 on MPI_COMM_SELF; both return here)
 *      MPI_DATATYPE_NULL                        -> MPI_ERR_TYPE
 *      MPI_IN_PLACE as the buffer of Send, Recv -> MPI_ERR_BUFFER (shmpi
 *        only: MPICH 4.0.2 dereferences it)
 *      a second MPI_Init or MPI_Init_thread     -> MPI_ERR_OTHER (erroneous,
 *        MPI-3.1 8.7; raised on MPI_COMM_WORLD as an error with no
 *        communicator, 8.3; the class is MPICH's choice too)
 *    Each code has a non-empty MPI_Error_string.
 *    The other send modes and request calls:
 *      MPI_Start of a request that is not persistent, or already active,
 *      MPI_Start or MPI_Cancel of MPI_REQUEST_NULL, MPI_Mrecv of
 *      MPI_MESSAGE_NULL                         -> MPI_ERR_REQUEST
 *      MPI_Bsend without an attached buffer or larger than it, a second
 *      MPI_Buffer_attach                        -> MPI_ERR_BUFFER
 *      MPI_Send_init/MPI_Recv_init with a bad rank, tag or count, and
 *      MPI_Startall of count -1                 -> as for MPI_Send/MPI_Recv
 *      MPI_Buffer_attach of size -1             -> MPI_ERR_ARG
 * 3. MPI_Error_class maps every MPI-3.1 error class to itself, and
 *    MPI_Error_string describes each.  A value no call returned (negative,
 *    or of a form shmpi never issues) is MPI_ERR_ARG (shmpi only).
 * 4. A user error handler (MPI_Comm_create_errhandler) is called with the
 *    communicator and the code, the failing call then returns that code,
 *    and MPI_Comm_call_errhandler invokes it too.
 * 5. After all that the communicator still carries messages correctly.
 * 6. Calls that complete several requests (Waitall, Testall, Waitsome,
 *    Testsome) with one truncated receive among them return
 *    MPI_ERR_IN_STATUS: the failed request's status has MPI_ERROR of class
 *    MPI_ERR_TRUNCATE, the others MPI_SUCCESS (or MPI_ERR_PENDING), and a
 *    user handler runs once, with MPI_ERR_IN_STATUS.
 * 7. MPI-3.1 3.2.5: other calls leave a status's MPI_ERROR as it was:
 *    MPI_Sendrecv, MPI_Recv, MPI_Wait (also one that fails with
 *    MPI_ERR_TRUNCATE), MPI_Test, MPI_Waitany, and a Waitall that succeeds
 *    (shmpi only: MPICH 4.0 writes MPI_SUCCESS there).  MPI_Request_get_status
 *    of a truncated receive returns MPI_ERR_TRUNCATE as MPI_Test would, and
 *    keeps the request.
 * 8. shmpi only (MPICH words them its own way, and dereferences a wild
 *    handle): messages name the argument at fault.  A bad handle in a
 *    request array is named as array_of_requests[i] by MPI_Waitall,
 *    MPI_Testall, MPI_Waitany, MPI_Testany, MPI_Waitsome, MPI_Testsome and
 *    MPI_Startall; a NULL output of a call that takes two names the NULL
 *    one (MPI_Test, MPI_Testany, MPI_Waitsome, MPI_Testsome, MPI_Get_count,
 *    MPI_Get_elements(_x), MPI_Test_cancelled, MPI_Error_string).
 *    MPI_Startall of a receive and a buffered send with no buffer attached
 *    fails with MPI_ERR_BUFFER naming the send, and starts nothing: the
 *    receive stays inactive (MPICH starts it).
 */
#include "check.h"

static const struct {
    int cls;
    const char *name;
} error_classes[] = {
    {MPI_SUCCESS, "MPI_SUCCESS"},
    {MPI_ERR_BUFFER, "MPI_ERR_BUFFER"},
    {MPI_ERR_COUNT, "MPI_ERR_COUNT"},
    {MPI_ERR_TYPE, "MPI_ERR_TYPE"},
    {MPI_ERR_TAG, "MPI_ERR_TAG"},
    {MPI_ERR_COMM, "MPI_ERR_COMM"},
    {MPI_ERR_RANK, "MPI_ERR_RANK"},
    {MPI_ERR_REQUEST, "MPI_ERR_REQUEST"},
    {MPI_ERR_ROOT, "MPI_ERR_ROOT"},
    {MPI_ERR_GROUP, "MPI_ERR_GROUP"},
    {MPI_ERR_OP, "MPI_ERR_OP"},
    {MPI_ERR_TOPOLOGY, "MPI_ERR_TOPOLOGY"},
    {MPI_ERR_DIMS, "MPI_ERR_DIMS"},
    {MPI_ERR_ARG, "MPI_ERR_ARG"},
    {MPI_ERR_UNKNOWN, "MPI_ERR_UNKNOWN"},
    {MPI_ERR_TRUNCATE, "MPI_ERR_TRUNCATE"},
    {MPI_ERR_OTHER, "MPI_ERR_OTHER"},
    {MPI_ERR_INTERN, "MPI_ERR_INTERN"},
    {MPI_ERR_PENDING, "MPI_ERR_PENDING"},
    {MPI_ERR_IN_STATUS, "MPI_ERR_IN_STATUS"},
    {MPI_ERR_ACCESS, "MPI_ERR_ACCESS"},
    {MPI_ERR_AMODE, "MPI_ERR_AMODE"},
    {MPI_ERR_ASSERT, "MPI_ERR_ASSERT"},
    {MPI_ERR_BAD_FILE, "MPI_ERR_BAD_FILE"},
    {MPI_ERR_BASE, "MPI_ERR_BASE"},
    {MPI_ERR_CONVERSION, "MPI_ERR_CONVERSION"},
    {MPI_ERR_DISP, "MPI_ERR_DISP"},
    {MPI_ERR_DUP_DATAREP, "MPI_ERR_DUP_DATAREP"},
    {MPI_ERR_FILE_EXISTS, "MPI_ERR_FILE_EXISTS"},
    {MPI_ERR_FILE_IN_USE, "MPI_ERR_FILE_IN_USE"},
    {MPI_ERR_FILE, "MPI_ERR_FILE"},
    {MPI_ERR_INFO_KEY, "MPI_ERR_INFO_KEY"},
    {MPI_ERR_INFO_NOKEY, "MPI_ERR_INFO_NOKEY"},
    {MPI_ERR_INFO_VALUE, "MPI_ERR_INFO_VALUE"},
    {MPI_ERR_INFO, "MPI_ERR_INFO"},
    {MPI_ERR_IO, "MPI_ERR_IO"},
    {MPI_ERR_KEYVAL, "MPI_ERR_KEYVAL"},
    {MPI_ERR_LOCKTYPE, "MPI_ERR_LOCKTYPE"},
    {MPI_ERR_NAME, "MPI_ERR_NAME"},
    {MPI_ERR_NO_MEM, "MPI_ERR_NO_MEM"},
    {MPI_ERR_NOT_SAME, "MPI_ERR_NOT_SAME"},
    {MPI_ERR_NO_SPACE, "MPI_ERR_NO_SPACE"},
    {MPI_ERR_NO_SUCH_FILE, "MPI_ERR_NO_SUCH_FILE"},
    {MPI_ERR_PORT, "MPI_ERR_PORT"},
    {MPI_ERR_QUOTA, "MPI_ERR_QUOTA"},
    {MPI_ERR_READ_ONLY, "MPI_ERR_READ_ONLY"},
    {MPI_ERR_RMA_ATTACH, "MPI_ERR_RMA_ATTACH"},
    {MPI_ERR_RMA_CONFLICT, "MPI_ERR_RMA_CONFLICT"},
    {MPI_ERR_RMA_RANGE, "MPI_ERR_RMA_RANGE"},
    {MPI_ERR_RMA_SHARED, "MPI_ERR_RMA_SHARED"},
    {MPI_ERR_RMA_SYNC, "MPI_ERR_RMA_SYNC"},
    {MPI_ERR_RMA_FLAVOR, "MPI_ERR_RMA_FLAVOR"},
    {MPI_ERR_SERVICE, "MPI_ERR_SERVICE"},
    {MPI_ERR_SIZE, "MPI_ERR_SIZE"},
    {MPI_ERR_SPAWN, "MPI_ERR_SPAWN"},
    {MPI_ERR_UNSUPPORTED_DATAREP, "MPI_ERR_UNSUPPORTED_DATAREP"},
    {MPI_ERR_UNSUPPORTED_OPERATION, "MPI_ERR_UNSUPPORTED_OPERATION"},
    {MPI_ERR_WIN, "MPI_ERR_WIN"},
};
enum { NCLASSES = sizeof error_classes / sizeof error_classes[0] };

/* The error code `rc` of `what` has class `cls` and a message. */
#define CHECK_ERROR(rc, cls, what)                                                          \
    do {                                                                                    \
        int ce_rc_ = (rc);                                                                  \
        CHECKF(ce_rc_ != MPI_SUCCESS, "%s returned MPI_SUCCESS", what);                     \
        int ce_cls_ = check_error_class(ce_rc_);                                            \
        CHECKF(ce_cls_ == (cls), "%s: error class %d, expected %s (%d)", what, ce_cls_,     \
               #cls, (cls));                                                                \
        char ce_text_[MPI_MAX_ERROR_STRING];                                                \
        int ce_len_ = -1;                                                                   \
        CHECK_MPI(MPI_Error_string(ce_rc_, ce_text_, &ce_len_));                            \
        CHECKF(ce_len_ > 0 && ce_len_ < MPI_MAX_ERROR_STRING &&                             \
                   (int)strlen(ce_text_) == ce_len_,                                        \
               "%s: MPI_Error_string gave length %d", what, ce_len_);                      \
    } while (0)

/* 1. */
static void check_handlers(void)
{
    MPI_Errhandler eh = MPI_ERRHANDLER_NULL;
    CHECK_MPI(MPI_Comm_get_errhandler(MPI_COMM_WORLD, &eh));
    CHECKF(eh == MPI_ERRORS_ARE_FATAL, "MPI_COMM_WORLD's initial handler is not "
           "MPI_ERRORS_ARE_FATAL");
    CHECK_MPI(MPI_Comm_get_errhandler(MPI_COMM_SELF, &eh));
    CHECKF(eh == MPI_ERRORS_ARE_FATAL, "MPI_COMM_SELF's initial handler is not "
           "MPI_ERRORS_ARE_FATAL");

    CHECK_MPI(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    CHECK_MPI(MPI_Comm_get_errhandler(MPI_COMM_SELF, &eh));
    CHECKF(eh == MPI_ERRORS_RETURN, "MPI_COMM_SELF's handler is not what was set");
    /* MPI_COMM_WORLD keeps its own handler. */
    CHECK_MPI(MPI_Comm_get_errhandler(MPI_COMM_WORLD, &eh));
    CHECKF(eh == MPI_ERRORS_ARE_FATAL, "setting MPI_COMM_SELF's handler changed "
           "MPI_COMM_WORLD's");

    CHECK_MPI(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    CHECK_MPI(MPI_Comm_get_errhandler(MPI_COMM_WORLD, &eh));
    CHECKF(eh == MPI_ERRORS_RETURN, "MPI_COMM_WORLD's handler is not what was set");
}

/* 2. */
static void check_argument_errors(int size)
{
    int buf[4] = {0, 0, 0, 0};
    MPI_Comm w = MPI_COMM_WORLD;
    MPI_Request req = MPI_REQUEST_NULL;

    CHECK_ERROR(MPI_Send(buf, 1, MPI_INT, size, 0, w), MPI_ERR_RANK, "Send to rank size");
    CHECK_ERROR(MPI_Send(buf, 1, MPI_INT, size + 100, 0, w), MPI_ERR_RANK,
                "Send to rank size+100");
    CHECK_ERROR(MPI_Send(buf, 1, MPI_INT, -7, 0, w), MPI_ERR_RANK, "Send to rank -7");
    CHECK_ERROR(MPI_Isend(buf, 1, MPI_INT, size, 0, w, &req), MPI_ERR_RANK,
                "Isend to rank size");
    CHECK_ERROR(MPI_Recv(buf, 1, MPI_INT, size, 0, w, MPI_STATUS_IGNORE), MPI_ERR_RANK,
                "Recv from rank size");
    CHECK_ERROR(MPI_Irecv(buf, 1, MPI_INT, -7, 0, w, &req), MPI_ERR_RANK,
                "Irecv from rank -7");

    CHECK_ERROR(MPI_Send(buf, -1, MPI_INT, 0, 0, w), MPI_ERR_COUNT, "Send of count -1");
    CHECK_ERROR(MPI_Recv(buf, -1, MPI_INT, 0, 0, w, MPI_STATUS_IGNORE), MPI_ERR_COUNT,
                "Recv of count -1");

    CHECK_ERROR(MPI_Send(buf, 1, MPI_INT, 0, -1, w), MPI_ERR_TAG, "Send with tag -1");
    CHECK_ERROR(MPI_Send(buf, 1, MPI_INT, 0, MPI_ANY_TAG, w), MPI_ERR_TAG,
                "Send with tag MPI_ANY_TAG");
    CHECK_ERROR(MPI_Isend(buf, 1, MPI_INT, 0, -5, w, &req), MPI_ERR_TAG, "Isend with tag -5");
    CHECK_ERROR(MPI_Recv(buf, 1, MPI_INT, 0, -5, w, MPI_STATUS_IGNORE), MPI_ERR_TAG,
                "Recv with tag -5");

    CHECK_ERROR(MPI_Send(buf, 1, MPI_INT, 0, 0, MPI_COMM_NULL), MPI_ERR_COMM,
                "Send on MPI_COMM_NULL");
    CHECK_ERROR(MPI_Recv(buf, 1, MPI_INT, 0, 0, MPI_COMM_NULL, MPI_STATUS_IGNORE), MPI_ERR_COMM,
                "Recv on MPI_COMM_NULL");
    int out = -1;
    CHECK_ERROR(MPI_Comm_size(MPI_COMM_NULL, &out), MPI_ERR_COMM, "Comm_size of MPI_COMM_NULL");
    CHECK_ERROR(MPI_Comm_rank(MPI_COMM_NULL, &out), MPI_ERR_COMM, "Comm_rank of MPI_COMM_NULL");

    CHECK_ERROR(MPI_Send(buf, 1, MPI_DATATYPE_NULL, 0, 0, w), MPI_ERR_TYPE,
                "Send of MPI_DATATYPE_NULL");
    CHECK_ERROR(MPI_Recv(buf, 1, MPI_DATATYPE_NULL, 0, 0, w, MPI_STATUS_IGNORE), MPI_ERR_TYPE,
                "Recv of MPI_DATATYPE_NULL");

#ifdef SHMPI
    /* MPI_IN_PLACE is a collective's marker, not a buffer (MPICH 4.0.2
     * dereferences it). */
    CHECK_ERROR(MPI_Send(MPI_IN_PLACE, 1, MPI_INT, 0, 0, w), MPI_ERR_BUFFER, "Send from MPI_IN_PLACE");
    CHECK_ERROR(MPI_Recv(MPI_IN_PLACE, 1, MPI_INT, 0, 0, w, MPI_STATUS_IGNORE), MPI_ERR_BUFFER,
                "Recv into MPI_IN_PLACE");
#endif

    int argc = 0, provided = -1;
    char **argv = NULL;
    CHECK_ERROR(MPI_Init(&argc, &argv), MPI_ERR_OTHER, "a second MPI_Init");
    CHECK_ERROR(MPI_Init_thread(&argc, &argv, MPI_THREAD_SINGLE, &provided), MPI_ERR_OTHER,
                "MPI_Init_thread after MPI_Init");
    int initialized = 0;
    CHECK_MPI(MPI_Initialized(&initialized));
    CHECKF(initialized == 1, "MPI_Initialized gives %d after a refused second MPI_Init", initialized);

    /* MPI_COMM_SELF got MPI_ERRORS_RETURN in step 1: its own errors return. */
    CHECK_ERROR(MPI_Send(buf, 1, MPI_INT, 1, 0, MPI_COMM_SELF), MPI_ERR_RANK,
                "Send to rank 1 of MPI_COMM_SELF");
}

/* 2, continued: the other send modes and request calls. */
static void check_request_errors(int size)
{
    int buf[4] = {0, 0, 0, 0};
    MPI_Comm w = MPI_COMM_WORLD;
    MPI_Request req = MPI_REQUEST_NULL;

    CHECK_MPI(MPI_Isend(buf, 1, MPI_INT, MPI_PROC_NULL, 0, w, &req));
    CHECK_ERROR(MPI_Start(&req), MPI_ERR_REQUEST, "Start of a request from MPI_Isend");
    CHECK_MPI(MPI_Wait(&req, MPI_STATUS_IGNORE));
    CHECK_ERROR(MPI_Start(&req), MPI_ERR_REQUEST, "Start of MPI_REQUEST_NULL");
    CHECK_ERROR(MPI_Cancel(&req), MPI_ERR_REQUEST, "Cancel of MPI_REQUEST_NULL");
    CHECK_MPI(MPI_Recv_init(buf, 1, MPI_INT, MPI_ANY_SOURCE, 12345, w, &req));
    CHECK_MPI(MPI_Start(&req));
    CHECK_ERROR(MPI_Start(&req), MPI_ERR_REQUEST, "Start of an active request");
    CHECK_MPI(MPI_Cancel(&req));
    CHECK_MPI(MPI_Wait(&req, MPI_STATUS_IGNORE));
    CHECK_MPI(MPI_Request_free(&req));
    MPI_Message msg = MPI_MESSAGE_NULL;
    CHECK_ERROR(MPI_Mrecv(buf, 1, MPI_INT, &msg, MPI_STATUS_IGNORE), MPI_ERR_REQUEST,
                "Mrecv of MPI_MESSAGE_NULL");

    CHECK_ERROR(MPI_Bsend(buf, 1, MPI_INT, 0, 0, w), MPI_ERR_BUFFER,
                "Bsend without an attached buffer");
    const int pool_size = 100 + MPI_BSEND_OVERHEAD;
    char *pool = check_malloc((size_t)pool_size);
    CHECK_MPI(MPI_Buffer_attach(pool, pool_size));
    CHECK_ERROR(MPI_Buffer_attach(pool, pool_size), MPI_ERR_BUFFER, "a second Buffer_attach");
    char big[200] = {0};
    CHECK_ERROR(MPI_Bsend(big, 200, MPI_BYTE, 0, 0, w), MPI_ERR_BUFFER,
                "Bsend larger than the buffer");
    void *back = NULL;
    int back_size = 0;
    CHECK_MPI(MPI_Buffer_detach(&back, &back_size));
    CHECK(back == pool && back_size == pool_size);
    free(pool);
    CHECK_ERROR(MPI_Buffer_attach(buf, -1), MPI_ERR_ARG, "Buffer_attach of size -1");

    CHECK_ERROR(MPI_Send_init(buf, 1, MPI_INT, size, 0, w, &req), MPI_ERR_RANK,
                "Send_init to rank size");
    CHECK_ERROR(MPI_Recv_init(buf, 1, MPI_INT, 0, -5, w, &req), MPI_ERR_TAG,
                "Recv_init with tag -5");
    CHECK_ERROR(MPI_Send_init(buf, -1, MPI_INT, 0, 0, w, &req), MPI_ERR_COUNT,
                "Send_init of count -1");
    CHECK_ERROR(MPI_Startall(-1, &req), MPI_ERR_COUNT, "Startall of count -1");
}

/* 3. */
static void check_classes(void)
{
    for (int i = 0; i < NCLASSES; ++i) {
        int cls = -1;
        CHECK_MPI(MPI_Error_class(error_classes[i].cls, &cls));
        CHECKF(cls == error_classes[i].cls, "MPI_Error_class(%s) gave %d",
               error_classes[i].name, cls);
        char text[MPI_MAX_ERROR_STRING];
        int len = -1;
        CHECK_MPI(MPI_Error_string(error_classes[i].cls, text, &len));
        CHECKF(len > 0 && len < MPI_MAX_ERROR_STRING && (int)strlen(text) == len,
               "MPI_Error_string(%s) gave length %d", error_classes[i].name, len);
    }
    /* MPI_ERR_LASTCODE is an error code like the others: it has a class
     * and a text. */
    int last_class = -1;
    CHECK_MPI(MPI_Error_class(MPI_ERR_LASTCODE, &last_class));
    char last_text[MPI_MAX_ERROR_STRING];
    int last_len = -1;
    CHECK_MPI(MPI_Error_string(MPI_ERR_LASTCODE, last_text, &last_len));
    CHECK(last_len > 0 && (int)strlen(last_text) == last_len);
#ifdef SHMPI
    /* Values no call returns are refused: shmpi's codes are a class plus
     * 64 times a slot from 1 to 254, and MPI_SUCCESS has none (MPICH's
     * codes are built another way). */
    static const int never_codes[] = {-1, 64, 64 * 250, MPI_ERR_TAG + 64 * 255, 62};
    for (size_t i = 0; i < sizeof never_codes / sizeof never_codes[0]; ++i) {
        int cls = -7;
        CHECK_ERROR(MPI_Error_class(never_codes[i], &cls), MPI_ERR_ARG, "Error_class of a code never issued");
        CHECKF(cls == -7, "MPI_Error_class(%d) wrote class %d", never_codes[i], cls);
    }
#endif
    /* The classes are distinct, and MPI_ERR_LASTCODE is at least as large as
     * any of them. */
    for (int i = 0; i < NCLASSES; ++i) {
        CHECKF(error_classes[i].cls <= MPI_ERR_LASTCODE, "%s is above MPI_ERR_LASTCODE",
               error_classes[i].name);
        for (int j = i + 1; j < NCLASSES; ++j)
            CHECKF(error_classes[i].cls != error_classes[j].cls, "%s and %s are equal",
                   error_classes[i].name, error_classes[j].name);
    }
}

/* 4. */
static int handler_calls;
static MPI_Comm handler_comm;
static int handler_code;

static void record_error(MPI_Comm *comm, int *code, ...)
{
    ++handler_calls;
    handler_comm = *comm;
    handler_code = *code;
}

static void check_user_handler(int size)
{
    MPI_Errhandler mine = MPI_ERRHANDLER_NULL;
    CHECK_MPI(MPI_Comm_create_errhandler(record_error, &mine));
    CHECK(mine != MPI_ERRHANDLER_NULL);
    CHECK_MPI(MPI_Comm_set_errhandler(MPI_COMM_WORLD, mine));
    MPI_Errhandler got = MPI_ERRHANDLER_NULL;
    CHECK_MPI(MPI_Comm_get_errhandler(MPI_COMM_WORLD, &got));
    CHECKF(got == mine, "MPI_Comm_get_errhandler does not return the user handler set");
    /* Freeing only drops our reference; the communicator keeps it. */
    CHECK_MPI(MPI_Errhandler_free(&mine));
    CHECK(mine == MPI_ERRHANDLER_NULL);

    int buf = 0;
    handler_calls = 0;
    int rc = MPI_Send(&buf, 1, MPI_INT, size, 0, MPI_COMM_WORLD);
    CHECKF(handler_calls == 1, "the user handler ran %d times for one error", handler_calls);
    CHECKF(handler_comm == MPI_COMM_WORLD, "the user handler got another communicator");
    CHECKF(check_error_class(handler_code) == MPI_ERR_RANK,
           "the user handler got code %d of class %d", handler_code,
           check_error_class(handler_code));
    CHECKF(rc == handler_code, "Send returned %d after the handler got %d", rc, handler_code);

    handler_calls = 0;
    CHECK_MPI(MPI_Comm_call_errhandler(MPI_COMM_WORLD, MPI_ERR_OTHER));
    CHECKF(handler_calls == 1 && handler_code == MPI_ERR_OTHER,
           "MPI_Comm_call_errhandler: %d calls, code %d", handler_calls, handler_code);

    CHECK_MPI(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    CHECK_MPI(MPI_Errhandler_free(&got));
}

/* 5. */
static void check_still_works(int rank, int size)
{
    int right = (rank + 1) % size;
    int left = (rank + size - 1) % size;
    int out[64];
    int in[64];
    for (int i = 0; i < 64; ++i)
        out[i] = rank * 64 + i;
    MPI_Status st;
    CHECK_MPI(MPI_Sendrecv(out, 64, MPI_INT, right, 0, in, 64, MPI_INT, left, 0,
                           MPI_COMM_WORLD, &st));
    for (int i = 0; i < 64; ++i)
        CHECKF(in[i] == left * 64 + i, "after the errors, int %d from rank %d is %d", i, left,
               in[i]);
    /* No message from the failed calls is left to match: the next message
     * from the left on tag 0 is this one. */
    int v = rank;
    CHECK_MPI(MPI_Sendrecv_replace(&v, 1, MPI_INT, right, 0, left, 0, MPI_COMM_WORLD, &st));
    CHECKF(v == left, "second message after the errors carried %d", v);
}

/* 6. Each rank talks to itself: a receive with room for 1 int gets 2 (it
 * fails), a receive with room for 4 gets 1, and the two sends. */
static void post_one_truncation(MPI_Request req[4], int in[5], const int out[3], int tag)
{
    int me = world_rank();
    for (int i = 0; i < 5; ++i)
        in[i] = -1;
    CHECK_MPI(MPI_Irecv(&in[0], 1, MPI_INT, me, tag, MPI_COMM_WORLD, &req[0]));
    CHECK_MPI(MPI_Irecv(&in[1], 4, MPI_INT, me, tag + 1, MPI_COMM_WORLD, &req[1]));
    CHECK_MPI(MPI_Isend(out, 2, MPI_INT, me, tag, MPI_COMM_WORLD, &req[2]));
    CHECK_MPI(MPI_Isend(&out[2], 1, MPI_INT, me, tag + 1, MPI_COMM_WORLD, &req[3]));
}

/* MPI-3.1 3.7.5: each status's MPI_ERROR is MPI_SUCCESS (completed and
 * freed), the request's error (failed), or MPI_ERR_PENDING (neither: the
 * request stays active; MPICH stops at the first failure).  Pending ones
 * are completed here. */
static void check_statuses(const char *call, int rc, MPI_Status st[4], MPI_Request req[4],
                           const int in[5])
{
    CHECKF(rc == MPI_ERR_IN_STATUS, "%s returned %d (class %d), not MPI_ERR_IN_STATUS", call, rc,
           check_error_class(rc));
    CHECKF(check_error_class(st[0].MPI_ERROR) == MPI_ERR_TRUNCATE,
           "%s: the truncated receive's status has class %d", call,
           check_error_class(st[0].MPI_ERROR));
    CHECKF(req[0] == MPI_REQUEST_NULL, "%s: the failed request was not freed", call);
    for (int i = 1; i < 4; ++i) {
        if (st[i].MPI_ERROR == MPI_ERR_PENDING) {
            CHECKF(req[i] != MPI_REQUEST_NULL, "%s: request %d is pending but was freed", call, i);
            CHECK_MPI(MPI_Wait(&req[i], &st[i]));
            st[i].MPI_ERROR = MPI_SUCCESS;
        } else {
            CHECKF(st[i].MPI_ERROR == MPI_SUCCESS, "%s: status %d has MPI_ERROR %d", call, i,
                   st[i].MPI_ERROR);
            CHECKF(req[i] == MPI_REQUEST_NULL, "%s: request %d was not freed", call, i);
        }
    }
    CHECKF(in[1] == 33 && in[2] == -1, "%s: the good receive got %d %d", call, in[1], in[2]);
    int count = -1;
    CHECK_MPI(MPI_Get_count(&st[1], MPI_INT, &count));
    CHECKF(count == 1 && st[1].MPI_TAG == 601, "%s: the good receive's status: count %d, tag %d",
           call, count, st[1].MPI_TAG);
}

static void check_array_errors(void)
{
    const int out[3] = {11, 22, 33};
    int in[5];
    MPI_Request req[4];
    MPI_Status st[4];

    /* Under MPI_ERRORS_RETURN. */
    post_one_truncation(req, in, out, 600);
    check_statuses("MPI_Waitall", MPI_Waitall(4, req, st), st, req, in);

    post_one_truncation(req, in, out, 600);
    int flag = 0, rc = MPI_SUCCESS;
    while (!flag)
        rc = MPI_Testall(4, req, &flag, st);
    check_statuses("MPI_Testall", rc, st, req, in);

    /* Waitsome reports what is done; loop until all four are. */
    post_one_truncation(req, in, out, 600);
    int done = 0, truncated = 0;
    while (done < 4) {
        int outcount = -1, indices[4];
        MPI_Status some[4];
        rc = MPI_Waitsome(4, req, &outcount, indices, some);
        CHECKF(outcount >= 1 && outcount <= 4 - done, "MPI_Waitsome: outcount %d with %d left",
               outcount, 4 - done);
        int saw_failure = 0;
        for (int k = 0; k < outcount; ++k) {
            if (indices[k] == 0) {
                saw_failure = 1;
                ++truncated;
                CHECKF(check_error_class(some[k].MPI_ERROR) == MPI_ERR_TRUNCATE,
                       "MPI_Waitsome: the truncated receive's status has class %d",
                       check_error_class(some[k].MPI_ERROR));
            } else if (saw_failure || rc != MPI_SUCCESS) {
                CHECKF(some[k].MPI_ERROR == MPI_SUCCESS, "MPI_Waitsome: status of request %d has "
                       "MPI_ERROR %d", indices[k], some[k].MPI_ERROR);
            }
        }
        CHECKF(saw_failure ? rc == MPI_ERR_IN_STATUS : rc == MPI_SUCCESS,
               "MPI_Waitsome returned class %d (the failed request %s among those done)",
               check_error_class(rc), saw_failure ? "was" : "was not");
        done += outcount;
    }
    CHECK(truncated == 1);

    /* A user handler runs once per call, with MPI_ERR_IN_STATUS, and only
     * for the call that completes the failed request. */
    MPI_Errhandler mine = MPI_ERRHANDLER_NULL;
    CHECK_MPI(MPI_Comm_create_errhandler(record_error, &mine));
    CHECK_MPI(MPI_Comm_set_errhandler(MPI_COMM_WORLD, mine));
    handler_calls = 0;
    post_one_truncation(req, in, out, 600);
    rc = MPI_Waitall(4, req, st);
    CHECKF(handler_calls == 1, "the user handler ran %d times for one MPI_Waitall", handler_calls);
    CHECKF(handler_code == MPI_ERR_IN_STATUS, "the user handler got %d (class %d) from MPI_Waitall",
           handler_code, check_error_class(handler_code));
    CHECKF(rc == handler_code, "MPI_Waitall returned %d after the handler got %d", rc, handler_code);
    check_statuses("MPI_Waitall (user handler)", rc, st, req, in);

    handler_calls = 0;
    post_one_truncation(req, in, out, 600);
    flag = 0;
    while (!flag)
        rc = MPI_Testall(4, req, &flag, st);
    CHECKF(handler_calls == 1 && handler_code == MPI_ERR_IN_STATUS,
           "MPI_Testall: the user handler ran %d times, last with %d", handler_calls, handler_code);
    check_statuses("MPI_Testall (user handler)", rc, st, req, in);

    /* Waitsome and Testsome: the handler runs for the one call whose
     * completed requests include the failed receive. */
    for (int use_test = 0; use_test < 2; ++use_test) {
        const char *call = use_test ? "MPI_Testsome" : "MPI_Waitsome";
        handler_calls = 0;
        post_one_truncation(req, in, out, 600);
        int left = 4, failures = 0;
        while (left > 0) {
            int outcount = 0, indices[4];
            MPI_Status some[4];
            int before = handler_calls;
            rc = use_test ? MPI_Testsome(4, req, &outcount, indices, some)
                          : MPI_Waitsome(4, req, &outcount, indices, some);
            if (outcount == MPI_UNDEFINED)
                break;
            int failed_here = 0;
            for (int k = 0; k < outcount; ++k)
                failed_here |= indices[k] == 0;
            failures += failed_here;
            CHECKF(handler_calls - before == failed_here, "%s: the handler ran %d times in a call "
                   "that completed %s the failed request", call, handler_calls - before,
                   failed_here ? "" : "not");
            CHECKF(failed_here ? rc == MPI_ERR_IN_STATUS && handler_code == MPI_ERR_IN_STATUS
                               : rc == MPI_SUCCESS,
                   "%s returned %d, the handler got %d", call, rc, handler_code);
            left -= outcount;
        }
        CHECKF(failures == 1 && handler_calls == 1, "%s: %d failures, %d handler calls", call,
               failures, handler_calls);
    }
    CHECK_MPI(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    CHECK_MPI(MPI_Errhandler_free(&mine));
}

/* 7. */
static void check_status_error_kept(void) {
    const int keep = 12345;
    int me = world_rank();
    int out[2] = {5, 6}, in[2] = {0, 0};
    MPI_Status st;
    MPI_Request req[2];

    st.MPI_ERROR = keep;
    CHECK_MPI(MPI_Sendrecv(out, 1, MPI_INT, me, 700, in, 1, MPI_INT, me, 700, MPI_COMM_WORLD, &st));
    CHECKF(st.MPI_ERROR == keep, "MPI_Sendrecv set MPI_ERROR to %d", st.MPI_ERROR);

    st.MPI_ERROR = keep;
    CHECK_MPI(MPI_Isend(out, 1, MPI_INT, me, 701, MPI_COMM_WORLD, &req[0]));
    CHECK_MPI(MPI_Recv(in, 1, MPI_INT, me, 701, MPI_COMM_WORLD, &st));
    CHECKF(st.MPI_ERROR == keep, "MPI_Recv set MPI_ERROR to %d", st.MPI_ERROR);
    st.MPI_ERROR = keep;
    CHECK_MPI(MPI_Wait(&req[0], &st));
    CHECKF(st.MPI_ERROR == keep, "MPI_Wait (a send) set MPI_ERROR to %d", st.MPI_ERROR);

    st.MPI_ERROR = keep;
    CHECK_MPI(MPI_Irecv(in, 1, MPI_INT, me, 702, MPI_COMM_WORLD, &req[0]));
    CHECK_MPI(MPI_Send(out, 1, MPI_INT, me, 702, MPI_COMM_WORLD));
    int flag = 0;
    while (!flag) CHECK_MPI(MPI_Test(&req[0], &flag, &st));
    CHECKF(st.MPI_ERROR == keep, "MPI_Test set MPI_ERROR to %d", st.MPI_ERROR);

    st.MPI_ERROR = keep;
    int index = -1;
    CHECK_MPI(MPI_Irecv(in, 1, MPI_INT, me, 703, MPI_COMM_WORLD, &req[0]));
    CHECK_MPI(MPI_Send(out, 1, MPI_INT, me, 703, MPI_COMM_WORLD));
    CHECK_MPI(MPI_Waitany(1, req, &index, &st));
    CHECKF(index == 0 && st.MPI_ERROR == keep, "MPI_Waitany: index %d, MPI_ERROR %d", index, st.MPI_ERROR);

    /* A truncated receive: the error is the return code, not the status's. */
    st.MPI_ERROR = keep;
    CHECK_MPI(MPI_Irecv(in, 1, MPI_INT, me, 704, MPI_COMM_WORLD, &req[0]));
    CHECK_MPI(MPI_Send(out, 2, MPI_INT, me, 704, MPI_COMM_WORLD));
    int rc = MPI_Wait(&req[0], &st);
    CHECKF(check_error_class(rc) == MPI_ERR_TRUNCATE, "a truncated MPI_Wait returned class %d",
           check_error_class(rc));
    CHECKF(st.MPI_ERROR == keep, "a truncated MPI_Wait set MPI_ERROR to %d", st.MPI_ERROR);
    CHECKF(st.MPI_TAG == 704 && st.MPI_SOURCE == me, "a truncated MPI_Wait: source %d, tag %d", st.MPI_SOURCE,
           st.MPI_TAG);

    /* MPI_Request_get_status reports a truncation as MPI_Test does, and
     * leaves the request, whose wait reports it again. */
    st.MPI_ERROR = keep;
    CHECK_MPI(MPI_Irecv(in, 1, MPI_INT, me, 706, MPI_COMM_WORLD, &req[0]));
    CHECK_MPI(MPI_Send(out, 2, MPI_INT, me, 706, MPI_COMM_WORLD));
    flag = 0;
    rc = MPI_SUCCESS;
    while (!flag && rc == MPI_SUCCESS) rc = MPI_Request_get_status(req[0], &flag, &st);
    CHECKF(flag && check_error_class(rc) == MPI_ERR_TRUNCATE,
           "MPI_Request_get_status of a truncated receive: flag %d, class %d", flag, check_error_class(rc));
    CHECKF(req[0] != MPI_REQUEST_NULL, "MPI_Request_get_status freed the request");
    CHECKF(st.MPI_TAG == 706 && st.MPI_SOURCE == me && st.MPI_ERROR == keep,
           "MPI_Request_get_status of a truncated receive: source %d, tag %d, MPI_ERROR %d", st.MPI_SOURCE,
           st.MPI_TAG, st.MPI_ERROR);
    rc = MPI_Wait(&req[0], &st);
    CHECKF(check_error_class(rc) == MPI_ERR_TRUNCATE && req[0] == MPI_REQUEST_NULL,
           "the wait after MPI_Request_get_status returned class %d", check_error_class(rc));

#ifdef SHMPI
    MPI_Status sts[2];
    sts[0].MPI_ERROR = sts[1].MPI_ERROR = keep;
    CHECK_MPI(MPI_Irecv(in, 2, MPI_INT, me, 705, MPI_COMM_WORLD, &req[0]));
    CHECK_MPI(MPI_Isend(out, 2, MPI_INT, me, 705, MPI_COMM_WORLD, &req[1]));
    CHECK_MPI(MPI_Waitall(2, req, sts));
    CHECKF(sts[0].MPI_ERROR == keep && sts[1].MPI_ERROR == keep,
           "a successful MPI_Waitall set MPI_ERROR to %d, %d", sts[0].MPI_ERROR, sts[1].MPI_ERROR);
    CHECKF(in[0] == 5 && in[1] == 6, "MPI_Waitall received %d %d", in[0], in[1]);
#endif
}

#ifdef SHMPI
/* 8. */
static void check_messages(void)
{
    const int me = world_rank();
    int x = 0, flag = 0, index = 0, outcount = 0, indices[3], n = 0;
    MPI_Request good, r[3];
    MPI_Status st;
    CHECK_MPI(MPI_Irecv(&x, 1, MPI_INT, me, 800, MPI_COMM_WORLD, &good));
    r[0] = good;
    r[1] = MPI_REQUEST_NULL;
    r[2] = (MPI_Request)(uintptr_t)0x1234;
    const char *wild = "invalid request 0x1234 (array_of_requests[2])";
    check_error_says(MPI_Waitall(3, r, MPI_STATUSES_IGNORE), MPI_ERR_REQUEST, "MPI_Waitall", wild);
    check_error_says(MPI_Testall(3, r, &flag, MPI_STATUSES_IGNORE), MPI_ERR_REQUEST, "MPI_Testall", wild);
    check_error_says(MPI_Waitany(3, r, &index, &st), MPI_ERR_REQUEST, "MPI_Waitany", wild);
    check_error_says(MPI_Testany(3, r, &index, &flag, &st), MPI_ERR_REQUEST, "MPI_Testany", wild);
    check_error_says(MPI_Waitsome(3, r, &outcount, indices, MPI_STATUSES_IGNORE), MPI_ERR_REQUEST,
                     "MPI_Waitsome", wild);
    check_error_says(MPI_Testsome(3, r, &outcount, indices, MPI_STATUSES_IGNORE), MPI_ERR_REQUEST,
                     "MPI_Testsome", wild);
    /* A NULL request pointer is an argument error, not a null request;
     * the MPI-1 names are named as called; null handles by name. */
    check_error_says(MPI_Cancel(NULL), MPI_ERR_ARG, "MPI_Cancel(NULL)", "MPI_Cancel: request is NULL");
    check_error_says(MPI_Errhandler_set(MPI_COMM_NULL, MPI_ERRORS_RETURN), MPI_ERR_COMM,
                     "MPI_Errhandler_set(MPI_COMM_NULL)", "MPI_Errhandler_set: communicator is MPI_COMM_NULL");
    check_error_says(MPI_Errhandler_get(MPI_COMM_WORLD, NULL), MPI_ERR_ARG, "MPI_Errhandler_get(NULL)",
                     "MPI_Errhandler_get: errhandler is NULL");
    int type_key = MPI_KEYVAL_INVALID, *attr = NULL;
    CHECK_MPI(MPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, MPI_TYPE_NULL_DELETE_FN, &type_key, NULL));
    check_error_says(MPI_Type_get_attr(MPI_DATATYPE_NULL, type_key, &attr, &flag), MPI_ERR_TYPE,
                     "MPI_Type_get_attr(MPI_DATATYPE_NULL)", "MPI_Type_get_attr: datatype is MPI_DATATYPE_NULL");
    check_error_says(MPI_Type_delete_attr(MPI_DATATYPE_NULL, type_key), MPI_ERR_TYPE,
                     "MPI_Type_delete_attr(MPI_DATATYPE_NULL)",
                     "MPI_Type_delete_attr: datatype is MPI_DATATYPE_NULL");
    CHECK_MPI(MPI_Type_free_keyval(&type_key));
    MPI_Message none = MPI_MESSAGE_NULL;
    check_error_says(MPI_Mrecv(&x, 1, MPI_INT, &none, MPI_STATUS_IGNORE), MPI_ERR_REQUEST,
                     "MPI_Mrecv(MPI_MESSAGE_NULL)", "MPI_Mrecv: message is MPI_MESSAGE_NULL");
    MPI_Request mreq = MPI_REQUEST_NULL;
    check_error_says(MPI_Imrecv(&x, 1, MPI_INT, &none, &mreq), MPI_ERR_REQUEST, "MPI_Imrecv(MPI_MESSAGE_NULL)",
                     "MPI_Imrecv: message is MPI_MESSAGE_NULL");
    check_error_says(MPI_Startall(3, r), MPI_ERR_REQUEST, "MPI_Startall", "(array_of_requests[0]) is not persistent");
    MPI_Request p[2];
    CHECK_MPI(MPI_Recv_init(&x, 1, MPI_INT, me, 801, MPI_COMM_WORLD, &p[0]));
    p[1] = good;
    check_error_says(MPI_Startall(2, p), MPI_ERR_REQUEST, "MPI_Startall of a non-persistent request",
                     "(array_of_requests[1]) is not persistent");
    p[1] = MPI_REQUEST_NULL;
    check_error_says(MPI_Startall(2, p), MPI_ERR_REQUEST, "MPI_Startall of MPI_REQUEST_NULL",
                     "MPI_Startall: array_of_requests[1] is MPI_REQUEST_NULL");

    /* A buffered send with no buffer: nothing starts, not even the
     * receive before it. */
    CHECK_MPI(MPI_Bsend_init(&n, 1, MPI_INT, me, 801, MPI_COMM_WORLD, &p[1]));
    check_error_says(MPI_Startall(2, p), MPI_ERR_BUFFER, "MPI_Startall of a buffered send with no buffer",
                     "(array_of_requests[1]) is a buffered send (MPI_Bsend_init) of 4 bytes, and no buffer is "
                     "attached");
    flag = 0;
    CHECK_MPI(MPI_Test(&p[0], &flag, MPI_STATUS_IGNORE));
    CHECKF(flag == 1, "a failed MPI_Startall started the receive before the buffered send");
    CHECK_MPI(MPI_Request_free(&p[0]));
    CHECK_MPI(MPI_Request_free(&p[1]));

    check_error_says(MPI_Test(&good, NULL, &st), MPI_ERR_ARG, "MPI_Test with NULL flag", "MPI_Test: flag is NULL");
    check_error_says(MPI_Test(NULL, &flag, &st), MPI_ERR_ARG, "MPI_Test with NULL request",
                     "MPI_Test: request is NULL");
    check_error_says(MPI_Testany(1, &good, NULL, &flag, &st), MPI_ERR_ARG, "MPI_Testany with NULL index",
                     "MPI_Testany: index is NULL");
    check_error_says(MPI_Testany(1, &good, &index, NULL, &st), MPI_ERR_ARG, "MPI_Testany with NULL flag",
                     "MPI_Testany: flag is NULL");
    check_error_says(MPI_Waitsome(1, &good, NULL, indices, MPI_STATUSES_IGNORE), MPI_ERR_ARG,
                     "MPI_Waitsome with NULL outcount", "MPI_Waitsome: outcount is NULL");
    check_error_says(MPI_Testsome(1, &good, &outcount, NULL, MPI_STATUSES_IGNORE), MPI_ERR_ARG,
                     "MPI_Testsome with NULL indices", "MPI_Testsome: array_of_indices is NULL");
    status_poison(&st);
    check_error_says(MPI_Get_count(MPI_STATUS_IGNORE, MPI_INT, &n), MPI_ERR_ARG,
                     "MPI_Get_count of MPI_STATUS_IGNORE", "MPI_Get_count: status is NULL (MPI_STATUS_IGNORE)");
    check_error_says(MPI_Get_count(&st, MPI_INT, NULL), MPI_ERR_ARG, "MPI_Get_count with NULL count",
                     "MPI_Get_count: count is NULL");
    check_error_says(MPI_Get_elements(&st, MPI_INT, NULL), MPI_ERR_ARG, "MPI_Get_elements with NULL count",
                     "MPI_Get_elements: count is NULL");
    MPI_Count nx = 0;
    check_error_says(MPI_Get_elements_x(MPI_STATUS_IGNORE, MPI_INT, &nx), MPI_ERR_ARG,
                     "MPI_Get_elements_x of MPI_STATUS_IGNORE", "MPI_Get_elements_x: status is NULL");
    check_error_says(MPI_Test_cancelled(NULL, &flag), MPI_ERR_ARG, "MPI_Test_cancelled of NULL",
                     "MPI_Test_cancelled: status is NULL");
    check_error_says(MPI_Test_cancelled(&st, NULL), MPI_ERR_ARG, "MPI_Test_cancelled with NULL flag",
                     "MPI_Test_cancelled: flag is NULL");
    check_error_says(MPI_Error_string(MPI_ERR_ARG, NULL, &n), MPI_ERR_ARG, "MPI_Error_string with NULL string",
                     "MPI_Error_string: string is NULL");

    CHECK_MPI(MPI_Cancel(&good));
    CHECK_MPI(MPI_Wait(&good, MPI_STATUS_IGNORE));
}
#endif

int main(int argc, char **argv)
{
    CHECK_MPI(MPI_Init(&argc, &argv));
    int rank = world_rank();
    int size = world_size();

    check_handlers();
    check_argument_errors(size);
    check_request_errors(size);
    check_classes();
    check_user_handler(size);
    check_array_errors();
    check_status_error_kept();
#ifdef SHMPI
    check_messages();
#endif
    check_still_works(rank, size);

    CHECK_MPI(MPI_Finalize());
    return 0;
}
