// Google Benchmark microbenchmarks of the shared-memory collectives' flags
// (src/coll/shm_team.hpp, src/shm/layout.hpp).
//
//   BM_FlagRoundTrip            two threads, each owning a shm::CollMember:
//                               thread 0 writes 8 bytes inline in its release
//                               line and stores release = s; thread 1 waits
//                               for it (acquire), reads the data, stores
//                               gather = s; thread 0 waits for that.  One
//                               cache-line handoff each way: the floor under
//                               every shared-memory collective.
//   BM_TeamBarrier/<ranks>      coll::barrier_shm on a real segment: this
//                               process is member 0, ranks - 1 forked
//                               processes are the others (as mpirun's ranks
//                               attach: SHMPI_SEGMENT_FD/RANK/SIZE)
//   BM_TeamBcast/<ranks>/<bytes>   coll::bcast_shm from member 0
//   BM_TeamAllreduce/<ranks>/<bytes>  coll::allreduce_shm, MPI_SUM on doubles
//
// Times are member 0's, per call, in real time.  Practice 15 of STYLE.md:
// when there are at least as many allowed CPUs as threads or ranks, thread
// or member i is pinned to the i-th allowed CPU, otherwise nothing is pinned
// (the context line says which); the data changes every call (the iteration
// number, which the receivers check: a wrong value fails the benchmark).
#include <sched.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <benchmark/benchmark.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <numeric>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "allowed_cpus.hpp"
#include "coll/coll.hpp"
#include "coll/shm_team.hpp"
#include "shm/layout.hpp"
#include "shm/segment.hpp"
#include "shm/transport.hpp"

namespace {

namespace coll = shmpi::coll;
namespace shm = shmpi::shm;

using shmpi::bench::allowed_cpus;

/// Pins the calling thread to the `index`-th of `cpus` when there are at
/// least `needed` of them; returns whether it did.
bool pin(const std::vector<int>& cpus, int index, int needed) {
    if (static_cast<int>(cpus.size()) < needed) return false;
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpus[static_cast<std::size_t>(index)], &one);
    return sched_setaffinity(0, sizeof one, &one) == 0;
}

/// Restores this thread's CPU mask when it goes out of scope.
class KeepAffinity {
public:
    KeepAffinity() { ok_ = sched_getaffinity(0, sizeof old_, &old_) == 0; }
    ~KeepAffinity() {
        if (ok_) sched_setaffinity(0, sizeof old_, &old_);
    }
    KeepAffinity(const KeepAffinity&) = delete;
    KeepAffinity& operator=(const KeepAffinity&) = delete;

private:
    cpu_set_t old_{};
    bool ok_ = false;
};

/// Spins for up to 20 us (the default spin budget of the transport's
/// waits), then yields between looks, so that a descheduled peer gets the
/// CPU back.  Yielding sooner would hand the CPU to unrelated work whenever
/// the peer is a little late, and measure the scheduler instead.
template <class Done>
void spin_until(Done&& done) {
    const auto spin_end = std::chrono::steady_clock::now() + std::chrono::microseconds(20);
    for (unsigned spins = 0; !done(); ++spins) {
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#endif
        if (spins % 64 == 63 && std::chrono::steady_clock::now() > spin_end) std::this_thread::yield();
    }
}

// ------------------------------------------------------------ raw flags

void BM_FlagRoundTrip(benchmark::State& state) {
    // Two members' flags, line-aligned, as in a collective region.
    struct alignas(shm::kLine) Pair {
        shm::CollMember m[2];
    };
    auto pair = std::make_unique<Pair>();
    std::memset(static_cast<void*>(pair.get()), 0, sizeof(Pair));
    shm::CollMember& a = pair->m[0];
    shm::CollMember& b = pair->m[1];
    const std::vector<int> cpus = allowed_cpus();
    const std::int64_t rounds = state.max_iterations;
    std::atomic<std::uint64_t> bad{0};

    KeepAffinity keep;
    pin(cpus, 0, 2);
    std::thread peer([&] {
        pin(cpus, 1, 2);
        for (std::uint64_t s = 1; s <= static_cast<std::uint64_t>(rounds); ++s) {
            shm::CollLine& line = a.lines[s % shm::kCollLines];
            // Acquire: pairs with thread 0's release store; the inline data
            // written before it is visible.
            spin_until([&] { return coll::reached(line.release.load(std::memory_order_acquire), s); });
            std::uint64_t got = 0;
            std::memcpy(&got, line.data, sizeof got);
            // Relaxed: a counter, read after join(), which orders it.
            if (got != s * 0x9e3779b97f4a7c15ull) bad.fetch_add(1, std::memory_order_relaxed);
            // Release: our read of the line happens before thread 0 reuses it.
            b.gather.store(s, std::memory_order_release);
        }
    });
    std::uint64_t s = 0;
    for (auto _ : state) {
        ++s;
        shm::CollLine& line = a.lines[s % shm::kCollLines];
        const std::uint64_t value = s * 0x9e3779b97f4a7c15ull;
        std::memcpy(line.data, &value, sizeof value);
        // Release: publishes the inline data with the step.
        line.release.store(s, std::memory_order_release);
        // Acquire: pairs with the peer's gather store.
        spin_until([&] { return coll::reached(b.gather.load(std::memory_order_acquire), s); });
    }
    peer.join();
    if (bad.load(std::memory_order_relaxed) != 0) state.SkipWithError("the peer read stale inline data");
}
BENCHMARK(BM_FlagRoundTrip)->UseRealTime();

// ------------------------------------------------------------ a team of forked ranks

/// One call of the collective under test, as member `team.rank`; `round`
/// numbers the call (the data it carries).  Returns the number of wrong
/// elements this member saw.
using Call = std::uint64_t (*)(const coll::Team& team, std::uint64_t round, std::int64_t bytes,
                               std::vector<double>& a, std::vector<double>& b);

std::uint64_t call_barrier(const coll::Team& team, std::uint64_t, std::int64_t, std::vector<double>&,
                           std::vector<double>&) {
    return coll::barrier_shm(team) ? 0 : 1;
}

std::uint64_t call_bcast(const coll::Team& team, std::uint64_t round, std::int64_t bytes, std::vector<double>& a,
                         std::vector<double>&) {
    const auto n = static_cast<std::size_t>(bytes) / sizeof(double);
    if (team.rank == 0) {
        a[0] = static_cast<double>(round);
        a[n - 1] = static_cast<double>(round);
    }
    if (!coll::bcast_shm(team, a.data(), bytes, 0)) return 1;
    return (a[0] != static_cast<double>(round)) + (a[n - 1] != static_cast<double>(round));
}

void add_doubles(const void* in, void* inout, std::int64_t count, const void*) {
    const auto* x = static_cast<const double*>(in);
    auto* y = static_cast<double*>(inout);
    for (std::int64_t i = 0; i < count; ++i) y[i] = x[i] + y[i];
}

std::uint64_t call_allreduce(const coll::Team& team, std::uint64_t round, std::int64_t bytes,
                             std::vector<double>& a, std::vector<double>& b) {
    const auto n = static_cast<std::int64_t>(static_cast<std::size_t>(bytes) / sizeof(double));
    const double mine = static_cast<double>(round % 1024) + team.rank;
    a[0] = mine;
    a[static_cast<std::size_t>(n - 1)] = mine;
    const coll::Reduction sum{add_doubles, nullptr, true, sizeof(double)};
    if (!coll::allreduce_shm(team, a.data(), b.data(), n, sum)) return 1;
    const double want = static_cast<double>(round % 1024) * team.size + team.size * (team.size - 1) / 2.0;
    return (b[0] != want) + (b[static_cast<std::size_t>(n - 1)] != want);
}

/// What one member does: attaches to the segment described in the
/// environment, makes its view of the world's collective region, and runs
/// `calls` calls (the first one untimed), timing the others when `state` is
/// given.  Returns the number of wrong results.
std::uint64_t run_member(int rank, int size, Call call, std::int64_t bytes, std::int64_t calls,
                         benchmark::State* state) {
    auto transport = shm::Transport::from_environment();
    std::vector<std::uint32_t> world(static_cast<std::size_t>(size));
    std::iota(world.begin(), world.end(), 0u);
    coll::ShmTeam shm_team(*transport, nullptr, transport->segment()->world_coll_region(), rank, world);
    coll::Team team;
    team.rank = rank;
    team.size = size;
    team.world = &world;
    team.shm = &shm_team;
    const std::size_t n = static_cast<std::size_t>(bytes > 8 ? bytes : 8) / sizeof(double);
    std::vector<double> a(n, 0.0);
    std::vector<double> b(n, 0.0);
    // Untimed: the first call runs the single-copy probe and waits for every
    // member to start.
    std::uint64_t bad = call(team, 0, bytes, a, b);
    if (state == nullptr) {
        for (std::int64_t i = 1; i <= calls; ++i) bad += call(team, static_cast<std::uint64_t>(i), bytes, a, b);
    } else {
        std::uint64_t i = 0;
        for (auto _ : *state) bad += call(team, ++i, bytes, a, b);
    }
    return bad;
}

void team_benchmark(benchmark::State& state, Call call, std::int64_t bytes) {
    const int size = static_cast<int>(state.range(0));
    const std::int64_t calls = state.max_iterations;
    std::optional<shm::Segment> seg;
    try {
        seg.emplace(shm::Segment::create(shm::Geometry::for_ranks(static_cast<std::uint32_t>(size)), getpid()));
    } catch (const std::exception& e) {
        state.SkipWithError((std::string("no usable shared memory: ") + e.what()).c_str());
        for (auto _ : state) {
        }
        return;
    }
    seg->unlink();
    const std::vector<int> cpus = allowed_cpus();
    KeepAffinity keep;
    std::fflush(nullptr);
    std::vector<pid_t> children;
    for (int r = 1; r < size; ++r) {
        const pid_t pid = fork();
        if (pid == 0) {
            pin(cpus, r, size);
            setenv(shm::kEnvFd, std::to_string(dup(seg->fd())).c_str(), 1);
            setenv(shm::kEnvRank, std::to_string(r).c_str(), 1);
            setenv(shm::kEnvSize, std::to_string(size).c_str(), 1);
            const std::uint64_t bad = run_member(r, size, call, bytes, calls, nullptr);
            _exit(bad == 0 ? 0 : 1);
        }
        if (pid < 0) {
            state.SkipWithError("fork failed");
            break;
        }
        children.push_back(pid);
    }
    std::uint64_t bad = 0;
    if (static_cast<int>(children.size()) == size - 1) {
        pin(cpus, 0, size);
        setenv(shm::kEnvFd, std::to_string(dup(seg->fd())).c_str(), 1);
        setenv(shm::kEnvRank, "0", 1);
        setenv(shm::kEnvSize, std::to_string(size).c_str(), 1);
        bad = run_member(0, size, call, bytes, calls, &state);
    } else {
        for (auto _ : state) {
        }
        for (const pid_t pid : children) kill(pid, SIGKILL);
    }
    int failed = 0;
    for (const pid_t pid : children) {
        int st = 0;
        waitpid(pid, &st, 0);
        failed += !(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    }
    if (bad != 0) {
        state.SkipWithError("member 0 saw wrong data (or an algorithm declined)");
    } else if (failed != 0) {
        state.SkipWithError("a forked member saw wrong data or failed");
    }
    state.counters["ranks"] = size;
}

void BM_TeamBarrier(benchmark::State& state) { team_benchmark(state, call_barrier, 0); }
void BM_TeamBcast(benchmark::State& state) { team_benchmark(state, call_bcast, state.range(1)); }
void BM_TeamAllreduce(benchmark::State& state) { team_benchmark(state, call_allreduce, state.range(1)); }

BENCHMARK(BM_TeamBarrier)->Arg(2)->Arg(4)->UseRealTime();
BENCHMARK(BM_TeamBcast)->ArgsProduct({{2, 4}, {8, 4096, 1 << 20}})->UseRealTime();
BENCHMARK(BM_TeamAllreduce)->ArgsProduct({{2, 4}, {8, 4096, 1 << 20}})->UseRealTime();

std::string describe_placement() {
    const std::vector<int> cpus = allowed_cpus();
    std::string s = std::to_string(cpus.size()) + " CPUs allowed (";
    for (std::size_t i = 0; i < cpus.size(); ++i) {
        if (i > 0) s += ',';
        s += std::to_string(cpus[i]);
    }
    return s + "); thread or member i pinned to the i-th of them when there are enough, else unpinned";
}

}  // namespace

int main(int argc, char** argv) {
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
    benchmark::AddCustomContext("placement", describe_placement());
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}
