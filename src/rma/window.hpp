// One-sided communication (MPI-3.1 chapter 11): a window over memory of every
// member of a communicator, the operations that reach it (put, get, the
// accumulates), and the synchronisation that brackets them (fence, post /
// start / complete / wait, lock / unlock).
//
// Where the memory is.  MPI_Win_allocate and MPI_Win_allocate_shared put
// every member's part in one shared memory object (the window's "area"),
// which every member maps: an operation is a copy between the origin buffer
// and the target's part, done by the origin.  MPI_Win_create and
// MPI_Win_create_dynamic expose memory the program owns, which no other
// process maps: the origin copies with process_vm_writev/readv into the
// target's address space (the kernel's copies the transport also uses).
// Either way the target takes no part, so passive-target epochs need no
// progress from it, and every operation is complete when its call returns
// (flushes only order memory).  The model is MPI_WIN_UNIFIED.
//
// The control block.  Every window also has shared control words, at the
// start of its area (a separate small object for the create flavours):
//   TargetLine[size]: per target, its lock word, the count of ranks waiting
//     for it, and the mutex that makes accumulates to it atomic;
//   post[size * size]: post[t * size + o] counts the MPI_Win_post calls of
//     target t whose group held origin o (written by t only);
//   done[size * size]: done[t * size + o] counts origin o's MPI_Win_complete
//     calls whose group held t (written by o only).
// Sizes, displacement units and addresses of the parts are exchanged with
// an allgather at creation and kept privately: nothing read from shared
// memory is used as an address or a length.
//
// The window's own communicator.  Creation duplicates the caller's
// communicator (a new context), and the window's collectives (fence,
// free) run on that duplicate, so they never meet the program's traffic.
#pragma once

#include <mpi.h>
#include <sys/uio.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "attributes.hpp"
#include "communicator.hpp"
#include "dtype/datatype.hpp"
#include "handle_storage.hpp"
#include "op.hpp"

namespace shmpi {
class Runtime;
}

namespace shmpi::rma {

enum class Flavor { Create = MPI_WIN_FLAVOR_CREATE, Allocate = MPI_WIN_FLAVOR_ALLOCATE,
                    Dynamic = MPI_WIN_FLAVOR_DYNAMIC, Shared = MPI_WIN_FLAVOR_SHARED };

/// One target's control words, a cache line of their own.  Written by any
/// member of the window (they are the shared state of locks and
/// accumulates), never by anyone else.
struct alignas(64) TargetLine {
    /// 0: free; n > 0: n shared holders; kExclusive: one exclusive holder.
    /// Taken with a compare-exchange (acquire: the holder then sees what
    /// the previous holders wrote), given back with release.
    std::atomic<std::int32_t> lock{0};
    /// Members waiting in MPI_Win_lock(_all) for `lock`: an unlock with
    /// waiters wakes the members that sleep (relaxed: a hint; the waiters
    /// look at `lock` again before every sleep).
    std::atomic<std::uint32_t> waiters{0};
    /// The accumulate mutex of this target: 0 free, 1 held.  Acquire on
    /// taking, release on giving back: it orders the target bytes an
    /// accumulate read-modify-writes.
    std::atomic<std::uint32_t> acc{0};
    static constexpr std::int32_t kExclusive = -1;
};

/// A window.  Its handle is its address.  Every method that communicates is
/// called by the C boundary after the arguments were checked there, except
/// for what only the window can tell (epochs, ranges), which it checks
/// itself and reports with MpiError naming `fn`.
class Window : public HandleStorage {
public:
    static constexpr std::uint32_t kMagic = 0x57494e44;  // "WIND"

    /// Collective over `comm`, the caller's duplicate of the creator's
    /// intracommunicator, which the window keeps: makes the window.
    /// `base` is the caller's memory for Flavor::Create (ignored
    /// otherwise); `size` bytes and `disp_unit` as MPI_Win_create takes
    /// them; `noncontig`: the alloc_shared_noncontig hint.  Throws
    /// MpiError naming `fn`, on every member alike.
    static std::unique_ptr<Window> create(Runtime& rt, std::unique_ptr<Communicator> comm, Flavor flavor,
                                          void* base, std::int64_t size, int disp_unit, bool noncontig,
                                          const char* fn);
    /// Unmaps the area.  MPI_Win_free calls free() first.
    ~Window();
    Window(const Window&) = delete;
    Window& operator=(const Window&) = delete;

    std::uint32_t magic() const { return magic_; }
    Flavor flavor() const { return flavor_; }
    int rank() const { return comm_->rank(); }
    int size() const { return comm_->size(); }
    /// The window's own communicator (a duplicate of the creator's).
    Communicator& comm() { return *comm_; }
    /// This rank's part: the attributes MPI_WIN_BASE, MPI_WIN_SIZE and
    /// MPI_WIN_DISP_UNIT.
    void* base() const { return parts_[static_cast<std::size_t>(rank())].local; }
    std::int64_t part_size() const { return parts_[static_cast<std::size_t>(rank())].size; }
    int disp_unit() const { return parts_[static_cast<std::size_t>(rank())].disp_unit; }
    /// MPI_Win_get_attr's value of a predefined window attribute: the base
    /// itself for MPI_WIN_BASE, else the address of an MPI_Aint
    /// (MPI_WIN_SIZE) or an int the window keeps.
    void* predefined_attribute(int key);
    /// MPI_Win_shared_query: rank `r`'s part as this process maps it.
    void shared_query(int r, std::int64_t* size, int* disp_unit, void** base) const;

    std::string name;                                ///< MPI_Win_set_name's ("" for none)
    MPI_Errhandler errhandler = MPI_ERRORS_ARE_FATAL;  ///< MPI_Win_set_errhandler's
    attr::Store attributes;                          ///< MPI_Win_set_attr's
    /// The hints MPI_Win_get_info reports (MPI-3.1 11.2.7): those of
    /// MPI-3.1 11.2.1 and 11.2.3, with their defaults, as the creating call
    /// and MPI_Win_set_info gave them.  None changes what the window does.
    std::vector<std::pair<std::string, std::string>> hints;

    // ---- dynamic windows ----
    void attach(void* base, std::int64_t size, const char* fn);
    void detach(const void* base, const char* fn);

    // ---- communication; `target` is a rank of the window or MPI_PROC_NULL ----
    struct Buf {
        const void* addr;
        std::int64_t count;
        const dtype::Datatype* type;
    };
    struct Target {
        int rank;
        std::int64_t disp;
        std::int64_t count;
        const dtype::Datatype* type;
    };
    void put(const Buf& origin, const Target& t, const char* fn);
    void get(const Buf& origin, const Target& t, const char* fn);
    /// MPI_Accumulate (result null) and MPI_Get_accumulate (result: where
    /// the target's old contents go).  `op` is predefined, MPI_REPLACE or
    /// MPI_NO_OP; the C boundary refused user operations.
    void accumulate(const Buf& origin, const Buf* result, const Target& t, const op::Op& op, const char* fn);
    /// MPI_Compare_and_swap: one element of the predefined type `type`.
    void compare_and_swap(const void* origin, const void* compare, void* result, const dtype::Datatype& type,
                          int target, std::int64_t disp, const char* fn);

    // ---- synchronisation ----
    void fence(int assert, const char* fn);
    /// `members`: ranks of the window.
    void post(const std::vector<int>& members, int assert, const char* fn);
    void start(const std::vector<int>& members, int assert, const char* fn);
    void complete(const char* fn);
    void wait(const char* fn);
    bool test(const char* fn);
    void lock(int lock_type, int target, int assert, const char* fn);
    void unlock(int target, const char* fn);
    void lock_all(int assert, const char* fn);
    void unlock_all(const char* fn);
    /// MPI_Win_flush(_local) (target a rank or MPI_PROC_NULL) and their
    /// _all forms (target -1): needs a passive-target epoch.
    void flush(int target, const char* fn);
    /// MPI_Win_sync: a full memory barrier.
    void sync();
    /// True while a passive-target epoch is open towards `target` (for the
    /// request-based operations, which MPI-3.1 11.3.5 allows only there).
    bool passive(int target) const;
    /// MPI_Win_free, collective: checks that no epoch is open, waits for
    /// every member, runs nothing else.  The caller deletes the window.
    void free(const char* fn);

private:
    Window(Runtime& rt, std::unique_ptr<Communicator> comm, Flavor flavor);

    /// A member's part as this process sees it.
    struct Part {
        std::byte* local = nullptr;   ///< mapped here (allocate flavours; our own part always)
        std::uint64_t remote = 0;     ///< its address in the owner (create flavour)
        std::int64_t size = 0;
        int disp_unit = 1;
    };
    /// What the allgather at creation exchanges.
    struct PartInfo {
        std::uint64_t address;
        std::int64_t size;
        std::int64_t disp_unit;
        std::uint64_t probe;  ///< the address of `probe_`, for the single-copy check
    };

    void map_area(std::int64_t data_bytes, const std::vector<std::int64_t>& offsets, const char* fn);
    void check_single_copy(const std::vector<PartInfo>& infos, const char* fn);
    /// Checks epoch, rank, displacement and range of an access; returns the
    /// address of the first target byte (in the target's address space
    /// for the create flavours, in ours otherwise).
    std::byte* target_address(const Target& t, const char* fn) const;
    bool shared_memory() const { return flavor_ == Flavor::Allocate || flavor_ == Flavor::Shared; }
    /// Copies the target's bytes into `dense` (count * size bytes), or
    /// `dense` into the target.
    void read_target(const Target& t, std::byte* at, std::byte* dense, std::int64_t bytes, const char* fn);
    void write_target(const Target& t, std::byte* at, const std::byte* dense, std::int64_t bytes, const char* fn);
    void acc_lock(int target);
    void acc_unlock(int target);
    /// Holds `target`'s accumulate mutex for its life (given back on a throw too).
    struct AccHold {
        Window& w;
        int target;
        AccHold(Window& win, int t) : w(win), target(t) { w.acc_lock(t); }
        ~AccHold() { w.acc_unlock(target); }
        AccHold(const AccHold&) = delete;
        AccHold& operator=(const AccHold&) = delete;
    };
    /// Every origin of the open exposure epoch has completed its access.
    bool exposure_completed() const;
    TargetLine& line(int target) const { return lines_[static_cast<std::size_t>(target)]; }
    std::atomic<std::uint32_t>& post_word(int t, int o) const {
        return post_[static_cast<std::size_t>(t) * static_cast<std::size_t>(size()) + static_cast<std::size_t>(o)];
    }
    std::atomic<std::uint32_t>& done_word(int t, int o) const {
        return done_[static_cast<std::size_t>(t) * static_cast<std::size_t>(size()) + static_cast<std::size_t>(o)];
    }
    /// Blocks until `ready()` holds, making point-to-point progress.
    template <class Ready>
    void wait_for(Ready&& ready);
    void wake(int member);
    void wake_all();
    void take_lock(int target, bool exclusive);
    void give_lock(int target, bool exclusive);

    std::uint32_t magic_ = kMagic;
    MPI_Aint size_attr_ = 0;  ///< predefined_attribute()'s values
    int disp_unit_attr_ = 1;
    int flavor_attr_ = 0;
    int model_attr_ = MPI_WIN_UNIFIED;
    Runtime& rt_;
    std::unique_ptr<Communicator> comm_;
    Flavor flavor_;
    std::vector<Part> parts_;
    std::uint64_t probe_ = 0x5348'4d50'4957'494eull;  ///< read by peers in check_single_copy
    std::vector<std::pair<std::uintptr_t, std::int64_t>> attached_;  ///< dynamic windows: ours

    // The shared area: control block, then (allocate flavours) the parts.
    void* map_ = nullptr;
    std::size_t map_bytes_ = 0;
    TargetLine* lines_ = nullptr;
    std::atomic<std::uint32_t>* post_ = nullptr;
    std::atomic<std::uint32_t>* done_ = nullptr;

    // Epochs, this process's view (private).
    bool fence_open_ = false;  ///< a fence without MPI_MODE_NOSUCCEED opened one
    mutable bool fence_ops_ = false;  ///< operations were issued since that fence
    /// MPI_Win_lock(_all) and MPI_Win_start after a fence: an error when
    /// operations followed the fence, else the fence's epoch ends here.
    void leave_fence_epoch(const char* fn);
    enum LockState : std::uint8_t { kUnlocked, kShared, kExclusive, kNoCheck };
    std::vector<std::uint8_t> locked_;  ///< per target, MPI_Win_lock's
    int locks_held_ = 0;
    bool lock_all_ = false;
    bool lock_all_nocheck_ = false;
    std::vector<int> access_;        ///< MPI_Win_start's group, while open
    std::vector<std::uint8_t> in_access_;
    bool access_open_ = false;
    std::vector<int> exposure_;      ///< MPI_Win_post's group, while open
    bool exposure_open_ = false;
    bool exposure_nocheck_ = false;
    std::vector<std::uint32_t> posts_seen_;  ///< per target: its posts our starts consumed
    std::vector<std::uint32_t> dones_due_;   ///< per origin: completes our posts await

    // Buffers the operations reuse, so that a small one allocates nothing
    // (on an MPI_Win_create window its process_vm_writev, 1.85 us for 8
    // bytes on the 2-CPU VM, is most of what a put costs).
    std::vector<dtype::Segment> segs_;  ///< the target's runs
    std::vector<iovec> iov_;            ///< the same as a system call takes them
    std::vector<std::byte> scratch_;    ///< the origin packed, or a get before its unpack
    std::vector<std::byte> current_;    ///< the target's contents in an accumulate
};

/// The window behind `handle`, or nullptr when it is not one.
Window* window_of(MPI_Win handle);

}  // namespace shmpi::rma
