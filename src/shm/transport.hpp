// The shared-memory transport: moves cells between ranks, copies large
// buffers straight out of a peer's memory, and waits.
//
// This layer moves bytes and nothing else; it never sees datatypes,
// communicators or tags.  Above it, the point-to-point engine decides what a
// cell means.
//
// Waiting (Transport::wait) follows one policy everywhere: poll, spinning for
// a short while; then poll and yield the core; then announce `sleeping` in
// the rank's slot and sleep on its doorbell futex, which producers ring when
// they publish a cell for this rank (or release room in a ring this rank
// waits to write).  Every pass checks the job's abort flag.
#pragma once

#include <sched.h>
#include <sys/uio.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

#include "shm/futex.hpp"
#include "shm/gate.hpp"
#include "shm/layout.hpp"
#include "shm/ring.hpp"
#include "shm/segment.hpp"

namespace shmpi::shm {

/// The MPI call this thread is in ("MPI_Recv"), or nullptr: set by the C
/// boundary (api::guard) on entry and put back on return, read by
/// Transport::park() for the launcher's deadlock report, in the same
/// thread.
inline thread_local const char* current_call = nullptr;

/// Counts this thread in `slot.sleeping` while it lives: from before a
/// sleeper's last look to after its sleep, whatever ends it (a throw from
/// that look included: a count left behind would make every sender ring
/// for good).  Relaxed: the fences around it order it (RankSlot::sleeping).
class SleepingMark {
public:
    explicit SleepingMark(RankSlot& slot) : slot_(slot) { slot_.sleeping.fetch_add(1, std::memory_order_relaxed); }
    ~SleepingMark() { slot_.sleeping.fetch_sub(1, std::memory_order_relaxed); }
    SleepingMark(const SleepingMark&) = delete;
    SleepingMark& operator=(const SleepingMark&) = delete;

private:
    RankSlot& slot_;
};

/// Tunables of the wait policy, read once from the environment.
struct WaitPolicy {
    std::chrono::nanoseconds spin{20'000};      ///< SHMPI_SPIN_US: busy polling
    std::chrono::nanoseconds yield{1'000'000};  ///< SHMPI_YIELD_US: polling with sched_yield
    /// Longest futex sleep of a wait that nobody rings.  Every writer of
    /// what a wait looks for rings it, and so does an abort; the end of a
    /// nap is a look at everything (every peer's ring, or the heads row) and
    /// only a safety net.  With 50 ms naps a launch of 256 ranks on 2 CPUs
    /// took 10.4 s, not 8.1 s: the ranks already in MPI_Finalize took the
    /// CPUs from the ones still starting; and each idle rank used 2 ms of
    /// CPU a second, not 0.25 ms.
    std::chrono::nanoseconds sleep{800'000'000};
};

/// Longest sleep of a rank whose ring to some peer is full.
inline constexpr std::chrono::microseconds kStalledSleep{1000};

/// Prints why MPI_Init failed on stderr as one line that starts "shmpi: ".
void print_init_failure(std::string_view what);

class Transport {
public:
    /// Attaches to the job mpirun described in the environment
    /// (SHMPI_SEGMENT_FD, SHMPI_RANK, SHMPI_SIZE), or makes a 1-rank job when
    /// none is set.  Removes those variables so that programs the rank starts
    /// are not mistaken for ranks.  Throws SegmentError with a message naming
    /// the variable and the value when they are inconsistent.
    static std::unique_ptr<Transport> from_environment();

    /// For a handler of an MPI_Init failure after the attach.  The ranks
    /// share one environment, so a bad setting fails them all alike; the
    /// job prints its message once instead of once per rank.  The first
    /// rank to fail prints it (print_init_failure()); a rank that fails the
    /// same way waits until it has.  Both then throw ReportedInitFailure.
    /// Rethrows the exception being handled, for MPI_Init to print, when
    /// there is no segment, when the message differs from the first one,
    /// and when the first rank has not printed it within 5 seconds.
    [[noreturn]] void rethrow_init_failure() const;

    ~Transport();
    Transport(const Transport&) = delete;
    Transport& operator=(const Transport&) = delete;

    std::uint32_t rank() const { return rank_; }
    std::uint32_t size() const { return size_; }
    /// Payload bytes in one cell (the same for every ring of the job).
    std::uint32_t cell_bytes() const { return cell_bytes_; }
    /// True when more ranks than usable cores share the machine.
    bool oversubscribed() const { return oversubscribed_; }
    /// CPUs the job may use (mpirun's affinity).
    int cpus() const { return cpus_; }
    /// mpirun's verdict that the cells beat the kernel's copies between
    /// processes (SegmentHeader::kernel_copies_slow): the same on every rank.
    bool kernel_copies_slow() const { return header_->kernel_copies_slow != 0; }
    /// The wait policy (SHMPI_SPIN_US, SHMPI_YIELD_US), read once at start.
    const WaitPolicy& policy() const { return policy_; }

    // ---- sending cells ----

    /// A free cell in the ring to `dst`, or nullptr when that ring is full.
    std::byte* try_claim(std::uint32_t dst) {
        std::byte* cell = out_[dst].try_claim();
        // Which of our rings are full, kept here so that a sleep can tell
        // whether to nap short without a look at every ring (sleep_once).
        if (cell == nullptr) {
            if (stalled_[dst] == 0 && dst != rank_) {  // we empty our own ring ourselves
                stalled_[dst] = 1;
                ++stalled_count_;
            }
        } else if (stalled_count_ != 0 && stalled_[dst] != 0) {
            stalled_[dst] = 0;
            --stalled_count_;
        }
        return cell;
    }
    /// Publishes the claimed cell and wakes `dst` if it sleeps.
    void publish(std::uint32_t dst);

    // ---- receiving cells ----

    /// False when the ring from `src` holds no cell for sure; true when it
    /// may hold one (peek() tells).  Looks at our heads row where the job
    /// keeps one (SegmentHeader::ring_summary): one line per 16 peers, where
    /// peek() would look at a line of the ring itself.
    bool may_hold(std::uint32_t src) const {
        if (heads_mine_ == nullptr || src == rank_) return true;
        // Acquire: pairs with publish()'s release store; the cells counted
        // are visible (peek() acquires each one's sequence word as well).
        return heads_mine_[src].load(std::memory_order_acquire) != in_taken_[src];
    }
    /// The oldest unread cell from `src`, or nullptr.
    const std::byte* peek(std::uint32_t src) { return in_[src].try_peek(); }
    /// Hands the cell from peek() back to its producer.
    void release(std::uint32_t src) {
        in_[src].release();
        ++in_taken_[src];
    }
    /// Call after a batch of release(src): wakes `src` if it sleeps waiting
    /// for room in its ring to us.
    void after_release(std::uint32_t src);

    // ---- bulk copies ----

    /// Copies `n` bytes at `remote` in rank `src`'s address space to `local`
    /// with process_vm_readv (a plain memcpy for ourselves).  Returns false if
    /// the kernel refuses cross-process reads (ptrace policy, seccomp,
    /// SHMPI_CMA=0), after which the caller streams the data through the ring
    /// instead.  Throws SegmentError on any other failure.
    bool read_remote(std::uint32_t src, const void* remote, void* local, std::size_t n);
    /// The same into a list of local pieces: reads as many bytes as the
    /// pieces hold, from `remote` on, filling them in order (one vectored
    /// process_vm_readv per IOV_MAX pieces).  A derived-type receive lands
    /// its data in place this way instead of unpacking a copy.
    bool read_remote_scatter(std::uint32_t src, const void* remote, const struct iovec* local,
                             std::size_t pieces);
    /// Rank `r`'s pid for cross-process copies.  Read from its rank slot the
    /// first time (after one of its cells or flags was acquired, which
    /// orders the rank's own store at attach) and kept privately after
    /// that, so a peer that later scribbles over the slots cannot redirect
    /// our reads and writes into another process.  Throws SegmentError for
    /// a pid that cannot be a rank's.
    pid_t peer_pid(std::uint32_t r);
    /// False once a cross-process read was refused, or when SHMPI_CMA=0.
    bool cma_enabled() const { return cma_enabled_; }

    // ---- streams: a send that packs into the segment while its receiver unpacks ----
    // Each rank owns a stream buffer of stream_capacity() bytes; byte b of
    // its current stream sits at offset (start + b) mod stream_capacity(),
    // where the sender picks `start` and names it in the Rts.  The sender
    // packs no further than stream_taken() + stream_capacity(); the receiver
    // reads no further than stream_state().packed.

    /// Bytes in each rank's stream buffer; 0 when there are none (a 1-rank
    /// job, or SHMPI_STREAM_BYTES=0).
    std::uint64_t stream_capacity() const { return stream_bytes_; }
    /// Our own stream buffer, which only we write.
    std::byte* my_stream() const { return streams_ + std::size_t{rank_} * stream_bytes_; }
    /// Rank `src`'s stream buffer, read by its current receiver.
    const std::byte* peer_stream(std::uint32_t src) const { return streams_ + std::size_t{src} * stream_bytes_; }
    /// Starts our stream for send `token`: nothing packed, nothing taken.
    /// Call before publishing the Rts that names the token.
    void stream_begin(std::uint64_t token);
    /// The first `packed` bytes of our stream are in the buffer: publishes
    /// them (release) and wakes `dst`, the receiver, if it sleeps.
    void stream_advance(std::uint32_t dst, std::uint64_t packed);
    /// Bytes of our stream the receiver has finished with, or kStreamStop
    /// (acquire: the room they occupied may be overwritten afterwards).
    std::uint64_t stream_taken() const;
    struct StreamState {
        std::uint64_t token;   ///< the send the stream belongs to
        std::uint64_t packed;  ///< bytes of it in the buffer so far
    };
    /// Rank `src`'s stream as it stands now (the count is loaded with
    /// acquire: the bytes it covers may be read afterwards).
    StreamState stream_state(std::uint32_t src) const;
    /// We, the receiver of `src`'s stream, have finished reading its first
    /// `taken` bytes (or want no more: kStreamStop): publishes that (release)
    /// and wakes `src` if it sleeps.
    void stream_take(std::uint32_t src, std::uint64_t taken);

    // ---- send claims: who decides a cancellable send (RankSlot::send_claims) ----
    /// Opens our claim slot `slot` for send `token`: Pending.  Call before
    /// publishing the message that names the slot.
    void claim_open(std::uint32_t slot, std::uint64_t token);
    /// MPI_Cancel of our send `token` in `slot`: true if it was still
    /// Pending, which it now never leaves for a receiver (Cancelled); false
    /// when a receiver had matched it.
    bool claim_cancel(std::uint32_t slot, std::uint64_t token);
    /// A receive or probe about to take rank `src`'s send `token` named by
    /// claim slot `slot`: Matched when it is ours (Pending before, or
    /// matched by us already), Cancelled when the sender cancelled it,
    /// Later when the slot names a later send of `src` (so ours was
    /// cancelled: a send not cancelled holds its slot until we answer it),
    /// and Stale otherwise (a corrupted message).
    enum class Claim { Matched, Cancelled, Later, Stale, Pending };
    Claim claim_match(std::uint32_t src, std::uint32_t slot, std::uint64_t token);
    /// claim_match() for a probe that does not take the message
    /// (MPI_Probe, MPI_Iprobe): reads the slot and changes nothing, so the
    /// sender can still cancel the send until a receive takes it (MPI-3.1
    /// 3.8.1: the receive after a probe gets the probed message unless the
    /// send is cancelled first).  Pending when nobody has decided yet.
    Claim claim_peek(std::uint32_t src, std::uint32_t slot, std::uint64_t token) const;

    /// The job's segment, or nullptr for a 1-rank job; the shared-memory
    /// collectives (coll/shm_team.hpp) find their region and the peers'
    /// doorbells in it.
    const Segment* segment() const { return segment_ ? &*segment_ : nullptr; }
    /// Which of mpirun's programs this rank runs (MPMD, `:`; MPI_APPNUM),
    /// and how many ranks were started for that program; 0 and the job's
    /// size for a 1-rank job.
    std::uint32_t appnum() const;
    std::uint32_t app_size() const;

    // ---- job state ----

    void set_state(RankState s);
    /// True once any rank or the launcher has started ending the job.
    bool aborting() const {
        // Relaxed: a hint polled in loops; the exit that follows needs no data.
        return header_->abort_state.load(std::memory_order_relaxed) != kRunning;
    }
    /// Ends the whole job: records `code` and this rank as the cause (unless
    /// another cause was recorded first), wakes every rank, and leaves the
    /// process with status `code` (mod 256) for kAbortCalled, 1 for
    /// kAbortFatal.
    [[noreturn]] void abort_job(int code, AbortKind kind);

    /// True when more ranks of the job are awake than it has CPUs: a rank we
    /// wait for may then need our CPU, so waits yield at once instead of
    /// spinning (SegmentHeader::awake).
    bool crowded() const {
        // Relaxed: a hint; either answer is correct, one is faster.
        return oversubscribed_ && header_->awake.load(std::memory_order_relaxed) > cpus_;
    }
    /// How long a wait yields before it sleeps: SHMPI_YIELD_US while at most
    /// 16 ranks per CPU are awake; beyond, one more period for each 8 more
    /// ranks per CPU, up to kLongestYieldFactor periods.  A collective over
    /// r ranks per CPU takes a turn of every one of them, about 60 us per
    /// rank per CPU on the 2-CPU VM of docs/BENCHMARKS.md; once that outlasts
    /// the yields, its ranks fall asleep between calls, and each sleep (a
    /// membarrier, a futex call, a wake-up) made the calls slower still.
    /// A loop of Barriers at 48 and 64 ranks on 2 CPUs took 2.0-3.6 ms a
    /// call with 1 ms of yields, 0.7-1.5 ms with this budget, where Open MPI
    /// took 1.1-1.8 ms; one busy rank among 63 that wait for it lost 7 %
    /// (docs/BENCHMARKS.md, "Waits of many ranks on few CPUs").
    std::chrono::nanoseconds yield_budget() const {
        if (!oversubscribed_) return policy_.yield;
        // Relaxed: a hint read once a wait, like crowded().
        const std::int64_t awake = header_->awake.load(std::memory_order_relaxed);
        const std::int64_t step = std::int64_t{kRanksPerCpuPerYieldStep} * cpus_;
        if (awake <= 2 * step) return policy_.yield;
        return policy_.yield * std::min<std::int64_t>(awake - step, kLongestYieldFactor * step) / step;
    }
    static constexpr int kRanksPerCpuPerYieldStep = 8;
    static constexpr int kLongestYieldFactor = 16;
    /// A poll of the program's own that found nothing (MPI_Test, MPI_Iprobe
    /// and the like, called in a loop): when crowded, the CPU goes to
    /// another rank, perhaps the one the program waits for, as the waits
    /// do, but at most once per kPollYieldPeriod.  A program that only
    /// polls spins that long between yields, about what one yield costs;
    /// one that computes between its tests (HPCC's RandomAccess) switches
    /// tasks once per period of its own work instead of at every test.
    /// Spinning on MPI_Test at 8 ranks on 2 CPUs without any yield was 15
    /// times slower than MPI_Wait; yielding at every miss made a rank that
    /// tests after every 85 ns of work 8 times slower than this at 8 ranks
    /// on 2 CPUs (docs/BENCHMARKS.md, "Programs that test between their
    /// own work").  Costs nothing when not crowded.
    void missed() {
        if (!crowded()) return;
        // One clock read per miss, only while crowded.
        if (std::chrono::steady_clock::now() - last_poll_yield_ < kPollYieldPeriod) return;
        {
            const Gate::Open open;  // other threads of ours may call MPI meanwhile
            sched_yield();
        }
        ++poll_yields_;
        // From the yield's end: the time others ran is not this rank's spin.
        last_poll_yield_ = std::chrono::steady_clock::now();
    }
    /// At most one yield of missed() per this much time.
    static constexpr std::chrono::nanoseconds kPollYieldPeriod = std::chrono::microseconds(2);
    /// How many times missed() has given the CPU away (test/unit/test_wait.cpp).
    std::uint64_t poll_yields() const { return poll_yields_; }
    /// The one futex sleep of every wait, the transport's and the
    /// collectives' (ShmTeam): sleeps on this rank's doorbell while it holds
    /// `seen`, at most `nap`.  Keeps SegmentHeader::awake, and the slot's
    /// park line for the launcher's deadlock check (the call named by
    /// current_call, the doorbell value, the latest wake-up time).
    void park(std::uint32_t seen, std::chrono::nanoseconds nap);
    /// How many times this rank has slept in park(): what a wait costs when
    /// it sleeps (a membarrier and a futex call) is the one thing that
    /// tells its back-off apart (test/unit/test_wait.cpp).
    std::uint64_t sleeps() const { return sleeps_; }
    /// MPI_Finalize: this rank waits no more, so it stops counting as awake
    /// for good (SegmentHeader::awake).
    void leave_awake_count() { header_->awake.fetch_sub(1, std::memory_order_relaxed); }
    /// MPI_Grequest_start and MPI_Grequest_complete: counts the generalized
    /// requests another thread of this process may still complete
    /// (RankSlot::open_grequests).
    void grequest_opened() { slots_[rank_].open_grequests.fetch_add(1, std::memory_order_relaxed); }
    void grequest_completed() { slots_[rank_].open_grequests.fetch_sub(1, std::memory_order_relaxed); }

    /// Blocks until `poll()` returns true.  `poll` must make progress (drain
    /// rings, push queued cells) and report whether the wait is over.  Spins,
    /// then yields, then sleeps on this rank's doorbell; leaves the process if
    /// the job is aborting.
    template <class Poll>
    void wait(Poll&& poll);
    /// After a store in shared memory that rank `dst` may wait for in
    /// wait() (one-sided locks and epochs, rma/window.hpp): wakes `dst` if
    /// it sleeps.
    void wake(std::uint32_t dst) { wake_if_sleeping(dst); }

private:
    Transport() = default;
    [[noreturn]] void leave_aborted() const;
    /// After a store that `dst` may be waiting for: wakes `dst` if it
    /// sleeps (a seq_cst fence, then one load of its `sleeping`).
    void wake_if_sleeping(std::uint32_t dst);
    /// What one sleep on the doorbell ended with.
    enum class Slept {
        kDone,    ///< `poll` said the wait is over before the sleep
        kRung,    ///< the doorbell rang (before or during the sleep)
        kNapped,  ///< the nap ran out with no ring
    };
    /// One sleep on the doorbell.
    Slept sleep_once(const std::function<bool()>& poll);

    /// Ends this process when mpirun has ended (sleep_once()): a pidfd of
    /// mpirun, which poll() reports readable once mpirun has exited; -1 for
    /// a 1-rank job or where the kernel has no pidfd_open (before 5.3).
    /// PR_SET_PDEATHSIG ends a rank that is mpirun's own child, but not one
    /// started through a script or another program, which would otherwise
    /// sleep for ever once mpirun is killed outright (SIGKILL, the OOM
    /// killer) and cannot end its job.
    int launcher_fd_ = -1;
    /// monotonic_ns() of the latest look at launcher_fd_.
    std::int64_t launcher_checked_ns_ = 0;
    /// Looks at launcher_fd_ at most once per kLauncherCheckPeriodNs of
    /// sleeping; when mpirun has ended, says so and ends the job the way
    /// MPI_Abort does (the other ranks leave at once, not at their next look).
    void leave_if_launcher_gone();
    static constexpr std::int64_t kLauncherCheckPeriodNs = 200'000'000;

    std::optional<Segment> segment_;  ///< absent for a 1-rank job
    SegmentHeader* header_ = nullptr;
    RankSlot* slots_ = nullptr;       ///< slots_[r] for every rank
    std::vector<pid_t> peer_pids_;    ///< peer_pid()'s cache; 0 = not read yet
    std::uint32_t rank_ = 0;
    std::uint32_t size_ = 1;
    std::uint32_t cell_bytes_ = 0;
    std::byte* streams_ = nullptr;    ///< rank 0's stream buffer; the others follow
    std::uint64_t stream_bytes_ = 0;
    bool oversubscribed_ = false;     ///< more ranks than CPUs (see crowded())
    std::int32_t cpus_ = 1;           ///< CPUs the job may use
    bool cma_enabled_ = true;
    /// Sleepers force a barrier on every rank with membarrier, so wakers
    /// need no fence (SHMPI_MEMBARRIER=0 turns it off); see wake_if_sleeping.
    bool light_wake_ = false;
    /// The call name last written to the slot's parked_in (park()).
    const char* parked_in_written_ = nullptr;
    std::uint64_t sleeps_ = 0;        ///< park() calls (sleeps())
    std::uint64_t poll_yields_ = 0;   ///< missed()'s yields (poll_yields())
    /// When missed() last gave the CPU away; the epoch before the first time.
    std::chrono::steady_clock::time_point last_poll_yield_{};
    std::vector<Ring> out_;           ///< out_[d]: ring rank_ -> d
    std::vector<Ring> in_;            ///< in_[s]: ring s -> rank_
    /// in_taken_[s]: cells we have released in ring s -> rank_ (that ring's
    /// tail, kept here so that may_hold() reads no line of the ring).
    std::vector<std::uint64_t> in_taken_;
    /// stalled_[d]: 1 when our last try_claim(d) found the ring full (what
    /// out_[d]'s producer_stalled says); stalled_count_ of them are 1.
    std::vector<std::uint8_t> stalled_;
    std::uint32_t stalled_count_ = 0;
    /// Where the job keeps heads rows (SegmentHeader::ring_summary): ours,
    /// which we read, and the first of all receivers', heads_row_ bytes
    /// apart, where we store our counts.  nullptr otherwise.
    const std::atomic<std::uint64_t>* heads_mine_ = nullptr;
    std::byte* heads_ = nullptr;
    std::size_t heads_row_ = 0;
    WaitPolicy policy_;

    /// Memory for a 1-rank job's header and slot, and for the ring a rank
    /// uses to send to itself (it never crosses processes).
    struct Local;
    std::unique_ptr<Local> local_;
};

template <class Poll>
void Transport::wait(Poll&& poll) {
    using Clock = std::chrono::steady_clock;
    if (poll()) return;
    // Under MPI_THREAD_MULTIPLE, what this call did before its wait (a send
    // to ourselves, a completed request) may be what another thread of
    // ours sleeps for; from here on each pause, yield and sleep opens the
    // gate for the others, and each poll runs with it closed (gate.hpp).
    Gate::notify();
    // 1. Spin: the answer usually comes within a round trip.  When more
    //    ranks are awake than there are CPUs, the rank we wait for may need
    //    our CPU, so we yield at once: even one batch of 64 pauses (1.6 us on
    //    the 2-CPU VM of docs/BENCHMARKS.md) kept barriers at 4 ranks on 2
    //    CPUs twice as slow.  Idle ranks asleep in a receive do not count, so
    //    two ranks that ping-pong beside them still spin.
    const auto start = Clock::now();
    if (!crowded()) {
        do {
            for (int i = 0; i < 64; ++i) {
                if (poll()) return;
                const Gate::Open open;
                __builtin_ia32_pause();
            }
            if (aborting()) leave_aborted();
        } while (Clock::now() < start + policy_.spin && !crowded());
    }
    // 2. Yield: give the core to a rank that may be the one we wait for.
    auto yield_until = start + yield_budget();
    const std::function<bool()> fn = [&poll] { return poll(); };
    for (;;) {
        do {
            if (poll()) return;
            if (aborting()) leave_aborted();
            const Gate::Open open;
            sched_yield();
        } while (Clock::now() < yield_until);
        // 3. Sleep on the doorbell until a producer rings it.
        //    A nap that ends with no ring goes straight to the next sleep,
        //    whose first step is a poll.
        Slept slept;
        do {
            slept = sleep_once(fn);
        } while (slept == Slept::kNapped);
        if (slept == Slept::kDone) return;
        // Rung: a peer is active and may ring again within microseconds
        // (the next piece of a long message, room in a ring).  Yield a
        // while before the next sleep: each sleep forces a barrier on every
        // CPU (membarrier), and a long message that slept between all its
        // pieces spent more time in those barriers than in its copies
        // (64 MiB through a 4 KiB stream: 75,000 of them, 8 s of system
        // time, 4x slower).
        yield_until = Clock::now() + yield_budget();
    }
}

}  // namespace shmpi::shm
