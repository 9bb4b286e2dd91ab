#include "copy_probe.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
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

/// copy_race()'s transfer: 1 MiB, the size of issue 4's 1 MiB rows, in
/// slots of 16 KiB, eight of them, as a 2-rank team's cells carry it
/// (shm::Geometry::coll_cell_bytes, ShmTeam::kSlots).
constexpr std::size_t kRaceBytes = std::size_t{1} << 20;
constexpr std::size_t kRaceSlot = 16384;
constexpr std::int64_t kRaceSlots = 8;
constexpr std::int64_t kRaceChunks = static_cast<std::int64_t>(kRaceBytes / kRaceSlot);
/// Rounds, taking turns: odd ones through the slots, even ones by
/// process_vm_readv; the first kRaceWarmRounds of them (one of each kind)
/// warm up and are not timed.
constexpr std::int64_t kRaceRounds = 8;
constexpr std::int64_t kRaceWarmRounds = 2;

/// What mpirun and copy_race()'s helper process share.  Each counter only
/// grows, and sits on 128 bytes of its own (adjacent-line prefetch).
struct Race {
    alignas(128) std::atomic<std::int64_t> order;    ///< written by mpirun: the round to run next
    alignas(128) std::atomic<std::int64_t> ready;    ///< written by the helper: the last round whose source it rewrote
    alignas(128) std::atomic<std::int64_t> filled;   ///< written by the helper: slots filled, all rounds together
    alignas(128) std::atomic<std::int64_t> emptied;  ///< written by mpirun: slots emptied, all rounds together
    alignas(4096) std::byte slots[kRaceSlots][kRaceSlot];  ///< written by the helper, read by mpirun (filled/emptied)
};

/// Waits until `counter` reaches `want`, up to `deadline` (now_ns());
/// false when it passes.  The clock is read once every 1024 polls.
bool await_at_least(const std::atomic<std::int64_t>& counter, std::int64_t want, double deadline) {
    for (unsigned polls = 1;; ++polls) {
        // Acquire: pairs with the release that raised the counter; what it
        // orders is said at each store.
        if (counter.load(std::memory_order_acquire) >= want) return true;
        if (polls % 1024 == 0 && now_ns() > deadline) return false;
    }
}

void pin_to(int cpu) {
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    sched_setaffinity(0, sizeof one, &one);
}

bool cells_round(std::int64_t round) { return round % 2 == 1; }

/// The byte the helper writes all over its source in `round`.
unsigned char round_byte(std::int64_t round) { return static_cast<unsigned char>(0x40 + round); }

/// The helper's side of copy_race(), on its own CPU: before each round it
/// rewrites its source (so the lines are its own, as a rank's freshly
/// computed buffer is), and in the slots' rounds it copies the source
/// through them.  Returns its exit status.
int race_helper(Race& race, std::byte* source, double deadline) {
    std::int64_t filled = 0;
    for (std::int64_t round = 1; round <= kRaceRounds; ++round) {
        if (!await_at_least(race.order, round, deadline)) return 1;
        std::memset(source, round_byte(round), kRaceBytes);
        race.ready.store(round, std::memory_order_release);  // the source is rewritten: mpirun may read it
        if (!cells_round(round)) continue;
        for (std::int64_t c = 0; c < kRaceChunks; ++c, ++filled) {
            if (!await_at_least(race.emptied, filled + 1 - kRaceSlots, deadline)) return 1;
            std::memcpy(race.slots[filled % kRaceSlots], source + c * kRaceSlot, kRaceSlot);
            race.filled.store(filled + 1, std::memory_order_release);  // publishes the slot's bytes
        }
    }
    return 0;
}

/// mpirun's side of copy_race(): runs the rounds against `helper` and
/// returns the best time of each kind, or nullopt when the helper stops
/// answering or a copy brings the wrong bytes.
std::optional<CopyRace> race_rounds(Race& race, pid_t helper, const std::byte* source, std::byte* dest,
                                    double deadline) {
    CopyRace best{1e30, 1e30};
    std::int64_t emptied = 0;
    for (std::int64_t round = 1; round <= kRaceRounds; ++round) {
        race.order.store(round, std::memory_order_release);  // nothing else to order: a go-ahead
        if (!await_at_least(race.ready, round, deadline)) return std::nullopt;
        const double t0 = now_ns();
        if (cells_round(round)) {
            for (std::int64_t c = 0; c < kRaceChunks; ++c, ++emptied) {
                if (!await_at_least(race.filled, emptied + 1, deadline)) return std::nullopt;
                std::memcpy(dest + c * kRaceSlot, race.slots[emptied % kRaceSlots], kRaceSlot);
                race.emptied.store(emptied + 1, std::memory_order_release);  // the slot is read: it may be refilled
            }
        } else {
            iovec local{dest, kRaceBytes};
            iovec remote{const_cast<std::byte*>(source), kRaceBytes};
            const ssize_t got = process_vm_readv(helper, &local, 1, &remote, 1, 0);
            if (got < 0) {
                // Refused (ptrace rules, seccomp): the ranks' own probe
                // turns the single copies off too.
                best.kernel_ns = std::numeric_limits<double>::infinity();
                continue;
            }
            if (got != static_cast<ssize_t>(kRaceBytes)) return std::nullopt;
        }
        const double ns = now_ns() - t0;
        // A probe that copies wrongly decides nothing: the first and last
        // byte of every slot's worth must be this round's.
        const auto want = static_cast<std::byte>(round_byte(round));
        for (std::size_t at = 0; at < kRaceBytes; at += kRaceSlot) {
            if (dest[at] != want || dest[at + kRaceSlot - 1] != want) return std::nullopt;
        }
        if (round <= kRaceWarmRounds) continue;
        if (cells_round(round)) {
            best.cells_ns = std::min(best.cells_ns, ns);
        } else if (best.kernel_ns != std::numeric_limits<double>::infinity()) {
            best.kernel_ns = std::min(best.kernel_ns, ns);
        }
    }
    return best;
}

}  // namespace

std::optional<CopyRace> copy_race(double limit_ms) {
    cpu_set_t allowed;
    if (sched_getaffinity(0, sizeof allowed, &allowed) != 0) return std::nullopt;
    int cpus[2] = {-1, -1};
    for (int c = 0, found = 0; c < CPU_SETSIZE && found < 2; ++c) {
        if (CPU_ISSET(c, &allowed)) cpus[found++] = c;
    }
    if (cpus[1] < 0) return std::nullopt;
    void* mem = mmap(nullptr, sizeof(Race), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (mem == MAP_FAILED) return std::nullopt;
    // The source is private: the helper's writes give it its own copy at
    // the same address, which process_vm_readv reads from mpirun.
    std::unique_ptr<void, FreeDeleter> source_mem(std::aligned_alloc(kPage, kRaceBytes));
    std::unique_ptr<void, FreeDeleter> dest_mem(std::aligned_alloc(kPage, kRaceBytes));
    std::optional<CopyRace> result;
    if (source_mem && dest_mem) {
        auto* source = static_cast<std::byte*>(source_mem.get());
        auto* dest = static_cast<std::byte*>(dest_mem.get());
        std::memset(dest, 0, kRaceBytes);
        auto* race = new (mem) Race{};
        const double deadline = now_ns() + limit_ms * 1e6;
        const pid_t helper = fork();
        if (helper == 0) {
            prctl(PR_SET_PDEATHSIG, SIGKILL);
            pin_to(cpus[1]);
            _exit(race_helper(*race, source, deadline));
        }
        if (helper > 0) {
            pin_to(cpus[0]);
            result = race_rounds(*race, helper, source, dest, deadline);
            sched_setaffinity(0, sizeof allowed, &allowed);  // mpirun's own again, for the ranks
            if (!result) kill(helper, SIGKILL);
            while (waitpid(helper, nullptr, 0) < 0 && errno == EINTR) {
            }
        }
    }
    munmap(mem, sizeof(Race));
    return result;
}

bool cells_beat_kernel_copies() {
    if (!kernel_copies_slow()) return false;
    const std::optional<CopyRace> race = copy_race();
    return race && race->cells_ns < race->kernel_ns;
}

namespace {

/// CLOCK_BOOTTIME in whole seconds: the same in every process of a boot,
/// and counting while the machine sleeps.
long long boot_seconds() {
    timespec t{};
    clock_gettime(CLOCK_BOOTTIME, &t);
    return static_cast<long long>(t.tv_sec);
}

}  // namespace

std::string verdict_key() {
    std::string boot = "unknown-boot";
    if (FILE* f = std::fopen("/proc/sys/kernel/random/boot_id", "r")) {
        char id[64] = {};
        if (std::fgets(id, sizeof id, f) != nullptr) {
            boot = id;
            while (!boot.empty() && (boot.back() == '\n' || boot.back() == ' ')) boot.pop_back();
        }
        std::fclose(f);
    }
    std::string cpus;
    cpu_set_t allowed;
    if (sched_getaffinity(0, sizeof allowed, &allowed) == 0) {
        for (int c = 0; c < CPU_SETSIZE; ++c) {
            if (!CPU_ISSET(c, &allowed)) continue;
            int last = c;
            while (last + 1 < CPU_SETSIZE && CPU_ISSET(last + 1, &allowed)) ++last;
            if (!cpus.empty()) cpus += ',';
            cpus += last > c ? fmt::format("{}-{}", c, last) : std::to_string(c);
            c = last;
        }
    }
    return boot + "/" + (cpus.empty() ? "none" : cpus);
}

std::string format_verdict(std::string_view key, long long at_s, bool slow) {
    return fmt::format("shmpi-copies 1 {} {} {}\n", key, at_s, slow ? 1 : 0);
}

std::optional<bool> parse_verdict(std::string_view text, std::string_view key, long long now_s) {
    // Exactly what format_verdict() writes, for this key.
    const std::string head = fmt::format("shmpi-copies 1 {} ", key);
    if (text.substr(0, head.size()) != head || text.empty() || text.back() != '\n') return std::nullopt;
    const std::string_view rest = text.substr(head.size(), text.size() - head.size() - 1);
    const std::size_t space = rest.find(' ');
    if (space == std::string_view::npos) return std::nullopt;
    const std::string_view at = rest.substr(0, space), slow = rest.substr(space + 1);
    if (at.empty() || at.size() > 18 || at.find_first_not_of("0123456789") != std::string_view::npos) {
        return std::nullopt;
    }
    if (slow != "0" && slow != "1") return std::nullopt;
    const long long at_s = std::stoll(std::string(at));
    if (at_s > now_s || now_s - at_s > kVerdictKeepSeconds) return std::nullopt;
    return slow == "1";
}

std::string verdict_path() { return fmt::format("/dev/shm/shmpi-{}-copies", getuid()); }

std::optional<bool> load_verdict(const std::string& path, std::string_view key, long long now_s) {
    const int fd = open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) return std::nullopt;
    struct stat st {};
    char text[512];
    ssize_t n = -1;
    // Another user's file (/dev/shm is everyone's) or not a plain file:
    // not ours to believe.
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid() && st.st_size < 512) {
        n = read(fd, text, sizeof text);
    }
    close(fd);
    if (n <= 0) return std::nullopt;
    return parse_verdict(std::string_view(text, static_cast<std::size_t>(n)), key, now_s);
}

bool store_verdict(const std::string& path, std::string_view key, long long at_s, bool slow) {
    std::string tmp = path + ".XXXXXX";
    const int fd = mkstemp(tmp.data());  // 0600, a new file of ours
    if (fd < 0) return false;
    const std::string text = format_verdict(key, at_s, slow);
    const bool written = write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
    close(fd);
    // rename() replaces the name whole (a link there too, not its target);
    // another user's file there stays (the sticky /dev/shm refuses).
    if (!written || rename(tmp.c_str(), path.c_str()) != 0) {
        unlink(tmp.c_str());
        return false;
    }
    return true;
}

bool cells_beat_kernel_copies_kept() {
    const std::string path = verdict_path(), key = verdict_key();
    const long long now = boot_seconds();
    if (const std::optional<bool> kept = load_verdict(path, key, now)) return *kept;
    const bool slow = cells_beat_kernel_copies();
    store_verdict(path, key, now, slow);
    return slow;
}

std::optional<KernelCopies> parse_kernel_copies(const char* value) {
    if (value == nullptr || *value == '\0' || std::strcmp(value, "auto") == 0) return KernelCopies::Auto;
    if (std::strcmp(value, "fast") == 0) return KernelCopies::Fast;
    if (std::strcmp(value, "slow") == 0) return KernelCopies::Slow;
    return std::nullopt;
}

std::optional<RepMovsb> parse_rep_movsb(const char* value) {
    if (value == nullptr || *value == '\0' || std::strcmp(value, "auto") == 0) return RepMovsb::Auto;
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
