// Temporary buffers of the collectives that hold every member's
// contribution (linear Reduce and Scan, the composed shared-memory Scan):
// n x message bytes per call, 64 MiB at 16 ranks and 4 MiB.  Memory that
// the allocator hands back to the kernel comes back as fresh pages, and
// faulting them in cost more than the copies themselves (a forced shm Scan
// at 16 ranks and 4 MiB: 2.1 M page faults, 30 s of system time in the
// test suite).  So each thread keeps a few buffers between calls and a
// Scratch lends one out.
//
// A lent buffer is out of the pool until the Scratch ends, so a call
// nested inside another (a reduce inside a reduce-scatter) gets a buffer
// of its own.  A buffer larger than kKeepMax goes back to the allocator,
// which bounds what a thread keeps at kKeepSlots x kKeepMax.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

namespace shmpi::coll {

class Scratch {
public:
    /// Buffers kept per thread, and the largest one kept.
    static constexpr int kKeepSlots = 2;
    static constexpr std::size_t kKeepMax = std::size_t{64} << 20;

    /// At least `bytes` bytes (at least 1), reused from this thread's pool
    /// where a kept buffer is large enough.  Contents are unspecified.
    explicit Scratch(std::int64_t bytes);
    ~Scratch();
    Scratch(const Scratch&) = delete;
    Scratch& operator=(const Scratch&) = delete;

    std::byte* get() const { return buf_.get(); }

    /// Capacity of this thread's kept buffers, in bytes.
    static std::size_t kept_bytes();
    /// Frees this thread's kept buffers.
    static void drop_kept();

private:
    std::unique_ptr<std::byte[]> buf_;
    std::size_t cap_ = 0;
};

}  // namespace shmpi::coll
