// Thin wrappers over the system calls of waiting: futex on words in shared
// memory, and membarrier, with which a rank about to sleep forces a full
// barrier on every other rank.
//
// The words live in a MAP_SHARED segment used by several processes, so these
// use the shared (non-PRIVATE) futex operations.
#pragma once

#include <linux/futex.h>
#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <climits>
#include <cstdint>
#include <ctime>

namespace shmpi::shm {

/// Sleeps while `*word == expected`, at most `timeout_ns`.  Returns when woken,
/// when the value differs, on a signal, or at the timeout; callers re-check
/// their condition in every case.
inline void futex_wait(std::atomic<std::uint32_t>& word, std::uint32_t expected,
                       long timeout_ns) {
    struct timespec ts {};
    ts.tv_sec = timeout_ns / 1000000000L;
    ts.tv_nsec = timeout_ns % 1000000000L;
    syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word), FUTEX_WAIT, expected, &ts,
            nullptr, 0);
}

/// Wakes up to `n` processes sleeping on `word`.
inline void futex_wake(std::atomic<std::uint32_t>& word, int n) {
    syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word), FUTEX_WAKE, n, nullptr, nullptr,
            0);
}

/// Rings a doorbell: changes the futex word `bell` and wakes every thread
/// sleeping on it (one, but for a rank of several threads in MPI calls at
/// once under MPI_THREAD_MULTIPLE: gate.hpp).  Release: a sleeper that
/// reads the new value (acquire) also sees what the ringer stored before,
/// and a futex_wait that compared against the old value returns at once.
inline void ring_doorbell(std::atomic<std::uint32_t>& bell) {
    bell.fetch_add(1, std::memory_order_release);
    futex_wake(bell, INT_MAX);
}

/// True when this process can force a full barrier on every other process
/// of the job (membarrier GLOBAL_EXPEDITED, Linux 4.16): registers this
/// process as one whose barrier others may force.  The same answer on
/// every rank (one kernel, one binary).  The transport (its doorbells) and
/// the shared-memory collectives (their flags) each ask it once.
inline bool membarrier_register() {
    const long cmds = syscall(SYS_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);
    if (cmds < 0) return false;
    const long need = MEMBARRIER_CMD_GLOBAL_EXPEDITED | MEMBARRIER_CMD_REGISTER_GLOBAL_EXPEDITED;
    if ((cmds & need) != need) return false;
    return syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_GLOBAL_EXPEDITED, 0, 0) == 0;
}

/// A full barrier on every registered process of the job, forced by the
/// kernel (after membarrier_register() returned true).
inline void membarrier_all() { syscall(SYS_membarrier, MEMBARRIER_CMD_GLOBAL_EXPEDITED, 0, 0); }

/// CLOCK_MONOTONIC in nanoseconds: the clock of RankSlot::parked_until,
/// which the rank writes (Transport::park) and mpirun compares with its own
/// reading (Job::check_deadlock).
inline std::int64_t monotonic_ns() {
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return std::int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

static_assert(sizeof(std::atomic<std::uint32_t>) == sizeof(std::uint32_t),
              "a futex word must be exactly the 32-bit integer the kernel compares");

}  // namespace shmpi::shm
