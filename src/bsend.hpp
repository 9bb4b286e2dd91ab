// The buffer of buffered-mode sends (MPI_Buffer_attach, MPI_Bsend).
//
// MPI_Bsend packs the message into the buffer the user attached and sends
// it from there, so the call returns at once whatever the receiver does.
// Each message takes its packed bytes plus MPI_BSEND_OVERHEAD of the
// buffer, the rule by which MPI tells users to size it; the space comes
// back once the send from it has completed.  One buffer per process, used by
// one thread at a time (the C boundary's lock under MPI_THREAD_MULTIPLE,
// shm/gate.hpp; the program's own order below that level): every field
// below is written only by the thread inside MPI, in MPI_Buffer_attach,
// MPI_Buffer_detach, MPI_Finalize (detach) and the buffered sends
// (reserve, track).
//
// The cost of a message must not grow with the buffer or with the number
// of messages sent before it (an MPI_Bsend with a 100 MiB buffer once took
// 70 us, 280 times one with MPICH, because completed sends stayed in a list
// scanned from its start until the buffer filled).  So, as in MPI's model
// implementation (MPI-3.1 section 3.6.2), the messages whose space is held
// wait in a queue in the order they were buffered, and before a message is
// placed, the completed ones at either end of the queue leave.  Sends to one
// destination complete in order, so in the usual case that takes back all
// that is complete, in O(1) a message.  Unlike the model, a send that
// completes before older ones (small eager messages behind a large
// rendezvous one, or messages to a quick receiver behind those to a slow
// one) does not keep its space until they are done: when no gap holds the
// message, the whole queue is searched for completed sends before the
// message is refused.  That pass costs O(pending) but takes back everything
// complete, so it is frequent only while the buffer is nearly full of sends
// that are truly pending (MPICH looks at every pending send on every call).
// The free space is kept as merged gaps, by address and by size.  A message
// takes the place of the newest one when that one is complete and large
// enough (the usual case, which then touches no gap), else the start of the
// smallest gap that holds it (the lowest of equal ones), in O(log gaps).
// Once the sends are complete the buffer is one gap again and the next
// message goes at its start, so a program whose receiver keeps up touches
// only the first pages of a large buffer.
//
// Short of moving messages, which pending sends forbid, no placement avoids
// fragmentation in every case (MPI's model refuses more than this); what
// does hold: messages of one size always fit a buffer sized by the rule (a
// gap starts at 0 or where a message ends, so at a multiple of their size),
// and small messages reuse the space of complete ones while larger, older
// ones stay pending (test/mpi/p2p_bsend_space.c).
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <set>
#include <utility>

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
    /// (after taking back the space of every completed send) has no gap that
    /// large.  The caller packs the message there, starts the send and hands
    /// its request to track() before asking for more room.
    std::byte* reserve(Engine& engine, std::uint64_t bytes);
    /// The send of the message the last reserve() placed at `region`; its
    /// space comes back once `r` completes.  The buffer owns `r` from now on.
    void track(std::byte* region, Request* r);
    /// Bytes of the buffer not held by a pending message (nor by one whose
    /// completion has not been noticed yet: exact right after a failed
    /// reserve(), which takes back everything complete).
    std::uint64_t free_bytes() const { return size_ - held_; }

private:
    struct Slot {
        std::uint64_t offset;
        std::uint64_t size;      ///< bytes taken, MPI_BSEND_OVERHEAD included
        Request* req;            ///< the send from it; nullptr until track()
    };
    /// True when the send from `s` is over (or never started: see reserve()).
    static bool finished(const Slot& s) { return s.req == nullptr || s.req->done; }
    /// Releases the request of `s` and puts its bytes back among the gaps.
    void give_back(Engine& engine, const Slot& s);
    /// Takes back the completed slots at both ends of pending_ (O(1) each).
    void reclaim_ends(Engine& engine);
    /// Takes back every completed slot (O(pending)).
    void reclaim_all(Engine& engine);
    /// Carves `need` bytes out of the smallest gap that holds them (the
    /// lowest such); its offset, or nothing when no gap is that large.
    std::optional<std::uint64_t> take_gap(std::uint64_t need);
    /// Makes [offset, offset + bytes) a gap, merged with the gaps it touches.
    void add_gap(std::uint64_t offset, std::uint64_t bytes);

    std::byte* base_ = nullptr;
    std::uint64_t size_ = 0;
    /// The messages whose space is held, oldest first (the order of
    /// reserve()); some may have completed since the last look.
    std::deque<Slot> pending_;
    /// The free space: offset -> bytes, never adjacent (merged) nor
    /// overlapping; together with pending_ it covers the buffer exactly.
    std::map<std::uint64_t, std::uint64_t> gaps_;
    /// The same gaps as (bytes, offset), for the best fit.
    std::set<std::pair<std::uint64_t, std::uint64_t>> gaps_by_size_;
    /// Bytes held by the slots of pending_.
    std::uint64_t held_ = 0;
};

}  // namespace shmpi::p2p
