/* The MPI-1 spellings that MPI-3.0 removed and old code and textbooks (the
 * seeds) still use: MPI_Type_struct, MPI_Type_hvector, MPI_Type_hindexed,
 * MPI_Type_extent, MPI_Type_lb, MPI_Type_ub, MPI_Address, and the MPI_LB /
 * MPI_UB markers with their MPI-1 meaning.  Open MPI 4 and MPICH 4 do not
 * compile this file; shmpi runs it. */
#include "seed4.h"
#include "typemap.h"

static void check_bounds_mpi1(MPI_Datatype t, long lb, long ub, long extent, const char *name)
{
    MPI_Aint l, u, e;
    CHECK_MPI(MPI_Type_lb(t, &l));
    CHECK_MPI(MPI_Type_ub(t, &u));
    CHECK_MPI(MPI_Type_extent(t, &e));
    CHECKF(l == lb && u == ub && e == extent, "%s: lb %ld ub %ld extent %ld, expected %ld %ld %ld", name, (long)l,
           (long)u, (long)e, lb, ub, extent);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    const int rank = world_rank();
    const int size = world_size();

    /* type1 and example 3.24, spelled as in the seed. */
    int bl1[2] = {1, 1};
    MPI_Aint d1[2] = {0, 8};
    MPI_Datatype ty1[2] = {MPI_DOUBLE, MPI_CHAR}, type1;
    CHECK_MPI(MPI_Type_struct(2, bl1, d1, ty1, &type1));
    check_bounds_mpi1(type1, 0, 16, 16, "type1");
    int B[3] = {2, 1, 3};
    MPI_Aint D[3] = {0, 16, 26};
    MPI_Datatype T[3] = {MPI_FLOAT, type1, MPI_CHAR}, t324;
    CHECK_MPI(MPI_Type_struct(3, B, D, T, &t324));
    CHECK_MPI(MPI_Type_commit(&t324));
    check_bounds_mpi1(t324, 0, 32, 32, "example 3.24");
    const struct tm_entry map324[] = {{0, 4}, {4, 4}, {16, 8}, {24, 1}, {26, 1}, {27, 1}, {28, 1}};
    tm_exchange(t324, map324, 7, 32, 3, "MPI_Type_struct example 3.24");

    /* MPI_Type_hvector(2, 3, 64, type1) is example 3.21. */
    MPI_Datatype hv;
    CHECK_MPI(MPI_Type_hvector(2, 3, 64, type1, &hv));
    CHECK_MPI(MPI_Type_commit(&hv));
    check_bounds_mpi1(hv, 0, 112, 112, "hvector");
    const struct tm_entry map321[] = {{0, 8},  {8, 1},  {16, 8}, {24, 1}, {32, 8}, {40, 1},
                                      {64, 8}, {72, 1}, {80, 8}, {88, 1}, {96, 8}, {104, 1}};
    tm_exchange(hv, map321, 12, 112, 2, "MPI_Type_hvector");

    /* MPI_Type_hindexed(2, (3, 1), (64, 0), type1) is example 3.23. */
    int hb[2] = {3, 1};
    MPI_Aint hd[2] = {64, 0};
    MPI_Datatype hi;
    CHECK_MPI(MPI_Type_hindexed(2, hb, hd, type1, &hi));
    CHECK_MPI(MPI_Type_commit(&hi));
    const struct tm_entry map323[] = {{64, 8}, {72, 1}, {80, 8}, {88, 1}, {96, 8}, {104, 1}, {0, 8}, {8, 1}};
    tm_exchange(hi, map323, 8, 112, 2, "MPI_Type_hindexed");

    /* Example 3.22's negative stride, seen through MPI_Type_lb/ub. */
    MPI_Datatype neg;
    CHECK_MPI(MPI_Type_hvector(3, 1, -32, type1, &neg));
    check_bounds_mpi1(neg, -64, 16, 80, "hvector with negative stride");

    /* MPI_LB: an int whose element starts 4 bytes early. */
    int blm[2] = {1, 1};
    MPI_Aint dlb[2] = {-4, 0};
    MPI_Datatype tlb[2] = {MPI_LB, MPI_INT}, lbint;
    CHECK_MPI(MPI_Type_struct(2, blm, dlb, tlb, &lbint));
    CHECK_MPI(MPI_Type_commit(&lbint));
    check_bounds_mpi1(lbint, -4, 4, 8, "MPI_LB + int");
    const struct tm_entry maplb[] = {{0, 4}};
    tm_exchange(lbint, maplb, 1, 8, 3, "MPI_LB + int");

    /* MPI_Address and MPI_BOTTOM: a struct described by absolute addresses. */
    struct particle {
        char tag;
        double x[3];
        int id;
    } p[2];
    MPI_Aint a[3];
    CHECK_MPI(MPI_Address(&p[0].tag, &a[0]));
    CHECK_MPI(MPI_Address(&p[0].x[0], &a[1]));
    CHECK_MPI(MPI_Address(&p[0].id, &a[2]));
    int pb[3] = {1, 3, 1};
    MPI_Datatype pt[3] = {MPI_CHAR, MPI_DOUBLE, MPI_INT}, ptype;
    CHECK_MPI(MPI_Type_struct(3, pb, a, pt, &ptype));
    CHECK_MPI(MPI_Type_commit(&ptype));
    for (int k = 0; k < 2; ++k) {
        p[k].tag = (char)('a' + rank);
        p[k].id = rank * 10 + k;
        for (int i = 0; i < 3; ++i)
            p[k].x[i] = rank + 0.25 * i;
    }
    const int to = (rank + 1) % size, from = (rank + size - 1) % size;
    struct particle q = {0, {0, 0, 0}, 0};
    MPI_Aint qa[3];
    CHECK_MPI(MPI_Address(&q.tag, &qa[0]));
    CHECK_MPI(MPI_Address(&q.x[0], &qa[1]));
    CHECK_MPI(MPI_Address(&q.id, &qa[2]));
    MPI_Datatype qtype;
    CHECK_MPI(MPI_Type_struct(3, pb, qa, pt, &qtype));
    CHECK_MPI(MPI_Type_commit(&qtype));
    CHECK_MPI(MPI_Sendrecv(MPI_BOTTOM, 1, ptype, to, 1, MPI_BOTTOM, 1, qtype, from, 1, MPI_COMM_WORLD,
                           MPI_STATUS_IGNORE));
    CHECKF(q.tag == (char)('a' + from) && q.id == from * 10 && q.x[2] == from + 0.5,
           "MPI_BOTTOM struct: tag %c id %d x2 %g", q.tag, q.id, q.x[2]);

    /* Example 4.8's column type, point to point: one int with the extent of
     * a row (MPI_UB), 100 - rank of them from column `rank`. */
    int(*sendarray)[SEED4_COLS] = seed4_array(rank);
    int cb[2] = {1, 1};
    MPI_Aint cd[2] = {0, 150 * sizeof(int)};
    MPI_Datatype ct[2] = {MPI_INT, MPI_UB}, col;
    CHECK_MPI(MPI_Type_struct(2, cb, cd, ct, &col));
    CHECK_MPI(MPI_Type_commit(&col));
    check_bounds_mpi1(col, 0, 600, 600, "MPI_UB column");
    const int n = 100 - rank % 100;
    MPI_Request req;
    CHECK_MPI(MPI_Isend(&sendarray[0][rank % 100], n, col, 0, 2, MPI_COMM_WORLD, &req));
    if (rank == 0) {
        int *rbuf = seed4_rbuf(100);
        for (int i = 0; i < size; ++i) {
            MPI_Status st;
            int got = -1;
            CHECK_MPI(MPI_Recv(rbuf, 100, MPI_INT, i, 2, MPI_COMM_WORLD, &st));
            CHECK_MPI(MPI_Get_count(&st, MPI_INT, &got));
            CHECKF(got == 100 - i % 100, "column from rank %d: %d ints", i, got);
            seed4_check_column(rbuf, 0, got, i, i % 100);
        }
        free(rbuf);
    }
    CHECK_MPI(MPI_Wait(&req, MPI_STATUS_IGNORE));

    MPI_Datatype all[] = {col, qtype, ptype, lbint, neg, hi, hv, t324, type1};
    for (unsigned i = 0; i < sizeof all / sizeof all[0]; ++i)
        CHECK_MPI(MPI_Type_free(&all[i]));
    free(sendarray);
    MPI_Finalize();
    return 0;
}
