#include "copy_probe.hpp"

#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>

namespace shmpi::launcher {
namespace {

constexpr std::size_t kPage = 4096;
constexpr std::size_t kCopy = 16384;

double now_ns() {
    timespec t{};
    clock_gettime(CLOCK_MONOTONIC, &t);
    return static_cast<double>(t.tv_sec) * 1e9 + static_cast<double>(t.tv_nsec);
}

struct FreeDeleter {
    void operator()(void* p) const { std::free(p); }
};

/// The best of 5 rounds of 8 calls of `copy`, in nanoseconds.
template <class Copy>
double best_of_rounds(Copy&& copy) {
    double best = 1e30;
    for (int rep = 0; rep < 5; ++rep) {
        const double t0 = now_ns();
        for (int i = 0; i < 8; ++i) copy();
        best = std::min(best, now_ns() - t0);
    }
    return best;
}

/// best_of_rounds() of a memcpy of `n` bytes from `from` to `to`.
double best_memcpy_ns(void* to, const void* from, std::size_t n) {
    // (volatile: the compiler may not turn the copy into inline moves.)
    volatile std::size_t bytes = n;
    return best_of_rounds([&] {
        std::memcpy(to, from, bytes);
        asm volatile("" : : "r"(to) : "memory");
    });
}

}  // namespace

bool short_distance_copies_slow() {
    // Source at the start of a page; destinations 16 bytes into a page
    // (16 bytes past the source modulo 4096) and 16 bytes before a page
    // boundary (16 bytes before it).
    std::unique_ptr<void, FreeDeleter> src_mem(std::aligned_alloc(kPage, kCopy + kPage));
    std::unique_ptr<void, FreeDeleter> dst_mem(std::aligned_alloc(kPage, kCopy + 2 * kPage));
    if (!src_mem || !dst_mem) return false;
    auto* src = static_cast<std::byte*>(src_mem.get());
    auto* dst = static_cast<std::byte*>(dst_mem.get());
    std::memset(src, 1, kCopy + kPage);
    std::memset(dst, 2, kCopy + 2 * kPage);
    const double far = best_memcpy_ns(dst + kPage - 16, src, kCopy);
    const double near = best_memcpy_ns(dst + 16, src, kCopy);
    return near > 4 * far;
}

bool kernel_copies_slow() {
    constexpr std::size_t kBytes = 65536;
    std::unique_ptr<void, FreeDeleter> src_mem(std::aligned_alloc(kPage, kBytes));
    std::unique_ptr<void, FreeDeleter> dst_mem(std::aligned_alloc(kPage, kBytes));
    if (!src_mem || !dst_mem) return false;
    void* src = src_mem.get();
    void* dst = dst_mem.get();
    std::memset(src, 1, kBytes);
    std::memset(dst, 2, kBytes);
    const pid_t self = getpid();
    bool failed = false;
    const double kernel = best_of_rounds([&] {
        iovec local{dst, kBytes};
        iovec remote{src, kBytes};
        failed = failed || process_vm_readv(self, &local, 1, &remote, 1, 0) != static_cast<ssize_t>(kBytes);
    });
    if (failed) return false;
    return kernel > 2 * best_memcpy_ns(dst, src, kBytes);
}

namespace {

/// The two counters of line_handoff_ns(), each on its own 128 bytes
/// (adjacent-line prefetch).
struct Handoff {
    alignas(128) std::atomic<std::int64_t> ping;  ///< written by mpirun
    alignas(128) std::atomic<std::int64_t> pong;  ///< written by the helper process
};

/// Waits until `flag` holds `want`, up to `deadline` (now_ns()); false
/// when it passes.  The clock is read once every 1024 polls.
bool await_value(const std::atomic<std::int64_t>& flag, std::int64_t want, double deadline) {
    for (unsigned polls = 1;; ++polls) {
        // Acquire: nothing else is exchanged; it keeps each answer after
        // the read it answers, as a message flag's would be.
        if (flag.load(std::memory_order_acquire) == want) return true;
        if (polls % 1024 == 0 && now_ns() > deadline) return false;
    }
}

void pin_to(int cpu) {
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    sched_setaffinity(0, sizeof one, &one);
}

}  // namespace

std::optional<double> line_handoff_ns() {
    constexpr std::int64_t kWarm = 200;
    constexpr std::int64_t kTimed = 2000;
    cpu_set_t allowed;
    if (sched_getaffinity(0, sizeof allowed, &allowed) != 0) return std::nullopt;
    int cpus[2] = {-1, -1};
    for (int c = 0, found = 0; c < CPU_SETSIZE && found < 2; ++c) {
        if (CPU_ISSET(c, &allowed)) cpus[found++] = c;
    }
    if (cpus[1] < 0) return std::nullopt;
    void* mem = mmap(nullptr, sizeof(Handoff), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (mem == MAP_FAILED) return std::nullopt;
    auto* h = new (mem) Handoff{};
    // Everything must be over within 50 ms: a helper that gets no CPU
    // (a loaded machine) makes the answer "unknown", not a wait.
    const double deadline = now_ns() + 50e6;
    const pid_t helper = fork();
    if (helper == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        pin_to(cpus[1]);
        for (std::int64_t i = 1; i <= kWarm + kTimed; ++i) {
            if (!await_value(h->ping, i, deadline)) _exit(1);
            h->pong.store(i, std::memory_order_release);  // pairs with mpirun's acquire
        }
        _exit(0);
    }
    std::optional<double> result;
    if (helper > 0) {
        pin_to(cpus[0]);
        bool ok = true;
        double t0 = 0;
        for (std::int64_t i = 1; ok && i <= kWarm + kTimed; ++i) {
            if (i == kWarm + 1) t0 = now_ns();
            h->ping.store(i, std::memory_order_release);  // pairs with the helper's acquire
            ok = await_value(h->pong, i, deadline);
        }
        if (ok) result = (now_ns() - t0) / (2.0 * kTimed);
        sched_setaffinity(0, sizeof allowed, &allowed);  // mpirun's own again, for the ranks
        if (!ok) kill(helper, SIGKILL);
        while (waitpid(helper, nullptr, 0) < 0 && errno == EINTR) {
        }
    }
    munmap(mem, sizeof(Handoff));
    return result;
}

bool cells_beat_kernel_copies() {
    if (!kernel_copies_slow()) return false;
    const std::optional<double> line = line_handoff_ns();
    return line && *line < kFastLineNs;
}

std::optional<KernelCopies> parse_kernel_copies(const char* value) {
    if (value == nullptr || std::strcmp(value, "auto") == 0) return KernelCopies::Auto;
    if (std::strcmp(value, "fast") == 0) return KernelCopies::Fast;
    if (std::strcmp(value, "slow") == 0) return KernelCopies::Slow;
    return std::nullopt;
}

std::optional<RepMovsb> parse_rep_movsb(const char* value) {
    if (value == nullptr || std::strcmp(value, "auto") == 0) return RepMovsb::Auto;
    if (std::strcmp(value, "keep") == 0) return RepMovsb::Keep;
    if (std::strcmp(value, "avoid") == 0) return RepMovsb::Avoid;
    return std::nullopt;
}

std::optional<std::string> tunables_avoiding_rep_movsb(std::optional<std::string_view> current) {
    const std::string setting = std::string(kRepMovsbTunable) + "=" + std::string(kRepMovsbOff);
    if (!current || current->empty()) return setting;
    // Tunables are NAME=VALUE entries separated by colons.
    std::string_view rest = *current;
    while (!rest.empty()) {
        const std::size_t colon = rest.find(':');
        const std::string_view entry = rest.substr(0, colon);
        if (entry.substr(0, entry.find('=')) == kRepMovsbTunable) return std::nullopt;
        rest = colon == std::string_view::npos ? std::string_view{} : rest.substr(colon + 1);
    }
    return std::string(*current) + ":" + setting;
}

}  // namespace shmpi::launcher
