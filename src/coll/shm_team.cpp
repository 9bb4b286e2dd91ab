#include "coll/shm_team.hpp"

#include <sched.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fmt/format.h>
#include <algorithm>
#include <numeric>

#include "coll/select.hpp"
#include "errors.hpp"
#include "p2p.hpp"
#include "place/place.hpp"
#include "shm/futex.hpp"
#include "shm/settings.hpp"
#include "shm/transport.hpp"

namespace shmpi::coll {
namespace {

/// The value peers read from probe_word_ to check single-copy reads.
constexpr std::uint64_t kProbeValue = 0x45424f52504d4853ull;  // "SHMPROBE"

/// True when this process can make every other process's barrier happen
/// when it goes to sleep (membarrier, Linux 4.16), so that flag writers need
/// no fence of their own.  Registers this process as one whose barrier
/// others may force.  The same answer on every rank of a job (one kernel,
/// one binary); SHMPI_COLL_SHM_MEMBARRIER=0 turns it off.
bool membarrier_ready() {
    if (!membarrier_wanted()) return false;
    return shm::membarrier_register();
}

}  // namespace

bool membarrier_wanted() { return shm::integer_setting("SHMPI_COLL_SHM_MEMBARRIER", 0, 1).value_or(1) != 0; }

ShmTuning tuning_from_environment() {
    ShmTuning t;
    t.flat_max = static_cast<int>(shm::integer_setting("SHMPI_COLL_SHM_FLAT", 1, 1 << 20).value_or(t.flat_max));
    t.band = static_cast<int>(shm::integer_setting("SHMPI_COLL_SHM_BAND", 1, 30).value_or(t.band));
    t.pipeline_band =
        static_cast<int>(shm::integer_setting("SHMPI_COLL_SHM_PIPELINE_BAND", 1, 30).value_or(t.pipeline_band));
    t.direct_min = shm::integer_setting("SHMPI_COLL_SHM_DIRECT", 0, 1L << 40).value_or(t.direct_min);
    t.rsag_min = shm::integer_setting("SHMPI_COLL_SHM_RSAG", 0, 1L << 40).value_or(t.rsag_min);
    t.stream = static_cast<int>(shm::integer_or_auto_setting("SHMPI_COLL_SHM_STREAM", -1, 1).value_or(t.stream));
    t.spread_max = shm::integer_setting("SHMPI_COLL_SHM_SPREAD", 0, 1L << 40).value_or(t.spread_max);
    t.alltoall_direct_above =
        shm::integer_or_auto_setting("SHMPI_COLL_SHM_ALLTOALL", -1, 1L << 40).value_or(t.alltoall_direct_above);
    return t;
}

std::int64_t ShmTuning::alltoall_direct(int members) const {
    if (alltoall_direct_above >= 0) return alltoall_direct_above;
    return static_cast<std::int64_t>(p2p::default_eager_limit(static_cast<std::uint64_t>(members)));
}

ShmTeam::ShmTeam(shm::Transport& transport, p2p::Engine* engine, const shm::CollRegion& region,
                 int index, std::vector<std::uint32_t> world)
    : transport_(transport),
      engine_(engine),
      members_(region.members),
      cells_(region.cells),
      cell_bytes_(region.cell_bytes),
      wide_bytes_(region.wide_bytes),
      cell_stride_(region.stride()),
      n_(static_cast<int>(world.size())),
      me_(index),
      world_(std::move(world)),
      tuning_(tuning_from_environment()),
      probe_word_(kProbeValue) {
    order_.resize(static_cast<std::size_t>(n_));
    std::iota(order_.begin(), order_.end(), 0);
    position_ = order_;
    release_nodes_.resize(static_cast<std::size_t>(n_));
    seen_gather_.assign(static_cast<std::size_t>(n_), 0);
    for (int m = 0; m < n_; ++m) {
        if (m != me_) all_but_me_.push_back(m);
    }
    // More members than CPUs (select.cpp then avoids the composed Scan and
    // Exscan).  How a wait spins or yields is Transport::crowded()'s call.
    crowded_ = n_ > transport_.cpus();
    kernel_copies_slow_ = transport_.kernel_copies_slow();
    light_notify_ = membarrier_ready();
    const shm::Segment* seg = transport_.segment();
    for (int m = 0; m < n_; ++m) {
        slots_.push_back(seg != nullptr ? &seg->slot(world_[static_cast<std::size_t>(m)]) : nullptr);
    }
}

ShmTeam::~ShmTeam() = default;

std::unique_ptr<ShmTeam> ShmTeam::for_world(shm::Transport& transport, p2p::Engine& engine) {
    const shm::Segment* seg = transport.segment();
    if (seg == nullptr) {
        // A singleton builds no team, but its bad settings fail MPI_Init too.
        tuning_from_environment();
        membarrier_wanted();
        return nullptr;
    }
    std::vector<std::uint32_t> world(transport.size());
    std::iota(world.begin(), world.end(), 0u);
    auto team = std::make_unique<ShmTeam>(transport, &engine, seg->world_coll_region(),
                                          static_cast<int>(transport.rank()), std::move(world));
    // Broadcast and barrier trees follow where mpirun placed the ranks
    // (place::locality_order: package, then NUMA node, L3, core); every rank
    // reads the same places, so every member sets the same order.
    // Reductions keep rank order, which decides their result bits (coll.hpp);
    // under the default compact mapping rank ranges are NUMA ranges anyway.
    const std::vector<place::Place> places = place::read_places(seg);
    if (places.size() == transport.size()) team->set_locality_order(place::locality_order(places));
    return team;
}

std::unique_ptr<ShmTeam> ShmTeam::for_pool(shm::Transport& transport, p2p::Engine& engine,
                                           const shm::CollRegion& region, int index,
                                           std::vector<std::uint32_t> world, std::uint64_t first_call,
                                           std::optional<bool> single_copy) {
    const shm::Segment* seg = transport.segment();
    std::vector<place::Place> member_places;
    if (seg != nullptr) {
        const std::vector<place::Place> places = place::read_places(seg);
        for (const std::uint32_t w : world) {
            if (w < places.size()) member_places.push_back(places[w]);
        }
    }
    auto team = std::make_unique<ShmTeam>(transport, &engine, region, index, std::move(world));
    team->start_calls_at(first_call);
    // The world's probe answers for every pair of ranks of the job (one
    // kernel, one uid, one ptrace policy), so a yes or no found there holds
    // here too; all members got the same answer from the new rank 0.
    if (single_copy) team->cma_ = *single_copy ? Cma::Yes : Cma::No;
    // Trees follow the members' places, like the world's (for_world());
    // every member reads the same places for the same members.
    if (member_places.size() == static_cast<std::size_t>(team->n_)) {
        team->set_locality_order(place::locality_order(member_places));
    }
    return team;
}

std::uint64_t ShmTeam::last_call_in(const shm::CollRegion& region, std::uint32_t count) {
    std::uint64_t last = 0;
    auto see = [&](std::uint64_t step) { last = std::max(last, step >> kStepBits); };
    for (std::uint32_t m = 0; m < count && m < region.count; ++m) {
        const shm::CollMember& mem = region.members[m];
        // Relaxed: the caller has acquired the region from its previous
        // holder (PoolEntry::owner), which orders every store to these flags
        // before these loads, and nobody stores to them meanwhile.  Flags
        // only grow from 0 and never come near 2^64, so a plain maximum is
        // the latest.
        for (const shm::CollLine& l : mem.lines) see(l.release.load(std::memory_order_relaxed));
        see(mem.gather.load(std::memory_order_relaxed));
        // A call can have left no flag (note_call(), a zero-byte call): its
        // published signature counts too, or a new team could reuse its
        // number and take the old signature for a peer's.
        for (const shm::CollCall& c : mem.calls) {
            last = std::max(last, c.call.load(std::memory_order_relaxed));
        }
    }
    return last;
}

void ShmTeam::check_entry(int m, const shm::CollCall& e) const {
    // Acquire: pairs with note_call()'s release store of `call`.
    const std::uint64_t call = e.call.load(std::memory_order_acquire);
    if (call == 0) return;
    const Noted theirs{call, e.what.load(std::memory_order_relaxed), e.bytes.load(std::memory_order_relaxed),
                       e.unit.load(std::memory_order_relaxed)};
    // Acquire fence: the loads above happen before the second look at
    // `call`; if it still holds the same number they read one entry.
    std::atomic_thread_fence(std::memory_order_acquire);
    if (e.call.load(std::memory_order_relaxed) != call) return;
    const Noted& mine = history_[call % shm::kCollCalls];
    if (mine.call != call || (mine.what == theirs.what && mine.bytes == theirs.bytes && mine.unit == theirs.unit)) {
        return;
    }
    report_mismatch(m, mine, theirs);
}

void ShmTeam::check_calls() const {
    for (int m = 0; m < n_; ++m) {
        if (m == me_) continue;
        for (const shm::CollCall& e : members_[m].calls) check_entry(m, e);
    }
}

void ShmTeam::check_call() const {
    for (int m = 0; m < n_; ++m) {
        if (m != me_) check_entry(m, members_[m].calls[noted_ % shm::kCollCalls]);
    }
}

void ShmTeam::throw_peer_state(const std::string& message) const {
    check_calls();
    throw MpiError(MPI_ERR_INTERN, message);
}

void ShmTeam::report_mismatch(int m, const Noted& mine, const Noted& theirs) const {
    auto kind = [](std::uint64_t w) { return static_cast<Kind>(w >> 32); };
    auto root = [](std::uint64_t w) { return static_cast<int>(w & 0xffffffffu) - 1; };
    auto call_name = [&](std::uint64_t w) {
        std::string name = kind_name(kind(w));
        name[0] = static_cast<char>(name[0] - 'a' + 'A');
        return "MPI_" + name;
    };
    // The mismatch may be in an earlier call than the one now waiting (a
    // root sends before it looks): the message is raised by the current
    // call, whose name comes first, so it says which call differed.
    const std::uint64_t back = noted_ - mine.call;
    const std::string earlier =
        back == 0 ? std::string()
                  : fmt::format("in an earlier collective call ({} before this one): ", back);
    if (kind(theirs.what) != kind(mine.what)) {
        throw MpiError(MPI_ERR_OTHER,
                       fmt::format("{}rank {} made another collective call ({}) where rank {} called {}: "
                                   "every rank must make the same collective calls in the same order",
                                   earlier, m, call_name(theirs.what), me_, call_name(mine.what)));
    }
    if (root(theirs.what) != root(mine.what)) {
        throw MpiError(MPI_ERR_ROOT,
                       fmt::format("{}rank {} called {} with root {} where rank {} gave root {}: the "
                                   "root must be the same on every rank",
                                   earlier, m, call_name(theirs.what), root(theirs.what), me_, root(mine.what)));
    }
    if (theirs.bytes != mine.bytes) {
        throw MpiError(theirs.bytes > mine.bytes ? MPI_ERR_TRUNCATE : MPI_ERR_COUNT,
                       fmt::format("{}rank {} called {} with {} bytes where rank {} has {}: the datatype "
                                   "signatures of the calls differ",
                                   earlier, m, call_name(theirs.what), theirs.bytes, me_, mine.bytes));
    }
    throw MpiError(MPI_ERR_TYPE,
                   fmt::format("{}rank {} called {} with elements of {} bytes where rank {} has {}: "
                               "a reduction with a user operation needs elements of the same size on "
                               "every rank (the same datatype, not only the same type signature)",
                               earlier, m, call_name(theirs.what), theirs.unit, me_, mine.unit));
}

void ShmTeam::notify(std::span<const int> members) {
    // Orders our flag store before the loads of `sleeping` (Dekker with the
    // sleeper in wait_slow(), which stores `sleeping` and then looks at the
    // flags once more).  With membarrier the sleeper forces the barrier onto
    // us when it goes to sleep, so here the compiler must only keep the
    // order; otherwise both sides fence.
    if (light_notify_) {
        std::atomic_signal_fence(std::memory_order_seq_cst);
    } else {
        std::atomic_thread_fence(std::memory_order_seq_cst);
    }
    for (const int m : members) {
        shm::RankSlot* slot = slots_[static_cast<std::size_t>(m)];
        if (slot == nullptr) continue;
        if (slot->sleeping.load(std::memory_order_relaxed) != 0) shm::ring_doorbell(slot->doorbell);
    }
}

void ShmTeam::notify_all() { notify(all_but_me_); }

void ShmTeam::wait_release_all(std::uint64_t step) {
    std::size_t next = 0;  // members before `next` have released already
    wait([&] {
        while (next < all_but_me_.size()) {
            if (!has_released(all_but_me_[next], step)) return false;
            ++next;
        }
        return true;
    });
}

void ShmTeam::wait_gather_all(std::uint64_t step) {
    std::size_t next = 0;
    wait([&] {
        while (next < all_but_me_.size()) {
            if (!has_gathered(all_but_me_[next], step)) return false;
            ++next;
        }
        return true;
    });
}

void ShmTeam::wait_slow(bool (*done)(void*), void* state) {
    using Clock = std::chrono::steady_clock;
    unsigned looks = 0;
    // One look: the condition, and every 32nd time the rings (a peer may be
    // blocked sending to us before it can reach the flag we wait for).
    auto look = [&] {
        if (done(state)) return true;
        if (engine_ != nullptr && (++looks & 31u) == 0) {
            engine_->progress();
            return done(state);
        }
        return false;
    };
    auto leave_if_aborting = [&] {
        if (!transport_.aborting()) return;
        // Another rank or the launcher is ending the job; it reports why.
        std::fflush(stdout);
        std::fflush(stderr);
        _exit(1);
    };
    // Under MPI_THREAD_MULTIPLE each pause, yield and sleep below opens the
    // gate for the other threads of this process, each look runs with it
    // closed (shm/gate.hpp, Transport::wait).
    shm::Gate::notify();
    // 1. Spin: the flag usually turns within a few hundred nanoseconds.
    //    Skipped while more ranks are awake than CPUs (see Transport::wait).
    const auto start = Clock::now();
    if (!transport_.crowded()) {
        do {
            for (int i = 0; i < 64; ++i) {
                if (look()) return;
                const shm::Gate::Open open;
                __builtin_ia32_pause();
            }
            leave_if_aborting();
        } while (Clock::now() < start + transport_.policy().spin && !transport_.crowded());
    }
    // 2. Yield: give the core to a rank that may be the one we wait for.
    const auto yield_until = start + transport_.yield_budget();
    do {
        if (look()) return;
        leave_if_aborting();
        const shm::Gate::Open open;
        sched_yield();
    } while (Clock::now() < yield_until);
    // 3. Sleep on our doorbell until a flag writer (or a point-to-point
    //    sender, or the abort) rings it.
    shm::RankSlot& me = *slots_[static_cast<std::size_t>(me_)];
    for (;;) {
        // Still waiting after the spin and the yields: a peer that made
        // another call than ours would keep us here forever.  Throws then.
        check_calls();
        // Acquire: pairs with a ringer's release increment; futex_wait
        // compares against this value, so a ring after this load is seen.
        const std::uint32_t seen = me.doorbell.load(std::memory_order_acquire);
        {
            const shm::SleepingMark asleep(me);
            // Our `sleeping` increment before our last look at the flags:
            // either the writer sees us asleep, or we see its flag (see
            // notify()).
            if (light_notify_) {
                shm::membarrier_all();
            } else {
                std::atomic_thread_fence(std::memory_order_seq_cst);
            }
            if (engine_ != nullptr) engine_->progress();
            if (done(state)) return;
            leave_if_aborting();
            transport_.park(seen, transport_.policy().sleep);
        }
        for (int i = 0; i < 64; ++i) {
            if (look()) return;
            const shm::Gate::Open open;
            __builtin_ia32_pause();
        }
        leave_if_aborting();
    }
}

void ShmTeam::keep_list(Area& a) { a.members.assign(a.readers.list.begin(), a.readers.list.end()); }

const tree::BandTree& ShmTeam::band_tree(int band) {
    for (const auto& t : trees_) {
        if (t->band() == band) return *t;
    }
    trees_.push_back(std::make_unique<tree::BandTree>(n_, band));
    return *trees_.back();
}

std::span<const tree::Op> ShmTeam::flat_program() {
    if (flat_program_.empty()) flat_program_ = tree::flat_program(n_, me_);
    return flat_program_;
}

const ShmTeam::ReleaseNode& ShmTeam::build_release_node(int root) {
    std::optional<ReleaseNode>& cached = release_nodes_[static_cast<std::size_t>(root)];
    const tree::BandTree& t = band_tree(small_band());
    // Positions relative to the root, in locality order: the root is
    // position 0 and each subtree is a run of consecutive positions.
    const int base = position_[static_cast<std::size_t>(root)];
    auto member_at = [&](int rel) { return order_[static_cast<std::size_t>((base + rel) % n_)]; };
    const int rel = (position_[static_cast<std::size_t>(me_)] - base + n_) % n_;
    ReleaseNode node;
    node.parent = t.parent(rel) < 0 ? -1 : member_at(t.parent(rel));
    for (const int c : t.children(rel)) node.children.push_back(member_at(c));
    node.children_all = node.children.size() + 1 == static_cast<std::size_t>(n_);
    cached = std::move(node);
    return *cached;
}

void ShmTeam::set_locality_order(std::vector<int> order) {
    if (order.size() != static_cast<std::size_t>(n_)) return;
    std::vector<int> pos(order.size(), -1);
    for (std::size_t i = 0; i < order.size(); ++i) {
        const int m = order[i];
        if (m < 0 || m >= n_ || pos[static_cast<std::size_t>(m)] != -1) return;  // not a permutation
        pos[static_cast<std::size_t>(m)] = static_cast<int>(i);
    }
    order_ = std::move(order);
    position_ = std::move(pos);
    for (auto& r : release_nodes_) r.reset();
}

bool ShmTeam::probe_single_copy() {
    if (n_ == 1) {
        cma_ = Cma::Yes;
        return true;
    }
    // The probe, one step: 1. publish our probe word's address; 2. read the
    // right neighbour's word; 3. publish the outcome; 4. everyone agrees.
    const std::uint64_t s = begin_call();
    shm::CollMember& me = members_[me_];
    me.probe_addr = reinterpret_cast<std::uint64_t>(&probe_word_);
    release(s);
    notify((me_ + n_ - 1) % n_);
    const int right = (me_ + 1) % n_;
    wait_release(right, s);
    std::uint64_t got = 0;
    bool ok = false;
    auto* remote = reinterpret_cast<std::uint64_t*>(member(right).probe_addr);
    try {
        ok = transport_.read_remote(world_[static_cast<std::size_t>(right)], remote, &got, sizeof got) &&
             got == kProbeValue;
    } catch (const shm::SegmentError&) {
        ok = false;
    }
    // Writing works under the same permission as reading; check it too, by
    // writing the value back.
    ok = ok && write_remote(right, remote, &got, sizeof got);
    me.probe_ok = ok ? 1 : 2;
    gather(s);
    notify_all();
    wait_gather_all(s);
    bool all = ok;
    for (const int m : all_but_me_) all = all && member(m).probe_ok == 1;
    cma_ = all ? Cma::Yes : Cma::No;
    return all;
}

namespace {

/// Runs a cross-process read; a bad address (the members disagree on a
/// buffer's size) becomes an MpiError.
template <class Read>
bool guarded(Read&& read) {
    try {
        return read();
    } catch (const shm::SegmentError& e) {
        throw MpiError(MPI_ERR_OTHER, e.what());
    }
}

}  // namespace

void ShmTeam::read_failed(int m) {
    std::fprintf(stderr,
                 "shmpi: rank %u: process_vm_readv from rank %u failed inside a collective after "
                 "it had worked; ending the job\n",
                 world_[static_cast<std::size_t>(me_)], world_[static_cast<std::size_t>(m)]);
    transport_.abort_job(MPI_ERR_OTHER, shm::kAbortFatal);
}

void ShmTeam::read(int m, const void* remote, void* local, std::size_t n) {
    if (n == 0) return;
    const std::uint32_t from = world_[static_cast<std::size_t>(m)];
    if (!guarded([&] { return transport_.read_remote(from, remote, local, n); })) read_failed(m);
}

void ShmTeam::read_into(int m, const void* remote, const Landing& land, std::uint64_t off, std::uint64_t n) {
    // A piece at a time through a buffer that stays in cache.  (Only a block
    // larger than its reader expected comes this way: the algorithms land
    // single copies in the dense buffer, see coll.hpp.)
    constexpr std::uint64_t kPiece = 128 * 1024;
    const auto* at = static_cast<const std::byte*>(remote);
    std::byte* piece = buffer(kPieceBuffer, std::min(n, kPiece));
    for (std::uint64_t done = 0; done < n;) {
        const std::uint64_t len = std::min(n - done, kPiece);
        read(m, at + done, piece, len);
        land.store(land.state, static_cast<std::int64_t>(off + done), piece, static_cast<std::int64_t>(len));
        done += len;
    }
}

void ShmTeam::take_chunks(int m, std::uint64_t s, std::uint64_t g0, std::uint64_t bytes, std::byte* out,
                          std::uint64_t want, const Landing* land, std::uint64_t at) {
    const std::uint64_t chunk = slot_bytes();
    for (std::uint64_t k = 0; k < chunks(bytes); ++k) {
        const std::uint64_t g = g0 + k;
        const std::uint64_t off = k * chunk;
        wait_release(m, s + 1 + g);
        if (off < want) {
            const std::uint64_t len = std::min({chunk, bytes - off, want - off});
            store(out + off, slot_of(m, static_cast<int>(g % kSlots)), len, land, at + off);
        }
        gather(s + 1 + g);
        notify(m);
    }
}

ShmTeam::Carry ShmTeam::put_block_out(std::uint64_t step, const void* src, std::uint64_t bytes, Readers readers,
                                      Source* typed, std::uint64_t hole_off, std::uint64_t hole_len,
                                      std::uint64_t piece, bool wide) {
    const Carry carry = wide ? wide_carry(bytes, piece) : carry_for(bytes, piece);
    claim(inline_area(step), step, readers);
    shm::CollLine& me = my_line(step);
    me.bytes = bytes;
    me.aux = static_cast<std::uint64_t>(carry);
    // Packed straight into place, or copied from the dense buffer.
    auto put = [&](std::byte* to) {
        if (typed != nullptr) {
            pack_into(*typed, 0, to, bytes, bounce(bytes));
        } else {
            const auto* from = static_cast<const std::byte*>(src);
            if (hole_len == 0 || hole_off >= bytes || hole_len > bytes - hole_off) {
                std::memcpy(to, from, bytes);
            } else {
                const std::uint64_t tail = hole_off + hole_len;
                std::memcpy(to, from, hole_off);
                std::memcpy(to + tail, from + tail, bytes - tail);
            }
        }
    };
    switch (carry) {
        case Carry::Inline:
            // (Typed or with a hole: put_block() took the others.)
            if (bytes > 0) put(me.data);
            break;
        case Carry::Cells:
            // (Only the slots the block covers.)
            claim_cells(step, readers, bytes);
            put(my_cells());
            break;
        case Carry::Wide:
            claim_wide(step, readers, bytes);
            put(my_wide_slot(0));
            break;
        case Carry::Direct:
        case Carry::Stream:  // (neither chosen by carry_for())
        case Carry::Paced:
            if (typed != nullptr) typed->dense();
            me.addr = reinterpret_cast<std::uint64_t>(src);
            break;
    }
    return carry;
}

const std::byte* ShmTeam::published(int m, std::uint64_t step, std::uint64_t n) const {
    const shm::CollLine& c = line(m, step);
    const char* what = nullptr;
    std::uint64_t area = 0;
    const std::byte* at = nullptr;
    switch (static_cast<Carry>(c.aux)) {
        case Carry::Inline:
            what = "inline data";
            area = shm::kCollInline;
            at = c.data;
            break;
        case Carry::Cells:
            // (And the wide cells after them: claim_cells().)
            what = "cells";
            area = cell_bytes_ + wide_bytes_;
            at = cells_of(m);
            break;
        case Carry::Wide:
            what = "wide cells";
            area = wide_bytes_;
            at = wide_slot_of(m, 0);
            break;
        default:
            throw_peer_state(fmt::format("collective: rank {} published a block in an unknown way ({})", m, c.aux));
    }
    // A size read from shared memory never takes a copy beyond the area it
    // names: a corrupted peer fails the job, it cannot make us overrun.
    if (n > area) {
        throw_peer_state(
            fmt::format("collective: rank {} published a {}-byte block in its {} ({} bytes)", m, c.bytes, what, area));
    }
    return at;
}

std::uint64_t ShmTeam::get_block_out(int m, std::uint64_t step, void* dst, std::uint64_t want,
                                     const Landing* land, std::uint64_t off) {
    const shm::CollLine& c = line(m, step);
    const std::uint64_t got = c.bytes;
    const std::uint64_t n = got < want ? got : want;
    if (n == 0) return got;
    if (static_cast<Carry>(c.aux) == Carry::Direct) {
        if (land != nullptr) {
            read_into(m, reinterpret_cast<const void*>(c.addr), *land, off, n);
        } else {
            read(m, reinterpret_cast<const void*>(c.addr), dst, n);
        }
    } else {
        store(dst, published(m, step, n), n, land, off);
    }
    return got;
}

bool ShmTeam::write_remote(int m, void* remote, const void* local, std::size_t n) {
    if (m == me_) {
        std::memcpy(remote, local, n);
        return true;
    }
    // The peer stored its pid when it attached, before it released any
    // step; we look only after acquiring one of its flags.
    const pid_t pid = transport_.peer_pid(world_[static_cast<std::size_t>(m)]);
    auto* src = static_cast<const char*>(local);
    auto to = reinterpret_cast<std::uintptr_t>(remote);
    while (n > 0) {
        struct iovec liov {const_cast<char*>(src), n};
        struct iovec riov {reinterpret_cast<void*>(to), n};
        const ssize_t put = process_vm_writev(pid, &liov, 1, &riov, 1, 0);
        if (put < 0 && errno == EINTR) continue;
        if (put <= 0) return false;
        src += put;
        to += static_cast<std::uintptr_t>(put);
        n -= static_cast<std::size_t>(put);
    }
    return true;
}

void ShmTeam::write(int m, void* remote, const void* local, std::size_t n) {
    if (n == 0) return;
    if (write_remote(m, remote, local, n)) return;
    const int err = errno;
    if (err == EFAULT) {
        // A bad address: the members disagree on a buffer's size.
        throw MpiError(MPI_ERR_OTHER, fmt::format("process_vm_writev of {} bytes to rank {} failed: {}",
                                                  n, world_[static_cast<std::size_t>(m)], std::strerror(err)));
    }
    std::fprintf(stderr,
                 "shmpi: rank %u: process_vm_writev to rank %u failed inside a collective after it "
                 "had worked (%s); ending the job\n",
                 world_[static_cast<std::size_t>(me_)], world_[static_cast<std::size_t>(m)],
                 std::strerror(err));
    transport_.abort_job(MPI_ERR_OTHER, shm::kAbortFatal);
}

std::byte* ShmTeam::buffer(int which, std::size_t bytes) {
    Buf& b = bufs_[which];
    if (b.bytes < bytes) {
        b.p.reset(new std::byte[bytes]);
        b.bytes = bytes;
    }
    return b.p.get();
}

void throw_size_mismatch(int from, std::uint64_t got, int me, std::uint64_t want) {
    throw MpiError(got > want ? MPI_ERR_TRUNCATE : MPI_ERR_COUNT,
                   fmt::format("rank {} sent {} bytes to rank {}, which expected {} (the datatype "
                               "signatures of the two calls differ)",
                               from, got, me, want));
}

}  // namespace shmpi::coll
