#include "bsend.hpp"

#include <mpi.h>

#include <cassert>
#include <iterator>

namespace shmpi::p2p {

void BsendBuffer::attach(void* buf, std::uint64_t size) {
    base_ = static_cast<std::byte*>(buf);
    size_ = size;
    pending_.clear();  // detach() left it empty
    gaps_.clear();
    gaps_by_size_.clear();
    held_ = 0;
    if (size > 0) add_gap(0, size);
}

void BsendBuffer::detach(Engine& engine) {
    // Only the oldest pending send is looked at on each try: while it is
    // pending, the newer ones need not be asked about, so the whole wait
    // looks at each send about once however long it takes.
    engine.wait_until([this, &engine] {
        while (!pending_.empty() && finished(pending_.front())) {
            give_back(engine, pending_.front());
            pending_.pop_front();
        }
        return pending_.empty();
    });
    base_ = nullptr;
    size_ = 0;
    gaps_.clear();
    gaps_by_size_.clear();
}

void BsendBuffer::give_back(Engine& engine, const Slot& s) {
    if (s.req != nullptr) engine.release(s.req);
    held_ -= s.size;
    add_gap(s.offset, s.size);
}

void BsendBuffer::reclaim_ends(Engine& engine) {
    while (!pending_.empty() && finished(pending_.front())) {
        give_back(engine, pending_.front());
        pending_.pop_front();
    }
    // The newest end too: the message placed last often went straight into
    // the ring (born complete) while an older one, a rendezvous send or one
    // to a receiver that lags, holds the front.
    while (!pending_.empty() && finished(pending_.back())) {
        give_back(engine, pending_.back());
        pending_.pop_back();
    }
}

void BsendBuffer::reclaim_all(Engine& engine) {
    std::erase_if(pending_, [this, &engine](const Slot& s) {
        if (!finished(s)) return false;
        give_back(engine, s);
        return true;
    });
}

std::optional<std::uint64_t> BsendBuffer::take_gap(std::uint64_t need) {
    auto it = gaps_by_size_.lower_bound({need, 0});
    if (it == gaps_by_size_.end()) return std::nullopt;
    const auto [bytes, offset] = *it;
    // The message takes the start of the gap; what is left keeps the two
    // tree nodes, rekeyed in place (node handles: no allocation, and in the
    // common case of one gap, no rebalancing worth the name).
    auto by_size = gaps_by_size_.extract(it);
    auto by_offset = gaps_.extract(offset);
    if (bytes > need) {
        by_size.value() = {bytes - need, offset + need};
        gaps_by_size_.insert(std::move(by_size));
        by_offset.key() = offset + need;
        by_offset.mapped() = bytes - need;
        gaps_.insert(std::move(by_offset));
    }
    held_ += need;
    return offset;
}

void BsendBuffer::add_gap(std::uint64_t offset, std::uint64_t bytes) {
    auto next = gaps_.lower_bound(offset);
    const bool join_next = next != gaps_.end() && next->first == offset + bytes;
    auto prev = next == gaps_.begin() ? gaps_.end() : std::prev(next);
    const bool join_prev = prev != gaps_.end() && prev->first + prev->second == offset;
    if (join_prev) {
        // The gap before grows over this one (and the one after, if it
        // touches): its offset, the map's key, stays.
        auto node = gaps_by_size_.extract({prev->second, prev->first});
        prev->second += bytes;
        if (join_next) {
            gaps_by_size_.erase({next->second, next->first});
            prev->second += next->second;
            gaps_.erase(next);
        }
        node.value() = {prev->second, prev->first};
        gaps_by_size_.insert(std::move(node));
    } else if (join_next) {
        // The gap after starts earlier now: rekey its nodes.
        auto by_size = gaps_by_size_.extract({next->second, next->first});
        auto by_offset = gaps_.extract(next);
        by_offset.key() = offset;
        by_offset.mapped() += bytes;
        by_size.value() = {by_offset.mapped(), offset};
        gaps_.insert(std::move(by_offset));
        gaps_by_size_.insert(std::move(by_size));
    } else {
        gaps_.emplace_hint(next, offset, bytes);
        gaps_by_size_.emplace(bytes, offset);
    }
}

std::byte* BsendBuffer::reserve(Engine& engine, std::uint64_t bytes) {
    if (base_ == nullptr) return nullptr;
    // A reservation that track() never heard of: its send failed to start
    // (the caller threw), so nothing reads the region.
    if (!pending_.empty() && pending_.back().req == nullptr) {
        give_back(engine, pending_.back());
        pending_.pop_back();
    }
    const std::uint64_t need = bytes + MPI_BSEND_OVERHEAD;
    // While the receiver keeps up, the message placed last has gone by the
    // next call: this one takes its place, with no gap to look up, split
    // or merge (those took an eighth of an 8-byte MPI_Bsend's time).
    if (!pending_.empty() && finished(pending_.back()) && pending_.back().size >= need) {
        const Slot last = pending_.back();
        pending_.pop_back();
        if (last.req != nullptr) engine.release(last.req);
        reclaim_ends(engine);  // the others; `last` stays held meanwhile
        if (last.size > need) {
            held_ -= last.size - need;
            add_gap(last.offset + need, last.size - need);
        }
        pending_.push_back(Slot{last.offset, need, nullptr});
        return base_ + last.offset;
    }
    reclaim_ends(engine);
    std::optional<std::uint64_t> at = take_gap(need);
    if (!at) {
        // No gap is large enough: let pending sends move, and take back
        // every completed one, wherever it is in the queue, before refusing.
        engine.progress();
        reclaim_all(engine);
        at = take_gap(need);
    }
    if (!at) return nullptr;
    pending_.push_back(Slot{*at, need, nullptr});
    return base_ + *at;
}

void BsendBuffer::track(std::byte* region, Request* r) {
    assert(!pending_.empty() && pending_.back().req == nullptr &&
           base_ + pending_.back().offset == region);
    (void)region;
    pending_.back().req = r;
}

}  // namespace shmpi::p2p
