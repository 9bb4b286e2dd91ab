// Thin wrappers over the futex system call on words in shared memory.
//
// The words live in a MAP_SHARED segment used by several processes, so these
// use the shared (non-PRIVATE) futex operations.
#pragma once

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
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

static_assert(sizeof(std::atomic<std::uint32_t>) == sizeof(std::uint32_t),
              "a futex word must be exactly the 32-bit integer the kernel compares");

}  // namespace shmpi::shm
