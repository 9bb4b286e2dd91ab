/* MPI_Pack_external, MPI_Unpack_external, MPI_Pack_external_size and
 * MPI_Type_match_size.  external32 is big-endian with the sizes of MPI-3.1
 * table 13.2 (MPI_LONG 4 bytes, MPI_LONG_DOUBLE an IEEE binary128): the
 * bytes are checked one by one, then a strided column and an array of structs go through external32 to another rank and back into another
 * layout. */
#include <stddef.h>

#include "../mpi/check.h"

static void expect_bytes(const unsigned char *got, const unsigned char *want, int n, const char *what)
{
    for (int i = 0; i < n; ++i)
        CHECKF(got[i] == want[i], "%s: byte %d is %02x, want %02x", what, i, got[i], want[i]);
}

static MPI_Aint ext_size(int count, MPI_Datatype t)
{
    MPI_Aint s = -1;
    CHECK_MPI(MPI_Pack_external_size("external32", count, t, &s));
    return s;
}

struct rec {
    short s;
    double d;
    long l;
};

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    const int rank = world_rank(), size = world_size();

    /* Sizes of table 13.2. */
    CHECK(ext_size(1, MPI_CHAR) == 1);
    CHECK(ext_size(1, MPI_SHORT) == 2);
    CHECK(ext_size(3, MPI_INT) == 12);
    CHECK(ext_size(1, MPI_LONG) == 4);
    CHECK(ext_size(1, MPI_UNSIGNED_LONG) == 4);
    CHECK(ext_size(1, MPI_LONG_LONG) == 8);
    CHECK(ext_size(1, MPI_FLOAT) == 4);
    CHECK(ext_size(1, MPI_DOUBLE) == 8);
    CHECK(ext_size(1, MPI_LONG_DOUBLE) == 16);
    CHECK(ext_size(1, MPI_C_DOUBLE_COMPLEX) == 16);
    CHECK(ext_size(1, MPI_INT64_T) == 8);
    CHECK(ext_size(0, MPI_DOUBLE) == 0);

    /* Byte-exact values. */
    unsigned char out[256];
    MPI_Aint pos = 0;
    int iv[2] = {1, -2};
    CHECK_MPI(MPI_Pack_external("external32", iv, 2, MPI_INT, out, sizeof out, &pos));
    CHECK(pos == 8);
    const unsigned char want_int[8] = {0, 0, 0, 1, 0xff, 0xff, 0xff, 0xfe};
    expect_bytes(out, want_int, 8, "MPI_INT 1, -2");

    long lv[2] = {-2, 0x1234567};
    pos = 0;
    CHECK_MPI(MPI_Pack_external("external32", lv, 2, MPI_LONG, out, sizeof out, &pos));
    CHECK(pos == 8);
    const unsigned char want_long[8] = {0xff, 0xff, 0xff, 0xfe, 0x01, 0x23, 0x45, 0x67};
    expect_bytes(out, want_long, 8, "MPI_LONG -2, 0x1234567");
    /* A duplicate of MPI_LONG converts as MPI_LONG. */
    MPI_Datatype long_dup;
    CHECK_MPI(MPI_Type_dup(MPI_LONG, &long_dup));
    CHECK(ext_size(2, long_dup) == 8);
    pos = 0;
    memset(out, 0, sizeof out);
    CHECK_MPI(MPI_Pack_external("external32", lv, 2, long_dup, out, sizeof out, &pos));
    CHECK(pos == 8);
    expect_bytes(out, want_long, 8, "MPI_Type_dup(MPI_LONG) -2, 0x1234567");
    CHECK_MPI(MPI_Type_free(&long_dup));

    double dv = 1.0;
    pos = 0;
    CHECK_MPI(MPI_Pack_external("external32", &dv, 1, MPI_DOUBLE, out, sizeof out, &pos));
    const unsigned char want_double[8] = {0x3f, 0xf0, 0, 0, 0, 0, 0, 0};
    expect_bytes(out, want_double, 8, "MPI_DOUBLE 1.0");

    long double ld = 1.5L;
    pos = 0;
    CHECK_MPI(MPI_Pack_external("external32", &ld, 1, MPI_LONG_DOUBLE, out, sizeof out, &pos));
    CHECK(pos == 16);
    const unsigned char want_quad[16] = {0x3f, 0xff, 0x80};
    expect_bytes(out, want_quad, 16, "MPI_LONG_DOUBLE 1.5 (binary128)");
    long double ld_back = 0;
    pos = 0;
    CHECK_MPI(MPI_Unpack_external("external32", out, 16, &pos, &ld_back, 1, MPI_LONG_DOUBLE));
    CHECK(ld_back == 1.5L);

    /* Type_match_size. */
    MPI_Datatype m;
    CHECK_MPI(MPI_Type_match_size(MPI_TYPECLASS_REAL, 8, &m));
    int msize = 0;
    CHECK_MPI(MPI_Type_size(m, &msize));
    CHECK(msize == 8);
    CHECK_MPI(MPI_Type_match_size(MPI_TYPECLASS_INTEGER, 4, &m));
    CHECK_MPI(MPI_Type_size(m, &msize));
    CHECK(msize == 4);
    CHECK_MPI(MPI_Type_match_size(MPI_TYPECLASS_COMPLEX, 16, &m));
    CHECK_MPI(MPI_Type_size(m, &msize));
    CHECK(msize == 16);

    /* A column of a 50x3 matrix and an array of structs, packed in external32,
     * sent as bytes around the ring, unpacked into contiguous arrays. */
    enum { ROWS = 50, COLS = 3, RECS = 20 };
    double mat[ROWS][COLS];
    for (int r = 0; r < ROWS; ++r)
        for (int c = 0; c < COLS; ++c)
            mat[r][c] = rank * 1000.0 + r * COLS + c;
    MPI_Datatype col;
    CHECK_MPI(MPI_Type_vector(ROWS, 1, COLS, MPI_DOUBLE, &col));
    CHECK_MPI(MPI_Type_commit(&col));
    struct rec recs[RECS];
    for (int i = 0; i < RECS; ++i) {
        recs[i].s = (short)(rank * 100 + i);
        recs[i].d = i * 0.25 - rank;
        recs[i].l = -(long)i * 1000 - rank;
    }
    const MPI_Aint bytes = ROWS * 8 + RECS * (2 + 8 + 4);
    CHECK(ext_size(1, col) == ROWS * 8);
    unsigned char *buf = (unsigned char *)check_malloc((size_t)bytes);
    unsigned char *in = (unsigned char *)check_malloc((size_t)bytes);
    pos = 0;
    CHECK_MPI(MPI_Pack_external("external32", mat, 1, col, buf, bytes, &pos));
    for (int i = 0; i < RECS; ++i) {
        /* (MPICH's MPI_Pack_external crashes on struct types: the fields go one
         * by one here; dt_external_strict packs the struct type.) */
        CHECK_MPI(MPI_Pack_external("external32", &recs[i].s, 1, MPI_SHORT, buf, bytes, &pos));
        CHECK_MPI(MPI_Pack_external("external32", &recs[i].d, 1, MPI_DOUBLE, buf, bytes, &pos));
        CHECK_MPI(MPI_Pack_external("external32", &recs[i].l, 1, MPI_LONG, buf, bytes, &pos));
    }
    CHECK(pos == bytes);
    const int to = (rank + 1) % size, from = (rank + size - 1) % size;
    CHECK_MPI(MPI_Sendrecv(buf, (int)bytes, MPI_BYTE, to, 7, in, (int)bytes, MPI_BYTE, from, 7, MPI_COMM_WORLD,
                           MPI_STATUS_IGNORE));
    double column[ROWS];
    short ss[RECS];
    double ds[RECS];
    long ls[RECS];
    pos = 0;
    CHECK_MPI(MPI_Unpack_external("external32", in, bytes, &pos, column, ROWS, MPI_DOUBLE));
    for (int i = 0; i < RECS; ++i) {
        CHECK_MPI(MPI_Unpack_external("external32", in, bytes, &pos, &ss[i], 1, MPI_SHORT));
        CHECK_MPI(MPI_Unpack_external("external32", in, bytes, &pos, &ds[i], 1, MPI_DOUBLE));
        CHECK_MPI(MPI_Unpack_external("external32", in, bytes, &pos, &ls[i], 1, MPI_LONG));
    }
    CHECK(pos == bytes);
    for (int r = 0; r < ROWS; ++r)
        CHECKF(column[r] == from * 1000.0 + r * COLS, "column[%d] = %g", r, column[r]);
    for (int i = 0; i < RECS; ++i) {
        CHECK(ss[i] == (short)(from * 100 + i));
        CHECK(ds[i] == i * 0.25 - from);
        CHECKF(ls[i] == -(long)i * 1000 - from, "ls[%d] = %ld", i, ls[i]);
    }

    free(buf);
    free(in);
    MPI_Type_free(&col);
    MPI_Finalize();
    return 0;
}
