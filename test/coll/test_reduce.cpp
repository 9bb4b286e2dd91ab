// Single-process tests of the reduction machinery: the kernel table, the
// kernels on odd alignments and at the edges of integer ranges, MINLOC and
// MAXLOC on dense pairs, the canonical fold, operation/datatype binding and
// the SHMPI_COLL* parsing.
#include <gtest/gtest.h>

#include <mpi.h>

#include <complex>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "coll/linear.hpp"
#include "coll/select.hpp"
#include "dtype/reduce_kernels.hpp"
#include "errors.hpp"
#include "op.hpp"

using shmpi::MpiError;
using shmpi::dtype::OpKind;
using shmpi::dtype::reduce_kernel;

namespace {

TEST(ReduceKernels, TableFollowsTheStandardsTypeClasses) {
    // Defined pairs.
    EXPECT_NE(reduce_kernel(OpKind::Sum, MPI_INT), nullptr);
    EXPECT_NE(reduce_kernel(OpKind::Max, MPI_LONG_DOUBLE), nullptr);
    EXPECT_NE(reduce_kernel(OpKind::Prod, MPI_C_DOUBLE_COMPLEX), nullptr);
    EXPECT_NE(reduce_kernel(OpKind::Land, MPI_C_BOOL), nullptr);
    EXPECT_NE(reduce_kernel(OpKind::Lxor, MPI_LOGICAL), nullptr);
    EXPECT_NE(reduce_kernel(OpKind::Bxor, MPI_BYTE), nullptr);
    EXPECT_NE(reduce_kernel(OpKind::Sum, MPI_CHAR), nullptr);
    EXPECT_NE(reduce_kernel(OpKind::Band, MPI_CHAR), nullptr);
    EXPECT_NE(reduce_kernel(OpKind::Minloc, MPI_2DOUBLE_PRECISION), nullptr);
    EXPECT_NE(reduce_kernel(OpKind::Maxloc, MPI_LONG_DOUBLE_INT), nullptr);
    EXPECT_NE(reduce_kernel(OpKind::Min, MPI_UINT64_T), nullptr);
    // Undefined ones.
    EXPECT_EQ(reduce_kernel(OpKind::Sum, MPI_BYTE), nullptr);
    EXPECT_EQ(reduce_kernel(OpKind::Max, MPI_C_FLOAT_COMPLEX), nullptr);
    EXPECT_EQ(reduce_kernel(OpKind::Band, MPI_DOUBLE), nullptr);
    EXPECT_EQ(reduce_kernel(OpKind::Land, MPI_FLOAT), nullptr);
    EXPECT_EQ(reduce_kernel(OpKind::Sum, MPI_C_BOOL), nullptr);
    EXPECT_EQ(reduce_kernel(OpKind::Maxloc, MPI_INT), nullptr);
    EXPECT_EQ(reduce_kernel(OpKind::Sum, MPI_2INT), nullptr);
    EXPECT_EQ(reduce_kernel(OpKind::Max, MPI_WCHAR), nullptr);
    EXPECT_EQ(reduce_kernel(OpKind::Sum, MPI_PACKED), nullptr);
    EXPECT_EQ(reduce_kernel(OpKind::Sum, MPI_DATATYPE_NULL), nullptr);
}

TEST(ReduceKernels, IntegerArithmeticWraps) {
    std::int8_t a[2] = {100, -128}, b[2] = {100, -1};
    reduce_kernel(OpKind::Sum, MPI_INT8_T)(a, b, 2, nullptr);
    EXPECT_EQ(b[0], static_cast<std::int8_t>(-56));
    EXPECT_EQ(b[1], static_cast<std::int8_t>(127));
    std::uint16_t c = 65535, d = 65535;
    reduce_kernel(OpKind::Prod, MPI_UINT16_T)(&c, &d, 1, nullptr);
    EXPECT_EQ(d, 1);
    std::int64_t e = INT64_MAX, f = 1;
    reduce_kernel(OpKind::Sum, MPI_INT64_T)(&e, &f, 1, nullptr);
    EXPECT_EQ(f, INT64_MIN);
}

TEST(ReduceKernels, UnsignedComparisonsAreUnsigned) {
    std::uint8_t a = 200, b = 100;
    reduce_kernel(OpKind::Max, MPI_UNSIGNED_CHAR)(&a, &b, 1, nullptr);
    EXPECT_EQ(b, 200);
    unsigned long c = 0, d = ~0ul;
    reduce_kernel(OpKind::Min, MPI_UNSIGNED_LONG)(&c, &d, 1, nullptr);
    EXPECT_EQ(d, 0ul);
}

TEST(ReduceKernels, MisalignedBuffersGiveTheSameResult) {
    constexpr int n = 1000;
    std::vector<double> x(n), y(n);
    for (int i = 0; i < n; ++i) {
        x[i] = 0.1 * i;
        y[i] = 1.0 / (i + 1);
    }
    std::vector<double> want = y;
    reduce_kernel(OpKind::Sum, MPI_DOUBLE)(x.data(), want.data(), n, nullptr);
    // The same doubles, one byte off their alignment.
    std::vector<unsigned char> xa(n * sizeof(double) + 1), ya(n * sizeof(double) + 1);
    std::memcpy(xa.data() + 1, x.data(), n * sizeof(double));
    std::memcpy(ya.data() + 1, y.data(), n * sizeof(double));
    reduce_kernel(OpKind::Sum, MPI_DOUBLE)(xa.data() + 1, ya.data() + 1, n, nullptr);
    EXPECT_EQ(std::memcmp(ya.data() + 1, want.data(), n * sizeof(double)), 0);
}

/// The bits of `in` op `inout` where both hold NaNs, element by element,
/// for every count from 1 to 40 and start from 0 to 3: they must be the
/// same wherever the element sits in the call (the loop's vector body and
/// its remainder once chose differently).
template <class T, class Bits>
void expect_nan_choice_independent_of_position(OpKind op, MPI_Datatype type, Bits in_nan, Bits inout_nan) {
    static_assert(sizeof(T) == sizeof(Bits));
    std::vector<T> in(64), inout(64);
    for (int start = 0; start < 4; ++start) {
        for (int count = 1; count <= 40; ++count) {
            for (int i = 0; i < 64; ++i) {
                std::memcpy(&in[i], &in_nan, sizeof in_nan);
                std::memcpy(&inout[i], &inout_nan, sizeof inout_nan);
            }
            reduce_kernel(op, type)(in.data() + start, inout.data() + start, count, nullptr);
            for (int i = start; i < start + count; ++i) {
                Bits got;
                std::memcpy(&got, &inout[i], sizeof got);
                // in (the lower ranks) is the NaN that wins, quieted.
                ASSERT_EQ(got, in_nan) << "start " << start << " count " << count << " element " << i;
            }
        }
    }
}

TEST(ReduceKernels, TwoNaNsGiveTheFirstOperandsWhereverTheElementSits) {
    // Quiet NaNs of different payloads and signs.
    expect_nan_choice_independent_of_position<float>(OpKind::Sum, MPI_FLOAT, std::uint32_t{0x7fc00001},
                                                     std::uint32_t{0xffc00002});
    expect_nan_choice_independent_of_position<float>(OpKind::Prod, MPI_FLOAT, std::uint32_t{0xffc00003},
                                                     std::uint32_t{0x7fc00004});
    expect_nan_choice_independent_of_position<double>(OpKind::Sum, MPI_DOUBLE,
                                                      std::uint64_t{0x7ff8000000000001},
                                                      std::uint64_t{0xfff8000000000002});
    expect_nan_choice_independent_of_position<double>(OpKind::Prod, MPI_DOUBLE,
                                                      std::uint64_t{0xfff8000000000003},
                                                      std::uint64_t{0x7ff8000000000004});
}

TEST(ReduceKernels, OneNaNIsTheResultWhicheverSideItIs) {
    const float nan_bits_in = [] {
        float f;
        const std::uint32_t b = 0x7fc00005;
        std::memcpy(&f, &b, sizeof f);
        return f;
    }();
    for (const OpKind op : {OpKind::Sum, OpKind::Prod}) {
        std::vector<float> in(19, 2.0f), inout(19, 3.0f);
        in[3] = nan_bits_in;
        inout[17] = nan_bits_in;
        reduce_kernel(op, MPI_FLOAT)(in.data(), inout.data(), 19, nullptr);
        for (const int i : {3, 17}) {
            std::uint32_t got;
            std::memcpy(&got, &inout[i], sizeof got);
            EXPECT_EQ(got, 0x7fc00005u) << "element " << i;
        }
        EXPECT_EQ(inout[0], op == OpKind::Sum ? 5.0f : 6.0f);
    }
}

TEST(ReduceKernels, LogicalResultsAreZeroOrOne) {
    int a[4] = {0, 5, -3, 0}, b[4] = {7, 2, 0, 0};
    reduce_kernel(OpKind::Lor, MPI_INT)(a, b, 4, nullptr);
    EXPECT_EQ(b[0], 1);
    EXPECT_EQ(b[1], 1);
    EXPECT_EQ(b[2], 1);
    EXPECT_EQ(b[3], 0);
    unsigned char c[2] = {2, 0}, d[2] = {1, 1};  // C_BOOL read as bytes
    reduce_kernel(OpKind::Lxor, MPI_C_BOOL)(c, d, 2, nullptr);
    EXPECT_EQ(d[0], 0);
    EXPECT_EQ(d[1], 1);
}

TEST(ReduceKernels, ComplexProduct) {
    std::complex<double> a[1] = {{1, 2}}, b[1] = {{3, -1}};
    reduce_kernel(OpKind::Prod, MPI_C_DOUBLE_COMPLEX)(a, b, 1, nullptr);
    EXPECT_EQ(b[0], std::complex<double>(5, 5));
}

/// Dense (packed) pairs of MPI_DOUBLE_INT: 12 bytes each, no padding.
std::vector<unsigned char> dense_pairs(const std::vector<std::pair<double, int>>& v) {
    std::vector<unsigned char> out(v.size() * 12);
    for (std::size_t i = 0; i < v.size(); ++i) {
        std::memcpy(&out[i * 12], &v[i].first, 8);
        std::memcpy(&out[i * 12 + 8], &v[i].second, 4);
    }
    return out;
}

std::pair<double, int> pair_at(const std::vector<unsigned char>& d, std::size_t i) {
    std::pair<double, int> p;
    std::memcpy(&p.first, &d[i * 12], 8);
    std::memcpy(&p.second, &d[i * 12 + 8], 4);
    return p;
}

TEST(ReduceKernels, MinlocAndMaxlocFollowSeed000) {
    // (u, i) op (v, j): larger/smaller value wins; equal values: min index.
    const auto in = dense_pairs({{1.0, 5}, {2.0, 7}, {3.0, 9}, {4.0, 2}});
    const auto io = dense_pairs({{1.0, 3}, {2.0, 8}, {1.0, 1}, {9.0, 0}});
    auto mx = io;
    reduce_kernel(OpKind::Maxloc, MPI_DOUBLE_INT)(in.data(), mx.data(), 4, nullptr);
    EXPECT_EQ(pair_at(mx, 0), std::make_pair(1.0, 3));
    EXPECT_EQ(pair_at(mx, 1), std::make_pair(2.0, 7));
    EXPECT_EQ(pair_at(mx, 2), std::make_pair(3.0, 9));
    EXPECT_EQ(pair_at(mx, 3), std::make_pair(9.0, 0));
    auto mn = io;
    reduce_kernel(OpKind::Minloc, MPI_DOUBLE_INT)(in.data(), mn.data(), 4, nullptr);
    EXPECT_EQ(pair_at(mn, 0), std::make_pair(1.0, 3));
    EXPECT_EQ(pair_at(mn, 1), std::make_pair(2.0, 7));
    EXPECT_EQ(pair_at(mn, 2), std::make_pair(1.0, 1));
    EXPECT_EQ(pair_at(mn, 3), std::make_pair(4.0, 2));
}

// ---------------------------------------------------------- canonical fold

/// A non-commutative "operation" that records the bracketing: elements are
/// indices into a table of expression strings.
std::vector<std::string>* g_exprs = nullptr;

void bracket(const void* in, void* inout, std::int64_t count, const void*) {
    const auto* a = static_cast<const std::int64_t*>(in);
    auto* b = static_cast<std::int64_t*>(inout);
    for (std::int64_t i = 0; i < count; ++i) {
        g_exprs->push_back("(" + (*g_exprs)[static_cast<std::size_t>(a[i])] + " " +
                           (*g_exprs)[static_cast<std::size_t>(b[i])] + ")");
        b[i] = static_cast<std::int64_t>(g_exprs->size() - 1);
    }
}

std::string canonical(int lo, int hi) {
    if (hi - lo == 1) return std::to_string(lo);
    const int mid = lo + (hi - lo + 1) / 2;
    return "(" + canonical(lo, mid) + " " + canonical(mid, hi) + ")";
}

/// n slots holding the expressions "0" .. "n-1", and the operation that
/// brackets them (bracket()), for the fold functions to fold.
struct Bracketing {
    explicit Bracketing(int n) : slots(static_cast<std::size_t>(n)) {
        g_exprs = &exprs;
        for (int r = 0; r < n; ++r) {
            exprs.push_back(std::to_string(r));
            slots[static_cast<std::size_t>(r)] = r;
        }
        red.combine = bracket;
        red.commutative = false;
        red.elem_bytes = 8;
    }
    std::byte* data() { return reinterpret_cast<std::byte*>(slots.data()); }
    /// The expression slot r holds.
    const std::string& at(int r) const {
        return exprs[static_cast<std::size_t>(slots[static_cast<std::size_t>(r)])];
    }
    std::vector<std::string> exprs;
    std::vector<std::int64_t> slots;
    shmpi::coll::Reduction red;
};

TEST(CanonicalFold, FoldSlotsBracketsByRecursiveBisection) {
    for (int n = 1; n <= 17; ++n) {
        Bracketing b(n);
        const int k = shmpi::coll::fold_slots(b.data(), 8, 0, n, 1, b.red);
        EXPECT_EQ(b.at(k), canonical(0, n)) << n;
    }
    EXPECT_EQ(canonical(0, 5), "(((0 1) 2) (3 4))");
}

TEST(CanonicalFold, FoldChainLeavesEveryPrefixFoldedLeftToRight) {
    // The prefix reductions' order: slot r ends up with (((lo op ..) ..) op r).
    for (int lo = 0; lo <= 2; ++lo) {
        for (int hi = lo + 1; hi <= 9; ++hi) {
            Bracketing b(hi);
            shmpi::coll::fold_chain(b.data(), 8, lo, hi, 1, b.red);
            std::string want = std::to_string(lo);
            for (int r = lo; r < hi; ++r) {
                if (r > lo) want = "(" + want + " " + std::to_string(r) + ")";
                EXPECT_EQ(b.at(r), want) << "slot " << r << " of [" << lo << ", " << hi << ")";
            }
            for (int r = 0; r < lo; ++r) EXPECT_EQ(b.at(r), std::to_string(r)) << "slot below lo";
        }
    }
}

// ------------------------------------------------------------------ binding

TEST(Binding, PredefinedOperationOnABasicType) {
    const shmpi::op::Op& sum = shmpi::op::op_of(MPI_SUM, "test");
    const shmpi::op::Binding b(sum, MPI_DOUBLE, *shmpi::dtype::predefined(MPI_DOUBLE), 10, "test");
    EXPECT_EQ(b.dense_count(), 10);
    EXPECT_EQ(b.reduction().elem_bytes, 8);
    EXPECT_TRUE(b.reduction().commutative);
}

TEST(Binding, InvalidPairIsErrOpNamingBoth) {
    const shmpi::op::Op& band = shmpi::op::op_of(MPI_BAND, "MPI_Reduce");
    try {
        const shmpi::op::Binding b(band, MPI_FLOAT, *shmpi::dtype::predefined(MPI_FLOAT), 1, "MPI_Reduce");
        FAIL() << "no error";
    } catch (const MpiError& e) {
        EXPECT_EQ(e.error_class(), MPI_ERR_OP);
        const std::string m = e.what();
        EXPECT_NE(m.find("MPI_Reduce"), std::string::npos) << m;
        EXPECT_NE(m.find("MPI_BAND"), std::string::npos) << m;
        EXPECT_NE(m.find("MPI_FLOAT"), std::string::npos) << m;
    }
}

TEST(Binding, NullAndOneSidedOperations) {
    EXPECT_THROW(shmpi::op::op_of(MPI_OP_NULL, "t"), MpiError);
    const shmpi::op::Op& replace = shmpi::op::op_of(MPI_REPLACE, "t");
    EXPECT_THROW(shmpi::op::Binding(replace, MPI_INT, *shmpi::dtype::predefined(MPI_INT), 1, "t"), MpiError);
    EXPECT_THROW(shmpi::op::destroy(MPI_SUM, "MPI_Op_free"), MpiError);
}

// ---------------------------------------------------------------- selection

struct Env {
    const char* name;
    explicit Env(const char* n, const char* v) : name(n) { setenv(n, v, 1); }
    ~Env() { unsetenv(name); }
};

TEST(Selection, DefaultsAreAutomatic) {
    const auto s = shmpi::coll::Selection::from_environment();
    for (int k = 0; k < shmpi::coll::kKinds; ++k) EXPECT_EQ(s.forced(static_cast<shmpi::coll::Kind>(k)), -1);
}

TEST(Selection, ForcedLinear) {
    Env all("SHMPI_COLL", "linear");
    Env one("SHMPI_COLL_REDUCE_SCATTER_BLOCK", "auto");
    const auto s = shmpi::coll::Selection::from_environment();
    EXPECT_EQ(s.forced(shmpi::coll::Kind::Bcast), 0);
    EXPECT_EQ(s.forced(shmpi::coll::Kind::Exscan), 0);
    EXPECT_EQ(s.forced(shmpi::coll::Kind::ReduceScatterBlock), -1);
}

TEST(Selection, UnknownNamesAreErrorsThatListTheKnownOnes) {
    {
        Env bad("SHMPI_COLL_REDUCE", "fastest");
        try {
            (void)shmpi::coll::Selection::from_environment();
            FAIL() << "no error";
        } catch (const MpiError& e) {
            const std::string m = e.what();
            EXPECT_NE(m.find("SHMPI_COLL_REDUCE=fastest"), std::string::npos) << m;
            EXPECT_NE(m.find("linear"), std::string::npos) << m;
        }
    }
    {
        Env bad("SHMPI_COLL", "nonsense");
        EXPECT_THROW((void)shmpi::coll::Selection::from_environment(), MpiError);
    }
}

}  // namespace
