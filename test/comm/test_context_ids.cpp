// Context ids (src/context_ids.hpp): which ids a process holds, the lowest
// free run, the agreement among several processes (threads here, each with
// its own ContextIds), and that a Communicator holds its id exactly while
// it exists.  The multi-rank side runs in comm_context_reuse.c.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <barrier>
#include <cstdint>
#include <memory>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "communicator.hpp"
#include "context_ids.hpp"
#include "errors.hpp"
#include "p2p.hpp"
#include "shm/transport.hpp"

using shmpi::ContextIds;

namespace {

constexpr std::uint32_t F = ContextIds::kFirst;

void hold_all(ContextIds& ids, std::initializer_list<std::uint32_t> cs) {
    for (const std::uint32_t c : cs) ids.hold(c);
}

}  // namespace

TEST(ContextIds, NextFreeSkipsHeldIds) {
    ContextIds ids;
    EXPECT_EQ(ids.next_free(0, 1), F) << "nothing held: the first agreed id";
    hold_all(ids, {F, F + 1, F + 2, F + 4});
    EXPECT_EQ(ids.next_free(F, 1), F + 3);
    EXPECT_EQ(ids.next_free(F, 2), F + 5) << "F + 3 alone is too short a run";
    EXPECT_EQ(ids.next_free(F + 4, 1), F + 5);
    EXPECT_EQ(ids.next_free(F + 100, 2), F + 100);
    EXPECT_EQ(ids.held_count(), 4u);
    ids.drop(F + 1);
    EXPECT_FALSE(ids.held(F + 1));
    EXPECT_EQ(ids.next_free(F, 1), F + 1) << "a dropped id is free again";
    EXPECT_EQ(ids.held_count(), 3u);
}

TEST(ContextIds, NextFreeCrossesFullWords) {
    ContextIds ids;
    // 200 held ids from F: three full 64-bit words and part of a fourth.
    for (std::uint32_t c = F; c < F + 200; ++c) ids.hold(c);
    EXPECT_EQ(ids.next_free(F, 1), F + 200);
    EXPECT_EQ(ids.next_free(F + 63, 2), F + 200);
    ids.hold(F + 201);
    EXPECT_EQ(ids.next_free(F, 1), F + 200);
    EXPECT_EQ(ids.next_free(F, 2), F + 202);
    ids.drop(F + 128);
    EXPECT_EQ(ids.next_free(F, 1), F + 128);
    EXPECT_EQ(ids.next_free(F, 2), F + 202);
}

TEST(ContextIds, NextFreeAgreesWithABitByBitSearch) {
    // next_free() works a word at a time; the reference looks at each id.
    std::mt19937_64 rng(20261203);
    for (int round = 0; round < 300; ++round) {
        ContextIds ids;
        const std::uint32_t span = 1 + static_cast<std::uint32_t>(rng() % 700);
        const int density = static_cast<int>(rng() % 5);  // sparse, interleaved, dense, ...
        for (std::uint32_t c = F; c < F + span; ++c) {
            const bool take = density == 0   ? rng() % 16 == 0
                              : density == 1 ? (c - F) % 4 == static_cast<std::uint32_t>(round % 4)
                              : density == 2 ? rng() % 8 != 0
                              : density == 3 ? (c - F) / 64 % 2 == 0 || rng() % 2 == 0
                                             : rng() % 2 == 0;
            if (take) ids.hold(c);
        }
        for (int q = 0; q < 40; ++q) {
            const std::uint32_t from = static_cast<std::uint32_t>(rng() % (span + 80));
            const std::uint32_t count = 1 + static_cast<std::uint32_t>(rng() % 140);
            std::uint32_t want = std::max(from, F);
            for (std::uint32_t k = 0; k < count; ++k) {
                if (ids.held(want + k)) {
                    want = want + k + 1;
                    k = static_cast<std::uint32_t>(-1);  // the run starts again after it
                }
            }
            ASSERT_EQ(ids.next_free(from, count), want)
                << "round " << round << " density " << density << " from " << from << " count " << count;
        }
    }
    // Near the end of the agreed ids: no run that would cross kEnd.
    ContextIds ids;
    ids.hold(ContextIds::kEnd - 3);
    EXPECT_EQ(ids.next_free(ContextIds::kEnd - 10, 2), ContextIds::kEnd - 10);
    EXPECT_EQ(ids.next_free(ContextIds::kEnd - 4, 2), ContextIds::kEnd - 2);
    EXPECT_EQ(ids.next_free(ContextIds::kEnd - 4, 3), ContextIds::kEnd);
    EXPECT_EQ(ids.next_free(ContextIds::kEnd - 2, 1), ContextIds::kEnd - 2);
}

TEST(ContextIds, HoldTwiceIsAnInternalErrorAndOutsideIdsAreIgnored) {
    ContextIds ids;
    ids.hold(F + 7);
    try {
        ids.hold(F + 7);
        FAIL() << "holding an id twice must throw";
    } catch (const shmpi::MpiError& e) {
        EXPECT_EQ(e.error_class(), MPI_ERR_INTERN);
        EXPECT_NE(std::string(e.what()).find(std::to_string(F + 7)), std::string::npos) << e.what();
    }
    // Predefined and MPI_Comm_idup ids are not tracked: no error, no count.
    ids.hold(0);
    ids.hold(0);
    ids.hold(ContextIds::kEnd);
    ids.hold(ContextIds::kEnd);
    EXPECT_EQ(ids.held_count(), 1u);
    ids.drop(F + 8);  // never held: nothing happens
    ids.drop(F + 7);
    EXPECT_EQ(ids.held_count(), 0u);
}

namespace {

/// Runs ContextIds::agree() in one thread per element of `procs`, the
/// exchange being a maximum over all threads; returns each one's result.
/// No communicator is built on the agreed ids here: each process gives
/// them back, as MPI_Comm_create's non-members do.
std::vector<std::uint32_t> agree_among(std::vector<ContextIds>& procs, std::uint32_t count, int* rounds) {
    const std::size_t n = procs.size();
    std::vector<std::uint32_t> slots(2 * n, 0);
    std::vector<std::uint32_t> result(n, 0);
    std::barrier sync(static_cast<std::ptrdiff_t>(n));
    std::vector<int> seen(n, 0);
    std::vector<std::thread> threads;
    for (std::size_t i = 0; i < n; ++i) {
        threads.emplace_back([&, i] {
            result[i] = procs[i].agree(count, "test", [&](std::uint32_t* words) {
                ++seen[i];
                slots[2 * i] = words[0];
                slots[2 * i + 1] = words[1];
                sync.arrive_and_wait();  // everyone's proposal is in
                for (std::size_t j = 0; j < n; ++j) {
                    words[0] = std::max(words[0], slots[2 * j]);
                    words[1] = std::max(words[1], slots[2 * j + 1]);
                }
                sync.arrive_and_wait();  // everyone has read them
            }).first();
        });
    }
    for (std::thread& t : threads) t.join();
    *rounds = seen[0];
    for (std::size_t i = 1; i < n; ++i) EXPECT_EQ(seen[i], seen[0]) << "participant " << i;
    return result;
}

}  // namespace

TEST(ContextIds, AgreementFindsTheLowestIdFreeEverywhere) {
    std::vector<ContextIds> procs(4);
    int rounds = 0;
    // The same ids held everywhere: one round.
    for (ContextIds& p : procs) hold_all(p, {F, F + 1});
    auto got = agree_among(procs, 1, &rounds);
    for (const std::uint32_t c : got) EXPECT_EQ(c, F + 2);
    EXPECT_EQ(rounds, 1);

    // Different ids held: F + 2 taken at 0, F + 3 at 1, F + 4 and F + 6 at
    // 2, F + 5 at 3.  The lowest id free at all four is F + 7.
    hold_all(procs[0], {F + 2});
    hold_all(procs[1], {F + 3});
    hold_all(procs[2], {F + 4, F + 6});
    hold_all(procs[3], {F + 5});
    got = agree_among(procs, 1, &rounds);
    for (const std::uint32_t c : got) EXPECT_EQ(c, F + 7);
    EXPECT_GT(rounds, 1);
    for (const ContextIds& p : procs) EXPECT_FALSE(p.held(F + 7)) << "agree() holds nothing";

    // Two consecutive ids: F + 7 and F + 8 are free everywhere.
    got = agree_among(procs, 2, &rounds);
    for (const std::uint32_t c : got) EXPECT_EQ(c, F + 7);
    hold_all(procs[1], {F + 8});
    got = agree_among(procs, 2, &rounds);
    for (const std::uint32_t c : got) EXPECT_EQ(c, F + 9);
}

// MPI_THREAD_MULTIPLE: another thread of the process agrees on an id while
// this one's agreement waits in its exchange (the lock is open there).  It
// must not propose or agree on the id this one has proposed, and the id
// this one agreed on stays taken until a communicator holds it.
TEST(ContextIds, ConcurrentAgreementsOfOneProcessTakeDifferentIds) {
    ContextIds ids;
    hold_all(ids, {F});
    std::optional<ContextIds::Agreed> inner;
    const ContextIds::Agreed outer = ids.agree(1, "outer", [&](std::uint32_t*) {
        // What the other thread does while this exchange waits; its own
        // exchange is with processes that take what it proposes.
        inner.emplace(ids.agree(1, "inner", [](std::uint32_t*) {}));
    });
    ASSERT_TRUE(inner.has_value());
    EXPECT_EQ(outer.first(), F + 1);
    EXPECT_NE(inner->first(), outer.first()) << "two agreements of one process took the same id";
    // Both agreed and pending: a third agreement takes neither.
    std::optional<ContextIds::Agreed> late(ids.agree(1, "late", [](std::uint32_t*) {}));
    EXPECT_NE(late->first(), outer.first());
    EXPECT_NE(late->first(), inner->first());
    // Held, or given back by its Agreed, an id stops being pending: a held
    // one stays taken, one given back is free for the next agreement.
    ids.hold(outer.first());
    const std::uint32_t lowest = std::min(inner->first(), late->first());
    inner.reset();
    late.reset();
    EXPECT_EQ(ids.agree(1, "next", [](std::uint32_t*) {}).first(), lowest);
}

// The Agreed that agree() returns gives its ids back when it goes, unless
// a communicator holds them by then; moved, only the new one does.
TEST(ContextIds, AnAgreedRunGoesBackUnlessHeld) {
    ContextIds ids;
    const auto agree = [&](std::uint32_t count) { return ids.agree(count, "test", [](std::uint32_t*) {}); };
    {
        const ContextIds::Agreed two = agree(2);
        EXPECT_EQ(two.first(), F);
        EXPECT_EQ(agree(1).first(), F + 2) << "both ids of the run are pending";
    }
    EXPECT_EQ(agree(2).first(), F) << "the run of two went back whole";
    {
        ContextIds::Agreed a = agree(1);
        const ContextIds::Agreed b(std::move(a));  // a keeps nothing now
        EXPECT_EQ(b.first(), F);
        ids.hold(F);
        // Held and then dropped (a communicator built and freed at once, an
        // error after the constructor) while the Agreed lives: still pending.
        ids.drop(F);
        EXPECT_EQ(agree(1).first(), F + 1);
        ids.hold(F);
    }
    EXPECT_TRUE(ids.held(F)) << "a held id stays held after its Agreed goes";
    EXPECT_EQ(agree(1).first(), F + 1);
    ids.drop(F);
    EXPECT_EQ(agree(1).first(), F) << "nothing pending is left behind";
}

// An agreement that fails (an exception in its exchange) leaves nothing
// pending: the ids it proposed are free for the next one.
TEST(ContextIds, AFailedAgreementLeavesNothingPending) {
    ContextIds ids;
    EXPECT_THROW(ids.agree(1, "failing", [](std::uint32_t*) { throw std::runtime_error("exchange failed"); }),
                 std::runtime_error);
    EXPECT_EQ(ids.agree(1, "after", [](std::uint32_t*) {}).first(), F);
}

TEST(ContextIds, AgreementFailsEverywhereWhenNothingIsFree) {
    ContextIds ids;
    try {
        // An exchange that reports another participant with nothing free.
        (void)ids.agree(2, "MPI_Comm_dup", [](std::uint32_t* words) { words[0] = ContextIds::kEnd; });
        FAIL() << "agree() must throw when no id is free everywhere";
    } catch (const shmpi::MpiError& e) {
        // A resource limit, not an internal error (MPICH: MPI_ERR_OTHER).
        EXPECT_EQ(e.error_class(), MPI_ERR_OTHER);
        const std::string text = e.what();
        EXPECT_NE(text.find("MPI_Comm_dup"), std::string::npos) << text;
        EXPECT_NE(text.find("out of context ids"), std::string::npos) << text;
    }
}

TEST(ContextIds, ACommunicatorHoldsItsIdsWhileItExists) {
    auto transport = shmpi::shm::Transport::from_environment();
    shmpi::p2p::Engine engine(*transport);
    ContextIds& ids = engine.context_ids();
    {
        shmpi::Communicator c(engine, F + 3, {0}, 0, "");
        EXPECT_TRUE(ids.held(F + 3));
        EXPECT_THROW(shmpi::Communicator(engine, F + 3, {0}, 0, ""), shmpi::MpiError);
        EXPECT_TRUE(ids.held(F + 3)) << "the failed second one must not drop the first one's id";
        EXPECT_EQ(ids.next_free(F, 1), F);
    }
    EXPECT_FALSE(ids.held(F + 3)) << "deleted: the id is free again";
    {
        auto inter = shmpi::Communicator::make_inter(engine, F + 10, {0}, 0, {1});
        EXPECT_TRUE(ids.held(F + 10));
        EXPECT_TRUE(ids.held(F + 11)) << "the local group's id";
        EXPECT_EQ(ids.next_free(F + 10, 1), F + 12);
    }
    EXPECT_EQ(ids.held_count(), 0u);
    {
        // MPI_Comm_idup's duplicate: built on a placeholder, given its id later.
        shmpi::Communicator c(engine, shmpi::shm::kContextEnd - 1, {0}, 0, "");
        c.assign_context(F + 20);
        EXPECT_TRUE(ids.held(F + 20));
        c.assign_context(shmpi::shm::kSharedContextBase);
        EXPECT_FALSE(ids.held(F + 20));
    }
    EXPECT_EQ(ids.held_count(), 0u);
}

TEST(ContextIds, IdupIdsAreCountedAndComeBackAfterTheLastMember) {
    // A stand-in for SegmentHeader::shared_context_users.
    std::vector<std::atomic<std::uint32_t>> table(shmpi::shm::kSharedContextSlots);
    ContextIds rank0;
    ContextIds rank1;
    EXPECT_EQ(rank0.claim_shared(1, 2), 0u) << "no segment: nothing to claim";
    rank0.share(table.data());
    rank1.share(table.data());
    const std::uint32_t base = shmpi::shm::kSharedContextBase;

    const std::uint32_t a = rank0.claim_shared(1, 2);
    EXPECT_EQ(a, base);
    EXPECT_EQ(table[0].load(), 2u) << "counted for both members";
    const std::uint32_t b = rank0.claim_shared(2, 4);
    EXPECT_EQ(b, base + 1) << "an intercommunicator's two ids, after the held one";
    EXPECT_EQ(rank0.claim_shared(1, 2), base + 3);

    rank0.drop(a);
    EXPECT_EQ(table[0].load(), 1u);
    EXPECT_EQ(rank0.claim_shared(1, 2), base + 4) << "one member still holds the first id";
    rank1.drop(a);
    EXPECT_EQ(table[0].load(), 0u);
    EXPECT_EQ(rank0.claim_shared(1, 2), a) << "free again after its last member";
    EXPECT_EQ(rank0.claim_shared(2, 2), base + 5) << "no run of two below";

    // Every counted id held: the caller falls back to ids never reused.
    for (auto& slot : table) slot.store(1);
    table[100].store(0);
    EXPECT_EQ(rank0.claim_shared(2, 2), 0u) << "a lone free id is no run of two";
    EXPECT_EQ(table[100].load(), 0u) << "a failed claim gives back what it took";
    EXPECT_EQ(rank0.claim_shared(1, 2), base + 100);
    EXPECT_EQ(rank0.claim_shared(1, 2), 0u);
    EXPECT_EQ(rank0.held_count(), 0u) << "counted ids are not in the bitmap";
}
