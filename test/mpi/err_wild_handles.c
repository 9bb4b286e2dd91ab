/*
 * err_wild_handles: a handle that is no object's at all (garbage, a pointer
 * truncated to 32 bits, a live handle moved by a byte or past the end of the
 * memory handles live in) gets an error of the handle's class under
 * MPI_ERRORS_RETURN, naming the bad value, never a crash.  Erroneous by the
 * standard, and an MPI whose handles are integers reads such values in its
 * own way, so shmpi only; shmpi promises it because its handle objects come
 * from one reserved range (src/handle_storage.hpp).
 *
 * For each kind (communicator, datatype, group, operation, request, info,
 * error handler, message) and each wild value, one call that takes it:
 *   communicator -> MPI_ERR_COMM, datatype -> MPI_ERR_TYPE,
 *   group -> MPI_ERR_GROUP, operation -> MPI_ERR_OP,
 *   request and message -> MPI_ERR_REQUEST, info -> MPI_ERR_INFO,
 *   error handler -> MPI_ERR_ARG (also MPI_Errhandler_free),
 * and the message holds the value in hex (MPI_ERRHANDLER_NULL by name).  Then the live objects the wild
 * values were made from still work.
 *
 * Memory for MPI_Free_mem likewise: a pointer that MPI_Alloc_mem did not
 * return (wild values made from a block it did, a stack address, a block
 * freed already) is MPI_ERR_BASE naming the pointer (MPI-3.1 8.2), not a
 * free() of it; NULL is accepted and does nothing.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "check.h"

enum { kWild = 5 };

/* Wild values made from `live`, the address of a live object of the kind. */
static void wild_values(void *live, uintptr_t out[kWild])
{
    static int on_the_heap_side;
    uintptr_t v = (uintptr_t)live;
    out[0] = 0x12345678u;                  /* nothing mapped there */
    out[1] = (uint32_t)v;                  /* stored in an int and back */
    out[2] = v + 1;                        /* moved by a byte */
    out[3] = v + ((uintptr_t)1 << 28);     /* past what handles use so far */
    out[4] = (uintptr_t)&on_the_heap_side; /* readable, but no handle */
}

static int checked;

static void quiet_handler(MPI_Comm *comm, int *code, ...)
{
    (void)comm;
    (void)code;
}

static void expect_wild(int rc, int cls, const char *what, uintptr_t value)
{
    char hex[32];
    snprintf(hex, sizeof hex, "%#lx", (unsigned long)value);
    char label[96];
    snprintf(label, sizeof label, "%s(%s)", what, hex);
    check_error_says(rc, cls, label, hex);
    ++checked;
}

int main(int argc, char **argv)
{
    CHECK_MPI(MPI_Init(&argc, &argv));
    CHECK_MPI(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    int me = world_rank();
    int size = world_size();
    uintptr_t w[kWild];
    int buf[4] = {1, 2, 3, 4};
    int n = -1;

    MPI_Comm dup;
    CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    wild_values((void *)dup, w);
    for (int i = 0; i < kWild; ++i) {
        expect_wild(MPI_Comm_size((MPI_Comm)w[i], &n), MPI_ERR_COMM, "MPI_Comm_size", w[i]);
        expect_wild(MPI_Send(buf, 1, MPI_INT, 0, 0, (MPI_Comm)w[i]), MPI_ERR_COMM, "MPI_Send", w[i]);
    }

    MPI_Datatype vec;
    CHECK_MPI(MPI_Type_vector(2, 1, 2, MPI_INT, &vec));
    CHECK_MPI(MPI_Type_commit(&vec));
    wild_values((void *)vec, w);
    for (int i = 0; i < kWild; ++i) {
        expect_wild(MPI_Type_size((MPI_Datatype)w[i], &n), MPI_ERR_TYPE, "MPI_Type_size", w[i]);
        expect_wild(MPI_Send(buf, 1, (MPI_Datatype)w[i], me, 0, MPI_COMM_WORLD), MPI_ERR_TYPE,
                    "MPI_Send", w[i]);
    }

    MPI_Group group;
    CHECK_MPI(MPI_Comm_group(MPI_COMM_WORLD, &group));
    wild_values((void *)group, w);
    for (int i = 0; i < kWild; ++i)
        expect_wild(MPI_Group_size((MPI_Group)w[i], &n), MPI_ERR_GROUP, "MPI_Group_size", w[i]);

    MPI_Op op;
    CHECK_MPI(MPI_Op_create(check_sum_ints, 1, &op));
    wild_values((void *)op, w);
    int in = 1, out = 0;
    for (int i = 0; i < kWild; ++i)
        expect_wild(MPI_Reduce_local(&in, &out, 1, MPI_INT, (MPI_Op)w[i]), MPI_ERR_OP,
                    "MPI_Reduce_local", w[i]);

    MPI_Request req;
    int got = -1;
    CHECK_MPI(MPI_Irecv(&got, 1, MPI_INT, me, 7, MPI_COMM_WORLD, &req));
    wild_values((void *)req, w);
    for (int i = 0; i < kWild; ++i) {
        MPI_Request r = (MPI_Request)w[i];
        int flag = 0;
        expect_wild(MPI_Wait(&r, MPI_STATUS_IGNORE), MPI_ERR_REQUEST, "MPI_Wait", w[i]);
        r = (MPI_Request)w[i];
        expect_wild(MPI_Test(&r, &flag, MPI_STATUS_IGNORE), MPI_ERR_REQUEST, "MPI_Test", w[i]);
    }

    MPI_Info info;
    CHECK_MPI(MPI_Info_create(&info));
    CHECK_MPI(MPI_Info_set(info, "wild", "handles"));
    wild_values((void *)info, w);
    for (int i = 0; i < kWild; ++i)
        expect_wild(MPI_Info_get_nkeys((MPI_Info)w[i], &n), MPI_ERR_INFO, "MPI_Info_get_nkeys", w[i]);

    MPI_Errhandler eh;
    CHECK_MPI(MPI_Comm_create_errhandler(quiet_handler, &eh));
    wild_values((void *)eh, w);
    for (int i = 0; i < kWild; ++i) {
        expect_wild(MPI_Comm_set_errhandler(dup, (MPI_Errhandler)w[i]), MPI_ERR_ARG,
                    "MPI_Comm_set_errhandler", w[i]);
        MPI_Errhandler wild = (MPI_Errhandler)w[i];
        expect_wild(MPI_Errhandler_free(&wild), MPI_ERR_ARG, "MPI_Errhandler_free", w[i]);
    }
    /* The null handle is named as such. */
    check_error_says(MPI_Comm_set_errhandler(dup, MPI_ERRHANDLER_NULL), MPI_ERR_ARG,
                     "MPI_Comm_set_errhandler(MPI_ERRHANDLER_NULL)", "MPI_ERRHANDLER_NULL");
    MPI_Errhandler none = MPI_ERRHANDLER_NULL;
    check_error_says(MPI_Errhandler_free(&none), MPI_ERR_ARG, "MPI_Errhandler_free(MPI_ERRHANDLER_NULL)",
                     "MPI_ERRHANDLER_NULL");
    check_error_says(MPI_Errhandler_free(NULL), MPI_ERR_ARG, "MPI_Errhandler_free(NULL)", "errhandler is NULL");

    /* A message handle: probe a message to oneself. */
    int seven = 77;
    CHECK_MPI(MPI_Send(&seven, 1, MPI_INT, me, 8, MPI_COMM_WORLD));
    MPI_Message msg;
    MPI_Status st;
    CHECK_MPI(MPI_Mprobe(me, 8, MPI_COMM_WORLD, &msg, &st));
    wild_values((void *)msg, w);
    for (int i = 0; i < kWild; ++i) {
        MPI_Message m = (MPI_Message)w[i];
        expect_wild(MPI_Mrecv(buf, 1, MPI_INT, &m, MPI_STATUS_IGNORE), MPI_ERR_REQUEST, "MPI_Mrecv", w[i]);
    }

    void *block = NULL;
    CHECK_MPI(MPI_Alloc_mem(64, MPI_INFO_NULL, &block));
    wild_values(block, w);
    for (int i = 0; i < kWild; ++i)
        expect_wild(MPI_Free_mem((void *)w[i]), MPI_ERR_BASE, "MPI_Free_mem", w[i]);
    CHECKF(checked == 13 * kWild, "%d wild calls checked", checked);
    expect_wild(MPI_Free_mem(buf), MPI_ERR_BASE, "MPI_Free_mem", (uintptr_t)buf);
    memset(block, 1, 64); /* still ours */
    CHECK_MPI(MPI_Free_mem(block));
    expect_wild(MPI_Free_mem(block), MPI_ERR_BASE, "MPI_Free_mem", (uintptr_t)block);
    CHECK_MPI(MPI_Free_mem(NULL));

    /* The live objects are untouched. */
    int eight = -1;
    CHECK_MPI(MPI_Mrecv(&eight, 1, MPI_INT, &msg, MPI_STATUS_IGNORE));
    CHECKF(eight == 77 && msg == MPI_MESSAGE_NULL, "the probed message: %d", eight);
    CHECK_MPI(MPI_Send(&seven, 1, MPI_INT, me, 7, MPI_COMM_WORLD));
    CHECK_MPI(MPI_Wait(&req, MPI_STATUS_IGNORE));
    CHECKF(got == 77, "the pending receive got %d", got);
    CHECK_MPI(MPI_Info_get_nkeys(info, &n));
    CHECK(n == 1);
    CHECK_MPI(MPI_Comm_set_errhandler(dup, eh));
    int total = -1;
    CHECK_MPI(MPI_Allreduce(&me, &total, 1, MPI_INT, op, dup));
    CHECKF(total == size * (size - 1) / 2, "Allreduce with the op on the duplicate: %d", total);
    int recv[2] = {0, 0};
    CHECK_MPI(MPI_Sendrecv(buf, 1, vec, me, 5, recv, 2, MPI_INT, me, 5, dup, MPI_STATUS_IGNORE));
    CHECKF(recv[0] == 1 && recv[1] == 3, "the vector type sent %d %d", recv[0], recv[1]);
    CHECK_MPI(MPI_Group_size(group, &n));
    CHECK(n == size);

    CHECK_MPI(MPI_Errhandler_free(&eh));
    CHECK_MPI(MPI_Info_free(&info));
    CHECK_MPI(MPI_Op_free(&op));
    CHECK_MPI(MPI_Group_free(&group));
    CHECK_MPI(MPI_Type_free(&vec));
    CHECK_MPI(MPI_Comm_free(&dup));
    CHECK_MPI(MPI_Finalize());
    return 0;
}
