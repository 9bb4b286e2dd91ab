// Tests for the tree shapes of the shared-memory collectives (tree_shm.hpp):
// the parent/children arithmetic of band trees, that subtrees are ranges of
// consecutive members, and that evaluating member 0's program with every
// child's program in place of the child gives exactly the canonical
// bracketing of coll.hpp, for every team size from 1 to 64 and every band.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "coll/coll.hpp"
#include "coll/tree_shm.hpp"

namespace {

namespace tree = shmpi::coll::tree;
using shmpi::coll::canonical_mid;

/// The bracketing member `me`'s program computes, with each child's own
/// program expanded in place of the child.
std::string expand(const tree::BandTree& t, int me) {
    std::vector<std::string> stack;
    for (const tree::Op& op : t.program(me)) {
        switch (op.kind) {
            case tree::Op::Self:
                stack.push_back(std::to_string(me));
                break;
            case tree::Op::Child:
                stack.push_back(expand(t, op.member));
                break;
            case tree::Op::Combine: {
                const std::string right = stack.back();
                stack.pop_back();
                const std::string left = stack.back();
                stack.pop_back();
                stack.push_back("(" + left + " " + right + ")");
                break;
            }
        }
    }
    EXPECT_EQ(stack.size(), 1u) << "member " << me << "'s program leaves one value";
    return stack.empty() ? "" : stack.back();
}

/// The bracketing of a flat program, with leaf j printed as j.
std::string flat_text(const std::vector<tree::Op>& program, int me) {
    std::vector<std::string> stack;
    for (const tree::Op& op : program) {
        if (op.kind == tree::Op::Combine) {
            const std::string right = stack.back();
            stack.pop_back();
            const std::string left = stack.back();
            stack.pop_back();
            stack.push_back("(" + left + " " + right + ")");
        } else {
            stack.push_back(std::to_string(op.kind == tree::Op::Self ? me : op.member));
        }
    }
    return stack.empty() ? "" : stack.back();
}

const int kBands[] = {1, 2, 3, 4, 5, 6, 7, tree::kFlat};

// copy_small() (coll.hpp) moves a release line's inline data with
// overlapping fixed-width moves: every length it takes, from and to every
// alignment, copies exactly those bytes and touches nothing around them.
TEST(CopySmall, CopiesExactlyTheBytesAskedForAtAnyAlignment) {
    for (std::size_t n = 0; n <= 64; ++n) {
        for (std::size_t from_off = 0; from_off < 16; from_off += 3) {
            for (std::size_t to_off = 0; to_off < 16; to_off += 5) {
                unsigned char src[96];
                unsigned char dst[96];
                for (std::size_t i = 0; i < sizeof src; ++i) {
                    src[i] = static_cast<unsigned char>(i * 7 + n + 1);
                    dst[i] = 0xEE;
                }
                shmpi::coll::copy_small(dst + to_off, src + from_off, n);
                for (std::size_t i = 0; i < sizeof dst; ++i) {
                    const bool inside = i >= to_off && i < to_off + n;
                    const unsigned char want = inside ? src[from_off + (i - to_off)] : 0xEE;
                    ASSERT_EQ(dst[i], want) << "n " << n << ", from +" << from_off << ", to +" << to_off
                                            << ", byte " << i;
                }
            }
        }
    }
}

TEST(CanonicalMid, SplitsRangesAsCollHppSays) {
    EXPECT_EQ(canonical_mid(0, 2), 1);
    EXPECT_EQ(canonical_mid(0, 3), 2);  // the left half takes the extra member
    EXPECT_EQ(canonical_mid(0, 5), 3);
    EXPECT_EQ(canonical_mid(4, 8), 6);
    EXPECT_EQ(tree::canonical_text(0, 1), "0");
    EXPECT_EQ(tree::canonical_text(0, 3), "((0 1) 2)");
    EXPECT_EQ(tree::canonical_text(0, 5), "(((0 1) 2) (3 4))");
}

TEST(BandTree, ProgramsComposeToTheCanonicalBracketing) {
    for (int n = 1; n <= 64; ++n) {
        for (const int band : kBands) {
            SCOPED_TRACE("n = " + std::to_string(n) + ", band = " + std::to_string(band));
            const tree::BandTree t(n, band);
            EXPECT_EQ(expand(t, 0), tree::canonical_text(0, n));
        }
    }
}

TEST(BandTree, FlatProgramsAreTheCanonicalBracketingFromAnyMember) {
    for (int n = 1; n <= 64; ++n) {
        for (int me = 0; me < n; ++me) {
            EXPECT_EQ(flat_text(tree::flat_program(n, me), me), tree::canonical_text(0, n))
                << "n = " << n << ", me = " << me;
        }
    }
}

TEST(BandTree, ParentsAndChildrenAgree) {
    for (int n = 1; n <= 64; ++n) {
        for (const int band : kBands) {
            SCOPED_TRACE("n = " + std::to_string(n) + ", band = " + std::to_string(band));
            const tree::BandTree t(n, band);
            EXPECT_EQ(t.parent(0), -1);
            std::vector<int> times_child(static_cast<std::size_t>(n), 0);
            for (int me = 0; me < n; ++me) {
                if (me > 0) {
                    EXPECT_GE(t.parent(me), 0);
                    EXPECT_LT(t.parent(me), me) << "a parent is the first member of a range holding the child";
                }
                for (const int c : t.children(me)) {
                    EXPECT_EQ(t.parent(c), me) << "child " << c << " of " << me;
                    ++times_child[static_cast<std::size_t>(c)];
                }
            }
            for (int me = 1; me < n; ++me) {
                EXPECT_EQ(times_child[static_cast<std::size_t>(me)], 1) << "member " << me;
            }
        }
    }
}

TEST(BandTree, SubtreesAreRangesOfConsecutiveMembers) {
    for (int n = 1; n <= 64; ++n) {
        for (const int band : kBands) {
            SCOPED_TRACE("n = " + std::to_string(n) + ", band = " + std::to_string(band));
            const tree::BandTree t(n, band);
            EXPECT_EQ(t.range_hi(0), n);
            for (int me = 0; me < n; ++me) {
                const int hi = t.range_hi(me);
                EXPECT_GT(hi, me);
                // Every member of [me, hi) has me as an ancestor, and no
                // member outside has.
                for (int j = 0; j < n; ++j) {
                    int a = j;
                    while (a != -1 && a != me) a = t.parent(a);
                    EXPECT_EQ(a == me, j >= me && j < hi) << "member " << j << ", root " << me;
                }
                // The children's ranges tile [me + 1, hi) in some order.
                int covered = 1;
                for (const int c : t.children(me)) covered += t.range_hi(c) - c;
                EXPECT_EQ(covered, hi - me);
            }
        }
    }
}

TEST(BandTree, BandOneIsTheBinaryCanonicalTree) {
    // n = 8: 0 owns [0,8): its children are 4 ([4,8)), 2 ([2,4)) and 1,
    // read smallest subtree first; 4's are 6 and 5; 2's is 3; 6's is 7.
    const tree::BandTree t(8, 1);
    EXPECT_EQ(std::vector<int>(t.children(0).begin(), t.children(0).end()), (std::vector<int>{1, 2, 4}));
    EXPECT_EQ(std::vector<int>(t.children(4).begin(), t.children(4).end()), (std::vector<int>{5, 6}));
    EXPECT_EQ(std::vector<int>(t.children(2).begin(), t.children(2).end()), (std::vector<int>{3}));
    EXPECT_EQ(t.parent(7), 6);
    EXPECT_EQ(t.height(), 4);
}

TEST(BandTree, FlatTreeHasOneLevelBelowTheTop) {
    for (int n = 2; n <= 64; ++n) {
        const tree::BandTree t(n, tree::kFlat);
        EXPECT_EQ(static_cast<int>(t.children(0).size()), n - 1);
        EXPECT_EQ(t.height(), 2);
        for (int me = 1; me < n; ++me) EXPECT_EQ(t.parent(me), 0);
    }
    EXPECT_EQ(tree::BandTree(1, tree::kFlat).height(), 1);
}

TEST(BandTree, WiderBandsGiveShallowerTrees) {
    for (const int n : {16, 33, 64, 200}) {
        int last = 1 << 30;
        for (const int band : {1, 2, 3, 4, 8}) {
            const int h = tree::BandTree(n, band).height();
            EXPECT_LE(h, last) << "n = " << n << ", band = " << band;
            last = h;
        }
    }
}

}  // namespace
