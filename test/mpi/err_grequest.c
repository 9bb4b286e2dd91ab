/*
 * err_grequest: bad arguments to the generalized-request calls (MPI-3.1
 * 12.2) and the status calls (12.3) under MPI_ERRORS_RETURN.  shmpi only:
 * the classes follow the standard, but the checks read shmpi's messages,
 * which name the function, the argument and the bad value.
 *
 *   MPI_Grequest_start with a NULL request or callback      -> MPI_ERR_ARG
 *   MPI_Grequest_complete of MPI_REQUEST_NULL, of a receive,
 *     or of a generalized request already complete         -> MPI_ERR_REQUEST
 *   MPI_Status_set_elements(_x) with a NULL status          -> MPI_ERR_ARG
 *     a negative count, a count of a type with no basic
 *     elements, more bytes than a status holds             -> MPI_ERR_COUNT
 *     MPI_DATATYPE_NULL, a bound marker                     -> MPI_ERR_TYPE
 *     an uncommitted type: accepted, as nothing is communicated
 *   MPI_Status_set_cancelled with a NULL status             -> MPI_ERR_ARG
 *   a callback that returns no MPI error code: the call returns a code of
 *     class MPI_ERR_OTHER that says so, from MPI_Wait, and in its status
 *     from MPI_Waitall.
 * A failed call changes nothing: the status keeps its count.
 */
#include "check.h"

static void expect(int rc, int cls, const char *what, const char *part1, const char *part2)
{
    check_error_says(rc, cls, what, part1);
    if (part2 != NULL)
        check_error_says(rc, cls, what, part2);
}

static int frees;

static int query_ok(void *extra, MPI_Status *status)
{
    (void)extra;
    return MPI_Status_set_elements(status, MPI_BYTE, 3);
}

static int query_bad_code(void *extra, MPI_Status *status)
{
    (void)extra;
    (void)status;
    return -7; /* no MPI error code */
}

static int free_fn(void *extra)
{
    (void)extra;
    ++frees;
    return MPI_SUCCESS;
}

static int cancel_fn(void *extra, int complete)
{
    (void)extra;
    (void)complete;
    return MPI_SUCCESS;
}

int main(int argc, char **argv)
{
    CHECK_MPI(MPI_Init(&argc, &argv));
    CHECK_MPI(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    const int me = world_rank();
    MPI_Request r = MPI_REQUEST_NULL;
    MPI_Status st;
    int rc;

    /* MPI_Grequest_start */
    expect(MPI_Grequest_start(query_ok, free_fn, cancel_fn, NULL, NULL), MPI_ERR_ARG,
           "MPI_Grequest_start", "MPI_Grequest_start", "request is NULL");
    expect(MPI_Grequest_start(NULL, free_fn, cancel_fn, NULL, &r), MPI_ERR_ARG,
           "MPI_Grequest_start", "MPI_Grequest_start", "query_fn is NULL");
    expect(MPI_Grequest_start(query_ok, NULL, cancel_fn, NULL, &r), MPI_ERR_ARG,
           "MPI_Grequest_start", "MPI_Grequest_start", "free_fn is NULL");
    expect(MPI_Grequest_start(query_ok, free_fn, NULL, NULL, &r), MPI_ERR_ARG, "MPI_Grequest_start",
           "MPI_Grequest_start", "cancel_fn is NULL");
    CHECK(r == MPI_REQUEST_NULL);

    /* MPI_Grequest_complete */
    expect(MPI_Grequest_complete(MPI_REQUEST_NULL), MPI_ERR_REQUEST,
           "MPI_Grequest_complete(MPI_REQUEST_NULL)", "MPI_Grequest_complete", "MPI_REQUEST_NULL");
    int buf = 0;
    CHECK_MPI(MPI_Irecv(&buf, 1, MPI_INT, me, 5, MPI_COMM_WORLD, &r));
    expect(MPI_Grequest_complete(r), MPI_ERR_REQUEST, "MPI_Grequest_complete(a receive)",
           "MPI_Grequest_complete", "not a generalized request");
    CHECK_MPI(MPI_Cancel(&r));
    CHECK_MPI(MPI_Wait(&r, MPI_STATUS_IGNORE));
    CHECK_MPI(MPI_Grequest_start(query_ok, free_fn, cancel_fn, NULL, &r));
    CHECK_MPI(MPI_Grequest_complete(r));
    expect(MPI_Grequest_complete(r), MPI_ERR_REQUEST, "a second MPI_Grequest_complete",
           "MPI_Grequest_complete", "already complete");
    frees = 0;
    CHECK_MPI(MPI_Wait(&r, &st));
    CHECK(frees == 1);

    /* MPI_Status_set_elements(_x) and MPI_Status_set_cancelled */
    CHECK_MPI(MPI_Status_set_elements(&st, MPI_INT, 2));
    expect(MPI_Status_set_elements(NULL, MPI_INT, 1), MPI_ERR_ARG, "MPI_Status_set_elements(NULL)",
           "MPI_Status_set_elements", "status is NULL");
    expect(MPI_Status_set_elements(&st, MPI_INT, -1), MPI_ERR_COUNT, "MPI_Status_set_elements(-1)",
           "MPI_Status_set_elements", "count -1 is negative");
    expect(MPI_Status_set_elements_x(&st, MPI_INT, -5), MPI_ERR_COUNT,
           "MPI_Status_set_elements_x(-5)", "MPI_Status_set_elements_x", "count -5 is negative");
    expect(MPI_Status_set_elements(&st, MPI_DATATYPE_NULL, 1), MPI_ERR_TYPE,
           "MPI_Status_set_elements(MPI_DATATYPE_NULL)", "MPI_Status_set_elements",
           "MPI_DATATYPE_NULL");
    MPI_Datatype vec, empty;
    CHECK_MPI(MPI_Type_vector(2, 1, 2, MPI_INT, &vec));
    /* An uncommitted type is fine where nothing is communicated (MPI-3.1
     * 4.1.9): the status and size calls only count with it. */
    CHECK_MPI(MPI_Status_set_elements(&st, vec, 3));
    int got = -1;
    CHECK_MPI(MPI_Get_elements(&st, vec, &got));
    CHECKF(got == 3, "MPI_Get_elements(uncommitted vector of 2 ints) after 3 ints gave %d", got);
    CHECK_MPI(MPI_Get_count(&st, vec, &got));
    CHECKF(got == MPI_UNDEFINED, "MPI_Get_count(uncommitted vector of 2 ints) of 3 ints gave %d", got);
    MPI_Count got_x = -1;
    CHECK_MPI(MPI_Status_set_elements_x(&st, vec, 4));
    CHECK_MPI(MPI_Get_elements_x(&st, vec, &got_x));
    CHECKF(got_x == 4, "MPI_Get_elements_x(uncommitted) after 4 ints gave %lld", (long long)got_x);
    CHECK_MPI(MPI_Get_count(&st, vec, &got));
    CHECKF(got == 2, "MPI_Get_count(uncommitted vector of 2 ints) of 4 ints gave %d", got);
    CHECK_MPI(MPI_Pack_size(5, vec, MPI_COMM_WORLD, &got));
    CHECKF(got >= 40, "MPI_Pack_size(5 uncommitted vectors of 2 ints) gave %d", got);
    MPI_Aint ext_size = -1;
    CHECK_MPI(MPI_Pack_external_size("external32", 5, vec, &ext_size));
    CHECKF(ext_size == 40, "MPI_Pack_external_size(5 uncommitted vectors of 2 ints) gave %ld", (long)ext_size);
    /* ... but the bound markers are no types for data. */
    expect(MPI_Get_count(&st, MPI_UB, &got), MPI_ERR_TYPE, "MPI_Get_count(MPI_UB)", "MPI_Get_count",
           "bound marker");
    CHECK_MPI(MPI_Type_free(&vec));
    CHECK_MPI(MPI_Type_contiguous(0, MPI_INT, &empty));
    CHECK_MPI(MPI_Type_commit(&empty));
    CHECK_MPI(MPI_Status_set_elements(&st, empty, 0));
    expect(MPI_Status_set_elements(&st, empty, 3), MPI_ERR_COUNT,
           "MPI_Status_set_elements(empty type, 3)", "MPI_Status_set_elements",
           "count 3 of datatype");
    CHECK_MPI(MPI_Type_free(&empty));
    CHECK_MPI(MPI_Status_set_elements(&st, MPI_INT, 2));
    expect(MPI_Status_set_elements_x(&st, MPI_INT, (MPI_Count)1 << 62), MPI_ERR_COUNT,
           "MPI_Status_set_elements_x(2^62 ints)", "MPI_Status_set_elements_x",
           "4611686018427387904");
    int n = -1;
    CHECK_MPI(MPI_Get_count(&st, MPI_INT, &n));
    CHECKF(n == 2, "a failed MPI_Status_set_elements changed the count to %d", n);
    expect(MPI_Status_set_cancelled(NULL, 1), MPI_ERR_ARG, "MPI_Status_set_cancelled(NULL)",
           "MPI_Status_set_cancelled", "status is NULL");

    /* A callback that returns no MPI error code. */
    CHECK_MPI(MPI_Grequest_start(query_bad_code, free_fn, cancel_fn, NULL, &r));
    CHECK_MPI(MPI_Grequest_complete(r));
    frees = 0;
    rc = MPI_Wait(&r, &st);
    expect(rc, MPI_ERR_OTHER, "MPI_Wait with query_fn returning -7", "MPI_Wait",
           "query_fn returned -7");
    CHECK(r == MPI_REQUEST_NULL && frees == 1);

    /* MPI_Waitall: the failed request's status says which callback failed,
     * and how. */
    MPI_Request rs[2];
    MPI_Status sts[2];
    CHECK_MPI(MPI_Grequest_start(query_ok, free_fn, cancel_fn, NULL, &rs[0]));
    CHECK_MPI(MPI_Grequest_start(query_bad_code, free_fn, cancel_fn, NULL, &rs[1]));
    CHECK_MPI(MPI_Grequest_complete(rs[0]));
    CHECK_MPI(MPI_Grequest_complete(rs[1]));
    rc = MPI_Waitall(2, rs, sts);
    CHECKF(rc == MPI_ERR_IN_STATUS, "MPI_Waitall returned %d, expected MPI_ERR_IN_STATUS", rc);
    CHECK(sts[0].MPI_ERROR == MPI_SUCCESS);
    expect(sts[1].MPI_ERROR, MPI_ERR_OTHER, "MPI_Waitall's status 1", "query_fn returned -7", NULL);

    CHECK_MPI(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
    sync_all(MPI_COMM_WORLD);
    CHECK_MPI(MPI_Finalize());
    return 0;
}
