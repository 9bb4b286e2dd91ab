/*
 * Erroneous file views that MPI-3.1 13.3 forbids but does not require an
 * implementation to detect, nor names a class for: shmpi detects them.
 * (A 'shmpi_only' row: MPICH 4.0.2 accepts some of them.)
 *  - "a filetype must be either a single etype or a derived datatype
 *    constructed from multiple instances of the same etype": etype
 *    MPI_DOUBLE with filetype MPI_INT, and with a filetype of 3 ints (12
 *    bytes, not a whole number of doubles), must fail with MPI_ERR_ARG or
 *    MPI_ERR_TYPE;
 *  - "the extent of any hole in the filetype must be a multiple of the
 *    etype's extent": a filetype of one int resized to 6 bytes under etype
 *    MPI_INT must fail with MPI_ERR_IO (ROMIO's class for a view's layout
 *    rules, which MPICH's own tst_fileview expects) or MPI_ERR_TYPE;
 *  - a negative displacement other than MPI_DISPLACEMENT_CURRENT must fail
 *    with MPI_ERR_ARG or MPI_ERR_TYPE;
 *  - MPI_DISPLACEMENT_CURRENT on a file not opened MPI_MODE_SEQUENTIAL
 *    (13.3: "only valid if the file was opened with MPI_MODE_SEQUENTIAL")
 *    must fail with MPI_ERR_ARG or MPI_ERR_UNSUPPORTED_OPERATION.
 * After each failure the view in force is unchanged.
 */
#include "io_common.h"

static void expect_fail(int rc, int cls1, int cls2, const char *what)
{
    const int cls = rc == MPI_SUCCESS ? MPI_SUCCESS : check_error_class(rc);
    CHECKF(rc != MPI_SUCCESS && (cls == cls1 || cls == cls2),
           "%s: class %d, expected %d or %d", what, cls, cls1, cls2);
}

static void expect_default_view(MPI_File fh)
{
    MPI_Offset d = -1;
    MPI_Datatype et, ft;
    char rep[MPI_MAX_DATAREP_STRING + 1];
    CHECK_MPI(MPI_File_get_view(fh, &d, &et, &ft, rep));
    CHECK(d == 0 && et == MPI_BYTE && ft == MPI_BYTE && strcmp(rep, "native") == 0);
}

int main(int argc, char **argv)
{
    CHECK_MPI(MPI_Init(&argc, &argv));
    char path[IO_PATH_MAX];
    MPI_File fh;
    io_open_scratch(MPI_COMM_WORLD, "io_errors_strict", path, &fh);
    MPI_Datatype three, holed;
    CHECK_MPI(MPI_Type_contiguous(3, MPI_INT, &three));
    CHECK_MPI(MPI_Type_commit(&three));
    CHECK_MPI(MPI_Type_create_resized(MPI_INT, 0, 6, &holed));
    CHECK_MPI(MPI_Type_commit(&holed));

    expect_fail(MPI_File_set_view(fh, 0, MPI_DOUBLE, MPI_INT, "native", MPI_INFO_NULL),
                MPI_ERR_ARG, MPI_ERR_TYPE, "etype MPI_DOUBLE, filetype MPI_INT");
    expect_default_view(fh);
    expect_fail(MPI_File_set_view(fh, 0, MPI_DOUBLE, three, "native", MPI_INFO_NULL), MPI_ERR_ARG,
                MPI_ERR_TYPE, "etype MPI_DOUBLE, filetype 3 x MPI_INT");
    expect_default_view(fh);
    expect_fail(MPI_File_set_view(fh, 0, MPI_INT, holed, "native", MPI_INFO_NULL), MPI_ERR_IO,
                MPI_ERR_TYPE, "etype MPI_INT, filetype with a 2-byte hole");
    expect_default_view(fh);
    expect_fail(MPI_File_set_view(fh, -8, MPI_INT, MPI_INT, "native", MPI_INFO_NULL), MPI_ERR_ARG,
                MPI_ERR_TYPE, "negative displacement");
    expect_default_view(fh);
    expect_fail(MPI_File_set_view(fh, MPI_DISPLACEMENT_CURRENT, MPI_INT, MPI_INT, "native",
                                  MPI_INFO_NULL),
                MPI_ERR_ARG, MPI_ERR_UNSUPPORTED_OPERATION,
                "MPI_DISPLACEMENT_CURRENT on a file not opened MPI_MODE_SEQUENTIAL");
    expect_default_view(fh);
    /* a valid one still works */
    CHECK_MPI(MPI_File_set_view(fh, 0, MPI_INT, three, "native", MPI_INFO_NULL));

    CHECK_MPI(MPI_Type_free(&three));
    CHECK_MPI(MPI_Type_free(&holed));
    CHECK_MPI(MPI_File_close(&fh));
    CHECK_MPI(MPI_Finalize());
    return 0;
}
