// Group arithmetic and the attribute store, in one process, against
// hand-computed answers.
#include <gtest/gtest.h>

#include <climits>

#include <array>
#include <vector>

#include "attributes.hpp"
#include "errors.hpp"
#include "group.hpp"

using shmpi::Group;
using shmpi::MpiError;
using W = std::vector<std::uint32_t>;

namespace {

int error_class_of(auto&& f) {
    try {
        f();
    } catch (const MpiError& e) {
        return e.error_class();
    }
    return MPI_SUCCESS;
}

}  // namespace

TEST(Group, InclExclKeepOrder) {
    const Group g(W{10, 11, 12, 13, 14});
    const std::array<int, 3> r{4, 0, 2};
    EXPECT_EQ(g.incl(r, "t"), (W{14, 10, 12}));
    EXPECT_EQ(g.excl(r, "t"), (W{11, 13}));
    EXPECT_EQ(g.rank_of_world(12), 2);
    EXPECT_EQ(g.rank_of_world(99), MPI_UNDEFINED);
}

TEST(Group, InclRejectsBadRanks) {
    const Group g(W{0, 1, 2});
    const std::array<int, 1> out{3};
    const std::array<int, 2> twice{1, 1};
    EXPECT_EQ(error_class_of([&] { g.incl(out, "t"); }), MPI_ERR_RANK);
    EXPECT_EQ(error_class_of([&] { g.excl(twice, "t"); }), MPI_ERR_RANK);
}

TEST(Group, Ranges) {
    const Group g(W{0, 1, 2, 3, 4, 5, 6, 7, 8, 9});
    const int r1[][3] = {{0, 9, 3}, {8, 4, -2}};  // 0 3 6 9, 8 6 4 -> 6 twice
    EXPECT_EQ(error_class_of([&] { g.expand_ranges(r1, "t"); }), MPI_ERR_RANK);
    const int r2[][3] = {{0, 9, 3}, {7, 1, -3}};  // 0 3 6 9 7 4 1
    EXPECT_EQ(g.expand_ranges(r2, "t"), (std::vector<int>{0, 3, 6, 9, 7, 4, 1}));
    const int r3[][3] = {{5, 2, 1}};  // empty: first > last with a positive stride
    EXPECT_TRUE(g.expand_ranges(r3, "t").empty());
    const int zero[][3] = {{0, 3, 0}};
    EXPECT_EQ(error_class_of([&] { g.expand_ranges(zero, "t"); }), MPI_ERR_ARG);
    const int past[][3] = {{0, 10, 1}};
    EXPECT_EQ(error_class_of([&] { g.expand_ranges(past, "t"); }), MPI_ERR_RANK);
    // MPI-3.1 6.3.2 asks only the computed ranks to be in the group, not
    // last: (0, 10, 9) is ranks 0 and 9, (7, -1, -3) is 7 4 1.
    const int last_outside[][3] = {{0, 10, 9}, {8, -1, -4}};  // 0 9, 8 4 0 -> 0 twice
    EXPECT_EQ(error_class_of([&] { g.expand_ranges(last_outside, "t"); }), MPI_ERR_RANK);
    const int last_outside2[][3] = {{0, 10, 9}, {7, -1, -3}};  // 0 9, 7 4 1
    EXPECT_EQ(g.expand_ranges(last_outside2, "t"), (std::vector<int>{0, 9, 7, 4, 1}));
    // Nothing is generated before the last computed rank is checked.
    const int huge[][3] = {{0, INT_MAX, 1}};
    const int huge_down[][3] = {{7, INT_MIN, -3}};
    EXPECT_EQ(error_class_of([&] { g.expand_ranges(huge_down, "t"); }), MPI_ERR_RANK);
    EXPECT_EQ(error_class_of([&] { g.expand_ranges(huge, "t"); }), MPI_ERR_RANK);
    const int first_outside[][3] = {{-1, 5, 2}};
    EXPECT_EQ(error_class_of([&] { g.expand_ranges(first_outside, "t"); }), MPI_ERR_RANK);
}

TEST(Group, SetOperations) {
    const Group a(W{0, 2, 4, 6});
    const Group b(W{7, 6, 5, 4});
    EXPECT_EQ(Group::set_union(a, b), (W{0, 2, 4, 6, 7, 5}));
    EXPECT_EQ(Group::set_intersection(a, b), (W{4, 6}));
    EXPECT_EQ(Group::set_intersection(b, a), (W{6, 4}));
    EXPECT_EQ(Group::set_difference(a, b), (W{0, 2}));
    EXPECT_EQ(Group::set_difference(b, a), (W{7, 5}));
}

TEST(Group, Compare) {
    const Group a(W{1, 2, 3});
    EXPECT_EQ(Group::compare(a, Group(W{1, 2, 3})), MPI_IDENT);
    EXPECT_EQ(Group::compare(a, Group(W{3, 1, 2})), MPI_SIMILAR);
    EXPECT_EQ(Group::compare(a, Group(W{1, 2})), MPI_UNEQUAL);
    EXPECT_EQ(Group::compare(a, Group(W{1, 2, 4})), MPI_UNEQUAL);
    EXPECT_EQ(Group::compare(Group(W{}), Group(W{})), MPI_IDENT);
}

namespace {
int g_deletes = 0;
int count_delete(MPI_Datatype, int, void*, void*) {
    ++g_deletes;
    return MPI_SUCCESS;
}
int fail_delete(MPI_Datatype, int, void*, void*) { return MPI_ERR_OTHER; }
}  // namespace

TEST(AttrStore, SetGetOverwriteEraseClear) {
    using namespace shmpi::attr;
    Keyval spec;
    spec.kind = Kind::Type;
    spec.type_copy = MPI_TYPE_DUP_FN;
    spec.type_delete = count_delete;
    const int id = create_keyval(spec);
    Keyval* k = find_keyval(id);
    ASSERT_NE(k, nullptr);
    const auto h = reinterpret_cast<MPI_Datatype>(0x5000);
    int a = 1, b = 2;
    g_deletes = 0;
    {
        Store s;
        void* v = nullptr;
        EXPECT_FALSE(s.get(*k, &v));
        s.set(h, *k, &a, "t");
        s.set(h, *k, &b, "t");  // overwrite: the old value's delete runs
        EXPECT_EQ(g_deletes, 1);
        ASSERT_TRUE(s.get(*k, &v));
        EXPECT_EQ(v, &b);
        Store copy;
        s.copy_into(h, copy, h, "t");  // MPI_TYPE_DUP_FN
        ASSERT_TRUE(copy.get(*k, &v));
        EXPECT_EQ(v, &b);
        EXPECT_TRUE(s.erase(h, *k, "t"));
        EXPECT_FALSE(s.erase(h, *k, "t"));
        EXPECT_EQ(g_deletes, 2);
        free_keyval(*k);  // the copy still holds the keyval, and its id finds it
        ASSERT_EQ(find_keyval(id), k);
        EXPECT_TRUE(k->freed);
        copy.clear(h, "t");
        EXPECT_EQ(g_deletes, 3);
        EXPECT_TRUE(copy.empty());
        EXPECT_EQ(find_keyval(id), nullptr);  // the last reference took the id
    }
}

TEST(AttrStore, KeyvalIdsWrapPastTheLiveOnes) {
    using namespace shmpi::attr;
    Keyval proto;
    proto.kind = Kind::Comm;
    const int first = create_keyval(proto);  // stays alive throughout
    set_next_keyval_id(INT32_MAX - 1);
    const int last = create_keyval(proto);
    EXPECT_EQ(last, INT32_MAX - 1);
    // The counter wraps to the first user id (1024), skipping the ids
    // still alive.
    set_next_keyval_id(INT32_MAX);
    const int wrapped = create_keyval(proto);
    EXPECT_NE(wrapped, first);
    EXPECT_NE(wrapped, last);
    EXPECT_GE(wrapped, 1024);
    EXPECT_EQ(find_keyval(first)->id, first);
    // A freed id comes back once the counter wraps again.
    Keyval* w = find_keyval(wrapped);
    ASSERT_NE(w, nullptr);
    free_keyval(*w);
    EXPECT_EQ(find_keyval(wrapped), nullptr);
    set_next_keyval_id(wrapped);
    EXPECT_EQ(create_keyval(proto), wrapped);
    for (int id : {first, last, wrapped}) free_keyval(*find_keyval(id));
}

TEST(AttrStore, FailingDeleteKeepsTheAttribute) {
    using namespace shmpi::attr;
    Keyval spec;
    spec.kind = Kind::Type;
    spec.type_delete = fail_delete;
    Keyval* k = find_keyval(create_keyval(spec));
    ASSERT_NE(k, nullptr);
    const auto h = reinterpret_cast<MPI_Datatype>(0x5000);
    int a = 1;
    Store s;
    s.set(h, *k, &a, "t");
    EXPECT_EQ(error_class_of([&] { s.erase(h, *k, "t"); }), MPI_ERR_OTHER);
    void* v = nullptr;
    EXPECT_TRUE(s.get(*k, &v));
    free_keyval(*k);
}
