/*
 * comm_copy_codes: an attribute copy callback's error code is what
 * MPI_Comm_dup and MPI_Type_dup return.
 *
 * MPI-3.1 6.7.2 lets a copy callback fail the duplication by returning
 * something other than MPI_SUCCESS; which code the call then returns is
 * the implementation's choice.  A program that added its own error class
 * and codes (MPI_Add_error_class, MPI_Add_error_code) expects to get them
 * back, with their strings (MPICH does so too).  Under MPI_ERRORS_RETURN:
 *   1. a callback that returns the program's class: MPI_Comm_dup returns
 *      that class, and MPI_Error_string gives the class's string;
 *   2. one that returns the program's code: that code, of that class;
 *   3. one that returns a predefined class (MPI_ERR_ARG): a code of it;
 *   4. MPI_Type_dup with a datatype keyval whose callback returns the
 *      program's code: that code;
 * and the communicator still works afterwards.
 */
#include "check.h"

static int my_class, my_code;

/* Returns the code `*extra` points to. */
static int comm_copy_fails(MPI_Comm old, int keyval, void *extra, void *in, void *out, int *flag)
{
    (void)old, (void)keyval, (void)in, (void)out;
    *flag = 1;
    return *(const int *)extra;
}

static int type_copy_fails(MPI_Datatype old, int keyval, void *extra, void *in, void *out, int *flag)
{
    (void)old, (void)keyval, (void)in, (void)out;
    *flag = 1;
    return *(const int *)extra;
}

static void expect_code(int rc, int code, int cls, const char *text, const char *what)
{
    int got_class = -1;
    CHECK_MPI(MPI_Error_class(rc, &got_class));
    CHECKF(got_class == cls, "%s: error class %d, want %d", what, got_class, cls);
    if (code >= 0) CHECKF(rc == code, "%s: returned %d, want the callback's code %d", what, rc, code);
    if (text != NULL) {
        char s[MPI_MAX_ERROR_STRING];
        int len = 0;
        CHECK_MPI(MPI_Error_string(rc, s, &len));
        CHECKF(strcmp(s, text) == 0, "%s: error string \"%s\", want \"%s\"", what, s, text);
    }
}

static void dup_fails_with(int returned, int code, int cls, const char *text, const char *what)
{
    int key = MPI_KEYVAL_INVALID;
    CHECK_MPI(MPI_Comm_create_keyval(comm_copy_fails, MPI_COMM_NULL_DELETE_FN, &key, &returned));
    MPI_Comm parent, copy = MPI_COMM_NULL;
    CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &parent));  /* MPI_ERRORS_RETURN, from the world */
    CHECK_MPI(MPI_Comm_set_attr(parent, key, NULL));
    const int rc = MPI_Comm_dup(parent, &copy);
    expect_code(rc, code, cls, text, what);
    int one = 1, sum = 0;
    CHECK_MPI(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, parent));
    int size = 0;
    CHECK_MPI(MPI_Comm_size(parent, &size));
    CHECKF(sum == size, "%s: the communicator does not work afterwards", what);
    CHECK_MPI(MPI_Comm_free(&parent));
    CHECK_MPI(MPI_Comm_free_keyval(&key));
}

int main(int argc, char **argv)
{
    CHECK_MPI(MPI_Init(&argc, &argv));
    CHECK_MPI(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    CHECK_MPI(MPI_Add_error_class(&my_class));
    CHECK_MPI(MPI_Add_error_code(my_class, &my_code));
    CHECK_MPI(MPI_Add_error_string(my_class, "the program's class"));
    CHECK_MPI(MPI_Add_error_string(my_code, "the program's code"));

    dup_fails_with(my_class, my_class, my_class, "the program's class", "copy callback returning the added class");
    dup_fails_with(my_code, my_code, my_class, "the program's code", "copy callback returning the added code");
    dup_fails_with(MPI_ERR_ARG, -1, MPI_ERR_ARG, NULL, "copy callback returning MPI_ERR_ARG");

    int tkey = MPI_KEYVAL_INVALID, returned = my_code;
    CHECK_MPI(MPI_Type_create_keyval(type_copy_fails, MPI_TYPE_NULL_DELETE_FN, &tkey, &returned));
    MPI_Datatype t, copy = MPI_DATATYPE_NULL;
    CHECK_MPI(MPI_Type_contiguous(2, MPI_INT, &t));
    CHECK_MPI(MPI_Type_set_attr(t, tkey, NULL));
    expect_code(MPI_Type_dup(t, &copy), my_code, my_class, "the program's code", "MPI_Type_dup");
    CHECK_MPI(MPI_Type_free(&t));
    CHECK_MPI(MPI_Type_free_keyval(&tkey));
    CHECK_MPI(MPI_Finalize());
    return 0;
}
