/*
 * The MPI-1 spellings of attribute caching: MPI_Keyval_create/free,
 * MPI_Attr_put/get/delete, with MPI_DUP_FN, MPI_NULL_COPY_FN and
 * MPI_NULL_DELETE_FN; MPI_Attr_get of MPI_TAG_UB.  And of error handlers:
 * MPI_Errhandler_create/set/get, with a handler that sees the error.
 */
#include "check.h"

/* These calls are deprecated (and Open MPI says so); using them is the point. */
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

static int deletes;

static int delete_count(MPI_Comm comm, int keyval, void *value, void *extra)
{
    (void)comm, (void)keyval, (void)value;
    CHECK(*(int *)extra == 99);
    ++deletes;
    return MPI_SUCCESS;
}

static int handler_calls;
static int handler_code;

static void count_error(MPI_Comm *comm, int *code, ...)
{
    (void)comm;
    ++handler_calls;
    handler_code = *code;
}

static void mpi1_errhandlers(void)
{
    MPI_Comm c;
    CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &c));
    MPI_Errhandler h = MPI_ERRHANDLER_NULL;
    CHECK_MPI(MPI_Errhandler_create(count_error, &h));
    CHECK_MPI(MPI_Errhandler_set(c, h));
    MPI_Errhandler got = MPI_ERRHANDLER_NULL;
    CHECK_MPI(MPI_Errhandler_get(c, &got));
    CHECK(got == h);
    int size = 0;
    CHECK_MPI(MPI_Comm_size(c, &size));
    int x = 0;
    const int rc = MPI_Send(&x, 1, MPI_INT, size, 0, c);
    CHECK(handler_calls == 1 && rc == handler_code && check_error_class(rc) == MPI_ERR_RANK);
    CHECK_MPI(MPI_Errhandler_free(&got));
    CHECK_MPI(MPI_Errhandler_free(&h));
    CHECK_MPI(MPI_Comm_free(&c));
}

int main(int argc, char **argv)
{
    CHECK_MPI(MPI_Init(&argc, &argv));
    int flag = -1;
    int *ub = NULL;
    CHECK_MPI(MPI_Attr_get(MPI_COMM_WORLD, MPI_TAG_UB, &ub, &flag));
    CHECK(flag && *ub >= 32767);

    static int extra = 99;
    int k_dup, k_null;
    CHECK_MPI(MPI_Keyval_create(MPI_DUP_FN, delete_count, &k_dup, &extra));
    CHECK_MPI(MPI_Keyval_create(MPI_NULL_COPY_FN, MPI_NULL_DELETE_FN, &k_null, NULL));

    MPI_Comm a, b;
    CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &a));
    static int v1 = 1, v2 = 2;
    CHECK_MPI(MPI_Attr_put(a, k_dup, &v1));
    CHECK_MPI(MPI_Attr_put(a, k_null, &v2));
    CHECK_MPI(MPI_Comm_dup(a, &b));
    void *v = NULL;
    CHECK_MPI(MPI_Attr_get(b, k_dup, &v, &flag));
    CHECK(flag && v == &v1);
    CHECK_MPI(MPI_Attr_get(b, k_null, &v, &flag));
    CHECK(!flag);
    /* The MPI-2 calls see the same attributes. */
    CHECK_MPI(MPI_Comm_get_attr(a, k_null, &v, &flag));
    CHECK(flag && v == &v2);

    deletes = 0;
    CHECK_MPI(MPI_Attr_delete(b, k_dup));
    CHECK(deletes == 1);
    CHECK_MPI(MPI_Comm_free(&b));
    CHECK(deletes == 1);
    CHECK_MPI(MPI_Comm_free(&a));
    CHECK(deletes == 2);
    CHECK_MPI(MPI_Keyval_free(&k_dup));
    CHECK_MPI(MPI_Keyval_free(&k_null));
    CHECK(k_dup == MPI_KEYVAL_INVALID);
    /* The MPI-1 predefined callbacks are functions too. */
    {
        void *out = NULL;
        flag = -1;
        CHECK(MPI_DUP_FN(MPI_COMM_WORLD, 0, NULL, &v1, &out, &flag) == MPI_SUCCESS && out == &v1 && flag == 1);
#ifdef SHMPI /* MPICH defines the NULL_ ones as null pointers */
        flag = -1;
        CHECK(MPI_NULL_COPY_FN(MPI_COMM_WORLD, 0, NULL, &v1, &out, &flag) == MPI_SUCCESS && flag == 0);
        CHECK(MPI_NULL_DELETE_FN(MPI_COMM_WORLD, 0, &v1, NULL) == MPI_SUCCESS);
#endif
    }
    mpi1_errhandlers();
    CHECK_MPI(MPI_Finalize());
    return 0;
}
