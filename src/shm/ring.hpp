// A single-producer single-consumer ring of fixed-size cells in shared memory.
//
// One ring carries the bytes from one rank to another.  The producer owns
// `head` and the consumer owns `tail`; both are monotonic 64-bit counters (they
// never wrap in practice: 2^64 cells), and a cell's slot is counter % cells.
// Each side keeps a cached copy of the other side's counter in its own line
// and re-reads the real one only when the cache says the ring is full (for the
// producer) or empty (for the consumer), so a steady stream touches the shared
// counter lines rarely.
//
// The ring moves bytes and nothing else: what a cell means is the business of
// the layer above.
#pragma once

#include <atomic>
#include <cassert>
#include <cstddef>
#include <cstdint>

#include "shm/layout.hpp"

namespace shmpi::shm {

/// The control block at the start of each ring.  The cells follow it.
struct RingControl {
    /// Producer's line.
    /// head: cells published so far.  Written by the producer only, with
    /// release: the store publishes the contents of every cell below it.
    alignas(kLine) std::atomic<std::uint64_t> head;
    /// Producer's private copy of `tail`; no other process touches it.
    std::uint64_t cached_tail;
    /// Written by the producer only: 1 after a try_claim() found the ring
    /// full, 0 after the next one that succeeded.  The consumer reads it after
    /// a release and a seq_cst fence, to wake a producer that sleeps for room.
    std::atomic<std::uint32_t> producer_stalled;

    /// Consumer's line.
    /// tail: cells consumed so far.  Written by the consumer only, with
    /// release: the store hands the consumed cells back for reuse, after the
    /// consumer's last read of them.
    alignas(kLine) std::atomic<std::uint64_t> tail;
    /// Consumer's private copy of `head`; no other process touches it.
    std::uint64_t cached_head;
};

static_assert(sizeof(RingControl) == 2 * kLine,
              "head and tail each own a line pair, so producer and consumer never share one");
static_assert(std::atomic<std::uint64_t>::is_always_lock_free,
              "ring counters are shared between processes and must be lock-free");

/// Bytes one ring needs for `cells` cells of `cell_bytes` each.
constexpr std::size_t ring_bytes(std::uint32_t cells, std::uint32_t cell_bytes) {
    return sizeof(RingControl) + std::size_t{cells} * cell_bytes;
}

/// A process-local view of one ring: the control block and the cells, as
/// mapped in this process.  Cheap to copy; owns nothing.
class Ring {
public:
    Ring() = default;
    /// `base` points at a RingControl followed by `cells` cells of
    /// `cell_bytes`; `cells` must be a power of two.  Zero-filled memory is an
    /// empty ring.
    Ring(void* base, std::uint32_t cells, std::uint32_t cell_bytes)
        : ctl_(static_cast<RingControl*>(base)),
          cells_(static_cast<std::byte*>(base) + sizeof(RingControl)),
          mask_(cells - 1),
          cell_bytes_(cell_bytes) {
        assert(cells != 0 && (cells & (cells - 1)) == 0 && "ring cell count must be a power of two");
    }

    std::uint32_t cell_bytes() const { return cell_bytes_; }
    std::uint32_t capacity() const { return mask_ + 1; }

    // ---- producer side ----

    /// The next free cell, or nullptr when the ring is full.  The caller fills
    /// it and then calls publish(); until then the consumer cannot see it.
    std::byte* try_claim() {
        const std::uint64_t head = ctl_->head.load(std::memory_order_relaxed);  // own counter
        if (head - ctl_->cached_tail > mask_) {
            // Acquire: the consumer's reads of the cells it released happen
            // before we overwrite them.
            ctl_->cached_tail = ctl_->tail.load(std::memory_order_acquire);
            if (head - ctl_->cached_tail > mask_) {
                // Relaxed: the waker orders this with a seq_cst fence on each side.
                ctl_->producer_stalled.store(1, std::memory_order_relaxed);
                return nullptr;
            }
            if (ctl_->producer_stalled.load(std::memory_order_relaxed) != 0) {
                ctl_->producer_stalled.store(0, std::memory_order_relaxed);  // own field
            }
        }
        return cell(head);
    }

    /// Publishes the cell returned by the last try_claim().
    void publish() {
        const std::uint64_t head = ctl_->head.load(std::memory_order_relaxed);  // own counter
        // Release: the cell's contents are visible before the new head.
        ctl_->head.store(head + 1, std::memory_order_release);
    }

    /// Free cells as the producer sees them now (re-reads tail).
    std::uint32_t free_cells() const {
        const std::uint64_t head = ctl_->head.load(std::memory_order_relaxed);
        const std::uint64_t tail = ctl_->tail.load(std::memory_order_acquire);
        return static_cast<std::uint32_t>(capacity() - (head - tail));
    }

    // ---- consumer side ----

    /// The oldest published cell, or nullptr when the ring is empty.  The
    /// caller reads it and then calls release().
    const std::byte* try_peek() {
        const std::uint64_t tail = ctl_->tail.load(std::memory_order_relaxed);  // own counter
        if (tail == ctl_->cached_head) {
            // Acquire: pairs with publish(); the cell contents written before
            // the producer's head store are visible to us.
            ctl_->cached_head = ctl_->head.load(std::memory_order_acquire);
            if (tail == ctl_->cached_head) return nullptr;
        }
        return cell(tail);
    }

    /// True when a cell is waiting; reads only the consumer's cached copy
    /// unless that says empty.
    bool has_data() { return try_peek() != nullptr; }

    /// Hands the cell returned by the last try_peek() back to the producer.
    void release() {
        const std::uint64_t tail = ctl_->tail.load(std::memory_order_relaxed);  // own counter
        // Release: our reads of the cell happen before the producer reuses it.
        ctl_->tail.store(tail + 1, std::memory_order_release);
    }

    /// Consumer side: true when the producer last found the ring full.  Call
    /// after release() and a seq_cst fence; see RingControl::producer_stalled.
    bool producer_stalled() const {
        return ctl_->producer_stalled.load(std::memory_order_relaxed) != 0;
    }

private:
    std::byte* cell(std::uint64_t counter) const {
        return cells_ + (counter & mask_) * cell_bytes_;
    }

    RingControl* ctl_ = nullptr;
    std::byte* cells_ = nullptr;
    std::uint32_t mask_ = 0;
    std::uint32_t cell_bytes_ = 0;
};

}  // namespace shmpi::shm
