// The kernels of the predefined reduction operations, and the table that
// says which (operation, type) pairs exist.
#include "dtype/reduce_kernels.hpp"

// GCC's -O2 vectorises only loops whose trip count the vector code covers
// exactly ("very cheap" cost model), which leaves these loops scalar; the
// "cheap" model lets it add the remainder loop.  Clang vectorises them at
// -O2 as they are.  Vectorising never changes an element's arithmetic.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("vect-cost-model=cheap")
#endif

#include <array>
#include <complex>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

namespace shmpi::dtype {
namespace {

// ---------------------------------------------------------------- operations
//
// Each operation is a functor with apply(a, b) = a op b, `a` from the lower
// ranks.  Integer arithmetic wraps (it is done in an unsigned type at least
// as wide as an int, so that no signed overflow or promotion is involved).

template <class T>
using Wide = std::conditional_t<(sizeof(T) <= 4), std::uint32_t,
                                std::conditional_t<(sizeof(T) <= 8), std::uint64_t, unsigned __int128>>;

/// MPI_INTEGER16 is a __int128, which std::is_integral counts only in GNU
/// dialects.
template <class T>
constexpr bool kIntegral = std::is_integral_v<T> || std::is_same_v<T, __int128>;

/// Fortran REAL(16): IEEE binary128.
using Quad = __float128;

/// Fortran COMPLEX(16) (MPI_COMPLEX32): two binary128 values.  std::complex
/// is defined for float, double and long double only, so its two operations
/// are spelled out, with the textbook product (what gfortran computes).
struct QuadComplex {
    Quad re, im;
    friend QuadComplex operator+(QuadComplex a, QuadComplex b) { return {a.re + b.re, a.im + b.im}; }
    friend QuadComplex operator*(QuadComplex a, QuadComplex b) {
        return {a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re};
    }
};
static_assert(sizeof(QuadComplex) == 32);

struct Max {
    template <class T>
    static T apply(T a, T b) { return a > b ? a : b; }
};
struct Min {
    template <class T>
    static T apply(T a, T b) { return a < b ? a : b; }
};
/// Real floating types (a complex one is two of them).
template <class T>
constexpr bool kReal = std::is_floating_point_v<T> || std::is_same_v<T, Quad>;

// Real sums and products of two NaNs: IEEE 754 lets the result be either
// operand's NaN, and x86 gives the one in the instruction's first
// register, which the compiler picks differently in a loop's vector body
// and in its scalar remainder.  So an element's NaN depended on where a
// call's slice began, and an algorithm that cut the vector elsewhere
// returned other bits.  When `a` is a NaN the result is now `a` quieted
// (a op a); otherwise at most `b` is a NaN, and a op b is `b` quieted.
// The choice is of an operand, not of a result, so the loop still
// vectorises (a compare and a blend before the one add; choosing between
// a + a and a + b would evaluate both, which -ftrapping-math forbids).
// (Complex operations run scalar: one code path, the same bits.)
struct Sum {
    template <class T>
    static T apply(T a, T b) {
        if constexpr (kIntegral<T>) {
            return static_cast<T>(static_cast<Wide<T>>(a) + static_cast<Wide<T>>(b));
        } else if constexpr (kReal<T>) {
            return a + (a != a ? a : b);
        } else {
            return a + b;
        }
    }
};
struct Prod {
    template <class T>
    static T apply(T a, T b) {
        if constexpr (kIntegral<T>) {
            return static_cast<T>(static_cast<Wide<T>>(a) * static_cast<Wide<T>>(b));
        } else if constexpr (kReal<T>) {
            return a * (a != a ? a : b);
        } else {
            return a * b;
        }
    }
};
struct Land {
    template <class T>
    static T apply(T a, T b) { return static_cast<T>((a != T(0)) && (b != T(0))); }
};
struct Lor {
    template <class T>
    static T apply(T a, T b) { return static_cast<T>((a != T(0)) || (b != T(0))); }
};
struct Lxor {
    template <class T>
    static T apply(T a, T b) { return static_cast<T>((a != T(0)) != (b != T(0))); }
};
struct Band {
    template <class T>
    static T apply(T a, T b) { return static_cast<T>(a & b); }
};
struct Bor {
    template <class T>
    static T apply(T a, T b) { return static_cast<T>(a | b); }
};
struct Bxor {
    template <class T>
    static T apply(T a, T b) { return static_cast<T>(a ^ b); }
};

// ------------------------------------------------------------------- loops

template <class T>
bool aligned(const void* p) {
    return reinterpret_cast<std::uintptr_t>(p) % alignof(T) == 0;
}

/// inout[i] = in[i] op inout[i]: the tight loop when both arrays are
/// naturally aligned (always, for buffers the library allocates and for
/// user buffers of basic types), else one element at a time through memcpy.
/// Inlined into elementwise() below, and into each of its builds.
template <class T, class Op>
[[gnu::always_inline]] inline void elementwise_loop(const void* in, void* inout, std::int64_t n) {
    if (aligned<T>(in) && aligned<T>(inout)) {
        const T* __restrict a = static_cast<const T*>(in);
        T* __restrict b = static_cast<T*>(inout);
        for (std::int64_t i = 0; i < n; ++i) b[i] = Op::apply(a[i], b[i]);
        return;
    }
    const auto* a = static_cast<const std::byte*>(in);
    auto* b = static_cast<std::byte*>(inout);
    for (std::int64_t i = 0; i < n; ++i, a += sizeof(T), b += sizeof(T)) {
        T x, y;
        std::memcpy(&x, a, sizeof x);
        std::memcpy(&y, b, sizeof y);
        y = Op::apply(x, y);
        std::memcpy(b, &y, sizeof y);
    }
}

/// On x86-64 each loop is built twice, for AVX2 and for the baseline
/// (SSE2), and the one the CPU can run is taken.  Both give the same bits:
/// the same IEEE operations on each element, only wider.  With AVX2 a 4 KiB
/// double sum takes about 0.6 of the baseline's time, which more than pays
/// for the NaN choice of Sum and Prod above (a compare and a blend: 1.6
/// times the plain add's time in SSE2; micro_reduce).
///
/// GCC builds both from one function and the loader picks (target_clones,
/// an ifunc).  Clang (14) takes target_clones on plain functions only, not
/// on templates, so there elementwise() tests the CPU once and calls the
/// AVX2 build of the loop itself.
///
/// Not under GCC's ThreadSanitizer: an ifunc's resolver runs while the
/// loader relocates libshmpi, before libtsan has set itself up, and the
/// instrumented resolver then dies on its first call into libtsan, so
/// every program crashed before main.  There the baseline loop is built
/// alone.
#if defined(__x86_64__) && defined(__clang__)
#define SHMPI_KERNEL_DISPATCH 1
#else
#define SHMPI_KERNEL_DISPATCH 0
#endif
#if defined(__x86_64__) && defined(__GNUC__) && !SHMPI_KERNEL_DISPATCH && !defined(__SANITIZE_THREAD__)
#define SHMPI_KERNEL_CLONES [[gnu::target_clones("avx2", "default")]]
#else
#define SHMPI_KERNEL_CLONES
#endif

#if SHMPI_KERNEL_DISPATCH
template <class T, class Op>
[[gnu::target("avx2")]] void elementwise_avx2(const void* in, void* inout, std::int64_t n) {
    elementwise_loop<T, Op>(in, inout, n);
}

inline bool cpu_has_avx2() {
    static const bool has = (__builtin_cpu_init(), __builtin_cpu_supports("avx2") != 0);
    return has;
}
#endif

template <class T, class Op>
SHMPI_KERNEL_CLONES void elementwise(const void* in, void* inout, std::int64_t n, const void*) {
#if SHMPI_KERNEL_DISPATCH
    if (cpu_has_avx2()) {
        elementwise_avx2<T, Op>(in, inout, n);
        return;
    }
#endif
    elementwise_loop<T, Op>(in, inout, n);
}

/// MPI_MAXLOC (kMax) and MPI_MINLOC on dense (value, index) pairs, exactly
/// as MPI defines them: the pair with the larger (smaller) value wins; on
/// equal values the one with the smaller index wins.  The winner is copied
/// whole, so the result is always one of the input pairs: the first extreme
/// value in index order.
template <class V, class I, bool kMax>
void loc(const void* in, void* inout, std::int64_t n, const void*) {
    constexpr std::size_t kElem = sizeof(V) + sizeof(I);
    const auto* a = static_cast<const std::byte*>(in);
    auto* b = static_cast<std::byte*>(inout);
    for (std::int64_t e = 0; e < n; ++e, a += kElem, b += kElem) {
        V u, v;
        I i, j;
        std::memcpy(&u, a, sizeof u);
        std::memcpy(&i, a + sizeof(V), sizeof i);
        std::memcpy(&v, b, sizeof v);
        std::memcpy(&j, b + sizeof(V), sizeof j);
        const bool wins = kMax ? u > v : u < v;
        if (wins || (u == v && i < j)) std::memcpy(b, a, kElem);
    }
}

// ------------------------------------------------------------------- table

using Row = std::array<ReduceKernel, kOpKinds>;

constexpr std::uintptr_t kFirstHandle = 0x200;
constexpr std::size_t kHandles = 0x100;

constexpr int idx(OpKind k) { return static_cast<int>(k); }

/// Type classes of MPI-3.1 section 5.9.2.
template <class T>
Row integer_row() {
    Row r{};
    r[idx(OpKind::Max)] = elementwise<T, Max>;
    r[idx(OpKind::Min)] = elementwise<T, Min>;
    r[idx(OpKind::Sum)] = elementwise<T, Sum>;
    r[idx(OpKind::Prod)] = elementwise<T, Prod>;
    r[idx(OpKind::Land)] = elementwise<T, Land>;
    r[idx(OpKind::Lor)] = elementwise<T, Lor>;
    r[idx(OpKind::Lxor)] = elementwise<T, Lxor>;
    r[idx(OpKind::Band)] = elementwise<T, Band>;
    r[idx(OpKind::Bor)] = elementwise<T, Bor>;
    r[idx(OpKind::Bxor)] = elementwise<T, Bxor>;
    return r;
}

template <class T>
Row floating_row() {
    Row r{};
    r[idx(OpKind::Max)] = elementwise<T, Max>;
    r[idx(OpKind::Min)] = elementwise<T, Min>;
    r[idx(OpKind::Sum)] = elementwise<T, Sum>;
    r[idx(OpKind::Prod)] = elementwise<T, Prod>;
    return r;
}

/// `C` is the complex type itself (std::complex<T>, QuadComplex).
template <class C>
Row complex_row() {
    Row r{};
    r[idx(OpKind::Sum)] = elementwise<C, Sum>;
    r[idx(OpKind::Prod)] = elementwise<C, Prod>;
    return r;
}

/// C_BOOL and CXX_BOOL (one byte, read as a byte so that any nonzero value
/// counts as true) and Fortran LOGICAL.
template <class T>
Row logical_row() {
    Row r{};
    r[idx(OpKind::Land)] = elementwise<T, Land>;
    r[idx(OpKind::Lor)] = elementwise<T, Lor>;
    r[idx(OpKind::Lxor)] = elementwise<T, Lxor>;
    return r;
}

Row byte_row() {
    Row r{};
    r[idx(OpKind::Band)] = elementwise<std::uint8_t, Band>;
    r[idx(OpKind::Bor)] = elementwise<std::uint8_t, Bor>;
    r[idx(OpKind::Bxor)] = elementwise<std::uint8_t, Bxor>;
    return r;
}

template <class V, class I>
Row pair_row() {
    Row r{};
    r[idx(OpKind::Maxloc)] = loc<V, I, true>;
    r[idx(OpKind::Minloc)] = loc<V, I, false>;
    return r;
}

struct Table {
    std::array<Row, kHandles> rows{};
    void put(MPI_Datatype h, const Row& r) { rows[reinterpret_cast<std::uintptr_t>(h) - kFirstHandle] = r; }
};

Table make_table() {
    Table t;
    // C integers, the fixed-width family, the multi-language integers, and
    // Fortran INTEGER.  MPI_CHAR as a signed char, like MPICH.
    t.put(MPI_CHAR, integer_row<signed char>());
    t.put(MPI_SIGNED_CHAR, integer_row<signed char>());
    t.put(MPI_UNSIGNED_CHAR, integer_row<unsigned char>());
    t.put(MPI_SHORT, integer_row<short>());
    t.put(MPI_UNSIGNED_SHORT, integer_row<unsigned short>());
    t.put(MPI_INT, integer_row<int>());
    t.put(MPI_UNSIGNED, integer_row<unsigned>());
    t.put(MPI_LONG, integer_row<long>());
    t.put(MPI_UNSIGNED_LONG, integer_row<unsigned long>());
    t.put(MPI_LONG_LONG, integer_row<long long>());
    t.put(MPI_UNSIGNED_LONG_LONG, integer_row<unsigned long long>());
    t.put(MPI_INT8_T, integer_row<std::int8_t>());
    t.put(MPI_UINT8_T, integer_row<std::uint8_t>());
    t.put(MPI_INT16_T, integer_row<std::int16_t>());
    t.put(MPI_UINT16_T, integer_row<std::uint16_t>());
    t.put(MPI_INT32_T, integer_row<std::int32_t>());
    t.put(MPI_UINT32_T, integer_row<std::uint32_t>());
    t.put(MPI_INT64_T, integer_row<std::int64_t>());
    t.put(MPI_UINT64_T, integer_row<std::uint64_t>());
    t.put(MPI_AINT, integer_row<MPI_Aint>());
    t.put(MPI_OFFSET, integer_row<MPI_Offset>());
    t.put(MPI_COUNT, integer_row<MPI_Count>());
    t.put(MPI_INTEGER, integer_row<std::int32_t>());
    t.put(MPI_INTEGER1, integer_row<std::int8_t>());
    t.put(MPI_INTEGER2, integer_row<std::int16_t>());
    t.put(MPI_INTEGER4, integer_row<std::int32_t>());
    t.put(MPI_INTEGER8, integer_row<std::int64_t>());
    t.put(MPI_INTEGER16, integer_row<__int128>());
    // Floating point.
    t.put(MPI_FLOAT, floating_row<float>());
    t.put(MPI_DOUBLE, floating_row<double>());
    t.put(MPI_LONG_DOUBLE, floating_row<long double>());
    t.put(MPI_REAL, floating_row<float>());
    t.put(MPI_DOUBLE_PRECISION, floating_row<double>());
    t.put(MPI_REAL4, floating_row<float>());
    t.put(MPI_REAL8, floating_row<double>());
    t.put(MPI_REAL16, floating_row<Quad>());
    // Complex.
    t.put(MPI_C_FLOAT_COMPLEX, complex_row<std::complex<float>>());
    t.put(MPI_CXX_FLOAT_COMPLEX, complex_row<std::complex<float>>());
    t.put(MPI_COMPLEX, complex_row<std::complex<float>>());
    t.put(MPI_C_DOUBLE_COMPLEX, complex_row<std::complex<double>>());
    t.put(MPI_CXX_DOUBLE_COMPLEX, complex_row<std::complex<double>>());
    t.put(MPI_DOUBLE_COMPLEX, complex_row<std::complex<double>>());
    t.put(MPI_COMPLEX8, complex_row<std::complex<float>>());
    t.put(MPI_COMPLEX16, complex_row<std::complex<double>>());
    t.put(MPI_COMPLEX32, complex_row<QuadComplex>());
    t.put(MPI_C_LONG_DOUBLE_COMPLEX, complex_row<std::complex<long double>>());
    t.put(MPI_CXX_LONG_DOUBLE_COMPLEX, complex_row<std::complex<long double>>());
    // Logical.
    static_assert(sizeof(bool) == 1, "MPI_C_BOOL is read as one byte");
    t.put(MPI_C_BOOL, logical_row<std::uint8_t>());
    t.put(MPI_CXX_BOOL, logical_row<std::uint8_t>());
    t.put(MPI_LOGICAL, logical_row<std::int32_t>());
    // Byte.
    t.put(MPI_BYTE, byte_row());
    // Pairs for MINLOC and MAXLOC.
    t.put(MPI_FLOAT_INT, pair_row<float, int>());
    t.put(MPI_DOUBLE_INT, pair_row<double, int>());
    t.put(MPI_LONG_INT, pair_row<long, int>());
    t.put(MPI_2INT, pair_row<int, int>());
    t.put(MPI_SHORT_INT, pair_row<short, int>());
    t.put(MPI_LONG_DOUBLE_INT, pair_row<long double, int>());
    t.put(MPI_2REAL, pair_row<float, float>());
    t.put(MPI_2DOUBLE_PRECISION, pair_row<double, double>());
    t.put(MPI_2INTEGER, pair_row<std::int32_t, std::int32_t>());
    return t;
}

/// Built when the library loads (it depends on nothing else): reductions
/// look here on every call, and a function-local table cost each of them a
/// call and the test of its guard.
const Table g_table = make_table();

}  // namespace

ReduceKernel reduce_kernel(OpKind op, MPI_Datatype basic) {
    const auto v = reinterpret_cast<std::uintptr_t>(basic);
    if (v < kFirstHandle || v >= kFirstHandle + kHandles) return nullptr;
    return g_table.rows[v - kFirstHandle][static_cast<std::size_t>(op)];
}

const char* op_kind_name(OpKind op) {
    static constexpr const char* kNames[kOpKinds] = {
        "MPI_MAX",  "MPI_MIN", "MPI_SUM",  "MPI_PROD", "MPI_LAND",   "MPI_LOR",
        "MPI_LXOR", "MPI_BAND", "MPI_BOR", "MPI_BXOR", "MPI_MAXLOC", "MPI_MINLOC",
    };
    return kNames[static_cast<int>(op)];
}

}  // namespace shmpi::dtype
