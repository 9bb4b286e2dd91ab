// The "external32" representation (MPI-3.1 13.5.2): every basic value
// big-endian, with the standard's sizes rather than this machine's.  On
// x86-64 Linux three kinds of value change size on the way:
//   MPI_LONG, MPI_UNSIGNED_LONG   8 bytes here, 4 in external32
//   MPI_WCHAR                     4 bytes here (UCS-4), 2 in external32
//   MPI_LONG_DOUBLE               x87 80-bit in 16 bytes here, IEEE binary128
//                                 in external32 (and each half of the long
//                                 double complex types)
// A value the narrower external size cannot hold is a conversion error
// (MPI_ERR_CONVERSION), never silently truncated.  Everything else keeps its
// size and is byte-swapped (each half on its own for complex types).
//
// The walk (walk.hpp) follows the normalised layout element by element: it
// is for portability, not speed, so it visits each basic value once through
// one switch.
#include <algorithm>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "dtype/datatype.hpp"
#include "dtype/walk.hpp"
#include "errors.hpp"

namespace shmpi::dtype {
namespace {

enum class Conv : std::uint8_t {
    Swap,         ///< same size, reverse the bytes
    SwapHalves,   ///< complex: reverse each half
    NarrowLong,   ///< signed 8 -> 4 bytes
    NarrowULong,  ///< unsigned 8 -> 4 bytes
    NarrowWchar,  ///< 4-byte code point -> 2 bytes
    Quad,         ///< long double -> binary128
    QuadComplex,  ///< long double complex -> two binary128
};

struct Rule {
    Conv conv;
    std::int64_t ext;  ///< bytes in external32
};

bool is(const Datatype& t, MPI_Datatype h) { return t.self == h; }

Rule rule_of(const Datatype& t) {
    // A duplicate of a predefined type (MPI_Type_dup, a Fortran kind type)
    // converts as the type it copies.
    if (t.basic != nullptr && t.basic != &t) return rule_of(*t.basic);
    if (is(t, MPI_LONG)) return {Conv::NarrowLong, 4};
    if (is(t, MPI_UNSIGNED_LONG)) return {Conv::NarrowULong, 4};
    if (is(t, MPI_WCHAR)) return {Conv::NarrowWchar, 2};
    if (is(t, MPI_LONG_DOUBLE)) return {Conv::Quad, 16};
    if (is(t, MPI_C_LONG_DOUBLE_COMPLEX) || is(t, MPI_CXX_LONG_DOUBLE_COMPLEX)) return {Conv::QuadComplex, 32};
    if (is(t, MPI_C_FLOAT_COMPLEX) || is(t, MPI_CXX_FLOAT_COMPLEX) || is(t, MPI_C_DOUBLE_COMPLEX) ||
        is(t, MPI_CXX_DOUBLE_COMPLEX) || is(t, MPI_COMPLEX) || is(t, MPI_DOUBLE_COMPLEX) || is(t, MPI_COMPLEX8) ||
        is(t, MPI_COMPLEX16) || is(t, MPI_COMPLEX32)) {
        return {Conv::SwapHalves, t.size};
    }
    return {Conv::Swap, t.size};
}

void reverse_copy(const std::byte* in, std::byte* out, std::int64_t n) {
    for (std::int64_t i = 0; i < n; ++i) out[i] = in[n - 1 - i];
}

template <class T>
T load(const std::byte* p) {
    T v;
    std::memcpy(&v, p, sizeof v);
    return v;
}
template <class T>
void store(std::byte* p, T v) {
    std::memcpy(p, &v, sizeof v);
}

static_assert(sizeof(__float128) == 16);

/// The conversions that keep the size are their own inverse: reverse the
/// bytes (of each half, for complex types).  True when `r` is one of them.
bool swap_same_size(const Datatype& t, const Rule& r, const std::byte* in, std::byte* out) {
    if (r.conv == Conv::Swap) {
        reverse_copy(in, out, t.size);
        return true;
    }
    if (r.conv == Conv::SwapHalves) {
        reverse_copy(in, out, t.size / 2);
        reverse_copy(in + t.size / 2, out + t.size / 2, t.size / 2);
        return true;
    }
    return false;
}

[[noreturn]] void conversion(const char* fn, const char* type, std::string value, const char* target) {
    throw MpiError(MPI_ERR_CONVERSION,
                   fmt::format("{}: the {} value {} does not fit the external32 {}", fn, type, value, target));
}

/// The native integer at `in` as the big-endian 4-byte `Narrow` at `out`,
/// which must hold its value (MPI_ERR_CONVERSION naming `type` otherwise).
template <class Narrow, class Native>
void narrow_to_external(const std::byte* in, std::byte* out, const char* fn, const char* type) {
    static_assert(sizeof(Narrow) == 4, "external32 narrows MPI_LONG and MPI_UNSIGNED_LONG to 4 bytes");
    const auto v = load<Native>(in);
    if (!std::in_range<Narrow>(v)) conversion(fn, type, std::to_string(v), "4-byte integer");
    const auto n = static_cast<Narrow>(v);
    reverse_copy(reinterpret_cast<const std::byte*>(&n), out, sizeof n);
}

/// The big-endian `Narrow` at `in` as the native `Native` at `out`.
template <class Narrow, class Native>
void widen_from_external(const std::byte* in, std::byte* out) {
    Narrow n;
    reverse_copy(in, reinterpret_cast<std::byte*>(&n), sizeof n);
    store<Native>(out, static_cast<Native>(n));
}

/// Writes one basic value at `in` (native) as external32 at `out`.
void to_external(const Datatype& t, const Rule& r, const std::byte* in, std::byte* out, const char* fn) {
    if (swap_same_size(t, r, in, out)) return;
    switch (r.conv) {
    case Conv::Swap:
    case Conv::SwapHalves:
        return;
    case Conv::NarrowLong: return narrow_to_external<std::int32_t, long>(in, out, fn, "MPI_LONG");
    case Conv::NarrowULong: return narrow_to_external<std::uint32_t, unsigned long>(in, out, fn, "MPI_UNSIGNED_LONG");
    case Conv::NarrowWchar: {
        const auto v = load<wchar_t>(in);
        if (v < 0 || v > 0xffff) conversion(fn, "MPI_WCHAR", fmt::format("{:#x}", static_cast<std::int64_t>(v)), "2-byte character");
        const auto n = static_cast<std::uint16_t>(v);
        reverse_copy(reinterpret_cast<const std::byte*>(&n), out, 2);
        return;
    }
    case Conv::Quad:
    case Conv::QuadComplex: {
        const int parts = r.conv == Conv::Quad ? 1 : 2;
        for (int k = 0; k < parts; ++k) {
            const auto q = static_cast<__float128>(load<long double>(in + k * sizeof(long double)));
            reverse_copy(reinterpret_cast<const std::byte*>(&q), out + k * 16, 16);
        }
        return;
    }
    }
}

/// Reads one external32 value at `in` into the native value at `out`.
void from_external(const Datatype& t, const Rule& r, const std::byte* in, std::byte* out, const char* fn) {
    if (swap_same_size(t, r, in, out)) return;
    switch (r.conv) {
    case Conv::Swap:
    case Conv::SwapHalves:
        return;
    case Conv::NarrowLong: return widen_from_external<std::int32_t, long>(in, out);
    case Conv::NarrowULong: return widen_from_external<std::uint32_t, unsigned long>(in, out);
    case Conv::NarrowWchar: return widen_from_external<std::uint16_t, wchar_t>(in, out);
    case Conv::Quad:
    case Conv::QuadComplex: {
        const int parts = r.conv == Conv::Quad ? 1 : 2;
        for (int k = 0; k < parts; ++k) {
            __float128 q;
            reverse_copy(in + k * 16, reinterpret_cast<std::byte*>(&q), 16);
            // binary128 has a wider exponent than x87: out-of-range values
            // become infinities, as a narrowing conversion of floats does.
            store<long double>(out + k * sizeof(long double), static_cast<long double>(q));
        }
        return;
    }
    }
    (void)fn;
}

std::int64_t element_size(const Datatype& t) {
    auto ext = [](const Datatype& b) { return rule_of(b).ext; };
    return sum_basic(t, ext);
}

/// The bytes of each value in external32 when `type` holds values of one
/// basic type that keep their size and are only byte-swapped (each half on
/// its own for complex types); 0 otherwise.  Such a type converts in bulk:
/// packed or unpacked by the pack engine, its values swapped in a tight
/// loop, some ten times faster than the walk.
std::int64_t bulk_unit(const Datatype& type) {
    if (type.basic == nullptr || type.basic->kind != Kind::Builtin) return 0;
    const Rule r = rule_of(*type.basic);
    if (r.conv == Conv::Swap) return type.basic->size;
    if (r.conv == Conv::SwapHalves) return type.basic->size / 2;
    return 0;
}

/// Copies the `n` bytes at `in` to `out` (the same place, or apart),
/// reversing the bytes of each `unit`-byte value.
void swap_copy(std::byte* out, const std::byte* in, std::int64_t n, std::int64_t unit) {
    switch (unit) {
    case 1:
        if (out != in) std::memcpy(out, in, static_cast<std::size_t>(n));
        return;
    case 2:
        for (std::int64_t k = 0; k < n; k += 2) store(out + k, __builtin_bswap16(load<std::uint16_t>(in + k)));
        return;
    case 4:
        for (std::int64_t k = 0; k < n; k += 4) store(out + k, __builtin_bswap32(load<std::uint32_t>(in + k)));
        return;
    case 8:
        for (std::int64_t k = 0; k < n; k += 8) store(out + k, __builtin_bswap64(load<std::uint64_t>(in + k)));
        return;
    default:
        for (std::int64_t k = 0; k < n; k += unit) {
            std::byte v[16];  // (units are 16 bytes at most: binary128)
            reverse_copy(in + k, v, unit);
            std::memcpy(out + k, v, static_cast<std::size_t>(unit));
        }
        return;
    }
}

/// Unpacks the first `bytes` bytes of an external32 stream of a bulk type
/// (bulk_unit() `unit`) into the elements at `buf`, through a small buffer.
void bulk_unpack(const Datatype& type, const std::byte* in, void* buf, std::int64_t bytes, std::int64_t unit) {
    const std::int64_t count = type.size > 0 ? (bytes + type.size - 1) / type.size : 0;
    if (type.is_run(count)) {
        swap_copy(static_cast<std::byte*>(buf) + type.true_lb, in, bytes, unit);
        return;
    }
    constexpr std::int64_t kStep = 64 * 1024;  // a multiple of every unit (1, 2, 4, 8, 16)
    std::vector<std::byte> tmp(static_cast<std::size_t>(std::min(kStep, bytes)));
    for (std::int64_t done = 0; done < bytes; done += kStep) {
        const std::int64_t n = std::min(kStep, bytes - done);
        swap_copy(tmp.data(), in + done, n, unit);
        unpack(type, buf, count, done, tmp.data(), n);
    }
}

}  // namespace

std::int64_t external32_size(const Datatype& type, std::int64_t count, const char* fn) {
    const std::int64_t each = element_size(type);
    std::int64_t bytes = 0;
    if (__builtin_mul_overflow(count, each, &bytes)) {
        throw MpiError(MPI_ERR_COUNT,
                       fmt::format("{}: {} elements of {} take {} bytes each in external32: the "
                                   "total overflows a byte count",
                                   fn, count, type.name, each));
    }
    return bytes;
}

void pack_external32(const Datatype& type, const void* buf, std::int64_t count, std::byte* out, const char* fn) {
    if (const std::int64_t unit = bulk_unit(type); unit > 0) {
        pack(type, buf, count, out);
        swap_copy(out, out, count * type.size, unit);
        return;
    }
    auto* base = static_cast<std::byte*>(const_cast<void*>(buf));
    auto f = [&](const Datatype& b, std::byte* p) {
        const Rule r = rule_of(b);
        to_external(b, r, p, out, fn);
        out += r.ext;
        return true;
    };
    for (std::int64_t i = 0; i < count; ++i) walk(type, base + i * type.extent, f);
}

void unpack_external32(const Datatype& type, const std::byte* in, void* buf, std::int64_t count, const char* fn) {
    if (const std::int64_t unit = bulk_unit(type); unit > 0) return bulk_unpack(type, in, buf, count * type.size, unit);
    auto* base = static_cast<std::byte*>(buf);
    auto f = [&](const Datatype& b, std::byte* p) {
        const Rule r = rule_of(b);
        from_external(b, r, in, p, fn);
        in += r.ext;
        return true;
    };
    for (std::int64_t i = 0; i < count; ++i) walk(type, base + i * type.extent, f);
}

std::int64_t external32_value_size(const Datatype& basic) { return rule_of(basic).ext; }

void unpack_external32_values(const Datatype& type, const std::byte* in, void* buf, std::int64_t values,
                              const char* fn) {
    if (const std::int64_t unit = bulk_unit(type); unit > 0) {
        return bulk_unpack(type, in, buf, values * type.basic->size, unit);
    }
    auto* base = static_cast<std::byte*>(buf);
    std::int64_t left = values;
    auto f = [&](const Datatype& b, std::byte* p) {
        if (left == 0) return false;
        const Rule r = rule_of(b);
        from_external(b, r, in, p, fn);
        in += r.ext;
        return --left > 0;
    };
    for (std::int64_t i = 0; left > 0 && walk(type, base + i * type.extent, f); ++i) {
    }
}

}  // namespace shmpi::dtype
