// Tests for shm::Ring: single-thread semantics first, then a two-thread and a
// two-process stress in which every cell carries a sequence number, a length
// and that many payload bytes derived from the sequence number, so that a lost,
// duplicated, reordered or torn cell shows up as a wrong sequence or checksum.
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

#include "../sanitizers.hpp"
#include "shm/ring.hpp"

namespace {

using shmpi::shm::kLine;
using shmpi::shm::Ring;
using shmpi::shm::ring_bytes;

/// Zero-filled, line-aligned memory for one ring, as the segment provides it.
class RingMemory {
public:
    RingMemory(std::uint32_t cells, std::uint32_t cell_bytes)
        : bytes_(ring_bytes(cells, cell_bytes)),
          mem_(static_cast<std::byte*>(std::aligned_alloc(kLine, round_up(bytes_)))) {
        std::memset(mem_.get(), 0, bytes_);
    }
    void* get() const { return mem_.get(); }

private:
    struct Free {
        void operator()(std::byte* p) const { std::free(p); }
    };
    static std::size_t round_up(std::size_t n) { return (n + kLine - 1) / kLine * kLine; }
    std::size_t bytes_;
    std::unique_ptr<std::byte, Free> mem_;
};

/// A shared anonymous mapping: survives fork() in both processes.
class SharedMapping {
public:
    explicit SharedMapping(std::size_t bytes) : bytes_(bytes) {
        void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        base_ = p == MAP_FAILED ? nullptr : p;
    }
    ~SharedMapping() {
        if (base_ != nullptr) munmap(base_, bytes_);
    }
    SharedMapping(const SharedMapping&) = delete;
    SharedMapping& operator=(const SharedMapping&) = delete;
    void* get() const { return base_; }

private:
    std::size_t bytes_;
    void* base_ = nullptr;
};

// ---- the cell format used by the stress tests ----
//
//   bytes 0..7    sequence number
//   bytes 8..11   payload length n (0 .. cell_bytes - 12)
//   bytes 12..    n payload bytes, byte i = payload_byte(seq, i)

constexpr std::size_t kCellHeader = 12;

std::uint8_t payload_byte(std::uint64_t seq, std::uint32_t i) {
    return static_cast<std::uint8_t>((seq * 0x9e3779b97f4a7c15ull >> 56) + i * 131u);
}

/// A small, fast, deterministic generator (xorshift64*) so that producer
/// and consumer can agree on nothing but the seed.
struct Xorshift {
    std::uint64_t s;
    std::uint64_t next() {
        s ^= s >> 12;
        s ^= s << 25;
        s ^= s >> 27;
        return s * 0x2545f4914f6cdd1dull;
    }
};

/// Writes cell `seq` with a random length; returns the checksum of its payload.
std::uint64_t fill_cell(std::byte* cell, std::uint32_t cell_bytes, std::uint64_t seq,
                        Xorshift& rng) {
    const auto max_len = static_cast<std::uint32_t>(cell_bytes - kCellHeader);
    const auto len = static_cast<std::uint32_t>(rng.next() % (max_len + 1));
    std::memcpy(cell, &seq, sizeof seq);
    std::memcpy(cell + 8, &len, sizeof len);
    std::uint64_t sum = 0;
    for (std::uint32_t i = 0; i < len; ++i) {
        const std::uint8_t b = payload_byte(seq, i);
        cell[kCellHeader + i] = static_cast<std::byte>(b);
        sum += b;
    }
    return sum;
}

/// What a consumer found: how many cells, how many were malformed, and the
/// checksum of all payload bytes.
struct Tally {
    std::uint64_t cells = 0;
    std::uint64_t bad_seq = 0;
    std::uint64_t bad_bytes = 0;
    std::uint64_t sum = 0;
};

void check_cell(const std::byte* cell, std::uint32_t cell_bytes, Tally& t) {
    std::uint64_t seq = 0;
    std::uint32_t len = 0;
    std::memcpy(&seq, cell, sizeof seq);
    std::memcpy(&len, cell + 8, sizeof len);
    if (seq != t.cells || len > cell_bytes - kCellHeader) {
        ++t.bad_seq;
        ++t.cells;
        return;
    }
    for (std::uint32_t i = 0; i < len; ++i) {
        const auto b = static_cast<std::uint8_t>(cell[kCellHeader + i]);
        if (b != payload_byte(seq, i)) ++t.bad_bytes;
        t.sum += b;
    }
    ++t.cells;
}

/// Produces `n` cells into `ring`, yielding while it is full.  Returns the
/// checksum of every payload byte written.
std::uint64_t produce(Ring ring, std::uint64_t n, std::uint64_t seed) {
    Xorshift rng{seed};
    std::uint64_t sum = 0;
    for (std::uint64_t seq = 0; seq < n; ++seq) {
        std::byte* cell;
        while ((cell = ring.try_claim()) == nullptr) std::this_thread::yield();
        sum += fill_cell(cell, ring.cell_bytes(), seq, rng);
        ring.publish();
    }
    return sum;
}

/// Consumes `n` cells from `ring`, yielding while it is empty.
Tally consume(Ring ring, std::uint64_t n) {
    Tally t;
    while (t.cells < n) {
        const std::byte* cell = ring.try_peek();
        if (cell == nullptr) {
            std::this_thread::yield();
            continue;
        }
        check_cell(cell, ring.cell_bytes(), t);
        ring.release();
    }
    return t;
}

/// Stress sizes: large in an optimised build, smaller under sanitizers and
/// in debug builds, where each cell costs many times more.
std::uint64_t stress_cells() {
    if (shmpi_test::kThreadSanitizer || shmpi_test::kAddressSanitizer) return 200'000;
#ifdef NDEBUG
    return 4'000'000;
#else
    return 2'000'000;
#endif
}

// ---- single-thread semantics ----

TEST(Ring, ReportsGeometry) {
    RingMemory mem(16, 256);
    Ring ring(mem.get(), 16, 256);
    EXPECT_EQ(ring.capacity(), 16u);
    EXPECT_EQ(ring.cell_bytes(), 256u - shmpi::shm::kCellSeqBytes) << "payload: the cell less its sequence word";
    EXPECT_EQ(ring.free_cells(), 16u);
    EXPECT_EQ(ring_bytes(16, 256), sizeof(shmpi::shm::RingControl) + 16u * 256u);
}

TEST(Ring, ZeroFilledRingIsEmpty) {
    RingMemory mem(8, 256);
    Ring ring(mem.get(), 8, 256);
    EXPECT_EQ(ring.try_peek(), nullptr);
    EXPECT_FALSE(ring.has_data());
    EXPECT_EQ(ring.free_cells(), 8u);
}

TEST(Ring, FillsToCapacityThenRefuses) {
    RingMemory mem(8, 256);
    Ring ring(mem.get(), 8, 256);
    std::vector<std::byte*> claimed;
    for (std::uint32_t i = 0; i < ring.capacity(); ++i) {
        std::byte* c = ring.try_claim();
        ASSERT_NE(c, nullptr) << "cell " << i;
        claimed.push_back(c);
        ring.publish();
        EXPECT_EQ(ring.free_cells(), ring.capacity() - i - 1);
    }
    EXPECT_EQ(ring.try_claim(), nullptr);
    EXPECT_EQ(ring.try_claim(), nullptr) << "a refused claim must not change the ring";
    EXPECT_EQ(ring.free_cells(), 0u);

    // The cells are distinct, in order, cell_bytes apart.
    for (std::size_t i = 1; i < claimed.size(); ++i) {
        EXPECT_EQ(claimed[i] - claimed[i - 1], 256);
    }

    // One release frees exactly one cell, and it is the first one again.
    ASSERT_NE(ring.try_peek(), nullptr);
    ring.release();
    EXPECT_EQ(ring.free_cells(), 1u);
    EXPECT_EQ(ring.try_claim(), claimed[0]);
}

TEST(Ring, ProducerStalledFollowsRefusedClaims) {
    RingMemory mem(4, 256);
    Ring producer(mem.get(), 4, 256);
    Ring consumer(mem.get(), 4, 256);
    EXPECT_FALSE(consumer.producer_stalled()) << "a zero-filled ring has no stalled producer";
    for (int i = 0; i < 4; ++i) {
        ASSERT_NE(producer.try_claim(), nullptr);
        producer.publish();
        EXPECT_FALSE(consumer.producer_stalled()) << "claims that succeed do not stall";
    }
    EXPECT_EQ(producer.try_claim(), nullptr);
    EXPECT_TRUE(consumer.producer_stalled());
    // Consuming alone does not clear it: only the producer writes the flag.
    ASSERT_NE(consumer.try_peek(), nullptr);
    consumer.release();
    EXPECT_TRUE(consumer.producer_stalled());
    // The next claim that succeeds clears it.
    ASSERT_NE(producer.try_claim(), nullptr);
    EXPECT_FALSE(consumer.producer_stalled());
    producer.publish();
    EXPECT_EQ(producer.try_claim(), nullptr);
    EXPECT_TRUE(consumer.producer_stalled());
}

TEST(Ring, ClaimWithoutPublishIsInvisible) {
    RingMemory mem(4, 256);
    Ring ring(mem.get(), 4, 256);
    std::byte* c = ring.try_claim();
    ASSERT_NE(c, nullptr);
    c[0] = std::byte{42};
    EXPECT_EQ(ring.try_peek(), nullptr);
    // Claiming again without publishing returns the same cell.
    EXPECT_EQ(ring.try_claim(), c);
    ring.publish();
    const std::byte* p = ring.try_peek();
    ASSERT_EQ(p, c);
    EXPECT_EQ(p[0], std::byte{42});
    // Peeking again without releasing returns the same cell.
    EXPECT_EQ(ring.try_peek(), p);
    ring.release();
    EXPECT_EQ(ring.try_peek(), nullptr);
}

TEST(Ring, KeepsFifoOrder) {
    RingMemory mem(8, 256);
    Ring ring(mem.get(), 8, 256);
    for (std::uint32_t i = 0; i < 5; ++i) {
        std::byte* c = ring.try_claim();
        ASSERT_NE(c, nullptr);
        std::memcpy(c, &i, sizeof i);
        ring.publish();
    }
    for (std::uint32_t i = 0; i < 5; ++i) {
        const std::byte* c = ring.try_peek();
        ASSERT_NE(c, nullptr);
        std::uint32_t v = 0;
        std::memcpy(&v, c, sizeof v);
        EXPECT_EQ(v, i);
        ring.release();
    }
    EXPECT_EQ(ring.try_peek(), nullptr);
}

TEST(Ring, WrapsAroundManyTimes) {
    constexpr std::uint32_t kCells = 4;
    RingMemory mem(kCells, 256);
    Ring ring(mem.get(), kCells, 256);
    std::uint64_t written = 0;
    std::uint64_t read = 0;
    // Batches of varying size (1..kCells) keep head and tail at every
    // distance from each other and from the wrap point.
    for (int round = 0; round < 10'000; ++round) {
        const std::uint32_t batch = 1 + static_cast<std::uint32_t>(round % kCells);
        for (std::uint32_t i = 0; i < batch; ++i) {
            std::byte* c = ring.try_claim();
            ASSERT_NE(c, nullptr) << "round " << round;
            std::memcpy(c, &written, sizeof written);
            ++written;
            ring.publish();
        }
        EXPECT_EQ(ring.free_cells(), kCells - batch);
        for (std::uint32_t i = 0; i < batch; ++i) {
            const std::byte* c = ring.try_peek();
            ASSERT_NE(c, nullptr) << "round " << round;
            std::uint64_t v = 0;
            std::memcpy(&v, c, sizeof v);
            ASSERT_EQ(v, read) << "round " << round;
            ++read;
            ring.release();
        }
        ASSERT_EQ(ring.try_peek(), nullptr);
    }
    EXPECT_EQ(read, written);
    EXPECT_GT(written / kCells, 1000u) << "the ring should have wrapped many times";
}

TEST(Ring, FreeCellsTracksHalfFullRing) {
    RingMemory mem(32, 256);
    Ring ring(mem.get(), 32, 256);
    for (int i = 0; i < 20; ++i) {
        ASSERT_NE(ring.try_claim(), nullptr);
        ring.publish();
    }
    EXPECT_EQ(ring.free_cells(), 12u);
    for (int i = 0; i < 7; ++i) {
        ASSERT_NE(ring.try_peek(), nullptr);
        ring.release();
    }
    EXPECT_EQ(ring.free_cells(), 19u);
}

TEST(Ring, TwoViewsOfOneRingAgree) {
    // Producer and consumer hold separate Ring objects over the same memory,
    // as two processes do.
    RingMemory mem(8, 256);
    Ring producer(mem.get(), 8, 256);
    Ring consumer(mem.get(), 8, 256);
    std::byte* c = producer.try_claim();
    ASSERT_NE(c, nullptr);
    c[5] = std::byte{7};
    producer.publish();
    const std::byte* p = consumer.try_peek();
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(p[5], std::byte{7});
    consumer.release();
    EXPECT_EQ(producer.free_cells(), 8u);
}

// ---- the cell format's own check, so that the stress tests cannot pass vacuously ----

TEST(Ring, CellCheckerCatchesCorruption) {
    std::vector<std::byte> cell(256);
    Xorshift rng{1};
    // Find a seed step that gives a non-empty payload.
    std::uint64_t sum = 0;
    while ((sum = fill_cell(cell.data(), 256, 0, rng)) == 0) {
    }
    Tally good;
    check_cell(cell.data(), 256, good);
    EXPECT_EQ(good.bad_seq + good.bad_bytes, 0u);
    EXPECT_EQ(good.sum, sum);

    cell[kCellHeader] ^= std::byte{1};
    Tally torn;
    check_cell(cell.data(), 256, torn);
    EXPECT_EQ(torn.bad_bytes, 1u);

    Tally skipped;
    skipped.cells = 1;  // expects seq 1, finds seq 0
    check_cell(cell.data(), 256, skipped);
    EXPECT_EQ(skipped.bad_seq, 1u);
}

// ---- stress ----

TEST(RingStress, TwoThreads) {
    constexpr std::uint32_t kCells = 32;
    constexpr std::uint32_t kCellBytes = 256;
    RingMemory mem(kCells, kCellBytes);
    Ring ring(mem.get(), kCells, kCellBytes);
    const std::uint64_t n = stress_cells();

    const auto start = std::chrono::steady_clock::now();
    std::uint64_t produced_sum = 0;
    std::thread producer([&] { produced_sum = produce(ring, n, 0x5eed); });
    const Tally t = consume(ring, n);
    producer.join();
    const std::chrono::duration<double> s = std::chrono::steady_clock::now() - start;

    EXPECT_EQ(t.cells, n);
    EXPECT_EQ(t.bad_seq, 0u);
    EXPECT_EQ(t.bad_bytes, 0u);
    EXPECT_EQ(t.sum, produced_sum);
    EXPECT_EQ(ring.try_peek(), nullptr);
    EXPECT_EQ(ring.free_cells(), kCells);
    std::printf("two threads: %llu cells in %.2f s\n", static_cast<unsigned long long>(n),
                s.count());
}

TEST(RingStress, TwoProcesses) {
    constexpr std::uint32_t kCells = 32;
    constexpr std::uint32_t kCellBytes = 512;
    // The ring, then one line for the child's checksum, which the parent
    // reads after waitpid (so no atomics are needed for it).
    const std::size_t ring_size = (ring_bytes(kCells, kCellBytes) + kLine - 1) / kLine * kLine;
    SharedMapping shared(ring_size + kLine);
    if (shared.get() == nullptr) GTEST_SKIP() << "mmap(MAP_SHARED | MAP_ANONYMOUS) failed";
    auto* child_sum = reinterpret_cast<std::uint64_t*>(static_cast<std::byte*>(shared.get()) +
                                                       ring_size);
    Ring ring(shared.get(), kCells, kCellBytes);
    const std::uint64_t n = stress_cells();

    const pid_t pid = fork();
    ASSERT_GE(pid, 0) << "fork failed: " << std::strerror(errno);
    if (pid == 0) {
        // Child: produce, leave the checksum, exit without running any of
        // the parent's destructors or gtest's exit handlers.
        *child_sum = produce(ring, n, 0xc0ffee);
        _exit(0);
    }

    const Tally t = consume(ring, n);
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status)) << "child status " << status;
    EXPECT_EQ(WEXITSTATUS(status), 0);

    EXPECT_EQ(t.cells, n);
    EXPECT_EQ(t.bad_seq, 0u);
    EXPECT_EQ(t.bad_bytes, 0u);
    EXPECT_EQ(t.sum, *child_sum);
    EXPECT_EQ(ring.try_peek(), nullptr);
}

}  // namespace
