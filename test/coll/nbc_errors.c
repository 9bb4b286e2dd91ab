/*
 * Bad input to the nonblocking collectives, under MPI_ERRORS_RETURN: the
 * same argument checks as the blocking forms, a NULL request, freeing or
 * cancelling a collective's request (erroneous, MPI-3.1 5.12), and ranks
 * whose counts disagree: the root's wait reports MPI_ERR_TRUNCATE, and
 * every rank still completes (no hang).  shmpi only:
 * the standard leaves several of these unchecked, and MPICH accepts some.
 */
#include "coll_test.h"

int main(int argc, char **argv)
{
    CHECK_MPI(MPI_Init(&argc, &argv));
    int rank, size;
    CHECK_MPI(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    CHECK_MPI(MPI_Comm_size(MPI_COMM_WORLD, &size));
    errors_return(MPI_COMM_WORLD);

    int buf[4] = {0, 0, 0, 0};
    MPI_Request req = MPI_REQUEST_NULL;
    CHECK_CLASS(MPI_Ibcast(buf, 4, MPI_INT, size, MPI_COMM_WORLD, &req), MPI_ERR_ROOT);
    CHECK(req == MPI_REQUEST_NULL);
    CHECK_CLASS(MPI_Ibcast(buf, -1, MPI_INT, 0, MPI_COMM_WORLD, &req), MPI_ERR_COUNT);
    CHECK_CLASS(MPI_Ibcast(buf, 4, MPI_DATATYPE_NULL, 0, MPI_COMM_WORLD, &req), MPI_ERR_TYPE);
    CHECK_CLASS(MPI_Ibarrier(MPI_COMM_NULL, &req), MPI_ERR_COMM);
    CHECK_CLASS(MPI_Ibarrier(MPI_COMM_WORLD, NULL), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Iallreduce(buf, buf + 2, 2, MPI_INT, MPI_OP_NULL, MPI_COMM_WORLD, &req), MPI_ERR_OP);
    CHECK_CLASS(MPI_Iallreduce(buf, buf, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req), MPI_ERR_BUFFER);
    CHECK_CLASS(MPI_Iallreduce(buf, buf + 2, 2, MPI_2INT, MPI_SUM, MPI_COMM_WORLD, &req), MPI_ERR_OP);
    CHECK(req == MPI_REQUEST_NULL);

    /* A collective's request can be neither freed nor cancelled; it stays
     * valid and completes normally afterwards. */
    CHECK_MPI(MPI_Ibarrier(MPI_COMM_WORLD, &req));
    CHECK_CLASS(MPI_Request_free(&req), MPI_ERR_REQUEST);
    CHECK(req != MPI_REQUEST_NULL);
    CHECK_CLASS(MPI_Cancel(&req), MPI_ERR_REQUEST);
    MPI_Status st;
    CHECK_MPI(MPI_Wait(&req, &st));
    CHECK(req == MPI_REQUEST_NULL);
    /* Those errors go to the request's communicator's handler, as the
     * errors of its completion do: here MPI_ERRORS_RETURN on a duplicate
     * while the world's handler is fatal. */
    MPI_Comm dup;
    CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    errors_return(dup);
    CHECK_MPI(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
    CHECK_MPI(MPI_Ibarrier(dup, &req));
    CHECK_CLASS(MPI_Request_free(&req), MPI_ERR_REQUEST);
    CHECK_CLASS(MPI_Cancel(&req), MPI_ERR_REQUEST);
    CHECK(req != MPI_REQUEST_NULL);
    CHECK_MPI(MPI_Wait(&req, &st));
    errors_return(MPI_COMM_WORLD);
    CHECK_MPI(MPI_Comm_free(&dup));

    /* Counts that disagree: the others send 2 ints each to a root that
     * expects 1 from each. */
    int gathered[64];
    const int scount = rank == 0 ? 1 : 2;
    buf[0] = buf[1] = rank;
    CHECK_MPI(MPI_Igather(buf, scount, MPI_INT, gathered, 1, MPI_INT, 0, MPI_COMM_WORLD, &req));
    st.MPI_ERROR = -7;
    const int rc = MPI_Wait(&req, &st);
    if (size > 1 && rank == 0) {
        CHECKF(check_error_class(rc) == MPI_ERR_TRUNCATE, "MPI_Wait returned class %d", check_error_class(rc));
        /* MPI-3.1 3.2.5: the error is the return code; MPI_Wait leaves
         * the status's MPI_ERROR alone. */
        CHECKF(st.MPI_ERROR == -7, "MPI_Wait set MPI_ERROR to %d", st.MPI_ERROR);
        char msg[MPI_MAX_ERROR_STRING];
        int len = 0;
        CHECK_MPI(MPI_Error_string(rc, msg, &len));
        CHECKF(strstr(msg, "MPI_Wait: MPI_Igather") != NULL && strstr(msg, "expected 4") != NULL, "message: %s", msg);
    } else {
        CHECK_MPI(rc);
    }
    /* The communicator is still usable afterwards. */
    int one = 1, sum = 0;
    CHECK_MPI(MPI_Iallreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req));
    CHECK_MPI(MPI_Wait(&req, MPI_STATUS_IGNORE));
    CHECK(sum == size);

    CHECK_MPI(MPI_Finalize());
    return 0;
}
