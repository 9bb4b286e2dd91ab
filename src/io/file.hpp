// Parallel file I/O (MPI-3.1 chapter 13): a file opened by every member of a
// communicator, the view through which each member sees it, and the data
// accesses at explicit offsets, through the member's own file pointer, and
// through the pointer the members share.
//
// Where the data goes.  Every member opens the file itself (all members run
// on this machine, so they name the same file) and moves its data with
// pread/pwrite at the byte positions its view gives; the kernel's page
// cache makes what one member wrote visible to the others' reads at once,
// which is stronger than MPI's default consistency (13.6.1).  Nothing is
// cached in the library, so MPI_File_sync only has to reach the disk.
//
// Views (13.3).  A view is a displacement, an etype and a filetype: the
// filetype is tiled from the displacement on, and the data a member reads
// or writes fills the filetype's data bytes in order.  Offsets count
// etypes of that stream.  A stream byte is mapped to its file position by
// tile (stream byte / filetype size) and by dtype::segments() inside the
// tile, so any filetype the datatype engine takes works, with no flattened
// copy kept.  Data representations (datarep.hpp): in "native" and
// "internal" (the same here) the view's types are the file's layout and
// the data stream is the buffer's; in any other, the view's types are
// rebuilt for the file's value sizes (etype_ and filetype_ below), and an
// access converts the buffer to or from the representation's stream.
//
// The shared file pointer (13.4.4) lives in a window (rma/window.hpp) of 8
// bytes at rank 0, which every member keeps locked (MPI_Win_lock_all) from
// open to close: an access through it is one atomic fetch-and-add of its
// etype count there, then an access at the old value.  The ordered
// (collective) forms agree on everyone's place with one allgather and one
// broadcast.  The window's communicator, a duplicate of the opener's, also
// carries the file's own collectives, so they never meet the program's.
//
// Atomic mode (13.6.1).  Each access holds a POSIX open-file-description
// lock over the file range it touches (shared to read, exclusive to write),
// so overlapping accesses of different members are serialised.
#pragma once

#include <mpi.h>
#include <sys/uio.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "communicator.hpp"
#include "dtype/datatype.hpp"
#include "errors.hpp"
#include "handle_storage.hpp"
#include "io/datarep.hpp"

namespace shmpi {
class Runtime;
}
namespace shmpi::rma {
class Window;
}

namespace shmpi::io {

/// The MPI error class of a failed system call's errno (MPI-3.1 13.7).
int error_class_of_errno(int err);

/// A file.  Its handle is its address.  The C boundary checks arguments it
/// can check alone; what only the file knows (access mode, view, the
/// collective agreement of the members) is checked here and reported with
/// MpiError naming `fn`.
class File : public HandleStorage {
public:
    static constexpr std::uint32_t kMagic = 0x46494c45;  // "FILE"

    /// Collective over `comm` (the caller's duplicate of the opener's
    /// intracommunicator, which the file keeps): opens `path` with `amode`
    /// (checked for its own consistency by the caller).  Throws MpiError
    /// naming `fn` on every member alike.
    static std::unique_ptr<File> open(Runtime& rt, std::unique_ptr<Communicator> comm, const std::string& path,
                                      int amode, const char* fn);
    ~File();
    File(const File&) = delete;
    File& operator=(const File&) = delete;

    std::uint32_t magic() const { return magic_; }
    int amode() const { return amode_; }
    int rank() const;
    int size() const;
    /// The file's own communicator (the group of MPI_File_get_group).
    Communicator& comm();

    /// MPI_File_close, collective: closes, and removes the file with
    /// MPI_MODE_DELETE_ON_CLOSE.  The caller deletes the object.
    void close(const char* fn);

    MPI_Errhandler errhandler = MPI_ERRORS_RETURN;  ///< MPI_File_set_errhandler's
    /// The hints MPI_File_get_info reports: what MPI_File_open and
    /// MPI_File_set_info / MPI_File_set_view gave.  None changes behaviour.
    std::vector<std::pair<std::string, std::string>> hints;

    // ---- size ----
    std::int64_t file_size(const char* fn) const;
    /// MPI_File_set_size and MPI_File_preallocate, collective.
    void set_size(std::int64_t bytes, bool preallocate, const char* fn);
    /// MPI_File_sync, collective.
    void sync(const char* fn);
    /// MPI_File_set_atomicity, collective.
    void set_atomicity(bool on, const char* fn);
    bool atomicity() const { return atomic_; }

    // ---- the view ----
    /// MPI_File_set_view, collective.  `disp` may be MPI_DISPLACEMENT_CURRENT
    /// (for MPI_MODE_SEQUENTIAL files).  Resets both file pointers.
    void set_view(std::int64_t disp, const dtype::Datatype& etype, const dtype::Datatype& filetype,
                  const std::string& datarep, const char* fn);
    std::int64_t view_disp() const { return disp_; }
    /// The etype and filetype MPI_File_set_view was given.
    const dtype::Datatype& etype() const { return *view_etype_; }
    const dtype::Datatype& filetype() const { return *view_filetype_; }
    const std::string& datarep() const { return rep_->name(); }
    /// MPI_File_get_type_extent: the extent of `type` in the view's data
    /// representation.
    std::int64_t type_extent(const dtype::Datatype& type, const char* fn) const;
    /// MPI_File_get_byte_offset: the absolute byte of view offset `offset`.
    std::int64_t byte_offset(std::int64_t offset, const char* fn) const;

    // ---- data access ----
    /// How an access finds its place in the file: at an explicit offset,
    /// at the individual file pointer (which moves past the data), or at
    /// the shared one; and whether every member takes part (the _all and
    /// _ordered calls).
    enum class Via : std::uint8_t { At, AtAll, Pointer, PointerAll, Shared, Ordered };
    /// Reads or writes `count` elements of `type` at `buf`, at view offset
    /// `offset` (etypes) for Via::At and AtAll.  Returns the bytes of the
    /// buffer's stream moved: all of them for a write, fewer for a read
    /// that reaches the end of the file.  The collective forms use
    /// two-phase I/O when the views scatter small runs
    /// (io/collective.cpp), and every member learns every member's errors.
    std::int64_t access(Via via, bool write, std::int64_t offset, void* buf, std::int64_t count,
                        const dtype::Datatype& type, const char* fn);
    std::int64_t read_at(std::int64_t offset, void* buf, std::int64_t count, const dtype::Datatype& type,
                         const char* fn) {
        return access(Via::At, false, offset, buf, count, type, fn);
    }
    std::int64_t write_at(std::int64_t offset, const void* buf, std::int64_t count, const dtype::Datatype& type,
                          const char* fn) {
        return access(Via::At, true, offset, const_cast<void*>(buf), count, type, fn);
    }
    std::int64_t read_at_all(std::int64_t offset, void* buf, std::int64_t count, const dtype::Datatype& type,
                             const char* fn) {
        return access(Via::AtAll, false, offset, buf, count, type, fn);
    }
    std::int64_t write_at_all(std::int64_t offset, const void* buf, std::int64_t count,
                              const dtype::Datatype& type, const char* fn) {
        return access(Via::AtAll, true, offset, const_cast<void*>(buf), count, type, fn);
    }
    std::int64_t read(void* buf, std::int64_t count, const dtype::Datatype& type, const char* fn) {
        return access(Via::Pointer, false, 0, buf, count, type, fn);
    }
    std::int64_t write(const void* buf, std::int64_t count, const dtype::Datatype& type, const char* fn) {
        return access(Via::Pointer, true, 0, const_cast<void*>(buf), count, type, fn);
    }
    std::int64_t read_all(void* buf, std::int64_t count, const dtype::Datatype& type, const char* fn) {
        return access(Via::PointerAll, false, 0, buf, count, type, fn);
    }
    std::int64_t write_all(const void* buf, std::int64_t count, const dtype::Datatype& type, const char* fn) {
        return access(Via::PointerAll, true, 0, const_cast<void*>(buf), count, type, fn);
    }
    std::int64_t read_shared(void* buf, std::int64_t count, const dtype::Datatype& type, const char* fn) {
        return access(Via::Shared, false, 0, buf, count, type, fn);
    }
    std::int64_t write_shared(const void* buf, std::int64_t count, const dtype::Datatype& type, const char* fn) {
        return access(Via::Shared, true, 0, const_cast<void*>(buf), count, type, fn);
    }
    /// Through the shared file pointer, collective, in rank order.
    std::int64_t read_ordered(void* buf, std::int64_t count, const dtype::Datatype& type, const char* fn) {
        return access(Via::Ordered, false, 0, buf, count, type, fn);
    }
    std::int64_t write_ordered(const void* buf, std::int64_t count, const dtype::Datatype& type, const char* fn) {
        return access(Via::Ordered, true, 0, const_cast<void*>(buf), count, type, fn);
    }
    /// MPI_File_seek; MPI_File_get_position.
    void seek(std::int64_t offset, int whence, const char* fn);
    std::int64_t position() const { return pos_; }
    /// MPI_File_seek_shared (collective); MPI_File_get_position_shared.
    void seek_shared(std::int64_t offset, int whence, const char* fn);
    std::int64_t position_shared(const char* fn);

    // ---- split collectives (13.4.5): one may be open at a time ----
    enum class Split : std::uint8_t { None, ReadAt, WriteAt, Read, Write, ReadOrdered, WriteOrdered };
    /// Notes that a split collective of `kind` began on `buf` with the
    /// access's result in bytes.
    void split_begin(Split kind, const void* buf, std::int64_t bytes, const char* fn);
    /// Ends the open split collective, which must be of `kind` on `buf`;
    /// returns its bytes.
    std::int64_t split_end(Split kind, const void* buf, const char* fn);
    /// Throws when a split collective is open (`fn` may not begin another).
    void no_split(const char* fn) const;

    /// Stream bytes one step of an access moves: the size of the buffers a
    /// non-contiguous access packs through, of the file runs it asks the
    /// datatype engine for at once, and of a two-phase round.
    static constexpr std::int64_t kChunk = std::int64_t{1} << 22;
    /// A read of several file runs reads their whole span at once ("data
    /// sieving") when the span is at most this many times the data.
    static constexpr std::int64_t kSieveRatio = 4;

private:
    File(Runtime& rt, std::unique_ptr<Communicator> comm);

    /// SHMPI_IO_COLL: how the collective accesses move data.
    enum CollMode { kCollAuto, kCollIndependent, kCollTwoPhase };
    /// The mode SHMPI_IO_COLL asks for; throws naming `fn` for a value that
    /// is none.
    static int coll_mode_from_environment(const char* fn);
    /// access() in the file's own stream: `buf`, `count` and `type` are
    /// the data as the file holds it.  Returns the file bytes moved.
    std::int64_t move(Via via, bool write, std::int64_t offset, void* buf, std::int64_t count,
                      const dtype::Datatype& type, const char* fn);
    std::int64_t access_all(bool write, std::int64_t offset, void* buf, std::int64_t count,
                            const dtype::Datatype& type, const char* fn);
    /// Two-phase I/O of an access of `bytes` stream bytes at view byte
    /// `start`, in `rounds` rounds (the most any member needs).
    std::int64_t two_phase(bool write, std::int64_t start, void* buf, std::int64_t count,
                           const dtype::Datatype& type, std::int64_t bytes, std::int64_t rounds, const char* fn);

    std::int64_t shared_access(bool write, void* buf, std::int64_t count, const dtype::Datatype& type,
                               const char* fn);
    std::int64_t ordered(bool write, void* buf, std::int64_t count, const dtype::Datatype& type, const char* fn);
    /// Moves the data of an access of `bytes` stream bytes at view byte
    /// `start` to or from the `count` elements of `type` at `buf`.
    std::int64_t transfer(bool write, std::int64_t start, void* buf, std::int64_t count,
                          const dtype::Datatype& type, std::int64_t bytes, const char* fn);
    /// The checks every access makes: mode, etype multiple, offset range.
    /// Returns the access's bytes.
    std::int64_t access_bytes(bool write, std::int64_t offset, std::int64_t count, const dtype::Datatype& type,
                              const char* fn) const;
    /// Where stream byte `p` of the view lies in the file.
    std::int64_t file_position(std::int64_t p) const;
    /// The view offset (etypes, rounded up) of the end of the file.
    std::int64_t end_offset(const char* fn) const;
    /// The shared file pointer: adds `delta` etypes, returns the old value.
    std::int64_t shared_fetch_add(std::int64_t delta, const char* fn);
    void shared_set(std::int64_t value, const char* fn);
    /// Fails with MPI_ERR_NOT_SAME unless every member passed the same
    /// `value` (collective).
    void agree(std::int64_t value, const char* what, const char* fn);
    /// Rank 0's verdict (an errno, 0 for success) on every member.
    int share_errno(int err);
    /// Appends to segs_ the file runs of stream bytes [p, p + n).
    void file_runs(std::int64_t p, std::int64_t n);
    void lock_range(bool write, std::int64_t from, std::int64_t to, const char* fn) const;
    void unlock_range(std::int64_t from, std::int64_t to) const;

    std::uint32_t magic_ = kMagic;
    Runtime& rt_;
    /// Holds the shared file pointer; its communicator is the file's.
    std::unique_ptr<rma::Window> shared_;
    int fd_ = -1;
    int amode_ = 0;
    std::string path_;
    bool atomic_ = false;

    std::int64_t disp_ = 0;
    /// The view's etype and filetype as they lie in the file: the ones
    /// MPI_File_set_view took (view_etype_, view_filetype_) in "native",
    /// rebuilt for the file's value sizes in other representations.
    dtype::Ref etype_;
    dtype::Ref filetype_;
    dtype::Ref view_etype_;
    dtype::Ref view_filetype_;
    const Datarep* rep_ = &Datarep::native_rep();
    /// A conversion error of a collective access, which access_bytes()
    /// raises among the access's checks so that every member learns it.
    mutable std::optional<MpiError> prior_;
    std::int64_t pos_ = 0;  ///< the individual file pointer, in etypes
    std::int64_t runs_per_tile_ = 1;  ///< runs of data in one filetype
    /// Each copy of the filetype starts past the data of the one before, so
    /// file positions grow with the stream (false: copies overlap).
    bool tiles_ordered_ = true;
    /// Some member's view has small runs (small_runs()): agreed on by every
    /// member in MPI_File_set_view, so the collective accesses know alike
    /// whether two-phase I/O may come.
    bool views_small_ = false;
    /// A view of `filetype` (of `runs_per_tile` runs) is worth two-phase I/O.
    static bool small_runs(const dtype::Datatype& filetype, std::int64_t runs_per_tile);
    int coll_mode_ = kCollAuto;

    Split split_ = Split::None;
    const void* split_buf_ = nullptr;
    std::int64_t split_bytes_ = 0;

    // Buffers accesses reuse.
    std::vector<dtype::Segment> segs_;   ///< file runs (addresses are file positions)
    std::vector<dtype::Segment> msegs_;  ///< memory runs
    std::vector<iovec> iov_;
    std::vector<std::byte> bounce_;      ///< the data stream, packed
    std::vector<std::byte> sieve_;       ///< a span of the file read at once
    std::vector<std::byte> conv_;        ///< an access's data in a representation other than "native"
    /// Two-phase I/O's buffers (io/collective.cpp), kept from call to call:
    /// allocated afresh, the megabytes of a large access came from mmap and
    /// went back each time, and their page faults were most of its time.
    struct TwoPhase {
        struct Piece {
            std::int64_t at;
            std::int64_t len;
        };
        struct Item {
            std::int64_t at;
            std::int64_t len;
            std::int64_t byte;  ///< where its bytes are in `in` (a write) or go in `out` (a read)
        };
        std::vector<std::vector<Piece>> mine;         ///< per domain: this member's pieces
        std::vector<std::vector<std::int64_t>> where;  ///< their stream positions in the round's slice
        std::vector<Piece> pieces_out, pieces_in;
        std::vector<Item> items;
        std::vector<std::byte> out, in;
    } tp_;
};

/// The file behind `handle`, or nullptr when it is not one.
File* file_of(MPI_File handle);

/// What each member of a collective file call says: its error class (0 for
/// none) and two values of the call.
struct Verdict {
    std::int64_t cls;
    std::int64_t value;
    std::int64_t value2;
};

/// Collective over `c`: every member's verdict, so that all of them fail
/// alike and none waits in a later collective for one that gave up.
/// Throws this member's own error (class `cls`, text `text`), else the
/// error of the first member that failed, naming it: "rank R of the file's
/// communicator <failed_at> (its error handler reports why)".  Returns every
/// member's verdict otherwise.
std::vector<Verdict> verdicts(Runtime& rt, Communicator& c, int cls, const std::string& text, std::int64_t value,
                              std::int64_t value2, const char* fn,
                              const char* failed_at = "failed in this collective call");

namespace detail {
/// pread/pwrite of all `n` bytes at byte `at` (a read stops early at the
/// end of the file); returns the bytes moved.  Throws naming `fn`.
std::int64_t whole(int fd, bool write, std::byte* p, std::int64_t n, std::int64_t at, const char* fn);
/// preadv/pwritev of the memory runs `iov` from byte `at` on (IOV_MAX at a
/// time); returns the bytes moved (fewer only at the end of the file).
/// Consumes `iov`.
std::int64_t vectored(int fd, bool write, std::vector<iovec>& iov, std::int64_t at, const char* fn);
}  // namespace detail

}  // namespace shmpi::io
