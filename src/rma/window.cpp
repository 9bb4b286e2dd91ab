// One-sided communication: see window.hpp.
#include "rma/window.hpp"

#include <fcntl.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <numeric>

#include "coll/select.hpp"
#include "dtype/reduce_kernels.hpp"
#include "errors.hpp"
#include "runtime.hpp"

namespace shmpi::rma {

namespace {

constexpr std::int64_t kPage = 4096;

std::int64_t round_up(std::int64_t v, std::int64_t to) { return (v + to - 1) / to * to; }

void check_assert(int assert, int allowed, const char* fn) {
    if ((assert & ~allowed) != 0) {
        fail(MPI_ERR_ASSERT, "{}: assert {:#x} has bits that are not asserts this call takes (allowed: {:#x})", fn,
             assert, allowed);
    }
}

/// Copies `bytes` bytes between `dense` and the runs `segs` of process
/// `pid` (a write when `write`), IOV_MAX runs per call.
void cross_copy(pid_t pid, bool write, std::byte* dense, const std::vector<dtype::Segment>& segs,
                std::vector<iovec>& remote, int target, const char* fn) {
    std::size_t i = 0;
    while (i < segs.size()) {
        const std::size_t k = std::min<std::size_t>(IOV_MAX, segs.size() - i);
        remote.clear();
        std::size_t total = 0;
        for (std::size_t j = 0; j < k; ++j) {
            remote.push_back(iovec{segs[i + j].address, static_cast<std::size_t>(segs[i + j].length)});
            total += static_cast<std::size_t>(segs[i + j].length);
        }
        iovec local{dense, total};
        const ssize_t moved = write ? process_vm_writev(pid, &local, 1, remote.data(), k, 0)
                                    : process_vm_readv(pid, &local, 1, remote.data(), k, 0);
        if (moved != static_cast<ssize_t>(total)) {
            const int err = errno;
            fail(MPI_ERR_RMA_RANGE, "{}: could not {} {} bytes at {} in rank {} of the window{}", fn,
                 write ? "write" : "read", total, segs[i].address, target,
                 moved < 0 ? fmt::format(" ({}{})", std::strerror(err),
                                         err == EFAULT ? ": that memory is not mapped there; in a dynamic window, "
                                                         "it must be attached with MPI_Win_attach"
                                                       : "")
                           : fmt::format(" (only {} bytes moved: part of that memory is not mapped there)", moved));
        }
        dense += total;
        i += k;
    }
}

/// The basic type every element of `t` is made of, or nullptr.
const dtype::Datatype* basic_of(const dtype::Datatype& t) { return t.predefined ? &t : t.basic; }

/// Leaves the process when the job is ending (another rank reports why).
void leave_if_aborting(shm::Transport& tr) {
    if (!tr.aborting()) return;
    std::fflush(stdout);
    std::fflush(stderr);
    _exit(1);
}

}  // namespace

Window* window_of(MPI_Win handle) {
    const auto v = reinterpret_cast<std::uintptr_t>(handle);
    if (v < 0x1000 || !HandleStorage::may_read_as<Window>(handle)) return nullptr;
    auto* w = reinterpret_cast<Window*>(handle);
    return w->magic() == Window::kMagic ? w : nullptr;
}

Window::Window(Runtime& rt, std::unique_ptr<Communicator> comm, Flavor flavor)
    : rt_(rt), comm_(std::move(comm)), flavor_(flavor) {
    const auto n = static_cast<std::size_t>(comm_->size());
    parts_.resize(n);
    locked_.assign(n, kUnlocked);
    in_access_.assign(n, 0);
    posts_seen_.assign(n, 0);
    dones_due_.assign(n, 0);
}

Window::~Window() {
    magic_ = 0;
    if (map_ != nullptr) munmap(map_, map_bytes_);
}

std::unique_ptr<Window> Window::create(Runtime& rt, std::unique_ptr<Communicator> comm, Flavor flavor, void* base,
                                       std::int64_t size, int disp_unit, bool noncontig, const char* fn) {
    std::unique_ptr<Window> w(new Window(rt, std::move(comm), flavor));
    Communicator& c = *w->comm_;
    const auto n = static_cast<std::size_t>(c.size());
    PartInfo mine{reinterpret_cast<std::uint64_t>(base), size, disp_unit,
                  reinterpret_cast<std::uint64_t>(&w->probe_)};
    std::vector<PartInfo> infos(n);
    coll::allgather(rt.coll_selection(), c.team(), &mine, sizeof mine, infos.data());

    // Where each part goes in the area (allocate flavours): back to back for
    // MPI_Win_allocate_shared (MPI-3.1 11.2.3: contiguous unless the
    // alloc_shared_noncontig hint says otherwise), else each on a line or,
    // with the hint, a page of its own.
    std::vector<std::int64_t> offsets(n, 0);
    std::int64_t data = 0;
    if (w->shared_memory()) {
        const std::int64_t align = flavor == Flavor::Shared ? (noncontig ? kPage : 1) : 64;
        for (std::size_t r = 0; r < n; ++r) {
            data = round_up(data, align);
            offsets[r] = data;
            // The same sizes on every rank (the allgather's): the same verdict.
            if (__builtin_add_overflow(data, infos[r].size, &data) || data > (std::int64_t{1} << 56)) {
                fail(MPI_ERR_NO_MEM, "{}: the window's parts add up to more bytes than a machine has", fn);
            }
        }
    }
    w->map_area(data, offsets, fn);
    for (std::size_t r = 0; r < n; ++r) {
        Part& p = w->parts_[r];
        p.size = infos[r].size;
        p.disp_unit = static_cast<int>(infos[r].disp_unit);
        p.remote = infos[r].address;
    }
    const auto me = static_cast<std::size_t>(c.rank());
    if (flavor == Flavor::Create) w->parts_[me].local = static_cast<std::byte*>(base);
    // A part of no bytes has no base (NULL), as MPICH reports it too.
    for (Part& p : w->parts_) {
        if (p.size == 0 && flavor != Flavor::Dynamic) p.local = nullptr;
    }
    if (flavor == Flavor::Create || flavor == Flavor::Dynamic) w->check_single_copy(infos, fn);
    return w;
}

void Window::map_area(std::int64_t data_bytes, const std::vector<std::int64_t>& offsets, const char* fn) {
    const auto n = static_cast<std::int64_t>(size());
    const std::int64_t control = round_up(n * static_cast<std::int64_t>(sizeof(TargetLine)) +
                                              2 * n * n * static_cast<std::int64_t>(sizeof(std::uint32_t)),
                                          kPage);
    const std::int64_t total = control + round_up(data_bytes, kPage);
    // Rank 0 creates the object under a fresh name (exclusively, mode 0600,
    // its pages reserved so that a full /dev/shm is an error here and not a
    // SIGBUS later) and tells the others the name or what failed; each maps
    // it; once all have, rank 0 removes the name.
    struct Named {
        std::int32_t err;
        char text[196];
    } named{};
    const coll::Selection& sel = rt_.coll_selection();
    const coll::Team& team = comm_->team();
    int fd = -1;
    if (rank() == 0) {
        std::uint64_t r = 0;
        if (getrandom(&r, sizeof r, 0) != static_cast<ssize_t>(sizeof r)) r ^= static_cast<std::uint64_t>(getpid());
        // mpirun's pid in the name: it removes what a job leaves (tools/launcher/main.cpp).
        const shm::Segment* seg = rt_.transport().segment();
        const std::int64_t launcher = seg != nullptr ? seg->header().launcher_pid : getpid();
        const std::string nm = fmt::format("/shmpi-{}-{}-win-{:016x}", getuid(), launcher, r);
        std::snprintf(named.text, sizeof named.text, "%s", nm.c_str());
        fd = shm_open(named.text, O_RDWR | O_CREAT | O_EXCL, 0600);
        int err = fd < 0 ? errno : 0;
        if (err == 0 && ftruncate(fd, total) != 0) err = errno;
        if (err == 0) err = posix_fallocate(fd, 0, total);
        if (err != 0) {
            if (fd >= 0) {
                close(fd);
                shm_unlink(named.text);
            }
            named.err = err;
            std::snprintf(named.text, sizeof named.text, "%s", std::strerror(err));
        }
    }
    coll::bcast(sel, team, &named, sizeof named, 0);
    if (named.err != 0) {
        fail(named.err == ENOSPC ? MPI_ERR_NO_MEM : MPI_ERR_OTHER,
             "{}: cannot make the window's shared memory of {} bytes in /dev/shm: {}{}", fn, total, named.text,
             named.err == ENOSPC ? " (/dev/shm is full or too small: see README, Troubleshooting)" : "");
    }
    std::int32_t ok = 1;
    std::string why;
    if (rank() != 0) fd = shm_open(named.text, O_RDWR, 0);
    struct stat st{};
    if (fd < 0) {
        why = fmt::format("cannot open {}: {}", named.text, std::strerror(errno));
    } else if (fstat(fd, &st) != 0 || st.st_uid != getuid() || (st.st_mode & 0077) != 0 || st.st_size != total) {
        why = fmt::format("{} is not the window's memory (owner, mode or size differ)", named.text);
    } else {
        void* m = mmap(nullptr, static_cast<std::size_t>(total), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (m == MAP_FAILED) {
            why = fmt::format("cannot map {} bytes: {}", total, std::strerror(errno));
        } else {
            map_ = m;
            map_bytes_ = static_cast<std::size_t>(total);
        }
    }
    if (fd >= 0) close(fd);
    if (!why.empty()) ok = 0;
    std::vector<std::int32_t> oks(static_cast<std::size_t>(n));
    coll::allgather(sel, team, &ok, sizeof ok, oks.data());
    if (rank() == 0) shm_unlink(named.text);
    const auto bad = std::find(oks.begin(), oks.end(), 0);
    if (bad != oks.end()) {
        fail(MPI_ERR_OTHER, "{}: rank {} of the window could not map its shared memory{}", fn, bad - oks.begin(),
             why.empty() ? "" : ": " + why);
    }
    auto* bytes = static_cast<std::byte*>(map_);
    lines_ = reinterpret_cast<TargetLine*>(bytes);
    post_ = reinterpret_cast<std::atomic<std::uint32_t>*>(bytes + n * static_cast<std::int64_t>(sizeof(TargetLine)));
    done_ = post_ + n * n;
    if (shared_memory()) {
        for (std::size_t r = 0; r < offsets.size(); ++r) parts_[r].local = bytes + control + offsets[r];
    }
}

void Window::check_single_copy(const std::vector<PartInfo>& infos, const char* fn) {
    const int n = size();
    std::int32_t ok = 1;
    std::string why;
    shm::Transport& tr = rt_.transport();
    if (n > 1) {
        const int next = (rank() + 1) % n;
        if (!tr.cma_enabled()) {
            ok = 0;
            why = "SHMPI_CMA=0, or an earlier copy was refused";
        } else {
            std::uint64_t seen = 0;
            iovec local{&seen, sizeof seen};
            iovec remote{reinterpret_cast<void*>(infos[static_cast<std::size_t>(next)].probe), sizeof seen};
            const ssize_t got =
                process_vm_readv(tr.peer_pid(comm_->world_rank(next)), &local, 1, &remote, 1, 0);
            if (got != static_cast<ssize_t>(sizeof seen) || seen != probe_) {
                ok = 0;
                why = got < 0 ? std::strerror(errno) : "the copy read something else";
            }
        }
    }
    std::vector<std::int32_t> oks(static_cast<std::size_t>(n));
    coll::allgather(rt_.coll_selection(), comm_->team(), &ok, sizeof ok, oks.data());
    const auto bad = std::find(oks.begin(), oks.end(), 0);
    if (bad != oks.end()) {
        fail(MPI_ERR_UNSUPPORTED_OPERATION,
             "{}: a window over the program's own memory needs copies between processes "
             "(process_vm_readv/writev), which rank {} of the window cannot make{}; MPI_Win_allocate and "
             "MPI_Win_allocate_shared work without them (see README, Troubleshooting)",
             fn, bad - oks.begin(), why.empty() ? "" : " (" + why + ")");
    }
}

void* Window::predefined_attribute(int key) {
    switch (key) {
        case MPI_WIN_BASE: return flavor_ == Flavor::Dynamic ? nullptr : base();
        case MPI_WIN_SIZE: size_attr_ = static_cast<MPI_Aint>(part_size()); return &size_attr_;
        case MPI_WIN_DISP_UNIT: disp_unit_attr_ = disp_unit(); return &disp_unit_attr_;
        case MPI_WIN_CREATE_FLAVOR: flavor_attr_ = static_cast<int>(flavor_); return &flavor_attr_;
        default: return &model_attr_;
    }
}

void Window::shared_query(int r, std::int64_t* sz, int* du, void** base) const {
    if (r == MPI_PROC_NULL) {
        // The part of the lowest rank with memory (MPI-3.1 11.2.3).
        r = 0;
        for (int i = 0; i < size(); ++i) {
            if (parts_[static_cast<std::size_t>(i)].size > 0) {
                r = i;
                break;
            }
        }
    }
    const Part& p = parts_[static_cast<std::size_t>(r)];
    *sz = p.size;
    *du = p.disp_unit;
    *base = p.local;
}

// ---------------------------------------------------------------- dynamic

void Window::attach(void* base, std::int64_t sz, const char* fn) {
    const auto a = reinterpret_cast<std::uintptr_t>(base);
    for (const auto& [b, s] : attached_) {
        if (a < b + static_cast<std::uintptr_t>(s) && b < a + static_cast<std::uintptr_t>(sz)) {
            fail(MPI_ERR_RMA_ATTACH, "{}: memory at {} ({} bytes) overlaps memory attached already at {:#x}", fn,
                 base, sz, b);
        }
    }
    attached_.emplace_back(a, sz);
}

void Window::detach(const void* base, const char* fn) {
    const auto a = reinterpret_cast<std::uintptr_t>(base);
    const auto it = std::find_if(attached_.begin(), attached_.end(), [&](const auto& e) { return e.first == a; });
    if (it == attached_.end()) {
        fail(MPI_ERR_RMA_ATTACH, "{}: no memory was attached at {} (MPI_Win_detach takes the base given to "
             "MPI_Win_attach)", fn, base);
    }
    attached_.erase(it);
}

// ---------------------------------------------------------- communication

bool Window::passive(int target) const {
    return lock_all_ || locked_[static_cast<std::size_t>(target)] != kUnlocked;
}

std::byte* Window::target_address(const Target& t, const char* fn) const {
    const auto r = static_cast<std::size_t>(t.rank);
    if (!fence_open_ && !passive(t.rank) && !(access_open_ && in_access_[r] != 0)) {
        fail(MPI_ERR_RMA_SYNC, "{}: no access epoch is open towards rank {} of the window (open one with "
             "MPI_Win_fence, MPI_Win_start, MPI_Win_lock or MPI_Win_lock_all)", fn, t.rank);
    }
    if (fence_open_) fence_ops_ = true;
    if (flavor_ == Flavor::Dynamic) return reinterpret_cast<std::byte*>(static_cast<std::uintptr_t>(t.disp));
    const Part& p = parts_[r];
    std::int64_t off = 0;
    if (t.disp < 0 || __builtin_mul_overflow(t.disp, static_cast<std::int64_t>(p.disp_unit), &off)) {
        fail(MPI_ERR_DISP, "{}: target_disp {} is invalid (it must be 0 or more; rank {}'s displacement unit is {})",
             fn, t.disp, t.rank, p.disp_unit);
    }
    if (t.count > 0 && t.type->size > 0) {
        const dtype::Datatype& ty = *t.type;
        const std::int64_t last = (t.count - 1) * ty.extent;
        const std::int64_t lo = off + std::min<std::int64_t>(0, last) + ty.true_lb;
        const std::int64_t hi = off + std::max<std::int64_t>(0, last) + ty.true_ub();
        if (lo < 0 || hi > p.size) {
            fail(MPI_ERR_RMA_RANGE, "{}: {} elements of {} at target_disp {} (byte {}) reach bytes {} to {} of rank "
                 "{}'s part of the window, which has {} bytes", fn, t.count, ty.name, t.disp, off, lo, hi, t.rank,
                 p.size);
        }
    }
    if (shared_memory()) return p.local + off;
    if (t.rank == rank()) return p.local + off;
    return reinterpret_cast<std::byte*>(static_cast<std::uintptr_t>(p.remote + static_cast<std::uint64_t>(off)));
}

void Window::read_target(const Target& t, std::byte* at, std::byte* dense, std::int64_t bytes, const char* fn) {
    if (shared_memory() || t.rank == rank()) {
        dtype::pack(*t.type, at, t.count, dense);
        return;
    }
    segs_.clear();
    dtype::segments(*t.type, at, t.count, 0, bytes, segs_);
    cross_copy(rt_.transport().peer_pid(comm_->world_rank(t.rank)), false, dense, segs_, iov_, t.rank, fn);
}

void Window::write_target(const Target& t, std::byte* at, const std::byte* dense, std::int64_t bytes,
                          const char* fn) {
    if (shared_memory() || t.rank == rank()) {
        dtype::unpack(*t.type, dense, bytes, at);
        return;
    }
    segs_.clear();
    dtype::segments(*t.type, at, t.count, 0, bytes, segs_);
    cross_copy(rt_.transport().peer_pid(comm_->world_rank(t.rank)), true, const_cast<std::byte*>(dense), segs_,
               iov_, t.rank, fn);
}

namespace {

/// The origin's data as dense bytes: its own memory when it is one run,
/// else packed into `scratch`.
const std::byte* dense_of(const Window::Buf& b, std::vector<std::byte>& scratch) {
    const dtype::Datatype& t = *b.type;
    if (t.is_run(b.count)) return static_cast<const std::byte*>(b.addr) + t.true_lb;
    scratch.resize(static_cast<std::size_t>(b.count * t.size));
    dtype::pack(t, b.addr, b.count, scratch.data());
    return scratch.data();
}

void same_bytes(std::int64_t a, std::int64_t b, const char* what, const char* fn) {
    if (a != b) {
        fail(MPI_ERR_TYPE, "{}: the {} holds {} bytes but the target buffer {}: their type signatures must match", fn,
             what, a, b);
    }
}

}  // namespace

void Window::put(const Buf& origin, const Target& t, const char* fn) {
    if (t.rank == MPI_PROC_NULL) return;
    std::byte* at = target_address(t, fn);
    const std::int64_t bytes = origin.count * origin.type->size;
    same_bytes(bytes, t.count * t.type->size, "origin buffer", fn);
    if (bytes == 0) return;
    if (shared_memory() || t.rank == rank()) {
        dtype::copy(*origin.type, origin.addr, origin.count, *t.type, at, t.count);
        return;
    }
    write_target(t, at, dense_of(origin, scratch_), bytes, fn);
}

void Window::get(const Buf& origin, const Target& t, const char* fn) {
    if (t.rank == MPI_PROC_NULL) return;
    std::byte* at = target_address(t, fn);
    const std::int64_t bytes = origin.count * origin.type->size;
    same_bytes(bytes, t.count * t.type->size, "origin buffer", fn);
    if (bytes == 0) return;
    auto* dst = const_cast<void*>(origin.addr);
    if (shared_memory() || t.rank == rank()) {
        dtype::copy(*t.type, at, t.count, *origin.type, dst, origin.count);
        return;
    }
    if (origin.type->is_run(origin.count)) {
        read_target(t, at, static_cast<std::byte*>(dst) + origin.type->true_lb, bytes, fn);
        return;
    }
    scratch_.resize(static_cast<std::size_t>(bytes));
    read_target(t, at, scratch_.data(), bytes, fn);
    dtype::unpack(*origin.type, scratch_.data(), bytes, dst);
}

void Window::accumulate(const Buf& origin, const Buf* result, const Target& t, const op::Op& op, const char* fn) {
    const bool no_op = op.one_sided_only && op.name == std::string_view("MPI_NO_OP");
    const bool replace = op.one_sided_only && !no_op;
    if (no_op && result == nullptr) {
        fail(MPI_ERR_OP, "{}: MPI_NO_OP is only for MPI_Get_accumulate and MPI_Fetch_and_op", fn);
    }
    // MPI-3.1 11.3.4: both types are made of one predefined type, the same.
    const dtype::Datatype* basic = basic_of(*t.type);
    if (basic == nullptr) {
        fail(MPI_ERR_TYPE, "{}: the target datatype {} mixes basic types; accumulates need one predefined type", fn,
             t.type->name);
    }
    auto check_side = [&](const Buf& b, const char* what) {
        const dtype::Datatype* ob = basic_of(*b.type);
        if (b.count * b.type->size > 0 && ob != basic) {
            fail(MPI_ERR_TYPE, "{}: the {} datatype {} is not made of {}, the target datatype's basic type", fn, what,
                 b.type->name, basic->name);
        }
    };
    if (!no_op) check_side(origin, "origin");
    if (result != nullptr) check_side(*result, "result");
    dtype::ReduceKernel kernel = nullptr;
    if (!op.one_sided_only) {
        kernel = dtype::reduce_kernel(op.kind, dtype::handle_of(*basic));
        if (kernel == nullptr) fail(MPI_ERR_OP, "{}: {} is not defined on {}", fn, op.name, basic->name);
    }
    if (t.rank == MPI_PROC_NULL) return;
    std::byte* at = target_address(t, fn);
    const std::int64_t bytes = t.count * t.type->size;
    if (!no_op) same_bytes(origin.count * origin.type->size, bytes, "origin buffer", fn);
    if (result != nullptr) same_bytes(result->count * result->type->size, bytes, "result buffer", fn);
    if (bytes == 0) return;
    const std::byte* in = no_op ? nullptr : dense_of(origin, scratch_);
    const std::int64_t elems = basic->size > 0 ? bytes / basic->size : 0;
    const bool direct = shared_memory() || t.rank == rank();
    const AccHold hold(*this, t.rank);
    if (direct && result == nullptr && kernel != nullptr && t.type->is_run(t.count)) {
        // In place: the common case of a contiguous target in shared memory.
        kernel(in, at + t.type->true_lb, elems, nullptr);
    } else if (result == nullptr && replace) {
        write_target(t, at, in, bytes, fn);
    } else {
        current_.resize(static_cast<std::size_t>(bytes));
        std::byte* cur = current_.data();
        read_target(t, at, cur, bytes, fn);
        if (result != nullptr) dtype::unpack(*result->type, cur, bytes, const_cast<void*>(result->addr));
        if (replace) {
            write_target(t, at, in, bytes, fn);
        } else if (kernel != nullptr) {
            kernel(in, cur, elems, nullptr);
            write_target(t, at, cur, bytes, fn);
        }
    }
}

void Window::compare_and_swap(const void* origin, const void* compare, void* result, const dtype::Datatype& type,
                              int target, std::int64_t disp, const char* fn) {
    // MPI-3.1 11.3.4: C and Fortran integers, logicals, the multi-language
    // types and MPI_BYTE: the types MPI_BAND or MPI_LAND is defined on.
    const MPI_Datatype h = dtype::handle_of(type);
    if (!type.predefined || type.size <= 0 || type.size > 16 ||
        (dtype::reduce_kernel(dtype::OpKind::Band, h) == nullptr &&
         dtype::reduce_kernel(dtype::OpKind::Land, h) == nullptr)) {
        fail(MPI_ERR_TYPE, "{}: datatype {} is not an integer, logical, multi-language or byte type, as "
             "MPI_Compare_and_swap needs (MPI-3.1 11.3.4)", fn, type.name);
    }
    if (target == MPI_PROC_NULL) return;
    const Target t{target, disp, 1, &type};
    std::byte* at = target_address(t, fn);
    std::byte cur[16];
    const std::int64_t bytes = type.size;
    const AccHold hold(*this, target);
    read_target(t, at, cur, bytes, fn);
    std::memcpy(result, cur, static_cast<std::size_t>(bytes));
    if (std::memcmp(cur, compare, static_cast<std::size_t>(bytes)) == 0) {
        write_target(t, at, static_cast<const std::byte*>(origin), bytes, fn);
    }
}

void Window::acc_lock(int target) {
    std::atomic<std::uint32_t>& m = line(target).acc;
    shm::Transport& tr = rt_.transport();
    for (unsigned i = 0;; ++i) {
        std::uint32_t expected = 0;
        // Acquire: what the previous holder wrote to the target is visible.
        if (m.load(std::memory_order_relaxed) == 0 &&
            m.compare_exchange_weak(expected, 1, std::memory_order_acquire, std::memory_order_relaxed)) {
            return;
        }
        // The holder never waits while it holds the mutex, but it may have
        // lost its CPU: spin briefly, then give ours away.
        if (i < 64 && !tr.crowded()) {
            __builtin_ia32_pause();
        } else {
            leave_if_aborting(tr);
            sched_yield();
        }
    }
}

void Window::acc_unlock(int target) {
    // Release: our writes to the target before the next holder's reads.
    line(target).acc.store(0, std::memory_order_release);
}

// --------------------------------------------------------- synchronisation

template <class Ready>
void Window::wait_for(Ready&& ready) {
    if (ready()) return;
    rt_.engine().wait_until(ready);
}

void Window::wake(int member) {
    if (member == rank()) return;
    rt_.transport().wake(comm_->world_rank(member));
}

void Window::wake_all() {
    for (int m = 0; m < size(); ++m) wake(m);
}

void Window::sync() { std::atomic_thread_fence(std::memory_order_seq_cst); }

void Window::fence(int assert, const char* fn) {
    check_assert(assert, MPI_MODE_NOSTORE | MPI_MODE_NOPUT | MPI_MODE_NOPRECEDE | MPI_MODE_NOSUCCEED, fn);
    if (locks_held_ > 0 || lock_all_ || access_open_ || exposure_open_) {
        fail(MPI_ERR_RMA_SYNC, "{}: a {} epoch is open on this window; MPI_Win_fence cannot end it", fn,
             access_open_ || exposure_open_ ? "post/start" : "lock");
    }
    // Our operations are complete; the barrier's release and acquire make
    // every member's writes visible to every other member after it.
    sync();
    coll::barrier(rt_.coll_selection(), comm_->team());
    fence_open_ = (assert & MPI_MODE_NOSUCCEED) == 0;
    fence_ops_ = false;
}

void Window::leave_fence_epoch(const char* fn) {
    if (!fence_open_) return;
    if (fence_ops_) {
        fail(MPI_ERR_RMA_SYNC, "{}: operations were issued in the epoch of the last MPI_Win_fence; end it with "
             "MPI_Win_fence before another kind of epoch", fn);
    }
    fence_open_ = false;
}

void Window::post(const std::vector<int>& members, int assert, const char* fn) {
    check_assert(assert, MPI_MODE_NOCHECK | MPI_MODE_NOSTORE | MPI_MODE_NOPUT, fn);
    if (exposure_open_) fail(MPI_ERR_RMA_SYNC, "{}: an exposure epoch is open already (MPI_Win_post without "
                             "MPI_Win_wait)", fn);
    exposure_ = members;
    exposure_open_ = true;
    exposure_nocheck_ = (assert & MPI_MODE_NOCHECK) != 0;
    sync();  // our own writes to the window before any origin's accesses
    for (const int o : members) {
        ++dones_due_[static_cast<std::size_t>(o)];
        if (!exposure_nocheck_) {
            // Release: the origin that sees the post sees our writes.
            post_word(rank(), o).fetch_add(1, std::memory_order_release);
            wake(o);
        }
    }
}

void Window::start(const std::vector<int>& members, int assert, const char* fn) {
    check_assert(assert, MPI_MODE_NOCHECK, fn);
    if (access_open_) fail(MPI_ERR_RMA_SYNC, "{}: an access epoch is open already (MPI_Win_start without "
                           "MPI_Win_complete)", fn);
    if (locks_held_ > 0 || lock_all_) {
        fail(MPI_ERR_RMA_SYNC, "{}: this process holds a lock on the window (a passive-target epoch)", fn);
    }
    leave_fence_epoch(fn);
    if ((assert & MPI_MODE_NOCHECK) == 0) {
        for (const int t : members) {
            std::uint32_t& seen = posts_seen_[static_cast<std::size_t>(t)];
            std::atomic<std::uint32_t>& w = post_word(t, rank());
            // Acquire: pairs with the target's post; its writes are visible.
            wait_for([&] { return static_cast<std::int32_t>(w.load(std::memory_order_acquire) - seen) > 0; });
            ++seen;
        }
    }
    access_ = members;
    for (const int t : members) in_access_[static_cast<std::size_t>(t)] = 1;
    access_open_ = true;
}

void Window::complete(const char* fn) {
    if (!access_open_) fail(MPI_ERR_RMA_SYNC, "{}: no access epoch is open (MPI_Win_complete without "
                            "MPI_Win_start)", fn);
    sync();
    for (const int t : access_) {
        // Release: the target that sees our completion sees our writes.
        done_word(t, rank()).fetch_add(1, std::memory_order_release);
        wake(t);
        in_access_[static_cast<std::size_t>(t)] = 0;
    }
    access_.clear();
    access_open_ = false;
}

bool Window::exposure_completed() const {
    for (const int o : exposure_) {
        // Acquire: pairs with the origin's complete; its writes are visible.
        if (static_cast<std::int32_t>(done_word(rank(), o).load(std::memory_order_acquire) -
                                      dones_due_[static_cast<std::size_t>(o)]) < 0) {
            return false;
        }
    }
    return true;
}

bool Window::test(const char* fn) {
    if (!exposure_open_) fail(MPI_ERR_RMA_SYNC, "{}: no exposure epoch is open (MPI_Win_post first)", fn);
    if (!exposure_completed()) return false;
    exposure_.clear();
    exposure_open_ = false;
    return true;
}

void Window::wait(const char* fn) {
    if (!exposure_open_) fail(MPI_ERR_RMA_SYNC, "{}: no exposure epoch is open (MPI_Win_post first)", fn);
    wait_for([&] { return exposure_completed(); });
    exposure_.clear();
    exposure_open_ = false;
}

void Window::take_lock(int target, bool exclusive) {
    TargetLine& l = line(target);
    auto try_take = [&] {
        std::int32_t v = l.lock.load(std::memory_order_relaxed);
        if (exclusive) {
            // Acquire: the previous holders' writes to the target are visible.
            return v == 0 && l.lock.compare_exchange_strong(v, TargetLine::kExclusive, std::memory_order_acquire,
                                                             std::memory_order_relaxed);
        }
        while (v >= 0) {
            if (l.lock.compare_exchange_weak(v, v + 1, std::memory_order_acquire, std::memory_order_relaxed)) {
                return true;
            }
        }
        return false;
    };
    if (try_take()) return;
    l.waiters.fetch_add(1, std::memory_order_relaxed);
    // Our count before our next look at the lock word, the unlocker's store
    // to it before its look at the count (give_lock): one of us sees the other.
    std::atomic_thread_fence(std::memory_order_seq_cst);
    wait_for(try_take);
    l.waiters.fetch_sub(1, std::memory_order_relaxed);
}

void Window::give_lock(int target, bool exclusive) {
    TargetLine& l = line(target);
    // Release: our writes to the target before the next holder's reads.
    if (exclusive) {
        l.lock.store(0, std::memory_order_release);
    } else {
        l.lock.fetch_sub(1, std::memory_order_release);
    }
    std::atomic_thread_fence(std::memory_order_seq_cst);  // see take_lock
    if (l.waiters.load(std::memory_order_relaxed) != 0) wake_all();
}

void Window::lock(int lock_type, int target, int assert, const char* fn) {
    if (lock_type != MPI_LOCK_EXCLUSIVE && lock_type != MPI_LOCK_SHARED) {
        fail(MPI_ERR_LOCKTYPE, "{}: lock_type {} is neither MPI_LOCK_EXCLUSIVE nor MPI_LOCK_SHARED", fn, lock_type);
    }
    check_assert(assert, MPI_MODE_NOCHECK, fn);
    if (target == MPI_PROC_NULL) return;
    std::uint8_t& state = locked_[static_cast<std::size_t>(target)];
    if (lock_all_ || state != kUnlocked) {
        fail(MPI_ERR_RMA_SYNC, "{}: this process holds a lock on rank {} of the window already{}", fn, target,
             lock_all_ ? " (MPI_Win_lock_all)" : "");
    }
    if (access_open_) fail(MPI_ERR_RMA_SYNC, "{}: an MPI_Win_start access epoch is open on the window", fn);
    leave_fence_epoch(fn);
    const bool exclusive = lock_type == MPI_LOCK_EXCLUSIVE;
    if ((assert & MPI_MODE_NOCHECK) != 0) {
        state = kNoCheck;
    } else {
        take_lock(target, exclusive);
        state = exclusive ? kExclusive : kShared;
    }
    ++locks_held_;
}

void Window::unlock(int target, const char* fn) {
    if (target == MPI_PROC_NULL) return;
    std::uint8_t& state = locked_[static_cast<std::size_t>(target)];
    if (state == kUnlocked) {
        fail(MPI_ERR_RMA_SYNC, "{}: this process holds no lock on rank {} of the window{}", fn, target,
             lock_all_ ? " (MPI_Win_lock_all's ends with MPI_Win_unlock_all)" : "");
    }
    sync();
    if (state != kNoCheck) give_lock(target, state == kExclusive);
    state = kUnlocked;
    --locks_held_;
}

void Window::lock_all(int assert, const char* fn) {
    check_assert(assert, MPI_MODE_NOCHECK, fn);
    if (lock_all_ || locks_held_ > 0) {
        fail(MPI_ERR_RMA_SYNC, "{}: this process holds {} on the window already", fn,
             lock_all_ ? "MPI_Win_lock_all's locks" : "a lock");
    }
    if (access_open_) fail(MPI_ERR_RMA_SYNC, "{}: an MPI_Win_start access epoch is open on the window", fn);
    leave_fence_epoch(fn);
    lock_all_nocheck_ = (assert & MPI_MODE_NOCHECK) != 0;
    if (!lock_all_nocheck_) {
        for (int t = 0; t < size(); ++t) take_lock(t, false);
    }
    lock_all_ = true;
}

void Window::unlock_all(const char* fn) {
    if (!lock_all_) fail(MPI_ERR_RMA_SYNC, "{}: MPI_Win_lock_all was not called on this window", fn);
    sync();
    if (!lock_all_nocheck_) {
        for (int t = 0; t < size(); ++t) give_lock(t, false);
    }
    lock_all_ = false;
}

void Window::flush(int target, const char* fn) {
    if (target == MPI_PROC_NULL) return;
    const bool open = target < 0 ? (lock_all_ || locks_held_ > 0) : passive(target);
    if (!open) {
        fail(MPI_ERR_RMA_SYNC, "{}: no passive-target epoch is open{} (MPI_Win_lock or MPI_Win_lock_all first)", fn,
             target < 0 ? "" : fmt::format(" towards rank {}", target));
    }
    // Every operation completed in its call: what is left is the order.
    sync();
}

void Window::free(const char* fn) {
    if (locks_held_ > 0 || lock_all_ || access_open_ || exposure_open_) {
        fail(MPI_ERR_RMA_SYNC, "{}: an epoch is open on this window ({}); end it before MPI_Win_free", fn,
             access_open_   ? "MPI_Win_start without MPI_Win_complete"
             : exposure_open_ ? "MPI_Win_post without MPI_Win_wait"
                              : "a lock is held");
    }
    sync();
    coll::barrier(rt_.coll_selection(), comm_->team());
}

}  // namespace shmpi::rma
