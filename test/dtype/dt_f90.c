/* MPI_Type_create_f90_integer, _real and _complex (MPI-3.1 17.1.9): the
 * predefined type of a Fortran KIND selected by range and precision.
 *
 * 1. Sizes: SELECTED_INT_KIND(r) for r = 2, 4, 9, 18 is 1, 2, 4, 8 bytes;
 *    SELECTED_REAL_KIND(6, 37) is 4 bytes, (15, 307) and (7, MPI_UNDEFINED)
 *    and (MPI_UNDEFINED, 300) 8 bytes; a complex kind twice its real one.
 * 2. The envelope says MPI_COMBINER_F90_*, with 1 integer (r) or 2 (p, r),
 *    and the contents give them back as passed.
 * 3. A real kind and an integer kind carry data between ranks (each rank
 *    sends to the next), and MPI_SUM reduces them.
 * 4. shmpi only: the same arguments give the same handle; MPI_Type_free
 *    refuses it; r = 19..38 is a 128-bit integer (MPI_INTEGER16) and
 *    p = 19..33 IEEE binary128 (MPI_REAL16, whose sums keep 113 bits); no
 *    kind for r = 39 or p = 40 gives MPI_ERR_ARG.
 */
#include "../mpi/check.h"

static void expect_size(MPI_Datatype t, int want, const char *what) {
    int s = -1;
    CHECK_MPI(MPI_Type_size(t, &s));
    CHECKF(s == want, "%s: size %d, expected %d", what, s, want);
}

static void expect_contents(MPI_Datatype t, int combiner, int ni, int p, int r, const char *what) {
    int n_ints = -1, n_addrs = -1, n_types = -1, comb = -1;
    CHECK_MPI(MPI_Type_get_envelope(t, &n_ints, &n_addrs, &n_types, &comb));
    CHECKF(comb == combiner && n_ints == ni && n_addrs == 0 && n_types == 0,
           "%s: combiner %d, %d ints, %d addresses, %d types", what, comb, n_ints, n_addrs, n_types);
    int ints[2] = {-5, -5};
    MPI_Aint addr[1];
    MPI_Datatype types[1];
    CHECK_MPI(MPI_Type_get_contents(t, 2, 0, 0, ints, addr, types));
    if (ni == 1)
        CHECKF(ints[0] == r, "%s: contents r = %d, expected %d", what, ints[0], r);
    else
        CHECKF(ints[0] == p && ints[1] == r, "%s: contents (%d, %d), expected (%d, %d)", what, ints[0],
               ints[1], p, r);
}

int main(int argc, char **argv) {
    CHECK_MPI(MPI_Init(&argc, &argv));
    int me = world_rank(), size = world_size();

    /* 1. */
    static const int ranges[] = {2, 4, 9, 18};
    static const int bytes[] = {1, 2, 4, 8};
    MPI_Datatype ints[4];
    for (int i = 0; i < 4; ++i) {
        CHECK_MPI(MPI_Type_create_f90_integer(ranges[i], &ints[i]));
        expect_size(ints[i], bytes[i], "MPI_Type_create_f90_integer");
    }
    MPI_Datatype r4, r8, r8p, r8r, c8;
    CHECK_MPI(MPI_Type_create_f90_real(6, 37, &r4));
    CHECK_MPI(MPI_Type_create_f90_real(15, 307, &r8));
    CHECK_MPI(MPI_Type_create_f90_real(7, MPI_UNDEFINED, &r8p));
    CHECK_MPI(MPI_Type_create_f90_real(MPI_UNDEFINED, 300, &r8r));
    CHECK_MPI(MPI_Type_create_f90_complex(15, 307, &c8));
    expect_size(r4, 4, "real (6, 37)");
    expect_size(r8, 8, "real (15, 307)");
    expect_size(r8p, 8, "real (7, undefined)");
    expect_size(r8r, 8, "real (undefined, 300)");
    expect_size(c8, 16, "complex (15, 307)");

    /* 2. */
    expect_contents(ints[2], MPI_COMBINER_F90_INTEGER, 1, 0, 9, "integer (9)");
    expect_contents(r8, MPI_COMBINER_F90_REAL, 2, 15, 307, "real (15, 307)");
    expect_contents(r8p, MPI_COMBINER_F90_REAL, 2, 7, MPI_UNDEFINED, "real (7, undefined)");
    expect_contents(c8, MPI_COMBINER_F90_COMPLEX, 2, 15, 307, "complex (15, 307)");

    /* 3. */
    const int next = (me + 1) % size, prev = (me + size - 1) % size;
    double out[3] = {me + 0.5, me + 1.5, me + 2.5}, in[3] = {0, 0, 0};
    CHECK_MPI(MPI_Sendrecv(out, 3, r8, next, 1, in, 3, r8, prev, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    CHECKF(in[0] == prev + 0.5 && in[2] == prev + 2.5, "real kind from rank %d: %g %g", prev, in[0], in[2]);
    int iout = me * 10, iin = -1;
    CHECK_MPI(MPI_Sendrecv(&iout, 1, ints[2], next, 2, &iin, 1, ints[2], prev, 2, MPI_COMM_WORLD,
                           MPI_STATUS_IGNORE));
    CHECKF(iin == prev * 10, "integer kind from rank %d: %d", prev, iin);
    double sum = 0;
    CHECK_MPI(MPI_Allreduce(&out[0], &sum, 1, r8, MPI_SUM, MPI_COMM_WORLD));
    CHECKF(sum == size * (size - 1) / 2.0 + 0.5 * size, "MPI_SUM over a real kind: %g", sum);

#ifdef SHMPI
    /* 4. */
    MPI_Datatype again;
    CHECK_MPI(MPI_Type_create_f90_real(15, 307, &again));
    CHECK(again == r8);
    CHECK_MPI(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    check_error_says(MPI_Type_free(&again), MPI_ERR_TYPE, "MPI_Type_free", "predefined");
    MPI_Datatype none = MPI_DATATYPE_NULL;
    MPI_Datatype i16, r16, c32;
    CHECK_MPI(MPI_Type_create_f90_integer(38, &i16));
    CHECK_MPI(MPI_Type_create_f90_real(33, 4931, &r16));
    CHECK_MPI(MPI_Type_create_f90_complex(19, MPI_UNDEFINED, &c32));
    expect_size(i16, 16, "integer (38)");
    expect_size(r16, 16, "real (33, 4931)");
    expect_size(c32, 32, "complex (19, undefined)");
    __float128 q = 1 + (__float128)0x1p-100 * (me + 1), qsum = 0;
    CHECK_MPI(MPI_Allreduce(&q, &qsum, 1, r16, MPI_SUM, MPI_COMM_WORLD));
    CHECK(qsum == size + (__float128)0x1p-100 * (size * (size + 1) / 2));
    check_error_says(MPI_Type_create_f90_integer(39, &none), MPI_ERR_ARG, "MPI_Type_create_f90_integer",
                     "r = 39");
    check_error_says(MPI_Type_create_f90_real(40, MPI_UNDEFINED, &none), MPI_ERR_ARG,
                     "MPI_Type_create_f90_real", "p = 40");
    check_error_says(MPI_Type_create_f90_complex(MPI_UNDEFINED, MPI_UNDEFINED, &none), MPI_ERR_ARG,
                     "MPI_Type_create_f90_complex", "both MPI_UNDEFINED");
    char name[MPI_MAX_OBJECT_NAME];
    int len = -1;
    CHECK_MPI(MPI_Type_get_name(r8, name, &len));
    CHECKF(len == 0, "a Fortran kind type is called '%s'", name);
#endif

    CHECK_MPI(MPI_Finalize());
    return 0;
}
