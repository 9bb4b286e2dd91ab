/*
 * ops.c: every predefined reduction operation on every datatype MPI-3.1
 * (section 5.9.2) allows it on, through MPI_Allreduce over all ranks and
 * through MPI_Reduce_local, against results computed by hand; and
 * operation/datatype pairs the standard does not define fail with
 * MPI_ERR_OP.
 *
 *   MPI_MAX, MPI_MIN       C integers (and MPI_CHAR, as MPICH allows),
 *                          Fortran INTEGER, floating point
 *   MPI_SUM, MPI_PROD      the same, and complex
 *   MPI_LAND, _LOR, _LXOR  C integers, logical (C_BOOL, CXX_BOOL, LOGICAL)
 *   MPI_BAND, _BOR, _BXOR  C integers, Fortran INTEGER, MPI_BYTE
 *
 * The values keep every result exact (no signed overflow, floating point
 * values that are small integers or powers of two), so any reduction order
 * gives the same answer.  MINLOC and MAXLOC are in minmaxloc.c.
 */
#include "coll_test.h"

#include <complex.h>
#include <stdbool.h>

enum { N = 33 };

/* ------------------------------------------------------------ integers */

struct int_type {
    MPI_Datatype type;
    const char *name;
    int bytes;
    int is_signed;
};

static const struct int_type int_types[] = {
    {MPI_CHAR, "MPI_CHAR", 1, 1},
    {MPI_SIGNED_CHAR, "MPI_SIGNED_CHAR", 1, 1},
    {MPI_UNSIGNED_CHAR, "MPI_UNSIGNED_CHAR", 1, 0},
    {MPI_SHORT, "MPI_SHORT", sizeof(short), 1},
    {MPI_UNSIGNED_SHORT, "MPI_UNSIGNED_SHORT", sizeof(short), 0},
    {MPI_INT, "MPI_INT", sizeof(int), 1},
    {MPI_UNSIGNED, "MPI_UNSIGNED", sizeof(int), 0},
    {MPI_LONG, "MPI_LONG", sizeof(long), 1},
    {MPI_UNSIGNED_LONG, "MPI_UNSIGNED_LONG", sizeof(long), 0},
    {MPI_LONG_LONG, "MPI_LONG_LONG", sizeof(long long), 1},
    {MPI_UNSIGNED_LONG_LONG, "MPI_UNSIGNED_LONG_LONG", sizeof(long long), 0},
    {MPI_INT8_T, "MPI_INT8_T", 1, 1},
    {MPI_UINT8_T, "MPI_UINT8_T", 1, 0},
    {MPI_INT16_T, "MPI_INT16_T", 2, 1},
    {MPI_UINT16_T, "MPI_UINT16_T", 2, 0},
    {MPI_INT32_T, "MPI_INT32_T", 4, 1},
    {MPI_UINT32_T, "MPI_UINT32_T", 4, 0},
    {MPI_INT64_T, "MPI_INT64_T", 8, 1},
    {MPI_UINT64_T, "MPI_UINT64_T", 8, 0},
    {MPI_AINT, "MPI_AINT", sizeof(MPI_Aint), 1},
    {MPI_OFFSET, "MPI_OFFSET", sizeof(MPI_Offset), 1},
    {MPI_COUNT, "MPI_COUNT", sizeof(MPI_Count), 1},
    {MPI_INTEGER, "MPI_INTEGER", 4, 1},
};

struct op_info {
    MPI_Op op;
    const char *name;
};

enum { OP_MAX, OP_MIN, OP_SUM, OP_PROD, OP_LAND, OP_LOR, OP_LXOR, OP_BAND, OP_BOR, OP_BXOR, NOPS };
static const struct op_info ops[NOPS] = {
    {MPI_MAX, "MPI_MAX"},   {MPI_MIN, "MPI_MIN"},   {MPI_SUM, "MPI_SUM"}, {MPI_PROD, "MPI_PROD"},
    {MPI_LAND, "MPI_LAND"}, {MPI_LOR, "MPI_LOR"},   {MPI_LXOR, "MPI_LXOR"},
    {MPI_BAND, "MPI_BAND"}, {MPI_BOR, "MPI_BOR"},   {MPI_BXOR, "MPI_BXOR"},
};

static uint64_t mix(int rank, int i, int op)
{
    uint64_t x = ((uint64_t)rank + 1) * 0x9E3779B97F4A7C15ull ^ ((uint64_t)i + 3) * 0xC2B2AE3D27D4EB4Full ^
                 ((uint64_t)op + 11) * 0x165667B19E3779F9ull;
    x ^= x >> 31;
    x *= 0xBF58476D1CE4E5B9ull;
    x ^= x >> 29;
    return x;
}

/* The value `rank` contributes at element i for operation `op`, as a
 * number in the type's range. */
static int64_t int_value(const struct int_type *t, int rank, int i, int op)
{
    const uint64_t x = mix(rank, i, op);
    const int bits = 8 * t->bytes;
    switch (op) {
    case OP_SUM:
        return t->is_signed ? (int64_t)(x % 9) - 4 : (int64_t)(x % 8);
    case OP_PROD: /* at most three factors of 2, the rest +-1: no overflow */
        if (rank < 3 && x % 2 == 0)
            return 2;
        return t->is_signed && (x >> 8) % 2 ? -1 : 1;
    case OP_LAND:
    case OP_LOR:
    case OP_LXOR: { /* mostly true, with some zeros; true as 1, 2 or -1 */
        const int v = (int)(x % 7);
        if (v < 2 && (i % 3 != 0 || rank == 1))
            return 0;
        return v == 6 && t->is_signed ? -1 : 1 + v % 2;
    }
    default: { /* MAX, MIN and the bitwise operations: the whole range */
        uint64_t u = bits == 64 ? x : x & ((1ull << bits) - 1);
#if defined(MPICH_VERSION)
        /* MPICH 4.0 compares unsigned types as signed (pmodels/mpich#6083). */
        if (!t->is_signed && (op == OP_MAX || op == OP_MIN))
            u >>= 1;
#endif
        if (t->is_signed && bits < 64 && (u >> (bits - 1)) & 1)
            return (int64_t)(u | ~((1ull << bits) - 1)); /* sign-extend */
        return (int64_t)u;
    }
    }
}

static int64_t int_combine(int op, int is_signed, int64_t a, int64_t b)
{
    switch (op) {
    case OP_MAX:
        return is_signed ? (a > b ? a : b) : ((uint64_t)a > (uint64_t)b ? a : b);
    case OP_MIN:
        return is_signed ? (a < b ? a : b) : ((uint64_t)a < (uint64_t)b ? a : b);
    case OP_SUM:
        return (int64_t)((uint64_t)a + (uint64_t)b);
    case OP_PROD:
        return (int64_t)((uint64_t)a * (uint64_t)b);
    case OP_LAND:
        return a && b;
    case OP_LOR:
        return a || b;
    case OP_LXOR:
        return !a != !b;
    case OP_BAND:
        return a & b;
    case OP_BOR:
        return a | b;
    default:
        return a ^ b;
    }
}

/* Stores the low `bytes` bytes of v (little-endian machines: the value
 * itself in the narrower type) and reads them back. */
static void int_store(void *p, int bytes, int64_t v) { memcpy(p, &v, (size_t)bytes); }

static int64_t int_load(const void *p, int bytes, int is_signed)
{
    uint64_t u = 0;
    memcpy(&u, p, (size_t)bytes);
    const int bits = 8 * bytes;
    if (is_signed && bits < 64 && (u >> (bits - 1)) & 1)
        u |= ~((1ull << bits) - 1);
    return (int64_t)u;
}

static int int_op_allowed(const struct int_type *t, int op)
{
    /* Logical operations: C integers only (not Fortran INTEGER, which Open
     * MPI refuses). */
    if (op == OP_LAND || op == OP_LOR || op == OP_LXOR)
        return t->type != MPI_INTEGER;
    return 1;
}

static void test_integers(int rank, int size)
{
    unsigned char in[N * 8], out[N * 8], other[N * 8];
    for (size_t k = 0; k < sizeof int_types / sizeof int_types[0]; ++k) {
        const struct int_type *t = &int_types[k];
        for (int op = 0; op < NOPS; ++op) {
            if (!int_op_allowed(t, op))
                continue;
            for (int i = 0; i < N; ++i)
                int_store(in + i * t->bytes, t->bytes, int_value(t, rank, i, op));
            CHECK_MPI(MPI_Allreduce(in, out, N, t->type, ops[op].op, MPI_COMM_WORLD));
            for (int i = 0; i < N; ++i) {
                int64_t want = int_value(t, 0, i, op);
                for (int r = 1; r < size; ++r)
                    want = int_combine(op, t->is_signed, want, int_value(t, r, i, op));
                int_store(other, t->bytes, want);
                const int64_t got = int_load(out + i * t->bytes, t->bytes, t->is_signed);
                const int64_t exp = int_load(other, t->bytes, t->is_signed);
                CHECKF(got == exp, "MPI_Allreduce %s on %s, element %d: %lld, expected %lld", ops[op].name,
                       t->name, i, (long long)got, (long long)exp);
            }
            /* MPI_Reduce_local: inout = in op inout, contributions of
             * "ranks" 5 and 6. */
            for (int i = 0; i < N; ++i) {
                int_store(in + i * t->bytes, t->bytes, int_value(t, 5, i, op));
                int_store(out + i * t->bytes, t->bytes, int_value(t, 6, i, op));
            }
            CHECK_MPI(MPI_Reduce_local(in, out, N, t->type, ops[op].op));
            for (int i = 0; i < N; ++i) {
                int_store(other, t->bytes,
                          int_combine(op, t->is_signed, int_value(t, 5, i, op), int_value(t, 6, i, op)));
                CHECKF(int_load(out + i * t->bytes, t->bytes, t->is_signed) ==
                           int_load(other, t->bytes, t->is_signed),
                       "MPI_Reduce_local %s on %s, element %d", ops[op].name, t->name, i);
            }
        }
    }
}

/* ------------------------------------------------------- floating point */

struct float_type {
    MPI_Datatype type;
    const char *name;
    int kind; /* 0 float, 1 double, 2 long double */
};

static const struct float_type float_types[] = {
    {MPI_FLOAT, "MPI_FLOAT", 0},         {MPI_DOUBLE, "MPI_DOUBLE", 1},
    {MPI_LONG_DOUBLE, "MPI_LONG_DOUBLE", 2}, {MPI_REAL, "MPI_REAL", 0},
    {MPI_DOUBLE_PRECISION, "MPI_DOUBLE_PRECISION", 1},
};

/* Exact values: halves in [-8, 8] for MAX/MIN/SUM, +-1 and +-2 (powers of
 * two, at most three 2s) for PROD. */
static long double float_value(int rank, int i, int op)
{
    const uint64_t x = mix(rank, i, op + 20);
    if (op == OP_PROD) {
        const long double m = rank < 3 && x % 2 == 0 ? 2.0L : 1.0L;
        return (x >> 8) % 2 ? -m : m;
    }
    return ((long double)(x % 33) - 16.0L) / 2.0L;
}

static long double float_combine(int op, long double a, long double b)
{
    switch (op) {
    case OP_MAX:
        return a > b ? a : b;
    case OP_MIN:
        return a < b ? a : b;
    case OP_SUM:
        return a + b;
    default:
        return a * b;
    }
}

static void float_store(void *p, int kind, long double v)
{
    if (kind == 0) {
        float f = (float)v;
        memcpy(p, &f, sizeof f);
    } else if (kind == 1) {
        double d = (double)v;
        memcpy(p, &d, sizeof d);
    } else {
        memcpy(p, &v, sizeof v);
    }
}

static long double float_load(const void *p, int kind)
{
    if (kind == 0) {
        float f;
        memcpy(&f, p, sizeof f);
        return f;
    }
    if (kind == 1) {
        double d;
        memcpy(&d, p, sizeof d);
        return d;
    }
    long double v;
    memcpy(&v, p, sizeof v);
    return v;
}

static void test_floats(int rank, int size)
{
    static const size_t widths[] = {sizeof(float), sizeof(double), sizeof(long double)};
    unsigned char in[N * sizeof(long double)], out[N * sizeof(long double)];
    for (size_t k = 0; k < sizeof float_types / sizeof float_types[0]; ++k) {
        const struct float_type *t = &float_types[k];
        const size_t w = widths[t->kind];
        for (int op = OP_MAX; op <= OP_PROD; ++op) {
            for (int i = 0; i < N; ++i)
                float_store(in + i * w, t->kind, float_value(rank, i, op));
            CHECK_MPI(MPI_Allreduce(in, out, N, t->type, ops[op].op, MPI_COMM_WORLD));
            for (int i = 0; i < N; ++i) {
                long double want = float_value(0, i, op);
                for (int r = 1; r < size; ++r)
                    want = float_combine(op, want, float_value(r, i, op));
                CHECKF(float_load(out + i * w, t->kind) == want, "MPI_Allreduce %s on %s, element %d: %Lg, "
                       "expected %Lg", ops[op].name, t->name, i, float_load(out + i * w, t->kind), want);
            }
            for (int i = 0; i < N; ++i) {
                float_store(in + i * w, t->kind, float_value(5, i, op));
                float_store(out + i * w, t->kind, float_value(6, i, op));
            }
            CHECK_MPI(MPI_Reduce_local(in, out, N, t->type, ops[op].op));
            for (int i = 0; i < N; ++i)
                CHECKF(float_load(out + i * w, t->kind) ==
                           float_combine(op, float_value(5, i, op), float_value(6, i, op)),
                       "MPI_Reduce_local %s on %s, element %d", ops[op].name, t->name, i);
        }
    }
}

/* --------------------------------------------------------------- complex */

/* Values from {1, -1, i, -i} (products stay exact) plus, for SUM, small
 * integer parts. */
static long double complex complex_value(int rank, int i, int op)
{
    const uint64_t x = mix(rank, i, op + 40);
    if (op == OP_SUM)
        return (long double)((int)(x % 9) - 4) + (long double)((int)((x >> 8) % 9) - 4) * I;
    switch (x % 4) {
    case 0:
        return 1;
    case 1:
        return -1;
    case 2:
        return I;
    default:
        return -I;
    }
}

struct complex_type {
    MPI_Datatype type;
    const char *name;
    int kind;
};

static const struct complex_type complex_types[] = {
    {MPI_C_FLOAT_COMPLEX, "MPI_C_FLOAT_COMPLEX", 0},
    {MPI_C_DOUBLE_COMPLEX, "MPI_C_DOUBLE_COMPLEX", 1},
    {MPI_C_LONG_DOUBLE_COMPLEX, "MPI_C_LONG_DOUBLE_COMPLEX", 2},
    {MPI_COMPLEX, "MPI_COMPLEX", 0},
    {MPI_DOUBLE_COMPLEX, "MPI_DOUBLE_COMPLEX", 1},
    /* std::complex<T> has the layout of T _Complex (C++11 26.4) */
    {MPI_CXX_FLOAT_COMPLEX, "MPI_CXX_FLOAT_COMPLEX", 0},
    {MPI_CXX_DOUBLE_COMPLEX, "MPI_CXX_DOUBLE_COMPLEX", 1},
    {MPI_CXX_LONG_DOUBLE_COMPLEX, "MPI_CXX_LONG_DOUBLE_COMPLEX", 2},
};

static void complex_store(void *p, int kind, long double complex v)
{
    if (kind == 0) {
        float complex f = (float complex)v;
        memcpy(p, &f, sizeof f);
    } else if (kind == 1) {
        double complex d = (double complex)v;
        memcpy(p, &d, sizeof d);
    } else {
        memcpy(p, &v, sizeof v);
    }
}

static long double complex complex_load(const void *p, int kind)
{
    if (kind == 0) {
        float complex f;
        memcpy(&f, p, sizeof f);
        return f;
    }
    if (kind == 1) {
        double complex d;
        memcpy(&d, p, sizeof d);
        return d;
    }
    long double complex v;
    memcpy(&v, p, sizeof v);
    return v;
}

static void test_complex(int rank, int size)
{
    static const size_t widths[] = {sizeof(float complex), sizeof(double complex),
                                    sizeof(long double complex)};
    unsigned char in[N * sizeof(long double complex)], out[N * sizeof(long double complex)];
    for (size_t k = 0; k < sizeof complex_types / sizeof complex_types[0]; ++k) {
        const struct complex_type *t = &complex_types[k];
        const size_t w = widths[t->kind];
        for (int op = OP_SUM; op <= OP_PROD; ++op) {
            for (int i = 0; i < N; ++i)
                complex_store(in + i * w, t->kind, complex_value(rank, i, op));
            CHECK_MPI(MPI_Allreduce(in, out, N, t->type, ops[op].op, MPI_COMM_WORLD));
            for (int i = 0; i < N; ++i) {
                long double complex want = complex_value(0, i, op);
                for (int r = 1; r < size; ++r)
                    want = op == OP_SUM ? want + complex_value(r, i, op) : want * complex_value(r, i, op);
                const long double complex got = complex_load(out + i * w, t->kind);
                CHECKF(got == want, "MPI_Allreduce %s on %s, element %d: (%Lg, %Lg), expected (%Lg, %Lg)",
                       ops[op].name, t->name, i, creall(got), cimagl(got), creall(want), cimagl(want));
            }
        }
    }
}

/* --------------------------------------------------- logical and byte */

static void test_logical_and_byte(int rank, int size)
{
    /* C_BOOL, and CXX_BOOL (C++'s bool: one byte, as C's, on every ABI
     * these tests run on; its size is checked first) */
    int cxx_bool_size = -1;
    CHECK_MPI(MPI_Type_size(MPI_CXX_BOOL, &cxx_bool_size));
    CHECKF(cxx_bool_size == (int)sizeof(bool), "MPI_CXX_BOOL has size %d", cxx_bool_size);
    for (int b = 0; b < 2; ++b) {
        const MPI_Datatype bt = b ? MPI_CXX_BOOL : MPI_C_BOOL;
        const char *bname = b ? "MPI_CXX_BOOL" : "MPI_C_BOOL";
        for (int op = OP_LAND; op <= OP_LXOR; ++op) {
            bool in[N], out[N];
            for (int i = 0; i < N; ++i)
                in[i] = mix(rank, i, op + 60 + b) % 4 != 0 || i % 5 == 0;
            CHECK_MPI(MPI_Allreduce(in, out, N, bt, ops[op].op, MPI_COMM_WORLD));
            for (int i = 0; i < N; ++i) {
                int want = mix(0, i, op + 60 + b) % 4 != 0 || i % 5 == 0;
                for (int r = 1; r < size; ++r)
                    want = (int)int_combine(op, 1, want, mix(r, i, op + 60 + b) % 4 != 0 || i % 5 == 0);
                CHECKF(out[i] == (bool)want, "MPI_Allreduce %s on %s, element %d", ops[op].name, bname, i);
            }
        }
    }
    /* Fortran LOGICAL: an INTEGER-sized flag, 0 false, 1 true. */
    for (int op = OP_LAND; op <= OP_LXOR; ++op) {
        int32_t in[N], out[N];
        for (int i = 0; i < N; ++i)
            in[i] = mix(rank, i, op + 70) % 3 != 0;
        CHECK_MPI(MPI_Allreduce(in, out, N, MPI_LOGICAL, ops[op].op, MPI_COMM_WORLD));
        for (int i = 0; i < N; ++i) {
            int want = mix(0, i, op + 70) % 3 != 0;
            for (int r = 1; r < size; ++r)
                want = (int)int_combine(op, 1, want, mix(r, i, op + 70) % 3 != 0);
            CHECKF(out[i] == want, "MPI_Allreduce %s on MPI_LOGICAL, element %d: %d", ops[op].name, i,
                   out[i]);
        }
    }
    /* MPI_BYTE: bitwise only. */
    for (int op = OP_BAND; op <= OP_BXOR; ++op) {
        unsigned char in[N], out[N];
        for (int i = 0; i < N; ++i)
            in[i] = (unsigned char)mix(rank, i, op + 80);
        CHECK_MPI(MPI_Allreduce(in, out, N, MPI_BYTE, ops[op].op, MPI_COMM_WORLD));
        for (int i = 0; i < N; ++i) {
            int64_t want = (unsigned char)mix(0, i, op + 80);
            for (int r = 1; r < size; ++r)
                want = int_combine(op, 0, want, (unsigned char)mix(r, i, op + 80));
            CHECKF(out[i] == (unsigned char)want, "MPI_Allreduce %s on MPI_BYTE, element %d", ops[op].name, i);
        }
    }
}

/* --------------------------------------------------------- invalid pairs */

static void test_invalid_pairs(void)
{
    /* Pairs MPI does not define, and that shmpi, MPICH and Open MPI all
     * refuse. */
    static const struct {
        MPI_Op op;
        MPI_Datatype type;
        const char *what;
    } bad[] = {
        {MPI_MAX, MPI_C_BOOL, "MAX on C_BOOL"},
        {MPI_MAX, MPI_C_DOUBLE_COMPLEX, "MAX on a complex"},
        {MPI_MIN, MPI_LOGICAL, "MIN on LOGICAL"},
        {MPI_MAX, MPI_2INT, "MAX on a pair type"},
        {MPI_SUM, MPI_C_BOOL, "SUM on C_BOOL"},
        {MPI_PROD, MPI_LOGICAL, "PROD on LOGICAL"},
        {MPI_SUM, MPI_DOUBLE_INT, "SUM on a pair type"},
        {MPI_LAND, MPI_C_FLOAT_COMPLEX, "LAND on a complex"},
        {MPI_LOR, MPI_2INT, "LOR on a pair type"},
        {MPI_BAND, MPI_FLOAT, "BAND on FLOAT"},
        {MPI_BOR, MPI_DOUBLE, "BOR on DOUBLE"},
        {MPI_BXOR, MPI_C_BOOL, "BXOR on C_BOOL"},
        {MPI_BAND, MPI_LONG_DOUBLE, "BAND on LONG_DOUBLE"},
        {MPI_BOR, MPI_LOGICAL, "BOR on LOGICAL"},
        {MPI_MAXLOC, MPI_INT, "MAXLOC on INT"},
        {MPI_MINLOC, MPI_DOUBLE, "MINLOC on DOUBLE"},
        {MPI_MINLOC, MPI_BYTE, "MINLOC on BYTE"},
        {MPI_MAX, MPI_WCHAR, "MAX on WCHAR"},
#if defined(SHMPI)
        /* Refused by shmpi and MPICH, accepted by Open MPI. */
        {MPI_SUM, MPI_BYTE, "SUM on BYTE"},
        {MPI_MAX, MPI_BYTE, "MAX on BYTE"},
        /* Refused by shmpi and Open MPI, accepted by MPICH. */
        {MPI_LAND, MPI_FLOAT, "LAND on FLOAT"},
        /* Refused by shmpi (MPI-3.1 5.9.2 puts Fortran's CHARACTER in no
         * group), accepted by MPICH. */
        {MPI_SUM, MPI_CHARACTER, "SUM on CHARACTER"},
        {MPI_BAND, MPI_CHARACTER, "BAND on CHARACTER"},
        /* For one-sided accumulates only. */
        {MPI_REPLACE, MPI_INT, "REPLACE in a collective"},
        {MPI_NO_OP, MPI_INT, "NO_OP in a collective"},
#endif
    };
    char in[64] = {0}, out[64];
    errors_return(MPI_COMM_WORLD);
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; ++k) {
        const int rc = MPI_Allreduce(in, out, 1, bad[k].type, bad[k].op, MPI_COMM_WORLD);
        CHECKF(check_error_class(rc) == MPI_ERR_OP, "MPI_Allreduce with %s returned class %d, expected "
               "MPI_ERR_OP", bad[k].what, check_error_class(rc));
        const int rc2 = MPI_Reduce_local(in, out, 1, bad[k].type, bad[k].op);
        CHECKF(check_error_class(rc2) == MPI_ERR_OP, "MPI_Reduce_local with %s returned class %d, "
               "expected MPI_ERR_OP", bad[k].what, check_error_class(rc2));
    }
#if defined(SHMPI)
    /* The message names the function, the operation and the datatype. */
    {
        const int rc = MPI_Allreduce(in, out, 1, MPI_FLOAT, MPI_BAND, MPI_COMM_WORLD);
        char msg[MPI_MAX_ERROR_STRING];
        int len = 0;
        CHECK_MPI(MPI_Error_string(rc, msg, &len));
        CHECKF(strstr(msg, "MPI_Allreduce") && strstr(msg, "MPI_BAND") && strstr(msg, "MPI_FLOAT"),
               "message: %s", msg);
    }
#endif
    /* MPI_OP_NULL is an invalid operation. */
    CHECK_CLASS(MPI_Allreduce(in, out, 1, MPI_INT, MPI_OP_NULL, MPI_COMM_WORLD), MPI_ERR_OP);
    errors_fatal(MPI_COMM_WORLD);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    const int rank = world_rank();
    const int size = world_size();
    test_integers(rank, size);
    test_floats(rank, size);
    test_complex(rank, size);
    test_logical_and_byte(rank, size);
    test_invalid_pairs();
    MPI_Finalize();
    return 0;
}
