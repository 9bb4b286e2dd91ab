// The shared-memory state of one communicator's collectives: a view of its
// region in the segment (flags, inline data, cells), the step counter, the
// one wait helper, the trees, and single-copy reads.
//
// Steps.  Every collective call takes a fresh range of 2^24 steps
// (begin_call()); the algorithm numbers its rounds (chunks, phases) inside
// the range.  All members make the same calls in the same order, so they
// agree on every step number without talking.  Comparisons are modular
// (reached()), which is right while the two steps compared are less than
// 2^63 apart: 2^39 calls, days of back-to-back collectives, between a flag's
// last store and a look at it.  Flags hold step numbers:
//   release_m >= s   member m has published its data for step s;
//   gather_m  >= s   member m has finished step s (read what it needed from
//                    the others; in a barrier: its subtree has arrived).
// They only grow, so "has member m reached s" is one rollover-safe compare
// (reached()), and a flag never needs resetting.
//
// Data areas and back-pressure.  A member publishes data in areas it owns:
// the inline part of its release lines (call c uses line c mod kCollLines)
// and kSlots slots of its cells.  Before it overwrites an area for a new
// step, claim() waits until every member that read the area's previous
// contents has finished that step (its gather flag); then it records the
// new readers.  So a fast member may run ahead of slow readers by as many
// steps as it has areas, and never further; with a release line per call
// for small data, a root can publish the next kCollLines calls' data before
// its readers have taken the first.
//
// Waking.  Waits go through wait(), which spins, yields (the budgets of
// Transport::wait: SHMPI_SPIN_US, SHMPI_YIELD_US) and then sleeps on this
// rank's doorbell.  A flag writer calls notify() for the members that may
// wait on that flag (it knows them from the algorithm: children for a
// release, the parent for a barrier arrival, the members whose data it read
// for a gather): it rings the doorbell of each one whose `sleeping` is set.
// The writer's flag store and the sleeper's `sleeping` store form a Dekker
// pair.  With membarrier it is asymmetric: the sleeper, about to sleep
// anyway, forces a barrier on every rank (MEMBARRIER_CMD_GLOBAL_EXPEDITED)
// before its last look, so a writer on the fast path needs only a compiler
// barrier and never stalls.  Without membarrier both sides fence, as a ring
// cell's publish does.  While it waits, a rank keeps point-to-point traffic
// moving, so an eager send that a peer started before entering the
// collective cannot block it; it leaves the process if the job aborts.
//
// Regions.  A ShmTeam is a view of (region, member count, my index): the
// world's region sits at a fixed place in the segment; other communicators
// of two or more members take a region of the same shape from the pool
// while they live (comm_create.cpp claims, Communicator releases; see
// docs/DESIGN.md, "Collectives in shared memory").  A region from the pool
// still holds its previous holder's flags: the new team starts its steps
// above them (start_calls_at()).
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "arith.hpp"
#include "coll/coll.hpp"
#include "coll/fold_shm.hpp"
#include "coll/tree_shm.hpp"
#include "shm/layout.hpp"
#include "shm/segment.hpp"

namespace shmpi::shm {
class Transport;
}
namespace shmpi::p2p {
class Engine;
}

namespace shmpi::coll {

/// True when a monotonic step `flag` has reached `step` (rollover-safe).
constexpr bool reached(std::uint64_t flag, std::uint64_t step) {
    return static_cast<std::int64_t>(flag - step) >= 0;
}

/// Tunables of the shared-memory collectives, read once from the
/// environment (docs/DESIGN.md lists them).
struct ShmTuning {
    int flat_max = 16;             ///< SHMPI_COLL_SHM_FLAT: teams up to this size use flat trees
    int band = 2;                  ///< SHMPI_COLL_SHM_BAND: canonical levels per tree level beyond
    int pipeline_band = 1;         ///< SHMPI_COLL_SHM_PIPELINE_BAND: the same, for chunked reductions
    /// SHMPI_COLL_SHM_DIRECT: a 2-member Bcast takes single copies from
    /// this many bytes (larger teams keep the tree; see select_shm.cpp).
    std::int64_t direct_min = 65536;
    /// SHMPI_COLL_SHM_RSAG: Reduce and Allreduce leave the tree for the
    /// single-copy algorithms (push, rsag) from this many bytes (half of it
    /// for a 2-member Allreduce); see select_shm.cpp.
    std::int64_t rsag_min = 262144;
    /// SHMPI_COLL_SHM_STREAM: whether derived-type data streams through the
    /// cells (coll.hpp, Source and Landing) where it would otherwise go by
    /// single copies: 1 always, 0 never, -1 (auto) for a Gather and an
    /// Allgather always and for a Bcast or Scatter only while members do
    /// not outnumber CPUs
    /// (with more, every chunk cost a context switch: 3 ranks on 2 CPUs
    /// took 62-73 against 31-40 us for a 128 KiB Bcast).
    int stream = -1;
    /// SHMPI_COLL_SHM_SPREAD: a contiguous Gather or Scatter that the cells
    /// do not carry whole, of blocks of at most this many bytes, in a team
    /// of 3 or more that streams (streams()), streams through the cells
    /// instead of taking single copies (0: never).  Concurrent single copies
    /// into or out of one process take turns in the kernel's page pinning
    /// (docs/COLLECTIVES.md, after SHMPI_COLL_SHM_STREAM), while the cells
    /// keep every member copying on its own.
    std::int64_t spread_max = 131072;
    /// SHMPI_COLL_SHM_ALLTOALL: an Alltoall whose n blocks do not fit the
    /// cells takes single copies (`direct`, alltoall_shm.cpp) for blocks of
    /// more than this many bytes, and the linear exchange for smaller ones;
    /// -1 (auto): the default eager limit of point-to-point for the team's
    /// size (32 KiB up to 8 members, 16 KiB beyond), below which the linear
    /// exchange's messages are buffered and nobody waits for a reader.  On
    /// 16 cores (docs/BENCHMARKS.md) single copies took 0.6-0.8 of the
    /// linear time for 64 KiB blocks at 2 to 16 ranks, and 1.2-1.4 times it
    /// for 16-32 KiB blocks at 8 ranks.
    std::int64_t alltoall_direct_above = -1;
    /// The block size above which an Alltoall of `members` takes single
    /// copies (shm_team.cpp).
    std::int64_t alltoall_direct(int members) const;
};

/// The tunables as the environment sets them (SHMPI_COLL_SHM_*); throws
/// shm::SegmentError naming the variable for a value that is not a number
/// in its range (MPI_Init fails with that message).
ShmTuning tuning_from_environment();

/// SHMPI_COLL_SHM_MEMBARRIER: false when it is 0; throws like
/// tuning_from_environment() for a value other than 0 or 1.
bool membarrier_wanted();

/// The band of trees for small payloads in a team of `members`: flat up
/// to t.flat_max, else t.band.
constexpr int small_band(int members, const ShmTuning& t) {
    return members <= t.flat_max ? tree::kFlat : t.band;
}

class ShmTeam {
public:
    /// Cells are cut into this many slots for pipelining.  Eight: a stream
    /// (chunk g in slot g mod kSlots) comes back to a slot only after 8
    /// chunks, so the sender seldom writes lines its reader has just read
    /// (2 ranks, 1 KiB blocks: a 128 KiB typed Scatter took 20.4-23.6 us
    /// with 4 slots of the same size, 18.9-19.1 with 8; a 1 MiB typed Bcast
    /// 107-116 against 99-110).
    static constexpr int kSlots = 8;
    /// A block up to this many slots goes in the cells whole (Carry::Cells);
    /// with 2 members, a block one reader copies whole goes there only up to
    /// kPairCellsCarrySlots (carry_for()).  Above that the reader's single
    /// copy out of the owner's buffer beats the cells' two copies: 2 ranks,
    /// 64 KiB blocks, Allgather 8.7-8.8 us against 11.0-11.6, Gather 5.7-6.2
    /// against 8.5-9.4 (48 KiB: 7.1-7.5 and 4.8-5.0 against 8.4-9.2 and
    /// 6.4-6.9).  Not below: a Scatter's 20 KiB blocks took 4.1-5.1 us
    /// copied singly against 2.9 from the cells.  Nor with more members,
    /// whose readers queue on the owner's pages: 4 ranks on 2 CPUs, 64 KiB,
    /// Allgather 62-69 us against 42-52, Gather 29-30 against 17.
    static constexpr int kCellsCarrySlots = 4;
    static constexpr int kPairCellsCarrySlots = 2;
    /// A call's steps are (call << kStepBits) + 0 .. kMaxSteps - 1; an
    /// algorithm that would need more declines.
    static constexpr int kStepBits = 24;
    static constexpr std::uint64_t kMaxSteps = std::uint64_t{1} << kStepBits;
    /// Areas a member publishes data in: the slots, the inline part of each
    /// release line, then the wide slots (wide_slot_bytes()).
    static constexpr int kAreas = kSlots + static_cast<int>(shm::kCollLines) + kSlots;
    /// The area of the release line that step `step` uses.
    static int inline_area(std::uint64_t step) {
        return kSlots + static_cast<int>((step >> kStepBits) % shm::kCollLines);
    }
    /// The area of wide slot `s`.
    static constexpr int wide_area(int s) { return kSlots + static_cast<int>(shm::kCollLines) + s; }
    /// The area of slot `s` of the cells, or of the wide cells when `wide`
    /// (the streams that run through either: bcast_tree_shm.cpp,
    /// scan_chain_shm.cpp).
    static constexpr int slot_area(int s, bool wide) { return wide ? wide_area(s) : s; }

    /// Who reads an area's current contents (and must finish before it is
    /// overwritten).
    struct Readers {
        enum Kind : std::uint8_t { None, One, List, All } kind = None;
        int one = -1;
        std::span<const int> list;  ///< copied by claim(): may point anywhere
        static Readers none() { return {}; }
        static Readers member(int m) { return {One, m, {}}; }
        static Readers of(std::span<const int> l) { return {List, -1, l}; }
        static Readers all() { return {All, -1, {}}; }
    };

    /// A member's place in a broadcast tree rooted somewhere.
    struct ReleaseNode {
        int parent = -1;            ///< member index; -1 for the root
        std::vector<int> children;  ///< member indices
        /// The children are every other member (a flat tree's root): its
        /// readers are Readers::all(), which claim() checks without a list.
        bool children_all = false;
    };

    /// A view of `region` as member `index`; world[i] is member i's world
    /// rank (whose doorbell to ring).  `engine` may be null (unit tests).
    ShmTeam(shm::Transport& transport, p2p::Engine* engine, const shm::CollRegion& region,
            int index, std::vector<std::uint32_t> world);
    ~ShmTeam();
    ShmTeam(const ShmTeam&) = delete;
    ShmTeam& operator=(const ShmTeam&) = delete;

    /// MPI_COMM_WORLD's team, or nullptr for a job without a segment (a
    /// 1-rank job started without mpirun).
    static std::unique_ptr<ShmTeam> for_world(shm::Transport& transport, p2p::Engine& engine);

    /// The team of a communicator that holds pool region `region` (count set
    /// to its member count): member `index`, world[i] the world rank of
    /// member i.  Its first call will be number `first_call` + 1
    /// (start_calls_at()); `single_copy` is what the world team found, or
    /// nullopt to probe at the first call.  Every member must pass the same
    /// `first_call` and `single_copy`.  Broadcast trees follow the members'
    /// places, as the world's do.
    static std::unique_ptr<ShmTeam> for_pool(shm::Transport& transport, p2p::Engine& engine,
                                             const shm::CollRegion& region, int index,
                                             std::vector<std::uint32_t> world, std::uint64_t first_call,
                                             std::optional<bool> single_copy);

    /// The largest call number any flag of the first `count` members of
    /// `region` holds (a step's call is step >> kStepBits).  For a quiescent
    /// region only (see comm_create.cpp): a new team that starts its calls
    /// past it never mistakes an old flag for a new one.
    static std::uint64_t last_call_in(const shm::CollRegion& region, std::uint32_t count);

    int size() const { return n_; }
    int index() const { return me_; }
    /// More members than the CPUs the job may use: some are always waiting
    /// for a CPU, so algorithms where everyone waits for everyone suffer.
    bool crowded() const { return crowded_; }
    const ShmTuning& tuning() const { return tuning_; }
    /// Whether a Bcast or Scatter root with a typed buffer streams
    /// (ShmTuning::stream): one sender, so not when crowded.
    bool streams() const { return tuning_.stream < 0 ? !crowded_ : tuning_.stream != 0; }
    /// The same for a Gather root or an Allgather member, whose streams
    /// gained even when crowded (every member sends or copies all along).
    bool gather_streams() const { return tuning_.stream != 0; }
    /// Whether a Gather or Scatter of contiguous blocks of `block` bytes
    /// streams through the cells (ShmTuning::spread_max); with 2 members,
    /// where the kernel copies slowly, at every size: 2 ranks on the 2-CPU
    /// VM of kernel_copies_slow(), us, against single copies, four steady
    /// rounds: Gather 64 KiB 6.2-7.0 / 8.4-12.2, 256 KiB 27-32 / 31-39,
    /// 1 MiB 136-181 / 165-235; Scatter 6.8-14.4 / 12.3-22.6, 35-42 /
    /// 51-79, 177-223 / 388-499.  (Not in crowded teams: 4 ranks on those
    /// 2 CPUs took 1.4-2 times as long streaming.)
    bool spreads(std::uint64_t block) const {
        if (n_ == 2) return kernel_copies_slow_ && streams();
        return n_ >= 3 && block <= static_cast<std::uint64_t>(tuning_.spread_max) && streams();
    }
    /// Bytes of one slot of cells, and of all of a member's cells.
    std::size_t slot_bytes() const { return cell_bytes_ / kSlots; }
    /// Bytes of one slot of the wide cells that follow each member's cells
    /// in MPI_COMM_WORLD's region when ranks outnumber CPUs (shm::Geometry::
    /// wide_cell_bytes); 0 where there are none.  The broadcast streams
    /// through them (bcast_tree_shm.cpp) and gathered blocks go in them
    /// whole (Carry::Wide), in areas of their own (wide_area()).
    std::size_t wide_slot_bytes() const { return wide_bytes_ / kSlots; }
    /// Whether `count` elements of `elem_bytes` each (0 < elem_bytes <=
    /// slot_bytes()) pass through the slots in at most kMaxSteps - 2
    /// chunks: steps s + 1 .. s + K for K chunks, and s + K + 1 after them
    /// (an Allgather's last gather), all below the next call's first step.
    /// A payload of one slot, the common case, is answered without the two
    /// 64-bit divisions (tens of cycles on the path of every small call).
    bool steps_fit(std::uint64_t count, std::size_t elem_bytes) const {
        std::uint64_t bytes = 0;
        if (!__builtin_mul_overflow(count, elem_bytes, &bytes) && bytes <= slot_bytes()) return true;
        return count / (slot_bytes() / elem_bytes) < kMaxSteps - 2;
    }
    /// Whether a tree reduction of `count` elements of `elem_bytes` each
    /// can run in the slots: an element fits one slot and the chunks fit
    /// the steps (steps_fit).
    bool reduction_fits(std::int64_t count, std::int64_t elem_bytes) const {
        return elem_bytes > 0 && static_cast<std::size_t>(elem_bytes) <= slot_bytes() &&
               steps_fit(static_cast<std::uint64_t>(count), static_cast<std::size_t>(elem_bytes));
    }
    std::size_t cell_bytes() const { return cell_bytes_; }

    // ---- steps ----

    /// Starts a collective call; returns the first of its kMaxSteps steps.
    std::uint64_t begin_call() { return ++calls_ << kStepBits; }

    /// What a collective call is: the same on every member in a correct
    /// program.  `bytes` is what the members must agree on (the message of a
    /// broadcast, one member's block of a gather, ...; 0 where they need not).
    struct CallSignature {
        int kind;  ///< a coll::Kind (select.hpp)
        int root;  ///< -1 for collectives without one
        std::int64_t bytes;
        /// A reduction's element bytes (Reduction::elem_bytes), 0 for the
        /// other collectives: algorithms cut a reduction into chunks of
        /// whole elements, so members that disagree on the element cut
        /// differently (the same signature in other datatypes, with a user
        /// operation) and wait for steps that never come or fold
        /// misaligned bytes.
        std::int64_t unit = 0;
    };
    /// Numbers one collective call, whatever algorithm runs it (a count of
    /// its own: the steps of begin_call() do not move), and publishes its
    /// signature (shm::CollCall).  select.cpp calls it on every member
    /// before the algorithm.  (Inline: out of line, with the signature
    /// built in memory for it, 24 instructions a call.)
    [[gnu::always_inline]] void note_call(const CallSignature& sig) {
        // Its own count, not a step range: the algorithms' steps stay as they
        // were (consecutive calls use the release lines in turn).
        const std::uint64_t call = ++noted_;
        const std::uint64_t what = (static_cast<std::uint64_t>(static_cast<std::uint32_t>(sig.kind)) << 32) |
                                   static_cast<std::uint32_t>(sig.root + 1);
        const auto bytes = static_cast<std::uint64_t>(sig.bytes);
        const auto unit = static_cast<std::uint64_t>(sig.unit);
        const std::size_t i = call % shm::kCollCalls;
        history_[i] = Noted{call, what, bytes, unit};
        shm::CollCall& e = members_[me_].calls[i];
        // Seqlock write (see shm::CollCall): a reader that sees `call` before
        // and after reading the rest has read one entry, not a mix of two.
        e.call.store(0, std::memory_order_relaxed);
        // Release fence: the zeroed `call` is visible before the new fields.
        std::atomic_thread_fence(std::memory_order_release);
        e.what.store(what, std::memory_order_relaxed);
        e.bytes.store(bytes, std::memory_order_relaxed);
        e.unit.store(unit, std::memory_order_relaxed);
        // Release: the fields above are visible to a reader that acquires `call`.
        e.call.store(call, std::memory_order_release);
    }
    /// Throws MpiError when a member published another signature than ours
    /// for a call number we both noted.  wait() calls it before each sleep.
    void check_calls() const;
    /// check_calls() for our latest call only: the members that have
    /// published it.  A reduction with a user operation calls it when done,
    /// to report members whose elements differ even where the algorithm
    /// did not wait (it then folded misaligned bytes).
    void check_call() const;
    /// Throws the error of a member whose published state makes no sense
    /// for our call: the differing call (check_calls()) when the member
    /// noted another one, as a member that failed its previous collective
    /// before taking part leaves it a call behind; else MPI_ERR_INTERN with
    /// `message`.
    [[noreturn]] void throw_peer_state(const std::string& message) const;
    /// Makes the next call number `call` + 1.  For a region whose flags
    /// already hold steps (one reused from a pool): every member passes the
    /// same value before its first call, and every flag in the region must
    /// be below ((call + 1) << kStepBits) in modular order.
    void start_calls_at(std::uint64_t call) {
        calls_ = call;
        noted_ = call;  // above every signature the region holds (last_call_in)
        seen_gather_.assign(seen_gather_.size(), ((call + 1) << kStepBits) - 1);
    }

    // ---- flags ----

    /// The release line step `step` uses: this member's, and member m's.
    shm::CollLine& my_line(std::uint64_t step) { return line_of(members_[me_], step); }
    const shm::CollLine& line(int m, std::uint64_t step) const { return line_of(members_[m], step); }
    /// Member m's flags (the probe line, for the probe).
    const shm::CollMember& member(int m) const { return members_[m]; }

    /// Publishes this member's release line (and cells) for `step`.
    void release(std::uint64_t step) {
        // Release: everything written for `step` (inline data, cells) is
        // visible to a reader that acquires the flag.
        my_line(step).release.store(step, std::memory_order_release);
    }
    /// Announces that this member finished `step`.
    void gather(std::uint64_t step) {
        // Release: our reads of the others' data for `step` happen before
        // they may overwrite it (they acquire this flag in claim()).
        members_[me_].gather.store(step, std::memory_order_release);
    }
    /// Rings the doorbells of those of `members` (indices) that sleep.
    void notify(std::span<const int> members);
    void notify(int m) { notify(std::span<const int>(&m, 1)); }
    void notify_all();

    bool has_released(int m, std::uint64_t step) {
        // Acquire: pairs with the owner's release(); what it published for
        // `step` is visible once we see it.
        if (!reached(line(m, step).release.load(std::memory_order_acquire), step)) return false;
        // A member publishes for a call only after it returned from every
        // earlier one, having read all it needed there and stored its gather
        // flag (every reader an algorithm names does so in the same call).
        // So m has gathered every step before this call: a later claim()
        // need not fetch m's gather line, which m may just have written
        // (in a loop of Allreduces that fetch was a second cross-CPU
        // transfer on every call).  The same acquire orders those reads of
        // m before our later overwrites.
        const std::uint64_t before = ((step >> kStepBits) << kStepBits) - 1;
        std::uint64_t& seen = seen_gather_[static_cast<std::size_t>(m)];
        if (before - seen < (std::uint64_t{1} << 62)) seen = before;
        return true;
    }
    [[gnu::always_inline]] bool has_gathered(int m, std::uint64_t step) {
        std::uint64_t& seen = seen_gather_[static_cast<std::size_t>(m)];
        // A value we read recently that is at or past `step`: no need to
        // touch its line.  (A value from 2^62 steps ago proves nothing.)
        if (seen - step < (std::uint64_t{1} << 62)) return true;
        // Acquire: pairs with the owner's gather(); its reads of our data
        // for `step` are complete.
        seen = members_[m].gather.load(std::memory_order_acquire);
        return reached(seen, step);
    }
    void wait_release(int m, std::uint64_t step) {
        if (!has_released(m, step)) wait([&] { return has_released(m, step); });
    }
    void wait_gather(int m, std::uint64_t step) {
        if (!has_gathered(m, step)) wait([&] { return has_gathered(m, step); });
    }
    /// Waits until every member but this one has released / gathered `step`.
    void wait_release_all(std::uint64_t step);
    void wait_gather_all(std::uint64_t step);

    /// The one wait: until `done()` holds, spinning, yielding, then sleeping
    /// on this rank's doorbell; keeps point-to-point traffic moving; leaves
    /// the process if the job is aborting.  `done()` must only read flags
    /// that some writer will notify() this member about.  Always inlined:
    /// its first look is the usual answer, and out of line it cost a
    /// small Bcast's root 27 instructions to reach it.
    template <class Done>
    [[gnu::always_inline]] void wait(Done&& done) {
        if (done()) return;
        wait_slow([](void* d) { return (*static_cast<std::remove_reference_t<Done>*>(d))(); },
                  &done);
    }

    // ---- data ----

    std::byte* my_cells() { return cells_ + static_cast<std::size_t>(me_) * cell_stride_; }
    const std::byte* cells_of(int m) const { return cells_ + static_cast<std::size_t>(m) * cell_stride_; }
    std::byte* my_wide_slot(int s) { return my_cells() + cell_bytes_ + static_cast<std::size_t>(s) * wide_slot_bytes(); }
    const std::byte* wide_slot_of(int m, int s) const {
        return cells_of(m) + cell_bytes_ + static_cast<std::size_t>(s) * wide_slot_bytes();
    }
    std::byte* my_slot(int s) { return my_cells() + static_cast<std::size_t>(s) * slot_bytes(); }
    const std::byte* slot_of(int m, int s) const {
        return cells_of(m) + static_cast<std::size_t>(s) * slot_bytes();
    }
    /// Slot `s` of the cells, or of the wide cells when `wide` (slot_area()).
    std::byte* my_slot(int s, bool wide) { return wide ? my_wide_slot(s) : my_slot(s); }
    const std::byte* slot_of(int m, int s, bool wide) const { return wide ? wide_slot_of(m, s) : slot_of(m, s); }

    /// Before this member writes area `area` for `step`: waits until the
    /// readers of its previous contents have finished, then records
    /// `readers` for the new contents.  (Inline, so that the caller's
    /// `readers` goes to the area field by field: built on the stack and
    /// copied whole, its narrow stores and wide loads stalled store
    /// forwarding on every call, a third of the small Allreduce's own time.
    /// Always: called out of line, a small Bcast's root spent 25 of its 63
    /// instructions here entering and leaving it.)
    [[gnu::always_inline]] void claim(int area, std::uint64_t step, Readers readers) {
        Area& a = areas_[area];
        // The usual answer, inline, from the gather values last seen; the
        // wait out of line (as a lambda inside wait(), GCC left the first
        // look out of line too: 22 instructions a small Bcast's root).
        if (a.used && !readers_done(a.readers, a.step)) [[unlikely]] wait_readers(a);
        a.used = true;
        a.step = step;
        a.readers.kind = readers.kind;
        a.readers.one = readers.one;
        a.readers.list = readers.list;
        if (readers.kind == Readers::List) {
            // Our own copy: the caller's list may not outlive the call.
            // Usually it is the list of this area's last call (a tree's
            // children, call after call), which the copy already holds:
            // comparing here costs less than copying (a small Bcast's root
            // spent 60 of its 700 instructions on the copy).
            if (!keeps_list(a)) keep_list(a);
            a.readers.list = a.members;
        }
    }
    /// Whether every member of `r` has gathered `step`: claim()'s wait,
    /// whose usual case is answered from the gather values last seen
    /// (always inlined: out of line, 26 instructions a small Bcast's root).
    [[gnu::always_inline]] bool readers_done(const Readers& r, std::uint64_t step) {
        switch (r.kind) {
            case Readers::None:
                return true;
            case Readers::One:
                return has_gathered(r.one, step);
            case Readers::List:
                for (const int m : r.list) {
                    if (!has_gathered(m, step)) return false;
                }
                return true;
            case Readers::All:
                for (const int m : all_but_me_) {
                    if (!has_gathered(m, step)) return false;
                }
                return true;
        }
        return false;
    }
    /// claim() for the slots the first `bytes` of this member's cells cover;
    /// past cell_bytes(), for the wide slots that follow them (one run of
    /// memory: Alltoallv's table and blocks, published as Carry::Cells).
    void claim_cells(std::uint64_t step, Readers readers, std::uint64_t bytes) {
        const std::uint64_t in_cells = std::min<std::uint64_t>(bytes, cell_bytes_);
        for (int a = 0; a < static_cast<int>(chunks(in_cells)); ++a) claim(a, step, readers);
        if (bytes > cell_bytes_) claim_wide(step, readers, bytes - cell_bytes_);
    }
    /// Where a sender writes its table and the blocks after it (`bytes` in
    /// all: Alltoallv/w, Scatterv) for `step`: into `line`, a private
    /// buffer it then publishes inline with put_block(), when `in_line`;
    /// else into its cells, claimed for everyone once its line says how
    /// much of them it uses.
    std::byte* table_area(std::uint64_t step, bool in_line, std::uint64_t bytes, std::byte* line) {
        if (in_line) return line;
        put_line(step, Readers::all(), bytes, static_cast<std::uint64_t>(Carry::Cells));
        claim_cells(step, Readers::all(), bytes);
        return my_cells();
    }
    /// claim() for the wide slots the first `bytes` of this member's wide
    /// cells cover.
    void claim_wide(std::uint64_t step, Readers readers, std::uint64_t bytes) {
        const std::uint64_t slots = (bytes + wide_slot_bytes() - 1) / wide_slot_bytes();
        for (int s = 0; s < static_cast<int>(slots); ++s) claim(wide_area(s), step, readers);
    }

    // ---- trees ----

    /// The band tree over members for reductions (canonical order: member 0
    /// at the top): flat for small teams.
    const tree::BandTree& band_tree(int band);
    /// The band of trees for small payloads: flat up to tuning().flat_max.
    int small_band() const { return coll::small_band(n_, tuning_); }
    /// The canonical fold of everyone's contribution, as evaluated by this
    /// member when it reads them all itself.
    std::span<const tree::Op> flat_program();
    /// This member's place in the broadcast tree rooted at member `root`
    /// (built on the first call with that root, inline after).
    const ReleaseNode& release_node(int root) {
        const std::optional<ReleaseNode>& cached = release_nodes_[static_cast<std::size_t>(root)];
        return cached ? *cached : build_release_node(root);
    }

    /// Locality seam: the order in which broadcast trees lay out members
    /// (order[0] first), e.g. hwloc's NUMA-then-package order once ranks are
    /// bound.  The identity by default.  Every member must set the same
    /// order, between collectives.
    void set_locality_order(std::vector<int> order);

    // ---- single-copy reads ----

    /// True when every member can read and write every other's memory with
    /// process_vm_readv / process_vm_writev.  The first call is collective (a probe step), so
    /// every member must make it at the same point: the algorithms call it
    /// at the start of their first call (ready()), and select.cpp's run()
    /// before every collective it dispatches.
    bool single_copy() {
        if (cma_ != Cma::Unknown) return cma_ == Cma::Yes;
        return probe_single_copy();
    }
    /// mpirun's verdict that the kernel copies between processes much more
    /// slowly than memcpy while lines cross between CPUs fast
    /// (Transport::kernel_copies_slow()): then the single copies lose to
    /// the cells' two (select_shm.cpp).  The same on every member; not
    /// collective.
    bool kernel_copies_slow() const { return kernel_copies_slow_; }
    /// What the probe found, or nullopt before it ran (not collective).
    std::optional<bool> single_copy_known() const {
        if (cma_ == Cma::Unknown) return std::nullopt;
        return cma_ == Cma::Yes;
    }
    /// Copies `n` bytes at `remote` in member `m` to `local`.  Only after
    /// single_copy() said yes; a refusal after that ends the job.
    void read(int m, const void* remote, void* local, std::size_t n);
    /// Copies `n` bytes at `remote` in member m to bytes [off, off + n) of
    /// `land`, a piece at a time through a buffer that stays in cache.
    /// Same conditions as read().
    void read_into(int m, const void* remote, const Landing& land, std::uint64_t off, std::uint64_t n);
    /// Copies `n` bytes at `local` to `remote` in member m's memory with
    /// process_vm_writev.  Same conditions as read().
    void write(int m, void* remote, const void* local, std::size_t n);

    // ---- blocks (gathers and allgathers) ----

    /// How a member's block travels; published in the release line's `aux`.
    /// Stream: the owner packs it chunk by chunk into its cells, at the
    /// steps after the call's first (a typed buffer, Source in coll.hpp).
    /// Paced: single copies of a typed buffer the owner packs a reader's
    /// part at a time, releasing one step after the call's first for each
    /// (a Scatter root, scatter_shm.cpp).
    /// Wide: in the owner's wide cells, whole (put_wide()).
    enum class Carry : std::uint64_t { Inline = 1, Cells = 2, Direct = 3, Stream = 4, Paced = 5, Wide = 6 };
    /// `aux` of a line whose owner streams its data (Carry::Stream).
    static constexpr auto kStreamed = static_cast<std::uint64_t>(Carry::Stream);
    /// The way a block of `bytes` travels: inline, through the cells, or
    /// by a single copy out of the owner's buffer.  `piece` is what one
    /// reader copies of it (0: all of it; a Scatter's is one block): with
    /// 2 members, a piece of more than kPairCellsCarrySlots slots goes
    /// by a single copy.
    Carry carry_for(std::uint64_t bytes, std::uint64_t piece = 0) const {
        if (bytes <= shm::kCollInline) return Carry::Inline;
        if (bytes > static_cast<std::uint64_t>(kCellsCarrySlots) * slot_bytes()) return Carry::Direct;
        const std::uint64_t read = piece != 0 ? piece : bytes;
        return n_ == 2 && read > static_cast<std::uint64_t>(kPairCellsCarrySlots) * slot_bytes() ? Carry::Direct
                                                                                                 : Carry::Cells;
    }
    /// The way a block of `bytes` travels in a Gather, an Allgather or an
    /// Alltoall (their blocks, and their size, are published once a call):
    /// as carry_for(), except that one too large for the cells goes in the
    /// owner's wide cells when it fits them (Carry::Wide).  There are wide
    /// cells only when ranks outnumber CPUs, where an owner that waits for
    /// its readers to copy out of its buffer waits for a context switch
    /// each: through the wide cells it leaves as soon as its block is in
    /// (put_wide()).  (Not a Scatter's buffer, nor an Allreduce's pipeline:
    /// with cells of 1 MiB they lost up to 1.95x, session 47.)
    Carry wide_carry(std::uint64_t bytes, std::uint64_t piece = 0) const {
        const Carry c = carry_for(bytes, piece);
        return c == Carry::Direct && bytes <= wide_bytes_ ? Carry::Wide : c;
    }
    /// put_block() for the algorithms that take wide_carry()'s way.
    Carry put_wide(std::uint64_t step, const void* src, std::uint64_t bytes, Readers readers,
                   Source* typed = nullptr, std::uint64_t hole_off = 0, std::uint64_t hole_len = 0,
                   std::uint64_t piece = 0) {
        if (bytes > shm::kCollInline && wide_carry(bytes, piece) == Carry::Wide) {
            return put_block_out(step, src, bytes, readers, typed, hole_off, hole_len, piece, true);
        }
        return put_block(step, src, bytes, readers, typed, hole_off, hole_len, piece);
    }
    /// Puts this member's block (`bytes` at `src`) in its release line or
    /// cells for `step`, claiming them for `readers` first.  The caller then
    /// stores release = step.  A Direct block stays in `src`, which must stay
    /// valid until the readers have gathered `step`.  With `typed` (the
    /// block's typed buffer), an inline or cell block is packed straight
    /// into place and a Direct one packed into `src` first.  Without
    /// `typed`, bytes [hole_off, hole_off + hole_len) of an inline or cell
    /// block are left out (no reader reads them: an Alltoall member's own
    /// block).  `piece`: as for carry_for().
    /// The usual small block (plain bytes, no hole) inline, the rest out of
    /// line (put_block_out(): 105 instructions for a Gather's 8 bytes).
    [[gnu::always_inline]] Carry put_block(std::uint64_t step, const void* src, std::uint64_t bytes, Readers readers,
                                           Source* typed = nullptr, std::uint64_t hole_off = 0,
                                           std::uint64_t hole_len = 0, std::uint64_t piece = 0) {
        if (bytes > shm::kCollInline || typed != nullptr || hole_len != 0) {
            return put_block_out(step, src, bytes, readers, typed, hole_off, hole_len, piece);
        }
        claim(inline_area(step), step, readers);
        shm::CollLine& me = my_line(step);
        me.bytes = bytes;
        me.aux = static_cast<std::uint64_t>(Carry::Inline);
        copy_small(me.data, src, bytes);
        return Carry::Inline;
    }
    /// Publishes `bytes`, `aux` (a Carry, or 0) and `addr` in this member's
    /// line for `step`, claimed for `readers` first: the line of a call
    /// whose data does not travel by put_block() (a stream, a root's
    /// buffer).  The caller then stores release = step.
    void put_line(std::uint64_t step, Readers readers, std::uint64_t bytes, std::uint64_t aux,
                  const void* addr = nullptr) {
        claim(inline_area(step), step, readers);
        shm::CollLine& line = my_line(step);
        line.bytes = bytes;
        line.addr = reinterpret_cast<std::uint64_t>(addr);
        line.aux = aux;
    }
    /// Copies member m's block published for `step` (after its release) to
    /// `dst`, or to bytes [off, ...) of `land` when given, at most `want`
    /// bytes; returns the size m published.  The usual small block (inline,
    /// to plain memory) is copied inline, the rest out of line
    /// (get_block_out(), through published()'s checks: 60 instructions for
    /// a Gather root's 8 bytes).
    [[gnu::always_inline]] std::uint64_t get_block(int m, std::uint64_t step, void* dst, std::uint64_t want,
                                                   const Landing* land = nullptr, std::uint64_t off = 0) {
        const shm::CollLine& c = line(m, step);
        const std::uint64_t got = c.bytes;
        const std::uint64_t n = got < want ? got : want;
        // (An inline block fits its line, as published() checks.)
        if (land == nullptr && static_cast<Carry>(c.aux) == Carry::Inline && n <= shm::kCollInline) {
            copy_small(dst, c.data, n);
            return got;
        }
        return get_block_out(m, step, dst, want, land, off);
    }
    /// Where member m's block for `step` lies when it travels inline or in
    /// the cells, checked for reading `n` bytes of it: throws MPI_ERR_INTERN
    /// when the member published it another way or `n` exceeds that area.
    const std::byte* published(int m, std::uint64_t step, std::uint64_t n) const;
    /// Packs bytes [off, off + n) of `typed` into `to`, a slot of cells,
    /// through `bounce` (a private buffer of at least n bytes): packing
    /// into a private buffer that stays in cache and copying it over whole
    /// lines costs less than packing into lines the readers last held
    /// (measured: 108 against 122 us for a 1 MiB broadcast streamed at 2
    /// ranks).
    static void pack_into(const Source& typed, std::uint64_t off, std::byte* to, std::uint64_t n,
                          std::byte* bounce) {
        typed.part(off, bounce, n);
        std::memcpy(to, bounce, n);
    }
    // ---- streams (derived types through the cells) ----
    //
    // Chunk g of a call's stream (g = 0, 1, ...; a slot of bytes each) is
    // published by its sender at step s + 1 + g in slot g mod kSlots; its
    // reader copies it out after the sender's release of that step, then
    // stores gather = that step and wakes the sender, which may be waiting
    // to reuse the slot.

    /// Chunks of a stream of `bytes`.
    std::uint64_t chunks(std::uint64_t bytes) const { return (bytes + slot_bytes() - 1) / slot_bytes(); }
    /// Publishes chunk g of this member's stream for call step s: claims
    /// its slot for `readers`, fills it (fill(slot)), releases its step.
    /// The caller wakes the readers.
    template <class Fill>
    void put_chunk(std::uint64_t s, std::uint64_t g, Readers readers, Fill&& fill) {
        const int slot = static_cast<int>(g % kSlots);
        claim(slot, s + 1 + g, readers);
        fill(my_slot(slot));
        release(s + 1 + g);
    }
    /// Copies `bytes` of member m's stream for call step s, from its chunk
    /// g0 on, to `out` (at most `want` bytes), or to bytes [at, ...) of
    /// `land`; gathers each chunk's step and wakes m.
    void take_chunks(int m, std::uint64_t s, std::uint64_t g0, std::uint64_t bytes, std::byte* out,
                     std::uint64_t want, const Landing* land, std::uint64_t at = 0);
    /// The private buffer for pack_into(), at least `bytes` long.
    std::byte* bounce(std::size_t bytes) { return buffer(kPieceBuffer, bytes); }
    /// A private buffer for a member's whole send buffer made dense (an
    /// Alltoall's, which its readers may read while this member uses
    /// bounce()), at least `bytes` long.
    std::byte* image_buffer(std::size_t bytes) { return buffer(kImageBuffer, bytes); }
    /// Copies `n` bytes at `from` to `dst`, or to bytes [off, off + n) of
    /// `land` when given.
    static void store(void* dst, const void* from, std::uint64_t n, const Landing* land, std::uint64_t off) {
        if (land != nullptr) {
            land->store(land->state, static_cast<std::int64_t>(off), from, static_cast<std::int64_t>(n));
        } else if (n <= shm::kCollInline) {
            copy_small(dst, from, n);
        } else {
            std::memcpy(dst, from, n);
        }
    }

    /// Scratch buffers for fold programs.
    fold::Scratch& scratch() { return scratch_; }
    /// A private buffer of at least `bytes` (reused; `which` picks one of bufs_).
    std::byte* buffer(int which, std::size_t bytes);

    /// The world rank of member m.
    std::uint32_t world_rank(int m) const { return world_[static_cast<std::size_t>(m)]; }

private:
    static shm::CollLine& line_of(shm::CollMember& m, std::uint64_t step) {
        return m.lines[(step >> kStepBits) % shm::kCollLines];
    }
    static const shm::CollLine& line_of(const shm::CollMember& m, std::uint64_t step) {
        return m.lines[(step >> kStepBits) % shm::kCollLines];
    }
    void wait_slow(bool (*done)(void*), void* state);
    const ReleaseNode& build_release_node(int root);
    bool probe_single_copy();
    bool write_remote(int m, void* remote, const void* local, std::size_t n);
    /// Ends the job: a read from member m failed after single_copy() said yes.
    [[noreturn]] void read_failed(int m);

    shm::Transport& transport_;
    p2p::Engine* engine_;
    shm::CollMember* members_;
    std::byte* cells_;
    std::size_t cell_bytes_;
    std::size_t wide_bytes_;   ///< wide cells after each member's cells (CollRegion::wide_bytes)
    std::size_t cell_stride_;  ///< from one member's cells to the next: cell_bytes_ + wide_bytes_
    int n_;
    int me_;
    std::vector<std::uint32_t> world_;
    std::vector<shm::RankSlot*> slots_;  ///< each member's doorbell (null without a segment)
    ShmTuning tuning_;
    std::uint64_t calls_ = 0;
    std::uint64_t noted_ = 0;  ///< collective calls noted (note_call())
    /// Our own last kCollCalls signatures, as note_call() published them.
    struct Noted {
        std::uint64_t call = 0;
        std::uint64_t what = 0;
        std::uint64_t bytes = 0;
        std::uint64_t unit = 0;
    };
    std::array<Noted, shm::kCollCalls> history_{};
    /// Compares member m's entry e with our signature of the same call.
    void check_entry(int m, const shm::CollCall& e) const;
    [[noreturn]] void report_mismatch(int m, const Noted& mine, const Noted& theirs) const;
    std::vector<std::uint64_t> seen_gather_;  ///< last gather value read from each member
    bool light_notify_ = false;  ///< sleepers use membarrier: notify() needs no fence
    bool crowded_ = false;       ///< more members than CPUs the job may use
    bool kernel_copies_slow_ = false;  ///< Transport::kernel_copies_slow()

    struct Area {
        bool used = false;       ///< steps wrap after 2^64, so 0 is a real step
        std::uint64_t step = 0;  ///< the step its contents were published for
        Readers readers;         ///< `list` points into `members`
        std::vector<int> members;
    };
    Area areas_[kAreas];
    /// claim()'s wait for the readers of `a`'s previous contents.
    [[gnu::noinline]] void wait_readers(const Area& a) {
        wait([&] { return readers_done(a.readers, a.step); });
    }
    /// Copies a claimed area's list of readers into the area.
    void keep_list(Area& a);
    /// Whether `a.members` holds the members of `a.readers.list`, in order.
    /// (A loop: std::equal would call memcmp.)
    static bool keeps_list(const Area& a) {
        const std::span<const int> l = a.readers.list;
        if (l.size() != a.members.size()) return false;
        for (std::size_t i = 0; i < l.size(); ++i) {
            if (l[i] != a.members[i]) return false;
        }
        return true;
    }

    std::vector<std::unique_ptr<tree::BandTree>> trees_;
    std::vector<tree::Op> flat_program_;
    std::vector<int> order_;      ///< locality order of members
    std::vector<int> position_;   ///< position_[order_[i]] = i
    std::vector<std::optional<ReleaseNode>> release_nodes_;  ///< per root, built on demand
    std::vector<int> all_but_me_;

    /// put_block()'s work; `wide`: its way is wide_carry()'s.
    Carry put_block_out(std::uint64_t step, const void* src, std::uint64_t bytes, Readers readers, Source* typed,
                        std::uint64_t hole_off, std::uint64_t hole_len, std::uint64_t piece, bool wide = false);
    std::uint64_t get_block_out(int m, std::uint64_t step, void* dst, std::uint64_t want, const Landing* land,
                                std::uint64_t off);

    enum class Cma { Unknown, Yes, No } cma_ = Cma::Unknown;
    std::uint64_t probe_word_;
    fold::Scratch scratch_;
    struct Buf {
        std::unique_ptr<std::byte[]> p;
        std::size_t bytes = 0;
    };
    Buf bufs_[2 + 8 + 1 + 1];  ///< rsag's, push's, read_into()'s and pack_into()'s piece, the image
    static constexpr int kPieceBuffer = 10;
    static constexpr int kImageBuffer = 11;
};

/// The team's shared-memory state, ready for a call (the first call on a
/// team runs the single-copy probe), or nullptr when it has none.
inline ShmTeam* ready(const Team& team) {
    if (team.shm == nullptr) return nullptr;
    team.shm->single_copy();
    return team.shm;
}

/// What a reduction (Reduce, Allreduce) does without an algorithm: with
/// one member, `recv` = `send` (`bytes` of it); with nothing to fold,
/// nothing.  True when that was the whole call.
inline bool reduction_needs_nobody(const ShmTeam& shm, const void* send, void* recv, std::size_t bytes) {
    if (shm.size() == 1) {
        if (bytes > 0 && send != recv) std::memcpy(recv, send, bytes);
        return true;
    }
    return bytes == 0;
}

/// The error for a message whose two sides disagree on its size: member
/// `from` published `got` bytes where member `me` expected `want`.
/// MPI_ERR_TRUNCATE when more came than expected, MPI_ERR_COUNT when less.
/// Thrown after this member has done its part of the call.
[[noreturn]] void throw_size_mismatch(int from, std::uint64_t got, int me, std::uint64_t want);

/// One entry of the table at the head of a sender's cells where its blocks
/// differ in size (Alltoallv/w, Scatterv): its block for one reader,
/// `bytes` long, lies `where` (kInCells + an offset in the cells; the
/// address of a single copy; kByMessage: it comes as a point-to-point
/// message).  A Gatherv root's table (in its line or cells) says the same
/// of the place in its receive buffer of each member's block.  Written by
/// the owner before its release, read by readers after it.
struct TableEntry {
    std::uint64_t where;
    std::uint64_t bytes;
};
/// Where reader r's entry lies in a table that member `owner` published:
/// entry r, or, in a table inline in the owner's line (Carry::Inline),
/// which has no entry for the owner itself, entry r - 1 past it (a 2-rank
/// reader's entry and block then share the line's first cache line).
inline std::size_t table_at(int r, int owner, bool in_line) {
    return static_cast<std::size_t>(in_line && r > owner ? r - 1 : r) * sizeof(TableEntry);
}
/// How the blocks after a table inline in a line are aligned.
constexpr std::uint64_t kInlineBlockAlign = 8;
/// Whether a table inline in `owner`'s line (n - 1 entries, table_at())
/// and, after it, the blocks of bytes(r) for every other member r, each
/// kInlineBlockAlign-aligned, fit the line's inline bytes, every block
/// being one that `may(b)` lets go there (Alltoallv/w, Scatterv).
template <class Bytes, class May>
bool table_fits_line(int n, int owner, Bytes&& bytes, May&& may) {
    std::uint64_t end = static_cast<std::uint64_t>(n - 1) * sizeof(TableEntry);
    for (int r = 0; r < n; ++r) {
        if (r == owner) continue;
        const std::uint64_t b = bytes(r);
        end = round_up(end, kInlineBlockAlign) + b;
        if (end > shm::kCollInline || !may(b)) return false;
    }
    return true;
}
/// Whether member m published its data for `step` inline in its line.
inline bool inline_at(const ShmTeam& shm, int m, std::uint64_t step) {
    return static_cast<ShmTeam::Carry>(shm.line(m, step).aux) == ShmTeam::Carry::Inline;
}
constexpr std::uint64_t kByMessage = ~std::uint64_t{0};
constexpr std::uint64_t kInCells = std::uint64_t{1} << 63;  // above every user address
/// A sender's placement of a block that stays in its memory for a single
/// copy, before its address goes in the table.
constexpr std::uint64_t kInMemory = 0;

/// Where a member of a pair with a CPU each takes the other's block, which
/// the other writes there (process_vm_writev: Allgather, Alltoall
/// `direct`, Alltoallv): in the member's line for the call's step s, the
/// address and size in its inline bytes (unused by a block that stays in
/// its memory), and s in the line's `offer`, which nothing but an offer
/// writes.  So neither an offer left from an earlier call nor inline data
/// (an Alltoallv's table and blocks, an earlier call's bytes) counts as
/// one, as bytes equal to the step once did (test/coll/pair_data.c).
/// Written by the owner before its release of s, read by the other after
/// it.
struct PairOffer {
    std::uint64_t to;    ///< the address of the other's block in our receive buffer
    std::uint64_t room;  ///< the bytes we take there
    std::uint64_t step;  ///< s (CollLine::offer)

    /// Puts the offer in our line for `step` (after put_line()/put_block(),
    /// before release()).
    static void make(ShmTeam& shm, std::uint64_t step, const void* to, std::uint64_t room) {
        shm::CollLine& line = shm.my_line(step);
        const std::uint64_t where[2] = {reinterpret_cast<std::uint64_t>(to), room};
        std::memcpy(line.data, where, sizeof where);
        line.offer = step;
    }
    /// Member m's offer for `step` (after its release of it), or an offer
    /// whose `step` is not `step` when it made none.
    static PairOffer of(const ShmTeam& shm, int m, std::uint64_t step) {
        const shm::CollLine& line = shm.line(m, step);
        PairOffer o{0, 0, line.offer};
        if (o.step == step) std::memcpy(&o, line.data, 2 * sizeof(std::uint64_t));
        return o;
    }
    /// The rest of a pair's exchange once we have written our block into
    /// member `other` (the call's step s): stores release = s + 1 and wakes
    /// it, runs `own` (the copy of our own block), waits for its release of
    /// s + 1 (its block is in our buffer), stores gather = s + 1 (we have
    /// read its line) and wakes it.
    template <class Own>
    static void finish(ShmTeam& shm, int other, std::uint64_t s, Own&& own) {
        shm.release(s + 1);
        shm.notify(other);
        own();
        shm.wait_release(other, s + 1);
        shm.gather(s + 1);
        shm.notify(other);
    }
};
static_assert(2 * sizeof(std::uint64_t) <= shm::kCollInline);

}  // namespace shmpi::coll
