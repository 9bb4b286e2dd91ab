/*
 * The tool information interface (MPI-3.1 chapter 14), as any MPI offers
 * it, with no assumption on which variables there are:
 *  - before MPI_T_init_thread, a call is MPI_T_ERR_NOT_INITIALIZED;
 *    MPI_T_init_thread works before MPI_Init, nests (every call needs its
 *    MPI_T_finalize; one more finalize is MPI_T_ERR_NOT_INITIALIZED), and
 *    gives a thread level no higher than asked for;
 *  - every control variable: MPI_T_cvar_get_info with a NULL name gives the
 *    length the name needs, a buffer of that length gets the whole name,
 *    a shorter one a truncated, terminated one; MPI_T_cvar_get_index finds
 *    the name's index again; a handle reads a string variable whose value
 *    ends within `count` bytes; writing a MPI_T_SCOPE_CONSTANT variable is
 *    MPI_T_ERR_CVAR_SET_NEVER; MPI_T_cvar_handle_free sets the handle to
 *    MPI_T_CVAR_HANDLE_NULL;
 *  - an index one past the last is MPI_T_ERR_INVALID_INDEX, a name no
 *    variable or category has MPI_T_ERR_INVALID_NAME;
 *  - every performance variable bound to no object: its name and class find
 *    its index again, a handle of a session reads it, a read-only one
 *    refuses writes, resets and read-resets (MPI_T_ERR_PVAR_NO_WRITE), a
 *    writable one takes them, and a continuous one refuses start and stop
 *    (MPI_T_ERR_PVAR_NO_STARTSTOP); MPI_T_PVAR_ALL_HANDLES starts, stops
 *    and resets a session; freeing a session frees its handles and sets it
 *    to MPI_T_PVAR_SESSION_NULL;
 *  - every enumeration a variable names: its items (MPI_T_enum_get_info,
 *    _get_item), and one past the last is MPI_T_ERR_INVALID_INDEX;
 *  - every category: its name finds its index, its control and
 *    performance variables and subcategories are valid indices,
 *    MPI_T_category_changed does not change by itself;
 *  - MPI_Error_class gives an MPI_T error class back unchanged.
 * Where a control variable SHMPI_SPIN_US exists (shmpi), its value is the
 * environment's (the meson test sets it to 20).  Where the performance
 * variables shmpi_unexpected_recvq_length and shmpi_posted_recvq_length
 * exist (shmpi), rank 0 sees 3 messages waiting once it has probed the
 * last of 3 that rank 1 sent, 1 posted receive once it has posted one that
 * nothing matches, and 0 of each once all are received.  And while rank 1
 * streams 40 windows of 64 MPI_Isend calls to windows of 64 MPI_Irecv
 * calls on rank 0, rank 0 never holds more than 4 windows of messages
 * waiting after a MPI_Waitall: MPI_Irecv does not drain the rings ahead of
 * the receives posted (when it did, 1,792 to 2,240 of the 2,560 messages
 * waited at once), and every message arrives in order.
 */
#include "check.h"

#include <stdlib.h>

static void t_check(int rc, const char *what, int want)
{
    CHECKF(rc == want, "%s returned %d, expected %d", what, rc, want);
}

/* An enumeration a variable names (MPI-3.1 14.3.5): none, or one with at
 * least one item, each with a name that fits the length reported. */
static void check_enum(MPI_T_enum en, const char *var)
{
    if (en == MPI_T_ENUM_NULL)
        return;
    int items = -1, len = 0;
    t_check(MPI_T_enum_get_info(en, &items, NULL, &len), "MPI_T_enum_get_info (name length)", MPI_SUCCESS);
    CHECKF(items >= 1, "the enumeration of %s has %d items", var, items);
    for (int k = 0; k < items; ++k) {
        char item[256];
        int value = 0, item_len = sizeof item;
        t_check(MPI_T_enum_get_item(en, k, &value, item, &item_len), "MPI_T_enum_get_item", MPI_SUCCESS);
        CHECKF(item_len >= 1 && item_len <= (int)sizeof item && item[item_len - 1] == '\0',
               "item %d of the enumeration of %s: length %d", k, var, item_len);
    }
    int value = 0, item_len = 0;
    t_check(MPI_T_enum_get_item(en, items, &value, NULL, &item_len), "MPI_T_enum_get_item (one past the last)",
            MPI_T_ERR_INVALID_INDEX);
}

static void cvars(void)
{
    int num = -1;
    t_check(MPI_T_cvar_get_num(&num), "MPI_T_cvar_get_num", MPI_SUCCESS);
    CHECK(num >= 0);
    for (int i = 0; i < num; ++i) {
        int need = 0;
        t_check(MPI_T_cvar_get_info(i, NULL, &need, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
                "MPI_T_cvar_get_info (name length)", MPI_SUCCESS);
        CHECKF(need >= 2, "control variable %d: its name needs %d characters", i, need);
        char *name = malloc((size_t)need);
        CHECK(name != NULL);
        int len = need, verbosity = -1, bind = -1, scope = -1;
        MPI_Datatype type = MPI_DATATYPE_NULL;
        MPI_T_enum en;
        t_check(MPI_T_cvar_get_info(i, name, &len, &verbosity, &type, &en, NULL, NULL, &bind, &scope),
                "MPI_T_cvar_get_info", MPI_SUCCESS);
        CHECKF(len == need && (int)strlen(name) == need - 1, "control variable %d: name \"%s\", length %d of %d",
               i, name, len, need);
        char cut[3];
        int cut_len = 3;
        t_check(MPI_T_cvar_get_info(i, cut, &cut_len, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
                "MPI_T_cvar_get_info (short buffer)", MPI_SUCCESS);
        CHECKF(cut_len == 3 && cut[2] == '\0' && strncmp(cut, name, 2) == 0,
               "control variable %s in 3 characters: \"%.3s\", length %d", name, cut, cut_len);
        int index = -1;
        t_check(MPI_T_cvar_get_index(name, &index), "MPI_T_cvar_get_index", MPI_SUCCESS);
        CHECKF(index == i, "MPI_T_cvar_get_index(\"%s\") gave %d, not %d", name, index, i);
        check_enum(en, name);

        if (bind == MPI_T_BIND_NO_OBJECT) {
            MPI_T_cvar_handle h = MPI_T_CVAR_HANDLE_NULL;
            int count = -1;
            t_check(MPI_T_cvar_handle_alloc(i, NULL, &h, &count), "MPI_T_cvar_handle_alloc", MPI_SUCCESS);
            CHECK(h != MPI_T_CVAR_HANDLE_NULL && count >= 1);
            if (type == MPI_CHAR) {
                char *value = malloc((size_t)count + 1);
                CHECK(value != NULL);
                memset(value, 'x', (size_t)count + 1);
                t_check(MPI_T_cvar_read(h, value), "MPI_T_cvar_read", MPI_SUCCESS);
                CHECKF(memchr(value, '\0', (size_t)count) != NULL, "control variable %s: no NUL within %d bytes",
                       name, count);
                if (scope == MPI_T_SCOPE_CONSTANT)
                    t_check(MPI_T_cvar_write(h, value), "MPI_T_cvar_write (constant)", MPI_T_ERR_CVAR_SET_NEVER);
                if (strcmp(name, "SHMPI_SPIN_US") == 0 && getenv("SHMPI_SPIN_US") != NULL)
                    CHECKF(strcmp(value, getenv("SHMPI_SPIN_US")) == 0, "SHMPI_SPIN_US reads \"%s\", the "
                           "environment holds \"%s\"", value, getenv("SHMPI_SPIN_US"));
                free(value);
            }
            t_check(MPI_T_cvar_handle_free(&h), "MPI_T_cvar_handle_free", MPI_SUCCESS);
            CHECK(h == MPI_T_CVAR_HANDLE_NULL);
        }
        free(name);
    }
    int len = 8;
    char name[8];
    t_check(MPI_T_cvar_get_info(num, name, &len, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
            "MPI_T_cvar_get_info(num_cvar)", MPI_T_ERR_INVALID_INDEX);
    MPI_T_cvar_handle h;
    int count;
    t_check(MPI_T_cvar_handle_alloc(-1, NULL, &h, &count), "MPI_T_cvar_handle_alloc(-1)", MPI_T_ERR_INVALID_INDEX);
    int index;
    t_check(MPI_T_cvar_get_index("no such control variable, surely", &index), "MPI_T_cvar_get_index (bogus)",
            MPI_T_ERR_INVALID_NAME);
}

/* The value of the performance variable `name` (class LEVEL) through
 * `session`, or -1 when there is none of that name. */
static long long level(MPI_T_pvar_session session, const char *name)
{
    int index = -1;
    if (MPI_T_pvar_get_index(name, MPI_T_PVAR_CLASS_LEVEL, &index) != MPI_SUCCESS)
        return -1;
    MPI_T_pvar_handle h = MPI_T_PVAR_HANDLE_NULL;
    int count = 0;
    t_check(MPI_T_pvar_handle_alloc(session, index, NULL, &h, &count), "MPI_T_pvar_handle_alloc", MPI_SUCCESS);
    unsigned long long v = 0;
    t_check(MPI_T_pvar_read(session, h, &v), "MPI_T_pvar_read", MPI_SUCCESS);
    t_check(MPI_T_pvar_handle_free(session, &h), "MPI_T_pvar_handle_free", MPI_SUCCESS);
    CHECK(h == MPI_T_PVAR_HANDLE_NULL);
    return (long long)v;
}

/* shmpi's queue lengths, where they exist. */
static void queues(MPI_T_pvar_session session)
{
    int rank = 0, size = 0;
    CHECK_MPI(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    CHECK_MPI(MPI_Comm_size(MPI_COMM_WORLD, &size));
    if (size < 2 || level(session, "shmpi_unexpected_recvq_length") < 0 ||
        level(session, "shmpi_posted_recvq_length") < 0)
        return;
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    int v[3] = {0, 0, 0};
    if (rank == 1) {
        for (int t = 0; t < 3; ++t)
            CHECK_MPI(MPI_Send(&t, 1, MPI_INT, 0, 7 + t, MPI_COMM_WORLD));
    }
    if (rank == 0) {
        CHECKF(level(session, "shmpi_posted_recvq_length") == 0, "%lld receives posted at the start",
               level(session, "shmpi_posted_recvq_length"));
        int flag = 0;
        while (!flag)
            CHECK_MPI(MPI_Iprobe(1, 9, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE));
        CHECKF(level(session, "shmpi_unexpected_recvq_length") == 3, "%lld messages waiting, expected 3",
               level(session, "shmpi_unexpected_recvq_length"));
        MPI_Request r;
        int late = -1;
        CHECK_MPI(MPI_Irecv(&late, 1, MPI_INT, 1, 100, MPI_COMM_WORLD, &r));
        CHECKF(level(session, "shmpi_posted_recvq_length") == 1, "%lld receives posted, expected 1",
               level(session, "shmpi_posted_recvq_length"));
        for (int t = 0; t < 3; ++t)
            CHECK_MPI(MPI_Recv(&v[t], 1, MPI_INT, 1, 7 + t, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        CHECKF(level(session, "shmpi_unexpected_recvq_length") == 0, "%lld messages waiting after the receives",
               level(session, "shmpi_unexpected_recvq_length"));
        CHECK_MPI(MPI_Send(&rank, 1, MPI_INT, 1, 101, MPI_COMM_WORLD));
        CHECK_MPI(MPI_Wait(&r, MPI_STATUS_IGNORE));
        CHECKF(level(session, "shmpi_posted_recvq_length") == 0, "%lld receives posted at the end",
               level(session, "shmpi_posted_recvq_length"));
        CHECK(v[0] == 0 && v[1] == 1 && v[2] == 2 && late == 1);
    } else if (rank == 1) {
        int go = -1;
        CHECK_MPI(MPI_Recv(&go, 1, MPI_INT, 0, 101, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        CHECK_MPI(MPI_Send(&rank, 1, MPI_INT, 0, 100, MPI_COMM_WORLD));
    }
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
}

/* A sender that runs ahead of its receiver, as in MPICH's
 * mt_pt2pt_msgrate: on shmpi the queue of waiting messages stays short. */
static void stream_ahead(MPI_T_pvar_session session)
{
    enum { kWindow = 64, kWindows = 40 };
    int rank = 0, size = 0;
    CHECK_MPI(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    CHECK_MPI(MPI_Comm_size(MPI_COMM_WORLD, &size));
    if (size < 2 || level(session, "shmpi_unexpected_recvq_length") < 0)
        return;
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    int v[kWindow];
    MPI_Request r[kWindow];
    long long most = 0;
    for (int w = 0; w < kWindows && rank < 2; ++w) {
        for (int k = 0; k < kWindow; ++k) {
            if (rank == 1) {
                v[k] = w * kWindow + k;
                CHECK_MPI(MPI_Isend(&v[k], 1, MPI_INT, 0, 5, MPI_COMM_WORLD, &r[k]));
            } else {
                v[k] = -1;
                CHECK_MPI(MPI_Irecv(&v[k], 1, MPI_INT, 1, 5, MPI_COMM_WORLD, &r[k]));
            }
        }
        CHECK_MPI(MPI_Waitall(kWindow, r, MPI_STATUSES_IGNORE));
        if (rank == 0) {
            for (int k = 0; k < kWindow; ++k)
                CHECKF(v[k] == w * kWindow + k, "window %d: message %d carries %d", w, k, v[k]);
            const long long waiting = level(session, "shmpi_unexpected_recvq_length");
            if (waiting > most)
                most = waiting;
        }
    }
    CHECKF(most <= 4 * kWindow, "%lld messages waited at once, more than 4 windows of %d", most, kWindow);
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
}

static void pvars(void)
{
    int num = -1;
    t_check(MPI_T_pvar_get_num(&num), "MPI_T_pvar_get_num", MPI_SUCCESS);
    CHECK(num >= 0);
    MPI_T_pvar_session s = MPI_T_PVAR_SESSION_NULL;
    t_check(MPI_T_pvar_session_create(&s), "MPI_T_pvar_session_create", MPI_SUCCESS);
    CHECK(s != MPI_T_PVAR_SESSION_NULL);
    for (int i = 0; i < num; ++i) {
        char name[256];
        int len = sizeof name, cls = -1, bind = -1, readonly = -1, continuous = -1, atomic = -1;
        MPI_Datatype type;
        MPI_T_enum en;
        t_check(MPI_T_pvar_get_info(i, name, &len, NULL, &cls, &type, &en, NULL, NULL, &bind, &readonly, &continuous,
                                    &atomic),
                "MPI_T_pvar_get_info", MPI_SUCCESS);
        check_enum(en, name);
        if (len >= (int)sizeof name || bind != MPI_T_BIND_NO_OBJECT)
            continue;
        int index = -1;
        t_check(MPI_T_pvar_get_index(name, cls, &index), "MPI_T_pvar_get_index", MPI_SUCCESS);
        CHECKF(index == i, "MPI_T_pvar_get_index(\"%s\") gave %d, not %d", name, index, i);
        MPI_T_pvar_handle h = MPI_T_PVAR_HANDLE_NULL;
        int count = 0;
        t_check(MPI_T_pvar_handle_alloc(s, i, NULL, &h, &count), "MPI_T_pvar_handle_alloc", MPI_SUCCESS);
        CHECK(h != MPI_T_PVAR_HANDLE_NULL && count >= 1);
        if (continuous)
            t_check(MPI_T_pvar_start(s, h), "MPI_T_pvar_start (continuous)", MPI_T_ERR_PVAR_NO_STARTSTOP);
        else
            t_check(MPI_T_pvar_start(s, h), "MPI_T_pvar_start", MPI_SUCCESS);
        unsigned char *buf = calloc((size_t)count, 64);
        CHECK(buf != NULL);
        t_check(MPI_T_pvar_read(s, h, buf), "MPI_T_pvar_read", MPI_SUCCESS);
        if (readonly) {
            t_check(MPI_T_pvar_write(s, h, buf), "MPI_T_pvar_write (read-only)", MPI_T_ERR_PVAR_NO_WRITE);
            t_check(MPI_T_pvar_reset(s, h), "MPI_T_pvar_reset (read-only)", MPI_T_ERR_PVAR_NO_WRITE);
            t_check(MPI_T_pvar_readreset(s, h, buf), "MPI_T_pvar_readreset (read-only)", MPI_T_ERR_PVAR_NO_WRITE);
        } else {
            t_check(MPI_T_pvar_reset(s, h), "MPI_T_pvar_reset", MPI_SUCCESS);
            t_check(MPI_T_pvar_readreset(s, h, buf), "MPI_T_pvar_readreset", MPI_SUCCESS);
        }
        free(buf);
        if (!continuous)
            t_check(MPI_T_pvar_stop(s, h), "MPI_T_pvar_stop", MPI_SUCCESS);
        if (i % 2 == 0)
            t_check(MPI_T_pvar_handle_free(s, &h), "MPI_T_pvar_handle_free", MPI_SUCCESS); /* others go with s */
    }
    int index;
    t_check(MPI_T_pvar_get_index("no such performance variable, surely", MPI_T_PVAR_CLASS_COUNTER, &index),
            "MPI_T_pvar_get_index (bogus)", MPI_T_ERR_INVALID_NAME);
    t_check(MPI_T_pvar_start(s, MPI_T_PVAR_ALL_HANDLES), "MPI_T_pvar_start (all handles)", MPI_SUCCESS);
    t_check(MPI_T_pvar_stop(s, MPI_T_PVAR_ALL_HANDLES), "MPI_T_pvar_stop (all handles)", MPI_SUCCESS);
    /* (resets the handles that are not read-only, 14.3.7: none may be) */
    t_check(MPI_T_pvar_reset(s, MPI_T_PVAR_ALL_HANDLES), "MPI_T_pvar_reset (all handles)", MPI_SUCCESS);
    queues(s);
    stream_ahead(s);
    t_check(MPI_T_pvar_session_free(&s), "MPI_T_pvar_session_free", MPI_SUCCESS);
    CHECK(s == MPI_T_PVAR_SESSION_NULL);
}

/* The indices category c lists with get (MPI_T_category_get_cvars,
 * _get_pvars or _get_categories): n of them, each below `below`. */
static void check_listed(int (*get)(int, int, int[]), const char *what, int c, int n, int below)
{
    if (n <= 0)
        return;
    int *ix = malloc(sizeof(int) * (size_t)n);
    CHECK(ix != NULL);
    for (int k = 0; k < n; ++k)
        ix[k] = -1;
    t_check(get(c, n, ix), what, MPI_SUCCESS);
    for (int k = 0; k < n; ++k)
        CHECKF(ix[k] >= 0 && ix[k] < below, "%s(%d) lists %d of %d", what, c, ix[k], below);
    free(ix);
}

static void categories(int num_cvar, int num_pvar)
{
    int num = -1;
    t_check(MPI_T_category_get_num(&num), "MPI_T_category_get_num", MPI_SUCCESS);
    CHECK(num >= 0);
    int stamp0 = -1, stamp1 = -2;
    t_check(MPI_T_category_changed(&stamp0), "MPI_T_category_changed", MPI_SUCCESS);
    for (int c = 0; c < num; ++c) {
        char name[256];
        int len = sizeof name, ncvars = -1, npvars = -1, ncats = -1;
        t_check(MPI_T_category_get_info(c, name, &len, NULL, NULL, &ncvars, &npvars, &ncats),
                "MPI_T_category_get_info", MPI_SUCCESS);
        CHECK(ncvars >= 0 && npvars >= 0 && ncats >= 0);
        int index = -1;
        if (len < (int)sizeof name) {
            t_check(MPI_T_category_get_index(name, &index), "MPI_T_category_get_index", MPI_SUCCESS);
            CHECKF(index == c, "MPI_T_category_get_index(\"%s\") gave %d, not %d", name, index, c);
        }
        check_listed(MPI_T_category_get_cvars, "MPI_T_category_get_cvars", c, ncvars, num_cvar);
        check_listed(MPI_T_category_get_pvars, "MPI_T_category_get_pvars", c, npvars, num_pvar);
        check_listed(MPI_T_category_get_categories, "MPI_T_category_get_categories", c, ncats, num);
    }
    int index;
    t_check(MPI_T_category_get_index("no such category, surely", &index), "MPI_T_category_get_index (bogus)",
            MPI_T_ERR_INVALID_NAME);
    t_check(MPI_T_category_changed(&stamp1), "MPI_T_category_changed", MPI_SUCCESS);
    CHECKF(stamp0 == stamp1, "MPI_T_category_changed moved from %d to %d with nothing loaded", stamp0, stamp1);
}

int main(int argc, char **argv)
{
    int num = 0, provided = -1;
    /* Before MPI_T_init_thread and before MPI_Init. */
    t_check(MPI_T_cvar_get_num(&num), "MPI_T_cvar_get_num before MPI_T_init_thread", MPI_T_ERR_NOT_INITIALIZED);
    t_check(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided), "MPI_T_init_thread", MPI_SUCCESS);
    CHECKF(provided == MPI_THREAD_SINGLE, "MPI_T_init_thread(MPI_THREAD_SINGLE) provided %d", provided);
    t_check(MPI_T_init_thread(MPI_THREAD_FUNNELED, &provided), "MPI_T_init_thread (again)", MPI_SUCCESS);
    CHECK(provided == MPI_THREAD_SINGLE || provided == MPI_THREAD_FUNNELED);

    MPI_Init(&argc, &argv);
    cvars();
    pvars();
    int num_cvar = 0, num_pvar = 0;
    t_check(MPI_T_cvar_get_num(&num_cvar), "MPI_T_cvar_get_num", MPI_SUCCESS);
    t_check(MPI_T_pvar_get_num(&num_pvar), "MPI_T_pvar_get_num", MPI_SUCCESS);
    categories(num_cvar, num_pvar);
    int cls = -1;
    CHECK_MPI(MPI_Error_class(MPI_T_ERR_INVALID_NAME, &cls));
    CHECKF(cls == MPI_T_ERR_INVALID_NAME, "MPI_Error_class(MPI_T_ERR_INVALID_NAME) gave %d", cls);
    char text[MPI_MAX_ERROR_STRING];
    int text_len = 0;
    CHECK_MPI(MPI_Error_string(MPI_T_ERR_INVALID_NAME, text, &text_len));
    CHECK(text_len > 0);

    /* Two inits, two finalizes; a third is an error.  Still usable after
     * the first. */
    t_check(MPI_T_finalize(), "MPI_T_finalize", MPI_SUCCESS);
    t_check(MPI_T_cvar_get_num(&num), "MPI_T_cvar_get_num after one of two finalizes", MPI_SUCCESS);
    t_check(MPI_T_finalize(), "MPI_T_finalize (second)", MPI_SUCCESS);
    t_check(MPI_T_cvar_get_num(&num), "MPI_T_cvar_get_num after the last finalize", MPI_T_ERR_NOT_INITIALIZED);
    t_check(MPI_T_finalize(), "MPI_T_finalize (one too many)", MPI_T_ERR_NOT_INITIALIZED);
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Finalize();
    if (rank == 0)
        printf("tool_vars: %d control variables OK\n", num_cvar);
    return 0;
}
