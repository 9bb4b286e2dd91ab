/* external32 corners where implementations differ and shmpi follows MPI-3.1
 * table 13.2 to the letter (shmpi only: MPICH mis-sizes the pair types and
 * truncates out-of-range values silently; Open MPI keeps MPI_LONG at 8 bytes):
 *   - MPI_WCHAR is 2 bytes, the pair types are the sum of their parts;
 *   - a value the external size cannot hold is MPI_ERR_CONVERSION;
 *   - an unknown datarep is MPI_ERR_ARG;
 *   - too small an output buffer is MPI_ERR_TRUNCATE, nothing written (MPICH
 *     writes past the end);
 *   - a count whose external32 size overflows a byte count is MPI_ERR_COUNT
 *     in Pack_external_size, Pack_external and Unpack_external (MPICH returns
 *     a size of 0, which Pack_external then trusted and crashed). */
#include <wchar.h>

#include "../mpi/check.h"

static MPI_Aint ext_size(int count, MPI_Datatype t)
{
    MPI_Aint s = -1;
    CHECK_MPI(MPI_Pack_external_size("external32", count, t, &s));
    return s;
}

static int err_class(int rc)
{
    int cls = -1;
    MPI_Error_class(rc, &cls);
    return cls;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    CHECK(ext_size(1, MPI_WCHAR) == 2);
    CHECK(ext_size(1, MPI_2INT) == 8);
    CHECK(ext_size(1, MPI_FLOAT_INT) == 8);
    CHECK(ext_size(1, MPI_DOUBLE_INT) == 12);
    CHECK(ext_size(1, MPI_LONG_INT) == 8);
    CHECK(ext_size(1, MPI_SHORT_INT) == 6);
    CHECK(ext_size(1, MPI_LONG_DOUBLE_INT) == 20);
    CHECK(ext_size(2, MPI_C_LONG_DOUBLE_COMPLEX) == 64);
    int bl[3] = {1, 1, 1};
    MPI_Aint disp[3] = {0, 8, 16};
    MPI_Datatype tys[3] = {MPI_SHORT, MPI_DOUBLE, MPI_LONG}, rect;
    CHECK_MPI(MPI_Type_create_struct(3, bl, disp, tys, &rect));
    CHECK_MPI(MPI_Type_commit(&rect));
    CHECK(ext_size(20, rect) == 20 * (2 + 8 + 4));
    /* A struct with a gap, through external32 and back. */
    struct { short s; double d; long l; } recs[20], back[20];
    MPI_Aint rdisp[3] = {(char *)&recs[0].s - (char *)recs, (char *)&recs[0].d - (char *)recs,
                         (char *)&recs[0].l - (char *)recs};
    MPI_Datatype rect2;
    CHECK_MPI(MPI_Type_create_struct(3, bl, rdisp, tys, &rect2));
    CHECK_MPI(MPI_Type_commit(&rect2));
    for (int i = 0; i < 20; ++i) {
        recs[i].s = (short)(i - 5);
        recs[i].d = i * 1.5;
        recs[i].l = -100000L * i;
    }
    unsigned char ext[20 * 14];
    MPI_Aint p = 0;
    CHECK_MPI(MPI_Pack_external("external32", recs, 20, rect2, ext, sizeof ext, &p));
    CHECK(p == sizeof ext);
    CHECK(ext[0] == 0xff && ext[1] == 0xfb); /* -5 as a big-endian short */
    p = 0;
    memset(back, 0, sizeof back);
    CHECK_MPI(MPI_Unpack_external("external32", ext, sizeof ext, &p, back, 20, rect2));
    for (int i = 0; i < 20; ++i)
        CHECK(back[i].s == recs[i].s && back[i].d == recs[i].d && back[i].l == recs[i].l);
    MPI_Type_free(&rect2);
    MPI_Type_free(&rect);

    unsigned char out[64];
    MPI_Aint pos = 0;
    wchar_t w[2] = {L'A', 0x263a};
    CHECK_MPI(MPI_Pack_external("external32", w, 2, MPI_WCHAR, out, sizeof out, &pos));
    CHECK(pos == 4 && out[0] == 0 && out[1] == 0x41 && out[2] == 0x26 && out[3] == 0x3a);
    wchar_t wb[2] = {0, 0};
    pos = 0;
    CHECK_MPI(MPI_Unpack_external("external32", out, 4, &pos, wb, 2, MPI_WCHAR));
    CHECK(wb[0] == L'A' && wb[1] == 0x263a);

    struct { double v; int i; } di = {-0.5, 7}, di_back = {0, 0};
    pos = 0;
    CHECK_MPI(MPI_Pack_external("external32", &di, 1, MPI_DOUBLE_INT, out, sizeof out, &pos));
    CHECK(pos == 12 && out[0] == 0xbf && out[1] == 0xe0 && out[11] == 7);
    pos = 0;
    CHECK_MPI(MPI_Unpack_external("external32", out, 12, &pos, &di_back, 1, MPI_DOUBLE_INT));
    CHECK(di_back.v == -0.5 && di_back.i == 7);

    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    long big = 0x123456789L;
    pos = 0;
    int rc = MPI_Pack_external("external32", &big, 1, MPI_LONG, out, sizeof out, &pos);
    CHECKF(err_class(rc) == MPI_ERR_CONVERSION, "class %d", err_class(rc));
    CHECK(pos == 0);
    wchar_t wide = 0x1F600;
    rc = MPI_Pack_external("external32", &wide, 1, MPI_WCHAR, out, sizeof out, &pos);
    CHECK(err_class(rc) == MPI_ERR_CONVERSION);
    MPI_Aint s;
    rc = MPI_Pack_external_size("native", 1, MPI_INT, &s);
    CHECK(err_class(rc) == MPI_ERR_ARG);
    int iv[2] = {1, 2};
    pos = 0;
    rc = MPI_Pack_external("external32", iv, 2, MPI_INT, out, 7, &pos);
    CHECK(err_class(rc) == MPI_ERR_TRUNCATE && pos == 0);
    MPI_Datatype m;
    rc = MPI_Type_match_size(MPI_TYPECLASS_REAL, 3, &m);
    CHECK(err_class(rc) == MPI_ERR_ARG);

    /* A type of 2^62 bytes: 4 of them are 2^64 bytes, 2 of them 2^63. */
    MPI_Datatype t30, t60, t62;
    CHECK_MPI(MPI_Type_contiguous(1 << 30, MPI_BYTE, &t30));
    CHECK_MPI(MPI_Type_contiguous(1 << 30, t30, &t60));
    CHECK_MPI(MPI_Type_contiguous(4, t60, &t62));
    CHECK_MPI(MPI_Type_commit(&t62));
    CHECK(ext_size(1, t62) == (MPI_Aint)1 << 62);
    for (int n = 2; n <= 4; n += 2) {
        s = 12345;
        rc = MPI_Pack_external_size("external32", n, t62, &s);
        CHECKF(err_class(rc) == MPI_ERR_COUNT && s == 12345, "Pack_external_size of %d: class %d, size %ld",
               n, err_class(rc), (long)s);
        pos = 0;
        rc = MPI_Pack_external("external32", iv, n, t62, out, sizeof out, &pos);
        CHECKF(err_class(rc) == MPI_ERR_COUNT && pos == 0, "Pack_external of %d: class %d", n, err_class(rc));
        rc = MPI_Unpack_external("external32", out, sizeof out, &pos, iv, n, t62);
        CHECKF(err_class(rc) == MPI_ERR_COUNT && pos == 0, "Unpack_external of %d: class %d", n,
               err_class(rc));
    }
    CHECK_MPI(MPI_Type_free(&t62));
    CHECK_MPI(MPI_Type_free(&t60));
    CHECK_MPI(MPI_Type_free(&t30));
    MPI_Finalize();
    return 0;
}
