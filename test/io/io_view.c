/*
 * File views (MPI-3.1 13.3) and the individual file pointer (13.4.3):
 *  - an interleaved view: disp HDR + r*B ints, etype MPI_INT, filetype
 *    MPI_Type_vector(K, B, size*B) resized to K*size*B ints, so rank r owns
 *    every size-th block of B ints.  Each rank writes two tiles with the
 *    individual pointer (MPI_File_write for the first, MPI_File_write_all for
 *    the second); then rank 0 rereads the file with the default view
 *    (displacement 0, MPI_BYTE, MPI_BYTE) and checks every int at its exact
 *    byte offset, and the header rank 0 wrote before (outside all views);
 *  - MPI_File_get_view (disp, etype, filetype, datarep "native"; derived
 *    types returned are new and freed here, predefined ones are not);
 *    MPI_File_get_position, MPI_File_seek with MPI_SEEK_SET / CUR / END (END:
 *    the end of file counted in etypes of the view), MPI_File_get_byte_offset
 *    (view offset -> absolute byte), MPI_File_get_type_extent (13.5.2);
 *  - a 2-D block decomposition with MPI_Type_create_subarray over the
 *    process grid of MPI_Dims_create (uneven blocks), written with
 *    MPI_File_write_all; rank 0 reads the whole array and checks it;
 *  - a view with a displacement and etype MPI_DOUBLE (offsets of read_at and
 *    seek count doubles);
 *  - MPI_File_set_view resets the individual and shared pointers to 0.
 */
#include "io_common.h"

enum { B = 3, K = 2, HDR = 16, TILES = 2 };

static int vval(int rank, int o) { return 1000000 + rank * 10000 + o; }

/* The absolute byte of view offset o (in ints) of rank r. */
static MPI_Offset view_byte(int r, int size, MPI_Offset o)
{
    const MPI_Offset tile = o / (K * B), w = o % (K * B), j = w / B, i = w % B;
    return HDR + (MPI_Offset)r * B * 4 + tile * K * size * B * 4 + j * size * B * 4 + i * 4;
}

static int is_named(MPI_Datatype t)
{
    int ni, na, nd, comb;
    CHECK_MPI(MPI_Type_get_envelope(t, &ni, &na, &nd, &comb));
    return comb == MPI_COMBINER_NAMED;
}

static void free_if_derived(MPI_Datatype *t)
{
    if (!is_named(*t))
        CHECK_MPI(MPI_Type_free(t));
}

static MPI_Offset position(MPI_File fh)
{
    MPI_Offset p = -1;
    CHECK_MPI(MPI_File_get_position(fh, &p));
    return p;
}

static MPI_Offset position_shared(MPI_File fh)
{
    MPI_Offset p = -1;
    CHECK_MPI(MPI_File_get_position_shared(fh, &p));
    return p;
}

static void interleaved(const char *path)
{
    const int rank = world_rank(), n = world_size();
    MPI_File fh;
    MPI_Status st;
    CHECK_MPI(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL,
                            &fh));
    /* the header, outside every view, written with the default view */
    const char hdr[HDR] = "shmpi io_view!!";
    if (rank == 0)
        CHECK_MPI(MPI_File_write_at(fh, 0, hdr, HDR, MPI_CHAR, &st));

    MPI_Datatype vec, ftype;
    CHECK_MPI(MPI_Type_vector(K, B, n * B, MPI_INT, &vec));
    CHECK_MPI(MPI_Type_create_resized(vec, 0, (MPI_Aint)K * n * B * sizeof(int), &ftype));
    CHECK_MPI(MPI_Type_commit(&ftype));
    const MPI_Offset disp = HDR + (MPI_Offset)rank * B * sizeof(int);
    CHECK_MPI(MPI_File_set_view(fh, disp, MPI_INT, ftype, "native", MPI_INFO_NULL));
    CHECK(position(fh) == 0);

    /* get_view */
    {
        MPI_Offset d = -1;
        MPI_Datatype et = MPI_DATATYPE_NULL, ft = MPI_DATATYPE_NULL;
        char rep[MPI_MAX_DATAREP_STRING + 1];
        memset(rep, 0, sizeof rep);
        CHECK_MPI(MPI_File_get_view(fh, &d, &et, &ft, rep));
        CHECKF(d == disp, "get_view disp %lld, expected %lld", (long long)d, (long long)disp);
        CHECK(is_named(et) && et == MPI_INT);
        CHECK(!is_named(ft));
        int sz = -1;
        MPI_Aint lb = -1, ext = -1;
        CHECK_MPI(MPI_Type_size(ft, &sz));
        CHECK(sz == K * B * (int)sizeof(int));
        CHECK_MPI(MPI_Type_get_extent(ft, &lb, &ext));
        CHECK(lb == 0 && ext == (MPI_Aint)K * n * B * (MPI_Aint)sizeof(int));
        CHECKF(strcmp(rep, "native") == 0, "datarep \"%s\"", rep);
        free_if_derived(&et);
        free_if_derived(&ft);
    }
    /* type extents in the file (native: the memory extents) */
    {
        MPI_Aint ext = -1;
        CHECK_MPI(MPI_File_get_type_extent(fh, MPI_INT, &ext));
        CHECK(ext == sizeof(int));
        CHECK_MPI(MPI_File_get_type_extent(fh, MPI_DOUBLE, &ext));
        CHECK(ext == sizeof(double));
        CHECK_MPI(MPI_File_get_type_extent(fh, ftype, &ext));
        CHECK(ext == (MPI_Aint)K * n * B * (MPI_Aint)sizeof(int));
    }

    /* tile 0 with MPI_File_write, tile 1 with MPI_File_write_all */
    const int per_tile = K * B;
    int buf[TILES * K * B];
    for (int o = 0; o < TILES * per_tile; ++o)
        buf[o] = vval(rank, o);
    /* tile 0 in two pieces, to cross a block boundary in the middle */
    CHECK_MPI(MPI_File_write(fh, buf, 2, MPI_INT, &st));
    CHECK(io_count(&st, MPI_INT) == 2);
    CHECK(position(fh) == 2);
    CHECK_MPI(MPI_File_write(fh, buf + 2, per_tile - 2, MPI_INT, &st));
    CHECK(io_count(&st, MPI_INT) == per_tile - 2);
    CHECK(position(fh) == per_tile);
    CHECK_MPI(MPI_File_write_all(fh, buf + per_tile, per_tile, MPI_INT, &st));
    CHECK(io_count(&st, MPI_INT) == per_tile);
    CHECK(position(fh) == TILES * per_tile);

    /* byte offsets of view offsets */
    for (MPI_Offset o = 0; o <= TILES * per_tile; ++o) {
        MPI_Offset b = -1;
        CHECK_MPI(MPI_File_get_byte_offset(fh, o, &b));
        CHECKF(b == view_byte(rank, n, o), "byte offset of view offset %lld: %lld, expected %lld",
               (long long)o, (long long)b, (long long)view_byte(rank, n, o));
    }

    io_sync_barrier(fh, MPI_COMM_WORLD);
    const MPI_Offset fsize = HDR + (MPI_Offset)TILES * K * n * B * 4;
    MPI_Offset got_size = -1;
    CHECK_MPI(MPI_File_get_size(fh, &got_size));
    CHECKF(got_size == fsize, "size %lld, expected %lld", (long long)got_size, (long long)fsize);

    /* seeks, in etypes of the view; every rank's view holds exactly
     * TILES * per_tile ints before the end of file */
    CHECK_MPI(MPI_File_seek(fh, 5, MPI_SEEK_SET));
    CHECK(position(fh) == 5);
    CHECK_MPI(MPI_File_seek(fh, -2, MPI_SEEK_CUR));
    CHECK(position(fh) == 3);
    CHECK_MPI(MPI_File_seek(fh, 4, MPI_SEEK_CUR));
    CHECK(position(fh) == 7);
    CHECK_MPI(MPI_File_seek(fh, 0, MPI_SEEK_END));
    CHECKF(position(fh) == TILES * per_tile, "seek END: position %lld, expected %d",
           (long long)position(fh), TILES * per_tile);
    CHECK_MPI(MPI_File_seek(fh, -1, MPI_SEEK_END));
    CHECK(position(fh) == TILES * per_tile - 1);
    /* read the last int of the view through the pointer */
    {
        int v = 0;
        CHECK_MPI(MPI_File_read(fh, &v, 1, MPI_INT, &st));
        CHECK(io_count(&st, MPI_INT) == 1);
        CHECKF(v == vval(rank, TILES * per_tile - 1), "last int %d", v);
        CHECK(position(fh) == TILES * per_tile);
        CHECK_MPI(MPI_File_read(fh, &v, 1, MPI_INT, &st));
        CHECKF(io_count(&st, MPI_INT) == 0 || (ROMIO_FULL_COUNT && io_count(&st, MPI_INT) == 1),
               "read at the view's end of file: count %d, expected 0", io_count(&st, MPI_INT));
    }
    /* read everything back through the view, collectively */
    {
        int back[TILES * K * B];
        CHECK_MPI(MPI_File_seek(fh, 0, MPI_SEEK_SET));
        CHECK_MPI(MPI_File_read_all(fh, back, TILES * per_tile, MPI_INT, &st));
        CHECK(io_count(&st, MPI_INT) == TILES * per_tile);
        for (int o = 0; o < TILES * per_tile; ++o)
            CHECK(back[o] == vval(rank, o));
        /* explicit offsets count etypes of the view */
        int two[2] = {0, 0};
        CHECK_MPI(MPI_File_read_at(fh, B - 1, two, 2, MPI_INT, &st));
        CHECK(two[0] == vval(rank, B - 1) && two[1] == vval(rank, B));
    }

    /* set_view resets both pointers */
    CHECK_MPI(MPI_File_seek_shared(fh, 4, MPI_SEEK_SET));
    CHECK(position_shared(fh) == 4);
    CHECK(position(fh) == TILES * per_tile);
    /* (all have looked before a rank that leaves seek_shared first resets it) */
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    CHECK_MPI(MPI_File_set_view(fh, disp, MPI_INT, ftype, "native", MPI_INFO_NULL));
    CHECK(position(fh) == 0);
    CHECK(position_shared(fh) == 0);

    /* back to the default view; rank 0 checks every byte */
    CHECK_MPI(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
    {
        MPI_Offset d = -1;
        MPI_Datatype et, ft;
        char rep[MPI_MAX_DATAREP_STRING + 1];
        CHECK_MPI(MPI_File_get_view(fh, &d, &et, &ft, rep));
        CHECK(d == 0 && et == MPI_BYTE && ft == MPI_BYTE && strcmp(rep, "native") == 0);
        free_if_derived(&et);
        free_if_derived(&ft);
    }
    if (rank == 0) {
        unsigned char *all = check_malloc((size_t)fsize);
        CHECK_MPI(MPI_File_read_at(fh, 0, all, (int)fsize, MPI_BYTE, &st));
        CHECK(io_count(&st, MPI_BYTE) == (int)fsize);
        CHECK(memcmp(all, hdr, HDR) == 0);
        const int nints = (int)((fsize - HDR) / 4);
        for (int g = 0; g < nints; ++g) {
            const int q = g / B, owner = q % n;
            const int o = (q / n) * B + g % B;
            int v;
            memcpy(&v, all + HDR + (size_t)g * 4, 4);
            CHECKF(v == vval(owner, o), "int %d of the file (byte %d) is %d, expected %d", g,
                   HDR + g * 4, v, vval(owner, o));
            CHECK(view_byte(owner, n, o) == HDR + (MPI_Offset)g * 4);
        }
        free(all);
    }
    CHECK_MPI(MPI_Type_free(&ftype));
    CHECK_MPI(MPI_Type_free(&vec));
    CHECK_MPI(MPI_File_close(&fh));
}

/* Splits `len` items into `parts` blocks, the first len % parts one longer. */
static void block(int len, int parts, int idx, int *start, int *count)
{
    const int base = len / parts, rem = len % parts;
    *count = base + (idx < rem ? 1 : 0);
    *start = idx * base + (idx < rem ? idx : rem);
}

static void subarray(const char *path)
{
    const int rank = world_rank(), n = world_size();
    int dims[2] = {0, 0};
    CHECK_MPI(MPI_Dims_create(n, 2, dims));
    const int GR = 3 * dims[0] + 1, GC = 2 * dims[1] + 1, SDISP = 8;
    const int pr = rank / dims[1], pc = rank % dims[1];
    int gs[2] = {GR, GC}, ls[2], st0[2];
    block(GR, dims[0], pr, &st0[0], &ls[0]);
    block(GC, dims[1], pc, &st0[1], &ls[1]);
    MPI_Datatype sub;
    CHECK_MPI(MPI_Type_create_subarray(2, gs, ls, st0, MPI_ORDER_C, MPI_INT, &sub));
    CHECK_MPI(MPI_Type_commit(&sub));

    MPI_File fh;
    MPI_Status st;
    io_open_temp(MPI_COMM_WORLD, path, &fh);
    CHECK_MPI(MPI_File_set_view(fh, SDISP, MPI_INT, sub, "native", MPI_INFO_NULL));
    const int mine = ls[0] * ls[1];
    int *loc = check_malloc((size_t)mine * sizeof(int));
    for (int i = 0; i < ls[0]; ++i)
        for (int j = 0; j < ls[1]; ++j)
            loc[i * ls[1] + j] = 5000 + (st0[0] + i) * GC + (st0[1] + j);
    CHECK_MPI(MPI_File_write_all(fh, loc, mine, MPI_INT, &st));
    CHECK(io_count(&st, MPI_INT) == mine);
    CHECK(position(fh) == mine);
    /* the first element of the block is at the expected byte */
    MPI_Offset b = -1;
    CHECK_MPI(MPI_File_get_byte_offset(fh, 0, &b));
    CHECK(b == SDISP + ((MPI_Offset)st0[0] * GC + st0[1]) * 4);
    /* the block read back through the view */
    memset(loc, 0, (size_t)mine * sizeof(int));
    CHECK_MPI(MPI_File_read_at_all(fh, 0, loc, mine, MPI_INT, &st));
    for (int i = 0; i < ls[0]; ++i)
        for (int j = 0; j < ls[1]; ++j)
            CHECK(loc[i * ls[1] + j] == 5000 + (st0[0] + i) * GC + (st0[1] + j));
    free(loc);

    io_sync_barrier(fh, MPI_COMM_WORLD);
    MPI_Offset size = -1;
    CHECK_MPI(MPI_File_get_size(fh, &size));
    CHECK(size == SDISP + (MPI_Offset)GR * GC * 4);
    CHECK_MPI(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
    if (rank == 0) {
        int *all = check_malloc((size_t)GR * GC * sizeof(int));
        CHECK_MPI(MPI_File_read_at(fh, SDISP, all, GR * GC, MPI_INT, &st));
        CHECK(io_count(&st, MPI_INT) == GR * GC);
        for (int g = 0; g < GR * GC; ++g)
            CHECKF(all[g] == 5000 + g, "array element %d is %d", g, all[g]);
        free(all);
    }
    CHECK_MPI(MPI_Type_free(&sub));
    CHECK_MPI(MPI_File_close(&fh));
}

/* etype MPI_DOUBLE, each rank a contiguous run of M doubles after 24 bytes */
static void doubles(const char *path)
{
    enum { M = 6, DDISP = 24 };
    const int rank = world_rank(), n = world_size();
    MPI_File fh;
    MPI_Status st;
    io_open_temp(MPI_COMM_WORLD, path, &fh);
    const MPI_Offset disp = DDISP + (MPI_Offset)rank * M * 8;
    CHECK_MPI(MPI_File_set_view(fh, disp, MPI_DOUBLE, MPI_DOUBLE, "native", MPI_INFO_NULL));
    double d[M], e[M];
    for (int i = 0; i < M; ++i)
        d[i] = rank + i / 8.0;
    CHECK_MPI(MPI_File_write(fh, d, M, MPI_DOUBLE, &st));
    CHECK(io_count(&st, MPI_DOUBLE) == M);
    CHECK(position(fh) == M);
    MPI_Offset b = -1;
    CHECK_MPI(MPI_File_get_byte_offset(fh, 3, &b));
    CHECK(b == disp + 24);
    memset(e, 0, sizeof e);
    CHECK_MPI(MPI_File_read_at(fh, 2, e, 3, MPI_DOUBLE, &st));
    CHECK(io_count(&st, MPI_DOUBLE) == 3);
    for (int i = 0; i < 3; ++i)
        CHECK(e[i] == d[2 + i]);
    CHECK_MPI(MPI_File_seek(fh, 1, MPI_SEEK_SET));
    CHECK_MPI(MPI_File_read(fh, e, 1, MPI_DOUBLE, &st));
    CHECK(e[0] == d[1]);
    CHECK(position(fh) == 2);
    io_sync_barrier(fh, MPI_COMM_WORLD);
    /* the view's end of file: the last rank's view ends there; others see
     * the doubles from their displacement to the end */
    CHECK_MPI(MPI_File_seek(fh, 0, MPI_SEEK_END));
    CHECK(position(fh) == (MPI_Offset)(n - rank) * M);
    /* the bytes before the first displacement were never written: zeros */
    CHECK_MPI(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
    CHECK(position(fh) == 0);
    unsigned char z[DDISP];
    memset(z, 0xff, sizeof z);
    CHECK_MPI(MPI_File_read_at(fh, 0, z, DDISP, MPI_BYTE, &st));
    for (int i = 0; i < DDISP; ++i)
        CHECK(z[i] == 0);
    CHECK_MPI(MPI_File_read_at(fh, DDISP + (MPI_Offset)((rank + 1) % n) * M * 8, e, M, MPI_DOUBLE,
                               &st));
    for (int i = 0; i < M; ++i)
        CHECK(e[i] == (rank + 1) % n + i / 8.0);
    CHECK_MPI(MPI_File_close(&fh));
}

int main(int argc, char **argv)
{
    CHECK_MPI(MPI_Init(&argc, &argv));
    char path[IO_PATH_MAX];
    io_path(MPI_COMM_WORLD, "io_view", 0, path);
    interleaved(path);
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    if (world_rank() == 0)
        CHECK_MPI(MPI_File_delete(path, MPI_INFO_NULL));
    io_path(MPI_COMM_WORLD, "io_view", 1, path);
    subarray(path);
    io_path(MPI_COMM_WORLD, "io_view", 2, path);
    doubles(path);
    CHECK_MPI(MPI_Finalize());
    return 0;
}
