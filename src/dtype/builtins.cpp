// The predefined datatypes, indexed by their MPI-5 ABI handle values: the C
// basic types, the pair types laid out as the equivalent C struct, and the
// MPI-1 bound markers.
#include <array>
#include <complex>
#include <cstddef>
#include <cstdint>
#include <cwchar>

#include "dtype/build.hpp"
#include "dtype/datatype.hpp"

namespace shmpi::dtype {
namespace {

constexpr std::uintptr_t kFirst = 0x200;
constexpr std::size_t kCount = 0x100;

/// Fortran REAL(16) and each half of COMPLEX(16): IEEE binary128.
using Quad = __float128;

class Table {
public:
    Table() { fill(); }
    const Datatype* get(MPI_Datatype h) const {
        const auto v = reinterpret_cast<std::uintptr_t>(h);
        if (v < kFirst || v >= kFirst + kCount) return nullptr;
        return valid_[v - kFirst] ? &types_[v - kFirst] : nullptr;
    }

private:
    Datatype& slot(MPI_Datatype h, const char* name) {
        const auto i = reinterpret_cast<std::uintptr_t>(h) - kFirst;
        valid_[i] = true;
        Datatype& d = types_[i];
        d.name = name;
        d.self = h;
        d.combiner = MPI_COMBINER_NAMED;
        return d;
    }

    template <class T>
    void basic(MPI_Datatype h, const char* name) {
        Datatype& d = slot(h, name);
        d.kind = Kind::Builtin;
        d.size = d.extent = d.true_extent = sizeof(T);
        d.align = alignof(T);
        d.elements = 1;
        d.basic = &d;
    }

    /// A pair type laid out as the C struct { T value; I index; }.
    template <class T, class I>
    void pair(MPI_Datatype h, const char* name, MPI_Datatype value, MPI_Datatype index) {
        struct P {
            T v;
            I i;
        };
        Datatype& d = slot(h, name);
        d.kind = Kind::Struct;
        d.count = 2;
        d.blocklens = {1, 1};
        d.displs = {0, static_cast<std::int64_t>(offsetof(P, i))};
        d.children.emplace_back(get(value));
        d.children.emplace_back(get(index));
        d.size = sizeof(T) + sizeof(I);
        d.extent = sizeof(P);
        d.true_extent = static_cast<std::int64_t>(offsetof(P, i) + sizeof(I));
        d.align = alignof(P);
        d.elements = 2;
        d.basic = &d;
        build::set_flags(d);
    }

    /// A bound marker of MPI-1 (MPI_LB, MPI_UB): no data, no extent.
    void marker(MPI_Datatype h, const char* name) {
        Datatype& d = slot(h, name);
        d.kind = Kind::Marker;
    }

    void fill();

    std::array<Datatype, kCount> types_{};
    std::array<bool, kCount> valid_{};
};

void Table::fill() {
    basic<MPI_Aint>(MPI_AINT, "MPI_AINT");
    basic<MPI_Count>(MPI_COUNT, "MPI_COUNT");
    basic<MPI_Offset>(MPI_OFFSET, "MPI_OFFSET");
    basic<char>(MPI_PACKED, "MPI_PACKED");
    basic<short>(MPI_SHORT, "MPI_SHORT");
    basic<int>(MPI_INT, "MPI_INT");
    basic<long>(MPI_LONG, "MPI_LONG");
    basic<long long>(MPI_LONG_LONG_INT, "MPI_LONG_LONG_INT");  // MPI_LONG_LONG is a synonym
    basic<unsigned short>(MPI_UNSIGNED_SHORT, "MPI_UNSIGNED_SHORT");
    basic<unsigned>(MPI_UNSIGNED, "MPI_UNSIGNED");
    basic<unsigned long>(MPI_UNSIGNED_LONG, "MPI_UNSIGNED_LONG");
    basic<unsigned long long>(MPI_UNSIGNED_LONG_LONG, "MPI_UNSIGNED_LONG_LONG");
    basic<float>(MPI_FLOAT, "MPI_FLOAT");
    basic<std::complex<float>>(MPI_C_COMPLEX, "MPI_C_COMPLEX");  // MPI_C_FLOAT_COMPLEX is a synonym
    basic<std::complex<float>>(MPI_CXX_FLOAT_COMPLEX, "MPI_CXX_FLOAT_COMPLEX");
    basic<double>(MPI_DOUBLE, "MPI_DOUBLE");
    basic<std::complex<double>>(MPI_C_DOUBLE_COMPLEX, "MPI_C_DOUBLE_COMPLEX");
    basic<std::complex<double>>(MPI_CXX_DOUBLE_COMPLEX, "MPI_CXX_DOUBLE_COMPLEX");
    basic<std::int32_t>(MPI_INTEGER, "MPI_INTEGER");
    basic<std::int32_t>(MPI_LOGICAL, "MPI_LOGICAL");
    basic<char>(MPI_CHARACTER, "MPI_CHARACTER");  // Fortran CHARACTER: in no reduction's group
    basic<float>(MPI_REAL, "MPI_REAL");
    basic<std::complex<float>>(MPI_COMPLEX, "MPI_COMPLEX");
    basic<double>(MPI_DOUBLE_PRECISION, "MPI_DOUBLE_PRECISION");
    basic<std::complex<double>>(MPI_DOUBLE_COMPLEX, "MPI_DOUBLE_COMPLEX");
    basic<long double>(MPI_LONG_DOUBLE, "MPI_LONG_DOUBLE");
    basic<std::complex<long double>>(MPI_C_LONG_DOUBLE_COMPLEX, "MPI_C_LONG_DOUBLE_COMPLEX");
    basic<std::complex<long double>>(MPI_CXX_LONG_DOUBLE_COMPLEX, "MPI_CXX_LONG_DOUBLE_COMPLEX");
    basic<bool>(MPI_C_BOOL, "MPI_C_BOOL");
    basic<bool>(MPI_CXX_BOOL, "MPI_CXX_BOOL");
    basic<wchar_t>(MPI_WCHAR, "MPI_WCHAR");
    basic<std::int8_t>(MPI_INT8_T, "MPI_INT8_T");
    basic<std::uint8_t>(MPI_UINT8_T, "MPI_UINT8_T");
    basic<char>(MPI_CHAR, "MPI_CHAR");
    basic<signed char>(MPI_SIGNED_CHAR, "MPI_SIGNED_CHAR");
    basic<unsigned char>(MPI_UNSIGNED_CHAR, "MPI_UNSIGNED_CHAR");
    basic<unsigned char>(MPI_BYTE, "MPI_BYTE");
    basic<std::int16_t>(MPI_INT16_T, "MPI_INT16_T");
    basic<std::uint16_t>(MPI_UINT16_T, "MPI_UINT16_T");
    basic<std::int32_t>(MPI_INT32_T, "MPI_INT32_T");
    basic<std::uint32_t>(MPI_UINT32_T, "MPI_UINT32_T");
    basic<std::int64_t>(MPI_INT64_T, "MPI_INT64_T");
    basic<std::uint64_t>(MPI_UINT64_T, "MPI_UINT64_T");
    // The optional size-specific Fortran types; REAL16 is IEEE binary128
    // (mpi.h).
    basic<std::int8_t>(MPI_INTEGER1, "MPI_INTEGER1");
    basic<std::int16_t>(MPI_INTEGER2, "MPI_INTEGER2");
    basic<std::int32_t>(MPI_INTEGER4, "MPI_INTEGER4");
    basic<std::int64_t>(MPI_INTEGER8, "MPI_INTEGER8");
    basic<__int128>(MPI_INTEGER16, "MPI_INTEGER16");
    basic<float>(MPI_REAL4, "MPI_REAL4");
    basic<double>(MPI_REAL8, "MPI_REAL8");
    basic<Quad>(MPI_REAL16, "MPI_REAL16");
    basic<std::complex<float>>(MPI_COMPLEX8, "MPI_COMPLEX8");
    basic<std::complex<double>>(MPI_COMPLEX16, "MPI_COMPLEX16");
    basic<Quad[2]>(MPI_COMPLEX32, "MPI_COMPLEX32");
    // The pair types come after the basic types they are made of.
    pair<float, int>(MPI_FLOAT_INT, "MPI_FLOAT_INT", MPI_FLOAT, MPI_INT);
    pair<double, int>(MPI_DOUBLE_INT, "MPI_DOUBLE_INT", MPI_DOUBLE, MPI_INT);
    pair<long, int>(MPI_LONG_INT, "MPI_LONG_INT", MPI_LONG, MPI_INT);
    pair<int, int>(MPI_2INT, "MPI_2INT", MPI_INT, MPI_INT);
    pair<short, int>(MPI_SHORT_INT, "MPI_SHORT_INT", MPI_SHORT, MPI_INT);
    pair<long double, int>(MPI_LONG_DOUBLE_INT, "MPI_LONG_DOUBLE_INT", MPI_LONG_DOUBLE, MPI_INT);
    pair<float, float>(MPI_2REAL, "MPI_2REAL", MPI_REAL, MPI_REAL);
    pair<double, double>(MPI_2DOUBLE_PRECISION, "MPI_2DOUBLE_PRECISION", MPI_DOUBLE_PRECISION,
                         MPI_DOUBLE_PRECISION);
    pair<std::int32_t, std::int32_t>(MPI_2INTEGER, "MPI_2INTEGER", MPI_INTEGER, MPI_INTEGER);
    marker(MPI_LB, "MPI_LB");
    marker(MPI_UB, "MPI_UB");
}

const Table& table() {
    static const Table t;
    return t;
}

}  // namespace

const Datatype* predefined(MPI_Datatype handle) { return table().get(handle); }

const Datatype& byte_type() {
    static const Datatype& t = *table().get(MPI_BYTE);
    return t;
}

}  // namespace shmpi::dtype
