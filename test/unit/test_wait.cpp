// Transport::wait's back-off: a wait that a busy peer keeps ringing does not
// go back to sleep at every ring.
//
// A real 2-rank segment; each rank is a forked child with its own Transport.
// Rank 1 waits until rank 0's wait has gone to sleep, then sends a few
// thousand cells through the ring to rank 0, one every 50 us.
// Rank 0 waits for all of them in one Transport::wait.  Each sleep costs a
// membarrier and a futex call; a wait that slept again after every ring spent
// more time in those than in the work it waited for (p2p_sizes through a
// 4 KiB stream ran 4x slower).  After a ring the wait yields for the yield
// period (SHMPI_YIELD_US) before it sleeps again, so it sleeps at most once
// per such period: the test checks that bound against the time the wait took.
//
// A wait never sleeps while its rank's ring to itself holds cells: nobody
// else reads them, nor rings for them.
//
// Transport::missed, what a test or nonblocking probe that found nothing
// calls: while ranks outnumber CPUs it gives the CPU away, but at most once
// per kPollYieldPeriod, and never otherwise.
//
// Transport::yield_budget, how long a wait yields before it sleeps: the
// yield period while at most 16 ranks per CPU are awake, then one period
// more for each 8 more ranks per CPU, up to 16 periods.
#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "../attach_rank.hpp"
#include "shm/segment.hpp"
#include "shm/transport.hpp"

namespace {

namespace shm = shmpi::shm;
using Clock = std::chrono::steady_clock;

constexpr std::uint32_t kCells = 4000;
constexpr auto kPace = std::chrono::microseconds(50);  // between two of rank 1's cells
constexpr int kYieldUs = 1000;

/// Starts `body` as `rank` of the 2-rank `seg` in a child process, with its
/// own Transport and a yield period of kYieldUs.
shmpi_test::Child spawn_rank(shm::Segment& seg, int rank, const std::function<std::string(shm::Transport&)>& body) {
    return shmpi_test::spawn([&] {
        setenv("SHMPI_YIELD_US", std::to_string(kYieldUs).c_str(), 1);
        auto transport = shmpi_test::attach_rank(seg, rank, 2);
        return body(*transport);
    });
}

/// What a rank reported, or "died".
std::string report(const shmpi_test::Child& c) { return shmpi_test::collect(c).value_or("died"); }

/// A 2-rank segment, already unlinked; empty, with `why` set, when this
/// machine has no usable shared memory.
std::optional<shm::Segment> two_rank_segment(std::string& why) {
    std::optional<shm::Segment> seg;
    try {
        seg.emplace(shm::Segment::create(shm::Geometry::for_ranks(2), getpid()));
    } catch (const std::exception& e) {
        why = e.what();
        return std::nullopt;
    }
    seg->unlink();
    return seg;
}

/// Takes every cell from `src` there is, each of which holds its number
/// (counting from 0): counts them in `got`, clears `in_order` at one out of
/// order.
void take_cells(shm::Transport& t, std::uint32_t src, std::uint32_t& got, bool& in_order) {
    while (const std::byte* cell = t.peek(src)) {
        std::uint32_t value = 0;
        std::memcpy(&value, cell, sizeof value);
        in_order = in_order && value == got;
        t.release(src);
        t.after_release(src);
        ++got;
    }
}

TEST(Wait, SleepsAtMostOncePerYieldPeriodWhileAPeerKeepsRinging) {
    std::string why;
    std::optional<shm::Segment> seg = two_rank_segment(why);
    if (!seg) GTEST_SKIP() << "no usable shared memory: " << why;

    // Rank 0: one wait for every cell.  Reports "<cells> <in order> <sleeps>
    // <microseconds in the wait>".
    const shmpi_test::Child receiver = spawn_rank(*seg, 0, [](shm::Transport& t) {
        std::uint32_t got = 0;
        bool in_order = true;
        const auto start = Clock::now();
        t.wait([&] {
            take_cells(t, 1, got, in_order);
            return got == kCells;
        });
        const auto us = std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - start).count();
        return std::to_string(got) + " " + (in_order ? "1" : "0") + " " + std::to_string(t.sleeps()) + " " +
               std::to_string(us);
    });
    // Rank 1: waits until rank 0 is asleep (its slot's park line), then
    // sends one cell every kPace, each ringing rank 0's doorbell while it
    // sleeps (Transport::publish).
    shm::RankSlot& slot0 = seg->slot(0);
    const shmpi_test::Child sender = spawn_rank(*seg, 1, [&slot0](shm::Transport& t) {
        const auto give_up = Clock::now() + std::chrono::seconds(30);
        // Relaxed: only whether rank 0 has slept; no data hangs on it.
        while (slot0.parked.load(std::memory_order_relaxed) == 0) {
            if (Clock::now() > give_up) return std::string("rank 0 never slept");
            usleep(1000);
        }
        for (std::uint32_t i = 0; i < kCells; ++i) {
            std::byte* cell;
            while ((cell = t.try_claim(0)) == nullptr) {
                if (Clock::now() > give_up) return "rank 0 stopped taking cells at " + std::to_string(i);
                sched_yield();
            }
            std::memcpy(cell, &i, sizeof i);
            t.publish(0);
            const auto next = Clock::now() + kPace;
            while (Clock::now() < next) {
            }
        }
        return std::string("sent");
    });
    EXPECT_EQ(report(sender), "sent");
    const std::string line = report(receiver);
    unsigned cells = 0, in_order = 0;
    unsigned long long sleeps = 0;
    long long us = 0;
    ASSERT_EQ(std::sscanf(line.c_str(), "%u %u %llu %lld", &cells, &in_order, &sleeps, &us), 4) << line;
    EXPECT_EQ(cells, kCells);
    EXPECT_EQ(in_order, 1u) << "cells arrived out of order";
    // Rank 1 began only once rank 0 slept.
    EXPECT_GE(sleeps, 1u);
    // After a ring, a sleep comes only after a yield period; the nap of a
    // sleep nobody rings is 50 ms.  So the count is bounded by the time the
    // wait took, whatever the machine's load.  Sleeping at every ring gave
    // thousands here (one per cell).
    EXPECT_LE(sleeps, static_cast<unsigned long long>(us / kYieldUs) + 2)
        << "sleeps in a wait of " << us << " us while a peer rang every " << kPace.count() << " us";
}

TEST(Wait, NeverSleepsOnCellsItSentItself) {
    std::string why;
    std::optional<shm::Segment> seg = two_rank_segment(why);
    if (!seg) GTEST_SKIP() << "no usable shared memory: " << why;
    // Rank 0 sends itself kSelf cells from within one wait, as a long
    // message to itself does: each poll drains its ring to itself and fills
    // it again.  Its waits sleep as soon as a poll finds the wait not done
    // (no spin, no yield period); but a poll that leaves cells in that ring
    // has left work that only this rank can do and nobody will ring it
    // for.  Reports "<cells> <sleeps>".
    constexpr std::uint32_t kSelf = 20000;
    const shmpi_test::Child rank = shmpi_test::spawn([&] {
        setenv("SHMPI_SPIN_US", "0", 1);
        setenv("SHMPI_YIELD_US", "0", 1);
        auto transport = shmpi_test::attach_rank(*seg, 0, 2);
        shm::Transport& t = *transport;
        std::uint32_t sent = 0, got = 0;
        bool in_order = true;
        // (A wait that sleeps there takes minutes: it gives up after 5 s.)
        const auto give_up = Clock::now() + std::chrono::seconds(5);
        t.wait([&] {
            take_cells(t, 0, got, in_order);
            for (std::byte* cell; sent < kSelf && (cell = t.try_claim(0)) != nullptr; ++sent) {
                std::memcpy(cell, &sent, sizeof sent);
                t.publish(0);
            }
            return got == kSelf || Clock::now() > give_up;
        });
        return std::to_string(got) + (in_order ? " " : " out of order ") + std::to_string(t.sleeps());
    });
    // Sleeping there took an 800 ms nap per ringful (32 cells) unless the
    // rank's own doorbell happened to move: 100 pre-posted 30 KB messages
    // to itself took 12 s at 3 ranks on 2 CPUs.
    EXPECT_EQ(report(rank), std::to_string(kSelf) + " 0");
}

/// Rank 0 of the 2-rank `seg`, whose header is made to say the job has
/// `cpus` CPUs, calls missed() in a loop, 100,000 times and for at least
/// 20 ms (a count too, so that a rank kept off its CPU by a loaded machine
/// still polls for longer than a period).  Reports "<crowded> <yields>
/// <microseconds the loop took> <misses>".  Rank 1 never starts: it counts
/// as awake from the segment's creation (SegmentHeader::awake).
std::string poll_for_a_while(shm::Segment& seg, std::uint32_t cpus) {
    seg.header().cpus = cpus;
    const shmpi_test::Child poller = spawn_rank(seg, 0, [](shm::Transport& t) {
        const auto start = Clock::now();
        const auto end = start + std::chrono::milliseconds(20);
        long long misses = 0;
        for (; misses < 100000 || Clock::now() < end; ++misses) t.missed();
        const auto us = std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - start).count();
        return std::string(t.crowded() ? "1" : "0") + " " + std::to_string(t.poll_yields()) + " " +
               std::to_string(us) + " " + std::to_string(misses);
    });
    return report(poller);
}

TEST(Wait, APollThatFindsNothingYieldsAtMostOncePerPeriodWhileCrowded) {
    std::string why;
    std::optional<shm::Segment> seg = two_rank_segment(why);
    if (!seg) GTEST_SKIP() << "no usable shared memory: " << why;
    const std::string line = poll_for_a_while(*seg, 1);
    unsigned crowded = 0;
    unsigned long long yields = 0;
    long long us = 0, misses = 0;
    ASSERT_EQ(std::sscanf(line.c_str(), "%u %llu %lld %lld", &crowded, &yields, &us, &misses), 4) << line;
    EXPECT_EQ(crowded, 1u) << "2 awake ranks on 1 CPU";
    // The first miss yields; 100,000 more take far longer than a period.
    EXPECT_GE(yields, 2u);
    // Each yield waits a period after the last one ended, so the count is
    // bounded by the time the loop took, whatever the machine's load.
    const long long period_ns = shm::Transport::kPollYieldPeriod.count();
    EXPECT_LE(yields, static_cast<unsigned long long>(us * 1000 / period_ns) + 1)
        << "yields in " << us << " us of polling";
    // And a period holds several misses (one is tens of nanoseconds), so
    // most misses do not yield.  On a loaded machine each yield can take
    // longer than a period, and only this tells a yield at every miss
    // (which meets the bound above there) from this one.
    EXPECT_LE(yields, static_cast<unsigned long long>(misses / 4)) << "yields in " << misses << " misses";
}

TEST(Wait, APollThatFindsNothingKeepsTheCpuWhenRanksHaveOneEach) {
    std::string why;
    std::optional<shm::Segment> seg = two_rank_segment(why);
    if (!seg) GTEST_SKIP() << "no usable shared memory: " << why;
    const std::string line = poll_for_a_while(*seg, 2);
    EXPECT_EQ(line.substr(0, 4), "0 0 ") << line;
}

/// Rank 0 of the 2-rank `seg`, with `cpus` CPUs in the header: its
/// yield_budget() in microseconds for each count of awake ranks, stored in
/// the header before each look, as one line.
std::string budgets(shm::Segment& seg, std::uint32_t cpus, const std::vector<int>& awake) {
    seg.header().cpus = cpus;
    const shmpi_test::Child rank = spawn_rank(seg, 0, [&](shm::Transport& t) {
        std::string line;
        for (int a : awake) {
            seg.header().awake.store(a, std::memory_order_relaxed);
            const auto us = std::chrono::duration_cast<std::chrono::microseconds>(t.yield_budget()).count();
            line += (line.empty() ? "" : " ") + std::to_string(us);
        }
        return line;
    });
    return report(rank);
}

TEST(Wait, TheYieldBudgetGrowsWithTheAwakeRanksPerCpu) {
    std::string why;
    std::optional<shm::Segment> seg = two_rank_segment(why);
    if (!seg) GTEST_SKIP() << "no usable shared memory: " << why;
    // 2 ranks on 1 CPU: oversubscribed.  Up to 16 awake: the period as
    // set (kYieldUs); 17, 24 and 32: 9/8, 2 and 3 times; 136 and more: 16.
    EXPECT_EQ(budgets(*seg, 1, {2, 16, 17, 24, 32, 136, 100000}), "1000 1000 1125 2000 3000 16000 16000");
}

TEST(Wait, TheYieldBudgetStaysWhenRanksHaveACpuEach) {
    std::string why;
    std::optional<shm::Segment> seg = two_rank_segment(why);
    if (!seg) GTEST_SKIP() << "no usable shared memory: " << why;
    // 2 ranks on 2 CPUs are not oversubscribed, whatever the awake count says.
    EXPECT_EQ(budgets(*seg, 2, {2, 100}), "1000 1000");
}

}  // namespace
