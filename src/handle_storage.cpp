#include "handle_storage.hpp"
#include "arith.hpp"

#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <map>
#include <mutex>
#include <utility>
#include <vector>

#if defined(__SANITIZE_ADDRESS__)
#define SHMPI_LSAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SHMPI_LSAN 1
#endif
#endif
#ifdef SHMPI_LSAN
#include <sanitizer/lsan_interface.h>
#endif

namespace shmpi {
namespace {

/// Address space reserved for handle objects: at most this much, and at most
/// an eighth of RLIMIT_AS where that is set.  Reserving costs no memory;
/// only the part given out so far is readable and writable.
constexpr std::size_t kReserve = std::size_t{16} << 30;
/// The readable part grows by at least this much at a time.
constexpr std::size_t kGrow = std::size_t{1} << 20;

/// The range handle objects are carved from.  `base_` and `size_` are set
/// once, before any block is carved, and never change; `next_` and the
/// growth of handle_arena::readable_end (the end of the readable part)
/// happen under Pool::lock.
class Arena {
public:
    Arena() {
        std::size_t size = kReserve;
        rlimit as{};
        if (getrlimit(RLIMIT_AS, &as) == 0 && as.rlim_cur != RLIM_INFINITY) {
            size = std::min<std::size_t>(size, as.rlim_cur / 8);
        }
        const std::size_t page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
        size -= size % page;
        if (size < kGrow) return;
        void* p = mmap(nullptr, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (p == MAP_FAILED) return;  // no arena: handles come from the heap, on trust
        base_ = static_cast<char*>(p);
        size_ = size;
        page_ = page;
        next_ = base_;
        handle_arena::readable_end.store(reinterpret_cast<std::uintptr_t>(base_), std::memory_order_relaxed);
        handle_arena::readable_lo.store(reinterpret_cast<std::uintptr_t>(base_), std::memory_order_relaxed);
#ifdef SHMPI_LSAN
        // Live objects here hold the library's heap blocks; LeakSanitizer
        // scans the readable part of a root region and skips the rest.
        __lsan_register_root_region(base_, size_);
#endif
    }

    /// A block of `bytes` aligned to `align`, or nullptr where the arena has
    /// no room left.  The caller holds Pool::lock.
    void* carve(std::size_t bytes, std::size_t align) {
        if (base_ == nullptr) return spill();
        const auto top = reinterpret_cast<std::uintptr_t>(base_) + size_;
        const std::uintptr_t start = round_up(reinterpret_cast<std::uintptr_t>(next_), align);
        if (start > top || bytes > top - start) return spill();
        // Relaxed: see handle_arena::readable_end; only this function, under
        // the lock, stores it.
        const std::uintptr_t end = handle_arena::readable_end.load(std::memory_order_relaxed);
        if (start + bytes > end) {
            std::size_t grow = std::max(kGrow, static_cast<std::size_t>(start + bytes - end));
            grow = round_up(grow, page_);
            grow = std::min(grow, static_cast<std::size_t>(top - end));
            if (mprotect(reinterpret_cast<void*>(end), grow, PROT_READ | PROT_WRITE) != 0) return spill();
            handle_arena::readable_end.store(end + grow, std::memory_order_relaxed);
        }
        char* block = reinterpret_cast<char*>(start);
        next_ = block + bytes;
        return block;
    }

    bool may_read_outside(std::uintptr_t v) const noexcept {
        if (base_ == nullptr) return true;
        if (v >= reinterpret_cast<std::uintptr_t>(base_) && v - reinterpret_cast<std::uintptr_t>(base_) < size_) {
            return false;  // reserved, and not (yet) readable
        }
        // Relaxed, as readable_end: an object spilled to the heap was made
        // after this store, and its handle came here through the program.
        return spilled_.load(std::memory_order_relaxed);
    }

private:
    void* spill() {
        spilled_.store(true, std::memory_order_relaxed);
        return nullptr;
    }

    char* base_ = nullptr;
    std::size_t size_ = 0;
    std::size_t page_ = 0;
    char* next_ = nullptr;
    /// Set once a block had to come from the heap: from then on a pointer
    /// outside the arena may be a live object.
    std::atomic<bool> spilled_{false};
};

Arena& arena() {
    // Never destroyed, like the pool: handles outlive static destructors.
    static Arena* a = new Arena;
    return *a;
}

struct Pool {
    // Different threads make and free handles, one at a time (the C
    // boundary's lock serializes them under MPI_THREAD_MULTIPLE); this lock
    // keeps that race-free without ordering them, and covers the few made
    // outside MPI calls (MPI_T's).
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
        if (void* block = arena().carve(bytes, align)) return block;
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

bool handle_arena::may_read_outside(std::uintptr_t v) noexcept { return arena().may_read_outside(v); }

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
