/* The optional size-specific Fortran types, used from C (MPI-3.1 Annex
 * A.1.1): MPI_INTEGER1/2/4/8, MPI_REAL4/8/16, MPI_COMPLEX8/16/32.  MPICH and
 * Open MPI both define them in mpi.h, and C code written against either
 * uses them (with data written by Fortran, or simply as fixed-size names).
 *
 * 1. Each one is a named type of its size and extent, called by its name.
 * 2. MPI_SUM, MPI_PROD, MPI_MAX, MPI_MIN, MPI_BAND and MPI_BXOR on the
 *    integers, MPI_SUM, MPI_PROD, MPI_MAX and MPI_MIN on REAL4/8, MPI_SUM
 *    and MPI_PROD on COMPLEX8/16, through MPI_Allreduce: the values of every
 *    rank combined in rank order, checked exactly.
 * 3. REAL16 and COMPLEX32 values (16 and 32 bytes each) travel around a ring
 *    of ranks byte for byte.
 * 4. MPI_MAX on a complex type is MPI_ERR_OP.
 * 5. shmpi only, where MPICH and Open MPI disagree (MPICH leaves
 *    MPI_INTEGER16 null and its REAL16 sums come out NaN; Open MPI treats
 *    REAL16 as the x87 long double):
 *    - MPI_INTEGER16 is a 16-byte integer: sums past 2^64 are exact;
 *    - REAL16 and COMPLEX32 reduce as IEEE binary128 (Fortran REAL(16)):
 *      a sum keeps bits that neither double nor long double holds;
 *    - MPI_Pack_external writes REAL16 as the big-endian binary128 it is.
 */
#include "../mpi/check.h"

#include <complex.h>

enum { N = 24 };

struct named {
    MPI_Datatype type;
    const char *name;
    int size;
};

static void test_names(void) {
    const struct named types[] = {
        {MPI_INTEGER1, "MPI_INTEGER1", 1}, {MPI_INTEGER2, "MPI_INTEGER2", 2},
        {MPI_INTEGER4, "MPI_INTEGER4", 4}, {MPI_INTEGER8, "MPI_INTEGER8", 8},
        {MPI_REAL4, "MPI_REAL4", 4},       {MPI_REAL8, "MPI_REAL8", 8},
        {MPI_REAL16, "MPI_REAL16", 16},    {MPI_COMPLEX8, "MPI_COMPLEX8", 8},
        {MPI_COMPLEX16, "MPI_COMPLEX16", 16}, {MPI_COMPLEX32, "MPI_COMPLEX32", 32},
#ifdef SHMPI
        {MPI_INTEGER16, "MPI_INTEGER16", 16},
#endif
    };
    for (size_t i = 0; i < sizeof types / sizeof types[0]; ++i) {
        const struct named *t = &types[i];
        CHECKF(t->type != MPI_DATATYPE_NULL, "%s is MPI_DATATYPE_NULL", t->name);
        int size = -1;
        MPI_Aint lb = -1, extent = -1;
        CHECK_MPI(MPI_Type_size(t->type, &size));
        CHECK_MPI(MPI_Type_get_extent(t->type, &lb, &extent));
        CHECKF(size == t->size && lb == 0 && extent == t->size, "%s: size %d, lb %ld, extent %ld, expected %d",
               t->name, size, (long)lb, (long)extent, t->size);
        char name[MPI_MAX_OBJECT_NAME] = "";
        int len = -1;
        CHECK_MPI(MPI_Type_get_name(t->type, name, &len));
        CHECKF(strcmp(name, t->name) == 0 && len == (int)strlen(t->name), "%s is called '%s' (%d)", t->name,
               name, len);
        int ni = -1, na = -1, nt = -1, combiner = -1;
        CHECK_MPI(MPI_Type_get_envelope(t->type, &ni, &na, &nt, &combiner));
        CHECKF(combiner == MPI_COMBINER_NAMED, "%s: combiner %d", t->name, combiner);
    }
}

/* A value of rank r for element i that no operation overflows, even in
 * MPI_INTEGER1 with 8 ranks, and that every real type holds exactly in any
 * order of combination: -14..14 for SUM, MAX, MIN and the bitwise
 * operations (8 ranks sum to at most 112), +-1 for PROD, and +-2 on ranks 0
 * to 3 (products of at most 16). */
static long long int_value(int r, int i, int op) {
    const unsigned x = (unsigned)(r * 7919 + i * 104729 + op * 1299709) * 2654435761u;
    if (op == 1) { /* PROD */
        const long long m = r < 4 && (x >> 7) % 2 ? 2 : 1;
        return (x >> 9) % 2 ? m : -m;
    }
    return (long long)((x >> 11) % 29) - 14;
}

static long long int_combine(int op, long long a, long long b) {
    switch (op) {
    case 0: return a + b;
    case 1: return a * b;
    case 2: return a > b ? a : b;
    case 3: return a < b ? a : b;
    case 4: return a & b;
    default: return a ^ b;
    }
}

static const MPI_Op int_ops[] = {MPI_SUM, MPI_PROD, MPI_MAX, MPI_MIN, MPI_BAND, MPI_BXOR};
static const char *const int_op_names[] = {"MPI_SUM", "MPI_PROD", "MPI_MAX", "MPI_MIN", "MPI_BAND", "MPI_BXOR"};

static void store_int(void *p, int bytes, long long v) {
    if (bytes == 1) {
        int8_t x = (int8_t)v;
        memcpy(p, &x, 1);
    } else if (bytes == 2) {
        int16_t x = (int16_t)v;
        memcpy(p, &x, 2);
    } else if (bytes == 4) {
        int32_t x = (int32_t)v;
        memcpy(p, &x, 4);
    } else {
        int64_t x = (int64_t)v;
        memcpy(p, &x, 8);
    }
}

static long long load_int(const void *p, int bytes) {
    if (bytes == 1) {
        int8_t x;
        memcpy(&x, p, 1);
        return x;
    }
    if (bytes == 2) {
        int16_t x;
        memcpy(&x, p, 2);
        return x;
    }
    if (bytes == 4) {
        int32_t x;
        memcpy(&x, p, 4);
        return x;
    }
    int64_t x;
    memcpy(&x, p, 8);
    return x;
}

static void test_integers(int me, int size) {
    const struct named types[] = {{MPI_INTEGER1, "MPI_INTEGER1", 1},
                                  {MPI_INTEGER2, "MPI_INTEGER2", 2},
                                  {MPI_INTEGER4, "MPI_INTEGER4", 4},
                                  {MPI_INTEGER8, "MPI_INTEGER8", 8}};
    unsigned char in[N * 8], out[N * 8];
    for (size_t k = 0; k < sizeof types / sizeof types[0]; ++k) {
        const struct named *t = &types[k];
        for (int op = 0; op < 6; ++op) {
            for (int i = 0; i < N; ++i)
                store_int(in + i * t->size, t->size, int_value(me, i, op));
            CHECK_MPI(MPI_Allreduce(in, out, N, t->type, int_ops[op], MPI_COMM_WORLD));
            for (int i = 0; i < N; ++i) {
                long long want = int_value(0, i, op);
                for (int r = 1; r < size; ++r)
                    want = int_combine(op, want, int_value(r, i, op));
                const long long got = load_int(out + i * t->size, t->size);
                CHECKF(got == want, "%s on %s, element %d: %lld, expected %lld", int_op_names[op], t->name, i,
                       got, want);
            }
        }
    }
}

static void test_reals(int me, int size) {
    for (int op = 0; op < 4; ++op) {
        float f_in[N], f_out[N];
        double d_in[N], d_out[N];
        for (int i = 0; i < N; ++i) {
            f_in[i] = (float)int_value(me, i, op) / 4;
            d_in[i] = (double)int_value(me, i, op) / 8;
        }
        CHECK_MPI(MPI_Allreduce(f_in, f_out, N, MPI_REAL4, int_ops[op], MPI_COMM_WORLD));
        CHECK_MPI(MPI_Allreduce(d_in, d_out, N, MPI_REAL8, int_ops[op], MPI_COMM_WORLD));
        for (int i = 0; i < N; ++i) {
            float fw = (float)int_value(0, i, op) / 4;
            double dw = (double)int_value(0, i, op) / 8;
            for (int r = 1; r < size; ++r) {
                const float fv = (float)int_value(r, i, op) / 4;
                const double dv = (double)int_value(r, i, op) / 8;
                fw = op == 0 ? fw + fv : op == 1 ? fw * fv : op == 2 ? (fw > fv ? fw : fv) : (fw < fv ? fw : fv);
                dw = op == 0 ? dw + dv : op == 1 ? dw * dv : op == 2 ? (dw > dv ? dw : dv) : (dw < dv ? dw : dv);
            }
            CHECKF(f_out[i] == fw, "%s on MPI_REAL4, element %d: %g, expected %g", int_op_names[op], i,
                   (double)f_out[i], (double)fw);
            CHECKF(d_out[i] == dw, "%s on MPI_REAL8, element %d: %g, expected %g", int_op_names[op], i,
                   d_out[i], dw);
        }
    }
}

/* Values from {1, -1, i, -i} for PROD (products stay exact), small Gaussian
 * integers for SUM. */
static double complex complex_value(int r, int i, int op) {
    const long long v = int_value(r, i, op + 20);
    if (op == 1) {
        switch ((v + 30) % 4) {
        case 0: return 1;
        case 1: return -1;
        case 2: return I;
        default: return -I;
        }
    }
    return (double)(v % 7) + (double)(v % 5) * I;
}

static void test_complex(int me, int size) {
    const MPI_Op ops[] = {MPI_SUM, MPI_PROD};
    for (int op = 0; op < 2; ++op) {
        float complex f_in[N], f_out[N];
        double complex d_in[N], d_out[N];
        for (int i = 0; i < N; ++i) {
            f_in[i] = (float complex)complex_value(me, i, op);
            d_in[i] = complex_value(me, i, op);
        }
        CHECK_MPI(MPI_Allreduce(f_in, f_out, N, MPI_COMPLEX8, ops[op], MPI_COMM_WORLD));
        CHECK_MPI(MPI_Allreduce(d_in, d_out, N, MPI_COMPLEX16, ops[op], MPI_COMM_WORLD));
        for (int i = 0; i < N; ++i) {
            double complex want = complex_value(0, i, op);
            for (int r = 1; r < size; ++r)
                want = op == 0 ? want + complex_value(r, i, op) : want * complex_value(r, i, op);
            CHECKF(f_out[i] == (float complex)want, "%s on MPI_COMPLEX8, element %d: (%g, %g), expected (%g, %g)",
                   int_op_names[op], i, (double)crealf(f_out[i]), (double)cimagf(f_out[i]), creal(want),
                   cimag(want));
            CHECKF(d_out[i] == want, "%s on MPI_COMPLEX16, element %d: (%g, %g), expected (%g, %g)",
                   int_op_names[op], i, creal(d_out[i]), cimag(d_out[i]), creal(want), cimag(want));
        }
    }
}

/* 3. Each rank's REAL16 and COMPLEX32 elements are bytes only it writes;
 * they arrive unchanged at the next rank. */
static void test_ring(int me, int size) {
    enum { K = 5 };
    unsigned char q_out[K * 16], q_in[K * 16], c_out[K * 32], c_in[K * 32];
    for (int i = 0; i < K * 16; ++i)
        q_out[i] = (unsigned char)(me * 31 + i * 7 + 1);
    for (int i = 0; i < K * 32; ++i)
        c_out[i] = (unsigned char)(me * 17 + i * 13 + 5);
    const int next = (me + 1) % size, prev = (me + size - 1) % size;
    MPI_Status st;
    CHECK_MPI(MPI_Sendrecv(q_out, K, MPI_REAL16, next, 1, q_in, K, MPI_REAL16, prev, 1, MPI_COMM_WORLD, &st));
    int count = -1;
    CHECK_MPI(MPI_Get_count(&st, MPI_REAL16, &count));
    CHECKF(count == K, "MPI_Get_count of MPI_REAL16: %d", count);
    CHECK_MPI(MPI_Sendrecv(c_out, K, MPI_COMPLEX32, next, 2, c_in, K, MPI_COMPLEX32, prev, 2, MPI_COMM_WORLD,
                           MPI_STATUS_IGNORE));
    for (int i = 0; i < K * 16; ++i)
        CHECKF(q_in[i] == (unsigned char)(prev * 31 + i * 7 + 1), "MPI_REAL16 byte %d from rank %d", i, prev);
    for (int i = 0; i < K * 32; ++i)
        CHECKF(c_in[i] == (unsigned char)(prev * 17 + i * 13 + 5), "MPI_COMPLEX32 byte %d from rank %d", i, prev);
}

static void test_bad_op(void) {
    CHECK_MPI(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    float complex a[2] = {1, 2}, b[2];
    const int rc = MPI_Allreduce(a, b, 2, MPI_COMPLEX8, MPI_MAX, MPI_COMM_WORLD);
    int cls = -1;
    MPI_Error_class(rc, &cls);
    CHECKF(cls == MPI_ERR_OP, "MPI_MAX on MPI_COMPLEX8: error class %d, expected MPI_ERR_OP", cls);
    CHECK_MPI(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
}

#ifdef SHMPI
static void test_binary128(int me, int size) {
    const __float128 tiny = (__float128)0x1p-100; /* a power of two: exact */

    /* INTEGER16: rank r adds (r + 1) * 2^70 + r; the sum is past 2^64. */
    __int128 iv = ((__int128)(me + 1) << 70) + me, isum = 0;
    CHECK_MPI(MPI_Allreduce(&iv, &isum, 1, MPI_INTEGER16, MPI_SUM, MPI_COMM_WORLD));
    const __int128 iwant = ((__int128)(size * (size + 1) / 2) << 70) + size * (size - 1) / 2;
    CHECKF(isum == iwant, "MPI_SUM on MPI_INTEGER16: high %lld low %llu", (long long)(isum >> 64),
           (unsigned long long)isum);
    __int128 imax = 0;
    CHECK_MPI(MPI_Allreduce(&iv, &imax, 1, MPI_INTEGER16, MPI_MAX, MPI_COMM_WORLD));
    CHECK(imax == ((__int128)size << 70) + size - 1);

    /* REAL16: rank r adds 1 + (r + 1) * 2^-100, which only binary128's 113
     * bits of significand keep (the 64 of long double round it away). */
    __float128 q = 1 + (me + 1) * tiny, qsum = 0;
    CHECK_MPI(MPI_Allreduce(&q, &qsum, 1, MPI_REAL16, MPI_SUM, MPI_COMM_WORLD));
    const __float128 qwant = size + (size * (size + 1) / 2) * tiny;
    CHECKF(qsum == qwant, "MPI_SUM on MPI_REAL16: off by %g * 2^-100", (double)((qsum - qwant) / tiny));
    __float128 qmin = 0;
    CHECK_MPI(MPI_Allreduce(&q, &qmin, 1, MPI_REAL16, MPI_MIN, MPI_COMM_WORLD));
    CHECK(qmin == 1 + tiny);

    /* COMPLEX32: the sum of (1 + 2^-100) + r i over ranks, and the product
     * of i over ranks, i^size. */
    __float128 c[2] = {1 + tiny, me}, csum[2] = {0, 0};
    CHECK_MPI(MPI_Allreduce(c, csum, 1, MPI_COMPLEX32, MPI_SUM, MPI_COMM_WORLD));
    CHECK(csum[0] == size + size * tiny && csum[1] == size * (size - 1) / 2);
    __float128 unit[2] = {0, 1}, cprod[2] = {-5, -5};
    CHECK_MPI(MPI_Allreduce(unit, cprod, 1, MPI_COMPLEX32, MPI_PROD, MPI_COMM_WORLD));
    static const int re[4] = {1, 0, -1, 0}, im[4] = {0, 1, 0, -1};
    CHECKF(cprod[0] == re[size % 4] && cprod[1] == im[size % 4], "i^%d on MPI_COMPLEX32: (%g, %g)", size,
           (double)cprod[0], (double)cprod[1]);

    /* external32: 1.5 as big-endian binary128 is 3f ff 80 00 ... 00. */
    __float128 x = 1.5;
    unsigned char buf[16];
    MPI_Aint pos = 0;
    CHECK_MPI(MPI_Pack_external("external32", &x, 1, MPI_REAL16, buf, sizeof buf, &pos));
    CHECK(pos == 16 && buf[0] == 0x3f && buf[1] == 0xff && buf[2] == 0x80);
    for (int i = 3; i < 16; ++i)
        CHECKF(buf[i] == 0, "external32 MPI_REAL16 byte %d: %#x", i, buf[i]);
    __float128 back = 0;
    pos = 0;
    CHECK_MPI(MPI_Unpack_external("external32", buf, sizeof buf, &pos, &back, 1, MPI_REAL16));
    CHECK(back == x);
}
#endif

int main(int argc, char **argv) {
    CHECK_MPI(MPI_Init(&argc, &argv));
    const int me = world_rank(), size = world_size();
    test_names();
    test_integers(me, size);
    test_reals(me, size);
    test_complex(me, size);
    test_ring(me, size);
    test_bad_op();
#ifdef SHMPI
    test_binary128(me, size);
#endif
    CHECK_MPI(MPI_Finalize());
    return 0;
}
