// Byte-exact type maps: the examples of seed 003 (3.20 to 3.24), the
// alignment padding of struct extents, negative strides and displacements,
// the pair types, the MPI-1 bound markers, resized, subarray, darray and dup,
// and the envelope each constructor records.
//
// placement() recovers, for every byte of a type's stream, the displacement
// it was packed from, so a test states a type map as (displacement, bytes)
// entries and compares exactly.
#include <gtest/gtest.h>

#include <algorithm>
#include <climits>
#include <initializer_list>
#include <utility>
#include <vector>

#include "dtype/datatype.hpp"

namespace {

using namespace shmpi::dtype;
using Entries = std::initializer_list<std::pair<std::int64_t, std::int64_t>>;

/// Takes over a new type: the Ref is then its only reference.
Ref own(Datatype* t) {
    Ref r(t);
    free_handle(*t, "test");
    return r;
}

const Datatype& P(MPI_Datatype h) { return *predefined(h); }

/// The displacement each byte of the stream of `count` elements comes from.
std::vector<std::int64_t> placement(const Datatype& t, std::int64_t count) {
    const std::int64_t step = (count - 1) * t.extent;
    const std::int64_t lo = t.true_lb + std::min<std::int64_t>(0, step);
    const std::int64_t hi = t.true_ub() + std::max<std::int64_t>(0, step);
    std::vector<unsigned char> mem(static_cast<std::size_t>(std::max<std::int64_t>(hi - lo, 1)));
    std::vector<std::byte> packed(static_cast<std::size_t>(count * t.size));
    std::vector<std::int64_t> out(packed.size(), lo);
    for (int pass = 0; pass < 3; ++pass) {
        for (std::size_t i = 0; i < mem.size(); ++i) mem[i] = static_cast<unsigned char>(i >> (8 * pass));
        pack(t, mem.data() - lo, count, packed.data());
        for (std::size_t j = 0; j < packed.size(); ++j) {
            out[j] += static_cast<std::int64_t>(std::to_integer<unsigned>(packed[j])) << (8 * pass);
        }
    }
    return out;
}

/// The byte displacements of a type map written as (displacement, bytes).
std::vector<std::int64_t> bytes_of(Entries entries) {
    std::vector<std::int64_t> out;
    for (const auto& [d, n] : entries)
        for (std::int64_t i = 0; i < n; ++i) out.push_back(d + i);
    return out;
}

void expect_bounds(const Datatype& t, std::int64_t size, std::int64_t lb, std::int64_t extent,
                   std::int64_t true_lb, std::int64_t true_extent) {
    EXPECT_EQ(t.size, size);
    EXPECT_EQ(t.lb, lb);
    EXPECT_EQ(t.extent, extent);
    EXPECT_EQ(t.true_lb, true_lb);
    EXPECT_EQ(t.true_extent, true_extent);
}

/// type1 of the seed: {(double, 0), (char, 8)}, extent 16.
Ref type1() {
    const int bl[2] = {1, 1};
    const MPI_Aint d[2] = {0, 8};
    const Datatype* ty[2] = {&P(MPI_DOUBLE), &P(MPI_CHAR)};
    return own(make_struct(2, bl, d, ty, "test"));
}

TEST(DtypeMaps, Type1HasTheAlignmentPaddingOfItsCStruct) {
    const Ref t = type1();
    expect_bounds(*t, 9, 0, 16, 0, 9);
    EXPECT_EQ(placement(*t, 1), bytes_of({{0, 8}, {8, 1}}));
    EXPECT_EQ(placement(*t, 2), bytes_of({{0, 8}, {8, 1}, {16, 8}, {24, 1}}));
}

TEST(DtypeMaps, Example3_20Contiguous) {
    const Ref t = own(make_contiguous(3, *type1(), "test"));
    EXPECT_EQ(placement(*t, 1), bytes_of({{0, 8}, {8, 1}, {16, 8}, {24, 1}, {32, 8}, {40, 1}}));
    expect_bounds(*t, 27, 0, 48, 0, 41);
}

TEST(DtypeMaps, Example3_21Vector) {
    const Ref t = own(make_vector(2, 3, 4, *type1(), "test"));
    EXPECT_EQ(placement(*t, 1), bytes_of({{0, 8}, {8, 1}, {16, 8}, {24, 1}, {32, 8}, {40, 1},
                                          {64, 8}, {72, 1}, {80, 8}, {88, 1}, {96, 8}, {104, 1}}));
    expect_bounds(*t, 54, 0, 112, 0, 105);
}

TEST(DtypeMaps, Example3_22VectorWithNegativeStride) {
    const Ref t = own(make_vector(3, 1, -2, *type1(), "test"));
    EXPECT_EQ(placement(*t, 1), bytes_of({{0, 8}, {8, 1}, {-32, 8}, {-24, 1}, {-64, 8}, {-56, 1}}));
    expect_bounds(*t, 27, -64, 80, -64, 73);
    // Two elements: the second starts one extent (80) further.
    EXPECT_EQ(placement(*t, 2), bytes_of({{0, 8}, {8, 1}, {-32, 8}, {-24, 1}, {-64, 8}, {-56, 1},
                                          {80, 8}, {88, 1}, {48, 8}, {56, 1}, {16, 8}, {24, 1}}));
}

TEST(DtypeMaps, Example3_23Indexed) {
    const int B[2] = {3, 1};
    const int D[2] = {4, 0};
    const Ref t = own(make_indexed(2, B, D, *type1(), "test"));
    EXPECT_EQ(placement(*t, 1), bytes_of({{64, 8}, {72, 1}, {80, 8}, {88, 1}, {96, 8}, {104, 1},
                                          {0, 8}, {8, 1}}));
    expect_bounds(*t, 36, 0, 112, 0, 105);
}

TEST(DtypeMaps, Example3_24StructWithPadding) {
    const Ref t1 = type1();
    const int B[3] = {2, 1, 3};
    const MPI_Aint D[3] = {0, 16, 26};
    const Datatype* T[3] = {&P(MPI_FLOAT), t1.get(), &P(MPI_CHAR)};
    const Ref t = own(make_struct(3, B, D, T, "test"));
    EXPECT_EQ(placement(*t, 1), bytes_of({{0, 4}, {4, 4}, {16, 8}, {24, 1}, {26, 1}, {27, 1}, {28, 1}}));
    // Data ends at 29; the double in type1 aligns the extent to 32.
    expect_bounds(*t, 20, 0, 32, 0, 29);
    EXPECT_EQ(t->basic, nullptr);
    EXPECT_EQ(t->elements, 7);
}

TEST(DtypeMaps, Example3_24HindexedIsAStructOfOneType) {
    const int B[3] = {2, 1, 3};
    const MPI_Aint D[3] = {0, 16, 26};
    const Ref t1 = type1();
    const Datatype* T[3] = {t1.get(), t1.get(), t1.get()};
    const Ref s = own(make_struct(3, B, D, T, "test"));
    const Ref h = own(make_hindexed(3, B, D, *t1, "test"));
    EXPECT_EQ(placement(*s, 2), placement(*h, 2));
    EXPECT_EQ(s->extent, h->extent);
    EXPECT_EQ(s->lb, h->lb);
}

TEST(DtypeMaps, ContiguousEqualsVectorForms) {
    const Ref t1 = type1();
    const Ref c = own(make_contiguous(5, *t1, "test"));
    const Ref v1 = own(make_vector(5, 1, 1, *t1, "test"));
    const Ref v2 = own(make_vector(1, 5, 9, *t1, "test"));
    EXPECT_EQ(placement(*c, 2), placement(*v1, 2));
    EXPECT_EQ(placement(*c, 2), placement(*v2, 2));
    EXPECT_EQ(c->extent, v1->extent);
    EXPECT_EQ(c->extent, v2->extent);
}

struct PadCase {
    MPI_Datatype a;
    MPI_Aint da;
    MPI_Datatype b;
    MPI_Aint db;
    std::int64_t lb, extent;
};

TEST(DtypeMaps, StructExtentIsPaddedToTheLargestAlignment) {
    // Values agree with the C compiler's struct layout and with Open MPI.
    const PadCase cases[] = {
        {MPI_INT, 0, MPI_CHAR, 4, 0, 8},
        {MPI_CHAR, 0, MPI_DOUBLE, 8, 0, 16},
        {MPI_DOUBLE, 0, MPI_INT, 8, 0, 16},
        {MPI_CHAR, 0, MPI_SHORT, 1, 0, 4},
        {MPI_CHAR, 0, MPI_INT, -8, -8, 12},
        {MPI_DOUBLE, 0, MPI_CHAR, -3, -3, 16},
        {MPI_CHAR, 0, MPI_LONG_DOUBLE, 16, 0, 32},
        {MPI_CHAR, 0, MPI_DOUBLE_INT, 1, 0, 24},
        {MPI_CHAR, 0, MPI_SHORT_INT, 2, 0, 12},
        {MPI_DOUBLE, 0, MPI_DOUBLE, 12, 0, 24},  // MPICH 4.0 says 20 here
    };
    for (const PadCase& c : cases) {
        const int bl[2] = {1, 1};
        const MPI_Aint d[2] = {c.da, c.db};
        const Datatype* ty[2] = {&P(c.a), &P(c.b)};
        const Ref t = own(make_struct(2, bl, d, ty, "test"));
        EXPECT_EQ(t->lb, c.lb) << P(c.a).name << "@" << c.da << " " << P(c.b).name << "@" << c.db;
        EXPECT_EQ(t->extent, c.extent) << P(c.a).name << "@" << c.da << " " << P(c.b).name << "@" << c.db;
    }
    // The same rule holds for the other constructors (MPI-3.1 4.1.6).
    const Ref hv = own(make_hvector(2, 1, 12, P(MPI_DOUBLE), "test"));
    expect_bounds(*hv, 16, 0, 24, 0, 20);
    const Ref hs = own(make_hvector(2, 1, 3, P(MPI_SHORT), "test"));
    expect_bounds(*hs, 4, 0, 6, 0, 5);
}

TEST(DtypeMaps, NegativeDisplacementsAndStrides) {
    const int bl[2] = {1, 2};
    const MPI_Aint d[2] = {-24, 8};
    const Ref h = own(make_hindexed(2, bl, d, P(MPI_DOUBLE), "test"));
    EXPECT_EQ(placement(*h, 1), bytes_of({{-24, 8}, {8, 16}}));
    expect_bounds(*h, 24, -24, 48, -24, 48);

    const Ref hv = own(make_hvector(3, 2, -20, P(MPI_INT), "test"));
    EXPECT_EQ(placement(*hv, 1), bytes_of({{0, 8}, {-20, 8}, {-40, 8}}));
    expect_bounds(*hv, 24, -40, 48, -40, 48);

    const int ib[3] = {1, 1, 1};
    const int id[3] = {2, -1, 0};
    const Ref ix = own(make_indexed(3, ib, id, P(MPI_SHORT), "test"));
    EXPECT_EQ(placement(*ix, 1), bytes_of({{4, 2}, {-2, 2}, {0, 2}}));
    expect_bounds(*ix, 6, -2, 8, -2, 8);
}

TEST(DtypeMaps, PairTypesAreTheirCStructs) {
    expect_bounds(P(MPI_DOUBLE_INT), 12, 0, 16, 0, 12);
    EXPECT_EQ(placement(P(MPI_DOUBLE_INT), 2), bytes_of({{0, 12}, {16, 12}}));
    expect_bounds(P(MPI_SHORT_INT), 6, 0, 8, 0, 8);
    EXPECT_EQ(placement(P(MPI_SHORT_INT), 1), bytes_of({{0, 2}, {4, 4}}));
    expect_bounds(P(MPI_2INT), 8, 0, 8, 0, 8);
    EXPECT_TRUE(P(MPI_2INT).contiguous);
    EXPECT_FALSE(P(MPI_DOUBLE_INT).contiguous);
    EXPECT_EQ(P(MPI_LONG_DOUBLE_INT).size, static_cast<std::int64_t>(sizeof(long double) + sizeof(int)));
    EXPECT_EQ(P(MPI_LONG_DOUBLE_INT).extent, 2 * static_cast<std::int64_t>(sizeof(long double)));
    EXPECT_EQ(P(MPI_FLOAT_INT).basic, &P(MPI_FLOAT_INT));
    EXPECT_EQ(elements_in(P(MPI_DOUBLE_INT), 12), 2);
    EXPECT_EQ(elements_in(P(MPI_DOUBLE_INT), 8), 1);
    EXPECT_EQ(elements_in(P(MPI_DOUBLE_INT), 10), MPI_UNDEFINED);
    EXPECT_EQ(elements_in(P(MPI_DOUBLE_INT), 20), 3);
}

TEST(DtypeMaps, UpperBoundMarkerMakesAColumnType) {
    // Seed 004 examples 4.8 and 4.10: one int whose extent is a whole row.
    const int bl[2] = {1, 1};
    const MPI_Aint d[2] = {0, 150 * 4};
    const Datatype* ty[2] = {&P(MPI_INT), &P(MPI_UB)};
    const Ref col = own(make_struct(2, bl, d, ty, "test"));
    expect_bounds(*col, 4, 0, 600, 0, 4);
    EXPECT_TRUE(col->sticky_ub);
    EXPECT_EQ(col->basic, &P(MPI_INT));
    EXPECT_EQ(placement(*col, 3), bytes_of({{0, 4}, {600, 4}, {1200, 4}}));
    // Markers stick: a vector of it keeps the marked bounds.
    const Ref v = own(make_vector(2, 1, 1, *col, "test"));
    expect_bounds(*v, 8, 0, 1200, 0, 604);
}

TEST(DtypeMaps, LowerBoundMarker) {
    const int bl[2] = {1, 1};
    const MPI_Aint d[2] = {-4, 0};
    const Datatype* ty[2] = {&P(MPI_LB), &P(MPI_INT)};
    const Ref t = own(make_struct(2, bl, d, ty, "test"));
    expect_bounds(*t, 4, -4, 8, 0, 4);
    EXPECT_EQ(placement(*t, 2), bytes_of({{0, 4}, {8, 4}}));
}

TEST(DtypeMaps, ResizedBoundsAreStickyInsideAStruct) {
    const Ref r = own(make_resized(P(MPI_INT), -4, 8, "test"));
    const int bl[2] = {1, 1};
    const MPI_Aint d[2] = {0, -100};
    const Datatype* ty[2] = {r.get(), &P(MPI_DOUBLE)};
    const Ref t = own(make_struct(2, bl, d, ty, "test"));
    expect_bounds(*t, 12, -4, 8, -100, 104);
}

TEST(DtypeMaps, ResizedWithNegativeExtent) {
    const Ref r = own(make_resized(P(MPI_INT), 4, -8, "test"));
    const Ref c = own(make_contiguous(3, *r, "test"));
    expect_bounds(*c, 12, -12, 8, -16, 20);
    EXPECT_EQ(placement(*c, 1), bytes_of({{0, 4}, {-8, 4}, {-16, 4}}));
}

TEST(DtypeMaps, SubarrayInBothOrders) {
    const int sizes[2] = {4, 6}, subsizes[2] = {2, 3}, starts[2] = {1, 2};
    const Ref c = own(make_subarray(2, sizes, subsizes, starts, MPI_ORDER_C, P(MPI_DOUBLE), "test"));
    expect_bounds(*c, 48, 0, 192, 64, 72);
    EXPECT_EQ(placement(*c, 1), bytes_of({{64, 24}, {112, 24}}));
    const Ref f = own(make_subarray(2, sizes, subsizes, starts, MPI_ORDER_FORTRAN, P(MPI_DOUBLE), "test"));
    expect_bounds(*f, 48, 0, 192, 72, 80);
    EXPECT_EQ(placement(*f, 1), bytes_of({{72, 16}, {104, 16}, {136, 16}}));
}

TEST(DtypeMaps, DarrayBlockByCyclic) {
    // A 4 x 6 int array on a 2 x 2 grid: rows in blocks, columns cyclic(2).
    const int gsizes[2] = {4, 6};
    const int distribs[2] = {MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_CYCLIC};
    const int dargs[2] = {MPI_DISTRIBUTE_DFLT_DARG, 2};
    const int psizes[2] = {2, 2};
    const Ref r0 = own(make_darray(4, 0, 2, gsizes, distribs, dargs, psizes, MPI_ORDER_C, P(MPI_INT), "test"));
    EXPECT_EQ(placement(*r0, 1), bytes_of({{0, 8}, {16, 8}, {24, 8}, {40, 8}}));
    EXPECT_EQ(r0->lb, 0);
    EXPECT_EQ(r0->extent, 96);
    const Ref r3 = own(make_darray(4, 3, 2, gsizes, distribs, dargs, psizes, MPI_ORDER_C, P(MPI_INT), "test"));
    EXPECT_EQ(placement(*r3, 1), bytes_of({{56, 8}, {80, 8}}));
    // Every element of the array belongs to exactly one rank.
    std::vector<int> owners(24, 0);
    for (int rank = 0; rank < 4; ++rank) {
        const Ref t = own(make_darray(4, rank, 2, gsizes, distribs, dargs, psizes, MPI_ORDER_C, P(MPI_INT), "test"));
        const std::vector<std::int64_t> at = placement(*t, 1);
        for (std::size_t i = 0; i < at.size(); i += 4) ++owners[static_cast<std::size_t>(at[i] / 4)];
    }
    for (int n : owners) EXPECT_EQ(n, 1);
}

TEST(DtypeMaps, DarrayTakesEveryPositiveDargAsABlockSize) {
    // 38 ints on 4 processes in blocks of 19: ranks 0 and 1 hold 19 each,
    // ranks 2 and 3 nothing.  The default block would be 10 (no positive
    // darg may be mistaken for MPI_DISTRIBUTE_DFLT_DARG).
    const int gsizes[1] = {38};
    const int distribs[1] = {MPI_DISTRIBUTE_BLOCK};
    const int psizes[1] = {4};
    const int explicit_darg[1] = {19};
    const int default_darg[1] = {MPI_DISTRIBUTE_DFLT_DARG};
    for (int rank = 0; rank < 4; ++rank) {
        const Ref t = own(make_darray(4, rank, 1, gsizes, distribs, explicit_darg, psizes, MPI_ORDER_C,
                                      P(MPI_INT), "test"));
        EXPECT_EQ(t->size, rank < 2 ? 19 * 4 : 0) << "rank " << rank;
        const Ref d = own(make_darray(4, rank, 1, gsizes, distribs, default_darg, psizes, MPI_ORDER_C,
                                      P(MPI_INT), "test"));
        EXPECT_EQ(d->size, rank < 3 ? 10 * 4 : 8 * 4) << "rank " << rank;
    }
}

/// Elements a process owns of a cyclic(darg) dimension of `gsize` on
/// `nprocs` processes, counted period by period (psize * darg elements).
std::int64_t cyclic_owned(std::int64_t gsize, std::int64_t nprocs, std::int64_t rank, std::int64_t darg) {
    const std::int64_t period = nprocs * darg;
    return gsize / period * darg + std::clamp<std::int64_t>(gsize % period - rank * darg, 0, darg);
}

TEST(DtypeMaps, CyclicDarrayOfAHugeArrayIsAPatternNotAList) {
    // A cyclic dimension once listed every block a process owns: 2e8
    // doubles cyclic(1) on one process took 21 s and 3 GB, INT_MAX of them
    // 24 GB.  Now a level holds at most two blocks whatever the size, and
    // these are built at once.  (Too large to pack; the segments of the
    // first and last bytes locate the first and the last element.)
    struct Case {
        int gsize, nprocs, rank, darg;
    };
    // Ranks with and without the short last block (INT_MAX = 3 * 715827882
    // + 1 = 2 * 1073741823 + 1 = 7 * 306783378 + 1), from 0 and not.
    for (const Case c : {Case{200000000, 1, 0, 1}, Case{200000000, 4, 3, 1}, Case{INT_MAX, 2, 1, 1},
                         Case{INT_MAX, 4, 0, 3}, Case{INT_MAX, 4, 2, 3}, Case{INT_MAX, 3, 0, 2},
                         Case{INT_MAX, 3, 2, 2}, Case{INT_MAX, 5, 3, 7}, Case{INT_MAX, 5, 4, 7},
                         Case{INT_MAX, 7, 6, MPI_DISTRIBUTE_DFLT_DARG}}) {
        SCOPED_TRACE(::testing::Message() << "gsize " << c.gsize << ", " << c.nprocs << " procs, rank " << c.rank
                                          << ", darg " << c.darg);
        const int gsizes[1] = {c.gsize};
        const int distribs[1] = {MPI_DISTRIBUTE_CYCLIC};
        const int dargs[1] = {c.darg};
        const int psizes[1] = {c.nprocs};
        const Ref t = own(make_darray(c.nprocs, c.rank, 1, gsizes, distribs, dargs, psizes, MPI_ORDER_C,
                                      P(MPI_DOUBLE), "test"));
        const std::int64_t a = c.darg == MPI_DISTRIBUTE_DFLT_DARG ? 1 : c.darg;
        const std::int64_t owned = cyclic_owned(c.gsize, c.nprocs, c.rank, a);
        // The last element owned: in the last block of this rank's last period.
        const std::int64_t blocks = (c.gsize + a - 1) / a;
        const std::int64_t last_block = c.rank + (blocks - 1 - c.rank) / c.nprocs * c.nprocs;
        const std::int64_t last = std::min<std::int64_t>((last_block + 1) * a, c.gsize) - 1;
        expect_bounds(*t, owned * 8, 0, std::int64_t{c.gsize} * 8, c.rank * a * 8, (last + 1 - c.rank * a) * 8);
        EXPECT_EQ(t->elements, owned);

        // The dimension's level, under the resized type: at most two blocks
        // (a vector of the full ones, the short last one) and two runs.
        ASSERT_EQ(t->kind, Kind::Resized);
        EXPECT_LE(t->child->blocklens.size(), 2u);
        EXPECT_LE(t->child->runs.size(), 2u);

        static const char anchor = 0;
        std::vector<Segment> segs;
        EXPECT_EQ(segments(*t, &anchor, 1, 0, 8, segs), 8);
        EXPECT_EQ(segments(*t, &anchor, 1, t->size - 8, 8, segs), 8);
        ASSERT_EQ(segs.size(), 2u);
        EXPECT_EQ(static_cast<const char*>(segs[0].address) - &anchor, c.rank * a * 8);
        EXPECT_EQ(static_cast<const char*>(segs[1].address) - &anchor, last * 8);

        EXPECT_EQ(t->combiner, MPI_COMBINER_DARRAY);
        EXPECT_EQ(t->ints, std::vector<int>({c.nprocs, c.rank, 1, c.gsize, MPI_DISTRIBUTE_CYCLIC, c.darg, c.nprocs,
                                             MPI_ORDER_C}));
        EXPECT_EQ(t->types, std::vector<MPI_Datatype>({MPI_DOUBLE}));
    }
}

TEST(DtypeMaps, DupKeepsTheMapAndCommitState) {
    const Ref t1 = type1();
    commit(*t1);
    const Ref d = own(make_dup(*t1, "test"));
    EXPECT_EQ(placement(*d, 3), placement(*t1, 3));
    EXPECT_TRUE(d->committed);
    EXPECT_EQ(d->combiner, MPI_COMBINER_DUP);
    const Ref di = own(make_dup(P(MPI_DOUBLE_INT), "test"));
    EXPECT_EQ(placement(*di, 2), placement(P(MPI_DOUBLE_INT), 2));
    EXPECT_EQ(di->basic, &P(MPI_DOUBLE_INT));
}

TEST(DtypeMaps, EnvelopesRecordTheCall) {
    const int bl[3] = {2, 0, 1};
    const int di[3] = {5, 1, -2};
    const MPI_Aint dh[3] = {40, 8, -16};
    const Datatype* ty[3] = {&P(MPI_INT), &P(MPI_UB), &P(MPI_DOUBLE)};

    const Ref c = own(make_contiguous(7, P(MPI_INT), "test"));
    EXPECT_EQ(c->combiner, MPI_COMBINER_CONTIGUOUS);
    EXPECT_EQ(c->ints, std::vector<int>({7}));
    EXPECT_EQ(c->types, std::vector<MPI_Datatype>({MPI_INT}));

    const Ref v = own(make_vector(3, 2, -4, *c, "test"));
    EXPECT_EQ(v->combiner, MPI_COMBINER_VECTOR);
    EXPECT_EQ(v->ints, std::vector<int>({3, 2, -4}));
    EXPECT_EQ(v->types, std::vector<MPI_Datatype>({handle_of(*c)}));

    const Ref hv = own(make_hvector(3, 2, -40, P(MPI_INT), "test"));
    EXPECT_EQ(hv->combiner, MPI_COMBINER_HVECTOR);
    EXPECT_EQ(hv->ints, std::vector<int>({3, 2}));
    EXPECT_EQ(hv->aints, std::vector<MPI_Aint>({-40}));

    const Ref ix = own(make_indexed(3, bl, di, P(MPI_INT), "test"));
    EXPECT_EQ(ix->combiner, MPI_COMBINER_INDEXED);
    EXPECT_EQ(ix->ints, std::vector<int>({3, 2, 0, 1, 5, 1, -2}));

    const Ref hx = own(make_hindexed(3, bl, dh, P(MPI_INT), "test"));
    EXPECT_EQ(hx->combiner, MPI_COMBINER_HINDEXED);
    EXPECT_EQ(hx->ints, std::vector<int>({3, 2, 0, 1}));
    EXPECT_EQ(hx->aints, std::vector<MPI_Aint>({40, 8, -16}));

    const Ref ib = own(make_indexed_block(3, 2, di, P(MPI_INT), "test"));
    EXPECT_EQ(ib->combiner, MPI_COMBINER_INDEXED_BLOCK);
    EXPECT_EQ(ib->ints, std::vector<int>({3, 2, 5, 1, -2}));

    const Ref hb = own(make_hindexed_block(3, 2, dh, P(MPI_INT), "test"));
    EXPECT_EQ(hb->combiner, MPI_COMBINER_HINDEXED_BLOCK);
    EXPECT_EQ(hb->ints, std::vector<int>({3, 2}));
    EXPECT_EQ(hb->aints, std::vector<MPI_Aint>({40, 8, -16}));

    const Ref st = own(make_struct(3, bl, dh, ty, "test"));
    EXPECT_EQ(st->combiner, MPI_COMBINER_STRUCT);
    EXPECT_EQ(st->ints, std::vector<int>({3, 2, 0, 1}));
    EXPECT_EQ(st->aints, std::vector<MPI_Aint>({40, 8, -16}));
    EXPECT_EQ(st->types, std::vector<MPI_Datatype>({MPI_INT, MPI_UB, MPI_DOUBLE}));

    const Ref rs = own(make_resized(*v, -8, 100, "test"));
    EXPECT_EQ(rs->combiner, MPI_COMBINER_RESIZED);
    EXPECT_EQ(rs->aints, std::vector<MPI_Aint>({-8, 100}));
    EXPECT_EQ(rs->types, std::vector<MPI_Datatype>({handle_of(*v)}));

    const int sizes[2] = {4, 6}, subsizes[2] = {2, 3}, starts[2] = {1, 2};
    const Ref sa = own(make_subarray(2, sizes, subsizes, starts, MPI_ORDER_FORTRAN, P(MPI_INT), "test"));
    EXPECT_EQ(sa->combiner, MPI_COMBINER_SUBARRAY);
    EXPECT_EQ(sa->ints, std::vector<int>({2, 4, 6, 2, 3, 1, 2, MPI_ORDER_FORTRAN}));

    EXPECT_EQ(P(MPI_INT).combiner, MPI_COMBINER_NAMED);
    EXPECT_TRUE(P(MPI_INT).ints.empty());
}

TEST(DtypeMaps, ZeroLengthBlocksAndEmptyTypes) {
    const int bl[2] = {1, 0};
    const int di[2] = {0, 100};
    const Ref t = own(make_indexed(2, bl, di, P(MPI_INT), "test"));
    expect_bounds(*t, 4, 0, 4, 0, 4);
    const Ref e = own(make_contiguous(0, P(MPI_INT), "test"));
    expect_bounds(*e, 0, 0, 0, 0, 0);
    EXPECT_EQ(pack(*e, nullptr, 5, 0, nullptr, 100), 0);
    EXPECT_EQ(elements_in(*e, 0), 0);
    EXPECT_EQ(count_in(*e, 0), 0);
}

}  // namespace
