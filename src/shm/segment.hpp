// The job's shared segment: creation by the launcher, attachment by ranks.
//
// Life cycle:
//   1. The launcher calls Segment::create(): Boost.Interprocess creates a POSIX
//      shared memory object exclusively, mode 0600, under a name made of the
//      uid, the launcher's pid and 64 random bits; sizes it; maps it; writes
//      the header and the rank slots.
//   2. The launcher calls unlink() at once, before the first fork.  The ranks
//      reach the segment through an inherited file descriptor (its number is
//      in SHMPI_SEGMENT_FD), so no name in /dev/shm outlives the launcher's
//      first milliseconds, whatever happens to the job afterwards.
//   3. Each rank calls Segment::attach() on that descriptor: it maps it, checks
//      the header (magic, version, size against the file, rank count) before
//      trusting anything else in it, and closes the descriptor.
//
// Failures throw SegmentError with a message that names the operation, the
// value and, where the OS refused, strerror.
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "shm/layout.hpp"
#include "shm/ring.hpp"

namespace shmpi::shm {

class SegmentError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

/// Names of the environment variables the launcher sets for each rank.
inline constexpr const char* kEnvFd = "SHMPI_SEGMENT_FD";
inline constexpr const char* kEnvRank = "SHMPI_RANK";
inline constexpr const char* kEnvSize = "SHMPI_SIZE";

/// How big the pieces of the segment are.  Chosen by the launcher from the
/// rank count (and SHMPI_RING_CELLS / SHMPI_CELL_BYTES for experiments).
struct Geometry {
    std::uint32_t nranks = 1;
    std::uint32_t ring_cells = 32;    ///< power of two
    std::uint32_t cell_bytes = 2048;  ///< multiple of kLine
    /// Cells per member in a collective region (SHMPI_COLL_CELL_BYTES): a
    /// multiple of 4096, at least 4096.
    std::uint32_t coll_cell_bytes = 65536;

    /// The default geometry for `nranks` ranks: rings shrink as the number of
    /// pairs grows so that the segment stays within a few hundred MiB.
    static Geometry for_ranks(std::uint32_t nranks);

    std::size_t ranks_offset() const;
    std::size_t rings_offset() const;
    std::size_t ring_stride() const;
    /// MPI_COMM_WORLD's collective region: CollMember[nranks], then the cells.
    std::size_t coll_offset() const;
    std::size_t coll_cells_offset() const;
    std::size_t total_bytes() const;
};

/// A collective region as mapped in this process: `members` flag blocks and,
/// for member i, `cell_bytes` of cells at cells + i * cell_bytes.  A view;
/// owns nothing.  MPI_COMM_WORLD's region is at fixed offsets (Segment::
/// world_coll_region()); regions of other communicators would come from a
/// pool with the same shape (docs/DESIGN.md, "Collectives in shared memory").
struct CollRegion {
    CollMember* members = nullptr;
    std::byte* cells = nullptr;
    std::size_t cell_bytes = 0;
    std::uint32_t count = 0;
};

/// A mapping of the segment in this process.  Move-only; unmaps on
/// destruction.
class Segment {
public:
    /// Launcher side: creates, sizes, maps and initialises a new segment.
    /// Checks that /dev/shm has room first and, if not, says how much is
    /// needed and how to make room.
    static Segment create(const Geometry& geometry, std::int64_t launcher_pid);

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

    SegmentHeader& header() const { return *static_cast<SegmentHeader*>(base_); }
    RankSlot& slot(std::uint32_t rank) const;
    /// The ring that carries bytes from `src` to `dst` (src != dst).
    Ring ring(std::uint32_t src, std::uint32_t dst) const;
    /// MPI_COMM_WORLD's collective region (one member per rank).
    CollRegion world_coll_region() const;
    std::uint32_t nranks() const { return header().nranks; }
    std::size_t size() const { return size_; }

private:
    Segment() = default;
    void release() noexcept;

    void* base_ = nullptr;
    std::size_t size_ = 0;
    int fd_ = -1;
    std::string name_;
};

}  // namespace shmpi::shm
