/*
 * Data access with explicit offsets (MPI-3.1 13.4.2): MPI_File_write_at,
 * read_at, write_at_all, read_at_all, with ints and doubles, each rank in a
 * region of its own of one shared file.  Checks:
 *  - the data round-trips element by element, and the status counts
 *    (MPI_Get_count) are the elements moved;
 *  - a derived memory datatype (MPI_Type_vector) on the write side lands
 *    contiguously in the file (the default view is a byte stream) and reads
 *    back with a contiguous type; reading into the vector type fills its
 *    elements and leaves the gaps of the buffer untouched; MPI_Get_count and
 *    MPI_Get_elements (4.1.11) of such statuses;
 *  - reading past the end of file returns a short count (13.4.1: "the
 *    number of data items actually read"), 0 at the end of file, for
 *    predefined and derived types (MPI_Get_count MPI_UNDEFINED for a partial
 *    vector, MPI_Get_elements the basic elements read); an independent
 *    contiguous read leaves the buffer past the items read untouched, and
 *    no read touches the buffer past its count or the holes of its type;
 *  - count 0 moves nothing and does not change the file size.
 * Explicit-offset calls do not move the individual file pointer (13.4.2).
 */
#include "io_common.h"

/* Each rank's region of the file, in bytes. */
enum {
    INT_OFF = 0,     /* 16 ints, write_at / read_at */
    DBL_OFF = 64,    /* 8 doubles, write_at_all / read_at_all */
    VEC_OFF = 128,   /* 8 ints from a vector memory type */
    REGION = 160,
    NI = 16,
    ND = 8,
    SENT = -999
};

static int ival(int rank, int i) { return rank * 1000 + i + 1; }
static double dval(int rank, int i) { return rank * 100.0 + i * 0.125 + 0.5; }

int main(int argc, char **argv)
{
    CHECK_MPI(MPI_Init(&argc, &argv));
    const int rank = world_rank(), n = world_size();
    char path[IO_PATH_MAX];
    MPI_File fh;
    io_open_scratch(MPI_COMM_WORLD, "io_explicit", path, &fh);
    const MPI_Offset base = (MPI_Offset)rank * REGION;
    MPI_Status st;

    /* ---- ints, independent ---- */
    int iw[NI], ir[NI + 2];
    for (int i = 0; i < NI; ++i)
        iw[i] = ival(rank, i);
    CHECK_MPI(MPI_File_write_at(fh, base + INT_OFF, iw, NI, MPI_INT, &st));
    CHECKF(io_count(&st, MPI_INT) == NI, "write_at count %d", io_count(&st, MPI_INT));
    for (int i = 0; i < NI + 2; ++i)
        ir[i] = SENT;
    CHECK_MPI(MPI_File_read_at(fh, base + INT_OFF, ir, NI, MPI_INT, &st));
    CHECK(io_count(&st, MPI_INT) == NI);
    for (int i = 0; i < NI; ++i)
        CHECKF(ir[i] == ival(rank, i), "int %d read %d, expected %d", i, ir[i], ival(rank, i));
    CHECK(ir[NI] == SENT && ir[NI + 1] == SENT);
    /* a part in the middle */
    for (int i = 0; i < NI; ++i)
        ir[i] = SENT;
    CHECK_MPI(MPI_File_read_at(fh, base + INT_OFF + 5 * 4, ir + 1, 6, MPI_INT, &st));
    CHECK(io_count(&st, MPI_INT) == 6);
    CHECK(ir[0] == SENT && ir[7] == SENT);
    for (int i = 0; i < 6; ++i)
        CHECK(ir[1 + i] == ival(rank, 5 + i));
    /* the bytes of the ints, as bytes */
    {
        unsigned char b[NI * 4];
        CHECK_MPI(MPI_File_read_at(fh, base + INT_OFF, b, NI * 4, MPI_BYTE, &st));
        CHECK(io_count(&st, MPI_BYTE) == NI * 4);
        CHECK(memcmp(b, iw, sizeof b) == 0);
        /* counted as ints, 64 bytes are 16 */
        CHECK(io_count(&st, MPI_INT) == NI);
    }

    /* ---- doubles, collective ---- */
    double dw[ND], dr[ND + 1];
    for (int i = 0; i < ND; ++i)
        dw[i] = dval(rank, i);
    CHECK_MPI(MPI_File_write_at_all(fh, base + DBL_OFF, dw, ND, MPI_DOUBLE, &st));
    CHECK(io_count(&st, MPI_DOUBLE) == ND);
    for (int i = 0; i < ND + 1; ++i)
        dr[i] = -1.0;
    CHECK_MPI(MPI_File_read_at_all(fh, base + DBL_OFF, dr, ND, MPI_DOUBLE, &st));
    CHECK(io_count(&st, MPI_DOUBLE) == ND);
    for (int i = 0; i < ND; ++i)
        CHECKF(dr[i] == dval(rank, i), "double %d read %g, expected %g", i, dr[i],
               dval(rank, i));
    CHECK(dr[ND] == -1.0);

    /* ---- vector memory type: 4 blocks of 2 ints, stride 3 (11 ints) ---- */
    MPI_Datatype vec;
    CHECK_MPI(MPI_Type_vector(4, 2, 3, MPI_INT, &vec));
    CHECK_MPI(MPI_Type_commit(&vec));
    const int vec_idx[8] = {0, 1, 3, 4, 6, 7, 9, 10};
    int vw[11];
    for (int i = 0; i < 11; ++i)
        vw[i] = -ival(rank, 50 + i); /* the gaps hold values that must not be written */
    for (int k = 0; k < 8; ++k)
        vw[vec_idx[k]] = ival(rank, 200 + k);
    CHECK_MPI(MPI_File_write_at_all(fh, base + VEC_OFF, vw, 1, vec, &st));
    CHECK(io_count(&st, vec) == 1);
    int elems = -1;
    CHECK_MPI(MPI_Get_elements(&st, vec, &elems));
    CHECKF(elems == 8, "MPI_Get_elements of the vector write: %d", elems);
    /* read back contiguously */
    for (int i = 0; i < NI; ++i)
        ir[i] = SENT;
    CHECK_MPI(MPI_File_read_at(fh, base + VEC_OFF, ir, 8, MPI_INT, &st));
    CHECK(io_count(&st, MPI_INT) == 8);
    for (int k = 0; k < 8; ++k)
        CHECKF(ir[k] == ival(rank, 200 + k), "vector element %d read %d, expected %d", k, ir[k],
               ival(rank, 200 + k));
    CHECK(ir[8] == SENT);
    /* read back into the vector type: gaps untouched */
    {
        int vr[12];
        for (int i = 0; i < 12; ++i)
            vr[i] = SENT;
        CHECK_MPI(MPI_File_read_at(fh, base + VEC_OFF, vr, 1, vec, &st));
        CHECK(io_count(&st, vec) == 1);
        CHECK_MPI(MPI_Get_elements(&st, vec, &elems));
        CHECK(elems == 8);
        int k = 0;
        for (int i = 0; i < 12; ++i) {
            if (k < 8 && vec_idx[k] == i) {
                CHECKF(vr[i] == ival(rank, 200 + k), "vector read element %d is %d", i, vr[i]);
                ++k;
            } else {
                CHECKF(vr[i] == SENT, "vector read wrote the gap at %d (%d)", i, vr[i]);
            }
        }
    }

    /* explicit offsets leave the individual pointer alone */
    MPI_Offset pos = -1;
    CHECK_MPI(MPI_File_get_position(fh, &pos));
    CHECK(pos == 0);

    /* ---- every rank's data, seen by every rank ---- */
    io_sync_barrier(fh, MPI_COMM_WORLD);
    MPI_Offset size = -1;
    CHECK_MPI(MPI_File_get_size(fh, &size));
    CHECKF(size == (MPI_Offset)n * REGION, "file size %lld, expected %lld", (long long)size,
           (long long)n * REGION);
    {
        const int other = (rank + 1) % n;
        CHECK_MPI(MPI_File_read_at_all(fh, (MPI_Offset)other * REGION + INT_OFF, ir, NI, MPI_INT,
                                       &st));
        CHECK(io_count(&st, MPI_INT) == NI);
        for (int i = 0; i < NI; ++i)
            CHECK(ir[i] == ival(other, i));
        CHECK_MPI(MPI_File_read_at(fh, (MPI_Offset)other * REGION + DBL_OFF, dr, ND, MPI_DOUBLE,
                                   &st));
        for (int i = 0; i < ND; ++i)
            CHECK(dr[i] == dval(other, i));
    }

    /* ---- short reads at the end of file ---- */
    /* The last rank's last 8 ints are its vector elements 0..7; from
     * element 6 on, 2 ints remain. */
    const MPI_Offset end = (MPI_Offset)n * REGION;
    const int last = n - 1;
    for (int i = 0; i < NI; ++i)
        ir[i] = SENT;
    CHECK_MPI(MPI_File_read_at(fh, end - 8, ir, 5, MPI_INT, &st));
    CHECKF(io_count(&st, MPI_INT) == 2, "short read: count %d, expected 2", io_count(&st, MPI_INT));
    CHECK(ir[0] == ival(last, 206) && ir[1] == ival(last, 207));
    for (int i = 2; i < NI; ++i)
        CHECKF(ir[i] == SENT, "short read wrote int %d", i);
    /* collective, rank-dependent amount: rank r asks for r + 3 ints at end - 8 */
    for (int i = 0; i < NI; ++i)
        ir[i] = SENT;
    CHECK_MPI(MPI_File_read_at_all(fh, end - 8, ir, rank + 3, MPI_INT, &st));
    CHECKF(io_count(&st, MPI_INT) == 2 || (ROMIO_FULL_COUNT && io_count(&st, MPI_INT) == rank + 3),
           "collective short read: count %d, expected 2", io_count(&st, MPI_INT));
    /* (13.4.1 does not say what becomes of the buffer past the items read;
     * MPICH's collective read overwrites it: not checked) */
    CHECK(ir[0] == ival(last, 206) && ir[1] == ival(last, 207));
    for (int i = rank + 3; i < NI; ++i)
        CHECKF(ir[i] == SENT, "collective read wrote int %d, past its count", i);
    for (int i = 0; i < NI; ++i)
        ir[i] = SENT;
    /* at and past the end of file: 0 */
    CHECK_MPI(MPI_File_read_at(fh, end, ir, 4, MPI_INT, &st));
    CHECK(io_count(&st, MPI_INT) == 0);
    CHECK_MPI(MPI_File_read_at(fh, end + 1000, ir, 4, MPI_INT, &st));
    CHECK(io_count(&st, MPI_INT) == 0);
    CHECK_MPI(MPI_File_read_at_all(fh, end, dr, 2, MPI_DOUBLE, &st));
    CHECKF(io_count(&st, MPI_DOUBLE) == 0 || (ROMIO_FULL_COUNT && io_count(&st, MPI_DOUBLE) == 2),
           "collective read at the end of file: count %d, expected 0",
           io_count(&st, MPI_DOUBLE));
    for (int i = 0; i < NI; ++i)
        CHECKF(ir[i] == SENT, "a read at the end of file wrote int %d", i);
    /* an odd number of bytes short: 6 bytes left, doubles requested: the
     * count of doubles is MPI_UNDEFINED, 6 bytes were read */
    {
        double d2[2] = {-1.0, -1.0};
        CHECK_MPI(MPI_File_read_at(fh, end - 6, d2, 2, MPI_DOUBLE, &st));
        CHECK(io_count(&st, MPI_DOUBLE) == MPI_UNDEFINED);
        CHECK(io_count(&st, MPI_BYTE) == 6);
        CHECK(d2[1] == -1.0);
    }
    /* a derived type read short: 2 vectors (16 ints) asked, 5 ints remain:
     * Get_count is MPI_UNDEFINED, Get_elements 5, elements 0..4 of the
     * first vector filled, the holes of the type untouched (the elements
     * past the fifth are not checked: MPICH writes them) */
    {
        int vr[24];
        for (int i = 0; i < 24; ++i)
            vr[i] = SENT;
        MPI_Datatype vec12; /* the vector resized to 12 ints, so two tile evenly */
        CHECK_MPI(MPI_Type_create_resized(vec, 0, 12 * sizeof(int), &vec12));
        CHECK_MPI(MPI_Type_commit(&vec12));
        CHECK_MPI(MPI_File_read_at(fh, end - 20, vr, 2, vec12, &st));
        CHECK_MPI(MPI_Get_elements(&st, vec12, &elems));
        if (!ROMIO_FULL_COUNT || elems != 16) {
            CHECKF(io_count(&st, vec12) == MPI_UNDEFINED, "short vector read: count %d",
                   io_count(&st, vec12));
            CHECKF(elems == 5, "MPI_Get_elements of a short vector read: %d, expected 5", elems);
            CHECK(io_count(&st, MPI_INT) == 5);
        }
        for (int i = 0; i < 24; ++i) {
            int k = -1;
            for (int j = 0; j < 5; ++j)
                if (vec_idx[j] == i)
                    k = j;
            const int in_type = i % 12 < 11 && i % 3 != 2;
            if (k >= 0)
                CHECKF(vr[i] == ival(last, 203 + k), "short vector element %d is %d, expected %d",
                       i, vr[i], ival(last, 203 + k));
            else if (!in_type)
                CHECKF(vr[i] == SENT, "short vector read wrote the hole at int %d (%d)", i, vr[i]);
        }
        CHECK_MPI(MPI_Type_free(&vec12));
    }

    /* ---- count 0 ---- */
    CHECK_MPI(MPI_File_write_at(fh, end + 4096, iw, 0, MPI_INT, &st));
    CHECK(io_count(&st, MPI_INT) == 0);
    CHECK_MPI(MPI_File_write_at_all(fh, end + 8192, dw, 0, MPI_DOUBLE, &st));
    CHECK(io_count(&st, MPI_DOUBLE) == 0);
    CHECK_MPI(MPI_File_read_at(fh, base, ir, 0, MPI_INT, &st));
    CHECK(io_count(&st, MPI_INT) == 0);
    CHECK_MPI(MPI_File_read_at_all(fh, base, ir, 0, vec, &st));
    CHECK(io_count(&st, vec) == 0);
    io_sync_barrier(fh, MPI_COMM_WORLD);
    CHECK_MPI(MPI_File_get_size(fh, &size));
    CHECKF(size == end, "count-0 writes changed the size to %lld (was %lld)", (long long)size,
           (long long)end);
    /* some ranks write, others write nothing, in one collective call */
    {
        const int cnt = rank % 2 == 0 ? 4 : 0;
        int w4[4];
        for (int i = 0; i < 4; ++i)
            w4[i] = ival(rank, 300 + i);
        CHECK_MPI(MPI_File_write_at_all(fh, base + INT_OFF, w4, cnt, MPI_INT, &st));
        CHECK(io_count(&st, MPI_INT) == cnt);
        CHECK_MPI(MPI_File_read_at(fh, base + INT_OFF, ir, NI, MPI_INT, &st));
        for (int i = 0; i < NI; ++i)
            CHECK(ir[i] == (i < cnt ? ival(rank, 300 + i) : ival(rank, i)));
    }

    CHECK_MPI(MPI_Type_free(&vec));
    CHECK_MPI(MPI_File_close(&fh));
    /* DELETE_ON_CLOSE: the file is gone */
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0)
        EXPECT_CLASS(MPI_File_delete(path, MPI_INFO_NULL), MPI_ERR_NO_SUCH_FILE);
    CHECK_MPI(MPI_Finalize());
    return 0;
}
