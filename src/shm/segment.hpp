// The job's shared segment: creation by the launcher, attachment by ranks.
//
// Life cycle:
//   1. The launcher calls Segment::create(): Boost.Interprocess creates a POSIX
//      shared memory object exclusively, mode 0600, under a name made of the
//      uid, the launcher's pid and 64 random bits; sizes it; maps it; writes
//      the header and the rank slots.
//   2. The launcher drops the name at once (create()'s Name::Drop: before
//      the object is even sized, let alone before the first fork).  The ranks
//      reach the segment through an inherited file descriptor (its number is
//      in SHMPI_SEGMENT_FD), so no name in /dev/shm outlives the launcher's
//      first milliseconds, whatever happens to the job afterwards.
//   3. Each rank calls Segment::attach() on that descriptor: it maps it, checks
//      the header (magic, version, size against the file, rank count) before
//      trusting anything else in it, and closes the descriptor.
//
// Trust: the header lives in memory every rank can write, so a faulty or
// corrupted peer could change it at any time.  Create() and attach() therefore
// copy the layout (rank count, offsets, ring and cell sizes) into the Segment
// object once, after checking it, and slot(), ring(), world_coll_region(),
// pool_entry(), pool_region() and nranks() compute addresses from that private copy only: whatever a peer
// writes into the header later, they stay inside the mapping.
//
// Failures throw SegmentError with a message that names the operation, the
// value and, where the OS refused, strerror.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <string_view>

#include "shm/layout.hpp"
#include "shm/ring.hpp"

namespace shmpi::shm {

class SegmentError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

/// Segment::create() gave up because its `stop` said so (mpirun: a signal
/// or --timeout came while it reserved the pages).  Nothing is left behind;
/// the caller reports the cause.
class SegmentStopped : public std::runtime_error {
public:
    SegmentStopped() : std::runtime_error("segment creation stopped") {}
};

/// An MPI_Init failure whose message is already printed for the whole job
/// (Transport::rethrow_init_failure()): MPI_Init exits without printing it.
class ReportedInitFailure : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

/// Names of the environment variables the launcher sets for each rank.
inline constexpr const char* kEnvFd = "SHMPI_SEGMENT_FD";
inline constexpr const char* kEnvRank = "SHMPI_RANK";
inline constexpr const char* kEnvSize = "SHMPI_SIZE";
/// The settings that size the segment (Geometry::from_environment(), read
/// by the launcher): a no-room message names those that are set, and
/// mpirun takes them from -x/-genv too.
inline constexpr const char* kGeometrySettings[] = {"SHMPI_RING_CELLS",      "SHMPI_CELL_BYTES",
                                                    "SHMPI_STREAM_BYTES",    "SHMPI_COLL_CELL_BYTES",
                                                    "SHMPI_COLL_WIDE_BYTES", "SHMPI_COLL_REGIONS"};

/// Above this many ranks, receivers poll heads rows instead of their rings
/// (Geometry::ring_summary).  A poll of every ring touches a line in each,
/// and each ring lies on pages of its own; a heads row keeps 16 peers to a
/// line.  Below it, a message costs one line fewer.
inline constexpr std::uint32_t kRingSummaryRanks = 64;

/// Set by MPI_Init in each rank of an mpirun job to the job's size, which a
/// program the rank starts (a singleton) inherits with mpirun's PMI_SIZE and
/// OMPI_COMM_WORLD_SIZE: those are then shmpi's own, not another MPI's
/// launcher's.  (mpirun removes it, like every SHMPI_ variable, from the
/// environment of a job started inside a rank.)
inline constexpr const char* kEnvJobSize = "SHMPI_PARENT_JOB_SIZE";

/// How big the pieces of the segment are.  Chosen by the launcher from the
/// rank count (and SHMPI_RING_CELLS / SHMPI_CELL_BYTES for experiments).
struct Geometry {
    std::uint32_t nranks = 1;
    std::uint32_t ring_cells = 32;    ///< power of two
    std::uint32_t cell_bytes = 2048;  ///< multiple of kLine
    /// Cells per member in a collective region (SHMPI_COLL_CELL_BYTES): a
    /// multiple of 4096, at least 4096.
    std::uint32_t coll_cell_bytes = 65536;
    /// Each rank's stream buffer (SHMPI_STREAM_BYTES): a multiple of 4096;
    /// 0 turns streamed sends off.
    std::uint32_t stream_bytes = 1u << 20;
    /// Collective regions in the pool for communicators other than
    /// MPI_COMM_WORLD (SHMPI_COLL_REGIONS): 0..kMaxPoolRegions.
    std::uint32_t pool_regions = 8;
    /// Wide cells per member in MPI_COMM_WORLD's region only, after its
    /// cells (SHMPI_COLL_WIDE_BYTES): a multiple of 4096, 0 for none.  A
    /// broadcast larger than the cells moves in slots of an eighth of these
    /// instead (coll/bcast_tree_shm.cpp), and a Gather's, Allgather's or
    /// Alltoall's block larger than the cells goes in them whole
    /// (ShmTeam::wide_carry()).
    std::uint32_t wide_cell_bytes = 0;
    /// Whether for_ranks() chose wide_cell_bytes itself (SHMPI_COLL_WIDE_BYTES
    /// unset): then Segment::create() may shrink them to fit /dev/shm and
    /// memory (fit_room()).  Only the launcher reads it; not in the header.
    bool wide_cells_optional = false;
    /// 1: producers keep their published counts in the receivers' heads
    /// rows, and receivers poll those instead of the rings (SegmentHeader::
    /// ring_summary).  for_ranks() sets it above kRingSummaryRanks ranks;
    /// SHMPI_RING_SUMMARY (0 or 1) decides instead where it is set.
    std::uint32_t ring_summary = 0;

    /// The default geometry for `nranks` ranks: rings shrink as the number of
    /// pairs grows so that the segment stays within a few hundred MiB.
    /// `cpus`: the CPUs the ranks may run on (0: unknown); with more ranks
    /// than that, up to 16, the world region gets 4 MiB of wide cells a rank.
    static Geometry for_ranks(std::uint32_t nranks, std::uint32_t cpus = 0);

    /// Whether `shm_free` bytes of /dev/shm hold total_bytes() and
    /// `memory` bytes hold that and each rank's private ring to itself
    /// (private_ring_bytes()); a negative amount is unknown and holds
    /// anything.
    bool fits(double shm_free, double memory) const;
    /// Bytes of the rings the ranks allocate to themselves, one each.
    std::size_t private_ring_bytes() const { return std::size_t{nranks} * ring_stride(); }
    /// This geometry, or where it does not fit (fits()) and its wide cells
    /// are optional, the same with 1 MiB of them a rank, or none: the first
    /// that fits.  Anything else stays, and a segment that still does not
    /// fit is create()'s error to report.
    Geometry fit_room(double shm_free, double memory) const;

    std::size_t ranks_offset() const;
    std::size_t rings_offset() const;
    std::size_t ring_stride() const;
    /// The heads rows: nranks of them, heads_row() bytes apart (nranks
    /// words, rounded up to whole lines).
    std::size_t heads_offset() const;
    std::size_t heads_row() const;
    /// MPI_COMM_WORLD's collective region: CollMember[nranks], then the cells
    /// (coll_cell_bytes, then wide_cell_bytes, for each member in turn).
    std::size_t coll_offset() const;
    std::size_t coll_cells_offset() const;
    /// Bytes from one member's cells to the next in MPI_COMM_WORLD's region.
    std::size_t world_cell_stride() const { return std::size_t{coll_cell_bytes} + wide_cell_bytes; }
    /// The ranks' stream buffers: stream_bytes each, rank after rank.
    std::size_t stream_offset() const;
    /// The pool: PoolEntry[pool_regions], then the regions, each of the
    /// world region's shape (CollMember[nranks], then page-aligned cells).
    std::size_t pool_offset() const;
    std::size_t pool_regions_offset() const;
    std::size_t pool_region_stride() const;
    /// Offset of a pool region's cells from the region's start.
    std::size_t pool_region_cells() const;
    std::size_t total_bytes() const;
};

/// A collective region as mapped in this process: `members` flag blocks and,
/// for member i, `cell_bytes` of cells at cells + i * (cell_bytes +
/// wide_bytes), followed by `wide_bytes` of wide cells (MPI_COMM_WORLD's
/// region only; 0 elsewhere).  A view; owns nothing.  MPI_COMM_WORLD's region is at fixed offsets (Segment::
/// world_coll_region()); regions of other communicators come from a pool of
/// the same shape (Segment::pool_region(); docs/DESIGN.md, "Collectives in
/// shared memory").
struct CollRegion {
    CollMember* members = nullptr;
    std::byte* cells = nullptr;
    std::size_t cell_bytes = 0;
    std::size_t wide_bytes = 0;
    std::uint32_t count = 0;

    /// From one member's cells to the next: its cells and wide cells.
    std::size_t stride() const { return cell_bytes + wide_bytes; }
    /// Member i's cells (stride() bytes: cells, then wide cells).
    std::byte* cells_of(std::uint32_t i) const { return cells + std::size_t{i} * stride(); }
};

/// The segment's layout as checked by create() or attach(): the geometry of
/// the header's immutable fields (a private copy, which nothing in shared
/// memory can change) and every offset it implies, computed once.  Every
/// offset and size here has been checked against the mapping's size.
struct Layout {
    Layout() = default;
    /// Computes every offset from `g` (check_header() checks them first).
    explicit Layout(const Geometry& g);

    Geometry geometry;
    std::size_t ranks_offset = 0;
    std::size_t rings_offset = 0;
    std::size_t ring_stride = 0;
    std::size_t heads_offset = 0;
    std::size_t heads_row = 0;
    std::size_t coll_offset = 0;
    std::size_t coll_cells_offset = 0;
    std::size_t stream_offset = 0;
    std::size_t pool_offset = 0;
    std::size_t pool_regions_offset = 0;
    std::size_t pool_region_stride = 0;
    std::size_t pool_region_cells = 0;
    std::size_t size = 0;
};

/// Checks a segment header against the size of the file it was read from and
/// the rank count the launcher announced, and returns its layout.  Every field
/// that locates something must equal what Geometry computes from the rank
/// count and the sizes, so no combination of header values can point outside
/// `file_size` bytes (the arithmetic is done in a way that cannot overflow).
/// Throws SegmentError naming the first field that is wrong and its value.
/// `who` starts the message ("MPI_Init").
Layout check_header(const SegmentHeader& h, std::size_t file_size, std::uint32_t expect_nranks,
                    const char* who);

/// Bytes that MemAvailable and SwapFree add up to in the text of
/// /proc/meminfo; -1 when either line is missing.
double meminfo_available(std::string_view meminfo);
/// Bytes the job may still take: meminfo_available() of /proc/meminfo,
/// less where this process's memory cgroup (v2 memory.max, or v1
/// memory.limit_in_bytes) leaves less room; -1 when nothing tells.
double memory_available();

/// A mapping of the segment in this process.  Move-only; unmaps on
/// destruction.
class Segment {
public:
    /// Launcher side: creates, sizes, maps and initialises a new segment.
    /// Checks that /dev/shm and memory (the segment's pages and each rank's
    /// private ring to itself, memory_available()) have room first and, if
    /// not, says how much is needed and how to make room; then reserves
    /// every page of the object
    /// (posix_fallocate), so a /dev/shm that fills up later makes this call
    /// fail with the same message instead of a rank dying of SIGBUS when it
    /// first touches a page.  With Name::Drop the name goes as soon as the
    /// object is open, before it is sized: the launcher's choice, so that
    /// no name outlives an mpirun killed while it reserves the pages of a
    /// large segment (SIGKILL runs no cleanup).  Name::Keep leaves it to
    /// unlink() (tests look at the object by name).
    ///
    /// Reserving takes about 0.4 s a GiB (1.7 s for the 4.2 GiB of 700
    /// ranks on the 2-CPU VM), so it goes kReserveStep bytes at a time, and
    /// after each step a `stop` that returns true ends the call with
    /// SegmentStopped, the object gone.
    enum class Name { Keep, Drop };
    static constexpr std::size_t kReserveStep = std::size_t{64} << 20;
    static Segment create(const Geometry& geometry, std::int64_t launcher_pid, Name name = Name::Keep,
                          const std::function<bool()>& stop = {});

    /// Rank side: maps the segment behind `fd`, verifies its header against
    /// `expect_nranks`, and closes `fd`.
    static Segment attach(int fd, std::uint32_t expect_nranks);

    Segment(Segment&& other) noexcept;
    Segment& operator=(Segment&& other) noexcept;
    Segment(const Segment&) = delete;
    Segment& operator=(const Segment&) = delete;
    ~Segment();

    /// Launcher side: removes the name from /dev/shm.  Idempotent.  The
    /// mapping and the descriptor stay valid.
    void unlink();
    /// Launcher side: the descriptor ranks inherit (-1 after attach()).
    int fd() const { return fd_; }
    /// The name under /dev/shm (empty after unlink()).
    const std::string& name() const { return name_; }

    /// The shared header.  Its immutable fields were checked once; read the
    /// layout from layout() instead, which no peer can change.
    SegmentHeader& header() const { return *static_cast<SegmentHeader*>(base_); }
    /// The checked layout (a private copy; see "Trust" above).
    const Layout& layout() const { return layout_; }
    /// Rank `rank`'s slot; `rank` < nranks() (a precondition, asserted).
    RankSlot& slot(std::uint32_t rank) const;
    /// The ring that carries bytes from `src` to `dst` (src != dst, both
    /// < nranks(); asserted).
    Ring ring(std::uint32_t src, std::uint32_t dst) const;
    /// Receiver `dst`'s heads row: word s counts the cells rank s has
    /// published in ring (s, dst) (SegmentHeader::ring_summary).
    std::atomic<std::uint64_t>* heads(std::uint32_t dst) const;
    /// MPI_COMM_WORLD's collective region (one member per rank).
    CollRegion world_coll_region() const;
    /// Rank `rank`'s stream buffer (layout().geometry.stream_bytes bytes; `rank` <
    /// nranks(), asserted).
    std::byte* stream_buffer(std::uint32_t rank) const;
    /// Regions in the pool (layout().geometry.pool_regions; 0: no pool).
    std::uint32_t pool_regions() const { return layout_.geometry.pool_regions; }
    /// The control words of pool region `k` (< pool_regions(), asserted).
    PoolEntry& pool_entry(std::uint32_t k) const;
    /// Pool region `k` (< pool_regions(), asserted) with room for nranks()
    /// members; `count` is nranks(): a communicator of m members sets it to
    /// m and uses the first m members and cell blocks.
    CollRegion pool_region(std::uint32_t k) const;
    std::uint32_t nranks() const { return layout_.geometry.nranks; }
    std::size_t size() const { return size_; }

    /// A digest of every word in the segment that changes when a rank does
    /// something another rank may be waiting for: doorbells, ring counters,
    /// stream counters, the collective flags and call records of every
    /// region, the pool's control words, the rank states and the job state.
    /// Equal digests taken apart in time mean that nobody moved in between
    /// (but for a collision of 64-bit hashes).  The launcher's deadlock check
    /// (tools/launcher/job.cpp) compares them; relaxed loads throughout.
    std::uint64_t activity() const;

private:
    Segment() = default;
    void release() noexcept;

    void* base_ = nullptr;
    std::size_t size_ = 0;
    Layout layout_;
    int fd_ = -1;
    std::string name_;
};

}  // namespace shmpi::shm
