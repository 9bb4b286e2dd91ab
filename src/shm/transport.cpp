#include "shm/transport.hpp"
#include "arith.hpp"
#include "shm/settings.hpp"

#include <fmt/format.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <limits>
#include <new>
#include <string_view>
#include <thread>

namespace shmpi::shm {

/// Process-private stand-ins for what a 1-rank job has no segment for, and
/// the self ring of every job.
struct Transport::Local {
    SegmentHeader header{};
    RankSlot slot{};
    std::uint32_t self_cells = 0;
    std::uint32_t self_cell_bytes = 0;
    std::byte* self_ring = nullptr;
    ~Local() { std::free(self_ring); }
};

namespace {

/// How long a rank whose peer has vanished waits for the launcher to end
/// the job before it reports the failure itself (ms).
constexpr int kPeerGoneWaitMs = 2000;

/// CPUs the job may use where the segment does not say
/// (SegmentHeader::cpus is 0): mpirun's affinity (each rank is now bound to
/// one core of it, so its own affinity would count one), else our own.
int usable_cpus(std::int64_t launcher_pid) {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (launcher_pid > 0 && sched_getaffinity(static_cast<pid_t>(launcher_pid), sizeof set, &set) == 0 &&
        CPU_COUNT(&set) > 0) {
        return CPU_COUNT(&set);
    }
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) != 0) return 1;
    return CPU_COUNT(&set);
}

/// Whether this process runs under valgrind, which preloads its
/// vgpreload_core-*.so into every program it runs (and takes it out of the
/// environment of children it does not trace).
bool under_valgrind() {
    const char* preload = std::getenv("LD_PRELOAD");
    return preload != nullptr && std::strstr(preload, "/vgpreload_core-") != nullptr;
}

/// A singleton started by another MPI's launcher (mpirun.mpich,
/// mpirun.openmpi, ...) is one of N processes that each think they are
/// alone: say so once, on stderr, so that N copies of a 1-rank job are not
/// taken for an N-rank one.  Nothing else changes: the process runs as a
/// singleton, as MPICH and Open MPI programs do under each other's
/// launchers.
void warn_if_foreign_launcher() {
    const char* ours = std::getenv(kEnvJobSize);
    for (const char* var : {"PMI_SIZE", "OMPI_COMM_WORLD_SIZE"}) {
        const char* v = std::getenv(var);
        if (v == nullptr || std::strtol(v, nullptr, 10) <= 1) continue;
        // Inherited from a rank of shmpi's own job (system("./tool")).
        if (ours != nullptr && std::strcmp(ours, v) == 0) continue;
        std::fprintf(stderr,
                     "shmpi: MPI_Init: %s=%s: this process was started by another MPI's launcher, not by "
                     "shmpi's mpirun, so it runs alone (rank 0 of 1); start shmpi programs with shmpi's "
                     "mpirun\n",
                     var, v);
        std::fflush(stderr);
        return;
    }
}

}  // namespace

std::unique_ptr<Transport> Transport::from_environment() {
    std::unique_ptr<Transport> t(new Transport());
    t->local_ = std::make_unique<Local>();
    const char* fd_s = std::getenv(kEnvFd);
    if (fd_s == nullptr) {
        // A program started without mpirun is a 1-rank job.
        warn_if_foreign_launcher();
        t->header_ = &t->local_->header;
        t->header_->nranks = 1;
        t->header_->cell_bytes = 2048;
        t->header_->ring_cells = 32;
        t->slots_ = &t->local_->slot;
    } else {
        const char* rank_s = std::getenv(kEnvRank);
        const char* size_s = std::getenv(kEnvSize);
        if (rank_s == nullptr || size_s == nullptr) {
            throw SegmentError(fmt::format("shmpi: MPI_Init: {} is set but {} or {} is missing",
                                           kEnvFd, kEnvRank, kEnvSize));
        }
        const int fd = static_cast<int>(integer_setting_value(kEnvFd, fd_s, 0, 1 << 20));
        const auto size = static_cast<std::uint32_t>(integer_setting_value(kEnvSize, size_s, 0, 1 << 20));
        const auto rank = static_cast<std::uint32_t>(integer_setting_value(kEnvRank, rank_s, 0, 1 << 20));
        if (size == 0 || rank >= size) {
            throw SegmentError(fmt::format("shmpi: MPI_Init: {}={} is out of range for {}={}",
                                           kEnvRank, rank, kEnvSize, size));
        }
        t->segment_.emplace(Segment::attach(fd, size));
        t->header_ = &t->segment_->header();
        t->slots_ = &t->segment_->slot(0);
        t->rank_ = rank;
        // (launcher_fd_) Only a watch: where pidfd_open fails (an old
        // kernel; mpirun already gone) the rank runs as it did without one.
        const long pidfd = syscall(SYS_pidfd_open, static_cast<pid_t>(t->header_->launcher_pid), 0U);
        if (pidfd >= 0) t->launcher_fd_ = static_cast<int>(pidfd);  // close-on-exec, as pidfd_open makes it
        // Let peers read our buffers with process_vm_readv under Yama's
        // ptrace_scope=1 (siblings are not each other's ancestors).
        prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
    }
    unsetenv(kEnvFd);
    unsetenv(kEnvRank);
    unsetenv(kEnvSize);
    // What the programs this rank starts inherit instead: not a job to join
    // (they run as singletons), but the size that mpirun's PMI_SIZE and
    // OMPI_COMM_WORLD_SIZE, which they inherit too, come from.
    if (t->segment_) setenv(kEnvJobSize, std::to_string(t->segment_->layout().geometry.nranks).c_str(), 1);

    // Sizes from the layout Segment checked and copied at attach, which no
    // peer can change afterwards (the header stays writable by every rank).
    const std::uint32_t nranks = t->segment_ ? t->segment_->layout().geometry.nranks : t->header_->nranks;
    const std::uint32_t cell_bytes = t->segment_ ? t->segment_->layout().geometry.cell_bytes : t->header_->cell_bytes;
    const std::uint32_t ring_cells = t->segment_ ? t->segment_->layout().geometry.ring_cells : t->header_->ring_cells;
    t->size_ = nranks;
    t->peer_pids_.assign(nranks, 0);
    t->cell_bytes_ = cell_bytes - kCellSeqBytes;
    if (t->segment_ && t->segment_->layout().geometry.stream_bytes > 0) {
        t->stream_bytes_ = t->segment_->layout().geometry.stream_bytes;
        t->streams_ = t->segment_->stream_buffer(0);
    }
    t->cpus_ = t->header_->cpus > 0 ? static_cast<int>(t->header_->cpus) : usable_cpus(t->header_->launcher_pid);
    t->oversubscribed_ = static_cast<int>(t->size_) > t->cpus_;
    try {
        // Off by default under valgrind: memcheck in this process does not
        // see what a peer's process_vm_writev puts in its buffers, and
        // takes those bytes for uninitialised.  Each collective team turns
        // single copies off when one member has them off (probe_single_copy()).
        t->cma_enabled_ = integer_setting("SHMPI_CMA", 0, 1).value_or(under_valgrind() ? 0 : 1) != 0;
        t->light_wake_ = integer_setting("SHMPI_MEMBARRIER", 0, 1).value_or(1) != 0 && membarrier_register();
        t->policy_.spin = std::chrono::microseconds(integer_setting("SHMPI_SPIN_US", 0, 10'000'000).value_or(20));
        t->policy_.yield = std::chrono::microseconds(integer_setting("SHMPI_YIELD_US", 0, 100'000'000).value_or(1000));
    } catch (const SegmentError&) {
        t->rethrow_init_failure();
    }

    // The self ring: same geometry, private memory.
    Local& l = *t->local_;
    l.self_cells = ring_cells;
    l.self_cell_bytes = cell_bytes;
    const std::size_t bytes = ring_bytes(l.self_cells, l.self_cell_bytes);
    const std::size_t rounded = round_up(bytes, kLine);
    l.self_ring = static_cast<std::byte*>(std::aligned_alloc(kLine, rounded));
    if (l.self_ring == nullptr) throw std::bad_alloc();
    std::memset(l.self_ring, 0, rounded);  // zero-filled memory is an empty ring
    new (l.self_ring) RingControl{};

    t->out_.resize(t->size_);
    t->in_.resize(t->size_);
    t->in_taken_.assign(t->size_, 0);
    t->stalled_.assign(t->size_, 0);
    if (t->segment_ && t->segment_->layout().geometry.ring_summary != 0) {
        t->heads_mine_ = t->segment_->heads(t->rank_);
        t->heads_ = reinterpret_cast<std::byte*>(t->segment_->heads(0));
        t->heads_row_ = t->segment_->layout().heads_row;
    }
    // Relaxed: published to peers by the release of our first cell.
    t->slots_[t->rank_].pid.store(getpid(), std::memory_order_relaxed);
    for (std::uint32_t r = 0; r < t->size_; ++r) {
        if (r == t->rank_) {
            t->out_[r] = t->in_[r] = Ring(l.self_ring, l.self_cells, l.self_cell_bytes);
        } else {
            t->out_[r] = t->segment_->ring(t->rank_, r);
            t->in_[r] = t->segment_->ring(r, t->rank_);
        }
    }
    t->set_state(kAttached);
    // Under MPI_THREAD_MULTIPLE a thread leaving the lock rings our own
    // doorbell for the others asleep on it (gate.hpp).
    Gate::set_doorbell(&t->slots_[t->rank_].doorbell);
    return t;
}

void print_init_failure(std::string_view what) {
    // Messages from the segment layer already say "shmpi: ...".
    const bool named = what.substr(0, 6) == "shmpi:";
    std::fprintf(stderr, "%s%.*s\n", named ? "" : "shmpi: ", static_cast<int>(what.size()), what.data());
    std::fflush(stderr);
}

void Transport::rethrow_init_failure() const {
    try {
        throw;
    } catch (const std::exception& e) {
        if (!segment_) throw;
        // The low two bits say how far the first rank got (SegmentHeader).
        // (std::hash of the text is the same in every rank: they all run
        // this library's code.)
        const std::uint64_t text = std::hash<std::string_view>{}(e.what()) & ~std::uint64_t{3};
        const std::uint64_t claimed = text | 1, printed = text | 2;
        std::uint64_t first = 0;
        // Relaxed, here and below: the value is the whole message.
        if (header_->init_failure.compare_exchange_strong(first, claimed, std::memory_order_relaxed)) {
            print_init_failure(e.what());
            header_->init_failure.store(printed, std::memory_order_relaxed);
            throw ReportedInitFailure(e.what());
        }
        if ((first & ~std::uint64_t{3}) != text) throw;  // another message: ours is news
        // The same message: wait until the first rank has printed it, since
        // mpirun ends the job at the first rank that exits.  If it never
        // does (killed in between), print it ourselves.
        for (int waited_ms = 0; first != printed && waited_ms < 5000; ++waited_ms) {
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
            first = header_->init_failure.load(std::memory_order_relaxed);
        }
        if (first != printed) throw;
        throw ReportedInitFailure(e.what());
    }
}

Transport::~Transport() {
    Gate::set_doorbell(nullptr);
    if (launcher_fd_ >= 0) close(launcher_fd_);
}

void Transport::publish(std::uint32_t dst) {
    out_[dst].publish();
    if (dst == rank_) return;
    if (heads_ != nullptr) {
        auto* row = reinterpret_cast<std::atomic<std::uint64_t>*>(heads_ + std::size_t{dst} * heads_row_);
        // Release: protects the cell just published (may_hold()).  Before
        // the fence of wake_if_sleeping, like the cell's own sequence word:
        // a receiver about to sleep sees one or the other rings it.
        row[rank_].store(out_[dst].published(), std::memory_order_release);
    }
    wake_if_sleeping(dst);
}

void Transport::wake_if_sleeping(std::uint32_t dst) {
    // Dekker with the sleeper (sleep_once): our store (a cell's sequence
    // word, a stream count) must be ordered before our load of `sleeping`,
    // and the sleeper's store of `sleeping` before its last poll, so that
    // either it sees our store or we see it asleep.  With light_wake_ the
    // sleeper, about to sleep anyway, forces a full barrier onto every rank
    // (membarrier) between its store and its poll, which orders our side
    // too: here the compiler must only keep the order, and the message path
    // never stalls on a fence.  Otherwise both sides fence.
    if (light_wake_) {
        std::atomic_signal_fence(std::memory_order_seq_cst);
    } else {
        std::atomic_thread_fence(std::memory_order_seq_cst);
    }
    RankSlot& peer = slots_[dst];
    if (peer.sleeping.load(std::memory_order_relaxed) != 0) {
        ring_doorbell(peer.doorbell);
    }
}

void Transport::stream_begin(std::uint64_t token) {
    RankSlot& me = slots_[rank_];
    // Relaxed: the release publication of the Rts naming `token` orders all
    // three before the receiver's first look.  `stream_taken` is the
    // receiver's word, but the previous receiver stored its last value
    // before the Fin we acquired, and the next one writes only after the Rts.
    me.stream_token.store(token, std::memory_order_relaxed);
    me.stream_packed.store(0, std::memory_order_relaxed);
    me.stream_taken.store(0, std::memory_order_relaxed);
}

void Transport::stream_advance(std::uint32_t dst, std::uint64_t packed) {
    // Release: protects the packed bytes in our buffer, which the receiver
    // reads after its acquire load.
    slots_[rank_].stream_packed.store(packed, std::memory_order_release);
    if (dst != rank_) wake_if_sleeping(dst);
}

std::uint64_t Transport::stream_taken() const {
    // Acquire: pairs with stream_take; the receiver's reads of the room it
    // hands back are done before we overwrite it.
    return slots_[rank_].stream_taken.load(std::memory_order_acquire);
}

Transport::StreamState Transport::stream_state(std::uint32_t src) const {
    const RankSlot& peer = slots_[src];
    // Acquire: pairs with stream_advance; the bytes it counts are in the buffer.
    const std::uint64_t packed = peer.stream_packed.load(std::memory_order_acquire);
    // Relaxed: stored before the Rts the caller acquired, and unchanged until
    // the caller answers that Rts.
    const std::uint64_t token = peer.stream_token.load(std::memory_order_relaxed);
    return {token, packed};
}

void Transport::stream_take(std::uint32_t src, std::uint64_t taken) {
    // Release: our reads of the bytes below `taken` are done before the
    // sender, after its acquire load, overwrites them.
    slots_[src].stream_taken.store(taken, std::memory_order_release);
    if (src != rank_) wake_if_sleeping(src);
}

namespace {

std::uint64_t claim_word(std::uint64_t token, SendClaim state) {
    return (token << 2) | static_cast<std::uint64_t>(state);
}

/// What a claim slot holding `seen` says of send `token`.
Transport::Claim claim_of(std::uint64_t seen, std::uint64_t token) {
    if (seen == claim_word(token, SendClaim::Pending)) return Transport::Claim::Pending;
    if (seen == claim_word(token, SendClaim::Matched)) return Transport::Claim::Matched;
    if (seen == claim_word(token, SendClaim::Cancelled)) return Transport::Claim::Cancelled;
    if ((seen >> 2) > token) return Transport::Claim::Later;
    return Transport::Claim::Stale;
}

}  // namespace

void Transport::claim_open(std::uint32_t slot, std::uint64_t token) {
    // Relaxed: the release publication of the message naming the slot
    // orders it before any receiver's look.
    slots_[rank_].send_claims[slot].store(claim_word(token, SendClaim::Pending), std::memory_order_relaxed);
}

bool Transport::claim_cancel(std::uint32_t slot, std::uint64_t token) {
    std::uint64_t expected = claim_word(token, SendClaim::Pending);
    // acq_rel: one winner between us and the receiver (see RankSlot).
    return slots_[rank_].send_claims[slot].compare_exchange_strong(
        expected, claim_word(token, SendClaim::Cancelled), std::memory_order_acq_rel, std::memory_order_acquire);
}

Transport::Claim Transport::claim_match(std::uint32_t src, std::uint32_t slot, std::uint64_t token) {
    std::uint64_t seen = claim_word(token, SendClaim::Pending);
    // acq_rel: one winner between us and the sender (see RankSlot).
    if (slots_[src].send_claims[slot].compare_exchange_strong(seen, claim_word(token, SendClaim::Matched),
                                                              std::memory_order_acq_rel, std::memory_order_acquire)) {
        return Claim::Matched;
    }
    // Not Pending (the exchange would have won): Matched when a matched
    // probe of ours took it, else the sender's decision.
    return claim_of(seen, token);
}

Transport::Claim Transport::claim_peek(std::uint32_t src, std::uint32_t slot, std::uint64_t token) const {
    // Acquire: pairs with the sender's CAS to Cancelled (acq_rel), like
    // claim_match()'s failed CAS; nothing else is read on its strength.
    return claim_of(slots_[src].send_claims[slot].load(std::memory_order_acquire), token);
}

void Transport::after_release(std::uint32_t src) {
    if (src == rank_) return;
    // No fence here, to keep the common path (nobody stalled) at one load of
    // a line we hold in our cache.  The race this leaves, a producer that
    // marks itself stalled just after this load, is covered on its side: a
    // producer with a stalled ring sleeps at most kStalledSleep at a time
    // (sleep_once), so it finds the room we made within a millisecond.
    if (!in_[src].producer_stalled()) return;
    RankSlot& peer = slots_[src];
    if (peer.sleeping.load(std::memory_order_relaxed) != 0) ring_doorbell(peer.doorbell);
}

pid_t Transport::peer_pid(std::uint32_t r) {
    pid_t& p = peer_pids_[r];  // one thread at a time (shm/gate.hpp under MPI_THREAD_MULTIPLE)
    if (p == 0) {
        const std::int64_t v = slots_[r].pid.load(std::memory_order_relaxed);
        if (v <= 1 || v > std::numeric_limits<pid_t>::max() || v == getpid()) {
            throw SegmentError(fmt::format("shmpi: rank {}'s slot holds pid {}, which cannot be a peer rank's", r, v));
        }
        p = static_cast<pid_t>(v);
    }
    return p;
}

bool Transport::read_remote(std::uint32_t src, const void* remote, void* local, std::size_t n) {
    const struct iovec one {local, n};
    return read_remote_scatter(src, remote, &one, 1);
}

bool Transport::read_remote_scatter(std::uint32_t src, const void* remote, const struct iovec* local,
                                    std::size_t pieces) {
    auto from = reinterpret_cast<std::uintptr_t>(remote);
    if (src == rank_) {
        for (std::size_t i = 0; i < pieces; ++i) {
            std::memcpy(local[i].iov_base, reinterpret_cast<const void*>(from), local[i].iov_len);
            from += local[i].iov_len;
        }
        return true;
    }
    if (!cma_enabled_) return false;
    // The kernel takes at most IOV_MAX (1024) local pieces per call and may
    // copy less than asked; `head` is how much of local[i] is already done.
    constexpr std::size_t kMaxPieces = 1024;
    std::size_t i = 0;
    std::size_t head = 0;
    struct iovec batch[kMaxPieces];
    while (i < pieces) {
        std::size_t k = 0;
        std::size_t want = 0;
        for (std::size_t j = i; j < pieces && k < kMaxPieces; ++j, ++k) {
            const std::size_t skip = j == i ? head : 0;
            batch[k].iov_base = static_cast<char*>(local[j].iov_base) + skip;
            batch[k].iov_len = local[j].iov_len - skip;
            want += batch[k].iov_len;
        }
        if (want == 0) {  // only empty pieces left in this batch
            i += k;
            head = 0;
            continue;
        }
        struct iovec riov {reinterpret_cast<void*>(from), want};
        const pid_t pid = peer_pid(src);
        const ssize_t got = process_vm_readv(pid, batch, k, &riov, 1, 0);
        if (got < 0) {
            if (errno == EINTR) continue;
            if (errno == EPERM || errno == ENOSYS || errno == EACCES) {
                // Fall back, don't fail, and say so once.
                std::fprintf(stderr,
                             "shmpi: rank %u: process_vm_readv refused (%s); large messages now "
                             "go through the shared-memory rings, one copy more (see README, "
                             "Troubleshooting)\n",
                             rank_, std::strerror(errno));
                cma_enabled_ = false;
                return false;
            }
            const int err = errno;
            if (err == ESRCH) {
                // The peer is gone: it died, and the launcher is about to end
                // the job and say why (within a second: it reaps every rank).
                // Wait for that, so that the report names the dead rank and
                // its cause, not this rank's failed read.
                for (int ms = 0; ms < kPeerGoneWaitMs && !aborting(); ++ms) usleep(1000);
            }
            if (aborting()) leave_aborted();
            throw SegmentError(fmt::format(
                "shmpi: cannot read {} bytes from rank {} (pid {}) with process_vm_readv: {}", want,
                src, pid, std::strerror(err)));
        }
        if (got == 0) {
            throw SegmentError(fmt::format(
                "shmpi: process_vm_readv from rank {} returned no data for {} bytes", src, want));
        }
        from += static_cast<std::size_t>(got);
        // Advance over what the kernel filled.
        auto left = static_cast<std::size_t>(got);
        while (left > 0) {
            const std::size_t room = local[i].iov_len - head;
            if (left < room) {
                head += left;
                left = 0;
            } else {
                left -= room;
                ++i;
                head = 0;
            }
        }
        while (i < pieces && local[i].iov_len == head) {  // skip finished and empty pieces
            ++i;
            head = 0;
        }
    }
    return true;
}

std::uint32_t Transport::appnum() const { return segment_ ? segment_->slot(rank_).appnum : 0; }

std::uint32_t Transport::app_size() const {
    if (!segment_) return size_;
    // mpirun writes every slot's appnum before it starts the ranks.
    const std::uint32_t mine = appnum();
    std::uint32_t n = 0;
    for (std::uint32_t r = 0; r < size_; ++r) n += segment_->slot(r).appnum == mine ? 1 : 0;
    return n;
}

void Transport::set_state(RankState s) {
    // Release: the launcher reads the state after the rank exited; what a
    // finished MPI_Finalize did is complete before it.
    slots_[rank_].state.store(s, std::memory_order_release);
}

void Transport::abort_job(int code, AbortKind kind) {
    std::uint32_t expected = kRunning;
    // acq_rel: the winner's later stores of rank and code are ordered after
    // it took the flag; a loser sees the winner's claim.
    if (header_->abort_state.compare_exchange_strong(expected, kAborting,
                                                     std::memory_order_acq_rel)) {
        // Relaxed: the launcher reads these after this process has exited.
        header_->abort_code.store(code, std::memory_order_relaxed);
        header_->abort_kind.store(kind, std::memory_order_relaxed);
        header_->abort_rank.store(static_cast<std::int32_t>(rank_), std::memory_order_relaxed);
    }
    for (std::uint32_t r = 0; r < size_; ++r) {
        if (r == rank_) continue;
        ring_doorbell(slots_[r].doorbell);
    }
    std::fflush(stdout);
    std::fflush(stderr);
    // The status mpirun gives (README, exit statuses), which a singleton,
    // with no mpirun, must give itself: `code` for MPI_Abort, 1 for a fatal
    // error, whose class may be 0 mod 256 (an added class: 16384).
    _exit(kind == kAbortFatal ? 1 : code & 0xff);
}

void Transport::leave_aborted() const {
    // Another rank or the launcher is ending the job; the launcher reports
    // the cause, so leave quietly.
    std::fflush(stdout);
    std::fflush(stderr);
    _exit(1);
}

Transport::Slept Transport::sleep_once(const std::function<bool()>& poll) {
    RankSlot& me = slots_[rank_];
    // Acquire: pairs with a producer's release increment; the value read here
    // is what futex_wait compares against, so a ring after this load is seen.
    const std::uint32_t seen = me.doorbell.load(std::memory_order_acquire);
    const SleepingMark asleep(me);
    // Our `sleeping` increment before the checks in poll(); see
    // wake_if_sleeping() for both kinds of barrier.
    if (light_wake_) {
        membarrier_all();
    } else {
        std::atomic_thread_fence(std::memory_order_seq_cst);
    }
    if (poll()) return Slept::kDone;
    if (aborting()) leave_aborted();
    // Cells in our ring to ourselves: poll() drained it and then filled it
    // again from a long message to ourselves, or many, and only we read
    // it: nobody would ring us.  Not sleeping on them keeps such a wait
    // polling (it goes back to yielding, as after a ring).  A wait that
    // slept here took one nap per ringful: 100 pre-posted 30 KB messages
    // to itself took 12 s at 3 ranks on 2 CPUs, 0.026 s with MPICH.
    if (in_[rank_].has_data()) return Slept::kRung;
    // A producer waiting for room in a ring may miss its wake-up (see
    // after_release), so it sleeps in short naps.
    const auto nap = stalled_count_ != 0 ? kStalledSleep : policy_.sleep;
    park(seen, nap);
    leave_if_launcher_gone();
    // Relaxed: only whether it moved; the caller's poll() reads what a
    // producer published with its own acquire loads.
    return me.doorbell.load(std::memory_order_relaxed) != seen ? Slept::kRung : Slept::kNapped;
}

void Transport::leave_if_launcher_gone() {
    if (launcher_fd_ < 0) return;
    const std::int64_t now = monotonic_ns();
    if (now - launcher_checked_ns_ < kLauncherCheckPeriodNs) return;
    launcher_checked_ns_ = now;
    struct pollfd p {launcher_fd_, POLLIN, 0};
    if (poll(&p, 1, 0) <= 0) return;  // still running (or poll failed: keep waiting)
    if (aborting()) leave_aborted();
    std::fprintf(stderr, "shmpi: rank %u: mpirun (pid %lld) has ended without ending the job; ending it\n",
                 rank_, static_cast<long long>(header_->launcher_pid));
    abort_job(1, kAbortFatal);
}

void Transport::park(std::uint32_t seen, std::chrono::nanoseconds nap) {
    RankSlot& me = slots_[rank_];
    if (Gate::on()) {
        // MPI_THREAD_MULTIPLE: other threads of ours may be outside MPI,
        // about to send what everyone waits for, so the rank never shows as
        // parked (the launcher's deadlock report leaves it out), and it
        // stops counting as awake with its first sleeping thread.
        if (Gate::will_sleep()) header_->awake.fetch_sub(1, std::memory_order_relaxed);
        ++sleeps_;
        {
            const Gate::Open open;
            futex_wait(me.doorbell, seen, static_cast<long>(nap.count()));
        }
        if (Gate::woke()) header_->awake.fetch_add(1, std::memory_order_relaxed);
        return;
    }
    // Relaxed, every store of the park line: the launcher trusts only values
    // it has read unchanged for a long time (layout.hpp, RankSlot).
    const char* call = current_call;
    if (call != parked_in_written_) {
        parked_in_written_ = call;
        char name[sizeof me.parked_in] = {};
        if (call != nullptr) std::strncpy(name, call, sizeof name - 1);
        for (std::size_t w = 0; w < std::size(me.parked_in); ++w) {
            std::uint64_t word = 0;
            std::memcpy(&word, name + 8 * w, 8);
            me.parked_in[w].store(word, std::memory_order_relaxed);
        }
    }
    me.parked_until.store(monotonic_ns() + nap.count(), std::memory_order_relaxed);
    me.parked_on.store(seen, std::memory_order_relaxed);
    me.parked.store(1, std::memory_order_relaxed);
    header_->awake.fetch_sub(1, std::memory_order_relaxed);
    ++sleeps_;
    futex_wait(me.doorbell, seen, static_cast<long>(nap.count()));
    header_->awake.fetch_add(1, std::memory_order_relaxed);
    me.parked.store(0, std::memory_order_relaxed);
}

}  // namespace shmpi::shm
