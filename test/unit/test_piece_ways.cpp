// PieceWays (src/p2p.hpp): how a streamed send of a non-contiguous type
// fills its stream buffer, chosen by timing both ways.
#include <gtest/gtest.h>

#include <cstdint>

#include "p2p.hpp"

namespace {

using shmpi::p2p::PieceWays;
using Way = PieceWays::Way;

constexpr std::uint64_t kPiece = 16 * 1024;

/// Asks for `n` pieces, each costing `direct` or `staged` ticks per KiB
/// the way it is filled; returns how many went each way.
struct Counts {
    int direct = 0;
    int staged = 0;
};
Counts run(PieceWays& w, int n, std::uint64_t direct, std::uint64_t staged) {
    Counts c;
    for (int i = 0; i < n; ++i) {
        const Way way = w.next();
        (way == Way::Direct ? c.direct : c.staged)++;
        w.took(way, (way == Way::Direct ? direct : staged) * kPiece / 1024, kPiece);
    }
    return c;
}

TEST(PieceWays, TriesEachWayOnceFirst) {
    PieceWays w;
    EXPECT_EQ(w.next(), Way::Direct);
    w.took(Way::Direct, 100, kPiece);
    EXPECT_EQ(w.next(), Way::Staged);
    w.took(Way::Staged, 300, kPiece);
    EXPECT_EQ(w.next(), Way::Direct);
}

TEST(PieceWays, TakesTheCheaperWayAndSometimesTheOther) {
    PieceWays w;
    // Staged at a third of the cost (a pack into lines the other CPU holds).
    Counts c = run(w, 2 + 640, 300, 100);
    EXPECT_EQ(c.direct, 1 + 10);  // the first try, then one piece in 64
    EXPECT_EQ(c.staged, 1 + 630);
    // Direct cheaper: the same the other way round.
    PieceWays v;
    c = run(v, 2 + 640, 100, 140);
    EXPECT_EQ(c.staged, 1 + 10);
    EXPECT_EQ(c.direct, 1 + 630);
}

TEST(PieceWays, FollowsAChange) {
    PieceWays w;
    run(w, 200, 300, 100);
    // Now the direct way is the cheaper (the lines come from a shared
    // cache): the pieces that try it bring its average down, and within a
    // few of those it is the way taken.
    const Counts c = run(w, 64 * 12, 100, 300);
    EXPECT_GT(c.direct, 64 * 12 - 64 * 6);
    // And the last pieces go direct, but for the exploring one.
    const Counts tail = run(w, 64, 100, 300);
    EXPECT_EQ(tail.direct, 63);
}

TEST(PieceWays, AForcedWayIsAlwaysTaken) {
    for (const Way forced : {Way::Direct, Way::Staged}) {
        PieceWays w(forced);
        // Even where the other way is three times cheaper.
        const Counts c = run(w, 200, forced == Way::Direct ? 300 : 100, forced == Way::Direct ? 100 : 300);
        EXPECT_EQ(forced == Way::Direct ? c.direct : c.staged, 200);
    }
}

TEST(PieceWays, ClampsADescheduledPiece) {
    PieceWays w;
    w.took(Way::Direct, 200 * kPiece / 1024, kPiece);
    w.took(Way::Staged, 100 * kPiece / 1024, kPiece);
    // One staged piece during which the process slept a millisecond counts
    // as four times the average at most: staged stays the cheaper way.
    w.took(Way::Staged, 1000000000, kPiece);
    EXPECT_EQ(w.next(), Way::Staged);
}

TEST(PieceWays, IgnoresShortPieces) {
    PieceWays w;
    w.took(Way::Direct, 100, 4095);  // the tail of a message: not counted
    EXPECT_EQ(w.next(), Way::Direct);
    w.took(Way::Direct, 100 * 4096 / 1024, 4096);
    EXPECT_EQ(w.next(), Way::Staged);
}

}  // namespace
