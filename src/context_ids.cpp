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
    // A word of the bitmap at a time, so that the cost is the bitmap's
    // length in words, not the number of held ids: members of many
    // communicators of one member each hold interleaved ids, and a walk
    // from one held id to the next made each MPI_Comm_create 0.2 ms slower
    // per 10,000 live communicators.
    if (count == 0) count = 1;
    const std::uint64_t first = std::max(from, kFirst);
    std::uint64_t start = first;  // where the free run being measured begins
    std::uint64_t w = (first - kFirst) / 64;
    // Ids before `first` in its word count as held.
    std::uint64_t below = (std::uint64_t{1} << ((first - kFirst) % 64)) - 1;
    for (; w < bits_.size(); ++w, below = 0) {
        const std::uint64_t word = bits_[w] | below;
        if (word == 0) continue;  // the run goes on through it
        const std::uint64_t base = kFirst + 64 * w;
        // The run ends at the word's lowest held id.
        if (base + static_cast<std::uint64_t>(std::countr_zero(word)) >= start + count) break;
        // Runs between two held ids of the word are at most 62 long.
        if (count <= 62) {
            for (std::uint64_t rest = word; rest != 0;) {
                const int low = std::countr_zero(rest);
                rest &= rest - 1;
                if (rest == 0) break;  // above the highest: the run that goes on
                const int next = std::countr_zero(rest);
                if (static_cast<std::uint32_t>(next - low - 1) >= count) {
                    return static_cast<std::uint32_t>(base + static_cast<std::uint64_t>(low) + 1);
                }
            }
        }
        // A new run starts above the word's highest held id.
        start = base + 64 - static_cast<std::uint64_t>(std::countl_zero(word));
    }
    // Past the bitmap every id is free.
    return start + count <= kEnd ? static_cast<std::uint32_t>(start) : kEnd;
}

std::uint32_t ContextIds::propose(std::uint32_t from, std::uint32_t count, const Proposal* self) const {
    const std::uint32_t run = count > kProposalRun ? count : kProposalRun;
    for (;;) {
        const std::uint32_t c = next_free(from, run);
        if (c >= kEnd) return c;
        bool clear = true;
        for (const Pending& p : pending_) {
            if (p.owner != self && p.first < c + run && c < p.first + p.count) {
                from = std::max(from, p.first + p.count);  // past it, and look again
                clear = false;
            }
        }
        if (clear) return c;
    }
}

void ContextIds::Proposal::add(std::uint32_t first, std::uint32_t count) const {
    ids_.pending_.push_back({first, count, this});
}

void ContextIds::Proposal::keep(std::uint32_t first, std::uint32_t count) const {
    ids_.unpend(this);
    ids_.pending_.push_back({first, count, nullptr});
}

void ContextIds::unpend(const Proposal* owner) {
    std::erase_if(pending_, [owner](const Pending& p) { return p.owner == owner; });
}

void ContextIds::forget(std::uint32_t c) {
    std::erase_if(pending_, [c](const Pending& p) { return p.owner == nullptr && p.first <= c && c < p.first + p.count; });
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
