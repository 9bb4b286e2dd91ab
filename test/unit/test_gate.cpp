// shm::Gate, the lock of MPI_THREAD_MULTIPLE (src/shm/gate.hpp):
//  - off (a program that asked for less), a Hold takes no lock;
//  - on, a Hold keeps every other thread's Hold out until it ends; nested
//    Holds of one thread release with the outermost;
//  - an Open inside a call lets other threads in, however deeply this
//    thread holds, and takes the lock back at its end with the same depth;
//    outside a call it does nothing;
//  - the end of a call, and notify(), ring the doorbell only while a
//    thread of the process is counted asleep.
// The gate is process-wide and cannot be turned off again, so the test
// that needs it off runs first (GoogleTest keeps the order of a file) and
// skips when shuffled after the others.
//
// "Another thread stays out" is checked for 50 ms: a gate that failed to
// exclude would let it in well within that on any machine, while a gate
// that works keeps it out however the threads are scheduled.  No check
// waits for another thread to have run by a deadline shorter than 10 s.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <optional>
#include <thread>

#include "shm/gate.hpp"

namespace {

using shmpi::shm::Gate;
using namespace std::chrono_literals;

/// A thread that takes a Hold, says so, and leaves at once.
class Visitor {
public:
    Visitor()
        : thread_([this] {
              const Gate::Hold hold;
              inside_.store(true, std::memory_order_release);
          }) {}
    ~Visitor() {
        if (thread_.joinable()) thread_.join();
    }
    Visitor(const Visitor&) = delete;
    Visitor& operator=(const Visitor&) = delete;

    /// Whether it has been inside, looking for up to `d`.
    bool got_in_within(std::chrono::milliseconds d) const {
        const auto end = std::chrono::steady_clock::now() + d;
        while (!inside_.load(std::memory_order_acquire)) {
            if (std::chrono::steady_clock::now() >= end) return false;
            std::this_thread::sleep_for(1ms);
        }
        return true;
    }
    void join() { thread_.join(); }

private:
    std::atomic<bool> inside_{false};
    std::thread thread_;
};

constexpr auto kStaysOut = 50ms;
constexpr auto kGetsIn = 10s;

TEST(Gate, OffTakesNoLock) {
    if (Gate::on()) GTEST_SKIP() << "the gate is already on (tests shuffled)";
    const Gate::Hold hold;
    Visitor other;
    EXPECT_TRUE(other.got_in_within(kGetsIn));
}

TEST(Gate, OnKeepsOthersOutUntilTheCallEnds) {
    Gate::turn_on();
    ASSERT_TRUE(Gate::on());
    std::optional<Visitor> other;
    {
        const Gate::Hold hold;
        other.emplace();
        EXPECT_FALSE(other->got_in_within(kStaysOut));
    }
    EXPECT_TRUE(other->got_in_within(kGetsIn));
}

TEST(Gate, NestedHoldsReleaseWithTheOutermost) {
    Gate::turn_on();
    std::optional<Visitor> other;
    {
        const Gate::Hold outer;
        { const Gate::Hold inner; }  // a callback's call inside the call
        other.emplace();
        EXPECT_FALSE(other->got_in_within(kStaysOut));
    }
    EXPECT_TRUE(other->got_in_within(kGetsIn));
}

TEST(Gate, OpenLetsOthersInAndTakesTheSameDepthBack) {
    Gate::turn_on();
    std::optional<Visitor> late;
    {
        const Gate::Hold outer;
        {
            const Gate::Hold inner;
            {
                const Gate::Open open;  // a wait's pause, two calls deep
                Visitor during;
                EXPECT_TRUE(during.got_in_within(kGetsIn));
                during.join();
            }
            late.emplace();
            EXPECT_FALSE(late->got_in_within(kStaysOut));
        }
        // The inner call's end must not release what the outer one holds.
        EXPECT_FALSE(late->got_in_within(kStaysOut));
    }
    EXPECT_TRUE(late->got_in_within(kGetsIn));
}

TEST(Gate, OpenOutsideACallDoesNothing) {
    Gate::turn_on();
    {
        const Gate::Open open;
        Visitor during;
        EXPECT_TRUE(during.got_in_within(kGetsIn));
    }
    Visitor after;  // the Open's end took no lock
    EXPECT_TRUE(after.got_in_within(kGetsIn));
}

TEST(Gate, RingsOnlyWhileAThreadSleeps) {
    Gate::turn_on();
    std::atomic<std::uint32_t> bell{0};
    Gate::set_doorbell(&bell);
    auto rings = [&bell] { return bell.load(std::memory_order_acquire); };

    Gate::notify();
    { const Gate::Hold hold; }
    EXPECT_EQ(rings(), 0U) << "rang with nobody asleep";

    {
        const Gate::Hold hold;  // the sleeper counts itself under the lock
        EXPECT_TRUE(Gate::will_sleep());
        EXPECT_FALSE(Gate::will_sleep());  // a second thread of the process
    }
    EXPECT_EQ(rings(), 1U) << "the end of a call did not ring for the sleepers";
    Gate::notify();
    EXPECT_EQ(rings(), 2U) << "a wait's start did not ring for the sleepers";

    {
        const Gate::Hold hold;
        EXPECT_FALSE(Gate::woke());
        EXPECT_TRUE(Gate::woke());  // the last one
    }
    Gate::notify();
    EXPECT_EQ(rings(), 2U) << "rang after every sleeper woke";
    Gate::set_doorbell(nullptr);
}

}  // namespace
