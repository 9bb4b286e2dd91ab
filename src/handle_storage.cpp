#include "handle_storage.hpp"

#include <cstring>
#include <map>
#include <mutex>
#include <utility>
#include <vector>

namespace shmpi {
namespace {

struct Pool {
    // MPI_THREAD_SERIALIZED lets different threads make and free handles,
    // one at a time; the lock keeps that race-free without ordering them.
    std::mutex lock;
    /// Freed blocks by (size, alignment).
    std::map<std::pair<std::size_t, std::size_t>, std::vector<void*>> spare;
};

Pool& pool() {
    // Never destroyed: handles may be freed from atexit handlers and static
    // destructors after this file's statics would be gone.
    static Pool* p = new Pool;
    return *p;
}

void* take(std::size_t bytes, std::size_t align) {
    Pool& p = pool();
    {
        std::lock_guard guard(p.lock);
        auto it = p.spare.find({bytes, align});
        if (it != p.spare.end() && !it->second.empty()) {
            void* block = it->second.back();
            it->second.pop_back();
            return block;
        }
    }
    return align > __STDCPP_DEFAULT_NEW_ALIGNMENT__ ? ::operator new(bytes, std::align_val_t{align})
                                                      : ::operator new(bytes);
}

void keep(void* block, std::size_t bytes, std::size_t align) noexcept {
    if (block == nullptr) return;
    // The object's destructor has run: the bytes are ours again.
    std::memset(block, kFreedByte, bytes);
    Pool& p = pool();
    std::lock_guard guard(p.lock);
    try {
        p.spare[{bytes, align}].push_back(block);
    } catch (...) {
        // No memory to remember the block: leak it rather than free it, so
        // that a stale handle still reads our bytes.
    }
}

}  // namespace

void* HandleStorage::operator new(std::size_t bytes) { return take(bytes, __STDCPP_DEFAULT_NEW_ALIGNMENT__); }

void* HandleStorage::operator new(std::size_t bytes, std::align_val_t align) {
    return take(bytes, static_cast<std::size_t>(align));
}

void HandleStorage::operator delete(void* p, std::size_t bytes) noexcept {
    keep(p, bytes, __STDCPP_DEFAULT_NEW_ALIGNMENT__);
}

void HandleStorage::operator delete(void* p, std::size_t bytes, std::align_val_t align) noexcept {
    keep(p, bytes, static_cast<std::size_t>(align));
}

}  // namespace shmpi
