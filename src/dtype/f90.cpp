// MPI_Type_create_f90_integer, _real and _complex (MPI-3.1 17.1.9): the
// predefined type that matches a Fortran variable of KIND
// SELECTED_INT_KIND(r) or SELECTED_REAL_KIND(p, r), mapped to the C type
// of the same representation.  Each (combiner, p, r) is made once and kept
// for the life of the process: like a named type, it is never freed, and
// every call with the same arguments returns the same handle.
#include <fmt/format.h>

#include <cfloat>
#include <map>
#include <mutex>
#include <tuple>

#include "dtype/build.hpp"
#include "dtype/datatype.hpp"
#include "errors.hpp"

namespace shmpi::dtype {
namespace {

/// IEEE binary128 (Fortran REAL(16), MPI_REAL16): PRECISION 33 and RANGE
/// 4931, as FLT128_DIG and -FLT128_MIN_10_EXP of <quadmath.h> give them.
constexpr int kQuadDigits = 33;
constexpr int kQuadRange = 4931;

/// The C type behind a Fortran kind, or MPI_DATATYPE_NULL if none has
/// the precision `p` and decimal exponent range `r` (MPI_UNDEFINED: any).
MPI_Datatype real_kind(int p, int r, bool complex) {
    struct Kind {
        int precision, range;
        MPI_Datatype real, cplx;
    };
    // Fortran's PRECISION and RANGE of each representation: the C <float.h>
    // digits and the smaller of the two decimal exponent limits.
    static const Kind kinds[] = {
        {FLT_DIG, -FLT_MIN_10_EXP, MPI_FLOAT, MPI_C_FLOAT_COMPLEX},
        {DBL_DIG, -DBL_MIN_10_EXP, MPI_DOUBLE, MPI_C_DOUBLE_COMPLEX},
        {LDBL_DIG, -LDBL_MIN_10_EXP, MPI_LONG_DOUBLE, MPI_C_LONG_DOUBLE_COMPLEX},
        {kQuadDigits, kQuadRange, MPI_REAL16, MPI_COMPLEX32},
    };
    for (const Kind& k : kinds) {
        if ((p == MPI_UNDEFINED || p <= k.precision) && (r == MPI_UNDEFINED || r <= k.range)) {
            return complex ? k.cplx : k.real;
        }
    }
    return MPI_DATATYPE_NULL;
}

/// SELECTED_INT_KIND(r): the smallest integer holding every value with r
/// decimal digits (-10^r < n < 10^r).
MPI_Datatype int_kind(int r) {
    if (r <= 2) return MPI_INT8_T;
    if (r <= 4) return MPI_INT16_T;
    if (r <= 9) return MPI_INT32_T;
    if (r <= 18) return MPI_INT64_T;
    if (r <= 38) return MPI_INTEGER16;
    return MPI_DATATYPE_NULL;
}

}  // namespace

const Datatype& f90_type(int combiner, int p, int r, const char* fn) {
    MPI_Datatype basic = MPI_DATATYPE_NULL;
    std::vector<int> ints;
    if (combiner == MPI_COMBINER_F90_INTEGER) {
        if (r == MPI_UNDEFINED) {
            throw MpiError(MPI_ERR_ARG, fmt::format("{}: r is MPI_UNDEFINED (the range must be given)", fn));
        }
        basic = int_kind(r);
        ints = {r};
        if (basic == MPI_DATATYPE_NULL) {
            throw MpiError(MPI_ERR_ARG, fmt::format("{}: no integer kind has a range of r = {} decimal digits "
                                                    "(at most 38)",
                                                    fn, r));
        }
    } else {
        if (p == MPI_UNDEFINED && r == MPI_UNDEFINED) {
            throw MpiError(MPI_ERR_ARG, fmt::format("{}: p and r are both MPI_UNDEFINED (give one)", fn));
        }
        basic = real_kind(p, r, combiner == MPI_COMBINER_F90_COMPLEX);
        ints = {p, r};
        if (basic == MPI_DATATYPE_NULL) {
            throw MpiError(MPI_ERR_ARG, fmt::format("{}: no real kind has precision p = {} and exponent range "
                                                    "r = {} (at most p = {}, r = {})",
                                                    fn, p, r, kQuadDigits, kQuadRange));
        }
    }
    // Callers are serialized (by the program, or by the C boundary's lock
    // under MPI_THREAD_MULTIPLE); this lock only keeps the cache sound if
    // they were not.
    static std::mutex lock;
    static auto* made = new std::map<std::tuple<int, int, int>, const Datatype*>();  // never destroyed
    std::lock_guard guard(lock);
    const Datatype*& slot = (*made)[{combiner, ints.front(), ints.back()}];
    if (slot == nullptr) {
        Datatype* t = build::same_layout(*predefined(basic), "Fortran kind", fn).release();
        build::set_envelope(*t, combiner, std::move(ints), {}, {});
        t->committed = true;
        // Predefined from here on: no references counted, never freed
        // (MPI_Type_free refuses it), no MPI name (the combiner is not
        // MPI_COMBINER_NAMED).
        t->predefined = true;
        slot = t;
    }
    return *slot;
}

}  // namespace shmpi::dtype
