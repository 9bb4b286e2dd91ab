#include "bsend.hpp"

#include <mpi.h>

#include <algorithm>

namespace shmpi::p2p {

void BsendBuffer::attach(void* buf, std::uint64_t size) {
    base_ = static_cast<std::byte*>(buf);
    size_ = size;
    slots_.clear();
}

void BsendBuffer::detach(Engine& engine) {
    engine.wait_until([this] {
        return std::all_of(slots_.begin(), slots_.end(), [](const Slot& s) { return s.req->done; });
    });
    reclaim(engine);
    base_ = nullptr;
    size_ = 0;
}

void BsendBuffer::reclaim(Engine& engine) {
    std::erase_if(slots_, [&engine](const Slot& s) {
        if (s.req == nullptr || !s.req->done) return false;
        engine.release(s.req);
        return true;
    });
}

std::byte* BsendBuffer::reserve(Engine& engine, std::uint64_t bytes) {
    if (base_ == nullptr) return nullptr;
    const std::uint64_t need = bytes + MPI_BSEND_OVERHEAD;
    for (int attempt = 0; attempt < 2; ++attempt) {
        // First fit: the gaps before each slot, then the one after the last.
        std::uint64_t at = 0;
        auto it = slots_.begin();
        for (;; ++it) {
            const std::uint64_t end = it == slots_.end() ? size_ : it->offset;
            if (end - at >= need) {
                slots_.insert(it, Slot{at, need, nullptr});
                return base_ + at;
            }
            if (it == slots_.end()) break;
            at = it->offset + it->size;
        }
        // No room: let pending sends move, take back what they freed, and
        // look once more.
        engine.progress();
        reclaim(engine);
    }
    return nullptr;
}

void BsendBuffer::track(std::byte* region, Request* r) {
    const auto offset = static_cast<std::uint64_t>(region - base_);
    for (Slot& s : slots_) {
        if (s.offset == offset) {
            s.req = r;
            return;
        }
    }
}

std::uint64_t BsendBuffer::free_bytes() const {
    std::uint64_t used = 0;
    for (const Slot& s : slots_) used += s.size;
    return size_ - used;
}

}  // namespace shmpi::p2p
