// dtype::rebuild(): a type made again with its predefined types replaced,
// as a file data representation lays out a view (MPI-3.1 13.5).  Here MPI_INT
// becomes a run of 8 bytes and MPI_DOUBLE one of 2, so each check can tell
// scaled displacements (counted in old types) from kept ones (in bytes).
#include <gtest/gtest.h>

#include <vector>

#include "dtype/datatype.hpp"

namespace {

using namespace shmpi::dtype;

const Datatype& P(MPI_Datatype h) { return *predefined(h); }

/// Byte runs of `n` bytes, made once per size.
Ref bytes(int n) {
    static std::vector<Ref> made(32);
    Ref& r = made[static_cast<std::size_t>(n)];
    if (!r) r = adopt_internal(make_contiguous(n, byte_type(), "test"));
    return r;
}

Ref wide(const Datatype& t) {
    return rebuild(t, [](const Datatype& p) { return bytes(p.self == MPI_DOUBLE ? 2 : 8); }, "test");
}

/// The (offset, length) runs of one element of `t`.
std::vector<std::pair<std::int64_t, std::int64_t>> runs(const Datatype& t) {
    std::vector<Segment> segs;
    segments(t, nullptr, 1, 0, t.size, segs);
    std::vector<std::pair<std::int64_t, std::int64_t>> out;
    for (const Segment& s : segs) out.emplace_back(reinterpret_cast<std::intptr_t>(s.address), s.length);
    return out;
}

using Runs = std::vector<std::pair<std::int64_t, std::int64_t>>;

/// Frees the user's handle of a type made for a test.
struct Made {
    Datatype* t;
    ~Made() { free_handle(*t, "MPI_Type_free"); }
    const Datatype& operator*() const { return *t; }
};

TEST(DtypeRebuild, APredefinedTypeIsWhatReplaceGives) {
    const Ref r = wide(P(MPI_INT));
    EXPECT_EQ(r->size, 8);
    EXPECT_EQ(r->extent, 8);
    EXPECT_EQ(r->handles.load(), 0) << "no user handle names an internal type";
    EXPECT_TRUE(r->committed);
}

TEST(DtypeRebuild, VectorStridesScaleWithTheOldType) {
    const Made v{make_vector(3, 2, 5, P(MPI_INT), "t")};  // 2 ints every 5
    const Ref r = wide(*v);
    EXPECT_EQ(r->size, 3 * 2 * 8);
    EXPECT_EQ(r->extent, (2 * 5 + 2) * 8);
    EXPECT_EQ(runs(*r), (Runs{{0, 16}, {40, 16}, {80, 16}}));
}

TEST(DtypeRebuild, HvectorStridesStayInBytes) {
    const Made v{make_hvector(2, 1, 100, P(MPI_INT), "t")};
    const Ref r = wide(*v);
    EXPECT_EQ(runs(*r), (Runs{{0, 8}, {100, 8}}));
}

TEST(DtypeRebuild, IndexedScalesHindexedDoesNot) {
    const int lens[2] = {1, 2};
    const int displs[2] = {3, 6};
    const MPI_Aint bdispls[2] = {3, 60};
    const Made ix{make_indexed(2, lens, displs, P(MPI_INT), "t")};
    const Made hx{make_hindexed(2, lens, bdispls, P(MPI_INT), "t")};
    const Made ib{make_indexed_block(2, 1, displs, P(MPI_INT), "t")};
    EXPECT_EQ(runs(*wide(*ix)), (Runs{{24, 8}, {48, 16}}));
    EXPECT_EQ(runs(*wide(*hx)), (Runs{{3, 8}, {60, 16}}));
    EXPECT_EQ(runs(*wide(*ib)), (Runs{{24, 8}, {48, 8}}));
}

TEST(DtypeRebuild, StructKeepsByteDisplacementsAndRebuildsEachMember) {
    const int lens[2] = {1, 2};
    const MPI_Aint displs[2] = {0, 16};
    const Datatype* types[2] = {&P(MPI_INT), &P(MPI_DOUBLE)};
    const Made s{make_struct(2, lens, displs, types, "t")};
    const Ref r = wide(*s);
    EXPECT_EQ(r->size, 8 + 2 * 2);
    EXPECT_EQ(runs(*r), (Runs{{0, 8}, {16, 4}}));
    EXPECT_EQ(r->extent, 20) << "byte runs need no alignment padding";
}

TEST(DtypeRebuild, SubarrayScalesAndResizedKeepsItsBounds) {
    const int sizes[2] = {4, 4}, sub[2] = {2, 2}, starts[2] = {1, 1};
    const Made a{make_subarray(2, sizes, sub, starts, MPI_ORDER_C, P(MPI_INT), "t")};
    const Ref r = wide(*a);
    EXPECT_EQ(r->extent, 16 * 8);
    EXPECT_EQ(runs(*r), (Runs{{5 * 8, 16}, {9 * 8, 16}}));
    const Made z{make_resized(P(MPI_INT), -4, 40, "t")};
    const Ref rz = wide(*z);
    EXPECT_EQ(rz->lb, -4);
    EXPECT_EQ(rz->extent, 40);
    EXPECT_EQ(rz->size, 8);
}

TEST(DtypeRebuild, ADuplicateIsItsOldTypeRebuilt) {
    const Made c{make_contiguous(3, P(MPI_DOUBLE), "t")};
    const Made d{make_dup(*c, "t")};
    const Ref r = wide(*d);
    EXPECT_EQ(r->size, 6);
    EXPECT_EQ(r->extent, 6);
}

}  // namespace
