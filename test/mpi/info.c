/*
 * info: info objects (MPI-3.1 chapter 9) and the calls that take them.
 *
 * 1. A new info has no keys; MPI_Info_set adds keys in order, and setting
 *    a key again replaces its value without moving it; get, get_valuelen,
 *    get_nkeys and get_nthkey agree; a value longer than valuelen comes
 *    back truncated and NUL-terminated; a missing key gives flag 0 and
 *    leaves the value buffer alone.
 * 2. MPI_Info_delete removes a key (the others keep their order);
 *    deleting a missing key is MPI_ERR_INFO_NOKEY.
 * 3. MPI_Info_dup copies: changes to either do not show in the other.
 * 4. Under MPI_ERRORS_RETURN: a key of MPI_MAX_INFO_KEY + 1 characters is
 *    MPI_ERR_INFO_KEY, a value of MPI_MAX_INFO_VAL + 1 is
 *    MPI_ERR_INFO_VALUE, get_nthkey past the last key is MPI_ERR_ARG; a
 *    key of MPI_MAX_INFO_KEY characters and a value of MPI_MAX_INFO_VAL
 *    are taken and kept whole (the limits are lengths, without the NUL:
 *    MPI-3.1 9, "valuelen should be one less than the amount of allocated
 *    space"), and MPI_MAX_INFO_KEY is at most 255.
 * 5. MPI_Info_free sets the handle to MPI_INFO_NULL.
 * 6. MPI_INFO_ENV can be read; its "command", if there, is not empty.
 * 7. MPI_Comm_dup_with_info, MPI_Comm_set_info, MPI_Comm_get_info,
 *    MPI_Comm_split_type and MPI_Alloc_mem take an info; the
 *    communicators they make work.
 */
#include <string.h>

#include "check.h"

static void expect_value(MPI_Info info, const char *key, const char *want)
{
    char value[MPI_MAX_INFO_VAL + 1];
    int flag = 0, len = -1;
    CHECK_MPI(MPI_Info_get_valuelen(info, key, &len, &flag));
    CHECKF(flag && len == (int)strlen(want), "valuelen of \"%s\": flag %d, length %d, want %d", key,
           flag, len, (int)strlen(want));
    flag = 0;
    CHECK_MPI(MPI_Info_get(info, key, MPI_MAX_INFO_VAL, value, &flag));
    CHECKF(flag && strcmp(value, want) == 0, "\"%s\" is \"%s\" (flag %d), want \"%s\"", key,
           flag ? value : "", flag, want);
}

static void expect_keys(MPI_Info info, int n, const char *const keys[])
{
    int nkeys = -1;
    CHECK_MPI(MPI_Info_get_nkeys(info, &nkeys));
    CHECKF(nkeys == n, "the info has %d keys, want %d", nkeys, n);
    for (int i = 0; i < n; ++i) {
        char key[MPI_MAX_INFO_KEY + 1];
        CHECK_MPI(MPI_Info_get_nthkey(info, i, key));
        CHECKF(strcmp(key, keys[i]) == 0, "key %d is \"%s\", want \"%s\"", i, key, keys[i]);
    }
}

static void expect_class(int rc, int cls, const char *what)
{
    CHECKF(rc != MPI_SUCCESS && check_error_class(rc) == cls, "%s: rc %d class %d, want class %d",
           what, rc, rc == MPI_SUCCESS ? 0 : check_error_class(rc), cls);
}

int main(int argc, char **argv)
{
    CHECK_MPI(MPI_Init(&argc, &argv));
    CHECK_MPI(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    int rank = world_rank();
    int size = world_size();

    /* 1. */
    MPI_Info info = MPI_INFO_NULL;
    CHECK_MPI(MPI_Info_create(&info));
    CHECK(info != MPI_INFO_NULL);
    expect_keys(info, 0, NULL);
    CHECK_MPI(MPI_Info_set(info, "alpha", "1"));
    CHECK_MPI(MPI_Info_set(info, "beta", "hello world"));
    CHECK_MPI(MPI_Info_set(info, "gamma", ""));
    const char *const abc[] = {"alpha", "beta", "gamma"};
    expect_keys(info, 3, abc);
    expect_value(info, "beta", "hello world");
    expect_value(info, "gamma", "");
    CHECK_MPI(MPI_Info_set(info, "alpha", "one, replaced"));
    expect_keys(info, 3, abc);
    expect_value(info, "alpha", "one, replaced");

    char small[8];
    memset(small, 'x', sizeof small);
    int flag = 0;
    /* MPI-3.1 9: a longer value is truncated.  MPICH 4.0 truncates it too,
     * but also returns an error of class MPI_ERR_INFO_VALUE: allowed here. */
    int rc = MPI_Info_get(info, "beta", 5, small, &flag);
    CHECKF(rc == MPI_SUCCESS || check_error_class(rc) == MPI_ERR_INFO_VALUE,
           "MPI_Info_get of a value longer than valuelen: error class %d", check_error_class(rc));
    CHECKF(flag && memcmp(small, "hello", 6) == 0 && small[6] == 'x',
           "a value got with valuelen 5 is not \"hello\" and a NUL");
    memset(small, 'x', sizeof small);
    flag = 1;
    CHECK_MPI(MPI_Info_get(info, "delta", 7, small, &flag));
    CHECKF(flag == 0 && small[0] == 'x', "a missing key: flag %d, value buffer changed", flag);
    int len = -7;
    flag = 1;
    CHECK_MPI(MPI_Info_get_valuelen(info, "delta", &len, &flag));
    CHECK(flag == 0);

    /* 2. */
    CHECK_MPI(MPI_Info_delete(info, "beta"));
    const char *const ag[] = {"alpha", "gamma"};
    expect_keys(info, 2, ag);
    expect_class(MPI_Info_delete(info, "beta"), MPI_ERR_INFO_NOKEY, "deleting a missing key");

    /* 3. */
    MPI_Info copy = MPI_INFO_NULL;
    CHECK_MPI(MPI_Info_dup(info, &copy));
    CHECK(copy != info);
    expect_keys(copy, 2, ag);
    expect_value(copy, "alpha", "one, replaced");
    CHECK_MPI(MPI_Info_set(copy, "alpha", "changed in the copy"));
    CHECK_MPI(MPI_Info_set(copy, "epsilon", "only in the copy"));
    CHECK_MPI(MPI_Info_delete(info, "gamma"));
    expect_value(info, "alpha", "one, replaced");
    const char *const a[] = {"alpha"};
    expect_keys(info, 1, a);
    const char *const age[] = {"alpha", "gamma", "epsilon"};
    expect_keys(copy, 3, age);

    /* 4. */
    char long_key[MPI_MAX_INFO_KEY + 2];
    memset(long_key, 'k', sizeof long_key);
    long_key[MPI_MAX_INFO_KEY + 1] = '\0';
    expect_class(MPI_Info_set(info, long_key, "v"), MPI_ERR_INFO_KEY, "a key that is too long");
    static char long_value[MPI_MAX_INFO_VAL + 2];
    memset(long_value, 'v', sizeof long_value);
    long_value[MPI_MAX_INFO_VAL + 1] = '\0';
    expect_class(MPI_Info_set(info, "k", long_value), MPI_ERR_INFO_VALUE, "a value that is too long");
    char key[MPI_MAX_INFO_KEY + 1];
    expect_class(MPI_Info_get_nthkey(info, 1, key), MPI_ERR_ARG, "get_nthkey past the last key");
    expect_keys(info, 1, a); /* nothing of the failed calls stayed */
    /* The longest value (MPI_MAX_INFO_VAL characters) comes back whole;
     * so does a key of MPI_MAX_INFO_KEY - 1 through get_nthkey. */
    CHECKF(MPI_MAX_INFO_KEY >= 32 && MPI_MAX_INFO_KEY <= 255, "MPI_MAX_INFO_KEY is %d", MPI_MAX_INFO_KEY);
    long_key[MPI_MAX_INFO_KEY - 1] = '\0';
    long_value[MPI_MAX_INFO_VAL] = '\0';
    CHECK_MPI(MPI_Info_set(info, long_key, long_value));
    expect_value(info, long_key, long_value);
    CHECK_MPI(MPI_Info_get_nthkey(info, 1, key));
    CHECKF(strcmp(key, long_key) == 0, "the longest key came back with %d characters", (int)strlen(key));
    CHECK_MPI(MPI_Info_delete(info, long_key));
    /* A key of MPI_MAX_INFO_KEY characters is a key.  (MPICH's get_nthkey
     * gives back one character less of it, so only shmpi checks that.) */
    long_key[MPI_MAX_INFO_KEY - 1] = 'k';
    long_key[MPI_MAX_INFO_KEY] = '\0';
    CHECK_MPI(MPI_Info_set(info, long_key, "v"));
    expect_value(info, long_key, "v");
#ifdef SHMPI
    CHECK_MPI(MPI_Info_get_nthkey(info, 1, key));
    CHECKF(strcmp(key, long_key) == 0, "a key of MPI_MAX_INFO_KEY came back with %d characters",
           (int)strlen(key));
#endif
    CHECK_MPI(MPI_Info_delete(info, long_key));

    /* 5. */
    CHECK_MPI(MPI_Info_free(&copy));
    CHECK(copy == MPI_INFO_NULL);

    /* 6. */
    int env_keys = -1;
    CHECK_MPI(MPI_Info_get_nkeys(MPI_INFO_ENV, &env_keys));
    CHECK(env_keys >= 0);
    char command[MPI_MAX_INFO_VAL + 1];
    flag = 0;
    CHECK_MPI(MPI_Info_get(MPI_INFO_ENV, "command", MPI_MAX_INFO_VAL, command, &flag));
    CHECKF(!flag || command[0] != '\0', "MPI_INFO_ENV has an empty \"command\"");

    /* 7. */
    MPI_Comm dup = MPI_COMM_NULL;
    CHECK_MPI(MPI_Comm_dup_with_info(MPI_COMM_WORLD, info, &dup));
    CHECK_MPI(MPI_Comm_set_info(dup, info));
    MPI_Info used = MPI_INFO_NULL;
    CHECK_MPI(MPI_Comm_get_info(dup, &used));
    CHECK(used != MPI_INFO_NULL);
    int used_keys = -1;
    CHECK_MPI(MPI_Info_get_nkeys(used, &used_keys));
    CHECK(used_keys >= 0);
    CHECK_MPI(MPI_Info_free(&used));
    int sum = -1;
    CHECK_MPI(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, dup));
    CHECKF(sum == size * (size - 1) / 2, "Allreduce on a communicator made with an info: %d", sum);
    MPI_Comm node = MPI_COMM_NULL;
    CHECK_MPI(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, info, &node));
    int node_size = -1;
    CHECK_MPI(MPI_Comm_size(node, &node_size));
    CHECK(node_size == size); /* one machine */
    void *mem = NULL;
    CHECK_MPI(MPI_Alloc_mem(64, info, &mem));
    CHECK(mem != NULL);
    memset(mem, 1, 64);
    CHECK_MPI(MPI_Free_mem(mem));
    CHECK_MPI(MPI_Comm_free(&node));
    CHECK_MPI(MPI_Comm_free(&dup));
    CHECK_MPI(MPI_Info_free(&info));
    CHECK(info == MPI_INFO_NULL);

    CHECK_MPI(MPI_Finalize());
    return 0;
}
