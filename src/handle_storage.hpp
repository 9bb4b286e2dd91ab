// Storage for the objects behind MPI handles (communicators, groups,
// datatypes, operations, error handlers, message handles).
//
// A handle is the object's address, and every call checks the object's
// magic number before trusting it.  A program that uses a handle after
// freeing it is erroneous, but it should get an error, not undefined
// behaviour: so the memory of a freed object is never given back to the
// system.  It is filled with kFreedByte and kept for the next object of
// the same size, and a stale handle reads a magic of kFreedMagic ("was
// freed") or, once the memory is reused, a live object (as with MPICH's
// handle pools).  The pool only grows to the most objects of one size
// alive at once.
//
// The blocks come from one range of address space reserved for them (the
// arena), so a handle that is no object's address at all (garbage, or a
// pointer truncated to an int) is told apart before anything reads it:
// may_read() answers from two bounds, and every handle check asks it before
// it reads a magic number.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <new>

namespace shmpi {

/// What the magic field of a freed object reads.
inline constexpr unsigned char kFreedByte = 0xdb;
inline constexpr std::uint32_t kFreedMagic = 0xdbdbdbdbu;

namespace handle_arena {
/// The readable part of the arena, [readable_lo, readable_end); both 0
/// until the first handle object is made.  Written by handle_storage.cpp
/// only: readable_lo once, readable_end as the part grows (under the pool's
/// lock).  Relaxed everywhere: a handle reaches a thread only through the
/// program's own synchronization, which orders the growth that made room for
/// its object before that thread's check; an address nobody was given needs
/// no order at all.
inline std::atomic<std::uintptr_t> readable_lo{0};
inline std::atomic<std::uintptr_t> readable_end{0};
/// may_read() of an address outside the readable part: false inside the
/// reserved range, true outside it only where objects may come from the heap.
bool may_read_outside(std::uintptr_t v) noexcept;
}  // namespace handle_arena

/// Base of every class whose address is an MPI handle: class-wide
/// operator new and delete that take and give back pooled memory.
struct HandleStorage {
    /// Whether `bytes` at `p`, aligned to `align`, lie in memory that this
    /// storage has given out (a live object's, or a kept block's), so that
    /// reading them cannot fault.  Where the arena could not be reserved, or
    /// ran out, objects come from the heap and any pointer outside the
    /// arena is taken on trust, as a plain heap pointer would be.
    static bool may_read(const void* p, std::size_t bytes, std::size_t align) noexcept {
        const auto v = reinterpret_cast<std::uintptr_t>(p);
        if (v % align != 0) return false;
        // Relaxed: see handle_arena::readable_end.
        const std::uintptr_t lo = handle_arena::readable_lo.load(std::memory_order_relaxed);
        const std::uintptr_t end = handle_arena::readable_end.load(std::memory_order_relaxed);
        if (v >= lo && v < end && bytes <= end - v) return true;
        return handle_arena::may_read_outside(v);
    }

    /// may_read() for reading `p` as a T.
    template <class T>
    static bool may_read_as(const void* p) noexcept {
        return may_read(p, sizeof(T), alignof(T));
    }

    static void* operator new(std::size_t bytes);
    static void* operator new(std::size_t bytes, std::align_val_t align);
    static void operator delete(void* p, std::size_t bytes) noexcept;
    static void operator delete(void* p, std::size_t bytes, std::align_val_t align) noexcept;

protected:
    /// For a class whose magic lies in its first `poison` bytes and whose
    /// objects come and go on hot paths (requests): like operator delete,
    /// but only those bytes are filled (filling a 472-byte nonblocking
    /// collective took 3% of a loop of MPI_Iallreduce).
    static void keep_prefix(void* p, std::size_t bytes, std::size_t poison) noexcept;
};

}  // namespace shmpi
