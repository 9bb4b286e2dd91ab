// Cache-line demotion for data another core reads next.
//
// A producer that has just written lines a consumer on another core will
// read next (a one-cell message, Engine::try_send_now) demotes them with
// CLDEMOTE: they
// leave the producer's private caches for the shared L3, and the
// consumer's miss is served there instead of by a snoop into the
// producer's core.  A hint with no effect on what any core reads.  CPUs
// without it execute the encoding (0F 1C /0, in the hint-NOP space) as a
// NOP, AMD's included, so no check is needed.
#pragma once

#include <cstddef>
#include <cstdint>

namespace shmpi::shm {

inline constexpr std::size_t kCacheLineBytes = 64;

/// Demotes every cache line of [p, p + bytes).
inline void demote(const void* p, std::size_t bytes) {
#if defined(__x86_64__)
    const auto first = reinterpret_cast<std::uintptr_t>(p) & ~std::uintptr_t{kCacheLineBytes - 1};
    const auto end = reinterpret_cast<std::uintptr_t>(p) + bytes;
    for (std::uintptr_t a = first; a < end; a += kCacheLineBytes) {
        asm volatile(".byte 0x0f, 0x1c, 0x00" : : "a"(a) : "memory");  // cldemote (%rax)
    }
#else
    (void)p;
    (void)bytes;
#endif
}

}  // namespace shmpi::shm
