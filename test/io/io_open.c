/*
 * Opening, closing and deleting files, and the file-manipulation calls
 * (MPI-3.1 13.2):
 *  - MPI_File_open's amode rules (13.2.1): exactly one of MPI_MODE_RDONLY,
 *    MPI_MODE_RDWR, MPI_MODE_WRONLY; RDONLY with CREATE or EXCL and RDWR with
 *    SEQUENTIAL are MPI_ERR_AMODE; a missing file without CREATE is
 *    MPI_ERR_NO_SUCH_FILE; CREATE|EXCL on an existing file is
 *    MPI_ERR_FILE_EXISTS (13.7 names the classes);
 *  - MPI_File_close sets the handle to MPI_FILE_NULL; MPI_File_delete
 *    (13.2.3) of a missing file is MPI_ERR_NO_SUCH_FILE;
 *  - MPI_File_get_amode and MPI_File_get_group (13.2.7; the group is that of
 *    the communicator: MPI_IDENT) on MPI_COMM_WORLD, on a sub-communicator
 *    of MPI_Comm_split and on MPI_COMM_SELF;
 *  - MPI_MODE_DELETE_ON_CLOSE removes the file at close; MPI_MODE_APPEND
 *    puts the individual and the shared file pointers at the end of file;
 *  - the default error handler of MPI_FILE_NULL and of a new file is
 *    MPI_ERRORS_RETURN (13.7);
 *  - MPI_File_set_size / get_size / preallocate (13.2.4-13.2.6: set_size
 *    may shrink, preallocate never does), MPI_File_sync (13.6.1: data
 *    written by one rank is seen by another after sync, barrier, sync);
 *  - MPI_File_set_info / MPI_File_get_info (13.2.8) succeed and the info
 *    returned is a valid one the caller frees.
 */
#include "io_common.h"

static void expect_group(MPI_File fh, MPI_Comm comm)
{
    MPI_Group fg = MPI_GROUP_NULL, cg = MPI_GROUP_NULL;
    CHECK_MPI(MPI_File_get_group(fh, &fg));
    CHECK_MPI(MPI_Comm_group(comm, &cg));
    int result = -1;
    CHECK_MPI(MPI_Group_compare(fg, cg, &result));
    CHECKF(result == MPI_IDENT, "MPI_File_get_group: compare gave %d, expected MPI_IDENT",
           result);
    int fsize = -1, csize = -2;
    CHECK_MPI(MPI_Group_size(fg, &fsize));
    CHECK_MPI(MPI_Comm_size(comm, &csize));
    CHECK(fsize == csize);
    CHECK_MPI(MPI_Group_free(&fg));
    CHECK_MPI(MPI_Group_free(&cg));
}

static void expect_errhandler(MPI_File fh, MPI_Errhandler want, const char *what)
{
    MPI_Errhandler eh = MPI_ERRHANDLER_NULL;
    CHECK_MPI(MPI_File_get_errhandler(fh, &eh));
    CHECKF(eh == want, "%s: unexpected error handler", what);
    CHECK_MPI(MPI_Errhandler_free(&eh));
}

/* The file at `path` must not exist: opening it on `comm` without
 * MPI_MODE_CREATE fails with MPI_ERR_NO_SUCH_FILE and leaves the handle. */
static void expect_missing(const char *path, MPI_Comm comm)
{
    MPI_File fh = MPI_FILE_NULL;
    EXPECT_CLASS(MPI_File_open(comm, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh),
                 MPI_ERR_NO_SUCH_FILE);
    CHECK(fh == MPI_FILE_NULL);
}

int main(int argc, char **argv)
{
    CHECK_MPI(MPI_Init(&argc, &argv));
    const int rank = world_rank(), n = world_size();
    char path[IO_PATH_MAX];
    io_path(MPI_COMM_WORLD, "io_open", 0, path);
    MPI_File fh = MPI_FILE_NULL;

    /* ---- the default handler for files is MPI_ERRORS_RETURN ---- */
    expect_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN, "MPI_FILE_NULL");

    /* ---- opening a missing file ---- */
    expect_missing(path, MPI_COMM_WORLD);
    EXPECT_CLASS(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR, MPI_INFO_NULL, &fh),
                 MPI_ERR_NO_SUCH_FILE);
    CHECK(fh == MPI_FILE_NULL);

    /* ---- amode rules: each must fail with MPI_ERR_AMODE and create nothing
     * (on MPI_COMM_SELF, to keep the test fast with 8 ranks on 2 cores;
     * the last also on MPI_COMM_WORLD) ---- */
    const int bad_amodes[] = {
        0,
        MPI_MODE_CREATE,
        MPI_MODE_RDONLY | MPI_MODE_RDWR | MPI_MODE_CREATE,
        MPI_MODE_RDONLY | MPI_MODE_WRONLY | MPI_MODE_CREATE,
        MPI_MODE_RDWR | MPI_MODE_WRONLY | MPI_MODE_CREATE,
        MPI_MODE_RDONLY | MPI_MODE_RDWR | MPI_MODE_WRONLY | MPI_MODE_CREATE,
        MPI_MODE_RDONLY | MPI_MODE_CREATE,
        MPI_MODE_RDONLY | MPI_MODE_EXCL,
        MPI_MODE_RDONLY | MPI_MODE_CREATE | MPI_MODE_EXCL,
        MPI_MODE_RDWR | MPI_MODE_SEQUENTIAL | MPI_MODE_CREATE,
    };
    for (size_t i = 0; i < sizeof bad_amodes / sizeof bad_amodes[0]; ++i) {
        fh = MPI_FILE_NULL;
        const int rc = MPI_File_open(MPI_COMM_SELF, path, bad_amodes[i], MPI_INFO_NULL, &fh);
        CHECKF(rc != MPI_SUCCESS && check_error_class(rc) == MPI_ERR_AMODE,
               "amode 0x%x: class %d, expected MPI_ERR_AMODE", bad_amodes[i],
               rc == MPI_SUCCESS ? 0 : check_error_class(rc));
        CHECK(fh == MPI_FILE_NULL);
    }
    EXPECT_CLASS(MPI_File_open(MPI_COMM_WORLD, path,
                               MPI_MODE_RDWR | MPI_MODE_SEQUENTIAL | MPI_MODE_CREATE,
                               MPI_INFO_NULL, &fh),
                 MPI_ERR_AMODE);
    CHECK(fh == MPI_FILE_NULL);
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    expect_missing(path, MPI_COMM_WORLD);

    /* ---- create on MPI_COMM_WORLD ---- */
    const int amode = MPI_MODE_CREATE | MPI_MODE_EXCL | MPI_MODE_RDWR;
    CHECK_MPI(MPI_File_open(MPI_COMM_WORLD, path, amode, MPI_INFO_NULL, &fh));
    CHECK(fh != MPI_FILE_NULL);
    int got_amode = -1;
    CHECK_MPI(MPI_File_get_amode(fh, &got_amode));
    CHECKF(got_amode == amode, "get_amode 0x%x, expected 0x%x", got_amode, amode);
    expect_group(fh, MPI_COMM_WORLD);
    expect_errhandler(fh, MPI_ERRORS_RETURN, "a new file");
    CHECKF(io_file_size(fh) == 0, "a new file has size %lld", (long long)io_file_size(fh));

    /* set_size grows and shrinks; preallocate only grows */
    CHECK_MPI(MPI_File_set_size(fh, 1000));
    CHECK(io_file_size(fh) == 1000);
    CHECK_MPI(MPI_File_preallocate(fh, 500));
    CHECKF(io_file_size(fh) == 1000, "preallocate(500) changed the size 1000 to %lld",
           (long long)io_file_size(fh));
    CHECK_MPI(MPI_File_preallocate(fh, 2000));
    CHECKF(io_file_size(fh) == 2000, "preallocate(2000): size %lld", (long long)io_file_size(fh));
    CHECK_MPI(MPI_File_set_size(fh, 300));
    CHECKF(io_file_size(fh) == 300, "set_size(300): size %lld", (long long)io_file_size(fh));
    CHECK_MPI(MPI_File_set_size(fh, 300)); /* same size: no change */
    CHECK(io_file_size(fh) == 300);

    /* the bytes a set_size adds read as zeros */
    {
        unsigned char zeros[300];
        memset(zeros, 0xee, sizeof zeros);
        MPI_Status st;
        CHECK_MPI(MPI_File_read_at(fh, 0, zeros, 300, MPI_BYTE, &st));
        CHECK(io_count(&st, MPI_BYTE) == 300);
        for (int i = 0; i < 300; ++i)
            CHECKF(zeros[i] == 0, "byte %d of the extended file is 0x%02x", i, zeros[i]);
        CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD)); /* all have read before anyone writes */
    }

    /* sync: rank r writes its value at int offset r; after sync, barrier,
     * sync every rank reads them all */
    {
        const int mine = 7000 + rank;
        MPI_Status st;
        CHECK_MPI(MPI_File_write_at(fh, (MPI_Offset)rank * 4, &mine, 1, MPI_INT, &st));
        CHECK(io_count(&st, MPI_INT) == 1);
        io_sync_barrier(fh, MPI_COMM_WORLD);
        int *all = check_malloc((size_t)n * sizeof(int));
        CHECK_MPI(MPI_File_read_at(fh, 0, all, n, MPI_INT, &st));
        CHECK(io_count(&st, MPI_INT) == n);
        for (int r = 0; r < n; ++r)
            CHECKF(all[r] == 7000 + r, "int %d is %d, expected %d", r, all[r], 7000 + r);
        free(all);
        const MPI_Offset want = n * 4 > 300 ? (MPI_Offset)n * 4 : 300;
        CHECK(io_file_size(fh) == want);
    }

    /* info: set_info takes hints; get_info returns a valid info to free */
    {
        MPI_Info info;
        CHECK_MPI(MPI_Info_create(&info));
        CHECK_MPI(MPI_Info_set(info, "access_style", "read_mostly"));
        CHECK_MPI(MPI_Info_set(info, "shmpi_test_unknown_hint", "ignored"));
        CHECK_MPI(MPI_File_set_info(fh, info));
        CHECK_MPI(MPI_Info_free(&info));
        MPI_Info used = MPI_INFO_NULL;
        CHECK_MPI(MPI_File_get_info(fh, &used));
        CHECK(used != MPI_INFO_NULL);
        int nkeys = -1;
        CHECK_MPI(MPI_Info_get_nkeys(used, &nkeys));
        CHECK(nkeys >= 0);
        CHECK_MPI(MPI_Info_free(&used));
        CHECK(used == MPI_INFO_NULL);
    }

    CHECK_MPI(MPI_File_close(&fh));
    CHECK(fh == MPI_FILE_NULL);

    /* ---- CREATE|EXCL on the existing file: MPI_ERR_FILE_EXISTS ---- */
    EXPECT_CLASS(MPI_File_open(MPI_COMM_WORLD, path, amode, MPI_INFO_NULL, &fh),
                 MPI_ERR_FILE_EXISTS);
    CHECK(fh == MPI_FILE_NULL);

    /* ---- reopen read-only: the contents stayed ---- */
    CHECK_MPI(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
    CHECK_MPI(MPI_File_get_amode(fh, &got_amode));
    CHECK(got_amode == MPI_MODE_RDONLY);
    CHECK(io_file_size(fh) == (n * 4 > 300 ? n * 4 : 300));
    {
        int v = -1;
        MPI_Status st;
        CHECK_MPI(MPI_File_read_at(fh, (MPI_Offset)((rank + 1) % n) * 4, &v, 1, MPI_INT, &st));
        CHECK(v == 7000 + (rank + 1) % n);
    }
    CHECK_MPI(MPI_File_close(&fh));

    /* ---- APPEND: both file pointers start at the end of file ---- */
    CHECK_MPI(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR | MPI_MODE_APPEND, MPI_INFO_NULL,
                            &fh));
    {
        const MPI_Offset end = n * 4 > 300 ? (MPI_Offset)n * 4 : 300;
        MPI_Offset pos = -1;
        CHECK_MPI(MPI_File_get_position(fh, &pos));
        CHECKF(pos == end, "APPEND: individual pointer at %lld, expected %lld", (long long)pos,
               (long long)end);
        CHECK_MPI(MPI_File_get_position_shared(fh, &pos));
        CHECKF(pos == end, "APPEND: shared pointer at %lld, expected %lld", (long long)pos,
               (long long)end);
    }
    CHECK_MPI(MPI_File_close(&fh));

    /* ---- delete (one rank), then the file is gone for all ---- */
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0)
        CHECK_MPI(MPI_File_delete(path, MPI_INFO_NULL));
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    expect_missing(path, MPI_COMM_WORLD);
    if (rank == n - 1)
        EXPECT_CLASS(MPI_File_delete(path, MPI_INFO_NULL), MPI_ERR_NO_SUCH_FILE);
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));

    /* ---- a sub-communicator: even and odd ranks, a file each ---- */
    {
        const int color = rank % 2;
        MPI_Comm sub;
        CHECK_MPI(MPI_Comm_split(MPI_COMM_WORLD, color, n - rank, &sub)); /* reversed order */
        int srank = -1, ssize = -1;
        CHECK_MPI(MPI_Comm_rank(sub, &srank));
        CHECK_MPI(MPI_Comm_size(sub, &ssize));
        char spath[IO_PATH_MAX];
        io_path(sub, "io_open", 1 + color, spath);
        CHECK_MPI(MPI_File_open(sub, spath, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL,
                                &fh));
        expect_group(fh, sub);
        const int v = 100 * color + srank;
        MPI_Status st;
        CHECK_MPI(MPI_File_write_at_all(fh, (MPI_Offset)srank * 4, &v, 1, MPI_INT, &st));
        CHECK(io_count(&st, MPI_INT) == 1);
        CHECK_MPI(MPI_File_close(&fh));

        CHECK_MPI(MPI_File_open(sub, spath, MPI_MODE_RDONLY | MPI_MODE_DELETE_ON_CLOSE,
                                MPI_INFO_NULL, &fh));
        CHECK(io_file_size(fh) == (MPI_Offset)ssize * 4);
        int *all = check_malloc((size_t)ssize * sizeof(int));
        CHECK_MPI(MPI_File_read_at_all(fh, 0, all, ssize, MPI_INT, &st));
        CHECK(io_count(&st, MPI_INT) == ssize);
        for (int r = 0; r < ssize; ++r)
            CHECKF(all[r] == 100 * color + r, "sub file %d int %d is %d", color, r, all[r]);
        free(all);
        CHECK_MPI(MPI_File_close(&fh));
        /* DELETE_ON_CLOSE removed it */
        expect_missing(spath, sub);
        CHECK_MPI(MPI_Comm_free(&sub));
    }

    /* ---- MPI_COMM_SELF: one file per rank, deleted on close ---- */
    {
        char spath[IO_PATH_MAX];
        io_path(MPI_COMM_WORLD, "io_open", 10, spath);
        char mine[IO_PATH_MAX + 16];
        snprintf(mine, sizeof mine, "%s_self%d", spath, rank);
        (void)MPI_File_delete(mine, MPI_INFO_NULL);
        CHECK_MPI(MPI_File_open(MPI_COMM_SELF, mine,
                                MPI_MODE_CREATE | MPI_MODE_EXCL | MPI_MODE_RDWR |
                                    MPI_MODE_DELETE_ON_CLOSE,
                                MPI_INFO_NULL, &fh));
        expect_group(fh, MPI_COMM_SELF);
        CHECK_MPI(MPI_File_get_amode(fh, &got_amode));
        CHECK(got_amode ==
              (MPI_MODE_CREATE | MPI_MODE_EXCL | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE));
        double d[3] = {rank + 0.25, rank + 0.5, rank + 0.75}, e[3] = {0, 0, 0};
        MPI_Status st;
        CHECK_MPI(MPI_File_write(fh, d, 3, MPI_DOUBLE, &st));
        CHECK(io_count(&st, MPI_DOUBLE) == 3);
        MPI_Offset pos = -1;
        CHECK_MPI(MPI_File_get_position(fh, &pos));
        CHECK(pos == 24);
        CHECK_MPI(MPI_File_read_at(fh, 0, e, 3, MPI_DOUBLE, &st));
        for (int i = 0; i < 3; ++i)
            CHECK(e[i] == d[i]);
        CHECK(io_file_size(fh) == 24);
        CHECK_MPI(MPI_File_close(&fh));
        expect_missing(mine, MPI_COMM_SELF);
        EXPECT_CLASS(MPI_File_delete(mine, MPI_INFO_NULL), MPI_ERR_NO_SUCH_FILE);
    }

    CHECK_MPI(MPI_Finalize());
    return 0;
}
