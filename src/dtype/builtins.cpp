// The predefined datatypes, indexed by their MPI-5 ABI handle values.
#include <algorithm>
#include <array>
#include <cstddef>
#include <cstring>
#include <complex>
#include <cstdint>
#include <cwchar>

#include "dtype/datatype.hpp"

namespace shmpi::dtype {
namespace {

constexpr std::uintptr_t kFirst = 0x200;
constexpr std::size_t kCount = 0x100;

template <class T>
constexpr Datatype basic(const char* name) {
    Datatype d;
    d.size = d.extent = d.true_extent = d.basic_size = sizeof(T);
    d.blocks[0] = {0, static_cast<std::int64_t>(sizeof(T))};
    d.name = name;
    return d;
}

/// A pair type laid out as the C struct { T value; int index; }.
template <class T, class I>
constexpr Datatype pair(const char* name) {
    struct P {
        T v;
        I i;
    };
    Datatype d;
    d.size = sizeof(T) + sizeof(I);
    d.extent = d.true_extent = sizeof(P);
    d.contiguous = d.size == d.extent;
    d.blocks[0] = {0, static_cast<std::int64_t>(sizeof(T))};
    d.blocks[1] = {static_cast<std::int64_t>(offsetof(P, i)), static_cast<std::int64_t>(sizeof(I))};
    d.nblocks = 2;
    d.basic_size = sizeof(T) == sizeof(I) ? sizeof(T) : 0;
    d.name = name;
    return d;
}

/// A bound marker of MPI-1 (MPI_LB, MPI_UB): no data, no extent.
constexpr Datatype marker(const char* name) {
    Datatype d;
    d.name = name;
    return d;
}

struct Table {
    std::array<Datatype, kCount> types{};
    std::array<bool, kCount> valid{};
    constexpr void put(MPI_Datatype h, Datatype d) {
        const auto i = reinterpret_cast<std::uintptr_t>(h) - kFirst;
        types[i] = d;
        valid[i] = true;
    }
};

Table make_table() {
    Table t;
    t.put(MPI_AINT, basic<MPI_Aint>("MPI_AINT"));
    t.put(MPI_COUNT, basic<MPI_Count>("MPI_COUNT"));
    t.put(MPI_OFFSET, basic<MPI_Offset>("MPI_OFFSET"));
    t.put(MPI_PACKED, basic<char>("MPI_PACKED"));
    t.put(MPI_SHORT, basic<short>("MPI_SHORT"));
    t.put(MPI_INT, basic<int>("MPI_INT"));
    t.put(MPI_LONG, basic<long>("MPI_LONG"));
    t.put(MPI_LONG_LONG, basic<long long>("MPI_LONG_LONG"));
    t.put(MPI_UNSIGNED_SHORT, basic<unsigned short>("MPI_UNSIGNED_SHORT"));
    t.put(MPI_UNSIGNED, basic<unsigned>("MPI_UNSIGNED"));
    t.put(MPI_UNSIGNED_LONG, basic<unsigned long>("MPI_UNSIGNED_LONG"));
    t.put(MPI_UNSIGNED_LONG_LONG, basic<unsigned long long>("MPI_UNSIGNED_LONG_LONG"));
    t.put(MPI_FLOAT, basic<float>("MPI_FLOAT"));
    t.put(MPI_C_FLOAT_COMPLEX, basic<std::complex<float>>("MPI_C_FLOAT_COMPLEX"));
    t.put(MPI_CXX_FLOAT_COMPLEX, basic<std::complex<float>>("MPI_CXX_FLOAT_COMPLEX"));
    t.put(MPI_DOUBLE, basic<double>("MPI_DOUBLE"));
    t.put(MPI_C_DOUBLE_COMPLEX, basic<std::complex<double>>("MPI_C_DOUBLE_COMPLEX"));
    t.put(MPI_CXX_DOUBLE_COMPLEX, basic<std::complex<double>>("MPI_CXX_DOUBLE_COMPLEX"));
    t.put(MPI_INTEGER, basic<std::int32_t>("MPI_INTEGER"));
    t.put(MPI_LOGICAL, basic<std::int32_t>("MPI_LOGICAL"));
    t.put(MPI_REAL, basic<float>("MPI_REAL"));
    t.put(MPI_COMPLEX, basic<std::complex<float>>("MPI_COMPLEX"));
    t.put(MPI_DOUBLE_PRECISION, basic<double>("MPI_DOUBLE_PRECISION"));
    t.put(MPI_DOUBLE_COMPLEX, basic<std::complex<double>>("MPI_DOUBLE_COMPLEX"));
    t.put(MPI_LONG_DOUBLE, basic<long double>("MPI_LONG_DOUBLE"));
    t.put(MPI_C_LONG_DOUBLE_COMPLEX, basic<std::complex<long double>>("MPI_C_LONG_DOUBLE_COMPLEX"));
    t.put(MPI_CXX_LONG_DOUBLE_COMPLEX, basic<std::complex<long double>>("MPI_CXX_LONG_DOUBLE_COMPLEX"));
    t.put(MPI_FLOAT_INT, pair<float, int>("MPI_FLOAT_INT"));
    t.put(MPI_DOUBLE_INT, pair<double, int>("MPI_DOUBLE_INT"));
    t.put(MPI_LONG_INT, pair<long, int>("MPI_LONG_INT"));
    t.put(MPI_2INT, pair<int, int>("MPI_2INT"));
    t.put(MPI_SHORT_INT, pair<short, int>("MPI_SHORT_INT"));
    t.put(MPI_LONG_DOUBLE_INT, pair<long double, int>("MPI_LONG_DOUBLE_INT"));
    t.put(MPI_2REAL, pair<float, float>("MPI_2REAL"));
    t.put(MPI_2DOUBLE_PRECISION, pair<double, double>("MPI_2DOUBLE_PRECISION"));
    t.put(MPI_2INTEGER, pair<std::int32_t, std::int32_t>("MPI_2INTEGER"));
    t.put(MPI_C_BOOL, basic<bool>("MPI_C_BOOL"));
    t.put(MPI_CXX_BOOL, basic<bool>("MPI_CXX_BOOL"));
    t.put(MPI_WCHAR, basic<wchar_t>("MPI_WCHAR"));
    t.put(MPI_INT8_T, basic<std::int8_t>("MPI_INT8_T"));
    t.put(MPI_UINT8_T, basic<std::uint8_t>("MPI_UINT8_T"));
    t.put(MPI_CHAR, basic<char>("MPI_CHAR"));
    t.put(MPI_SIGNED_CHAR, basic<signed char>("MPI_SIGNED_CHAR"));
    t.put(MPI_UNSIGNED_CHAR, basic<unsigned char>("MPI_UNSIGNED_CHAR"));
    t.put(MPI_BYTE, basic<unsigned char>("MPI_BYTE"));
    t.put(MPI_INT16_T, basic<std::int16_t>("MPI_INT16_T"));
    t.put(MPI_UINT16_T, basic<std::uint16_t>("MPI_UINT16_T"));
    t.put(MPI_INT32_T, basic<std::int32_t>("MPI_INT32_T"));
    t.put(MPI_UINT32_T, basic<std::uint32_t>("MPI_UINT32_T"));
    t.put(MPI_INT64_T, basic<std::int64_t>("MPI_INT64_T"));
    t.put(MPI_UINT64_T, basic<std::uint64_t>("MPI_UINT64_T"));
    t.put(MPI_LB, marker("MPI_LB"));
    t.put(MPI_UB, marker("MPI_UB"));
    return t;
}

const Table& table() {
    static const Table t = make_table();
    return t;
}

}  // namespace

const Datatype* predefined(MPI_Datatype handle) {
    const auto v = reinterpret_cast<std::uintptr_t>(handle);
    if (v < kFirst || v >= kFirst + kCount) return nullptr;
    const Table& t = table();
    return t.valid[v - kFirst] ? &t.types[v - kFirst] : nullptr;
}

const Datatype* lookup(MPI_Datatype handle) {
    const auto v = reinterpret_cast<std::uintptr_t>(handle);
    if (v < 0x1000) return predefined(handle);
    const auto* d = reinterpret_cast<const Datatype*>(handle);
    return d->magic == Datatype::kMagic ? d : nullptr;
}

}  // namespace shmpi::dtype

namespace shmpi::dtype {

void pack(const Datatype& t, const void* buf, std::int64_t count, std::byte* out) {
    const auto* in = static_cast<const std::byte*>(buf);
    if (t.contiguous) {
        if (count > 0) std::memcpy(out, in + t.true_lb, static_cast<std::size_t>(count * t.size));
        return;
    }
    for (std::int64_t e = 0; e < count; ++e) {
        const std::byte* elem = in + e * t.extent;
        for (int b = 0; b < t.nblocks; ++b) {
            std::memcpy(out, elem + t.blocks[b].offset, static_cast<std::size_t>(t.blocks[b].length));
            out += t.blocks[b].length;
        }
    }
}

void unpack(const Datatype& t, const std::byte* in, std::int64_t bytes, void* buf) {
    auto* out = static_cast<std::byte*>(buf);
    if (t.contiguous) {
        if (bytes > 0) std::memcpy(out + t.true_lb, in, static_cast<std::size_t>(bytes));
        return;
    }
    for (std::int64_t e = 0; bytes > 0; ++e) {
        std::byte* elem = out + e * t.extent;
        for (int b = 0; b < t.nblocks && bytes > 0; ++b) {
            const std::int64_t n = std::min(bytes, t.blocks[b].length);
            std::memcpy(elem + t.blocks[b].offset, in, static_cast<std::size_t>(n));
            in += n;
            bytes -= n;
        }
    }
}

}  // namespace shmpi::dtype
