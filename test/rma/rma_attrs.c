/*
 * Window attributes, groups, names and info (MPI-3.1 11.2.6, 11.2.7, 6.7.3,
 * 6.8): the predefined attributes MPI_WIN_BASE, MPI_WIN_SIZE,
 * MPI_WIN_DISP_UNIT, MPI_WIN_CREATE_FLAVOR and MPI_WIN_MODEL of windows of
 * all four flavours (create, allocate, allocate_shared, create_dynamic,
 * whose base is MPI_BOTTOM and size 0); MPI_Win_get_group against the
 * communicator's group; MPI_Win_set_name / MPI_Win_get_name (an unnamed
 * window's name is the empty string); user keyvals with a delete callback
 * that counts its calls (at MPI_Win_delete_attr, when MPI_Win_set_attr
 * replaces a value, at MPI_Win_free, also after MPI_Win_free_keyval); and
 * MPI_Win_set_info / MPI_Win_get_info.
 */
#include "check.h"

static void check_attrs(MPI_Win win, void *want_base, MPI_Aint want_size, int want_unit,
                        int want_flavor, MPI_Comm comm, const char *what)
{
    int flag = 0;
    void *b = (void *)&flag; /* anything but the expected value */
    CHECK_MPI(MPI_Win_get_attr(win, MPI_WIN_BASE, &b, &flag));
    CHECKF(flag, "%s: MPI_WIN_BASE not set", what);
    CHECKF(b == want_base, "%s: MPI_WIN_BASE is %p, expected %p", what, b, want_base);

    MPI_Aint *size = NULL;
    flag = 0;
    CHECK_MPI(MPI_Win_get_attr(win, MPI_WIN_SIZE, &size, &flag));
    CHECKF(flag && size != NULL, "%s: MPI_WIN_SIZE not set", what);
    CHECKF(*size == want_size, "%s: MPI_WIN_SIZE is %ld, expected %ld", what, (long)*size,
           (long)want_size);

    int *unit = NULL;
    flag = 0;
    CHECK_MPI(MPI_Win_get_attr(win, MPI_WIN_DISP_UNIT, &unit, &flag));
    CHECKF(flag && unit != NULL, "%s: MPI_WIN_DISP_UNIT not set", what);
    CHECKF(*unit == want_unit, "%s: MPI_WIN_DISP_UNIT is %d, expected %d", what, *unit, want_unit);

    int *flavor = NULL;
    flag = 0;
    CHECK_MPI(MPI_Win_get_attr(win, MPI_WIN_CREATE_FLAVOR, &flavor, &flag));
    CHECKF(flag && flavor != NULL, "%s: MPI_WIN_CREATE_FLAVOR not set", what);
    CHECKF(*flavor == want_flavor, "%s: MPI_WIN_CREATE_FLAVOR is %d, expected %d", what, *flavor,
           want_flavor);

    int *model = NULL;
    flag = 0;
    CHECK_MPI(MPI_Win_get_attr(win, MPI_WIN_MODEL, &model, &flag));
    CHECKF(flag && model != NULL, "%s: MPI_WIN_MODEL not set", what);
    CHECKF(*model == MPI_WIN_UNIFIED || *model == MPI_WIN_SEPARATE,
           "%s: MPI_WIN_MODEL is %d, neither MPI_WIN_UNIFIED nor MPI_WIN_SEPARATE", what, *model);

    /* the window's group is the communicator's */
    MPI_Group wg, cg;
    CHECK_MPI(MPI_Win_get_group(win, &wg));
    CHECK_MPI(MPI_Comm_group(comm, &cg));
    int cmp = -1;
    CHECK_MPI(MPI_Group_compare(wg, cg, &cmp));
    CHECKF(cmp == MPI_IDENT, "%s: the window's group compares %d to the communicator's", what, cmp);
    CHECK_MPI(MPI_Group_free(&wg));
    CHECK_MPI(MPI_Group_free(&cg));

    /* names: empty by default, then what was set (on each rank its own) */
    char name[MPI_MAX_OBJECT_NAME];
    int len = -1;
    memset(name, 'x', sizeof name);
    CHECK_MPI(MPI_Win_get_name(win, name, &len));
    CHECKF(len == 0 && name[0] == '\0', "%s: an unnamed window is called \"%.*s\" (length %d)",
           what, len > 0 && len < MPI_MAX_OBJECT_NAME ? len : 0, name, len);
    char want[64];
    snprintf(want, sizeof want, "%s window of rank %d", what, world_rank());
    CHECK_MPI(MPI_Win_set_name(win, want));
    CHECK_MPI(MPI_Win_get_name(win, name, &len));
    CHECKF(strcmp(name, want) == 0 && len == (int)strlen(want),
           "%s: name \"%s\" (%d), expected \"%s\"", what, name, len, want);
    CHECK_MPI(MPI_Win_set_name(win, "renamed"));
    CHECK_MPI(MPI_Win_get_name(win, name, &len));
    CHECK(strcmp(name, "renamed") == 0 && len == 7);

    /* info: get_info gives a valid info object, before and after set_info */
    MPI_Info info = MPI_INFO_NULL;
    int nkeys = -1;
    CHECK_MPI(MPI_Win_get_info(win, &info));
    CHECK(info != MPI_INFO_NULL);
    CHECK_MPI(MPI_Info_get_nkeys(info, &nkeys));
    CHECK(nkeys >= 0);
    CHECK_MPI(MPI_Info_free(&info));
    MPI_Info hint;
    CHECK_MPI(MPI_Info_create(&hint));
    CHECK_MPI(MPI_Info_set(hint, "no_locks", "false"));
    CHECK_MPI(MPI_Win_set_info(win, hint));
    CHECK_MPI(MPI_Info_free(&hint));
    CHECK_MPI(MPI_Win_get_info(win, &info));
    CHECK(info != MPI_INFO_NULL);
    CHECK_MPI(MPI_Info_get_nkeys(info, &nkeys));
    CHECK(nkeys >= 0);
    CHECK_MPI(MPI_Info_free(&info));
    CHECK(info == MPI_INFO_NULL);
}

/* ---- user keyvals ---- */

static int extra_token;
static int v1 = 11, v2 = 22, v3 = 33; /* the attribute values */
static int delete_calls;
static int deleted_v1_key2; /* deletions of v1 under key2 */
static int deleted_v3;      /* deletions of v3 */
static int deleted_key2_id = MPI_KEYVAL_INVALID;
static MPI_Win deleted_win;
static void *deleted_val;
static int deleted_key;

static int count_delete(MPI_Win win, int keyval, void *val, void *extra)
{
    CHECK(extra == &extra_token);
    ++delete_calls;
    deleted_win = win;
    deleted_val = val;
    deleted_key = keyval;
    if (val == &v3)
        ++deleted_v3;
    if (val == &v1 && keyval == deleted_key2_id)
        ++deleted_v1_key2;
    return MPI_SUCCESS;
}

static void keyvals(void)
{
    int *buf = check_malloc(4 * sizeof(int));
    MPI_Win win;
    CHECK_MPI(
        MPI_Win_create(buf, 4 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    int key = MPI_KEYVAL_INVALID, key2 = MPI_KEYVAL_INVALID;
    CHECK_MPI(MPI_Win_create_keyval(MPI_WIN_NULL_COPY_FN, count_delete, &key, &extra_token));
    CHECK_MPI(MPI_Win_create_keyval(MPI_WIN_DUP_FN, count_delete, &key2, &extra_token));
    CHECK(key != MPI_KEYVAL_INVALID && key2 != MPI_KEYVAL_INVALID && key != key2);
    deleted_key2_id = key2;
    int flag = 1;
    void *got = NULL;

    /* not yet set */
    CHECK_MPI(MPI_Win_get_attr(win, key, &got, &flag));
    CHECK(flag == 0);

    CHECK_MPI(MPI_Win_set_attr(win, key, &v1));
    CHECK_MPI(MPI_Win_get_attr(win, key, &got, &flag));
    CHECK(flag == 1 && got == &v1);
    CHECK(delete_calls == 0);

    /* replacing a value deletes the old one */
    CHECK_MPI(MPI_Win_set_attr(win, key, &v2));
    CHECKF(delete_calls == 1, "set_attr over a value: %d delete calls, expected 1", delete_calls);
    CHECK(deleted_win == win && deleted_val == &v1 && deleted_key == key);
    CHECK_MPI(MPI_Win_get_attr(win, key, &got, &flag));
    CHECK(flag == 1 && got == &v2);

    /* delete_attr */
    CHECK_MPI(MPI_Win_delete_attr(win, key));
    CHECKF(delete_calls == 2, "delete_attr: %d delete calls, expected 2", delete_calls);
    CHECK(deleted_win == win && deleted_val == &v2 && deleted_key == key);
    flag = 1;
    CHECK_MPI(MPI_Win_get_attr(win, key, &got, &flag));
    CHECK(flag == 0);

    /* two attributes, then the keyval of one is freed: MPI_Win_free still
     * deletes both */
    CHECK_MPI(MPI_Win_set_attr(win, key, &v3));
    CHECK_MPI(MPI_Win_set_attr(win, key2, &v1));
    CHECK_MPI(MPI_Win_free_keyval(&key));
    CHECK(key == MPI_KEYVAL_INVALID);
    CHECK(delete_calls == 2);
    /* the predefined attributes are not affected */
    int *flavor = NULL;
    CHECK_MPI(MPI_Win_get_attr(win, MPI_WIN_CREATE_FLAVOR, &flavor, &flag));
    CHECK(flag && *flavor == MPI_WIN_FLAVOR_CREATE);
    MPI_Win old = win;
    CHECK_MPI(MPI_Win_free(&win));
    CHECK(win == MPI_WIN_NULL);
    CHECKF(delete_calls == 4, "MPI_Win_free: %d delete calls in all, expected 4", delete_calls);
    CHECK(deleted_win == old);
    CHECKF(deleted_v3 == 1 && deleted_v1_key2 == 1,
           "MPI_Win_free deleted v3 %d times and key2's v1 %d times, expected once each",
           deleted_v3, deleted_v1_key2);
    CHECK_MPI(MPI_Win_free_keyval(&key2));
    CHECK(key2 == MPI_KEYVAL_INVALID);
    free(buf);
}

int main(int argc, char **argv)
{
    CHECK_MPI(MPI_Init(&argc, &argv));
    const int rank = world_rank();

    /* create: size and disp_unit differ per rank */
    const MPI_Aint csize = 8 * (rank + 1);
    const int cunit = rank % 2 ? 1 : 8;
    void *cbuf = check_malloc((size_t)csize);
    MPI_Win win;
    CHECK_MPI(MPI_Win_create(cbuf, csize, cunit, MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    check_attrs(win, cbuf, csize, cunit, MPI_WIN_FLAVOR_CREATE, MPI_COMM_WORLD, "create");
    CHECK_MPI(MPI_Win_free(&win));
    free(cbuf);

    /* allocate */
    const MPI_Aint asize = 16 * (rank + 2);
    void *abuf = NULL;
    CHECK_MPI(MPI_Win_allocate(asize, 4, MPI_INFO_NULL, MPI_COMM_WORLD, &abuf, &win));
    check_attrs(win, abuf, asize, 4, MPI_WIN_FLAVOR_ALLOCATE, MPI_COMM_WORLD, "allocate");
    CHECK_MPI(MPI_Win_free(&win));

    /* allocate_shared, on the ranks that share memory */
    MPI_Comm shm;
    CHECK_MPI(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &shm));
    int srank = -1;
    CHECK_MPI(MPI_Comm_rank(shm, &srank));
    const MPI_Aint ssize = 24 * (srank + 1);
    void *sbuf = NULL;
    CHECK_MPI(MPI_Win_allocate_shared(ssize, 2, MPI_INFO_NULL, shm, &sbuf, &win));
    check_attrs(win, sbuf, ssize, 2, MPI_WIN_FLAVOR_SHARED, shm, "shared");
    CHECK_MPI(MPI_Win_free(&win));
    CHECK_MPI(MPI_Comm_free(&shm));

    /* create_dynamic: base MPI_BOTTOM, size 0 (also with memory attached) */
    CHECK_MPI(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    check_attrs(win, MPI_BOTTOM, 0, 1, MPI_WIN_FLAVOR_DYNAMIC, MPI_COMM_WORLD, "dynamic");
    int *att = check_malloc(64);
    CHECK_MPI(MPI_Win_attach(win, att, 64));
    void *b = NULL;
    MPI_Aint *sz = NULL;
    int flag = 0;
    CHECK_MPI(MPI_Win_get_attr(win, MPI_WIN_BASE, &b, &flag));
    CHECK(flag && b == MPI_BOTTOM);
    CHECK_MPI(MPI_Win_get_attr(win, MPI_WIN_SIZE, &sz, &flag));
    CHECK(flag && *sz == 0);
    CHECK_MPI(MPI_Win_detach(win, att));
    CHECK_MPI(MPI_Win_free(&win));
    free(att);

    keyvals();

    CHECK_MPI(MPI_Finalize());
    return 0;
}
