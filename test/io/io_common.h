/*
 * io_common.h: helpers shared by the MPI-IO test programs (MPI-3.1 chapter
 * 13), on top of test/mpi's check.h.  Include it first: it asks for the
 * POSIX declarations (getpid) before any system header is read.
 *
 * Tests run in parallel (meson, several rank counts of one program at once),
 * so every file gets a name of its own: rank 0 of the communicator builds
 * "<dir>/shmpi_io_<prog>_<pid>_<n>", with dir = $TMPDIR or /tmp, and
 * broadcasts it.
 */
#ifndef SHMPI_TEST_IO_COMMON_H
#define SHMPI_TEST_IO_COMMON_H

#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include <unistd.h>

#include "check.h"

enum { IO_PATH_MAX = 512 };

/* Fills `path` (IO_PATH_MAX chars) with a name no other test uses, the same
 * on every rank of `comm`.  A stale file of that name (a crashed earlier run
 * with the same pid) is removed first. */
static inline void io_path(MPI_Comm comm, const char *prog, int n, char *path)
{
    int rank = 0;
    CHECK_MPI(MPI_Comm_rank(comm, &rank));
    memset(path, 0, IO_PATH_MAX);
    if (rank == 0) {
        const char *dir = getenv("TMPDIR");
        if (dir == NULL || dir[0] == '\0')
            dir = "/tmp";
        const int len = snprintf(path, IO_PATH_MAX, "%s/shmpi_io_%s_%ld_%d", dir, prog,
                                 (long)getpid(), n);
        CHECKF(len > 0 && len < IO_PATH_MAX, "file name too long for %s", dir);
        (void)MPI_File_delete(path, MPI_INFO_NULL); /* usually MPI_ERR_NO_SUCH_FILE */
    }
    CHECK_MPI(MPI_Bcast(path, IO_PATH_MAX, MPI_CHAR, 0, comm));
}

/* MPI_File_open of `path` on `comm` with MPI_MODE_CREATE | MPI_MODE_RDWR |
 * MPI_MODE_DELETE_ON_CLOSE: a scratch file that goes when it is closed. */
static inline void io_open_temp(MPI_Comm comm, const char *path, MPI_File *fh)
{
    CHECK_MPI(MPI_File_open(comm, path, MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE,
                            MPI_INFO_NULL, fh));
}

/* io_path(), then io_open_temp() of that name. */
static inline void io_open_scratch(MPI_Comm comm, const char *prog, char *path, MPI_File *fh)
{
    io_path(comm, prog, 0, path);
    io_open_temp(comm, path, fh);
}

/* EXPECT_CLASS(call, cls): the call must fail with an error of class cls. */
#define EXPECT_CLASS(call, cls) io_expect_class((call), (cls), #call, __FILE__, __LINE__)

static inline void io_expect_class(int rc, int cls, const char *call, const char *file, int line)
{
    if (rc == MPI_SUCCESS || check_error_class(rc) != cls) {
        char msg[MPI_MAX_ERROR_STRING] = "";
        int len = 0;
        if (rc != MPI_SUCCESS)
            MPI_Error_string(rc, msg, &len);
        check_fail(file, line, call, "returned class %d (%s), expected class %d",
                   rc == MPI_SUCCESS ? 0 : check_error_class(rc), msg, cls);
    }
}

/* The number of elements of `type` a completed access moved (MPI_Get_count
 * on its status). */
static inline int io_count(const MPI_Status *st, MPI_Datatype type)
{
    int count = -1;
    CHECK_MPI(MPI_Get_count(st, type, &count));
    return count;
}

/* The file's size (MPI_File_get_size). */
static inline MPI_Offset io_file_size(MPI_File fh)
{
    MPI_Offset size = -1;
    CHECK_MPI(MPI_File_get_size(fh, &size));
    return size;
}

/* Reads `n` bytes at `at` (a byte view's offset: the default view's bytes
 * of the file) with MPI_File_read_at; all of them must come. */
static inline void io_read_raw(MPI_File fh, MPI_Offset at, unsigned char *buf, int n)
{
    MPI_Status st;
    CHECK_MPI(MPI_File_read_at(fh, at, buf, n, MPI_BYTE, &st));
    CHECKF(io_count(&st, MPI_BYTE) == n, "raw read of %d bytes at %lld got %d", n, (long long)at,
           io_count(&st, MPI_BYTE));
}

/* MPICH 4.0.2 (ROMIO) puts the whole request in the status of a read that
 * the end of file cuts short when the read is collective (with more than one
 * rank), when the memory type is not contiguous and when the file view is
 * not contiguous: MPI-3.1 13.4.1 asks for the number of items actually
 * read.  Under MPICH the count checks of such reads also accept the full
 * request; the data checks stay. */
#ifdef MPICH
#define ROMIO_FULL_COUNT 1
#else
#define ROMIO_FULL_COUNT 0
#endif

/* Makes the writes of every rank of `comm` visible to all (MPI-3.1 13.6.1:
 * sync, barrier, sync). */
static inline void io_sync_barrier(MPI_File fh, MPI_Comm comm)
{
    CHECK_MPI(MPI_File_sync(fh));
    CHECK_MPI(MPI_Barrier(comm));
    CHECK_MPI(MPI_File_sync(fh));
}

#endif /* SHMPI_TEST_IO_COMMON_H */
