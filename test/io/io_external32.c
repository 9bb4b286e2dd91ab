/*
 * The "external32" data representation (MPI-3.1 13.5.2) with values that
 * take as many bytes in the file as in memory (int, double, char), so that
 * MPICH's ROMIO, which converts values but keeps the native layout, runs it
 * too (io_datarep.c checks the layouts that change size):
 *  - every rank writes N ints and N doubles of its own at view offsets of
 *    its own with MPI_File_write_at_all through a view in external32;
 *    rank 0 then reads the file through the default view (bytes) and
 *    checks every value's bytes: big-endian two's complement for the ints,
 *    big-endian IEEE 754 binary64 for the doubles;
 *  - the values read back through the external32 view (explicit offsets,
 *    collective, and the individual file pointer) equal those written,
 *    and the statuses count them;
 *  - a view whose filetype is a vector of ints (every rank owns every
 *    size-th int) written in external32 puts rank r's ints at 4 * (r +
 *    size * i), big-endian;
 *  - MPI_File_get_view gives back "external32";
 *  - MPICH's io/external32_derived_dtype: an indexed type of two chars as
 *    both etype and filetype, written and read back collectively at view
 *    offset rank.
 */
#include "io_common.h"

#include <stdint.h>

enum { N = 6 };

static int ival(int rank, int i) { return (rank - 2) * 100003 + i * 7 - 50; }
static double dval(int rank, int i) { return (rank + 1) * -1.25 + i / 3.0; }

/* The big-endian bytes of a 4-byte or 8-byte value, computed without
 * knowing this machine's byte order. */
static void be32(int32_t v, unsigned char out[4])
{
    const uint32_t u = (uint32_t)v;
    for (int k = 0; k < 4; ++k)
        out[k] = (unsigned char)(u >> (24 - 8 * k));
}

static void be64(double d, unsigned char out[8])
{
    uint64_t u;
    memcpy(&u, &d, sizeof u);
    for (int k = 0; k < 8; ++k)
        out[k] = (unsigned char)(u >> (56 - 8 * k));
}

static void ints_and_doubles(MPI_Comm comm, int rank, int size)
{
    char path[IO_PATH_MAX];
    MPI_File fh;
    io_open_scratch(comm, "external32", path, &fh);

    /* Ints at view offsets rank * N (etype MPI_INT), then doubles from byte
     * 4 * N * size on (etype MPI_DOUBLE). */
    int iv[N];
    double dv[N];
    for (int i = 0; i < N; ++i) {
        iv[i] = ival(rank, i);
        dv[i] = dval(rank, i);
    }
    MPI_Status st;
    CHECK_MPI(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "external32", MPI_INFO_NULL));
    char rep[MPI_MAX_DATAREP_STRING + 1] = "";
    MPI_Offset disp = -1;
    MPI_Datatype et, ft;
    CHECK_MPI(MPI_File_get_view(fh, &disp, &et, &ft, rep));
    CHECKF(strcmp(rep, "external32") == 0, "MPI_File_get_view: datarep \"%s\"", rep);
    CHECK(disp == 0 && et == MPI_INT && ft == MPI_INT);
    CHECK_MPI(MPI_File_write_at_all(fh, (MPI_Offset)rank * N, iv, N, MPI_INT, &st));
    CHECKF(io_count(&st, MPI_INT) == N, "write_at_all of ints: status count %d", io_count(&st, MPI_INT));
    const MPI_Offset dstart = (MPI_Offset)4 * N * size;
    CHECK_MPI(MPI_File_set_view(fh, dstart, MPI_DOUBLE, MPI_DOUBLE, "external32", MPI_INFO_NULL));
    CHECK_MPI(MPI_File_write_at_all(fh, (MPI_Offset)rank * N, dv, N, MPI_DOUBLE, &st));
    CHECKF(io_count(&st, MPI_DOUBLE) == N, "write_at_all of doubles: status count %d", io_count(&st, MPI_DOUBLE));
    io_sync_barrier(fh, comm);

    /* The bytes in the file. */
    CHECK_MPI(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
    if (rank == 0) {
        MPI_Offset fsize = -1;
        CHECK_MPI(MPI_File_get_size(fh, &fsize));
        CHECKF(fsize == dstart + (MPI_Offset)8 * N * size, "file size %lld, expected %lld", (long long)fsize,
               (long long)(dstart + (MPI_Offset)8 * N * size));
        for (int r = 0; r < size; ++r) {
            for (int i = 0; i < N; ++i) {
                unsigned char got[8], want[8];
                io_read_raw(fh, (MPI_Offset)4 * (r * N + i), got, 4);
                be32(ival(r, i), want);
                CHECKF(memcmp(got, want, 4) == 0, "int %d of rank %d: bytes %02x %02x %02x %02x, expected %02x %02x "
                       "%02x %02x", i, r, got[0], got[1], got[2], got[3], want[0], want[1], want[2], want[3]);
                io_read_raw(fh, dstart + (MPI_Offset)8 * (r * N + i), got, 8);
                be64(dval(r, i), want);
                CHECKF(memcmp(got, want, 8) == 0, "double %d of rank %d is not big-endian binary64 (first byte "
                       "%02x, expected %02x)", i, r, got[0], want[0]);
            }
        }
    }

    /* Read back through external32 views: the neighbour's ints at explicit
     * offsets (collective), our doubles through the individual pointer. */
    const int peer = (rank + 1) % size;
    int ib[N];
    double db[N];
    memset(ib, 0, sizeof ib);
    CHECK_MPI(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "external32", MPI_INFO_NULL));
    CHECK_MPI(MPI_File_read_at_all(fh, (MPI_Offset)peer * N, ib, N, MPI_INT, &st));
    CHECKF(io_count(&st, MPI_INT) == N, "read_at_all of ints: status count %d", io_count(&st, MPI_INT));
    for (int i = 0; i < N; ++i)
        CHECKF(ib[i] == ival(peer, i), "int %d of rank %d read back as %d, expected %d", i, peer, ib[i], ival(peer, i));
    CHECK_MPI(MPI_File_set_view(fh, dstart, MPI_DOUBLE, MPI_DOUBLE, "external32", MPI_INFO_NULL));
    CHECK_MPI(MPI_File_seek(fh, (MPI_Offset)rank * N, MPI_SEEK_SET));
    memset(db, 0, sizeof db);
    CHECK_MPI(MPI_File_read(fh, db, N, MPI_DOUBLE, &st));
    CHECKF(io_count(&st, MPI_DOUBLE) == N, "read of doubles: status count %d", io_count(&st, MPI_DOUBLE));
    for (int i = 0; i < N; ++i)
        CHECKF(db[i] == dval(rank, i), "double %d read back as %g, expected %g", i, db[i], dval(rank, i));
    MPI_Offset pos = -1;
    CHECK_MPI(MPI_File_get_position(fh, &pos));
    CHECKF(pos == (MPI_Offset)(rank + 1) * N, "file pointer at %lld after the read, expected %lld", (long long)pos,
           (long long)(rank + 1) * N);
    CHECK_MPI(MPI_File_close(&fh));
}

/* A vector filetype: rank r owns ints r, r + size, r + 2 * size, ... */
static void strided(MPI_Comm comm, int rank, int size)
{
    char path[IO_PATH_MAX];
    MPI_File fh;
    io_open_scratch(comm, "external32_vec", path, &fh);
    MPI_Datatype vec, ft;
    CHECK_MPI(MPI_Type_vector(N, 1, size, MPI_INT, &vec));
    CHECK_MPI(MPI_Type_create_resized(vec, 0, (MPI_Aint)4 * N * size, &ft));
    CHECK_MPI(MPI_Type_commit(&ft));
    CHECK_MPI(MPI_File_set_view(fh, (MPI_Offset)4 * rank, MPI_INT, ft, "external32", MPI_INFO_NULL));
    int iv[N];
    for (int i = 0; i < N; ++i)
        iv[i] = ival(rank, i) ^ 0x5a5a;
    MPI_Status st;
    CHECK_MPI(MPI_File_write_all(fh, iv, N, MPI_INT, &st));
    io_sync_barrier(fh, comm);
    CHECK_MPI(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
    if (rank == 0) {
        for (int r = 0; r < size; ++r) {
            for (int i = 0; i < N; ++i) {
                unsigned char got[4], want[4];
                io_read_raw(fh, (MPI_Offset)4 * (r + size * i), got, 4);
                be32(ival(r, i) ^ 0x5a5a, want);
                CHECKF(memcmp(got, want, 4) == 0, "strided int %d of rank %d: wrong bytes at %d", i, r,
                       4 * (r + size * i));
            }
        }
    }
    CHECK_MPI(MPI_Barrier(comm));
    CHECK_MPI(MPI_File_set_view(fh, (MPI_Offset)4 * rank, MPI_INT, ft, "external32", MPI_INFO_NULL));
    int ib[N];
    memset(ib, 0, sizeof ib);
    CHECK_MPI(MPI_File_read_all(fh, ib, N, MPI_INT, &st));
    for (int i = 0; i < N; ++i)
        CHECKF(ib[i] == (ival(rank, i) ^ 0x5a5a), "strided int %d read back as %d", i, ib[i]);
    CHECK_MPI(MPI_File_close(&fh));
    CHECK_MPI(MPI_Type_free(&ft));
    CHECK_MPI(MPI_Type_free(&vec));
}

/* MPICH's io/external32_derived_dtype.c, with the data checked. */
static void derived_chars(MPI_Comm comm, int rank)
{
    char path[IO_PATH_MAX];
    io_path(comm, "external32_dt", 0, path);
    MPI_Datatype dt;
    const int blocks[2] = {1, 1}, disps[2] = {0, 1};
    CHECK_MPI(MPI_Type_indexed(2, blocks, disps, MPI_CHAR, &dt));
    CHECK_MPI(MPI_Type_commit(&dt));
    char buf[2] = {(char)('a' + rank % 26), (char)('A' + rank % 26)};
    MPI_File fh;
    MPI_Status st;
    CHECK_MPI(MPI_File_open(comm, path, MPI_MODE_WRONLY | MPI_MODE_CREATE, MPI_INFO_NULL, &fh));
    CHECK_MPI(MPI_File_set_size(fh, 0));
    CHECK_MPI(MPI_File_set_view(fh, 0, dt, dt, "external32", MPI_INFO_NULL));
    CHECK_MPI(MPI_File_write_at_all(fh, rank, buf, 1, dt, &st));
    CHECK_MPI(MPI_File_close(&fh));
    const int peer = rank ^ 1;
    int size = 0;
    CHECK_MPI(MPI_Comm_size(comm, &size));
    CHECK_MPI(MPI_File_open(comm, path, MPI_MODE_RDONLY | MPI_MODE_DELETE_ON_CLOSE, MPI_INFO_NULL, &fh));
    CHECK_MPI(MPI_File_set_view(fh, 0, dt, dt, "external32", MPI_INFO_NULL));
    const int from = peer < size ? peer : rank;
    char got[2] = {0, 0};
    CHECK_MPI(MPI_File_read_at_all(fh, from, got, 1, dt, &st));
    CHECKF(got[0] == (char)('a' + from % 26) && got[1] == (char)('A' + from % 26),
           "chars of rank %d read back as '%c%c'", from, got[0], got[1]);
    CHECK_MPI(MPI_File_close(&fh));
    CHECK_MPI(MPI_Type_free(&dt));
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank = 0, size = 0;
    CHECK_MPI(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    CHECK_MPI(MPI_Comm_size(MPI_COMM_WORLD, &size));
    ints_and_doubles(MPI_COMM_WORLD, rank, size);
    strided(MPI_COMM_WORLD, rank, size);
    derived_chars(MPI_COMM_WORLD, rank);
    MPI_Finalize();
    if (rank == 0)
        printf("io_external32: %d ranks OK\n", size);
    return 0;
}
