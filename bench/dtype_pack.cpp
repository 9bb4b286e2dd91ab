// Pack and unpack throughput of the datatype engine, as a fraction of a
// memcpy of the same number of (packed) bytes.
//
// Layouts, each with about P bytes of data per operation, for P = 32 KiB
// (the working set stays in L2: the engine's own speed) and P = 8 MiB
// (beyond the caches of small machines: memory speed):
//   vector/B/P   blocks of B bytes (doubles), stride 2B: B = 8 B .. 4 KiB,
//                and 72, 200 and 1000 B, whose blocks mostly start off the
//                cache lines (one in eight on a line in the packed stream,
//                one in four in memory), and 16 KiB, whose gaps are whole
//                pages
//   indexed/P    blocks of 32..224 bytes at increasing, irregular offsets
//   struct/P     an array of { int; double; char[3]; float } (runs of 4,
//                11 and 4 bytes in a 24-byte element)
// Counters: bytes_per_second (of packed data) and x_memcpy, the throughput
// over that of memcpy on the same number of bytes between the same kind of
// buffers, the two run in turns (see run()).  The goal is
// x_memcpy >= 0.8 for blocks of 64 bytes and more.  With a stride of twice
// the block, blocks under 64 bytes make the packing side read every cache
// line of twice the data, so they cannot reach memcpy speed at 8 MiB.
//
// Practice 15 of STYLE.md: the process pins itself to one CPU and reports it,
// and every iteration uses the next of kSets buffer sets, so an iteration
// does not find its data in cache from the one before.  Buffers are page
// aligned, so blocks of 64 bytes and more start on cache lines.
#include <benchmark/benchmark.h>
#include <sched.h>

#include <algorithm>
#include <cstdlib>
#include <new>
#include <ctime>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "dtype/datatype.hpp"

namespace {

using shmpi::dtype::Datatype;
using shmpi::dtype::Ref;

constexpr int kSets = 3;

const Datatype& P(MPI_Datatype h) { return *shmpi::dtype::predefined(h); }

Ref own(Datatype* t) {
    Ref r(t);
    shmpi::dtype::free_handle(*t, "bench");
    shmpi::dtype::commit(*r);
    return r;
}

/// Page-aligned memory, freed with std::free.
struct Free {
    void operator()(std::byte* p) const { std::free(p); }
};
using Mem = std::unique_ptr<std::byte[], Free>;
Mem alloc(std::int64_t bytes, int fill) {
    const auto n = static_cast<std::size_t>((bytes + 4095) / 4096 * 4096);
    Mem m(static_cast<std::byte*>(std::aligned_alloc(4096, n)));
    if (!m) throw std::bad_alloc();
    std::memset(m.get(), fill, n);
    return m;
}

/// Memory for `count` elements of `t` plus their packed stream, kSets times.
struct Buffers {
    std::vector<Mem> mem, packed;
    std::int64_t origin = 0;
    Buffers(const Datatype& t, std::int64_t count) {
        const std::int64_t span = t.true_lb + (count - 1) * t.extent + t.true_extent;
        origin = -t.true_lb;
        for (int i = 0; i < kSets; ++i) {
            mem.push_back(alloc(span, i + 1));
            packed.push_back(alloc(count * t.size, i + 7));
        }
    }
    void* base(int i) { return mem[static_cast<std::size_t>(i)].get() + origin; }
};

/// CPU time of this thread: what Google Benchmark's rates are based on, and
/// robust against the machine being shared.
double cpu_seconds() {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

/// Packs (or unpacks) about `packed` bytes of `t` per operation, in turns
/// with a memcpy of the same number of bytes: each turn times a few
/// operations, then as many memcpys between buffers of their own (both in
/// CPU time, each rotating through kSets buffer sets).  x_memcpy is the
/// memcpys' total time over the operations': both are averaged over the
/// same stretch of time, so the drifts of this VM's memory speed (2x within
/// minutes) hit both alike.  (It used to be a rate measured after the
/// benchmark, best of five rounds, against the mean of the operations: a
/// best against a mean, which counted the drift against the engine.)
void run(benchmark::State& state, const Datatype& t, std::int64_t packed, bool packing) {
    const std::int64_t count = std::max<std::int64_t>(1, packed / t.size);
    const std::int64_t bytes = count * t.size;
    Buffers buf(t, count);
    std::vector<Mem> from, to;
    for (int k = 0; k < kSets; ++k) {
        from.push_back(alloc(bytes, 3));
        to.push_back(alloc(bytes, 4));
    }
    // A turn moves 1 MiB or more each way, so the clock reads cost little.
    const std::int64_t turn = std::max<std::int64_t>(1, (std::int64_t{1} << 20) / bytes);
    double op_seconds = 0, copy_seconds = 0;
    int i = 0, j = 0;
    for (auto _ : state) {
        const double t0 = cpu_seconds();
        for (std::int64_t k = 0; k < turn; ++k, i = (i + 1) % kSets) {
            const auto at = static_cast<std::size_t>(i);
            if (packing) {
                shmpi::dtype::pack(t, buf.base(i), count, buf.packed[at].get());
            } else {
                shmpi::dtype::unpack(t, buf.packed[at].get(), bytes, buf.base(i));
            }
            benchmark::ClobberMemory();
        }
        const double t1 = cpu_seconds();
        for (std::int64_t k = 0; k < turn; ++k, j = (j + 1) % kSets) {
            const auto at = static_cast<std::size_t>(j);
            std::memcpy(to[at].get(), from[at].get(), static_cast<std::size_t>(bytes));
            benchmark::ClobberMemory();
        }
        const double t2 = cpu_seconds();
        state.SetIterationTime(t1 - t0);
        op_seconds += t1 - t0;
        copy_seconds += t2 - t1;
    }
    state.SetBytesProcessed(state.iterations() * turn * bytes);
    state.counters["x_memcpy"] = op_seconds > 0 ? copy_seconds / op_seconds : 0.0;
}

void BM_vector(benchmark::State& state, bool packing) {
    const auto block = static_cast<int>(state.range(0));  // bytes
    const std::int64_t packed = state.range(1);
    const auto blocks = static_cast<int>(packed / block);
    const Ref t = own(shmpi::dtype::make_vector(blocks, block / 8, 2 * block / 8, P(MPI_DOUBLE), "bench"));
    run(state, *t, packed, packing);
}

void BM_indexed(benchmark::State& state, bool packing) {
    // 64 blocks of 32..224 bytes (ints) with gaps of 0..60 bytes.
    std::vector<int> len, disp;
    int at = 0;
    for (int i = 0; i < 64; ++i) {
        len.push_back(8 + (i * 37) % 49);
        disp.push_back(at);
        at += len.back() + (i * 11) % 16;
    }
    const Ref t = own(shmpi::dtype::make_indexed(64, len.data(), disp.data(), P(MPI_INT), "bench"));
    run(state, *t, state.range(0), packing);
}

void BM_struct(benchmark::State& state, bool packing) {
    struct S {
        int a;
        double b;
        char c[3];
        float d;
    };
    const int bl[4] = {1, 1, 3, 1};
    const MPI_Aint d[4] = {offsetof(S, a), offsetof(S, b), offsetof(S, c), offsetof(S, d)};
    const Datatype* ty[4] = {&P(MPI_INT), &P(MPI_DOUBLE), &P(MPI_CHAR), &P(MPI_FLOAT)};
    const Ref t = own(shmpi::dtype::make_struct(4, bl, d, ty, "bench"));
    run(state, *t, state.range(0), packing);
}

void BM_memcpy(benchmark::State& state) {
    const std::int64_t bytes = state.range(0);
    std::vector<Mem> a, b;
    for (int i = 0; i < kSets; ++i) {
        a.push_back(alloc(bytes, 1));
        b.push_back(alloc(bytes, 2));
    }
    int i = 0;
    for (auto _ : state) {
        std::memcpy(b[static_cast<std::size_t>(i)].get(), a[static_cast<std::size_t>(i)].get(),
                    static_cast<std::size_t>(bytes));
        benchmark::ClobberMemory();
        i = (i + 1) % kSets;
    }
    state.SetBytesProcessed(state.iterations() * bytes);
}

/// Pins the process to the first CPU it may run on; returns which.
int pin() {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) != 0) return -1;
    for (int c = 0; c < CPU_SETSIZE; ++c) {
        if (!CPU_ISSET(c, &set)) continue;
        cpu_set_t one;
        CPU_ZERO(&one);
        CPU_SET(c, &one);
        return sched_setaffinity(0, sizeof one, &one) == 0 ? c : -1;
    }
    return -1;
}

}  // namespace

constexpr std::int64_t kSmall = 32 << 10;  // packed bytes per operation: in cache
constexpr std::int64_t kLarge = 8 << 20;  // beyond the caches of small machines

BENCHMARK(BM_memcpy)->Name("memcpy")->Arg(kSmall)->Arg(kLarge)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_vector, pack, true)
    ->Name("pack/vector")->ArgsProduct({benchmark::CreateRange(8, 4096, 2), {kSmall, kLarge}})
    ->UseManualTime()->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_vector, unpack, false)
    ->Name("unpack/vector")->ArgsProduct({benchmark::CreateRange(8, 4096, 2), {kSmall, kLarge}})
    ->UseManualTime()->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_vector, pack, true)
    ->Name("pack/vector")->ArgsProduct({{72, 200, 1000, 16384}, {kSmall, kLarge}})
    ->UseManualTime()->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_vector, unpack, false)
    ->Name("unpack/vector")->ArgsProduct({{72, 200, 1000, 16384}, {kSmall, kLarge}})
    ->UseManualTime()->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_indexed, pack, true)->Name("pack/indexed")->Arg(kSmall)->Arg(kLarge)->UseManualTime()->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_indexed, unpack, false)->Name("unpack/indexed")->Arg(kSmall)->Arg(kLarge)->UseManualTime()->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_struct, pack, true)->Name("pack/struct")->Arg(kSmall)->Arg(kLarge)->UseManualTime()->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_struct, unpack, false)->Name("unpack/struct")->Arg(kSmall)->Arg(kLarge)->UseManualTime()->Unit(benchmark::kMicrosecond);

int main(int argc, char** argv) {
    const int cpu = pin();
    benchmark::AddCustomContext("placement", cpu >= 0 ? "pinned to CPU " + std::to_string(cpu) : "not pinned");
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}
