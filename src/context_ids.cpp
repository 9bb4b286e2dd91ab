#include "context_ids.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>

#include "errors.hpp"

namespace shmpi {

bool ContextIds::held(std::uint32_t c) const {
    if (!agreed(c)) return false;
    const std::uint32_t i = c - kFirst;
    return i / 64 < bits_.size() && ((bits_[i / 64] >> (i % 64)) & 1u) != 0;
}

std::uint32_t ContextIds::next_free(std::uint32_t from, std::uint32_t count) const {
    if (count == 0) count = 1;
    std::uint64_t c = std::max(from, kFirst);
    while (c + count <= kEnd) {
        // The first held id of the run c .. c + count - 1, if any.
        std::uint64_t busy = c;
        while (busy < c + count && !held(static_cast<std::uint32_t>(busy))) ++busy;
        if (busy == c + count) return static_cast<std::uint32_t>(c);
        // Skip past it, and past the held ids right after it, a word at a
        // time where the word is full.
        c = busy + 1;
        for (;;) {
            const std::uint64_t i = c - kFirst;
            if (i / 64 >= bits_.size()) break;  // beyond the bitmap: all free
            const std::uint64_t word = bits_[i / 64] >> (i % 64);
            const auto run = static_cast<std::uint64_t>(std::countr_one(word));
            c += run;
            if (run < 64 - i % 64) break;  // a free id inside this word
        }
    }
    return kEnd;
}

std::size_t ContextIds::held_count() const {
    std::size_t n = 0;
    for (const std::uint64_t w : bits_) n += static_cast<std::size_t>(std::popcount(w));
    return n;
}

void ContextIds::hold(std::uint32_t c) {
    if (!agreed(c)) return;
    if (held(c)) {
        throw MpiError(MPI_ERR_INTERN, fmt::format("context id {} is already held by a communicator "
                                                   "of this process",
                                                   c));
    }
    const std::uint32_t i = c - kFirst;
    if (i / 64 >= bits_.size()) bits_.resize(i / 64 + 1, 0);
    bits_[i / 64] |= std::uint64_t{1} << (i % 64);
}

void ContextIds::drop(std::uint32_t c) {
    if (shared_users_ != nullptr && c >= shm::kSharedContextBase &&
        c < shm::kSharedContextBase + shm::kSharedContextSlots) {
        // Relaxed: see SegmentHeader::shared_context_users.
        shared_users_[c - shm::kSharedContextBase].fetch_sub(1, std::memory_order_relaxed);
        return;
    }
    if (!held(c)) return;
    const std::uint32_t i = c - kFirst;
    bits_[i / 64] &= ~(std::uint64_t{1} << (i % 64));
    // Keep the bitmap no longer than its last held id needs.
    while (!bits_.empty() && bits_.back() == 0) bits_.pop_back();
}

std::uint32_t ContextIds::claim_shared(std::uint32_t count, std::uint32_t users) {
    if (shared_users_ == nullptr || count == 0 || users == 0) return 0;
    std::atomic<std::uint32_t>* slots = shared_users_;
    for (std::uint32_t i = 0; i + count <= shm::kSharedContextSlots; ++i) {
        std::uint32_t got = 0;
        while (got < count) {
            std::uint32_t expected = 0;
            // Relaxed: see SegmentHeader::shared_context_users.  The load
            // first, so that held ids cost no exclusive line.
            if (slots[i + got].load(std::memory_order_relaxed) != 0 ||
                !slots[i + got].compare_exchange_strong(expected, users, std::memory_order_relaxed)) {
                break;
            }
            ++got;
        }
        if (got == count) return shm::kSharedContextBase + i;
        // Give back the ones of this run taken already (nobody else touches
        // a slot while it holds our nonzero count), and go on after the
        // one that was held.
        for (std::uint32_t k = 0; k < got; ++k) slots[i + k].store(0, std::memory_order_relaxed);
        i += got;
    }
    return 0;
}

void ContextIds::throw_exhausted(const char* fn, std::uint32_t count) {
    throw MpiError(MPI_ERR_OTHER,
                   fmt::format("{}: out of context ids: {} free on every member (ids {:#x} to {:#x}; "
                               "each communicator not yet freed holds one, an intercommunicator two)",
                               fn, count == 1 ? "no id is" : "no two consecutive ids are", kFirst, kEnd - 1));
}

}  // namespace shmpi
