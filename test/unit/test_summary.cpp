// How a rank finds its work without a look at every ring.
//
// Heads rows (SegmentHeader::ring_summary): a producer also stores the count
// of cells it has published in the receiver's heads row, and the receiver's
// Transport::may_hold() reads that row instead of a line in each ring.  A
// count missing there would hide the cell from a receiver that polls by the
// row: the tests check that the row says exactly which rings hold cells, and
// that a receiver asleep in a wait wakes for a cell.
//
// Stalled rings: a rank whose ring to a peer is full sleeps in short naps
// (kStalledSleep), since the consumer that makes room may miss its wake-up;
// otherwise a wait nobody rings naps for WaitPolicy::sleep.  The Transport
// keeps its own count of full rings for that choice.
//
// Real segments; each rank is a forked child with its own Transport.
#include <sched.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <optional>
#include <string>

#include "../attach_rank.hpp"
#include "shm/segment.hpp"
#include "shm/transport.hpp"

namespace {

namespace shm = shmpi::shm;
using Clock = std::chrono::steady_clock;

/// A segment of `n` ranks with heads rows on or off, or nullopt where the
/// machine has no usable shared memory.
std::optional<shm::Segment> make_segment(std::uint32_t n, bool summary) {
    shm::Geometry g = shm::Geometry::for_ranks(n);
    g.ring_summary = summary ? 1 : 0;
    try {
        std::optional<shm::Segment> seg;
        seg.emplace(shm::Segment::create(g, getpid()));
        seg->unlink();
        return seg;
    } catch (const std::exception&) {
        return std::nullopt;
    }
}

/// What a rank reported, or "died".
std::string report(const shmpi_test::Child& c) { return shmpi_test::collect(c).value_or("died"); }

/// Rank `src` publishes `cells` cells to rank 0, numbered from 0.
std::string send_cells(shm::Transport& t, std::uint32_t cells) {
    for (std::uint32_t i = 0; i < cells; ++i) {
        std::byte* cell = t.try_claim(0);
        if (cell == nullptr) return "ring full at cell " + std::to_string(i);
        std::memcpy(cell, &i, sizeof i);
        t.publish(0);
    }
    return "sent";
}

/// Rank 0's view after rank 1 sent `cells` cells and rank 2 none: which
/// rings may hold cells, before each release of rank 1's cells and after
/// the last.  "1 0 1" = may_hold(1), may_hold(2), may_hold(0).
std::string drain_and_describe(shm::Transport& t, std::uint32_t cells) {
    std::string out;
    auto look = [&] {
        out += std::to_string(t.may_hold(1)) + std::to_string(t.may_hold(2)) + std::to_string(t.may_hold(0)) + " ";
    };
    for (std::uint32_t i = 0; i < cells; ++i) {
        look();
        const std::byte* cell = t.peek(1);
        if (cell == nullptr) return out + "no cell " + std::to_string(i);
        std::uint32_t value = 0;
        std::memcpy(&value, cell, sizeof value);
        if (value != i) return out + "cell " + std::to_string(i) + " holds " + std::to_string(value);
        t.release(1);
        t.after_release(1);
    }
    look();
    return out;
}

/// A 3-rank job with heads rows on or off: rank 1 sends 3 cells to rank 0,
/// then rank 0 takes them.  What each said, and rank 0's row in between.
struct ThreeCells {
    std::string sender, receiver;
    std::uint64_t row0_from1 = 0, row0_from2 = 0, row1_from0 = 0;
};
ThreeCells three_cells(shm::Segment& seg) {
    ThreeCells r;
    r.sender = report(shmpi_test::spawn([&] {
        auto t = shmpi_test::attach_rank(seg, 1, 3);
        return send_cells(*t, 3);
    }));
    r.row0_from1 = seg.heads(0)[1].load(std::memory_order_relaxed);
    r.row0_from2 = seg.heads(0)[2].load(std::memory_order_relaxed);
    r.row1_from0 = seg.heads(1)[0].load(std::memory_order_relaxed);
    r.receiver = report(shmpi_test::spawn([&] {
        auto t = shmpi_test::attach_rank(seg, 0, 3);
        return drain_and_describe(*t, 3);
    }));
    return r;
}

TEST(HeadsRows, SayWhichRingsHoldCells) {
    std::optional<shm::Segment> seg = make_segment(3, true);
    if (!seg) GTEST_SKIP() << "no usable shared memory";
    const ThreeCells r = three_cells(*seg);
    ASSERT_EQ(r.sender, "sent");
    // Rank 1 stored its count, and nobody else stored anything, in rank 0's row.
    EXPECT_EQ(r.row0_from1, 3u);
    EXPECT_EQ(r.row0_from2, 0u);
    EXPECT_EQ(r.row1_from0, 0u);
    // Rank 2's ring is empty for sure; our own ring is always worth a look.
    EXPECT_EQ(r.receiver, "101 101 101 001 ");
}

TEST(HeadsRows, AbsentWithoutRingSummary) {
    std::optional<shm::Segment> seg = make_segment(3, false);
    if (!seg) GTEST_SKIP() << "no usable shared memory";
    const ThreeCells r = three_cells(*seg);
    ASSERT_EQ(r.sender, "sent");
    // Small jobs: producers store nothing more than the cell, and receivers
    // look at every ring (may_hold() is always true).
    EXPECT_EQ(r.row0_from1, 0u);
    EXPECT_EQ(r.receiver, "111 111 111 111 ");
}

TEST(HeadsRows, ASleepingReceiverWakesForACell) {
    std::optional<shm::Segment> seg = make_segment(3, true);
    if (!seg) GTEST_SKIP() << "no usable shared memory";
    // Rank 0 waits, polling by its heads row only, until a cell comes or
    // 20 s have passed.
    const shmpi_test::Child receiver = shmpi_test::spawn([&] {
        auto t = shmpi_test::attach_rank(*seg, 0, 3);
        const auto give_up = Clock::now() + std::chrono::seconds(20);
        std::uint32_t from = 0;
        t->wait([&] {
            for (std::uint32_t s : {1u, 2u}) {
                if (t->may_hold(s) && t->peek(s) != nullptr) {
                    t->release(s);
                    from = s;
                    return true;
                }
            }
            return Clock::now() > give_up;
        });
        return from == 0 ? std::string("no cell") : "cell from " + std::to_string(from);
    });
    // Rank 2 sends one cell once rank 0 sleeps (its slot's park line).
    shm::RankSlot& slot0 = seg->slot(0);
    const shmpi_test::Child sender = shmpi_test::spawn([&] {
        auto t = shmpi_test::attach_rank(*seg, 2, 3);
        const auto give_up = Clock::now() + std::chrono::seconds(20);
        // Relaxed: only whether rank 0 has slept; no data hangs on it.
        while (slot0.parked.load(std::memory_order_relaxed) == 0) {
            if (Clock::now() > give_up) return std::string("rank 0 never slept");
            usleep(1000);
        }
        return send_cells(*t, 1);
    });
    EXPECT_EQ(report(sender), "sent");
    EXPECT_EQ(report(receiver), "cell from 2");
}

/// Waits in `t` for `span` with nothing to ring it; returns the sleeps
/// that took.
std::uint64_t sleeps_in_idle_wait(shm::Transport& t, std::chrono::milliseconds span) {
    const std::uint64_t before = t.sleeps();
    const auto until = Clock::now() + span;
    t.wait([&] { return Clock::now() > until; });
    return t.sleeps() - before;
}

TEST(Stalls, AFullRingMakesShortNapsUntilThereIsRoom) {
    std::optional<shm::Segment> seg = make_segment(2, false);
    if (!seg) GTEST_SKIP() << "no usable shared memory";
    const std::uint32_t capacity = seg->layout().geometry.ring_cells;
    // Rank 1 fills its ring to rank 0 and waits 300 ms; then, once rank 0
    // has made room, sends one more cell and waits 300 ms again.
    // Reports "<sleeps in the first wait> <sleeps in the second>".
    const shmpi_test::Child producer = shmpi_test::spawn([&] {
        auto t = shmpi_test::attach_rank(*seg, 1, 2);
        if (std::string sent = send_cells(*t, capacity); sent != "sent") return sent;
        if (t->try_claim(0) != nullptr) return std::string("room past the ring's capacity");
        const std::uint64_t stalled = sleeps_in_idle_wait(*t, std::chrono::milliseconds(300));
        const auto give_up = Clock::now() + std::chrono::seconds(20);
        std::byte* cell;
        while ((cell = t->try_claim(0)) == nullptr) {
            if (Clock::now() > give_up) return std::string("rank 0 never made room");
            sched_yield();
        }
        std::memcpy(cell, &capacity, sizeof capacity);
        t->publish(0);
        const std::uint64_t free = sleeps_in_idle_wait(*t, std::chrono::milliseconds(300));
        return std::to_string(stalled) + " " + std::to_string(free);
    });
    // Rank 0 takes nothing for a second, then every cell.
    const shmpi_test::Child consumer = shmpi_test::spawn([&] {
        auto t = shmpi_test::attach_rank(*seg, 0, 2);
        sleep(1);
        const auto give_up = Clock::now() + std::chrono::seconds(20);
        for (std::uint32_t i = 0; i <= capacity;) {
            if (const std::byte* cell = t->peek(1)) {
                std::uint32_t value = 0;
                std::memcpy(&value, cell, sizeof value);
                if (value != i) return "cell " + std::to_string(i) + " holds " + std::to_string(value);
                t->release(1);
                t->after_release(1);
                ++i;
            } else if (Clock::now() > give_up) {
                return "got " + std::to_string(i) + " cells";
            } else {
                sched_yield();
            }
        }
        return std::string("took all");
    });
    EXPECT_EQ(report(consumer), "took all");
    const std::string line = report(producer);
    unsigned long long stalled = 0, free = 0;
    ASSERT_EQ(std::sscanf(line.c_str(), "%llu %llu", &stalled, &free), 2) << line;
    // Naps of kStalledSleep (1 ms) through the 300 ms: hundreds of sleeps
    // on an idle machine, and surely more than 10 on a loaded one.  One
    // nap of WaitPolicy::sleep (800 ms) gives 1.
    EXPECT_GE(stalled, 10u) << "a rank with a full ring napped long";
    // With room again, one long nap covers the wait.
    EXPECT_LE(free, 2u) << "a rank whose rings have room napped short";
}

}  // namespace
