// Scratch: each thread's kept buffers (scratch.hpp).  Thread-local, so no
// locking: threads that run collectives on different communicators at
// once (MPI_THREAD_MULTIPLE) each have their own pool.
#include "coll/scratch.hpp"

#include <algorithm>
#include <utility>

namespace shmpi::coll {
namespace {

struct Kept {
    std::unique_ptr<std::byte[]> buf;
    std::size_t cap = 0;  ///< 0: the slot is empty
};

thread_local Kept t_kept[Scratch::kKeepSlots];

}  // namespace

Scratch::Scratch(std::int64_t bytes) {
    const auto want = static_cast<std::size_t>(std::max<std::int64_t>(bytes, 1));
    // The smallest kept buffer that is large enough.
    Kept* best = nullptr;
    for (Kept& k : t_kept) {
        if (k.cap >= want && (best == nullptr || k.cap < best->cap)) best = &k;
    }
    if (best != nullptr) {
        buf_ = std::move(best->buf);
        cap_ = std::exchange(best->cap, 0);
        return;
    }
    buf_.reset(new std::byte[want]);
    cap_ = want;
}

Scratch::~Scratch() {
    if (cap_ > kKeepMax) return;  // buf_ goes back to the allocator
    // Into an empty slot, else in place of the smallest kept buffer if that
    // is smaller than this one: the pool keeps the largest buffers it saw.
    Kept* smallest = &t_kept[0];
    for (Kept& k : t_kept) {
        if (k.cap < smallest->cap) smallest = &k;
    }
    if (smallest->cap < cap_) {
        smallest->buf = std::move(buf_);
        smallest->cap = cap_;
    }
}

void Scratch::drop_kept() {
    for (Kept& k : t_kept) k = Kept{};
}

std::size_t Scratch::kept_bytes() {
    std::size_t sum = 0;
    for (const Kept& k : t_kept) sum += k.cap;
    return sum;
}

}  // namespace shmpi::coll
