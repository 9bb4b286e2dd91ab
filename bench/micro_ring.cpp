// Google Benchmark microbenchmarks of shm::Ring, the transport's building block.
//
//   BM_RoundTripOneThread/<bytes>   claim + fill + publish + peek + read + release
//                                   in one thread: the ring's own overhead
//   BM_Stream/<bytes>               producer thread -> consumer thread, cells per
//                                   second through one ring (the two threads
//                                   each take one CPU when two are allowed)
//   BM_PingPong/<bytes>             two rings, thread 0 sends, thread 1 echoes:
//                                   a cross-core round trip
//
// Every cell carries the iteration number, so the data changes each time.
// The context printed above the table says which CPUs the threads were pinned
// to; with fewer than two CPUs allowed they are not pinned.
#include <pthread.h>
#include <sched.h>

#include <benchmark/benchmark.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "allowed_cpus.hpp"
#include "shm/ring.hpp"

namespace {

using shmpi::shm::kLine;
using shmpi::shm::Ring;
using shmpi::shm::ring_bytes;

constexpr std::uint32_t kCells = 32;
constexpr std::uint32_t kCellBytes = 2048;  // the default segment geometry

/// Zero-filled, line-aligned memory for one ring.  Never freed: the rings
/// live for the whole program, shared by the benchmark threads.
Ring make_ring() {
    const std::size_t bytes = (ring_bytes(kCells, kCellBytes) + kLine - 1) / kLine * kLine;
    void* mem = std::aligned_alloc(kLine, bytes);
    std::memset(mem, 0, bytes);
    return Ring(mem, kCells, kCellBytes);
}

using shmpi::bench::allowed_cpus;

/// Pins the calling thread to the `index`-th allowed CPU for its lifetime and
/// restores the old mask afterwards (thread 0 is the benchmark's main thread).
class Pin {
public:
    explicit Pin(int index) {
        pinned_ = pthread_getaffinity_np(pthread_self(), sizeof old_, &old_) == 0;
        const std::vector<int> cpus = allowed_cpus();
        if (!pinned_ || cpus.size() < 2) {
            pinned_ = false;
            return;
        }
        cpu_set_t one;
        CPU_ZERO(&one);
        CPU_SET(cpus[static_cast<std::size_t>(index) % cpus.size()], &one);
        pinned_ = pthread_setaffinity_np(pthread_self(), sizeof one, &one) == 0;
    }
    ~Pin() {
        if (pinned_) pthread_setaffinity_np(pthread_self(), sizeof old_, &old_);
    }
    Pin(const Pin&) = delete;
    Pin& operator=(const Pin&) = delete;

private:
    cpu_set_t old_{};
    bool pinned_ = false;
};

/// Spins a little, then yields, so that a descheduled peer gets the CPU back.
class Backoff {
public:
    void wait() {
        if (++spins_ < 64) return;
        std::this_thread::yield();
    }
    void reset() { spins_ = 0; }

private:
    int spins_ = 0;
};

std::byte* claim(Ring& ring) {
    Backoff b;
    std::byte* cell;
    while ((cell = ring.try_claim()) == nullptr) b.wait();
    return cell;
}

const std::byte* peek(Ring& ring) {
    Backoff b;
    const std::byte* cell;
    while ((cell = ring.try_peek()) == nullptr) b.wait();
    return cell;
}

/// Writes `bytes` bytes derived from `seq`: the first word is `seq` itself,
/// the rest a byte that changes with it.
void fill(std::byte* cell, std::size_t bytes, std::uint64_t seq) {
    std::memset(cell, static_cast<int>(seq & 0xff), bytes);
    std::memcpy(cell, &seq, bytes < sizeof seq ? bytes : sizeof seq);
}

void BM_RoundTripOneThread(benchmark::State& state) {
    static Ring ring = make_ring();
    const auto bytes = static_cast<std::size_t>(state.range(0));
    std::vector<std::byte> out(bytes);
    std::uint64_t seq = 0;
    for (auto _ : state) {
        std::byte* cell = ring.try_claim();
        fill(cell, bytes, seq++);
        ring.publish();
        const std::byte* got = ring.try_peek();
        std::memcpy(out.data(), got, bytes);
        ring.release();
        benchmark::DoNotOptimize(out.data());
    }
    state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * bytes));
    state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()));
}
BENCHMARK(BM_RoundTripOneThread)->Arg(8)->Arg(1024);

void BM_Stream(benchmark::State& state) {
    static Ring ring = make_ring();
    const auto bytes = static_cast<std::size_t>(state.range(0));
    Pin pin(state.thread_index());
    std::vector<std::byte> out(bytes);
    std::uint64_t seq = 0;
    if (state.thread_index() == 0) {
        for (auto _ : state) {
            fill(claim(ring), bytes, seq++);
            ring.publish();
        }
    } else {
        std::uint64_t bad = 0;
        for (auto _ : state) {
            const std::byte* cell = peek(ring);
            std::memcpy(out.data(), cell, bytes);
            ring.release();
            std::uint64_t got = 0;
            std::memcpy(&got, out.data(), sizeof got);
            bad += got != seq++;
        }
        if (bad != 0) state.SkipWithError("cells arrived out of order");
        state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * bytes));
        state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()));
    }
}
BENCHMARK(BM_Stream)->Arg(8)->Arg(1024)->Threads(2)->UseRealTime();

void BM_PingPong(benchmark::State& state) {
    static Ring ping = make_ring();
    static Ring pong = make_ring();
    const auto bytes = static_cast<std::size_t>(state.range(0));
    Pin pin(state.thread_index());
    std::vector<std::byte> out(bytes);
    std::uint64_t seq = 0;
    if (state.thread_index() == 0) {
        for (auto _ : state) {
            fill(claim(ping), bytes, seq++);
            ping.publish();
            std::memcpy(out.data(), peek(pong), bytes);
            pong.release();
        }
        state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()));
    } else {
        for (auto _ : state) {
            const std::byte* cell = peek(ping);
            std::memcpy(claim(pong), cell, bytes);
            ping.release();
            pong.publish();
        }
    }
}
BENCHMARK(BM_PingPong)->Arg(8)->Arg(1024)->Threads(2)->UseRealTime();

std::string describe_placement() {
    const std::vector<int> cpus = allowed_cpus();
    std::string s = std::to_string(cpus.size()) + " CPUs allowed (";
    for (std::size_t i = 0; i < cpus.size(); ++i) {
        if (i > 0) s += ',';
        s += std::to_string(cpus[i]);
    }
    s += cpus.size() >= 2 ? "); thread i pinned to the i-th of them"
                          : "); threads not pinned";
    return s;
}

}  // namespace

int main(int argc, char** argv) {
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
    benchmark::AddCustomContext("placement", describe_placement());
    benchmark::AddCustomContext("ring", std::to_string(kCells) + " cells of " +
                                            std::to_string(kCellBytes) + " bytes");
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}
