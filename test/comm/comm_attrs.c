/*
 * Communicator attributes: the predefined ones on MPI_COMM_WORLD; keyvals
 * with MPI_COMM_NULL_COPY_FN, MPI_COMM_DUP_FN and user callbacks; what
 * MPI_Comm_dup copies; delete callbacks on overwrite, on delete, on free,
 * and after the keyval itself was freed; a failing delete callback; the
 * predefined callbacks called by the program's own.
 */
#include "check.h"

static int deletes;          /* delete callbacks run */
static int copies;           /* user copy callbacks run */
static MPI_Comm expect_old;  /* the communicator a copy callback must see */
static int extra_token = 42;

/* Copies *(int *)value + 1 into a new int. */
static int copy_plus_one(MPI_Comm oldcomm, int keyval, void *extra, void *in, void *out, int *flag)
{
    (void)keyval;
    int cmp = -1;
    MPI_Comm_compare(oldcomm, expect_old, &cmp);
    CHECKF(cmp == MPI_IDENT, "copy callback saw another communicator");
    CHECK(extra == &extra_token);
    int *v = check_malloc(sizeof(int));
    *v = *(int *)in + 1;
    *(void **)out = v;
    *flag = 1;
    ++copies;
    return MPI_SUCCESS;
}

/* Says not to copy. */
static int copy_never(MPI_Comm oldcomm, int keyval, void *extra, void *in, void *out, int *flag)
{
    (void)oldcomm, (void)keyval, (void)extra, (void)in, (void)out;
    *flag = 0;
    ++copies;
    return MPI_SUCCESS;
}

/* Frees heap values (copy_plus_one's), counts the rest. */
static int delete_free(MPI_Comm comm, int keyval, void *value, void *extra)
{
    (void)comm, (void)keyval, (void)extra;
    free(value);
    ++deletes;
    return MPI_SUCCESS;
}

static int delete_count(MPI_Comm comm, int keyval, void *value, void *extra)
{
    (void)comm, (void)keyval, (void)value, (void)extra;
    ++deletes;
    return MPI_SUCCESS;
}

static int fail_deletes; /* delete_fails fails while set */

static int delete_fails(MPI_Comm comm, int keyval, void *value, void *extra)
{
    (void)comm, (void)keyval, (void)value, (void)extra;
    return fail_deletes ? MPI_ERR_OTHER : MPI_SUCCESS;
}

/* Leaves the decision to MPI_COMM_DUP_FN (*extra != 0) or to
 * MPI_COMM_NULL_COPY_FN: they are functions (MPI-3.1 6.7.2, Annex A.1.3),
 * and a program may call them from its own callbacks.  (MPICH defines the
 * NULL_ ones as null pointers, so only shmpi calls those.) */
static int copy_by_predefined(MPI_Comm oldcomm, int keyval, void *extra, void *in, void *out, int *flag)
{
    ++copies;
    if (*(int *)extra)
        return MPI_COMM_DUP_FN(oldcomm, keyval, extra, in, out, flag);
#ifdef SHMPI
    return MPI_COMM_NULL_COPY_FN(oldcomm, keyval, extra, in, out, flag);
#else
    *flag = 0;
    return MPI_SUCCESS;
#endif
}

static int delete_by_predefined(MPI_Comm comm, int keyval, void *value, void *extra)
{
    ++deletes;
#ifdef SHMPI
    return MPI_COMM_NULL_DELETE_FN(comm, keyval, value, extra);
#else
    (void)comm, (void)keyval, (void)value, (void)extra;
    return MPI_SUCCESS;
#endif
}

static void *get(MPI_Comm comm, int key, int *flag)
{
    void *v = NULL;
    CHECK_MPI(MPI_Comm_get_attr(comm, key, &v, flag));
    return v;
}

int main(int argc, char **argv)
{
    CHECK_MPI(MPI_Init(&argc, &argv));
    const int size = world_size();
    int flag = -1;

    /* 1. Predefined attributes on MPI_COMM_WORLD. */
    int *p = get(MPI_COMM_WORLD, MPI_TAG_UB, &flag);
    CHECKF(flag && *p >= 32767, "MPI_TAG_UB: flag %d value %d", flag, flag ? *p : 0);
    p = get(MPI_COMM_WORLD, MPI_HOST, &flag);
    CHECKF(flag && (*p == MPI_PROC_NULL || (*p >= 0 && *p < size)), "MPI_HOST: flag %d", flag);
    p = get(MPI_COMM_WORLD, MPI_IO, &flag);
    CHECKF(flag && (*p == MPI_PROC_NULL || *p == MPI_ANY_SOURCE || (*p >= 0 && *p < size)), "MPI_IO: flag %d",
           flag);
    p = get(MPI_COMM_WORLD, MPI_WTIME_IS_GLOBAL, &flag);
    if (flag)
        CHECKF(*p == 0 || *p == 1, "MPI_WTIME_IS_GLOBAL is %d", *p);
#ifdef SHMPI
    CHECK(flag && *p == 1); /* one clock per machine */
#endif

    /* 2. Keyvals of every kind, set on a dup of the world. */
    int k_null, k_dup, k_plus, k_never;
    CHECK_MPI(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &k_null, NULL));
    CHECK_MPI(MPI_Comm_create_keyval(MPI_COMM_DUP_FN, delete_count, &k_dup, NULL));
    CHECK_MPI(MPI_Comm_create_keyval(copy_plus_one, delete_free, &k_plus, &extra_token));
    CHECK_MPI(MPI_Comm_create_keyval(copy_never, delete_count, &k_never, NULL));
    CHECK(k_null != k_dup && k_dup != k_plus && k_plus != k_never);

    MPI_Comm a, b;
    CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &a));
    static int v_null = 1, v_dup = 2, v_never = 3;
    int *v_plus = check_malloc(sizeof(int));
    *v_plus = 10;
    get(a, k_dup, &flag);
    CHECK(!flag);
    CHECK_MPI(MPI_Comm_set_attr(a, k_null, &v_null));
    CHECK_MPI(MPI_Comm_set_attr(a, k_dup, &v_dup));
    CHECK_MPI(MPI_Comm_set_attr(a, k_plus, v_plus));
    CHECK_MPI(MPI_Comm_set_attr(a, k_never, &v_never));
    CHECK(get(a, k_null, &flag) == &v_null && flag);
    CHECK(get(a, k_dup, &flag) == &v_dup && flag);
    CHECK(get(a, k_plus, &flag) == v_plus && flag);
    get(MPI_COMM_WORLD, k_plus, &flag);
    CHECKF(!flag, "an attribute set on a dup shows on the world");

    /* 3. Dup copies through the callbacks. */
    expect_old = a;
    copies = 0;
    CHECK_MPI(MPI_Comm_dup(a, &b));
    CHECKF(copies == 2, "%d user copy callbacks ran, expected 2", copies);
    get(b, k_null, &flag);
    CHECKF(!flag, "MPI_COMM_NULL_COPY_FN copied");
    get(b, k_never, &flag);
    CHECKF(!flag, "a copy callback that said no copied");
    CHECK(get(b, k_dup, &flag) == &v_dup && flag);
    int *copied = get(b, k_plus, &flag);
    CHECKF(flag && copied != v_plus && *copied == 11, "copy_plus_one gave %d", flag ? *copied : -1);
    /* and copies of copies */
    MPI_Comm c;
    expect_old = b;
    CHECK_MPI(MPI_Comm_dup(b, &c));
    CHECK(*(int *)get(c, k_plus, &flag) == 12 && flag);

    /* 4. Overwrite and delete run the delete callback on the old value. */
    deletes = 0;
    int *v2 = check_malloc(sizeof(int));
    *v2 = 20;
    CHECK_MPI(MPI_Comm_set_attr(c, k_plus, v2));
    CHECKF(deletes == 1, "overwrite ran %d delete callbacks", deletes);
    CHECK(get(c, k_plus, &flag) == v2 && flag);
    CHECK_MPI(MPI_Comm_delete_attr(c, k_plus));
    CHECKF(deletes == 2, "delete_attr ran %d delete callbacks in all", deletes);
    get(c, k_plus, &flag);
    CHECK(!flag);

    /* 5. Free runs the delete callbacks of what is left (k_dup on c). */
    deletes = 0;
    CHECK_MPI(MPI_Comm_free(&c));
    CHECKF(deletes == 1, "free ran %d delete callbacks, expected 1", deletes);

    /* 6. A freed keyval: its attributes stay until deleted, and their delete
     *    callbacks still run.  Its id (a copy the program kept) still reads
     *    and deletes them (MPI-3.1 6.7.2: the references "need to be
     *    explicitly freed by the program, either via calls to
     *    MPI_COMM_DELETE_ATTR ... or by calls to MPI_COMM_FREE"). */
    const int k_plus_id = k_plus;
    CHECK_MPI(MPI_Comm_free_keyval(&k_plus));
    CHECK(k_plus == MPI_KEYVAL_INVALID);
    CHECKF(get(b, k_plus_id, &flag) == copied && flag, "a freed keyval's attribute no longer reads");
#ifdef SHMPI
    /* (Setting a new value under it is an error: shmpi says so.) */
    CHECK_MPI(MPI_Comm_set_errhandler(a, MPI_ERRORS_RETURN));
    static int v_late = 5;
    check_error_says(MPI_Comm_set_attr(a, k_plus_id, &v_late), MPI_ERR_KEYVAL, "MPI_Comm_set_attr", "freed");
#endif
    deletes = 0;
    CHECK_MPI(MPI_Comm_free(&b)); /* k_dup and k_plus */
    CHECKF(deletes == 2, "free ran %d delete callbacks, expected 2", deletes);
    /* a's value goes by MPI_Comm_delete_attr (delete_free frees v_plus). */
    CHECK(get(a, k_plus_id, &flag) == v_plus && flag);
    CHECK_MPI(MPI_Comm_delete_attr(a, k_plus_id));
    CHECKF(deletes == 3, "delete_attr with a freed keyval ran %d delete callbacks in all", deletes);
#ifdef SHMPI
    /* No attribute refers to it any more: the id is gone. */
    check_error_says(MPI_Comm_get_attr(a, k_plus_id, &copied, &flag), MPI_ERR_KEYVAL, "MPI_Comm_get_attr",
                     "not a keyval");
    CHECK_MPI(MPI_Comm_set_errhandler(a, MPI_ERRORS_ARE_FATAL));
#endif

    /* 7. Attributes on the predefined communicators. */
    static int on_world = 7, on_self = 8;
    CHECK_MPI(MPI_Comm_set_attr(MPI_COMM_WORLD, k_dup, &on_world));
    CHECK_MPI(MPI_Comm_set_attr(MPI_COMM_SELF, k_dup, &on_self));
    CHECK(get(MPI_COMM_WORLD, k_dup, &flag) == &on_world && flag);
    CHECK(get(MPI_COMM_SELF, k_dup, &flag) == &on_self && flag);
    deletes = 0;
    CHECK_MPI(MPI_Comm_delete_attr(MPI_COMM_WORLD, k_dup));
    CHECK_MPI(MPI_Comm_delete_attr(MPI_COMM_SELF, k_dup));
    CHECK(deletes == 2);

    /* 8. A failing delete callback makes the call fail. */
    int k_fail;
    CHECK_MPI(MPI_Comm_create_keyval(MPI_COMM_DUP_FN, delete_fails, &k_fail, NULL));
    CHECK_MPI(MPI_Comm_set_errhandler(a, MPI_ERRORS_RETURN));
    CHECK_MPI(MPI_Comm_set_attr(a, k_fail, &v_null));
    fail_deletes = 1;
    int rc = MPI_Comm_delete_attr(a, k_fail);
    CHECKF(rc != MPI_SUCCESS, "a failing delete callback did not fail MPI_Comm_delete_attr");
#ifdef SHMPI
    CHECK(check_error_class(rc) == MPI_ERR_OTHER);
    {
        char msg[MPI_MAX_ERROR_STRING];
        int len = 0;
        MPI_Error_string(rc, msg, &len);
        CHECKF(strstr(msg, "MPI_Comm_delete_attr") != NULL && strstr(msg, "delete callback") != NULL,
               "message: %s", msg);
    }
#endif
    fail_deletes = 0; /* whatever is left goes with a */
    CHECK_MPI(MPI_Comm_free_keyval(&k_fail));

    CHECK_MPI(MPI_Comm_delete_attr(a, k_null));
    CHECK_MPI(MPI_Comm_delete_attr(a, k_dup));
    CHECK_MPI(MPI_Comm_delete_attr(a, k_never));
    CHECK_MPI(MPI_Comm_free_keyval(&k_null));
    CHECK_MPI(MPI_Comm_free_keyval(&k_dup));
    CHECK_MPI(MPI_Comm_free_keyval(&k_never));

    /* 9. The predefined callbacks, called by the program's callbacks and
     *    directly. */
    {
        static int yes = 1, no = 0, v9 = 9;
        int k_yes, k_no;
        CHECK_MPI(MPI_Comm_create_keyval(copy_by_predefined, delete_by_predefined, &k_yes, &yes));
        CHECK_MPI(MPI_Comm_create_keyval(copy_by_predefined, delete_by_predefined, &k_no, &no));
        CHECK_MPI(MPI_Comm_set_attr(a, k_yes, &v9));
        CHECK_MPI(MPI_Comm_set_attr(a, k_no, &v9));
        copies = 0;
        deletes = 0;
        MPI_Comm d;
        CHECK_MPI(MPI_Comm_dup(a, &d));
        CHECKF(copies == 2, "%d copy callbacks ran, expected 2", copies);
        CHECKF(get(d, k_yes, &flag) == &v9 && flag, "MPI_COMM_DUP_FN called by a callback did not copy");
        get(d, k_no, &flag);
        CHECKF(!flag, "MPI_COMM_NULL_COPY_FN called by a callback copied");
        CHECK_MPI(MPI_Comm_free(&d));
        CHECKF(deletes == 1, "freeing the dup ran %d delete callbacks, expected 1", deletes);

        void *out = NULL;
        flag = -1;
        CHECK(MPI_COMM_DUP_FN(a, k_yes, NULL, &v9, &out, &flag) == MPI_SUCCESS);
        CHECK(out == &v9 && flag == 1);
#ifdef SHMPI
        out = NULL;
        flag = -1;
        CHECK(MPI_COMM_NULL_COPY_FN(a, k_yes, NULL, &v9, &out, &flag) == MPI_SUCCESS);
        CHECK(flag == 0);
        CHECK(MPI_COMM_NULL_DELETE_FN(a, k_yes, &v9, NULL) == MPI_SUCCESS);
#endif

        CHECK_MPI(MPI_Comm_delete_attr(a, k_yes));
        CHECK_MPI(MPI_Comm_delete_attr(a, k_no));
        CHECK(deletes == 3);
        CHECK_MPI(MPI_Comm_free_keyval(&k_yes));
        CHECK_MPI(MPI_Comm_free_keyval(&k_no));
    }
    CHECK_MPI(MPI_Comm_free(&a));
    CHECK_MPI(MPI_Finalize());
    return 0;
}
