/*
 * attr_reentrant: attribute callbacks that change the attributes of the
 * object they run for (MPI-3.1 6.7 lets callbacks call MPI and does not
 * forbid it).  Each value is deleted exactly once, and no value is lost.
 *
 * 1. (shmpi only: MPICH 4.0.2 runs no delete callback there) MPI_Type_set_attr
 *    over a value whose delete callback sets 8 other attributes on the same
 *    type: the new value is stored, the others too.
 * 2. MPI_Type_delete_attr of such an attribute: it is gone, the others
 *    stay, and an attribute set before it keeps its value.
 * 3. MPI_Type_dup whose copy callback sets 8 attributes on the old type:
 *    the new type has the copied attributes with their values.
 * 4. The same on a communicator (MPI_Comm_set_attr, MPI_Comm_delete_attr,
 *    MPI_Comm_dup).
 * 5. (shmpi only: MPICH 4.0.2 dies in the callback) MPI_Type_free and
 *    MPI_Comm_free, where the delete callback sets 8 other attributes: it
 *    runs once, and the attributes it set are deleted too.  A delete
 *    callback that sets or deletes its own attribute gets an error, and
 *    the call that ran it still succeeds.
 */
#include "check.h"

enum { kOthers = 8 };

static int k1, k2, others[kOthers];
static int k1_deletes, other_deletes, k1_copies;
static int set_own; /* what the k1 delete callback does to its own key: 0 nothing, 1 set, 2 delete */
static int own_rc;  /* what that returned */

static void *value_of(int i) { return (void *)(MPI_Aint)(100 + i); }

/* ---- datatype callbacks */

static int type_delete_sets_others(MPI_Datatype t, int keyval, void *value, void *extra)
{
    (void)value, (void)extra;
    ++k1_deletes;
    CHECKF(k1_deletes < 100, "the delete callback of k1 runs again and again");
    for (int i = 0; i < kOthers; ++i) CHECK_MPI(MPI_Type_set_attr(t, others[i], value_of(i)));
    if (set_own == 1) own_rc = MPI_Type_set_attr(t, keyval, value_of(50));
    if (set_own == 2) own_rc = MPI_Type_delete_attr(t, keyval);
    return MPI_SUCCESS;
}

static int type_copy_sets_others(MPI_Datatype t, int keyval, void *extra, void *in, void *out, int *flag)
{
    (void)keyval, (void)extra;
    ++k1_copies;
    for (int i = 0; i < kOthers; ++i) CHECK_MPI(MPI_Type_set_attr(t, others[i], value_of(i)));
    *(void **)out = in;
    *flag = 1;
    return MPI_SUCCESS;
}

static int type_count_delete(MPI_Datatype t, int keyval, void *value, void *extra)
{
    (void)t, (void)keyval, (void)value, (void)extra;
    ++other_deletes;
    return MPI_SUCCESS;
}

/* ---- communicator callbacks */

static int comm_delete_sets_others(MPI_Comm c, int keyval, void *value, void *extra)
{
    (void)value, (void)extra;
    ++k1_deletes;
    CHECKF(k1_deletes < 100, "the delete callback of k1 runs again and again");
    for (int i = 0; i < kOthers; ++i) CHECK_MPI(MPI_Comm_set_attr(c, others[i], value_of(i)));
    if (set_own == 1) own_rc = MPI_Comm_set_attr(c, keyval, value_of(50));
    if (set_own == 2) own_rc = MPI_Comm_delete_attr(c, keyval);
    return MPI_SUCCESS;
}

static int comm_copy_sets_others(MPI_Comm c, int keyval, void *extra, void *in, void *out, int *flag)
{
    (void)keyval, (void)extra;
    ++k1_copies;
    for (int i = 0; i < kOthers; ++i) CHECK_MPI(MPI_Comm_set_attr(c, others[i], value_of(i)));
    *(void **)out = in;
    *flag = 1;
    return MPI_SUCCESS;
}

static int comm_count_delete(MPI_Comm c, int keyval, void *value, void *extra)
{
    (void)c, (void)keyval, (void)value, (void)extra;
    ++other_deletes;
    return MPI_SUCCESS;
}

static void reset(void)
{
    k1_deletes = other_deletes = k1_copies = 0;
    set_own = 0;
    own_rc = MPI_SUCCESS;
}

static void expect_type_attr(MPI_Datatype t, int key, void *want, const char *what)
{
    void *v = NULL;
    int flag = 0;
    CHECK_MPI(MPI_Type_get_attr(t, key, &v, &flag));
    CHECKF(flag == (want != NULL), "%s: present %d", what, flag);
    CHECKF(v == want || want == NULL, "%s: value %p, expected %p", what, v, want);
}

static void expect_comm_attr(MPI_Comm c, int key, void *want, const char *what)
{
    void *v = NULL;
    int flag = 0;
    CHECK_MPI(MPI_Comm_get_attr(c, key, &v, &flag));
    CHECKF(flag == (want != NULL), "%s: present %d", what, flag);
    CHECKF(v == want || want == NULL, "%s: value %p, expected %p", what, v, want);
}

static void free_keys_type(void)
{
    CHECK_MPI(MPI_Type_free_keyval(&k1));
    CHECK_MPI(MPI_Type_free_keyval(&k2));
    for (int i = 0; i < kOthers; ++i) CHECK_MPI(MPI_Type_free_keyval(&others[i]));
}

static void make_keys_type(MPI_Type_copy_attr_function *copy1, MPI_Type_delete_attr_function *delete1)
{
    CHECK_MPI(MPI_Type_create_keyval(copy1, delete1, &k1, NULL));
    CHECK_MPI(MPI_Type_create_keyval(MPI_TYPE_DUP_FN, type_count_delete, &k2, NULL));
    for (int i = 0; i < kOthers; ++i)
        CHECK_MPI(MPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, type_count_delete, &others[i], NULL));
}

static void check_types(void)
{
    MPI_Datatype t, d;
    void *one = value_of(-99), *two = value_of(-98);

    /* 2. */
    reset();
    make_keys_type(MPI_TYPE_NULL_COPY_FN, type_delete_sets_others);
    CHECK_MPI(MPI_Type_contiguous(2, MPI_INT, &t));
    CHECK_MPI(MPI_Type_set_attr(t, k2, two));
    CHECK_MPI(MPI_Type_set_attr(t, k1, one));
    CHECK_MPI(MPI_Type_delete_attr(t, k1));
    CHECKF(k1_deletes == 1, "Type_delete_attr: %d delete callbacks", k1_deletes);
    CHECKF(other_deletes == 0, "Type_delete_attr: %d other deletes", other_deletes);
    expect_type_attr(t, k1, NULL, "2: k1 after Type_delete_attr");
    expect_type_attr(t, k2, two, "2: k2");
    for (int i = 0; i < kOthers; ++i) expect_type_attr(t, others[i], value_of(i), "2: an attribute the callback set");

#ifdef SHMPI
    /* 1 (shmpi only: MPICH 4.0.2 runs no delete callback when
     * MPI_Type_set_attr replaces a value, where MPI-3.1 6.7.4 says it runs). */
    void *new_one = value_of(-97);
    CHECK_MPI(MPI_Type_set_attr(t, k1, one));
    CHECK_MPI(MPI_Type_set_attr(t, k1, new_one));
    CHECKF(k1_deletes == 2, "Type_set_attr over a value: %d delete callbacks in all", k1_deletes);
    CHECKF(other_deletes == kOthers, "Type_set_attr over a value: %d other deletes (the callback set them over "
           "themselves)", other_deletes);
    expect_type_attr(t, k1, new_one, "1: k1 after Type_set_attr");
    expect_type_attr(t, k2, two, "1: k2");
    for (int i = 0; i < kOthers; ++i) expect_type_attr(t, others[i], value_of(i), "1: an attribute the callback set");
    CHECK_MPI(MPI_Type_delete_attr(t, k1));
#endif
    const int before = other_deletes;
    CHECK_MPI(MPI_Type_free(&t));
    CHECKF(other_deletes == before + kOthers + 1, "Type_free: %d other deletes, expected %d", other_deletes,
           before + kOthers + 1);
    free_keys_type();

    /* 3. */
    reset();
    make_keys_type(type_copy_sets_others, MPI_TYPE_NULL_DELETE_FN);
    CHECK_MPI(MPI_Type_contiguous(2, MPI_INT, &t));
    CHECK_MPI(MPI_Type_set_attr(t, k1, one));
    CHECK_MPI(MPI_Type_set_attr(t, k2, two));
    CHECK_MPI(MPI_Type_dup(t, &d));
    CHECKF(k1_copies == 1, "Type_dup: %d copy callbacks", k1_copies);
    expect_type_attr(d, k1, one, "3: k1 of the copy");
    expect_type_attr(d, k2, two, "3: k2 of the copy");
    for (int i = 0; i < kOthers; ++i) {
        expect_type_attr(t, others[i], value_of(i), "3: an attribute the copy callback set on the old type");
        expect_type_attr(d, others[i], NULL, "3: the copy (MPI_TYPE_NULL_COPY_FN)");
    }
    CHECK_MPI(MPI_Type_free(&d));
    CHECK_MPI(MPI_Type_free(&t));
    free_keys_type();
}

static void free_keys_comm(void)
{
    CHECK_MPI(MPI_Comm_free_keyval(&k1));
    CHECK_MPI(MPI_Comm_free_keyval(&k2));
    for (int i = 0; i < kOthers; ++i) CHECK_MPI(MPI_Comm_free_keyval(&others[i]));
}

static void make_keys_comm(MPI_Comm_copy_attr_function *copy1, MPI_Comm_delete_attr_function *delete1)
{
    CHECK_MPI(MPI_Comm_create_keyval(copy1, delete1, &k1, NULL));
    CHECK_MPI(MPI_Comm_create_keyval(MPI_COMM_DUP_FN, comm_count_delete, &k2, NULL));
    for (int i = 0; i < kOthers; ++i)
        CHECK_MPI(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, comm_count_delete, &others[i], NULL));
}

static void check_comms(void)
{
    MPI_Comm c, d;
    void *one = value_of(-99), *two = value_of(-98), *new_one = value_of(-97);

    /* 4: as 1 and 2. */
    reset();
    make_keys_comm(MPI_COMM_NULL_COPY_FN, comm_delete_sets_others);
    CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &c));
    CHECK_MPI(MPI_Comm_set_attr(c, k2, two));
    CHECK_MPI(MPI_Comm_set_attr(c, k1, one));
    CHECK_MPI(MPI_Comm_set_attr(c, k1, new_one));
    CHECKF(k1_deletes == 1, "Comm_set_attr over a value: %d delete callbacks", k1_deletes);
    expect_comm_attr(c, k1, new_one, "4: k1 after Comm_set_attr");
    expect_comm_attr(c, k2, two, "4: k2");
    for (int i = 0; i < kOthers; ++i) expect_comm_attr(c, others[i], value_of(i), "4: an attribute the callback set");
    CHECK_MPI(MPI_Comm_delete_attr(c, k1));
    CHECKF(k1_deletes == 2, "Comm_delete_attr: %d delete callbacks in all", k1_deletes);
    expect_comm_attr(c, k1, NULL, "4: k1 after Comm_delete_attr");
    expect_comm_attr(c, k2, two, "4: k2 after Comm_delete_attr");
    CHECK_MPI(MPI_Comm_free(&c));
    CHECKF(other_deletes == 2 * kOthers + 1, "Comm_free: %d other deletes", other_deletes);
    free_keys_comm();

    /* 4: as 3. */
    reset();
    make_keys_comm(comm_copy_sets_others, MPI_COMM_NULL_DELETE_FN);
    CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &c));
    CHECK_MPI(MPI_Comm_set_attr(c, k1, one));
    CHECK_MPI(MPI_Comm_set_attr(c, k2, two));
    CHECK_MPI(MPI_Comm_dup(c, &d));
    CHECKF(k1_copies == 1, "Comm_dup: %d copy callbacks", k1_copies);
    expect_comm_attr(d, k1, one, "4: k1 of the copy");
    expect_comm_attr(d, k2, two, "4: k2 of the copy");
    for (int i = 0; i < kOthers; ++i) expect_comm_attr(d, others[i], NULL, "4: the copy (MPI_COMM_NULL_COPY_FN)");
    CHECK_MPI(MPI_Comm_free(&d));
    CHECK_MPI(MPI_Comm_free(&c));
    free_keys_comm();
}

#ifdef SHMPI
static void check_frees(void)
{
    MPI_Datatype t;
    MPI_Comm c;

    /* 5: the free runs the callback once and deletes what it set. */
    for (int own = 0; own <= 2; ++own) {
        reset();
        set_own = own;
        make_keys_type(MPI_TYPE_NULL_COPY_FN, type_delete_sets_others);
        CHECK_MPI(MPI_Type_contiguous(2, MPI_INT, &t));
        CHECK_MPI(MPI_Type_set_attr(t, k1, value_of(1)));
        CHECK_MPI(MPI_Type_free(&t));
        CHECKF(k1_deletes == 1, "Type_free (own %d): %d delete callbacks of k1", own, k1_deletes);
        CHECKF(other_deletes == kOthers, "Type_free (own %d): %d other deletes", own, other_deletes);
        CHECKF((own == 0) == (own_rc == MPI_SUCCESS), "Type_free (own %d): the callback's own call returned %d",
               own, own_rc);
        if (own != 0)
            check_error_says(own_rc, MPI_ERR_OTHER, "a type's delete callback changing its own attribute",
                             "is running on this object");
        free_keys_type();

        reset();
        set_own = own;
        make_keys_comm(MPI_COMM_NULL_COPY_FN, comm_delete_sets_others);
        CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &c));
        CHECK_MPI(MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN));
        CHECK_MPI(MPI_Comm_set_attr(c, k1, value_of(1)));
        CHECK_MPI(MPI_Comm_free(&c));
        CHECKF(k1_deletes == 1, "Comm_free (own %d): %d delete callbacks of k1", own, k1_deletes);
        CHECKF(other_deletes == kOthers, "Comm_free (own %d): %d other deletes", own, other_deletes);
        CHECKF((own == 0) == (own_rc == MPI_SUCCESS), "Comm_free (own %d): the callback's own call returned %d",
               own, own_rc);
        if (own != 0)
            check_error_says(own_rc, MPI_ERR_OTHER, "a communicator's delete callback changing its own attribute",
                             "is running on this object");
        free_keys_comm();
    }
}
#endif

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    /* Datatype calls report on MPI_COMM_WORLD (MPI-3.1 8.3). */
    CHECK_MPI(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    check_types();
    check_comms();
#ifdef SHMPI
    check_frees();
#endif
    MPI_Finalize();
    return 0;
}
