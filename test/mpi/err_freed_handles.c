/*
 * err_freed_handles: a handle used after MPI_*_free gets an error of the
 * handle's class under MPI_ERRORS_RETURN, never a crash or a read of freed
 * memory.  Erroneous by the standard (so shmpi only); shmpi promises it
 * because its objects' memory is kept (src/handle_storage.hpp).  Run it in
 * the ASan build too: it must report no use-after-free.
 *
 * For a derived datatype, a duplicated communicator, a group, a user
 * operation and requests (completed by a wait, freed by MPI_Request_free,
 * more of them than the engine keeps spare): keep a copy of the handle,
 * free the object, call a function with the copy:
 *   datatype -> MPI_ERR_TYPE, communicator -> MPI_ERR_COMM,
 *   group -> MPI_ERR_GROUP, operation -> MPI_ERR_OP,
 *   request -> MPI_ERR_REQUEST (before its memory is reused),
 * and each message says the handle was freed.  Then new objects of each
 * kind (which may take the freed memory) work as usual.
 */
#include <string.h>

#include "check.h"

/* The call must fail with class `cls`, saying the handle was freed. */
static void expect_freed(int rc, int cls, const char *what)
{
    check_error_says(rc, cls, what, "freed");
}

int main(int argc, char **argv)
{
    CHECK_MPI(MPI_Init(&argc, &argv));
    CHECK_MPI(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    int me = world_rank();
    int size = world_size();

    /* A derived datatype. */
    MPI_Datatype vec, stale_type;
    CHECK_MPI(MPI_Type_vector(2, 1, 2, MPI_INT, &vec));
    CHECK_MPI(MPI_Type_commit(&vec));
    stale_type = vec;
    CHECK_MPI(MPI_Type_free(&vec));
    CHECK(vec == MPI_DATATYPE_NULL);
    int tsize = -1;
    expect_freed(MPI_Type_size(stale_type, &tsize), MPI_ERR_TYPE, "MPI_Type_size");
    int buf[4] = {1, 2, 3, 4};
    expect_freed(MPI_Send(buf, 1, stale_type, me, 0, MPI_COMM_WORLD), MPI_ERR_TYPE, "MPI_Send");

    /* A communicator. */
    MPI_Comm dup, stale_comm;
    CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    stale_comm = dup;
    CHECK_MPI(MPI_Comm_free(&dup));
    CHECK(dup == MPI_COMM_NULL);
    int csize = -1;
    expect_freed(MPI_Comm_size(stale_comm, &csize), MPI_ERR_COMM, "MPI_Comm_size");

    /* A group. */
    MPI_Group group, stale_group;
    CHECK_MPI(MPI_Comm_group(MPI_COMM_WORLD, &group));
    stale_group = group;
    CHECK_MPI(MPI_Group_free(&group));
    CHECK(group == MPI_GROUP_NULL);
    int gsize = -1;
    expect_freed(MPI_Group_size(stale_group, &gsize), MPI_ERR_GROUP, "MPI_Group_size");

    /* A user operation. */
    MPI_Op op, stale_op;
    CHECK_MPI(MPI_Op_create(check_sum_ints, 1, &op));
    stale_op = op;
    CHECK_MPI(MPI_Op_free(&op));
    CHECK(op == MPI_OP_NULL);
    int in = 1, out = 0;
    expect_freed(MPI_Reduce_local(&in, &out, 1, MPI_INT, stale_op), MPI_ERR_OP, "MPI_Reduce_local");

    /* Requests: waiting twice on one (a copy of the handle) must not free
     * it twice, which would give its memory to two later requests. */
    MPI_Request req, stale_req;
    CHECK_MPI(MPI_Isend(buf, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &req));
    stale_req = req;
    CHECK_MPI(MPI_Wait(&req, MPI_STATUS_IGNORE));
    CHECK(req == MPI_REQUEST_NULL);
    expect_freed(MPI_Wait(&stale_req, MPI_STATUS_IGNORE), MPI_ERR_REQUEST, "MPI_Wait");
    CHECK_MPI(MPI_Irecv(buf, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &req));
    stale_req = req;
    CHECK_MPI(MPI_Request_free(&req));
    int flag = 0;
    expect_freed(MPI_Test(&stale_req, &flag, MPI_STATUS_IGNORE), MPI_ERR_REQUEST, "MPI_Test");
    /* Many at once, so that some are deleted rather than kept spare. */
    enum { kMany = 200 };
    static MPI_Request many[kMany], stale_many[kMany];
    static int vals[kMany];
    for (int i = 0; i < kMany; ++i) {
        vals[i] = -1;
        CHECK_MPI(MPI_Irecv(&vals[i], 1, MPI_INT, me, 10 + i, MPI_COMM_WORLD, &many[i]));
        stale_many[i] = many[i];
    }
    for (int i = 0; i < kMany; ++i) CHECK_MPI(MPI_Send(&i, 1, MPI_INT, me, 10 + i, MPI_COMM_WORLD));
    CHECK_MPI(MPI_Waitall(kMany, many, MPI_STATUSES_IGNORE));
    for (int i = 0; i < kMany; ++i)
        CHECKF(vals[i] == i && many[i] == MPI_REQUEST_NULL, "request %d: got %d", i, vals[i]);
    expect_freed(MPI_Wait(&stale_many[0], MPI_STATUS_IGNORE), MPI_ERR_REQUEST, "MPI_Wait");
    expect_freed(MPI_Wait(&stale_many[kMany - 1], MPI_STATUS_IGNORE), MPI_ERR_REQUEST, "MPI_Wait");
    /* Two new requests are two objects. */
    MPI_Request r1, r2;
    int x = -1, y = -1, one = 11, two = 22;
    CHECK_MPI(MPI_Irecv(&x, 1, MPI_INT, me, 1, MPI_COMM_WORLD, &r1));
    CHECK_MPI(MPI_Irecv(&y, 1, MPI_INT, me, 2, MPI_COMM_WORLD, &r2));
    CHECK(r1 != r2);
    CHECK_MPI(MPI_Send(&two, 1, MPI_INT, me, 2, MPI_COMM_WORLD));
    CHECK_MPI(MPI_Send(&one, 1, MPI_INT, me, 1, MPI_COMM_WORLD));
    CHECK_MPI(MPI_Wait(&r1, MPI_STATUS_IGNORE));
    CHECK_MPI(MPI_Wait(&r2, MPI_STATUS_IGNORE));
    CHECKF(x == 11 && y == 22, "new requests received %d %d", x, y);

    /* New objects work, whatever memory they got. */
    CHECK_MPI(MPI_Type_vector(2, 1, 2, MPI_INT, &vec));
    CHECK_MPI(MPI_Type_commit(&vec));
    CHECK_MPI(MPI_Type_size(vec, &tsize));
    CHECK(tsize == 2 * (int)sizeof(int));
    CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    CHECK_MPI(MPI_Comm_size(dup, &csize));
    CHECK(csize == size);
    CHECK_MPI(MPI_Op_create(check_sum_ints, 1, &op));
    int total = -1;
    CHECK_MPI(MPI_Allreduce(&me, &total, 1, MPI_INT, op, dup));
    CHECKF(total == size * (size - 1) / 2, "Allreduce with a new op on a new communicator: %d",
           total);
    int recv[4] = {0, 0, 0, 0};
    CHECK_MPI(MPI_Sendrecv(buf, 1, vec, me, 5, recv, 2, MPI_INT, me, 5, dup, MPI_STATUS_IGNORE));
    CHECKF(recv[0] == 1 && recv[1] == 3, "a new vector type sent %d %d", recv[0], recv[1]);
    CHECK_MPI(MPI_Op_free(&op));
    CHECK_MPI(MPI_Comm_free(&dup));
    CHECK_MPI(MPI_Type_free(&vec));

    CHECK_MPI(MPI_Finalize());
    return 0;
}
