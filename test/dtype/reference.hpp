// The oracle of the datatype tests: constructor calls described as data
// (Spec), a random generator of nested Specs, and a reference flattening
// written straight from MPI-3.1 4.1 that shares no code with src/dtype/.
//
// The reference enumerates every placed copy of every old type, one by one,
// and keeps the type map as a flat list of basic entries in order; packing
// is a copy entry by entry.  The engine computes the same things
// analytically from a normalised tree, so agreement on thousands of random
// types is a strong check.  The bound rules it encodes (the same ones
// src/dtype/datatype.hpp states, and Open MPI follows):
//   - a copy of an old type contributes its lb and ub (data or not), and its
//     markers when it has sticky bounds; blocks of length 0 contribute
//     nothing;
//   - lb = lowest lb marker, else lowest copy lb; ub likewise (highest);
//   - without an ub marker, ub is padded so that ub - lb is a multiple of the
//     largest alignment of the basic types with data (all constructors but
//     resized);
//   - true bounds come from data entries only.
#pragma once

#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "dtype/datatype.hpp"

namespace ref {

/// One basic element of a type map: where it is and how many bytes it has.
struct Entry {
    std::int64_t disp;
    std::int64_t len;
    /// External32 writes the element big-endian in units of this many
    /// bytes (a complex number is two reals); 0 for long double, whose
    /// binary128 form is no reordering of its bytes.
    std::int64_t word;
};

/// A flattened type map with its bounds.
struct Map {
    std::vector<Entry> entries;  ///< in type-map order
    std::int64_t lb = 0, ub = 0;
    bool sticky_lb = false, sticky_ub = false;
    std::int64_t align = 1;
    MPI_Datatype basic = MPI_DATATYPE_NULL;  ///< the one basic type, or NULL when mixed/none

    std::int64_t extent() const { return ub - lb; }
    std::int64_t size() const { return sums().size; }
    bool has_data() const { return size() > 0; }
    std::int64_t true_lb() const { return sums().true_lb; }
    std::int64_t true_ub() const { return sums().true_ub; }

private:
    /// What size(), true_lb() and true_ub() add up over every entry: the
    /// large-vector tests have maps of 4 million entries, asked dozens of
    /// times a type, so the first call keeps the answers.  Entries are only
    /// ever appended, so answers kept at another entry count are redone.
    struct Sums {
        std::size_t entries = SIZE_MAX;  ///< entries.size() they were taken at
        std::int64_t size = 0, true_lb = 0, true_ub = 0;
    };
    mutable Sums sums_;
    const Sums& sums() const {
        if (sums_.entries == entries.size()) return sums_;
        Sums s;
        s.entries = entries.size();
        bool any = false;
        for (const Entry& e : entries) {
            s.size += e.len;
            if (e.len == 0) continue;
            s.true_lb = any ? std::min(s.true_lb, e.disp) : e.disp;
            s.true_ub = any ? std::max(s.true_ub, e.disp + e.len) : e.disp + e.len;
            any = true;
        }
        sums_ = s;
        return sums_;
    }
};

/// A predefined type as the reference knows it: its entries and alignment.
inline Map basic_map(MPI_Datatype t) {
    struct Info {
        MPI_Datatype h;
        std::vector<Entry> e;
        std::int64_t extent, align;
    };
    struct DI { double d; int i; };
    struct FI { float f; int i; };
    struct SI { short s; int i; };
    struct LDI { long double d; int i; };
    static const std::vector<Info> table = {
        {MPI_CHAR, {{0, 1, 1}}, 1, 1},
        {MPI_BYTE, {{0, 1, 1}}, 1, 1},
        {MPI_SHORT, {{0, 2, 2}}, 2, 2},
        {MPI_INT, {{0, 4, 4}}, 4, 4},
        {MPI_FLOAT, {{0, 4, 4}}, 4, 4},
        {MPI_DOUBLE, {{0, 8, 8}}, 8, 8},
        {MPI_INT64_T, {{0, 8, 8}}, 8, 8},
        {MPI_LONG_DOUBLE, {{0, sizeof(long double), 0}}, sizeof(long double), alignof(long double)},
        {MPI_C_DOUBLE_COMPLEX, {{0, 16, 8}}, 16, 8},
        {MPI_2INT, {{0, 4, 4}, {4, 4, 4}}, 8, 4},
        {MPI_DOUBLE_INT, {{0, 8, 8}, {offsetof(DI, i), 4, 4}}, sizeof(DI), alignof(DI)},
        {MPI_FLOAT_INT, {{0, 4, 4}, {offsetof(FI, i), 4, 4}}, sizeof(FI), alignof(FI)},
        {MPI_SHORT_INT, {{0, 2, 2}, {offsetof(SI, i), 4, 4}}, sizeof(SI), alignof(SI)},
        {MPI_LONG_DOUBLE_INT, {{0, sizeof(long double), 0}, {offsetof(LDI, i), 4, 4}}, sizeof(LDI), alignof(LDI)},
    };
    for (const Info& i : table) {
        if (i.h == t) {
            Map m;
            m.entries = i.e;
            m.ub = i.extent;
            m.align = i.align;
            m.basic = t;
            return m;
        }
    }
    throw std::logic_error("reference: unknown basic type");
}

/// The basic types the generator draws from.
inline const std::vector<MPI_Datatype>& basic_types() {
    static const std::vector<MPI_Datatype> v = {
        MPI_CHAR, MPI_SHORT, MPI_INT, MPI_FLOAT, MPI_DOUBLE, MPI_INT64_T, MPI_LONG_DOUBLE,
        MPI_C_DOUBLE_COMPLEX, MPI_2INT, MPI_DOUBLE_INT, MPI_FLOAT_INT, MPI_SHORT_INT, MPI_LONG_DOUBLE_INT,
    };
    return v;
}

/// A constructor call, as data.
struct Spec {
    enum Op {
        Basic, Contiguous, Vector, Hvector, Indexed, Hindexed, IndexedBlock, HindexedBlock, Struct,
        Resized, Dup, Subarray, LB, UB
    };
    Op op = Basic;
    MPI_Datatype basic = MPI_INT;
    int count = 0, blocklen = 0, stride = 0;
    MPI_Aint hstride = 0, lb = 0, extent = 0;
    std::vector<int> blocklens, displs;
    std::vector<MPI_Aint> hdispls;
    std::vector<int> sizes, subsizes, starts;
    int order = MPI_ORDER_C;
    std::vector<Spec> kids;  ///< one old type, or one per struct block
};

// ------------------------------------------------------------ flattening

/// The type map of `count` copies of the maps placed at the given
/// displacements, with MPI_LB/MPI_UB markers, by the rules at the top.
struct Placer {
    Map out;
    bool any = false;
    std::int64_t plb = 0, pub = 0;
    /// Places `n` copies of `c` at d, d + extent, ... (a block of a
    /// constructor), their entries written in one go (a block of 4 MiB of
    /// bytes is 4 million entries: a push_back each was most of the
    /// large-vector tests' time under ASan).
    void copy_block(const Map& c, std::int64_t d, std::int64_t n) {
        if (n <= 0) return;
        const std::int64_t ext = c.extent();
        const std::size_t per = c.entries.size(), at = out.entries.size();
        out.entries.resize(at + static_cast<std::size_t>(n) * per);
        Entry* to = out.entries.data() + at;
        for (std::int64_t k = 0; k < n; ++k)
            for (const Entry& e : c.entries) *to++ = {e.disp + d + k * ext, e.len, e.word};
        // The copies' lowest and highest bounds are those of the first and
        // the last copy (the extent may be negative).
        const std::int64_t first = d, last = d + (n - 1) * ext;
        const std::int64_t lo = std::min(first, last) + c.lb, hi = std::max(first, last) + c.ub;
        plb = any ? std::min(plb, lo) : lo;
        pub = any ? std::max(pub, hi) : hi;
        any = true;
        if (c.sticky_lb) marker_lb(lo);
        if (c.sticky_ub) marker_ub(hi);
        if (c.has_data()) out.align = std::max(out.align, c.align);
    }
    void marker_lb(std::int64_t d) {
        out.lb = out.sticky_lb ? std::min(out.lb, d) : d;
        out.sticky_lb = true;
    }
    void marker_ub(std::int64_t d) {
        out.ub = out.sticky_ub ? std::max(out.ub, d) : d;
        out.sticky_ub = true;
    }
    Map finish(bool pad) {
        if (!out.sticky_lb) out.lb = any ? plb : 0;
        if (!out.sticky_ub) out.ub = any ? pub : 0;
        const std::int64_t ext = out.ub - out.lb;
        if (pad && !out.sticky_ub && out.align > 1 && ext > 0 && ext % out.align != 0) {
            out.ub += out.align - ext % out.align;
        }
        return std::move(out);
    }
};

/// The basic type the map is built from: the common one among the old
/// types of blocks that place copies, NULL when they differ.
inline MPI_Datatype common_basic(const std::vector<std::pair<MPI_Datatype, bool>>& olds) {
    MPI_Datatype b = MPI_DATATYPE_NULL;
    bool first = true;
    for (const auto& [t, placed] : olds) {
        if (!placed) continue;
        if (first) {
            b = t;
            first = false;
        } else if (b != t) {
            return MPI_DATATYPE_NULL;
        }
    }
    return b;
}

inline Map flatten(const Spec& s) {
    Placer p;
    switch (s.op) {
    case Spec::Basic: return basic_map(s.basic);
    case Spec::LB:
    case Spec::UB: throw std::logic_error("reference: a marker is not a type");
    case Spec::Contiguous: {
        const Map c = flatten(s.kids[0]);
        p.copy_block(c, 0, s.count);
        Map m = p.finish(true);
        m.basic = c.basic;
        return m;
    }
    case Spec::Vector:
    case Spec::Hvector: {
        const Map c = flatten(s.kids[0]);
        const std::int64_t stride = s.op == Spec::Vector ? s.stride * c.extent() : s.hstride;
        if (s.count > 0 && s.blocklen > 0)  // 4 MiB of bytes is 4M entries: no regrowing
            p.out.entries.reserve(static_cast<std::size_t>(s.count) * static_cast<std::size_t>(s.blocklen) *
                                  c.entries.size());
        for (int b = 0; b < s.count; ++b)
            p.copy_block(c, b * stride, s.blocklen);
        Map m = p.finish(true);
        m.basic = c.basic;
        return m;
    }
    case Spec::Indexed:
    case Spec::Hindexed:
    case Spec::IndexedBlock:
    case Spec::HindexedBlock: {
        const Map c = flatten(s.kids[0]);
        for (int b = 0; b < s.count; ++b) {
            const int n = (s.op == Spec::IndexedBlock || s.op == Spec::HindexedBlock) ? s.blocklen : s.blocklens[b];
            const std::int64_t d = (s.op == Spec::Indexed || s.op == Spec::IndexedBlock)
                                       ? s.displs[b] * c.extent()
                                       : s.hdispls[b];
            p.copy_block(c, d, n);
        }
        Map m = p.finish(true);
        m.basic = c.basic;
        return m;
    }
    case Spec::Struct: {
        std::vector<std::pair<MPI_Datatype, bool>> olds;
        for (int b = 0; b < s.count; ++b) {
            const Spec& k = s.kids[b];
            if (k.op == Spec::LB || k.op == Spec::UB) {
                if (s.blocklens[b] > 0) {
                    if (k.op == Spec::LB) p.marker_lb(s.hdispls[b]);
                    else p.marker_ub(s.hdispls[b]);
                }
                continue;
            }
            const Map c = flatten(k);
            olds.push_back({c.basic, s.blocklens[b] > 0});
            p.copy_block(c, s.hdispls[b], s.blocklens[b]);
        }
        Map m = p.finish(true);
        m.basic = common_basic(olds);
        return m;
    }
    case Spec::Resized: {
        Map m = flatten(s.kids[0]);
        m.lb = s.lb;
        m.ub = s.lb + s.extent;
        m.sticky_lb = m.sticky_ub = true;
        return m;
    }
    case Spec::Dup: return flatten(s.kids[0]);
    case Spec::Subarray: {
        // Every element of the subarray at its place in the whole array,
        // in array order; bounds [0, whole array).
        const Map c = flatten(s.kids[0]);
        const int n = static_cast<int>(s.sizes.size());
        std::vector<std::int64_t> stride(n);
        std::int64_t total = 1;
        for (int i = 0; i < n; ++i) {
            const int d = s.order == MPI_ORDER_C ? n - 1 - i : i;  // fastest first
            stride[d] = total * c.extent();
            total *= s.sizes[d];
        }
        std::vector<int> idx(n, 0);
        bool empty = false;
        for (int d = 0; d < n; ++d) empty = empty || s.subsizes[d] == 0;
        Map m;
        m.align = c.align;
        m.basic = c.basic;
        if (!empty) {
            while (true) {
                std::int64_t disp = 0;
                for (int d = 0; d < n; ++d) disp += (s.starts[d] + idx[d]) * stride[d];
                for (const Entry& e : c.entries) m.entries.push_back({e.disp + disp, e.len, e.word});
                int d = 0;
                for (; d < n; ++d) {
                    const int dim = s.order == MPI_ORDER_C ? n - 1 - d : d;
                    if (++idx[dim] < s.subsizes[dim]) break;
                    idx[dim] = 0;
                }
                if (d == n) break;
            }
        }
        m.lb = 0;
        m.ub = total * c.extent();
        m.sticky_lb = m.sticky_ub = true;
        return m;
    }
    }
    throw std::logic_error("reference: unknown op");
}

// --------------------------------------------------------------- building

/// Builds the Spec with the engine's constructors (C++ entry points).  The
/// returned Ref holds the only reference, like a user handle would.
inline shmpi::dtype::Ref build(const Spec& s) {
    using namespace shmpi::dtype;
    const char* fn = "test";
    auto adopt = [](Datatype* t) {
        Ref r(t);
        free_handle(*t, "test");  // the Ref now holds the only reference
        return r;
    };
    switch (s.op) {
    case Spec::Basic: return Ref(predefined(s.basic));
    case Spec::LB: return Ref(predefined(MPI_LB));
    case Spec::UB: return Ref(predefined(MPI_UB));
    default: break;
    }
    std::vector<Ref> kids;
    std::vector<const Datatype*> raw;
    for (const Spec& k : s.kids) {
        kids.push_back(build(k));
        raw.push_back(kids.back().get());
    }
    static const Datatype& none = *predefined(MPI_BYTE);  // structs of 0 blocks have no old type
    const Datatype& old = raw.empty() ? none : *raw[0];
    switch (s.op) {
    case Spec::Contiguous: return adopt(make_contiguous(s.count, old, fn));
    case Spec::Vector: return adopt(make_vector(s.count, s.blocklen, s.stride, old, fn));
    case Spec::Hvector: return adopt(make_hvector(s.count, s.blocklen, s.hstride, old, fn));
    case Spec::Indexed: return adopt(make_indexed(s.count, s.blocklens.data(), s.displs.data(), old, fn));
    case Spec::Hindexed: return adopt(make_hindexed(s.count, s.blocklens.data(), s.hdispls.data(), old, fn));
    case Spec::IndexedBlock: return adopt(make_indexed_block(s.count, s.blocklen, s.displs.data(), old, fn));
    case Spec::HindexedBlock: return adopt(make_hindexed_block(s.count, s.blocklen, s.hdispls.data(), old, fn));
    case Spec::Struct: return adopt(make_struct(s.count, s.blocklens.data(), s.hdispls.data(), raw.data(), fn));
    case Spec::Resized: return adopt(make_resized(old, s.lb, s.extent, fn));
    case Spec::Dup: return adopt(make_dup(old, fn));
    case Spec::Subarray:
        return adopt(make_subarray(static_cast<int>(s.sizes.size()), s.sizes.data(), s.subsizes.data(),
                                   s.starts.data(), s.order, old, fn));
    default: break;
    }
    throw std::logic_error("reference: unknown op");
}

// ------------------------------------------------------------ generation

/// Where random choices come from: a seeded engine for the unit tests, the
/// fuzzer's bytes for the fuzz target.
using Draw = std::function<std::uint64_t(std::uint64_t bound)>;  ///< uniform in [0, bound)

inline Draw draw_from(std::mt19937_64& rng) {
    return [&rng](std::uint64_t bound) { return bound == 0 ? 0 : rng() % bound; };
}

inline int pick(const Draw& d, int lo, int hi) { return lo + static_cast<int>(d(static_cast<std::uint64_t>(hi - lo + 1))); }

/// Copies placed by a spec, to keep random types small enough to flatten.
inline std::int64_t copies(const Spec& s) {
    switch (s.op) {
    case Spec::Basic: return 1;
    case Spec::LB:
    case Spec::UB: return 0;
    case Spec::Contiguous: return s.count * copies(s.kids[0]);
    case Spec::Vector:
    case Spec::Hvector: return static_cast<std::int64_t>(s.count) * s.blocklen * copies(s.kids[0]);
    case Spec::IndexedBlock:
    case Spec::HindexedBlock: return static_cast<std::int64_t>(s.count) * s.blocklen * copies(s.kids[0]);
    case Spec::Indexed:
    case Spec::Hindexed: {
        std::int64_t n = 0;
        for (int b : s.blocklens) n += b;
        return n * copies(s.kids[0]);
    }
    case Spec::Struct: {
        std::int64_t n = 0;
        for (int b = 0; b < s.count; ++b) n += s.blocklens[b] * copies(s.kids[b]);
        return n;
    }
    case Spec::Resized:
    case Spec::Dup: return copies(s.kids[0]);
    case Spec::Subarray: {
        std::int64_t n = 1;
        for (int v : s.subsizes) n *= v;
        return n * copies(s.kids[0]);
    }
    }
    return 0;
}

/// A random type of nesting depth at most `depth`.
inline Spec random_spec(const Draw& d, int depth) {
    Spec s;
    if (depth == 0 || d(5) == 0) {
        s.op = Spec::Basic;
        s.basic = basic_types()[d(basic_types().size())];
        return s;
    }
    const int kind = static_cast<int>(d(11));
    auto kid = [&] { return random_spec(d, depth - 1); };
    auto hdisp = [&] { return static_cast<MPI_Aint>(pick(d, -96, 96)); };
    switch (kind) {
    case 0:
        s.op = Spec::Contiguous;
        s.count = pick(d, 0, 4);
        s.kids = {kid()};
        break;
    case 1:
        s.op = Spec::Vector;
        s.count = pick(d, 0, 4);
        s.blocklen = pick(d, 0, 3);
        s.stride = pick(d, -5, 5);
        s.kids = {kid()};
        break;
    case 2:
        s.op = Spec::Hvector;
        s.count = pick(d, 0, 4);
        s.blocklen = pick(d, 0, 3);
        s.hstride = hdisp();
        s.kids = {kid()};
        break;
    case 3:
    case 4: {
        s.op = kind == 3 ? Spec::Indexed : Spec::Hindexed;
        s.count = pick(d, 0, 4);
        for (int i = 0; i < s.count; ++i) {
            s.blocklens.push_back(pick(d, 0, 3));
            s.displs.push_back(pick(d, -6, 6));
            s.hdispls.push_back(hdisp());
        }
        s.kids = {kid()};
        break;
    }
    case 5:
    case 6: {
        s.op = kind == 5 ? Spec::IndexedBlock : Spec::HindexedBlock;
        s.count = pick(d, 0, 4);
        s.blocklen = pick(d, 0, 3);
        for (int i = 0; i < s.count; ++i) {
            s.displs.push_back(pick(d, -6, 6));
            s.hdispls.push_back(hdisp());
        }
        s.kids = {kid()};
        break;
    }
    case 7: {
        s.op = Spec::Struct;
        s.count = pick(d, 0, 4);
        for (int i = 0; i < s.count; ++i) {
            s.blocklens.push_back(pick(d, 0, 3));
            s.hdispls.push_back(hdisp());
            const int m = static_cast<int>(d(10));
            if (m == 0) {
                s.kids.push_back(Spec{});
                s.kids.back().op = Spec::LB;
            } else if (m == 1) {
                s.kids.push_back(Spec{});
                s.kids.back().op = Spec::UB;
            } else {
                s.kids.push_back(kid());
            }
        }
        break;
    }
    case 8:
        s.op = Spec::Resized;
        s.lb = hdisp();
        s.extent = pick(d, -16, 96);
        s.kids = {kid()};
        break;
    case 9:
        s.op = Spec::Dup;
        s.kids = {kid()};
        break;
    default: {
        s.op = Spec::Subarray;
        const int n = pick(d, 1, 3);
        for (int i = 0; i < n; ++i) {
            const int size = pick(d, 1, 4);
            const int sub = pick(d, 0, size);
            s.sizes.push_back(size);
            s.subsizes.push_back(sub);
            s.starts.push_back(pick(d, 0, size - sub));
        }
        s.order = d(2) == 0 ? MPI_ORDER_C : MPI_ORDER_FORTRAN;
        s.kids = {kid()};
        break;
    }
    }
    // Keep the flattened map small.
    if (copies(s) > 4096) return random_spec(d, 0);
    return s;
}

// ------------------------------------------------------------ pack, unpack

/// `n` random bytes from `seed` at `out`, eight to a draw (one draw a byte
/// was a third of the 4 MiB layouts' time in test_random.cpp).
inline void fill_bytes(unsigned char* out, std::size_t n, std::uint64_t seed) {
    std::mt19937_64 g(seed);
    std::size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const std::uint64_t v = g();
        std::memcpy(out + i, &v, 8);
    }
    if (i < n) {
        const std::uint64_t v = g();
        std::memcpy(out + i, &v, n - i);
    }
}

/// Memory for `count` elements of a map: covers every data byte, with a
/// margin on both sides that must stay untouched.
struct Arena {
    std::vector<unsigned char> bytes;
    std::int64_t origin = 0;  ///< index of displacement 0
    static constexpr std::int64_t kMargin = 64;

    Arena(const Map& m, std::int64_t count) {
        const std::int64_t step = (count - 1) * m.extent();
        std::int64_t lo = 0, hi = 0;
        if (m.has_data() && count > 0) {
            lo = m.true_lb() + std::min<std::int64_t>(0, step);
            hi = m.true_ub() + std::max<std::int64_t>(0, step);
        }
        bytes.assign(static_cast<std::size_t>(hi - lo + 2 * kMargin), 0);
        origin = kMargin - lo;
    }
    unsigned char* base() { return bytes.data() + origin; }
    void fill(std::uint64_t seed) { fill_bytes(bytes.data(), bytes.size(), seed); }
};

/// Calls f(disp, len) for the entries of one element in type-map order,
/// entries that follow each other in memory joined into one run (a map of
/// bytes has an entry a byte).  Entries of a run do not overlap, so
/// copying a run at once stores what copying them in turn stores.
template <class F>
void runs(const Map& m, F&& f) {
    std::int64_t disp = 0, len = 0;
    for (const Entry& e : m.entries) {
        if (len > 0 && e.disp == disp + len) {
            len += e.len;
            continue;
        }
        if (len > 0) f(disp, len);
        disp = e.disp;
        len = e.len;
    }
    if (len > 0) f(disp, len);
}

/// The stream of `count` elements at `base`, entry by entry.
inline std::vector<unsigned char> pack(const Map& m, const unsigned char* base, std::int64_t count) {
    std::vector<unsigned char> out(static_cast<std::size_t>(count * m.size()));
    std::size_t at = 0;
    for (std::int64_t i = 0; i < count; ++i)
        runs(m, [&](std::int64_t disp, std::int64_t len) {
            std::memcpy(out.data() + at, base + i * m.extent() + disp, static_cast<std::size_t>(len));
            at += static_cast<std::size_t>(len);
        });
    return out;
}

/// The external32 stream of `count` elements at `base` (MPI-3.1 13.5.2):
/// entry by entry, each big-endian in units of its word; the sizes of the
/// generator's basic types are the same there as in memory.  Empty when an
/// entry has no word (long double).
inline std::vector<unsigned char> pack_external32(const Map& m, const unsigned char* base, std::int64_t count) {
    std::vector<unsigned char> out;
    for (const Entry& e : m.entries)
        if (e.word == 0) return out;
    out.reserve(static_cast<std::size_t>(count * m.size()));
    for (std::int64_t i = 0; i < count; ++i)
        for (const Entry& e : m.entries)
            for (std::int64_t w = 0; w < e.len; w += e.word)
                for (std::int64_t b = e.word; b-- > 0;) out.push_back(base[i * m.extent() + e.disp + w + b]);
    return out;
}

/// Stores the first `n` bytes of `in` into the elements at `base`.
inline void unpack(const Map& m, const unsigned char* in, std::int64_t n, unsigned char* base, std::int64_t count) {
    std::int64_t at = 0;
    for (std::int64_t i = 0; i < count && at < n; ++i)
        runs(m, [&](std::int64_t disp, std::int64_t len) {
            const std::int64_t k = std::min(len, n - at);
            if (k > 0) std::memcpy(base + i * m.extent() + disp, in + at, static_cast<std::size_t>(k));
            at += k;
        });
}

/// Basic elements in the first `bytes` bytes of the stream, or MPI_UNDEFINED.
inline std::int64_t elements(const Map& m, std::int64_t bytes) {
    std::int64_t n = 0;
    const std::int64_t size = m.size();
    if (size == 0) return 0;
    n = (bytes / size) * static_cast<std::int64_t>(m.entries.size());
    bytes %= size;
    for (const Entry& e : m.entries) {
        if (bytes == 0) break;
        if (bytes < e.len) return MPI_UNDEFINED;
        bytes -= e.len;
        if (e.len > 0) ++n;
    }
    return n;
}

/// A readable description of a spec, for failure messages.
inline std::string describe(const Spec& s) {
    static const char* names[] = {"basic", "contiguous", "vector", "hvector", "indexed", "hindexed",
                                  "indexed_block", "hindexed_block", "struct", "resized", "dup",
                                  "subarray", "LB", "UB"};
    std::string out = names[s.op];
    auto list = [](const auto& v) {
        std::string r = "{";
        for (std::size_t i = 0; i < v.size(); ++i) {
            if (i > 0) r += ',';
            r += std::to_string(v[i]);
        }
        return r + "}";
    };
    switch (s.op) {
    case Spec::Basic: {
        const auto* t = shmpi::dtype::predefined(s.basic);
        return t != nullptr ? t->name : "?";
    }
    case Spec::Contiguous: out += "(" + std::to_string(s.count); break;
    case Spec::Vector:
        out += "(" + std::to_string(s.count) + "," + std::to_string(s.blocklen) + "," + std::to_string(s.stride);
        break;
    case Spec::Hvector:
        out += "(" + std::to_string(s.count) + "," + std::to_string(s.blocklen) + "," + std::to_string(s.hstride);
        break;
    case Spec::Indexed: out += "(" + list(s.blocklens) + "," + list(s.displs); break;
    case Spec::Hindexed: out += "(" + list(s.blocklens) + "," + list(s.hdispls); break;
    case Spec::IndexedBlock: out += "(" + std::to_string(s.blocklen) + "," + list(s.displs); break;
    case Spec::HindexedBlock: out += "(" + std::to_string(s.blocklen) + "," + list(s.hdispls); break;
    case Spec::Struct: {
        out += "(" + list(s.blocklens) + "," + list(s.hdispls) + ",{";
        for (std::size_t i = 0; i < s.kids.size(); ++i) out += (i ? "," : "") + describe(s.kids[i]);
        return out + "})";
    }
    case Spec::Resized: out += "(" + std::to_string(s.lb) + "," + std::to_string(s.extent); break;
    case Spec::Dup: out += "("; break;
    case Spec::Subarray:
        out += "(" + list(s.sizes) + "," + list(s.subsizes) + "," + list(s.starts) + "," +
               (s.order == MPI_ORDER_C ? "C" : "F");
        break;
    case Spec::LB:
    case Spec::UB: return out;
    }
    return out + (s.op == Spec::Dup ? "" : ",") + describe(s.kids[0]) + ")";
}

}  // namespace ref
