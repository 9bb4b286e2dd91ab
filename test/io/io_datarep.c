/*
 * Data representations whose file sizes differ from memory (MPI-3.1 13.5),
 * and user-defined ones (MPI_Register_datarep, 13.5.3):
 *  - "external32" sizes: MPI_File_get_type_extent gives 4 for MPI_LONG, 16
 *    for MPI_LONG_DOUBLE, 12 for MPI_DOUBLE_INT, and scales a vector of
 *    longs (3 longs of extent: 12); longs written through an external32
 *    view take 4 big-endian bytes each in the file, at positions the
 *    scaled vector filetype gives, and read back equal;
 *  - a long that 4 bytes cannot hold is MPI_ERR_CONVERSION, and nothing of
 *    that write reaches the file; in a collective write, the rank with the
 *    bad value gets MPI_ERR_CONVERSION and no rank hangs;
 *  - a registered representation "shmpi_test_wide" stores each int as 8
 *    little-endian bytes: the extent function says 8, and the conversion
 *    functions get the user's own datatype (a vector with gaps) with
 *    counts of ints and positions into the tiled type.  The file holds the
 *    8-byte values; they read back into a contiguous buffer; a read that
 *    meets the end of the file converts and counts only the ints there;
 *  - a conversion function that fails makes the access fail with
 *    MPI_ERR_CONVERSION, and nothing is written;
 *  - MPI_CONVERSION_FN_NULL: values move as they are in memory;
 *  - MPI_Register_datarep errors: a name already taken (a registered one,
 *    "external32") is MPI_ERR_DUP_DATAREP; a NULL extent function and a
 *    name too long for MPI_MAX_DATAREP_STRING are MPI_ERR_ARG.
 * shmpi_only: MPICH 4.0.2's ROMIO refuses conversion functions
 * (MPI_ERR_CONVERSION from MPI_Register_datarep) and lays external32 files
 * out with the native sizes, so it fails the first and third points.
 */
#include "io_common.h"

#include <limits.h>
#include <stdint.h>

enum { N = 6 };

struct calls {
    int extents, reads, writes;
};

/* ---- "shmpi_test_wide": an int is 8 little-endian bytes in the file ---- */

static int wide_extent(MPI_Datatype t, MPI_Aint *extent, void *extra)
{
    ((struct calls *)extra)->extents++;
    if (t != MPI_INT)
        return MPI_ERR_TYPE;
    *extent = 8;
    return MPI_SUCCESS;
}

/* Elements of `dt` (all ints) at `userbuf` that hold ints [position,
 * position + count) of the tiled type: packed into `ints`, with the index
 * of int `position` there in *skip. */
static int *tiled_ints(void *userbuf, MPI_Datatype dt, int count, MPI_Offset position, int *nel, int *skip,
                       char **first)
{
    int tsize = 0;
    MPI_Aint lb = 0, extent = 0;
    CHECK_MPI(MPI_Type_size(dt, &tsize));
    CHECK_MPI(MPI_Type_get_extent(dt, &lb, &extent));
    const int per = tsize / (int)sizeof(int);
    const MPI_Offset el0 = position / per;
    *nel = (int)((position + count + per - 1) / per - el0);
    *skip = (int)(position - el0 * per);
    *first = (char *)userbuf + el0 * extent;
    int *ints = malloc((size_t)*nel * (size_t)tsize);
    CHECK(ints != NULL);
    int at = 0;
    CHECK_MPI(MPI_Pack(*first, *nel, dt, ints, *nel * tsize, &at, MPI_COMM_SELF));
    return ints;
}

static int wide_write(void *userbuf, MPI_Datatype dt, int count, void *filebuf, MPI_Offset position, void *extra)
{
    ((struct calls *)extra)->writes++;
    int nel = 0, skip = 0;
    char *first = NULL;
    int *ints = tiled_ints(userbuf, dt, count, position, &nel, &skip, &first);
    unsigned char *out = filebuf;
    for (int k = 0; k < count; ++k) {
        const uint64_t v = (uint64_t)(int64_t)ints[skip + k];
        for (int b = 0; b < 8; ++b)
            out[8 * k + b] = (unsigned char)(v >> (8 * b));
    }
    free(ints);
    return MPI_SUCCESS;
}

static int wide_read(void *userbuf, MPI_Datatype dt, int count, void *filebuf, MPI_Offset position, void *extra)
{
    ((struct calls *)extra)->reads++;
    int nel = 0, skip = 0, tsize = 0;
    char *first = NULL;
    int *ints = tiled_ints(userbuf, dt, count, position, &nel, &skip, &first);
    const unsigned char *in = filebuf;
    for (int k = 0; k < count; ++k) {
        uint64_t v = 0;
        for (int b = 0; b < 8; ++b)
            v |= (uint64_t)in[8 * k + b] << (8 * b);
        ints[skip + k] = (int)(int64_t)v;
    }
    CHECK_MPI(MPI_Type_size(dt, &tsize));
    int at = 0;
    CHECK_MPI(MPI_Unpack(ints, nel * tsize, &at, first, nel, dt, MPI_COMM_SELF));
    free(ints);
    return MPI_SUCCESS;
}

static int failing_write(void *userbuf, MPI_Datatype dt, int count, void *filebuf, MPI_Offset position,
                         void *extra)
{
    (void)userbuf, (void)dt, (void)count, (void)filebuf, (void)position, (void)extra;
    return MPI_ERR_OTHER;
}

static int native_extent(MPI_Datatype t, MPI_Aint *extent, void *extra)
{
    (void)extra;
    int s = 0;
    const int rc = MPI_Type_size(t, &s);
    *extent = s;
    return rc;
}

static int wval(int rank, int i) { return (i % 2 ? -1 : 1) * (rank * 1000 + i * 17 + 3); }

static MPI_Aint type_extent(MPI_File fh, MPI_Datatype t)
{
    MPI_Aint e = -1;
    CHECK_MPI(MPI_File_get_type_extent(fh, t, &e));
    return e;
}

/* ------------------------------------------------------------ external32 */

static void external32_sizes(MPI_Comm comm, int rank, int size)
{
    char path[IO_PATH_MAX];
    MPI_File fh;
    io_open_scratch(comm, "datarep_e32", path, &fh);
    MPI_Datatype vec;
    CHECK_MPI(MPI_Type_vector(2, 1, 2, MPI_LONG, &vec));
    CHECK_MPI(MPI_Type_commit(&vec));
    CHECK_MPI(MPI_File_set_view(fh, 0, MPI_LONG, MPI_LONG, "external32", MPI_INFO_NULL));
    CHECKF(type_extent(fh, MPI_LONG) == 4, "external32 extent of MPI_LONG: %ld", (long)type_extent(fh, MPI_LONG));
    CHECKF(type_extent(fh, MPI_LONG_DOUBLE) == 16, "external32 extent of MPI_LONG_DOUBLE: %ld",
           (long)type_extent(fh, MPI_LONG_DOUBLE));
    CHECKF(type_extent(fh, MPI_DOUBLE_INT) == 12, "external32 extent of MPI_DOUBLE_INT: %ld",
           (long)type_extent(fh, MPI_DOUBLE_INT));
    CHECKF(type_extent(fh, vec) == 12, "external32 extent of a vector of 3 longs' extent: %ld",
           (long)type_extent(fh, vec));

    /* A resized type keeps the byte extent it was given (sizeof(long) * 3 *
     * size bytes) in the file: it is not a portable type. */
    MPI_Datatype ft;
    CHECK_MPI(MPI_Type_create_resized(vec, 0, (MPI_Aint)sizeof(long) * 3 * size, &ft));
    CHECK_MPI(MPI_Type_commit(&ft));
    CHECK_MPI(MPI_File_set_view(fh, 0, MPI_LONG, ft, "external32", MPI_INFO_NULL));
    CHECKF(type_extent(fh, ft) == (MPI_Aint)sizeof(long) * 3 * size, "external32 extent of the resized type: %ld",
           (long)type_extent(fh, ft));
    CHECK_MPI(MPI_File_set_view(fh, (MPI_Offset)12 * rank, MPI_LONG, vec, "external32", MPI_INFO_NULL));
    /* The vector as filetype: rank r's 2 longs land at bytes 12 * r and
     * 12 * r + 8 (the vector's second long is 2 longs after its first). */
    long lv[2] = {-(long)rank * 70001 - 5, 2147483647L - (long)rank * 3};
    MPI_Status st;
    CHECK_MPI(MPI_File_write_at_all(fh, 0, lv, 2, MPI_LONG, &st));
    CHECKF(io_count(&st, MPI_LONG) == 2, "write of 2 longs: status count %d", io_count(&st, MPI_LONG));
    io_sync_barrier(fh, comm);
    CHECK_MPI(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
    if (rank == 0) {
        CHECKF(io_file_size(fh) == (MPI_Offset)12 * size, "file size %lld, expected %lld",
               (long long)io_file_size(fh), (long long)12 * size);
        for (int r = 0; r < size; ++r) {
            const long want[2] = {-(long)r * 70001 - 5, 2147483647L - (long)r * 3};
            for (int j = 0; j < 2; ++j) {
                unsigned char got[4];
                io_read_raw(fh, (MPI_Offset)12 * r + 8 * j, got, 4);
                const uint32_t u = (uint32_t)(int32_t)want[j];
                const unsigned char be[4] = {(unsigned char)(u >> 24), (unsigned char)(u >> 16),
                                             (unsigned char)(u >> 8), (unsigned char)u};
                CHECKF(memcmp(got, be, 4) == 0, "long %d of rank %d: bytes %02x%02x%02x%02x at %d", j, r, got[0],
                       got[1], got[2], got[3], 12 * r + 8 * j);
            }
        }
    }
    CHECK_MPI(MPI_Barrier(comm));
    CHECK_MPI(MPI_File_set_view(fh, (MPI_Offset)12 * ((rank + 1) % size), MPI_LONG, vec, "external32",
                                MPI_INFO_NULL));
    long back[2] = {0, 0};
    CHECK_MPI(MPI_File_read_at_all(fh, 0, back, 2, MPI_LONG, &st));
    const int p = (rank + 1) % size;
    CHECKF(back[0] == -(long)p * 70001 - 5 && back[1] == 2147483647L - (long)p * 3,
           "longs of rank %d read back as %ld %ld", p, back[0], back[1]);
    CHECKF(io_count(&st, MPI_LONG) == 2, "read of 2 longs: status count %d", io_count(&st, MPI_LONG));
    CHECK_MPI(MPI_Barrier(comm));

    /* A long 4 bytes cannot hold: nothing written. */
    if (sizeof(long) > 4) {
        const MPI_Offset before = io_file_size(fh);
        long big[2] = {1, (long)INT_MAX + 1};
        CHECK_MPI(MPI_File_set_view(fh, before + (MPI_Offset)100 * rank, MPI_LONG, MPI_LONG, "external32",
                                    MPI_INFO_NULL));
        EXPECT_CLASS(MPI_File_write_at(fh, 0, big, 2, MPI_LONG, &st), MPI_ERR_CONVERSION);
        CHECK_MPI(MPI_Barrier(comm));
        CHECKF(io_file_size(fh) == before, "a write that failed to convert changed the file size to %lld",
               (long long)io_file_size(fh));
        CHECK_MPI(MPI_Barrier(comm));
        /* Collective: rank 0's value does not fit; it learns why, and no
         * rank waits for it. */
        long mine[2] = {rank == 0 ? LONG_MIN : rank, 2};
        const int rc = MPI_File_write_at_all(fh, 0, mine, 2, MPI_LONG, &st);
        if (rank == 0)
            EXPECT_CLASS(rc, MPI_ERR_CONVERSION);
        CHECK_MPI(MPI_Barrier(comm));
    }
    CHECK_MPI(MPI_File_close(&fh));
    CHECK_MPI(MPI_Type_free(&ft));
    CHECK_MPI(MPI_Type_free(&vec));
}

/* ------------------------------------------------------ registered ones */

static void wide(MPI_Comm comm, int rank, int size, struct calls *c)
{
    char path[IO_PATH_MAX];
    MPI_File fh;
    io_open_scratch(comm, "datarep_wide", path, &fh);
    CHECK_MPI(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "shmpi_test_wide", MPI_INFO_NULL));
    char rep[MPI_MAX_DATAREP_STRING + 1] = "";
    MPI_Offset disp;
    MPI_Datatype et, ft;
    CHECK_MPI(MPI_File_get_view(fh, &disp, &et, &ft, rep));
    CHECKF(strcmp(rep, "shmpi_test_wide") == 0, "MPI_File_get_view: datarep \"%s\"", rep);
    CHECKF(type_extent(fh, MPI_INT) == 8, "extent of MPI_INT in shmpi_test_wide: %ld", (long)type_extent(fh, MPI_INT));
    CHECK(c->extents >= 1);

    /* Every other int of a 2N-int array: N/3 copies of a vector of 3 ints
     * with gaps, resized to 6 ints. */
    int src[2 * N];
    for (int i = 0; i < 2 * N; ++i)
        src[i] = i % 2 ? -777 : wval(rank, i / 2);
    MPI_Datatype vec, every_other;
    CHECK_MPI(MPI_Type_vector(3, 1, 2, MPI_INT, &vec));
    CHECK_MPI(MPI_Type_create_resized(vec, 0, (MPI_Aint)(6 * sizeof(int)), &every_other));
    CHECK_MPI(MPI_Type_commit(&every_other));
    CHECK_MPI(MPI_Type_free(&vec));
    MPI_Status st;
    CHECK_MPI(MPI_File_write_at_all(fh, (MPI_Offset)rank * N, src, N / 3, every_other, &st));
    CHECKF(io_count(&st, every_other) == N / 3, "write: status count %d", io_count(&st, every_other));
    CHECK(c->writes >= 1);
    io_sync_barrier(fh, comm);

    CHECK_MPI(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
    if (rank == 0) {
        CHECKF(io_file_size(fh) == (MPI_Offset)8 * N * size, "file size %lld, expected %lld", (long long)io_file_size(fh),
               (long long)8 * N * size);
        for (int r = 0; r < size; ++r) {
            for (int i = 0; i < N; ++i) {
                unsigned char got[8];
                io_read_raw(fh, (MPI_Offset)8 * (r * N + i), got, 8);
                uint64_t v = 0;
                for (int b = 0; b < 8; ++b)
                    v |= (uint64_t)got[b] << (8 * b);
                CHECKF((int64_t)v == wval(r, i), "int %d of rank %d is %lld in the file, expected %d", i, r,
                       (long long)(int64_t)v, wval(r, i));
            }
        }
    }
    CHECK_MPI(MPI_Barrier(comm));

    /* Back into a contiguous buffer: the neighbour's ints. */
    CHECK_MPI(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "shmpi_test_wide", MPI_INFO_NULL));
    const int p = (rank + 1) % size;
    int dst[N + 2];
    for (int i = 0; i < N + 2; ++i)
        dst[i] = -1;
    CHECK_MPI(MPI_File_read_at_all(fh, (MPI_Offset)p * N, dst, N, MPI_INT, &st));
    CHECK(c->reads >= 1);
    CHECKF(io_count(&st, MPI_INT) == N, "read: status count %d", io_count(&st, MPI_INT));
    for (int i = 0; i < N; ++i)
        CHECKF(dst[i] == wval(p, i), "int %d of rank %d read back as %d, expected %d", i, p, dst[i], wval(p, i));

    /* Over the end of the file: the 3 ints there, and nothing past them. */
    for (int i = 0; i < N + 2; ++i)
        dst[i] = -1;
    CHECK_MPI(MPI_File_read_at(fh, (MPI_Offset)size * N - 3, dst, N, MPI_INT, &st));
    CHECKF(io_count(&st, MPI_INT) == 3, "read over the end: status count %d, expected 3", io_count(&st, MPI_INT));
    for (int i = 0; i < 3; ++i)
        CHECKF(dst[i] == wval(size - 1, N - 3 + i), "int %d at the end read as %d", i, dst[i]);
    CHECKF(dst[3] == -1, "the read over the end stored past the file's ints: %d", dst[3]);
    CHECK_MPI(MPI_File_close(&fh));
    CHECK_MPI(MPI_Type_free(&every_other));
}

static void failing_and_as_is(MPI_Comm comm, int rank, int size)
{
    char path[IO_PATH_MAX];
    MPI_File fh;
    io_open_scratch(comm, "datarep_fail", path, &fh);
    CHECK_MPI(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "shmpi_test_failing", MPI_INFO_NULL));
    int v[N];
    for (int i = 0; i < N; ++i)
        v[i] = wval(rank, i);
    MPI_Status st;
    EXPECT_CLASS(MPI_File_write_at(fh, (MPI_Offset)rank * N, v, N, MPI_INT, &st), MPI_ERR_CONVERSION);
    CHECK_MPI(MPI_Barrier(comm));
    CHECKF(io_file_size(fh) == 0, "a write whose conversion failed wrote %lld bytes", (long long)io_file_size(fh));

    /* No conversion functions: values as in memory. */
    CHECK_MPI(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "shmpi_test_as_is", MPI_INFO_NULL));
    CHECK_MPI(MPI_File_write_at_all(fh, (MPI_Offset)rank * N, v, N, MPI_INT, &st));
    io_sync_barrier(fh, comm);
    CHECK_MPI(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "native", MPI_INFO_NULL));
    int back[N];
    const int p = (rank + size - 1) % size;
    CHECK_MPI(MPI_File_read_at(fh, (MPI_Offset)p * N, back, N, MPI_INT, &st));
    for (int i = 0; i < N; ++i)
        CHECKF(back[i] == wval(p, i), "as-is int %d of rank %d read natively as %d", i, p, back[i]);
    CHECK_MPI(MPI_File_close(&fh));
}

static void registration_errors(struct calls *c)
{
    EXPECT_CLASS(MPI_Register_datarep("shmpi_test_wide", wide_read, wide_write, wide_extent, c), MPI_ERR_DUP_DATAREP);
    EXPECT_CLASS(MPI_Register_datarep("external32", MPI_CONVERSION_FN_NULL, MPI_CONVERSION_FN_NULL, native_extent,
                                      NULL),
                 MPI_ERR_DUP_DATAREP);
    EXPECT_CLASS(MPI_Register_datarep("shmpi_test_no_extent", wide_read, wide_write, NULL, NULL), MPI_ERR_ARG);
    char name[MPI_MAX_DATAREP_STRING + 2];
    memset(name, 'x', sizeof name - 1);
    name[sizeof name - 1] = '\0';
    EXPECT_CLASS(MPI_Register_datarep(name, wide_read, wide_write, wide_extent, c), MPI_ERR_ARG);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank = 0, size = 0;
    CHECK_MPI(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    CHECK_MPI(MPI_Comm_size(MPI_COMM_WORLD, &size));
    struct calls c = {0, 0, 0};
    CHECK_MPI(MPI_Register_datarep("shmpi_test_wide", wide_read, wide_write, wide_extent, &c));
    CHECK_MPI(MPI_Register_datarep("shmpi_test_failing", wide_read, failing_write, wide_extent, &c));
    CHECK_MPI(MPI_Register_datarep("shmpi_test_as_is", MPI_CONVERSION_FN_NULL, MPI_CONVERSION_FN_NULL,
                                   native_extent, NULL));
    external32_sizes(MPI_COMM_WORLD, rank, size);
    wide(MPI_COMM_WORLD, rank, size, &c);
    failing_and_as_is(MPI_COMM_WORLD, rank, size);
    registration_errors(&c);
    MPI_Finalize();
    if (rank == 0)
        printf("io_datarep: %d ranks OK\n", size);
    return 0;
}
