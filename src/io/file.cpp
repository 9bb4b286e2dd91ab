// Parallel file I/O: see file.hpp.
#include "io/file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>

#include "coll/select.hpp"
#include "errors.hpp"
#include "op.hpp"
#include "rma/window.hpp"
#include "runtime.hpp"

namespace shmpi::io {

namespace {

constexpr std::int64_t kChunk = File::kChunk;
constexpr std::int64_t kSieveRatio = File::kSieveRatio;

std::string errno_text(int err) { return std::strerror(err); }

const dtype::Datatype& offset_type() { return *dtype::predefined(MPI_INT64_T); }

/// The one view offset (or size) whose stream byte position would not fit
/// 64 bits is refused as MPI_ERR_ARG.
std::int64_t times(std::int64_t a, std::int64_t b, const char* what, const char* fn) {
    std::int64_t r = 0;
    if (__builtin_mul_overflow(a, b, &r)) fail(MPI_ERR_ARG, "{}: {} overflows a 64-bit byte position", fn, what);
    return r;
}

/// The position and length of a file run as segments() gives them (its
/// "address" is a byte position: the filetype is walked from address 0).
std::int64_t at_of(const dtype::Segment& s) { return static_cast<std::int64_t>(reinterpret_cast<std::uintptr_t>(s.address)); }

}  // namespace

namespace detail {

std::int64_t whole(int fd, bool write, std::byte* p, std::int64_t n, std::int64_t at, const char* fn) {
    std::int64_t done = 0;
    while (done < n) {
        const auto want = static_cast<std::size_t>(std::min<std::int64_t>(n - done, std::int64_t{1} << 30));
        const ssize_t k = write ? pwrite(fd, p + done, want, at + done) : pread(fd, p + done, want, at + done);
        if (k < 0) {
            if (errno == EINTR) continue;
            const int err = errno;
            fail(error_class_of_errno(err), "{}: cannot {} {} bytes at byte {} of the file: {}", fn,
                 write ? "write" : "read", n - done, at + done, errno_text(err));
        }
        if (k == 0) break;  // end of file (pwrite never returns 0 for want > 0)
        done += k;
    }
    return done;
}

std::int64_t vectored(int fd, bool write, std::vector<iovec>& iov, std::int64_t at, const char* fn) {
    std::int64_t done = 0;
    std::size_t first = 0;
    while (first < iov.size()) {
        const int k = static_cast<int>(std::min<std::size_t>(IOV_MAX, iov.size() - first));
        const ssize_t moved = write ? pwritev(fd, iov.data() + first, k, at + done)
                                    : preadv(fd, iov.data() + first, k, at + done);
        if (moved < 0) {
            if (errno == EINTR) continue;
            const int err = errno;
            fail(error_class_of_errno(err), "{}: cannot {} at byte {} of the file: {}", fn, write ? "write" : "read",
                 at + done, errno_text(err));
        }
        if (moved == 0) break;
        done += moved;
        // Drop the runs it covered, and the covered part of the next one.
        auto left = static_cast<std::size_t>(moved);
        while (first < iov.size() && left >= iov[first].iov_len) left -= iov[first++].iov_len;
        if (left > 0) {
            iov[first].iov_base = static_cast<std::byte*>(iov[first].iov_base) + left;
            iov[first].iov_len -= left;
        }
    }
    return done;
}

}  // namespace detail

int error_class_of_errno(int err) {
    switch (err) {
    case ENOENT:
        return MPI_ERR_NO_SUCH_FILE;
    case EEXIST:
        return MPI_ERR_FILE_EXISTS;
    case EACCES:
    case EPERM:
        return MPI_ERR_ACCESS;
    case EROFS:
        return MPI_ERR_READ_ONLY;
    case ENOSPC:
    case EFBIG:
        return MPI_ERR_NO_SPACE;
    case EDQUOT:
        return MPI_ERR_QUOTA;
    case ENAMETOOLONG:
    case ENOTDIR:
    case EISDIR:
    case ELOOP:
    case EINVAL:
        return MPI_ERR_BAD_FILE;
    case ETXTBSY:
    case EBUSY:
        return MPI_ERR_FILE_IN_USE;
    case ENOMEM:
        return MPI_ERR_NO_MEM;
    default:
        return MPI_ERR_IO;
    }
}

File* file_of(MPI_File handle) {
    const auto v = reinterpret_cast<std::uintptr_t>(handle);
    if (v < 0x1000 || !HandleStorage::may_read_as<File>(handle)) return nullptr;
    auto* f = reinterpret_cast<File*>(handle);
    return f->magic() == File::kMagic ? f : nullptr;
}

File::File(Runtime& rt, std::unique_ptr<Communicator> comm) : rt_(rt) {
    const int me = comm->rank();
    // 8 bytes at rank 0 hold the shared file pointer (etypes of the view).
    shared_ = rma::Window::create(rt, std::move(comm), rma::Flavor::Allocate, nullptr, me == 0 ? 8 : 0, 8, false,
                                  "MPI_File_open");
    etype_ = dtype::Ref(&dtype::byte_type());
    filetype_ = etype_;
    view_etype_ = etype_;
    view_filetype_ = etype_;
}

File::~File() {
    magic_ = 0;
    if (fd_ >= 0) ::close(fd_);
}

int File::rank() const { return shared_->rank(); }
int File::size() const { return shared_->size(); }
Communicator& File::comm() { return shared_->comm(); }

std::vector<Verdict> verdicts(Runtime& rt, Communicator& c, int cls, const std::string& text, std::int64_t value,
                              std::int64_t value2, const char* fn, const char* failed_at) {
    const Verdict mine{cls, value, value2};
    std::vector<Verdict> all(static_cast<std::size_t>(c.size()));
    coll::allgather(rt.coll_selection(), c.team(), &mine, sizeof mine, all.data());
    if (cls != 0) throw MpiError(cls, text);
    for (std::size_t r = 0; r < all.size(); ++r) {
        if (all[r].cls != 0) {
            fail(static_cast<int>(all[r].cls), "{}: rank {} of the file's communicator {} (its error handler "
                 "reports why)", fn, r, failed_at);
        }
    }
    return all;
}

/// verdicts(), and with `what`, MPI_ERR_NOT_SAME unless every member
/// passed the same values (`what` names them).
static void collective_verdict(Runtime& rt, Communicator& c, int cls, const std::string& text, std::int64_t value,
                               std::int64_t value2, const char* what, const char* fn) {
    const std::vector<Verdict> all = verdicts(rt, c, cls, text, value, value2, fn);
    if (what == nullptr) return;
    for (std::size_t r = 0; r < all.size(); ++r) {
        if (all[r].value != value || all[r].value2 != value2) {
            fail(MPI_ERR_NOT_SAME, "{}: rank {} passed {} {}, rank {} passed {}: every member must pass the same",
                 fn, c.rank(), what, value2 != all[r].value2 ? fmt::format("{}/{}", value, value2)
                                                             : fmt::format("{}", value),
                 r, value2 != all[r].value2 ? fmt::format("{}/{}", all[r].value, all[r].value2)
                                            : fmt::format("{}", all[r].value));
        }
    }
}

/// Runs `local` (this member's own checks and work), then the collective
/// verdict: what `local` throws becomes this member's error, which every
/// member learns.
template <class Local>
static void collectively(Runtime& rt, Communicator& c, std::int64_t value, std::int64_t value2, const char* what,
                         const char* fn, Local&& local) {
    int cls = 0;
    std::string text;
    try {
        local();
    } catch (const MpiError& e) {
        cls = e.error_class();
        text = e.what();
    }
    collective_verdict(rt, c, cls, text, value, value2, what, fn);
}

std::unique_ptr<File> File::open(Runtime& rt, std::unique_ptr<Communicator> comm, const std::string& path,
                                 int amode, const char* fn) {
    std::unique_ptr<File> f(new File(rt, std::move(comm)));
    Communicator& c = f->comm();
    f->amode_ = amode;
    f->path_ = path;
    f->coll_mode_ = coll_mode_from_environment(fn);
    collective_verdict(rt, c, 0, "", amode, 0, "amode", fn);

    int flags = O_CLOEXEC;
    if ((amode & MPI_MODE_RDONLY) != 0) flags |= O_RDONLY;
    if ((amode & MPI_MODE_WRONLY) != 0) flags |= O_WRONLY;
    if ((amode & MPI_MODE_RDWR) != 0) flags |= O_RDWR;
    // Rank 0 creates the file, then the others open what it made.
    int err = 0;
    if (f->rank() == 0) {
        int first = flags;
        if ((amode & MPI_MODE_CREATE) != 0) first |= O_CREAT | ((amode & MPI_MODE_EXCL) != 0 ? O_EXCL : 0);
        f->fd_ = ::open(path.c_str(), first, 0666);
        if (f->fd_ < 0) err = errno;
    }
    err = f->share_errno(err);
    if (err != 0) {
        fail(error_class_of_errno(err), "{}: cannot {} {}: {}", fn,
             err == EEXIST ? "create (MPI_MODE_EXCL)" : "open", path, errno_text(err));
    }
    struct stat st{};
    collectively(rt, c, 0, 0, nullptr, fn, [&] {
        if (f->rank() != 0) f->fd_ = ::open(path.c_str(), flags);
        if (f->fd_ < 0) {
            const int e = errno;
            fail(error_class_of_errno(e), "{}: cannot open {}: {}", fn, path, errno_text(e));
        }
        if (fstat(f->fd_, &st) != 0) {
            const int e = errno;
            fail(MPI_ERR_IO, "{}: cannot stat {}: {}", fn, path, errno_text(e));
        }
        if (S_ISDIR(st.st_mode)) fail(MPI_ERR_BAD_FILE, "{}: {} is a directory", fn, path);
    });
    // Every member must have opened the same file.
    collective_verdict(rt, c, 0, "", static_cast<std::int64_t>(st.st_dev), static_cast<std::int64_t>(st.st_ino),
                       "a file name naming another file (device/inode)", fn);
    f->shared_->lock_all(MPI_MODE_NOCHECK, fn);
    if ((amode & MPI_MODE_APPEND) != 0) {
        // Both pointers start at the end of the file (13.2.1).
        f->pos_ = static_cast<std::int64_t>(st.st_size);
        if (f->rank() == 0) f->shared_set(f->pos_, fn);
        coll::barrier(rt.coll_selection(), c.team());
    }
    return f;
}

void File::close(const char* fn) {
    collectively(rt_, comm(), 0, 0, nullptr, fn, [&] {
        if (split_ != Split::None) {
            fail(MPI_ERR_OTHER, "{}: a split collective access is still open on the file (end it with its _end "
                 "call first)", fn);
        }
    });
    shared_->unlock_all(fn);
    shared_->free(fn);  // a barrier: every member is done with the file
    ::close(fd_);
    fd_ = -1;
    if ((amode_ & MPI_MODE_DELETE_ON_CLOSE) != 0 && rank() == 0) {
        if (::unlink(path_.c_str()) != 0 && errno != ENOENT) {
            const int e = errno;
            fail(error_class_of_errno(e), "{}: cannot remove {} (MPI_MODE_DELETE_ON_CLOSE): {}", fn, path_,
                 errno_text(e));
        }
    }
}

int File::share_errno(int err) {
    std::int32_t e = err;
    coll::bcast(rt_.coll_selection(), comm().team(), &e, sizeof e, 0);
    return e;
}

// ------------------------------------------------------------------ sizes

std::int64_t File::file_size(const char* fn) const {
    struct stat st{};
    if (fstat(fd_, &st) != 0) {
        const int e = errno;
        fail(MPI_ERR_IO, "{}: cannot stat {}: {}", fn, path_, errno_text(e));
    }
    return static_cast<std::int64_t>(st.st_size);
}

void File::set_size(std::int64_t bytes, bool preallocate, const char* fn) {
    collectively(rt_, comm(), preallocate ? 0 : bytes, 0, preallocate ? nullptr : "size", fn, [&] {
        no_split(fn);
        if ((amode_ & MPI_MODE_SEQUENTIAL) != 0) {
            fail(MPI_ERR_UNSUPPORTED_OPERATION, "{}: the file was opened with MPI_MODE_SEQUENTIAL", fn);
        }
        if ((amode_ & MPI_MODE_RDONLY) != 0) fail(MPI_ERR_READ_ONLY, "{}: the file was opened MPI_MODE_RDONLY", fn);
    });
    int err = 0;
    if (rank() == 0) {
        if (preallocate) {
            // Reserves blocks up to `bytes`; never shrinks (13.2.5).
            if (bytes > 0) err = posix_fallocate(fd_, 0, bytes);
        } else if (ftruncate(fd_, bytes) != 0) {
            err = errno;
        }
    }
    err = share_errno(err);
    if (err != 0) {
        fail(error_class_of_errno(err) == MPI_ERR_BAD_FILE ? MPI_ERR_IO : error_class_of_errno(err),
             "{}: cannot {} {} to {} bytes: {}", fn, preallocate ? "preallocate" : "resize", path_, bytes,
             errno_text(err));
    }
}

void File::sync(const char* fn) {
    collectively(rt_, comm(), 0, 0, nullptr, fn, [&] {
        no_split(fn);
        if (fsync(fd_) != 0) {
            const int e = errno;
            fail(MPI_ERR_IO, "{}: cannot write {} to its disk: {}", fn, path_, errno_text(e));
        }
    });
}

void File::set_atomicity(bool on, const char* fn) {
    collectively(rt_, comm(), on ? 1 : 0, 0, "flag", fn, [&] { no_split(fn); });
    atomic_ = on;
}

// ------------------------------------------------------------------ views

namespace {

/// The rules of MPI-3.1 13.3 for an etype or filetype (`etype`: the view's
/// etype, for a filetype): data, displacements that are nonnegative and
/// monotonically nondecreasing (over the copies that tile the file too), no
/// overlapping data when the file may be written, and holes that are
/// whole etypes.  Classes as ROMIO's: MPI_ERR_ARG for sizes, MPI_ERR_IO for
/// the layout.
/// What set_view keeps of a filetype's layout (check_view_type walks it).
struct Shape {
    std::int64_t runs = 1;  ///< runs of data in one copy
    bool ordered = true;    ///< each copy starts past the data of the one before
};

/// `t` and `etype` are as they lie in the file; messages name the types the
/// user gave (`tname`, `ename`).
Shape check_view_type(const dtype::Datatype& t, const char* what, const char* tname, const dtype::Datatype* etype,
                      const char* ename, bool writable, const char* fn) {
    if (t.size <= 0) fail(MPI_ERR_ARG, "{}: {} {} holds no data", fn, what, tname);
    if (etype != nullptr && t.size % etype->size != 0) {
        fail(MPI_ERR_ARG, "{}: filetype {} holds {} bytes, not a whole number of etypes {} ({} bytes each)", fn,
             tname, t.size, ename, etype->size);
    }
    std::vector<dtype::Segment> runs;
    dtype::segments(t, nullptr, 1, 0, t.size, runs);
    // As ROMIO reads the rule: each run starts at or after the start of the
    // run before it; a run that starts inside the one before overlaps it,
    // which only a file that is never written may have.
    std::int64_t prev_at = -1, prev_end = -1;
    for (const dtype::Segment& s : runs) {
        const std::int64_t at = at_of(s);
        if (at < 0) {
            fail(MPI_ERR_IO, "{}: {} {} places data at byte {}: the displacements of a view's types must be "
                 "nonnegative (MPI-3.1 13.3)", fn, what, tname, at);
        }
        if (at < prev_at) {
            fail(MPI_ERR_IO, "{}: {} {} places data at byte {} after data at byte {}: the displacements of a "
                 "view's types must be monotonically nondecreasing (MPI-3.1 13.3)", fn, what, tname, at, prev_at);
        }
        if (writable && at < prev_end) {
            fail(MPI_ERR_IO, "{}: {} {} has overlapping data (bytes {} to {} again): a file opened for writing "
                 "takes no overlapping etype or filetype (MPI-3.1 13.3)", fn, what, tname, at, prev_end);
        }
        prev_at = at;
        prev_end = std::max(prev_end, at + s.length);
    }
    const Shape shape{std::max<std::int64_t>(1, static_cast<std::int64_t>(runs.size())),
                      runs.empty() || at_of(runs.front()) + t.extent >= prev_end};
    if (etype == nullptr) return shape;
    // Copies of the filetype follow one another at its extent.  (One that
    // is shorter than its data, so that copies overlap, is taken: HDF5
    // makes such filetypes for accesses of a single copy.)
    if (t.extent <= 0) {
        fail(MPI_ERR_IO, "{}: filetype {} has extent {}, so its copies, which tile the file, would not move "
             "forward", fn, tname, t.extent);
    }
    // "The extent of any hole in the filetype must be a multiple of the
    // etype's extent": with an etype that is one run of bytes, every run of
    // the filetype starts on an etype boundary, from one copy of the
    // filetype to the next too.  (An etype with gaps of its own is taken
    // as it is.)
    const std::int64_t unit = etype->extent;
    if (unit <= 0 || !etype->contiguous) return shape;
    for (const dtype::Segment& s : runs) {
        if ((at_of(s) - t.lb) % unit != 0) {
            fail(MPI_ERR_IO, "{}: filetype {} places data at byte {}, which is not a whole number of etypes {} ({} "
                 "bytes each) from its lower bound (MPI-3.1 13.3)", fn, tname, at_of(s), ename, unit);
        }
    }
    if (t.extent % unit != 0) {
        fail(MPI_ERR_IO, "{}: filetype {} has extent {}, not a whole number of etypes {} ({} bytes each), so its "
             "copies leave holes that are not (MPI-3.1 13.3)", fn, tname, t.extent, ename, unit);
    }
    return shape;
}

}  // namespace

void File::set_view(std::int64_t disp, const dtype::Datatype& etype, const dtype::Datatype& filetype,
                    const std::string& datarep, const char* fn) {
    const bool current = disp == MPI_DISPLACEMENT_CURRENT;
    const bool writable = (amode_ & MPI_MODE_RDONLY) == 0;
    // This member's checks, with the types laid out in the representation.
    Shape shape;
    const Datarep* rep = nullptr;
    dtype::Ref et, ft;
    int cls = 0;
    std::string text;
    try {
        no_split(fn);
        rep = Datarep::find(datarep);
        if (rep == nullptr) {
            fail(MPI_ERR_UNSUPPORTED_DATAREP, "{}: datarep \"{}\" is not a data representation shmpi knows "
                 "(\"native\", \"internal\", \"external32\", or one MPI_Register_datarep defined)", fn, datarep);
        }
        if (current && (amode_ & MPI_MODE_SEQUENTIAL) == 0) {
            fail(MPI_ERR_ARG, "{}: disp MPI_DISPLACEMENT_CURRENT needs a file opened with MPI_MODE_SEQUENTIAL", fn);
        }
        if (!current && disp < 0) fail(MPI_ERR_ARG, "{}: disp {} is negative", fn, disp);
        if (disp > (std::int64_t{1} << 62)) fail(MPI_ERR_ARG, "{}: disp {} is beyond the largest file position", fn, disp);
        et = rep->layout(etype, fn);
        ft = rep->layout(filetype, fn);
        check_view_type(*et, "etype", etype.name, nullptr, nullptr, writable, fn);
        shape = check_view_type(*ft, "filetype", filetype.name, et.get(), etype.name, writable, fn);
    } catch (const MpiError& e) {
        cls = e.error_class();
        text = e.what();
    }
    // Every member's verdict; the representation and the size of the etype
    // in it must be the same on all (13.3), and so must the use of
    // MPI_DISPLACEMENT_CURRENT.
    const std::int64_t esize = et ? et->size : 0;
    const auto said = static_cast<std::int64_t>(std::hash<std::string>{}(datarep) >> 2) * 2 + (current ? 1 : 0);
    const std::vector<Verdict> all = verdicts(rt_, comm(), cls, text, esize, said, fn);
    for (std::size_t r = 0; r < all.size(); ++r) {
        if ((all[r].value2 ^ said) >> 1 != 0) {
            fail(MPI_ERR_NOT_SAME, "{}: rank {} passed datarep \"{}\", rank {} another one: every member must pass the "
                 "same", fn, rank(), datarep, r);
        }
        if (all[r].value2 != said) {
            fail(MPI_ERR_NOT_SAME, "{}: rank {} passed disp {}, rank {} {}: every member or none must pass "
                 "MPI_DISPLACEMENT_CURRENT", fn, rank(), current ? "MPI_DISPLACEMENT_CURRENT" : "of bytes", r,
                 current ? "bytes" : "MPI_DISPLACEMENT_CURRENT");
        }
        if (all[r].value != esize) {
            fail(MPI_ERR_NOT_SAME, "{}: rank {} passed an etype of {} bytes in the file (datarep \"{}\"), rank {} one "
                 "of {}: every member must pass the same", fn, rank(), esize, datarep, r, all[r].value);
        }
    }
    // Every member is here: no shared-pointer access of the old view is
    // still running.  Rank 0 reads (MPI_DISPLACEMENT_CURRENT) and resets the
    // shared pointer, and the allgather at the end publishes it.
    if (current) {
        std::int64_t at = 0;
        if (rank() == 0) at = byte_offset(shared_fetch_add(0, fn), fn);
        coll::bcast(rt_.coll_selection(), comm().team(), &at, sizeof at, 0);
        disp = at;
    }
    disp_ = disp;
    etype_ = std::move(et);
    filetype_ = std::move(ft);
    view_etype_ = dtype::Ref(&etype);
    view_filetype_ = dtype::Ref(&filetype);
    rep_ = rep;
    runs_per_tile_ = shape.runs;
    tiles_ordered_ = shape.ordered;
    pos_ = 0;
    if (rank() == 0) shared_set(0, fn);
    // Whether any member's new view has small runs; the allgather also
    // publishes the reset shared pointer (no member goes on before rank 0
    // has reset it).
    std::vector<std::int32_t> small(static_cast<std::size_t>(size()));
    const std::int32_t mine = small_runs(*filetype_, runs_per_tile_) ? 1 : 0;
    coll::allgather(rt_.coll_selection(), comm().team(), &mine, sizeof mine, small.data());
    views_small_ = std::find(small.begin(), small.end(), 1) != small.end();
}

std::int64_t File::type_extent(const dtype::Datatype& type, const char* fn) const {
    return rep_->layout(type, fn)->extent;
}

std::int64_t File::file_position(std::int64_t p) const {
    const dtype::Datatype& ft = *filetype_;
    if (ft.contiguous) return disp_ + ft.true_lb + p;
    const std::int64_t tile = p / ft.size;
    std::vector<dtype::Segment> one;
    dtype::segments(ft, nullptr, 1, p % ft.size, 1, one);
    return disp_ + tile * ft.extent + at_of(one.front());
}

std::int64_t File::byte_offset(std::int64_t offset, const char* fn) const {
    if (offset < 0) fail(MPI_ERR_ARG, "{}: offset {} is negative", fn, offset);
    const std::int64_t p = times(offset, etype_->size, "offset", fn);
    const std::int64_t tiles = p / filetype_->size;
    times(tiles, std::max<std::int64_t>(filetype_->extent, 1), "offset", fn);
    return file_position(p);
}

std::int64_t File::end_offset(const char* fn) const {
    const std::int64_t bytes = file_size(fn);
    const dtype::Datatype& ft = *filetype_;
    std::int64_t stream = 0;
    if (bytes > disp_) {
        const std::int64_t rel = bytes - disp_;
        if (ft.contiguous) {
            stream = std::max<std::int64_t>(0, rel - ft.true_lb);
        } else {
            const std::int64_t tiles = rel / ft.extent;
            const std::int64_t rest = rel - tiles * ft.extent;
            stream = tiles * ft.size;
            std::vector<dtype::Segment> runs;
            dtype::segments(ft, nullptr, 1, 0, ft.size, runs);
            for (const dtype::Segment& s : runs) stream += std::clamp<std::int64_t>(rest - at_of(s), 0, s.length);
        }
    }
    return (stream + etype_->size - 1) / etype_->size;
}

// ----------------------------------------------------------- data access

std::int64_t File::access_bytes(bool write, std::int64_t offset, std::int64_t count, const dtype::Datatype& type,
                                const char* fn) const {
    if (prior_) {
        const MpiError e = *prior_;
        prior_.reset();
        throw e;
    }
    if (write && (amode_ & MPI_MODE_RDONLY) != 0) fail(MPI_ERR_READ_ONLY, "{}: the file was opened MPI_MODE_RDONLY", fn);
    if (!write && (amode_ & MPI_MODE_WRONLY) != 0) {
        fail(MPI_ERR_ACCESS, "{}: the file was opened MPI_MODE_WRONLY, and cannot be read", fn);
    }
    if (offset < 0) fail(MPI_ERR_ARG, "{}: offset {} is negative", fn, offset);
    const std::int64_t bytes = count * type.size;  // the C boundary checked that it fits
    if (bytes % etype_->size != 0) {
        fail(MPI_ERR_TYPE, "{}: {} elements of {} hold {} bytes, not a whole number of the view's etype {} ({} bytes "
             "each)", fn, count, type.name, bytes, view_etype_->name, etype_->size);
    }
    // The access's last byte must have a file position that fits 64 bits.
    const std::int64_t start = times(offset, etype_->size, "offset", fn);
    std::int64_t end = 0;
    if (__builtin_add_overflow(start, bytes, &end)) fail(MPI_ERR_ARG, "{}: offset {} is too large", fn, offset);
    const std::int64_t tiles = end / filetype_->size + 1;
    std::int64_t reach = times(tiles, std::max<std::int64_t>(filetype_->extent, 1), "offset", fn);
    if (__builtin_add_overflow(reach, disp_ + filetype_->true_extent + filetype_->true_lb, &reach) ||
        reach > (std::int64_t{1} << 62)) {
        fail(MPI_ERR_ARG, "{}: offset {} lies beyond the largest file position", fn, offset);
    }
    return bytes;
}

void File::file_runs(std::int64_t p, std::int64_t n) {
    segs_.clear();
    const dtype::Datatype& ft = *filetype_;
    if (ft.contiguous) {
        segs_.push_back(dtype::Segment{reinterpret_cast<void*>(static_cast<std::uintptr_t>(disp_ + ft.true_lb + p)), n});
        return;
    }
    const std::int64_t count = (p + n + ft.size - 1) / ft.size;
    dtype::segments(ft, nullptr, count, p, n, segs_);
    for (dtype::Segment& s : segs_) {
        s.address = reinterpret_cast<void*>(static_cast<std::uintptr_t>(at_of(s) + disp_));
    }
}

void File::lock_range(bool write, std::int64_t from, std::int64_t to, const char* fn) const {
    struct flock fl{};
    fl.l_type = write ? F_WRLCK : F_RDLCK;
    fl.l_whence = SEEK_SET;
    fl.l_start = from;
    fl.l_len = to - from;
    while (fcntl(fd_, F_OFD_SETLKW, &fl) != 0) {
        if (errno == EINTR) continue;
        const int e = errno;
        fail(MPI_ERR_IO, "{}: cannot lock bytes {} to {} of {} (atomic mode): {}", fn, from, to, path_, errno_text(e));
    }
}

void File::unlock_range(std::int64_t from, std::int64_t to) const {
    struct flock fl{};
    fl.l_type = F_UNLCK;
    fl.l_whence = SEEK_SET;
    fl.l_start = from;
    fl.l_len = to - from;
    fcntl(fd_, F_OFD_SETLK, &fl);
}

std::int64_t File::transfer(bool write, std::int64_t start, void* buf, std::int64_t count,
                            const dtype::Datatype& type, std::int64_t bytes, const char* fn) {
    if (bytes == 0) return 0;
    const bool run = type.is_run(count);
    std::byte* mem = run ? static_cast<std::byte*>(buf) + type.true_lb : nullptr;

    // Atomic mode: the whole range the access touches, locked for its time.
    struct Range {
        const File* f = nullptr;
        std::int64_t from = 0, to = 0;
        ~Range() {
            if (f != nullptr) f->unlock_range(from, to);
        }
    } locked;
    if (atomic_) {
        // The range from the first byte's position to the last's, or the
        // whole file where copies of the filetype overlap (then positions
        // do not grow with the stream).
        std::int64_t from = 0, to = 0;  // to 0: to the end of the file and beyond (F_SETLK's l_len 0)
        if (tiles_ordered_) {
            from = file_position(start);
            to = file_position(start + bytes - 1) + 1;
        }
        lock_range(write, from, to, fn);
        locked = Range{this, from, to};
    }

    std::int64_t done = 0;
    while (done < bytes) {
        const std::int64_t n = std::min(kChunk, bytes - done);
        file_runs(start + done, n);
        std::int64_t moved = 0;
        if (segs_.size() == 1 && !run) {
            // One file run, memory in pieces: one vectored call.
            msegs_.clear();
            dtype::segments(type, buf, count, done, n, msegs_);
            iov_.clear();
            for (const dtype::Segment& s : msegs_) iov_.push_back(iovec{s.address, static_cast<std::size_t>(s.length)});
            moved = detail::vectored(fd_, write, iov_, at_of(segs_.front()), fn);
        } else {
            // The stream bytes of this step: in memory already, or packed.
            std::byte* data = mem != nullptr ? mem + done : nullptr;
            if (data == nullptr) {
                if (bounce_.size() < static_cast<std::size_t>(n)) bounce_.resize(static_cast<std::size_t>(n));
                data = bounce_.data();
                if (write) dtype::pack(type, buf, count, done, data, n);
            }
            if (write) {
                std::int64_t k = 0;
                for (const dtype::Segment& s : segs_) {
                    detail::whole(fd_, true, data + k, s.length, at_of(s), fn);
                    k += s.length;
                }
                moved = n;
            } else if (segs_.size() == 1) {
                moved = detail::whole(fd_, false, data, n, at_of(segs_.front()), fn);
            } else {
                std::int64_t lo = INT64_MAX, hi = 0;  // (copies of the filetype may overlap)
                for (const dtype::Segment& s : segs_) {
                    lo = std::min(lo, at_of(s));
                    hi = std::max(hi, at_of(s) + s.length);
                }
                if (hi - lo <= kSieveRatio * n) {
                    // One read of the span; the runs are picked out of it.
                    if (sieve_.size() < static_cast<std::size_t>(hi - lo)) sieve_.resize(static_cast<std::size_t>(hi - lo));
                    const std::int64_t got = detail::whole(fd_, false, sieve_.data(), hi - lo, lo, fn);
                    for (const dtype::Segment& s : segs_) {
                        const std::int64_t from = at_of(s) - lo;
                        const std::int64_t have = std::clamp<std::int64_t>(got - from, 0, s.length);
                        std::memcpy(data + moved, sieve_.data() + from, static_cast<std::size_t>(have));
                        moved += have;
                        if (have < s.length) break;
                    }
                } else {
                    for (const dtype::Segment& s : segs_) {
                        const std::int64_t got = detail::whole(fd_, false, data + moved, s.length, at_of(s), fn);
                        moved += got;
                        if (got < s.length) break;
                    }
                }
            }
            if (!write && mem == nullptr && moved > 0) dtype::unpack(type, buf, count, done, data, moved);
        }
        done += moved;
        if (moved < n) break;  // the end of the file
    }
    return done;
}

std::int64_t File::access(Via via, bool write, std::int64_t offset, void* buf, std::int64_t count,
                          const dtype::Datatype& type, const char* fn) {
    if (rep_->native()) return move(via, write, offset, buf, count, type, fn);
    // The data in the file's representation goes through conv_.  An error
    // converting it, in a collective access, is raised among the access's
    // own checks (access_bytes()), where every member learns it.
    const bool collective = via == Via::AtAll || via == Via::PointerAll || via == Via::Ordered;
    struct Forget {  // an error a check before access_bytes() raised instead must not stay for the next access
        std::optional<MpiError>& prior;
        ~Forget() { prior.reset(); }
    } forget{prior_};
    std::int64_t bytes = 0;
    try {
        bytes = rep_->file_bytes(type, count, fn);
        if (bytes % etype_->size != 0) {
            fail(MPI_ERR_TYPE, "{}: {} elements of {} take {} bytes in datarep \"{}\", not a whole number of the "
                 "view's etype {} ({} bytes each)", fn, count, type.name, bytes, rep_->name(), view_etype_->name,
                 etype_->size);
        }
        if (conv_.size() < static_cast<std::size_t>(bytes)) conv_.resize(static_cast<std::size_t>(bytes));
        if (write) rep_->to_file(type, buf, count, conv_.data(), fn);
    } catch (const MpiError& e) {
        if (!collective) throw;
        prior_ = e;
        bytes = 0;
    }
    const std::int64_t moved = move(via, write, offset, conv_.data(), bytes, dtype::byte_type(), fn);
    if (write) return count * type.size;
    return rep_->from_file(type, buf, conv_.data(), moved, fn);
}

std::int64_t File::move(Via via, bool write, std::int64_t offset, void* buf, std::int64_t count,
                        const dtype::Datatype& type, const char* fn) {
    std::int64_t moved = 0;
    switch (via) {
    case Via::At: {
        const std::int64_t bytes = access_bytes(write, offset, count, type, fn);  // (offset checked first)
        return transfer(write, offset * etype_->size, buf, count, type, bytes, fn);
    }
    case Via::AtAll:
        return access_all(write, offset, buf, count, type, fn);
    case Via::Pointer: {
        const std::int64_t bytes = access_bytes(write, pos_, count, type, fn);
        moved = transfer(write, pos_ * etype_->size, buf, count, type, bytes, fn);
        break;
    }
    case Via::PointerAll:
        moved = access_all(write, pos_, buf, count, type, fn);
        break;
    case Via::Shared:
        return shared_access(write, buf, count, type, fn);
    case Via::Ordered:
        return ordered(write, buf, count, type, fn);
    }
    // Past the data (13.4.3); a read's partial etype at the end of the file
    // counts whole.
    pos_ += (moved + etype_->size - 1) / etype_->size;
    return moved;
}

void File::seek(std::int64_t offset, int whence, const char* fn) {
    std::int64_t base = 0;
    if (whence == MPI_SEEK_CUR) {
        base = pos_;
    } else if (whence == MPI_SEEK_END) {
        base = end_offset(fn);
    } else if (whence != MPI_SEEK_SET) {
        fail(MPI_ERR_ARG, "{}: whence {} is not MPI_SEEK_SET, MPI_SEEK_CUR or MPI_SEEK_END", fn, whence);
    }
    std::int64_t to = 0;
    if (__builtin_add_overflow(base, offset, &to) || to < 0) {
        fail(MPI_ERR_ARG, "{}: offset {} moves the file pointer to {} etypes, before the start of the view", fn,
             offset, to);
    }
    pos_ = to;
}

// ---------------------------------------------------- shared file pointer

std::int64_t File::shared_fetch_add(std::int64_t delta, const char* fn) {
    std::int64_t old = 0;
    const dtype::Datatype& t = offset_type();
    const rma::Window::Buf origin{&delta, 1, &t};
    const rma::Window::Buf result{&old, 1, &t};
    shared_->accumulate(origin, &result, rma::Window::Target{0, 0, 1, &t}, op::op_of(delta == 0 ? MPI_NO_OP : MPI_SUM, fn),
                        fn);
    return old;
}

void File::shared_set(std::int64_t value, const char* fn) {
    const dtype::Datatype& t = offset_type();
    shared_->accumulate(rma::Window::Buf{&value, 1, &t}, nullptr, rma::Window::Target{0, 0, 1, &t},
                        op::op_of(MPI_REPLACE, fn), fn);
}

std::int64_t File::shared_access(bool write, void* buf, std::int64_t count, const dtype::Datatype& type,
                                 const char* fn) {
    const std::int64_t bytes = access_bytes(write, 0, count, type, fn);
    const std::int64_t at = shared_fetch_add(bytes / etype_->size, fn);
    return transfer(write, times(at, etype_->size, "the shared file pointer", fn), buf, count, type, bytes, fn);
}

std::int64_t File::ordered(bool write, void* buf, std::int64_t count, const dtype::Datatype& type, const char* fn) {
    // One allgather: every member's verdict and etype count.
    int cls = 0;
    std::string text;
    std::int64_t etypes = 0;
    try {
        etypes = access_bytes(write, 0, count, type, fn) / etype_->size;
    } catch (const MpiError& e) {
        cls = e.error_class();
        text = e.what();
    }
    std::int64_t before = 0, total = 0;
    const std::vector<Verdict> all = verdicts(rt_, comm(), cls, text, etypes, 0, fn);
    for (int r = 0; r < size(); ++r) {
        if (r < rank()) before += all[static_cast<std::size_t>(r)].value;
        total += all[static_cast<std::size_t>(r)].value;
    }
    // Rank 0 moves the shared pointer past everyone's data, in rank order.
    std::int64_t base = 0;
    if (rank() == 0) base = shared_fetch_add(total, fn);
    coll::bcast(rt_.coll_selection(), comm().team(), &base, sizeof base, 0);
    return transfer(write, times(base + before, etype_->size, "the shared file pointer", fn), buf, count, type,
                    etypes * etype_->size, fn);
}

void File::seek_shared(std::int64_t offset, int whence, const char* fn) {
    collectively(rt_, comm(), offset, whence, "offset/whence", fn, [&] {
        no_split(fn);
        if (whence != MPI_SEEK_SET && whence != MPI_SEEK_CUR && whence != MPI_SEEK_END) {
            fail(MPI_ERR_ARG, "{}: whence {} is not MPI_SEEK_SET, MPI_SEEK_CUR or MPI_SEEK_END", fn, whence);
        }
    });
    // Rank 0 moves the pointer; the others learn whether that worked.
    std::int64_t to = -1;
    if (rank() == 0) {
        const std::int64_t base = whence == MPI_SEEK_SET ? 0 : whence == MPI_SEEK_CUR ? shared_fetch_add(0, fn)
                                                                                       : end_offset(fn);
        if (!__builtin_add_overflow(base, offset, &to) && to >= 0) {
            shared_set(to, fn);
        } else {
            to = -1;
        }
    }
    coll::bcast(rt_.coll_selection(), comm().team(), &to, sizeof to, 0);
    if (to < 0) {
        fail(MPI_ERR_ARG, "{}: offset {} moves the shared file pointer before the start of the view", fn, offset);
    }
}

std::int64_t File::position_shared(const char* fn) { return shared_fetch_add(0, fn); }

// ------------------------------------------------------ split collectives

namespace {
const char* split_name(File::Split s) {
    switch (s) {
    case File::Split::ReadAt:
        return "MPI_File_read_at_all_begin";
    case File::Split::WriteAt:
        return "MPI_File_write_at_all_begin";
    case File::Split::Read:
        return "MPI_File_read_all_begin";
    case File::Split::Write:
        return "MPI_File_write_all_begin";
    case File::Split::ReadOrdered:
        return "MPI_File_read_ordered_begin";
    case File::Split::WriteOrdered:
        return "MPI_File_write_ordered_begin";
    case File::Split::None:
        break;
    }
    return "nothing";
}
}  // namespace

void File::no_split(const char* fn) const {
    if (split_ != Split::None) {
        fail(MPI_ERR_OTHER, "{}: a split collective access ({}) is open on the file; MPI-3.1 13.4.5 allows no other "
             "collective access until its _end call", fn, split_name(split_));
    }
}

void File::split_begin(Split kind, const void* buf, std::int64_t bytes, const char* /*fn*/) {
    split_ = kind;
    split_buf_ = buf;
    split_bytes_ = bytes;
}

std::int64_t File::split_end(Split kind, const void* buf, const char* fn) {
    if (split_ != kind) {
        fail(MPI_ERR_OTHER, "{}: {} is open on the file, not the access this call ends", fn,
             split_ == Split::None ? "no split collective access" : split_name(split_));
    }
    if (buf != split_buf_) {
        fail(MPI_ERR_BUFFER, "{}: buf {} is not the buffer {} its _begin call took", fn, buf, split_buf_);
    }
    split_ = Split::None;
    return split_bytes_;
}

}  // namespace shmpi::io
