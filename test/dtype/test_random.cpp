// Thousands of random nested datatypes against the reference flattening:
// size, bounds, basic type and element counts (bytes to elements and back),
// and byte-exact pack and unpack, whole and resumed from random offsets in
// random pieces, the memory segments of random parts of the stream, and
// external32.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <sstream>

#include "../keep_freed_buffers.hpp"
#include "../sanitizers.hpp"
#include "dtype/wide_copy.hpp"
#include "reference.hpp"

namespace {

using shmpi::dtype::Datatype;

constexpr int kTypes = 5000;

// The large-vector tests below allocate about 80 MiB per layout.
[[maybe_unused]] const bool kKeepFreedBuffers = shmpi_test::keep_freed_buffers();

void check_properties(const ref::Map& m, const Datatype& t) {
    EXPECT_EQ(t.size, m.size());
    EXPECT_EQ(t.lb, m.lb);
    EXPECT_EQ(t.extent, m.extent());
    EXPECT_EQ(t.true_lb, m.true_lb());
    EXPECT_EQ(t.true_extent, m.true_ub() - m.true_lb());
    EXPECT_EQ(t.elements, static_cast<std::int64_t>(m.entries.size()));
    const Datatype* basic = m.basic == MPI_DATATYPE_NULL ? nullptr : shmpi::dtype::predefined(m.basic);
    EXPECT_EQ(t.basic, basic);
    if (t.contiguous && t.size > 0) {
        // One memcpy must do: entries back to back, in order, no gaps.
        std::int64_t at = t.true_lb;
        for (const ref::Entry& e : m.entries) {
            EXPECT_EQ(e.disp, at);
            at += e.len;
        }
        EXPECT_EQ(t.extent, t.size);
    }
}

void check_pack(const ref::Map& m, const Datatype& t, std::int64_t count, std::mt19937_64& rng) {
    ref::Arena a(m, count);
    a.fill(rng());
    const std::vector<unsigned char> want = ref::pack(m, a.base(), count);
    const auto total = static_cast<std::int64_t>(want.size());
    ASSERT_EQ(total, count * t.size);

    // Whole, into a stream that starts on a cache line and into one that
    // starts 8 bytes past it (the large packs' non-temporal stores take
    // aligned streams only, src/dtype/wide_copy.cpp).
    std::vector<std::byte> got(want.size() + 64 + 8);
    const auto line_up = (64 - reinterpret_cast<std::uintptr_t>(got.data()) % 64) % 64;
    for (const std::size_t skew : {std::size_t{0}, std::size_t{8}}) {
        std::byte* at = got.data() + line_up + skew;
        shmpi::dtype::pack(t, a.base(), count, at);
        ASSERT_TRUE(std::equal(want.begin(), want.end(), reinterpret_cast<const unsigned char*>(at)))
            << "whole pack, " << skew << " bytes past a line";
    }

    // Resumed in random pieces, each read plainly or prefetching ahead (as
    // the pieces of a large message are).
    std::vector<std::byte> pieces(want.size() + 1);
    for (std::int64_t off = 0; off < total;) {
        const auto k = static_cast<std::int64_t>(1 + rng() % static_cast<std::uint64_t>(total / 3 + 1));
        const auto loads = rng() % 2 == 0 ? shmpi::dtype::Loads::kPlain : shmpi::dtype::Loads::kAhead;
        const std::int64_t n = shmpi::dtype::pack(t, a.base(), count, off, pieces.data() + off, k, loads);
        ASSERT_EQ(n, std::min(k, total - off)) << "piece at " << off;
        off += n;
    }
    ASSERT_TRUE(std::equal(want.begin(), want.end(), reinterpret_cast<const unsigned char*>(pieces.data())))
        << "pack in pieces";
    EXPECT_EQ(0, shmpi::dtype::pack(t, a.base(), count, total, pieces.data(), 8)) << "past the end";
}

void check_unpack(const ref::Map& m, const Datatype& t, std::int64_t count, std::mt19937_64& rng) {
    const std::int64_t total = count * t.size;
    std::vector<unsigned char> stream(static_cast<std::size_t>(total) + 1);
    ref::fill_bytes(stream.data(), stream.size(), rng());
    const std::uint64_t seed = rng();

    // Two arenas, each refilled with the same bytes before each check (one
    // for the reference, one for shmpi), rather than five fresh ones.
    ref::Arena want(m, count), got(m, count);
    want.fill(seed);
    got.fill(seed);

    ref::unpack(m, stream.data(), total, want.base(), count);
    shmpi::dtype::unpack(t, reinterpret_cast<const std::byte*>(stream.data()), total, got.base());
    ASSERT_EQ(got.bytes, want.bytes) << "whole unpack (margins included)";

    // In random pieces.
    got.fill(seed);
    for (std::int64_t off = 0; off < total;) {
        const auto k = static_cast<std::int64_t>(1 + rng() % static_cast<std::uint64_t>(total / 3 + 1));
        const std::int64_t n = shmpi::dtype::unpack(t, got.base(), count, off,
                                                    reinterpret_cast<const std::byte*>(stream.data()) + off, k);
        ASSERT_EQ(n, std::min(k, total - off));
        off += n;
    }
    ASSERT_EQ(got.bytes, want.bytes) << "unpack in pieces";

    // A prefix of the stream (a message shorter than the receive).
    const auto cut = static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(total + 1));
    want.fill(seed);
    got.fill(seed);
    ref::unpack(m, stream.data(), cut, want.base(), count);
    shmpi::dtype::unpack(t, reinterpret_cast<const std::byte*>(stream.data()), cut, got.base());
    ASSERT_EQ(got.bytes, want.bytes) << "unpack of the first " << cut << " bytes";
}

/// MPI_Pack_external's bytes are the reference's, its size the stream's,
/// and MPI_Unpack_external puts back what MPI_Unpack would (types of long
/// double aside: their binary128 form is not a reordering of bytes).
/// Counts the types with data it checked in `checked`.
void check_external32(const ref::Map& m, const Datatype& t, std::int64_t count, std::mt19937_64& rng, int& checked) {
    ref::Arena a(m, count);
    a.fill(rng());
    const std::vector<unsigned char> want = ref::pack_external32(m, a.base(), count);
    if (want.empty()) return;
    ++checked;
    ASSERT_EQ(shmpi::dtype::external32_size(t, count, "test"), static_cast<std::int64_t>(want.size()));
    std::vector<std::byte> got(want.size() + 1);
    shmpi::dtype::pack_external32(t, a.base(), count, got.data(), "test");
    ASSERT_TRUE(std::equal(want.begin(), want.end(), reinterpret_cast<const unsigned char*>(got.data())))
        << "external32 pack";

    // Back into memory that held other bytes: the type's bytes are a's,
    // as a plain unpack of a's stream leaves them; the gaps keep theirs.
    const std::uint64_t seed = rng();
    ref::Arena back(m, count), plain(m, count);
    back.fill(seed);
    plain.fill(seed);
    shmpi::dtype::unpack_external32(t, got.data(), back.base(), count, "test");
    const std::vector<unsigned char> stream = ref::pack(m, a.base(), count);
    ref::unpack(m, stream.data(), static_cast<std::int64_t>(stream.size()), plain.base(), count);
    ASSERT_EQ(back.bytes, plain.bytes) << "external32 unpack";
}

/// The segments of a random part of the stream are the map's entries that
/// part covers, cut at its ends, with adjacent ones merged.
void check_segments(const ref::Map& m, const Datatype& t, std::int64_t count, std::mt19937_64& rng) {
    ref::Arena a(m, count);
    const std::int64_t total = count * t.size;
    const auto off = static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(total + 1));
    const auto len = static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(total - off + 1));
    std::vector<shmpi::dtype::Segment> want;
    std::int64_t at = 0;
    for (std::int64_t e = 0; e < count; ++e) {
        for (const ref::Entry& x : m.entries) {
            const std::int64_t lo = std::max(at, off), hi = std::min(at + x.len, off + len);
            if (lo < hi) {
                unsigned char* p = a.base() + e * m.extent() + x.disp + (lo - at);
                if (!want.empty() && static_cast<unsigned char*>(want.back().address) + want.back().length == p) {
                    want.back().length += hi - lo;
                } else {
                    want.push_back({p, hi - lo});
                }
            }
            at += x.len;
        }
    }
    std::vector<shmpi::dtype::Segment> got;
    EXPECT_EQ(shmpi::dtype::segments(t, a.base(), count, off, len, got), len);
    ASSERT_EQ(got.size(), want.size()) << "segments of bytes " << off << " + " << len;
    for (std::size_t i = 0; i < got.size(); ++i) {
        EXPECT_EQ(got[i].address, want[i].address) << "segment " << i;
        EXPECT_EQ(got[i].length, want[i].length) << "segment " << i;
    }
}

void check_counts(const ref::Map& m, const Datatype& t, std::int64_t count, std::mt19937_64& rng) {
    const std::int64_t total = count * t.size;
    for (int i = 0; i < 8; ++i) {
        const auto bytes = static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(total + 1));
        EXPECT_EQ(shmpi::dtype::elements_in(t, bytes), ref::elements(m, bytes)) << bytes << " bytes";
        const std::int64_t want = t.size == 0 ? 0 : (bytes % t.size == 0 ? bytes / t.size : MPI_UNDEFINED);
        EXPECT_EQ(shmpi::dtype::count_in(t, bytes), want);
    }
    // MPI_Status_set_elements' inverse: the bytes of the first n basic
    // elements, which the reference adds up entry by entry, and which
    // elements_in() turns back into n.
    const auto per = static_cast<std::int64_t>(m.entries.size());
    if (per == 0) return;
    for (int i = 0; i < 8; ++i) {
        const auto n = static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(count * per + 1));
        std::int64_t want = (n / per) * m.size();
        for (std::int64_t e = 0; e < n % per; ++e) want += m.entries[static_cast<std::size_t>(e)].len;
        const std::int64_t bytes = shmpi::dtype::bytes_of_elements(t, n);
        EXPECT_EQ(bytes, want) << n << " basic elements";
        EXPECT_EQ(shmpi::dtype::elements_in(t, bytes), n) << n << " basic elements";
    }
}

TEST(DtypeRandom, ThousandsOfNestedTypesMatchTheReference) {
    std::mt19937_64 rng(20240607);
    const ref::Draw draw = ref::draw_from(rng);
    int nonempty = 0, external = 0;
    for (int i = 0; i < kTypes; ++i) {
        const ref::Spec s = ref::random_spec(draw, 1 + i % 4);
        SCOPED_TRACE(::testing::Message() << "type " << i << ": " << ref::describe(s));
        const ref::Map m = ref::flatten(s);
        const shmpi::dtype::Ref t = ref::build(s);
        check_properties(m, *t);
        const std::int64_t count = 1 + static_cast<std::int64_t>(rng() % 3);
        check_pack(m, *t, count, rng);
        check_unpack(m, *t, count, rng);
        check_counts(m, *t, count, rng);
        check_segments(m, *t, count, rng);
        check_external32(m, *t, count, rng, external);
        if (m.size() > 0) ++nonempty;
        if (::testing::Test::HasFatalFailure()) return;
    }
    // The generator must produce mostly types with data, many without
    // long double.
    EXPECT_GT(nonempty, kTypes / 2);
    EXPECT_GT(external, kTypes / 4);
}

/// Random arguments of MPI_Type_create_darray, valid ones.
struct DarrayArgs {
    int size = 1, rank = 0, order = MPI_ORDER_C;
    std::vector<int> gsizes, distribs, dargs, psizes;
};

DarrayArgs random_darray(std::mt19937_64& rng) {
    DarrayArgs a;
    const int ndims = 1 + static_cast<int>(rng() % 3);
    const int most = ndims == 1 ? 40 : ndims == 2 ? 12 : 6;  // elements of a dimension
    for (int i = 0; i < ndims; ++i) {
        const int g = 1 + static_cast<int>(rng() % most);
        const int kind = static_cast<int>(rng() % 5);  // cyclic more often: it has the patterns
        const int d = kind == 0 ? MPI_DISTRIBUTE_NONE : kind == 1 ? MPI_DISTRIBUTE_BLOCK : MPI_DISTRIBUTE_CYCLIC;
        const int p = d == MPI_DISTRIBUTE_NONE ? 1 : 1 + static_cast<int>(rng() % 4);
        int darg = MPI_DISTRIBUTE_DFLT_DARG;
        if (rng() % 4 != 0) {
            // A block's darg must cover the dimension with the grid.
            darg = d == MPI_DISTRIBUTE_BLOCK ? (g + p - 1) / p + static_cast<int>(rng() % 3)
                                             : 1 + static_cast<int>(rng() % 5);
        }
        a.gsizes.push_back(g);
        a.distribs.push_back(d);
        a.dargs.push_back(darg);
        a.psizes.push_back(p);
        a.size *= p;
    }
    a.rank = static_cast<int>(rng() % static_cast<std::uint64_t>(a.size));
    a.order = rng() % 2 == 0 ? MPI_ORDER_C : MPI_ORDER_FORTRAN;
    return a;
}

/// The map of the darray straight from MPI-3.1 4.1.4, sharing nothing with
/// the engine's levels: the elements of the global array this rank owns,
/// in the array's order (the last index fastest for C, the first for
/// Fortran), each a copy of `old` at its index times old's extent; bounds
/// [0, elements of the array * old's extent).
ref::Map darray_map(const DarrayArgs& a, const ref::Map& old) {
    const auto n = a.gsizes.size();
    // The process grid is row-major whatever the order.
    std::vector<int> coord(n);
    for (std::size_t i = n, r = static_cast<std::size_t>(a.rank); i-- > 0;) {
        coord[i] = static_cast<int>(r % static_cast<std::size_t>(a.psizes[i]));
        r /= static_cast<std::size_t>(a.psizes[i]);
    }
    // The indices owned in each dimension, ascending.
    std::vector<std::vector<std::int64_t>> mine(n);
    for (std::size_t i = 0; i < n; ++i) {
        const int g = a.gsizes[i], p = a.psizes[i];
        for (int x = 0; x < g; ++x) {
            bool own = true;
            if (a.distribs[i] == MPI_DISTRIBUTE_BLOCK) {
                const int b = a.dargs[i] == MPI_DISTRIBUTE_DFLT_DARG ? (g + p - 1) / p : a.dargs[i];
                own = x / b == coord[i];
            } else if (a.distribs[i] == MPI_DISTRIBUTE_CYCLIC) {
                const int b = a.dargs[i] == MPI_DISTRIBUTE_DFLT_DARG ? 1 : a.dargs[i];
                own = x / b % p == coord[i];
            }
            if (own) mine[i].push_back(x);
        }
    }
    // Dimensions from the slowest; the linear index of an element.
    std::vector<std::size_t> slow_first(n);
    for (std::size_t k = 0; k < n; ++k) slow_first[k] = a.order == MPI_ORDER_C ? k : n - 1 - k;
    std::vector<std::int64_t> stride(n);
    std::int64_t elements = 1;
    for (std::size_t k = n; k-- > 0;) {
        stride[slow_first[k]] = elements;
        elements *= a.gsizes[slow_first[k]];
    }
    ref::Map m;
    std::vector<std::size_t> at(n, 0);  // position in mine[] of each dimension
    bool any = true;
    for (const auto& v : mine) any = any && !v.empty();
    while (any) {
        std::int64_t index = 0;
        for (std::size_t i = 0; i < n; ++i) index += mine[i][at[i]] * stride[i];
        for (const ref::Entry& e : old.entries) m.entries.push_back({e.disp + index * old.extent(), e.len, e.word});
        // The next element: the fastest dimension first.
        std::size_t k = n;
        while (k-- > 0) {
            const std::size_t d = slow_first[k];
            if (++at[d] < mine[d].size()) break;
            at[d] = 0;
        }
        any = k < n;
    }
    m.lb = 0;
    m.ub = elements * old.extent();
    m.sticky_lb = m.sticky_ub = true;
    m.align = old.align;
    m.basic = old.basic;
    return m;
}

TEST(DtypeRandom, DarraysMatchTheStandard) {
    // Cyclic dimensions are built as patterns (a vector of the full blocks
    // and the short last one), no longer as lists of blocks: random small
    // darrays of random old types, block, cyclic and none, against the
    // owned elements of the standard's definition.
    std::mt19937_64 rng(20251205);
    const ref::Draw draw = ref::draw_from(rng);
    int nonempty = 0;
    for (int i = 0; i < 400; ++i) {
        const DarrayArgs a = random_darray(rng);
        const ref::Spec old = ref::random_spec(draw, static_cast<int>(rng() % 3));
        if (ref::copies(old) > 64) continue;  // keep the maps small
        std::ostringstream what;
        what << "darray " << i << " of " << ref::describe(old) << ": rank " << a.rank << " of " << a.size
             << (a.order == MPI_ORDER_C ? ", C" : ", Fortran");
        for (std::size_t d = 0; d < a.gsizes.size(); ++d) {
            what << "; gsize " << a.gsizes[d] << " distrib " << a.distribs[d] << " darg " << a.dargs[d]
                 << " psize " << a.psizes[d];
        }
        SCOPED_TRACE(what.str());
        const ref::Map m = darray_map(a, ref::flatten(old));
        const shmpi::dtype::Ref o = ref::build(old);
        auto* raw = shmpi::dtype::make_darray(a.size, a.rank, static_cast<int>(a.gsizes.size()), a.gsizes.data(),
                                              a.distribs.data(), a.dargs.data(), a.psizes.data(), a.order, *o,
                                              "test");
        const shmpi::dtype::Ref t(raw);
        shmpi::dtype::free_handle(*raw, "test");
        check_properties(m, *t);
        const std::int64_t count = 1 + static_cast<std::int64_t>(rng() % 2);
        check_pack(m, *t, count, rng);
        check_unpack(m, *t, count, rng);
        check_counts(m, *t, count, rng);
        check_segments(m, *t, count, rng);
        EXPECT_EQ(t->combiner, MPI_COMBINER_DARRAY);
        std::vector<int> ints{a.size, a.rank, static_cast<int>(a.gsizes.size())};
        for (const auto* v : {&a.gsizes, &a.distribs, &a.dargs, &a.psizes}) ints.insert(ints.end(), v->begin(), v->end());
        ints.push_back(a.order);
        EXPECT_EQ(t->ints, ints);
        EXPECT_EQ(t->types, std::vector<MPI_Datatype>({shmpi::dtype::handle_of(*o)}));
        if (m.size() > 0) ++nonempty;
        if (::testing::Test::HasFatalFailure()) return;
    }
    EXPECT_GT(nonempty, 100);
}

/// Properties, pack and unpack of `count` elements of the type `s` builds.
void check_type(const ref::Spec& s, std::int64_t count, std::mt19937_64& rng) {
    const ref::Map m = ref::flatten(s);
    const shmpi::dtype::Ref t = ref::build(s);
    check_properties(m, *t);
    check_pack(m, *t, count, rng);
    check_unpack(m, *t, count, rng);
}

TEST(DtypeRandom, DeepTypesWithManyBlocks) {
    std::mt19937_64 rng(7);
    const ref::Draw draw = ref::draw_from(rng);
    for (int i = 0; i < 300; ++i) {
        const ref::Spec s = ref::random_spec(draw, 6);
        SCOPED_TRACE(::testing::Message() << "type " << i << ": " << ref::describe(s));
        check_type(s, 2, rng);
        if (::testing::Test::HasFatalFailure()) return;
    }
}

/// dtype::copy between two buffers of `s`, and between `s` and dense bytes,
/// against the reference's pack and unpack (margins included: nothing
/// outside the type map may change).
void check_copy(const ref::Spec& s, std::int64_t count, std::mt19937_64& rng) {
    const ref::Map m = ref::flatten(s);
    const shmpi::dtype::Ref t = ref::build(s);
    const shmpi::dtype::Datatype& bytes_type = *shmpi::dtype::predefined(MPI_BYTE);
    const std::int64_t total = count * t->size;
    ref::Arena src(m, count), got(m, count), want(m, count);
    src.fill(rng());
    const std::uint64_t seed = rng();
    got.fill(seed);
    want.fill(seed);
    const std::vector<unsigned char> stream = ref::pack(m, src.base(), count);
    ref::unpack(m, stream.data(), total, want.base(), count);
    shmpi::dtype::copy(*t, src.base(), count, *t, got.base(), count);
    ASSERT_EQ(got.bytes, want.bytes) << "typed to typed";

    std::vector<unsigned char> dense(static_cast<std::size_t>(total) + 1, 0xa5);
    shmpi::dtype::copy(*t, src.base(), count, bytes_type, dense.data(), total);
    ASSERT_TRUE(std::equal(stream.begin(), stream.end(), dense.begin())) << "typed to bytes";
    ASSERT_EQ(dense.back(), 0xa5) << "past the bytes";

    got.fill(seed);
    shmpi::dtype::copy(bytes_type, dense.data(), total, *t, got.base(), count);
    ASSERT_EQ(got.bytes, want.bytes) << "bytes to typed";
}

TEST(DtypeRandom, CopyBetweenTypesMatchesTheReference) {
    std::mt19937_64 rng(17);
    const ref::Draw draw = ref::draw_from(rng);
    for (int i = 0; i < 500; ++i) {
        const ref::Spec s = ref::random_spec(draw, 1 + i % 4);
        SCOPED_TRACE(::testing::Message() << "type " << i << ": " << ref::describe(s));
        check_copy(s, 1 + static_cast<std::int64_t>(rng() % 3), rng);
        if (::testing::Test::HasFatalFailure()) return;
    }
    // More than one 64 KiB piece of the bounce buffer, pieces ending inside blocks.
    ref::Spec v;
    v.op = ref::Spec::Hvector;
    v.count = 3001;
    v.blocklen = 72;
    v.hstride = 200;
    v.kids.push_back(ref::Spec{});
    v.kids.back().basic = MPI_BYTE;
    SCOPED_TRACE(::testing::Message() << ref::describe(v));
    check_copy(v, 2, rng);
}

/// `count` blocks of `blocklen` bytes, `stride` bytes apart (hvector of MPI_BYTE).
struct ByteBlocks {
    int blocklen;
    MPI_Aint stride;
};

/// Pack and unpack of one or more elements of each shape against the
/// reference, `count(shape)` blocks each.
template <class Count>
void check_byte_blocks(std::initializer_list<ByteBlocks> shapes, Count count, std::int64_t elements,
                       std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    for (const ByteBlocks& shape : shapes) {
        ref::Spec s;
        s.op = ref::Spec::Hvector;
        s.count = count(shape);
        s.blocklen = shape.blocklen;
        s.hstride = shape.stride;
        s.kids.push_back(ref::Spec{});
        s.kids.back().basic = MPI_BYTE;
        SCOPED_TRACE(::testing::Message() << ref::describe(s));
        check_type(s, elements, rng);
        if (::testing::Test::HasFatalFailure()) return;
    }
}

// Blocks longer than 64 bytes move with vector moves where the CPU has them
// (src/dtype/wide_copy.cpp; the suite runs this file with each kind the
// CPU has): whole lines, then the block's last 64 bytes; blocks of 1 to 4
// whole lines (64, 128, 192, 256 bytes) in loops of their own with AVX2,
// one-line blocks too.  Lengths around multiples of 64, strides that leave
// the blocks unaligned, negative strides, and blocks that overlap (which
// must unpack in type-map order: the later block wins).
TEST(DtypeRandom, BlocksOfALineAndMore) {
    check_byte_blocks(
        {{64, 64},
         {64, 72},
         {64, -100},
         {64, 40},
         {65, 130},
         {127, 129},
         {128, -200},
         {128, 136},
         {128, 96},
         {192, 400},
         {192, -193},
         {256, 264},
         {256, 200},
         {256, -512},
         {200, 150},
         {1000, 1003},
         {1024, -2048}},
        [](const ByteBlocks&) { return 37; }, 2, 13);
}

// Vector loops that move 4 MiB or more unpack with non-temporal stores
// (src/dtype/pack.cpp, src/dtype/wide_copy.cpp), and pack with them and
// prefetches when the gaps are at most two blocks (with AVX2, blocks of 1
// to 4 whole lines into an aligned stream in loops of their own; packs
// only from a quarter of the last-level cache, or from 4 MiB with
// SHMPI_STREAMED_PACKS=1, as test/dtype/meson.build runs it too): blocks
// whole and unaligned, short tails, gaps of one and of two blocks, a
// negative stride, and the pieces that resume inside them.  Blocks of 2
// KiB and more (and with AVX-512, of one to four lines) prefetch only
// their own lines (one shape has gaps of whole pages); those between
// sweep the gaps too (with AVX-512, storing 64 bytes at a time).  (Each
// shape moves 4 MiB several times: under TSan, seconds each.)  Not under
// TSan: the test has one thread, so TSan has nothing to check, and it
// took 66 s there (ASan runs it).
TEST(DtypeRandom, LargeVectorsUnpackAroundTheCaches) {
    if (shmpi_test::kThreadSanitizer) {
        GTEST_SKIP() << "one thread: nothing for TSan to check (ASan runs it)";
    }
    check_byte_blocks(
        {{64, 128}, {72, 200}, {100, -228}, {4096, 8192}, {65, 195}, {128, 384}, {2048, 4096}, {2049, 6000},
         {16384, 32768}, {300, 900}, {1024, 2048}},
        [](const ByteBlocks& b) { return (4 << 20) / b.blocklen + 3; }, 1, 11);
}

// Where packs stream is a quarter of the last-level cache that the CPU
// shares, as the kernel describes it (shmpi::dtype::cache_bytes(), not
// glibc's sum of a whole AMD package's L3s): each level known is larger
// than the one below, and sizes are whole bytes (sysfs writes "48K").
TEST(DtypeRandom, CacheSizesGrowWithTheLevel) {
    const std::int64_t l1 = shmpi::dtype::cache_bytes(1);
    const std::int64_t l2 = shmpi::dtype::cache_bytes(2);
    const std::int64_t l3 = shmpi::dtype::cache_bytes(3);
    EXPECT_GT(l2, 0) << "the kernel and glibc both failed to give the L2's size";
    if (l1 > 0) {
        EXPECT_GE(l1, 4 << 10);
        EXPECT_LE(l1, 4 << 20);
        if (l2 > 0) {
            EXPECT_GT(l2, l1);
        }
    }
    if (l3 > 0 && l2 > 0) {
        EXPECT_GT(l3, l2);
    }
    EXPECT_EQ(shmpi::dtype::cache_bytes(0), -1);  // no level 0
}

// The pieces of a large message pack prefetching ahead from 1 KiB blocks
// (src/dtype/pack.cpp, kAheadBlock); check_pack and check_unpack move
// random pieces each way: blocks at and around that size, unaligned, with
// wide gaps, a negative stride, and overlapping blocks (which do not take
// that path).
TEST(DtypeRandom, PiecesOfLargeMessagesWithLargeBlocks) {
    check_byte_blocks(
        {{1024, 2048}, {1023, 1100}, {2048, 2048}, {2049, 6000}, {4096, -8192}, {4096, 8192}, {3000, 2000}},
        [](const ByteBlocks&) { return 40; }, 2, 29);
}

// Types of more than 8 runs move run by run, each as whole lines and one
// masked store of the rest where the CPU has AVX-512BW, on an Intel CPU
// as the 32-byte pieces of the destination that the run touches, the
// first and last masked (src/dtype/wide_copy.cpp): runs of 1 to 300 bytes
// around multiples of 32 and 64, unaligned, runs that share a piece with
// the next, and overlapping ones (which unpack in type-map order).
TEST(DtypeRandom, ManyRunsOfIrregularLengths) {
    std::mt19937_64 rng(23);
    const int lengths[] = {1, 7, 31, 32, 33, 63, 64, 65, 127, 128, 129, 191, 255, 256, 257, 300, 5, 96, 200, 17};
    ref::Spec s;
    s.op = ref::Spec::Hindexed;
    s.kids.push_back(ref::Spec{});
    s.kids.back().basic = MPI_BYTE;
    MPI_Aint at = 3;
    for (const int len : lengths) {
        s.blocklens.push_back(len);
        s.hdispls.push_back(at);
        at += len + static_cast<MPI_Aint>(rng() % 24);
    }
    s.count = static_cast<int>(s.blocklens.size());
    {
        SCOPED_TRACE(::testing::Message() << ref::describe(s));
        check_type(s, 3, rng);
    }
    // The same runs, each overlapping the one before by 16 bytes.
    at = 0;
    for (std::size_t k = 0; k < s.hdispls.size(); ++k) {
        s.hdispls[k] = at;
        at += std::max(1, s.blocklens[k] - 16);
    }
    SCOPED_TRACE(::testing::Message() << ref::describe(s));
    check_type(s, 2, rng);
}

}  // namespace
