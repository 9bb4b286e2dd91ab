/*
 * Datatype attributes: MPI_Type_create_keyval with MPI_TYPE_NULL_COPY_FN,
 * MPI_TYPE_DUP_FN and a user copy callback; MPI_Type_dup copies through
 * them; MPI_Type_free and MPI_Type_delete_attr run the delete callbacks;
 * attributes on a predefined type.
 */
#include "check.h"

static int deletes;
static MPI_Datatype expect_old;

static int copy_plus_one(MPI_Datatype oldtype, int keyval, void *extra, void *in, void *out, int *flag)
{
    (void)keyval, (void)extra;
    CHECKF(oldtype == expect_old, "the copy callback saw another datatype");
    int *v = check_malloc(sizeof(int));
    *v = *(int *)in + 1;
    *(void **)out = v;
    *flag = 1;
    return MPI_SUCCESS;
}

static int delete_free(MPI_Datatype type, int keyval, void *value, void *extra)
{
    (void)type, (void)keyval, (void)extra;
    free(value);
    ++deletes;
    return MPI_SUCCESS;
}

static int delete_count(MPI_Datatype type, int keyval, void *value, void *extra)
{
    (void)type, (void)keyval, (void)value, (void)extra;
    ++deletes;
    return MPI_SUCCESS;
}

static int copy_by_dup_fn(MPI_Datatype oldtype, int keyval, void *extra, void *in, void *out, int *flag)
{
    return MPI_TYPE_DUP_FN(oldtype, keyval, extra, in, out, flag);
}

static void *get(MPI_Datatype t, int key, int *flag)
{
    void *v = NULL;
    CHECK_MPI(MPI_Type_get_attr(t, key, &v, flag));
    return v;
}

int main(int argc, char **argv)
{
    CHECK_MPI(MPI_Init(&argc, &argv));
    int flag = -1;
    int k_null, k_dup, k_plus;
    CHECK_MPI(MPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, delete_count, &k_null, NULL));
    CHECK_MPI(MPI_Type_create_keyval(MPI_TYPE_DUP_FN, MPI_TYPE_NULL_DELETE_FN, &k_dup, NULL));
    CHECK_MPI(MPI_Type_create_keyval(copy_plus_one, delete_free, &k_plus, NULL));

    MPI_Datatype t, d;
    CHECK_MPI(MPI_Type_contiguous(3, MPI_INT, &t));
    CHECK_MPI(MPI_Type_commit(&t));
    static int v_null = 1, v_dup = 2;
    int *v_plus = check_malloc(sizeof(int));
    *v_plus = 5;
    get(t, k_null, &flag);
    CHECK(!flag);
    CHECK_MPI(MPI_Type_set_attr(t, k_null, &v_null));
    CHECK_MPI(MPI_Type_set_attr(t, k_dup, &v_dup));
    CHECK_MPI(MPI_Type_set_attr(t, k_plus, v_plus));
    CHECK(get(t, k_plus, &flag) == v_plus && flag);

    /* Dup copies through the callbacks. */
    expect_old = t;
    CHECK_MPI(MPI_Type_dup(t, &d));
    get(d, k_null, &flag);
    CHECKF(!flag, "MPI_TYPE_NULL_COPY_FN copied");
    CHECK(get(d, k_dup, &flag) == &v_dup && flag);
    int *copied = get(d, k_plus, &flag);
    CHECKF(flag && copied != v_plus && *copied == 6, "copy gave %d", flag ? *copied : -1);

    /* The duplicate is a working type. */
    int buf[3] = {1, 2, 3}, out[3] = {0, 0, 0};
    CHECK_MPI(MPI_Sendrecv(buf, 1, d, 0, 1, out, 1, d, 0, 1, MPI_COMM_SELF, MPI_STATUS_IGNORE));
    CHECK(out[0] == 1 && out[1] == 2 && out[2] == 3);

    /* Delete, then free: the callbacks run for what is set. */
    deletes = 0;
    CHECK_MPI(MPI_Type_delete_attr(d, k_plus));
    CHECK(deletes == 1);
    get(d, k_plus, &flag);
    CHECK(!flag);
    deletes = 0;
    CHECK_MPI(MPI_Type_free(&d)); /* k_dup only: no delete callback */
    CHECK(deletes == 0);
    CHECK_MPI(MPI_Type_free(&t)); /* k_null (counted) and k_plus (freed, counted) */
    CHECKF(deletes == 2, "MPI_Type_free ran %d delete callbacks, expected 2", deletes);

    /* A predefined type carries attributes too. */
    static int on_int = 9;
    CHECK_MPI(MPI_Type_set_attr(MPI_INT, k_null, &on_int));
    CHECK(get(MPI_INT, k_null, &flag) == &on_int && flag);
    get(MPI_DOUBLE, k_null, &flag);
    CHECK(!flag);
    deletes = 0;
    CHECK_MPI(MPI_Type_delete_attr(MPI_INT, k_null));
    CHECK(deletes == 1);

    /* A freed keyval's id still reads and deletes the attributes that use
     * it (MPI-3.1 6.7.2). */
    static int on_double = 4;
    CHECK_MPI(MPI_Type_set_attr(MPI_DOUBLE, k_null, &on_double));
    const int k_null_id = k_null;
    CHECK_MPI(MPI_Type_free_keyval(&k_null));
    CHECK(k_null == MPI_KEYVAL_INVALID);
    CHECKF(get(MPI_DOUBLE, k_null_id, &flag) == &on_double && flag,
           "a freed keyval's attribute no longer reads");
    deletes = 0;
    CHECK_MPI(MPI_Type_delete_attr(MPI_DOUBLE, k_null_id));
    CHECKF(deletes == 1, "delete_attr with a freed keyval ran %d delete callbacks", deletes);

    /* The predefined callbacks are functions (MPI-3.1 6.7.4): a program may
     * call them, here from its own copy callback. */
    int k_by;
    CHECK_MPI(MPI_Type_create_keyval(copy_by_dup_fn, MPI_TYPE_NULL_DELETE_FN, &k_by, NULL));
    static int v_by = 17;
    CHECK_MPI(MPI_Type_set_attr(MPI_DOUBLE, k_by, &v_by));
    CHECK_MPI(MPI_Type_dup(MPI_DOUBLE, &d));
    CHECKF(get(d, k_by, &flag) == &v_by && flag, "MPI_TYPE_DUP_FN called by a callback did not copy");
    CHECK_MPI(MPI_Type_free(&d));
    CHECK_MPI(MPI_Type_delete_attr(MPI_DOUBLE, k_by));
    CHECK_MPI(MPI_Type_free_keyval(&k_by));
#ifdef SHMPI /* MPICH defines the NULL_ ones as null pointers */
    {
        void *out = NULL;
        flag = -1;
        CHECK(MPI_TYPE_NULL_COPY_FN(MPI_INT, 0, NULL, &v_by, &out, &flag) == MPI_SUCCESS && flag == 0);
        CHECK(MPI_TYPE_NULL_DELETE_FN(MPI_INT, 0, &v_by, NULL) == MPI_SUCCESS);
    }
#endif

    CHECK_MPI(MPI_Type_free_keyval(&k_dup));
    CHECK_MPI(MPI_Type_free_keyval(&k_plus));
    CHECK(k_plus == MPI_KEYVAL_INVALID);
    CHECK_MPI(MPI_Finalize());
    return 0;
}
