// The buffer of buffered-mode sends (MPI_Buffer_attach, MPI_Bsend).
//
// MPI_Bsend packs the message into the buffer the user attached and sends
// it from there, so the call returns at once whatever the receiver does.
// Each message takes its packed bytes plus MPI_BSEND_OVERHEAD of the
// buffer, the rule by which MPI tells users to size it; the space comes
// back once the send from it has completed.  One buffer per process, used by
// one thread at a time (the library is MPI_THREAD_SERIALIZED).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "p2p.hpp"

namespace shmpi::p2p {

class BsendBuffer {
public:
    bool attached() const { return base_ != nullptr; }
    std::byte* base() const { return base_; }
    std::uint64_t size() const { return size_; }

    void attach(void* buf, std::uint64_t size);
    /// Waits until every send from the buffer has completed, then forgets it.
    void detach(Engine& engine);

    /// Room for a message of `bytes` packed bytes, or nullptr when the buffer
    /// (after taking back the space of completed sends) has no gap that
    /// large.  The caller packs the message there, starts the send and hands
    /// its request to track() before asking for more room.
    std::byte* reserve(Engine& engine, std::uint64_t bytes);
    /// The send of the message reserve() placed at `region`; its space comes
    /// back once `r` completes.  The buffer owns `r` from now on.
    void track(std::byte* region, Request* r);
    /// Bytes of the buffer not held by a pending message.
    std::uint64_t free_bytes() const;

private:
    struct Slot {
        std::uint64_t offset;
        std::uint64_t size;      ///< bytes taken, MPI_BSEND_OVERHEAD included
        Request* req;            ///< the send from it; nullptr until track()
    };
    /// Releases the slots whose sends have completed.
    void reclaim(Engine& engine);

    std::byte* base_ = nullptr;
    std::uint64_t size_ = 0;
    std::vector<Slot> slots_;  ///< ordered by offset, never overlapping
};

}  // namespace shmpi::p2p
