// The shared segment's layout: what lies where, and who writes each field.
//
//   offset 0           SegmentHeader            (one per job)
//   ranks_offset       RankSlot[nranks]         (one per rank)
//   rings_offset       Ring[nranks * nranks]    (ring (s, d) at index s*nranks + d;
//                                                the diagonal is unused: a rank sends
//                                                to itself without the segment)
//   heads_offset       uint64[nranks][heads_row] (row d, word s: the cells rank s has
//                                                published in ring (s, d), written by s
//                                                only, when the header's ring_summary is
//                                                set: d polls its row, one line per 16
//                                                peers, instead of every ring's cell)
//   coll_offset        CollMember[nranks]       (MPI_COMM_WORLD's collective region:
//                                                flags and inline data, one per rank)
//   coll_cells_offset  cells[nranks][coll_cell_bytes + wide_cell_bytes]
//                                               (that region's data cells, one block
//                                                per rank, written by that rank only;
//                                                the wide part is 0 bytes unless ranks
//                                                outnumbered the CPUs at launch)
//   stream_offset      bytes[nranks][stream_bytes]
//                                               (each rank's stream buffer: the pieces
//                                                of its streamed send, written by that
//                                                rank only; see p2p.cpp)
//   pool_offset        PoolEntry[pool_regions]  (the region pool's control words:
//                                                who holds each region)
//   pool_regions_offset  pool_regions regions, pool_region_stride bytes apart,
//                        each of the world region's shape: CollMember[nranks],
//                        then (page-aligned) cells[nranks][coll_cell_bytes];
//                        a communicator of m members uses the first m of each
//
// Everything in the segment is standard-layout and pointer-free: objects refer
// to each other by offsets from the segment's base, because every process maps
// the segment at a different address.
//
// The launcher creates and zero-fills the segment, writes the immutable part of
// the header and each RankSlot's place before the first rank starts, and never
// changes the immutable part again.  A zero-filled ring is a valid empty ring.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace shmpi::shm {

/// One cache line, doubled: adjacent-line prefetch pulls pairs of 64-byte
/// lines, so fields written by different processes sit 128 bytes apart.
inline constexpr std::size_t kLine = 128;

inline constexpr std::uint64_t kMagic = 0x47455349504d4853ull;  // "SHMPISEG"
// 3: RankSlot place fields; 4: stream line; 5: the pool of collective regions;
// 6: the header's awake line; 8: next_shared_context; 9: shared_context_users;
// 10: RankSlot::appnum; 11: RankSlot's park line; 12: RankSlot::send_claims;
// 13: init_failure; 14: kernel_copies_slow; 15: wide_cell_bytes; 16: cpus;
// 17: 64 release lines and 128 call signatures per collective member;
// 18: CollLine::offer; 19: CollCall::unit; 20: 4096 send claims;
// 21: 16384 idup context slots; 22: heads rows and ring_summary
inline constexpr std::uint32_t kLayoutVersion = 22;

/// Context ids: those below kSharedContextBase are agreed on by the members
/// of a new communicator (ContextIds, comm_create.cpp); those from
/// kSharedContextBase to kContextEnd - 1 come from the segment, for
/// MPI_Comm_idup, which cannot wait for an agreement: first the
/// kSharedContextSlots ids whose users the header counts (reused), then
/// next_shared_context's (not reused).  Context ids stay below kContextEnd
/// because the collective contexts set bit 31 and bit 30
/// (Communicator::coll_context()).  16384 slots (64 KiB of counts): with
/// 1024, a program holding about a thousand idup'ed communicators took a
/// never-reused id on many of its idup calls, since a member's
/// MPI_Comm_free gives its count back only when that member gets there.
inline constexpr std::uint32_t kSharedContextBase = 0x20000000u;
inline constexpr std::uint32_t kSharedContextSlots = 16384;
inline constexpr std::uint32_t kContextEnd = 0x40000000u;

/// Job-wide state values of SegmentHeader::abort_state.
enum AbortState : std::uint32_t { kRunning = 0, kAborting = 1 };

/// Why a rank ended the job (SegmentHeader::abort_kind).
enum AbortKind : std::uint32_t {
    kAbortCalled = 0,   ///< the program called MPI_Abort
    kAbortFatal = 1,    ///< an MPI error under MPI_ERRORS_ARE_FATAL (already reported by the rank)
};

/// Life-cycle values of RankSlot::state, in the order a rank goes through
/// them.  The launcher reads them to tell a clean exit from a fault.
enum RankState : std::uint32_t {
    kNotStarted = 0,   ///< launcher forked it; MPI_Init not reached
    kAttached = 1,     ///< mapped the segment and checked the header
    kFinalized = 2,    ///< returned from MPI_Finalize
};

struct alignas(kLine) SegmentHeader {
    // ---- immutable after creation: written by the launcher before fork ----
    std::uint64_t magic;          ///< kMagic; checked first by every attacher
    std::uint32_t version;        ///< kLayoutVersion
    std::uint32_t nranks;         ///< ranks in MPI_COMM_WORLD
    std::uint64_t size;           ///< bytes in the whole segment
    std::uint64_t ranks_offset;   ///< offset of RankSlot[nranks]
    std::uint64_t rings_offset;   ///< offset of the ring array
    std::uint64_t ring_stride;    ///< bytes from one ring to the next
    std::uint32_t ring_cells;     ///< cells per ring, a power of two
    std::uint32_t cell_bytes;     ///< bytes per cell, a multiple of kLine
    std::int64_t launcher_pid;    ///< pid of mpirun
    std::uint64_t job_id;         ///< random; names the job in messages
    std::uint64_t coll_offset;    ///< offset of MPI_COMM_WORLD's CollMember[nranks]
    std::uint64_t coll_cells_offset;  ///< offset of that region's cells
    std::uint32_t coll_cell_bytes;    ///< cell bytes per member, a multiple of 4096
    std::uint32_t stream_bytes;       ///< stream buffer bytes per rank, a multiple of 4096 (0: none)
    std::uint64_t stream_offset;      ///< offset of the stream buffers
    std::uint64_t pool_offset;        ///< offset of PoolEntry[pool_regions]
    std::uint64_t pool_regions_offset;  ///< offset of the first pool region
    std::uint64_t pool_region_stride;   ///< bytes from one pool region to the next
    std::uint32_t pool_regions;       ///< regions in the pool, 0..kMaxPoolRegions
    /// 1 when the kernel's copies between processes (process_vm_readv) are
    /// so slow, and lines cross between CPUs so fast, that the collectives
    /// keep to their cells (mpirun's probe, tools/launcher/copy_probe.hpp;
    /// coll/select_shm.cpp); 0 otherwise, and in segments made by anything
    /// but mpirun.  Written by mpirun after creating the segment, before
    /// the first fork.
    std::uint32_t kernel_copies_slow;
    /// Wide cell bytes per member after its cells, in MPI_COMM_WORLD's
    /// region only: a multiple of 4096, 0 for none (Geometry).
    std::uint32_t wide_cell_bytes;
    /// CPUs the job may use: those of the creator's affinity when it made
    /// the segment (mpirun's, before it pins itself for its copy probe or
    /// binds a rank), 0 when unknown.  Every rank reads the same count, so
    /// the choices made from it (Transport::cpus(), ShmTeam::crowded())
    /// agree on every member; reading the launcher's affinity later raced
    /// with a creator that pins itself (bench/micro_flags).
    std::uint32_t cpus;
    /// 1 when every producer also stores its ring's published count in the
    /// receiver's heads row (heads_offset), so that a receiver looks at one
    /// line per 16 peers to find the rings that hold cells instead of one
    /// line in each of its nranks rings; 0 when receivers look at the rings
    /// themselves (Geometry::ring_summary, SHMPI_RING_SUMMARY).
    std::uint32_t ring_summary;
    /// Offset of the heads rows: uint64[nranks], padded to heads_row bytes,
    /// for each receiver in turn (Geometry::heads_row()).
    std::uint64_t heads_offset;

    // ---- job-wide, mutable: own line ----
    /// kRunning until the job must end.  Written (compare-exchange, acq_rel)
    /// by the first rank that calls MPI_Abort or by the launcher when a rank
    /// fails; read (relaxed) by every wait loop, which then leaves the process.
    alignas(kLine) std::atomic<std::uint32_t> abort_state;
    /// The rank whose MPI_Abort won the compare-exchange, or -1 when the
    /// launcher started the abort.  Written by the winner after it took
    /// abort_state; read by the launcher after the winner has exited.
    std::atomic<std::int32_t> abort_rank;
    /// The exit code MPI_Abort asked for, or the error class of a fatal
    /// error (kAbortFatal).  Written by the winner after it took
    /// abort_state; read by the launcher after the winner has exited.
    std::atomic<std::int32_t> abort_code;
    /// AbortKind; written and read like abort_code.
    std::atomic<std::uint32_t> abort_kind;
    /// The first MPI_Init failure of the job, so that a failure every rank
    /// meets alike (a bad SHMPI_* setting) is printed once, not once per
    /// rank (Transport::rethrow_init_failure()): 0 while there is none, else
    /// a hash of its message with the low two bits replaced by 1 (claimed)
    /// or 2 (printed).  Written by the first rank whose MPI_Init fails after
    /// it attached: a compare-exchange from 0 to claimed, then a store of
    /// printed once its message is out; read by the ranks that fail after
    /// it, which wait for printed before they exit with the same message.
    /// Relaxed: the value is the whole message, and the message is in
    /// mpirun's pipe (a write call that returned) before printed is stored.
    std::atomic<std::uint64_t> init_failure;

    // ---- job-wide, mutable: own line, since it changes far more often ----
    /// Ranks that are not asleep on their doorbell: nranks at creation
    /// (launcher); each rank subtracts one (relaxed) before it sleeps and
    /// adds it back when it wakes, and subtracts one for good in
    /// MPI_Finalize.  Read (relaxed) at the start of every wait: a hint, not
    /// a lock.  More awake ranks than CPUs means the rank we wait for may
    /// need our CPU, so the wait yields instead of spinning.  A stale or
    /// corrupted value only picks the wrong one of those two ways to wait.
    alignas(kLine) std::atomic<std::int32_t> awake;

    // ---- job-wide, mutable: own line, changed once per MPI_Comm_idup ----
    /// The next context id of the range that nonblocking communicator
    /// constructions take without agreeing with anyone, once every one of
    /// shared_context_users is taken (Runtime::take_shared_context(),
    /// kSharedContextBase + kSharedContextSlots up).  Set by the launcher;
    /// taken with a relaxed fetch_add by the new communicator's rank 0, who
    /// sends it to the other members: the atomic increment alone makes
    /// every id unique, and nothing else is published with it.
    /// 64 bits, so that it never wraps around to ids handed out before.
    alignas(kLine) std::atomic<std::uint64_t> next_shared_context;

    // ---- job-wide, mutable: own lines, changed twice per member of an
    // ---- MPI_Comm_idup's duplicate (its making and its deletion) ----
    /// Entry i: how many processes still hold context id
    /// kSharedContextBase + i; 0 while it is free.  An MPI_Comm_idup's rank
    /// 0 takes a free id by a compare-exchange from 0 to the number of
    /// processes that will build a communicator on it; each of them
    /// subtracts one when it deletes that communicator (ContextIds::drop()),
    /// and the id is free again after the last.  Relaxed: the atomic
    /// operations alone keep two live communicators off one id; no other
    /// data is published with these counts.  (A deleted communicator's
    /// messages cannot reach the next one on its id: see context_ids.hpp.)
    alignas(kLine) std::atomic<std::uint32_t> shared_context_users[kSharedContextSlots];
};

/// Sends of one rank that MPI_Cancel can still cancel once their first cell
/// is out (RankSlot::send_claims); more pending at once are not cancellable.
inline constexpr std::size_t kSendClaims = 4096;
/// The low two bits of a RankSlot::send_claims word.
enum class SendClaim : std::uint64_t { Pending = 1, Matched = 2, Cancelled = 3 };

struct alignas(kLine) RankSlot {
    // ---- written by the owning rank, read by peers and the launcher ----
    /// The rank's pid, for peers' process_vm_readv.  Stored (relaxed) by the
    /// rank itself when it attaches, before it publishes any cell; a peer
    /// reads it only after acquiring a cell from this rank, which orders it.
    /// (The launcher knows its children's pids and does not write here.)
    std::atomic<std::int64_t> pid;

    /// RankState.  Stored with release by the owner so the launcher, which
    /// loads it with acquire after the rank exited, sees a finished Finalize.
    std::atomic<std::uint32_t> state;

    // ---- the rank's place: written by the launcher before fork, then read-only ----
    // Plain fields: fork publishes them to the ranks, and nobody writes them
    // afterwards.  They share the owner's line with pid and state, which are
    // written only at attach and finalize.  src/place/place.hpp reads them
    // (read_places) and explains what each one means.
    /// Nonzero once mpirun wrote the place_* fields; zero (a zero-filled
    /// segment made by anything else) means "place unknown".
    std::uint32_t placed;
    std::int32_t place_pu;       ///< OS index of the PU, or -1
    std::int32_t place_core;     ///< logical index of the core, or -1
    std::int32_t place_l3;       ///< logical index of the L3 cache, or -1
    std::int32_t place_numa;     ///< logical index of the NUMA node, or -1
    std::int32_t place_package;  ///< logical index of the package, or -1
    /// Which of mpirun's programs the rank runs (MPI_APPNUM): 0, or k for
    /// the k-th program after a ':' (MPMD).  Written with the place fields.
    std::uint32_t appnum;

    // ---- the owner's doorbell: written by senders and the launcher ----
    /// Futex word the owner sleeps on.  A sender that finds `sleeping` set
    /// increments it (release) and wakes the owner with FUTEX_WAKE.
    alignas(kLine) std::atomic<std::uint32_t> doorbell;
    /// Written by the owner only: nonzero while it may be asleep on doorbell,
    /// the number of its threads that may be (one at most, but under
    /// MPI_THREAD_MULTIPLE: shm/gate.hpp), each adding 1 before its sleep
    /// and taking it back after.  Senders read it after a seq_cst fence that
    /// follows their ring store, and the owner adds to it before a seq_cst
    /// fence that precedes its last check of the rings (Dekker pattern: one
    /// of the two always sees the other).
    std::atomic<std::uint32_t> sleeping;

    // ---- the owner's stream line: written by the owner only ----
    // A rendezvous send of a non-contiguous buffer packs its data, piece by
    // piece, into the owner's stream buffer in the segment while its receiver
    // unpacks the pieces already there (p2p.cpp, "streamed sends").  One
    // stream per rank at a time.
    /// The sender token of the send being streamed.  Stored (relaxed) by the
    /// owner before it publishes the Rts that names the token; the receiver
    /// reads it after acquiring that Rts, which orders it.
    alignas(kLine) std::atomic<std::uint64_t> stream_token;
    /// Bytes of the stream packed so far (the buffer holds those not yet
    /// taken, at offset `byte mod stream_bytes`).  Stored with release by the
    /// owner after it packed them: it protects the piece's bytes in the
    /// buffer.  Loaded with acquire by the receiver before it reads them.
    std::atomic<std::uint64_t> stream_packed;

    // ---- the stream's receiver line: written by the current receiver ----
    /// Bytes of the stream the receiver has finished reading, or
    /// kStreamStop when it wants no more (a truncated receive).  Stored with
    /// release by the receiver after it read them: the owner, after its
    /// acquire load, may overwrite that room.  The owner sets it to 0
    /// (relaxed) in stream_begin, before the Rts; the previous stream's
    /// receiver wrote its last value before the Fin the owner acquired, so
    /// the two writers never overlap.
    alignas(kLine) std::atomic<std::uint64_t> stream_taken;

    // ---- the owner's park line: written by the owner only, read by the launcher ----
    // What mpirun's deadlock check (tools/launcher/job.cpp) reads to tell a
    // rank that can still move on its own from one that waits for others.
    // Relaxed, all of them: the launcher decides only after it has seen the
    // same values, and the same counters everywhere in the segment
    // (Segment::activity()), in every look over a whole second or more; a
    // value caught in the middle of a change reads as "changed" and restarts
    // the count.  Nothing else is published with them.
    /// 1 while the owner sleeps in futex_wait on its doorbell inside an MPI
    /// wait (set just before the call, cleared just after), else 0.
    alignas(kLine) std::atomic<std::uint32_t> parked;
    /// The doorbell value that sleep compares against: a doorbell that
    /// differs means a wake-up the owner has not yet run to see.
    std::atomic<std::uint32_t> parked_on;
    /// When that sleep ends at the latest (CLOCK_MONOTONIC, ns): a rank still
    /// parked well after it is waiting for a CPU, not for its peers.
    std::atomic<std::int64_t> parked_until;
    /// Generalized requests the owner has started and not yet completed
    /// (MPI_Grequest_start .. MPI_Grequest_complete): another thread of the
    /// owner may complete one while it waits, so the launcher never calls
    /// such a rank stuck.
    std::atomic<std::uint32_t> open_grequests;
    /// The MPI call the owner is parked in, NUL-padded ASCII, 8 characters
    /// per word; written before `parked` is set.
    std::atomic<std::uint64_t> parked_in[4];

    // ---- the owner's send claims: written by the owner and its receivers ----
    // Who decides the fate of a rendezvous or synchronous send that MPI_Cancel
    // may cancel (p2p.cpp, "cancelling sends").  Word i is
    // (sender token << 2) | SendClaim state for the send whose Rts or
    // EagerSync names claim slot i.  The owner stores Pending (relaxed)
    // before it publishes that message, whose release orders the store;
    // from then on exactly one compare-exchange succeeds: the owner's
    // Pending -> Cancelled (MPI_Cancel) or the receiver's Pending -> Matched
    // (a receive or probe that takes the message).  acq_rel, though the word
    // protects no other data: the winner alone goes on with the send.  The
    // owner reuses a slot only after the send is over (Fin, Ack or Cts
    // taken, or cancelled), when no receiver looks at it again.
    alignas(kLine) std::atomic<std::uint64_t> send_claims[kSendClaims];
};

/// Bytes of data that travel inline in a release line.
inline constexpr std::size_t kCollInline = 64;
/// Release lines per member: consecutive collective calls use them in turn,
/// so a member can publish the next calls' small data before its readers
/// have finished with the previous ones.  64: in a loop of 8-byte Reduces,
/// Gathers or Bcasts with more ranks than CPUs, every time a member runs
/// out of lines it waits for a rank that needs its CPU, and each such wait
/// is a context switch (docs/BENCHMARKS.md, session 52: 8 ranks on 2 CPUs,
/// a Reduce 1.2-2.0 us a call with 8 lines, 0.38-0.72 with 32, 0.29-0.37
/// with 64).
inline constexpr std::size_t kCollLines = 64;

/// One release line of a member (src/coll/shm_team.hpp): a flag and the
/// data published with it, in one line pair, so that one cache miss brings
/// a reader both.  Call c uses line c mod kCollLines.
struct CollLine {
    /// "My data for step `release` is published": the owner stores the step
    /// with release after writing everything it publishes for that step (the
    /// rest of this line, its cells); readers load it with acquire before
    /// reading them.  The owner overwrites published data only after every
    /// reader of it has announced, in its own `gather`, that it finished.
    /// Written by the owner only.
    alignas(kLine) std::atomic<std::uint64_t> release;
    /// Published with `release`: bytes of the owner's contribution (or of the
    /// whole message for the source of a broadcast), for size checks.
    std::uint64_t bytes;
    /// Published with `release`: an address in the owner's process (its user
    /// buffer) for single-copy readers (process_vm_readv), or 0.
    std::uint64_t addr;
    /// Published with `release`: a second address or a protocol word,
    /// defined by each algorithm.
    std::uint64_t aux;
    /// Published with `release`: up to kCollInline bytes of data.
    std::byte data[kCollInline];
    /// Published with `release`: the step for which the owner offers to
    /// take a pair's block by a write into its receive buffer (PairOffer in
    /// src/coll/shm_team.hpp; where and how much in `data`).  Only an offer
    /// writes it, and steps never repeat, so what an earlier call left here
    /// never matches a later step, and `data`, which also carries blocks,
    /// cannot pass for an offer.
    std::uint64_t offer;
};

/// Calls whose signatures a member keeps published (CollMember::calls):
/// twice kCollLines, so that a member that ran as far ahead as its release
/// lines let it still shows the call a slower member waits in.
inline constexpr std::size_t kCollCalls = 128;

/// What one collective call was, as its caller saw it: published so that a
/// member stuck in a wait can tell a peer that made another call (another
/// collective, root, size or reduction element: an erroneous program) from
/// a slow one, and end the job instead of hanging (ShmTeam::note_call,
/// check_calls); a reduction with a user operation also compares, once it
/// is done, the entries of the members it heard from (check_call).  Written by
/// the owner only, as a seqlock on `call`: the owner zeroes `call`, writes
/// the rest, then stores `call` with release; a reader loads `call`
/// (acquire), the rest, then `call` again after an acquire fence, and
/// trusts the entry only if both loads agree.
struct CollCall {
    std::atomic<std::uint64_t> call;   ///< the call number; 0: none yet
    std::atomic<std::uint64_t> what;   ///< (kind << 32) | (root + 1)
    std::atomic<std::uint64_t> bytes;  ///< bytes every member must agree on
    std::atomic<std::uint64_t> unit;   ///< a reduction's element bytes; 0 otherwise
};

/// One member's flags in a collective region.
///
/// A region serves one communicator: CollMember[members] followed by each
/// member's cells.  Flags are monotonic 64-bit step numbers (see ShmTeam:
/// every collective call takes a fresh range of steps), written by their owner
/// only, never reset, compared rollover-safely.  Each flag sits on its own
/// line pair, so a writer never invalidates another writer's line.  Zero
/// (the zero-filled segment) means "no step yet".
struct CollMember {
    /// The release lines, used by consecutive calls in turn.
    CollLine lines[kCollLines];

    // ---- the gather line: written by the owner only ----
    /// "I have finished step `gather`": stored with release by the owner once
    /// it has read everything it needed from other members for that step (and
    /// in a barrier: once its subtree has arrived).  A member that wants to
    /// overwrite data it published at step s waits, with acquire, until each
    /// reader's gather has reached s.
    alignas(kLine) std::atomic<std::uint64_t> gather;

    // ---- the probe line: written once by the owner ----
    /// Address in the owner's process of a word with a known value, which
    /// peers read with process_vm_readv to learn whether single-copy reads
    /// work in this job.  Written before the owner's release of the probe
    /// step, which publishes it.
    alignas(kLine) std::uint64_t probe_addr;
    /// 1 when the owner could read its neighbour's probe word, 2 when not.
    /// Written before the owner's gather of the probe step, which publishes it.
    std::uint32_t probe_ok;

    // ---- the owner's last kCollCalls calls (call c in entry c mod kCollCalls) ----
    alignas(kLine) CollCall calls[kCollCalls];
};

static_assert(std::is_standard_layout_v<CollMember>,
              "collective flags are read by several processes, so they must have a fixed C layout");
static_assert(sizeof(CollLine) == kLine,
              "inline data must share the release flag's line, so one miss brings both");
static_assert(sizeof(CollMember) == (kCollLines + 2) * kLine + kCollCalls * sizeof(CollCall),
              "a member is its release lines, a gather line, a probe line and its calls");

static_assert(std::is_standard_layout_v<SegmentHeader>,
              "the header is read by several processes, so it must have a fixed C layout");
static_assert(std::is_standard_layout_v<RankSlot>,
              "rank slots are read by several processes, so they must have a fixed C layout");
static_assert(std::atomic<std::uint32_t>::is_always_lock_free,
              "atomics in shared memory must be lock-free, or processes would not see one another");
static_assert(sizeof(RankSlot) == 5 * kLine + kSendClaims * sizeof(std::uint64_t),
              "a rank slot is five lines (the owner's state, its doorbell, its stream line, "
              "its stream's receiver line and its park line) and the send claims");

/// Most regions a pool may have (SHMPI_COLL_REGIONS).
inline constexpr std::uint32_t kMaxPoolRegions = 64;

/// The control words of one pool region (docs/DESIGN.md, "Collectives in
/// shared memory"): a communicator other than MPI_COMM_WORLD with two or
/// more members holds a region while it lives.  Zero-filled means free.
/// Life cycle of a region (comm_create.cpp claims, Communicator releases):
///   1. the new communicator's rank 0 takes `owner` from 0 with a
///      compare-exchange and stores `users` = its member count;
///   2. it tells the members the region's index (a point-to-point message,
///      which orders its `users` store before their decrements);
///   3. MPI_Comm_free: every member, after its last collective on the
///      communicator, decrements `users`; the one that takes it to 0 stores
///      `owner` = 0.
struct alignas(kLine) PoolEntry {
    /// 0: free; else the holder's context id + 1 (for debugging; uniqueness
    /// is not needed, only the transition from 0).  Compare-exchanged from 0
    /// (acq_rel) by the claimer: the acquire pairs with the release store of
    /// 0 by the previous holder's last member, so every flag the previous
    /// holder wrote is visible to the claimer, who then reads them to start
    /// the new team's steps above them.  Stored 0 (release) by the member
    /// whose decrement of `users` reached 0.
    std::atomic<std::uint64_t> owner;
    /// Members that have not freed the communicator yet.  Stored (relaxed)
    /// by the claimer before it sends the region's index to the members;
    /// decremented (acq_rel) by each member in MPI_Comm_free: the release
    /// publishes the member's last flag stores, the acquire of the last
    /// decrement gathers every member's.
    std::atomic<std::uint32_t> users;
};

static_assert(std::is_standard_layout_v<PoolEntry>,
              "pool control words are read by several processes, so they must have a fixed C layout");
static_assert(sizeof(PoolEntry) == kLine,
              "each region's control words sit on their own line pair, so claims of different "
              "regions do not contend");

/// RankSlot::stream_taken of a receiver that wants no more of the stream.
inline constexpr std::uint64_t kStreamStop = ~std::uint64_t{0};

}  // namespace shmpi::shm
