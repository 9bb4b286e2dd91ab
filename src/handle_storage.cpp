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
    using Key = std::pair<std::size_t, std::size_t>;
    /// Freed blocks by (size, alignment).
    std::map<Key, std::vector<void*>> spare;
    /// The list of the size used last (map nodes never move): a loop of
    /// nonblocking calls makes and frees one size over and over.
    Key last_key{0, 0};
    std::vector<void*>* last = nullptr;
    std::vector<void*>& list(const Key& k) {
        if (last == nullptr || last_key != k) {
            last = &spare[k];
            last_key = k;
        }
        return *last;
    }
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
        std::vector<void*>& l = p.list({bytes, align});
        if (!l.empty()) {
            void* block = l.back();
            l.pop_back();
            return block;
        }
    }
    return align > __STDCPP_DEFAULT_NEW_ALIGNMENT__ ? ::operator new(bytes, std::align_val_t{align})
                                                      : ::operator new(bytes);
}

void keep(void* block, std::size_t bytes, std::size_t align, std::size_t poison) noexcept {
    if (block == nullptr) return;
    // The object's destructor has run: the bytes are ours again.
    std::memset(block, kFreedByte, poison < bytes ? poison : bytes);
    Pool& p = pool();
    std::lock_guard guard(p.lock);
    try {
        p.list({bytes, align}).push_back(block);
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
    keep(p, bytes, __STDCPP_DEFAULT_NEW_ALIGNMENT__, bytes);
}

void HandleStorage::operator delete(void* p, std::size_t bytes, std::align_val_t align) noexcept {
    keep(p, bytes, static_cast<std::size_t>(align), bytes);
}

void HandleStorage::keep_prefix(void* p, std::size_t bytes, std::size_t poison) noexcept {
    keep(p, bytes, __STDCPP_DEFAULT_NEW_ALIGNMENT__, poison);
}

}  // namespace shmpi
