/*
 * I/O errors, error handlers and atomicity (MPI-3.1 13.7, 13.6.1, 8.3.4):
 *  - a handler of MPI_File_create_errhandler, set with
 *    MPI_File_set_errhandler, is called with the file and the error code,
 *    and the failing call returns that code: on a file (MPI_File_read on a
 *    file opened MPI_MODE_WRONLY: MPI_ERR_ACCESS) and on MPI_FILE_NULL,
 *    whose handler takes the errors of MPI_File_open (13.7); by
 *    MPI_File_call_errhandler, which returns MPI_SUCCESS; the handler
 *    returned by MPI_File_get_errhandler is the one set;
 *  - error classes under MPI_ERRORS_RETURN (the default for files): a
 *    negative count (MPI_ERR_COUNT), MPI_DATATYPE_NULL (MPI_ERR_TYPE), a
 *    negative offset (MPI_ERR_ARG), a write to a file opened read-only
 *    (MPI_ERR_ACCESS "permission denied" or MPI_ERR_READ_ONLY: 13.7's table
 *    fits both), explicit offsets, individual pointers and seeks on a file
 *    opened MPI_MODE_SEQUENTIAL (MPI_ERR_UNSUPPORTED_OPERATION: "such as
 *    seeking on a file which supports sequential access only"), an unknown
 *    data representation in MPI_File_set_view (MPI_ERR_UNSUPPORTED_DATAREP),
 *    MPI_FILE_NULL as a file (MPI_ERR_FILE); after each error the file stays
 *    usable;
 *  - MPI_File_set_atomicity / get_atomicity round trip; in atomic mode, all
 *    ranks write a large record of their own to the same region at once:
 *    afterwards the region is one rank's whole record, never a mix, and
 *    every rank sees the same one.
 */
#include "io_common.h"

static MPI_File handler_file = MPI_FILE_NULL;
static int handler_code = MPI_SUCCESS;
static int handler_calls = 0;

static void file_handler(MPI_File *fh, int *code, ...)
{
    handler_file = *fh;
    handler_code = *code;
    ++handler_calls;
}

static void handler_reset(void)
{
    handler_file = (MPI_File)0;
    handler_code = MPI_SUCCESS;
    handler_calls = 0;
}

static void atomic_mode(const char *path)
{
    enum { RECN = 1 << 16 }; /* 256 KiB per record */
    const int rank = world_rank(), n = world_size();
    MPI_File fh;
    MPI_Status st;
    io_open_temp(MPI_COMM_WORLD, path, &fh);
    int flag = -1;
    CHECK_MPI(MPI_File_get_atomicity(fh, &flag));
    CHECKF(flag == 0, "a new file is in atomic mode (%d)", flag); /* 13.6.1: nonatomic */
    CHECK_MPI(MPI_File_set_atomicity(fh, 1));
    CHECK_MPI(MPI_File_get_atomicity(fh, &flag));
    CHECK(flag != 0);

    int *rec = check_malloc(RECN * sizeof(int));
    for (int i = 0; i < RECN; ++i)
        rec[i] = rank + 1;
    /* the ranks start together; each writes the whole region */
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    CHECK_MPI(MPI_File_write_at(fh, 0, rec, RECN, MPI_INT, &st));
    CHECK(io_count(&st, MPI_INT) == RECN);
    /* atomic mode: once all writes are done, a read sees one whole write */
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    memset(rec, 0, RECN * sizeof(int));
    CHECK_MPI(MPI_File_read_at(fh, 0, rec, RECN, MPI_INT, &st));
    CHECK(io_count(&st, MPI_INT) == RECN);
    const int winner = rec[0];
    CHECKF(winner >= 1 && winner <= n, "int 0 of the record is %d", winner);
    for (int i = 0; i < RECN; ++i)
        CHECKF(rec[i] == winner, "atomic writes mixed: int %d is %d, int 0 is %d", i, rec[i],
               winner);
    int lo = 0, hi = 0;
    CHECK_MPI(MPI_Allreduce(&winner, &lo, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD));
    CHECK_MPI(MPI_Allreduce(&winner, &hi, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD));
    CHECKF(lo == hi, "ranks see different records (%d and %d)", lo, hi);
    free(rec);

    CHECK_MPI(MPI_File_set_atomicity(fh, 0));
    CHECK_MPI(MPI_File_get_atomicity(fh, &flag));
    CHECK(flag == 0);
    CHECK_MPI(MPI_File_close(&fh));
}

int main(int argc, char **argv)
{
    CHECK_MPI(MPI_Init(&argc, &argv));
    const int rank = world_rank();
    char path[IO_PATH_MAX], seqpath[IO_PATH_MAX], atpath[IO_PATH_MAX];
    io_path(MPI_COMM_WORLD, "io_errors", 0, path);
    io_path(MPI_COMM_WORLD, "io_errors", 1, seqpath);
    io_path(MPI_COMM_WORLD, "io_errors", 2, atpath);
    MPI_File fh = MPI_FILE_NULL;
    MPI_Status st;
    int buf[8] = {1, 2, 3, 4, 5, 6, 7, 8};

    MPI_Errhandler eh, got;
    CHECK_MPI(MPI_File_create_errhandler(file_handler, &eh));

    /* ---- a user handler on MPI_FILE_NULL takes MPI_File_open's errors ---- */
    CHECK_MPI(MPI_File_get_errhandler(MPI_FILE_NULL, &got));
    CHECK(got == MPI_ERRORS_RETURN);
    CHECK_MPI(MPI_Errhandler_free(&got));
    CHECK_MPI(MPI_File_set_errhandler(MPI_FILE_NULL, eh));
    handler_reset();
    int rc = MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh);
    CHECK(check_error_class(rc) == MPI_ERR_NO_SUCH_FILE);
    CHECKF(handler_calls == 1, "the handler of MPI_FILE_NULL ran %d times", handler_calls);
    CHECK(handler_file == MPI_FILE_NULL);
    CHECK(handler_code == rc);
    CHECK_MPI(MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN));

    /* ---- a user handler on a file ---- */
    CHECK_MPI(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_WRONLY,
                            MPI_INFO_NULL, &fh));
    CHECK_MPI(MPI_File_get_errhandler(fh, &got));
    CHECK(got == MPI_ERRORS_RETURN);
    CHECK_MPI(MPI_Errhandler_free(&got));
    CHECK_MPI(MPI_File_set_errhandler(fh, eh));
    CHECK_MPI(MPI_File_get_errhandler(fh, &got));
    CHECK(got == eh);
    CHECK_MPI(MPI_Errhandler_free(&got));
    handler_reset();
    rc = MPI_File_read(fh, buf, 1, MPI_INT, &st);
    CHECKF(rc != MPI_SUCCESS && check_error_class(rc) == MPI_ERR_ACCESS,
           "read on a write-only file: class %d, expected MPI_ERR_ACCESS",
           rc == MPI_SUCCESS ? 0 : check_error_class(rc));
    CHECK(handler_calls == 1);
    CHECK(handler_file == fh);
    CHECK(handler_code == rc);
    handler_reset();
    rc = MPI_File_read_at(fh, 0, buf, 1, MPI_INT, &st);
    CHECK(rc != MPI_SUCCESS && check_error_class(rc) == MPI_ERR_ACCESS);
    CHECK(handler_calls == 1 && handler_file == fh && handler_code == rc);
    /* MPI_File_call_errhandler */
    handler_reset();
    CHECK_MPI(MPI_File_call_errhandler(fh, MPI_ERR_OTHER));
    CHECK(handler_calls == 1 && handler_file == fh && handler_code == MPI_ERR_OTHER);
    /* the handler stays with the file after the errors; MPI_FILE_NULL's
     * handler is not called for errors on a file */
    CHECK_MPI(MPI_File_set_errhandler(fh, MPI_ERRORS_RETURN));
    handler_reset();

    /* ---- classes under MPI_ERRORS_RETURN ---- */
    EXPECT_CLASS(MPI_File_write_at(fh, 0, buf, -1, MPI_INT, &st), MPI_ERR_COUNT);
    EXPECT_CLASS(MPI_File_write(fh, buf, -3, MPI_INT, &st), MPI_ERR_COUNT);
    EXPECT_CLASS(MPI_File_write_at(fh, 0, buf, 1, MPI_DATATYPE_NULL, &st), MPI_ERR_TYPE);
    EXPECT_CLASS(MPI_File_write(fh, buf, 1, MPI_DATATYPE_NULL, &st), MPI_ERR_TYPE);
    EXPECT_CLASS(MPI_File_write_at(fh, -4, buf, 1, MPI_INT, &st), MPI_ERR_ARG);
    EXPECT_CLASS(MPI_File_write_at_all(fh, -4, buf, 1, MPI_INT, &st), MPI_ERR_ARG);
    EXPECT_CLASS(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "shmpi_no_such_datarep",
                                   MPI_INFO_NULL),
                 MPI_ERR_UNSUPPORTED_DATAREP);
    CHECK(handler_calls == 0);
    /* still usable */
    CHECK_MPI(MPI_File_write_at(fh, (MPI_Offset)rank * 32, buf, 8, MPI_INT, &st));
    CHECK(io_count(&st, MPI_INT) == 8);
    CHECK_MPI(MPI_File_close(&fh));

    /* MPI_FILE_NULL is not a file */
    {
        MPI_Offset size = -1;
        EXPECT_CLASS(MPI_File_get_size(MPI_FILE_NULL, &size), MPI_ERR_FILE);
        EXPECT_CLASS(MPI_File_write_at(MPI_FILE_NULL, 0, buf, 1, MPI_INT, &st), MPI_ERR_FILE);
    }

    /* ---- a write on a read-only file ---- */
    CHECK_MPI(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY | MPI_MODE_DELETE_ON_CLOSE,
                            MPI_INFO_NULL, &fh));
    rc = MPI_File_write_at(fh, 0, buf, 1, MPI_INT, &st);
    CHECKF(rc != MPI_SUCCESS && (check_error_class(rc) == MPI_ERR_ACCESS ||
                                 check_error_class(rc) == MPI_ERR_READ_ONLY),
           "write on a read-only file: class %d, expected MPI_ERR_ACCESS or MPI_ERR_READ_ONLY",
           rc == MPI_SUCCESS ? 0 : check_error_class(rc));
    rc = MPI_File_write(fh, buf, 1, MPI_INT, &st);
    CHECK(rc != MPI_SUCCESS && (check_error_class(rc) == MPI_ERR_ACCESS ||
                                check_error_class(rc) == MPI_ERR_READ_ONLY));
    {
        int v[8] = {0};
        CHECK_MPI(MPI_File_read_at(fh, (MPI_Offset)rank * 32, v, 8, MPI_INT, &st));
        for (int i = 0; i < 8; ++i)
            CHECK(v[i] == i + 1);
    }
    CHECK_MPI(MPI_File_close(&fh));

    /* ---- MPI_MODE_SEQUENTIAL: shared pointer only ---- */
    CHECK_MPI(MPI_File_open(MPI_COMM_WORLD, seqpath,
                            MPI_MODE_CREATE | MPI_MODE_WRONLY | MPI_MODE_SEQUENTIAL |
                                MPI_MODE_DELETE_ON_CLOSE,
                            MPI_INFO_NULL, &fh));
    EXPECT_CLASS(MPI_File_write_at(fh, 0, buf, 1, MPI_INT, &st), MPI_ERR_UNSUPPORTED_OPERATION);
    EXPECT_CLASS(MPI_File_write_at_all(fh, 0, buf, 1, MPI_INT, &st),
                 MPI_ERR_UNSUPPORTED_OPERATION);
    {
        MPI_Request req = MPI_REQUEST_NULL;
        EXPECT_CLASS(MPI_File_iwrite_at(fh, 0, buf, 1, MPI_INT, &req),
                     MPI_ERR_UNSUPPORTED_OPERATION);
    }
    EXPECT_CLASS(MPI_File_write(fh, buf, 1, MPI_INT, &st), MPI_ERR_UNSUPPORTED_OPERATION);
    EXPECT_CLASS(MPI_File_seek(fh, 0, MPI_SEEK_SET), MPI_ERR_UNSUPPORTED_OPERATION);
    /* the shared pointer works */
    CHECK_MPI(MPI_File_write_ordered(fh, buf, 2, MPI_INT, &st));
    CHECK(io_count(&st, MPI_INT) == 2);
    CHECK_MPI(MPI_File_close(&fh));

    /* ---- atomicity ---- */
    atomic_mode(atpath);

    CHECK_MPI(MPI_Errhandler_free(&eh));
    CHECK(eh == MPI_ERRHANDLER_NULL);
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) {
        EXPECT_CLASS(MPI_File_delete(path, MPI_INFO_NULL), MPI_ERR_NO_SUCH_FILE);
        EXPECT_CLASS(MPI_File_delete(seqpath, MPI_INFO_NULL), MPI_ERR_NO_SUCH_FILE);
        EXPECT_CLASS(MPI_File_delete(atpath, MPI_INFO_NULL), MPI_ERR_NO_SUCH_FILE);
    }
    CHECK_MPI(MPI_Finalize());
    return 0;
}
