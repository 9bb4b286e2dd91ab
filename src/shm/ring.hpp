// A single-producer single-consumer ring of fixed-size cells in shared memory.
//
// One ring carries the bytes from one rank to another.  Each cell starts with
// an 8-byte sequence word; the rest of the cell is payload.  The producer
// owns the counter `head` and the consumer owns `tail`; both are monotonic
// 64-bit counters (they never wrap in practice), and a cell's slot is
// counter % cells.  Publishing cell number c stores c + 1 in its sequence
// word, so the consumer finds new data by looking at the very cell it will
// read next: a small message costs the consumer one cache line, which holds
// the sequence word, the message header and the first bytes of payload.
// (Zero-filled memory is an empty ring: sequence 0 means "never published".)
// The producer keeps a cached copy of `tail` and re-reads the real one only
// when the cache says the ring is full.
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
    /// head: cells published so far.  Written by the producer only; nobody
    /// else needs it (the consumer watches the cells' sequence words), so
    /// relaxed.  free_cells() reads it for tests and diagnostics.
    alignas(kLine) std::atomic<std::uint64_t> head;
    /// Producer's private copy of `tail`; no other process touches it.
    std::uint64_t cached_tail;

    /// Consumer's line.
    /// tail: cells consumed so far.  Written by the consumer only, with
    /// release: the store hands the consumed cells back for reuse, after the
    /// consumer's last read of them.
    alignas(kLine) std::atomic<std::uint64_t> tail;

    /// Stall line: written by the producer only, rarely, so the consumer
    /// keeps it in its cache.  1 after a try_claim() found the ring full, 0
    /// after the next one that succeeded.  The consumer reads it after a
    /// release, to wake a producer that sleeps for room.
    alignas(kLine) std::atomic<std::uint32_t> producer_stalled;
};

/// Each cell starts with this word: the number of the cell's last publish
/// plus one.  Written by the producer (release), read by the consumer
/// (acquire): it publishes the cell's payload.
inline constexpr std::uint32_t kCellSeqBytes = 8;

static_assert(sizeof(RingControl) == 3 * kLine,
              "head, tail and the stall flag each own a line pair, so producer and consumer "
              "never write the same one in steady state");
static_assert(std::atomic<std::uint64_t>::is_always_lock_free,
              "ring counters are shared between processes and must be lock-free");

/// Bytes one ring needs for `cells` cells of `cell_bytes` each.
constexpr std::size_t ring_bytes(std::uint32_t cells, std::uint32_t cell_bytes) {
    return sizeof(RingControl) + std::size_t{cells} * cell_bytes;
}

/// A process-local view of one ring: the control block and the cells, as
/// mapped in this process.  Cheap to copy; owns nothing.  Cell pointers it
/// hands out point past the sequence word, at cell_bytes() of payload.
class Ring {
public:
    Ring() = default;
    /// `base` points at a RingControl followed by `cells` cells of
    /// `cell_bytes` (sequence word included); `cells` must be a power of two.
    /// Zero-filled memory is an empty ring.
    Ring(void* base, std::uint32_t cells, std::uint32_t cell_bytes)
        : ctl_(static_cast<RingControl*>(base)),
          cells_(static_cast<std::byte*>(base) + sizeof(RingControl)),
          mask_(cells - 1),
          stride_(cell_bytes) {
        assert(cells != 0 && (cells & (cells - 1)) == 0 && "ring cell count must be a power of two");
        assert(cell_bytes > kCellSeqBytes && cell_bytes % 8 == 0 && "cells hold a sequence word and payload");
    }

    /// Payload bytes in one cell.
    std::uint32_t cell_bytes() const { return stride_ - kCellSeqBytes; }
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
        return cell(head) + kCellSeqBytes;
    }

    /// Publishes the cell returned by the last try_claim().
    void publish() {
        const std::uint64_t head = ctl_->head.load(std::memory_order_relaxed);  // own counter
        // Release: the cell's payload is visible before its sequence word.
        seq(head).store(head + 1, std::memory_order_release);
        ctl_->head.store(head + 1, std::memory_order_relaxed);  // own counter
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
        // Acquire: pairs with publish(); the payload written before the
        // sequence word is visible to us.
        if (seq(tail).load(std::memory_order_acquire) != tail + 1) return nullptr;
        return cell(tail) + kCellSeqBytes;
    }

    /// True when a cell is waiting.
    bool has_data() { return try_peek() != nullptr; }

    /// Hands the cell returned by the last try_peek() back to the producer.
    void release() {
        const std::uint64_t tail = ctl_->tail.load(std::memory_order_relaxed);  // own counter
        // Release: our reads of the cell happen before the producer reuses it.
        ctl_->tail.store(tail + 1, std::memory_order_release);
    }

    /// Consumer side: true when the producer last found the ring full.  Call
    /// after release(); see RingControl::producer_stalled.
    bool producer_stalled() const {
        return ctl_->producer_stalled.load(std::memory_order_relaxed) != 0;
    }

    // ---- observer side (the launcher's deadlock check) ----

    /// Cells published so far, and cells consumed so far.  Relaxed: an
    /// observer only compares them with what it read before.
    std::uint64_t published() const { return ctl_->head.load(std::memory_order_relaxed); }
    std::uint64_t consumed() const { return ctl_->tail.load(std::memory_order_relaxed); }

private:
    std::byte* cell(std::uint64_t counter) const {
        return cells_ + (counter & mask_) * stride_;
    }
    std::atomic<std::uint64_t>& seq(std::uint64_t counter) const {
        return *reinterpret_cast<std::atomic<std::uint64_t>*>(cell(counter));
    }

    RingControl* ctl_ = nullptr;
    std::byte* cells_ = nullptr;
    std::uint32_t mask_ = 0;
    std::uint32_t stride_ = 0;  ///< bytes per cell, sequence word included
};

}  // namespace shmpi::shm
