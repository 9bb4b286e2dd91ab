// Google Benchmark microbenchmarks of the reduction kernels
// (src/dtype/reduce_kernels.hpp): inout[i] = in[i] op inout[i] over dense
// arrays, the inner loop of every Reduce, Allreduce, Reduce_scatter and Scan.
//
//   BM_Kernel/<op>/<type>/<bytes>   one kernel call on `bytes` of data
//   BM_Memcpy/<bytes>               memcpy of the same bytes, for scale
//
// Sizes: 4 KiB (L1), 256 KiB (L2) and 8 MiB (memory on small machines).
// Counters: bytes_per_second of data reduced (one operand's bytes per call;
// the kernel reads both operands and writes one), and elems_per_second.
//
// Practice 15 of STYLE.md: the process pins itself to one CPU and reports it,
// and every call takes the next of kSets input buffers, whose values change
// from one buffer to the next.  The inputs are built so that the running
// result stays bounded: for sums and products consecutive buffers hold
// opposite and reciprocal values, so no denormals or infinities appear,
// however many calls a benchmark makes.
#include <benchmark/benchmark.h>
#include <sched.h>

#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "dtype/reduce_kernels.hpp"

namespace {

namespace dtype = shmpi::dtype;
using dtype::OpKind;

constexpr int kSets = 4;  // even: values come in (v, inverse of v) pairs

/// Page-aligned memory, freed with std::free.
struct Free {
    void operator()(std::byte* p) const { std::free(p); }
};
using Mem = std::unique_ptr<std::byte[], Free>;
Mem alloc(std::size_t bytes) {
    const std::size_t n = (bytes + 4095) / 4096 * 4096;
    Mem m(static_cast<std::byte*>(std::aligned_alloc(4096, n)));
    if (!m) throw std::bad_alloc();
    std::memset(m.get(), 0, n);
    return m;
}

/// The element types measured, with the size of one dense element.
struct Type {
    const char* name;
    MPI_Datatype handle;
    std::size_t bytes;  ///< dense: a MINLOC pair is value then index, no padding
};

/// Writes set `set`'s input: element i of a set and of the next set (set ^ 1)
/// are inverses under `op`, so the running result oscillates.
void fill(std::byte* p, std::size_t count, const Type& t, OpKind op, int set) {
    const bool inverse = (set & 1) != 0;
    for (std::size_t i = 0; i < count; ++i) {
        const double base = 1.0 + static_cast<double>((i * 7 + static_cast<std::size_t>(set / 2) * 13) % 97) / 1024.0;
        std::byte* e = p + i * t.bytes;
        if (t.handle == MPI_DOUBLE || t.handle == MPI_FLOAT) {
            double v = op == OpKind::Prod ? (inverse ? 1.0 / base : base) : (inverse ? -base : base);
            if (t.handle == MPI_DOUBLE) {
                std::memcpy(e, &v, sizeof v);
            } else {
                const auto f = static_cast<float>(v);
                std::memcpy(e, &f, sizeof f);
            }
        } else if (t.handle == MPI_INT) {
            // Integers wrap without cost, so any values will do.
            const auto v = static_cast<std::int32_t>((i * 2654435761u) ^ static_cast<unsigned>(set) * 40503u);
            std::memcpy(e, &v, sizeof v);
        } else if (t.handle == MPI_DOUBLE_INT) {
            const double v = base * (inverse ? -1.0 : 1.0);
            const auto idx = static_cast<std::int32_t>(i + static_cast<std::size_t>(set));
            std::memcpy(e, &v, sizeof v);
            std::memcpy(e + sizeof v, &idx, sizeof idx);
        }
    }
}

/// Pins this process to the first CPU it may run on; says where.
std::string pin_self() {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) != 0) return "unknown (sched_getaffinity failed)";
    for (int c = 0; c < CPU_SETSIZE; ++c) {
        if (!CPU_ISSET(c, &set)) continue;
        cpu_set_t one;
        CPU_ZERO(&one);
        CPU_SET(c, &one);
        if (sched_setaffinity(0, sizeof one, &one) != 0) return "not pinned (sched_setaffinity failed)";
        return "pinned to CPU " + std::to_string(c);
    }
    return "not pinned (no CPU allowed?)";
}

void BM_Kernel(benchmark::State& state, OpKind op, Type t) {
    const auto bytes = static_cast<std::size_t>(state.range(0));
    const std::size_t count = bytes / t.bytes;
    const dtype::ReduceKernel kernel = dtype::reduce_kernel(op, t.handle);
    if (kernel == nullptr) {
        state.SkipWithError("no kernel for this operation and type");
        return;
    }
    std::vector<Mem> in;
    for (int s = 0; s < kSets; ++s) {
        in.push_back(alloc(bytes));
        fill(in.back().get(), count, t, op, s);
    }
    Mem inout = alloc(bytes);
    fill(inout.get(), count, t, op, 0);
    int s = 0;
    for (auto _ : state) {
        kernel(in[static_cast<std::size_t>(s)].get(), inout.get(), static_cast<std::int64_t>(count), nullptr);
        benchmark::DoNotOptimize(inout.get());
        benchmark::ClobberMemory();
        s = (s + 1) % kSets;
    }
    state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * count * t.bytes));
    state.counters["elems_per_second"] =
        benchmark::Counter(static_cast<double>(state.iterations() * count), benchmark::Counter::kIsRate);
}

void BM_Memcpy(benchmark::State& state) {
    const auto bytes = static_cast<std::size_t>(state.range(0));
    std::vector<Mem> in;
    for (int s = 0; s < kSets; ++s) {
        in.push_back(alloc(bytes));
        std::memset(in.back().get(), s + 1, bytes);
    }
    Mem out = alloc(bytes);
    int s = 0;
    for (auto _ : state) {
        std::memcpy(out.get(), in[static_cast<std::size_t>(s)].get(), bytes);
        benchmark::DoNotOptimize(out.get());
        benchmark::ClobberMemory();
        s = (s + 1) % kSets;
    }
    state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * bytes));
}

const std::int64_t kSizes[] = {4 << 10, 256 << 10, 8 << 20};

void register_all() {
    struct Case {
        OpKind op;
        Type type;
    };
    const Type dbl{"double", MPI_DOUBLE, 8};
    const Type flt{"float", MPI_FLOAT, 4};
    const Type i32{"int", MPI_INT, 4};
    const Type dbl_int{"double_int", MPI_DOUBLE_INT, 12};
    const Case cases[] = {
        {OpKind::Sum, dbl},  {OpKind::Sum, flt},    {OpKind::Sum, i32},     {OpKind::Prod, dbl},
        {OpKind::Max, dbl},  {OpKind::Min, i32},    {OpKind::Band, i32},    {OpKind::Lxor, i32},
        {OpKind::Minloc, dbl_int}, {OpKind::Maxloc, dbl_int},
    };
    for (const Case& c : cases) {
        // "MPI_SUM" -> "sum"
        std::string op = dtype::op_kind_name(c.op);
        op = op.substr(op.find('_') + 1);
        for (char& ch : op) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
        auto* b = benchmark::RegisterBenchmark(("BM_Kernel/" + op + "/" + c.type.name).c_str(), BM_Kernel,
                                               c.op, c.type);
        for (const std::int64_t s : kSizes) b->Arg(s);
    }
    auto* m = benchmark::RegisterBenchmark("BM_Memcpy", BM_Memcpy);
    for (const std::int64_t s : kSizes) m->Arg(s);
}

}  // namespace

int main(int argc, char** argv) {
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
    benchmark::AddCustomContext("placement", pin_self());
    benchmark::AddCustomContext("input", std::to_string(kSets) + " buffers in rotation, values varied");
    register_all();
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}
