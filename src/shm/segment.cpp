#include "shm/segment.hpp"
#include "arith.hpp"
#include "shm/settings.hpp"

#include <fcntl.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <boost/interprocess/shared_memory_object.hpp>
#include <algorithm>
#include <cmath>
#include <cassert>
#include <cerrno>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <fstream>
#include <iterator>
#include <new>
#include <string>
#include <utility>
#include <vector>

namespace shmpi::shm {
namespace bip = boost::interprocess;

namespace {

std::uint64_t random64() {
    std::uint64_t r = 0;
    if (getrandom(&r, sizeof r, 0) != static_cast<ssize_t>(sizeof r)) {
        throw SegmentError(fmt::format("shmpi: getrandom failed while naming the segment: {}",
                                       std::strerror(errno)));
    }
    return r;
}

/// `name` from the environment, a number in 1..`max` (0..`max` with
/// `zero_ok`), or `fallback` when unset.
std::uint32_t env_u32(const char* name, std::uint32_t fallback, bool zero_ok = false,
                      std::uint32_t max = 1u << 24) {
    return static_cast<std::uint32_t>(integer_setting(name, zero_ok ? 0 : 1, max, kReadByLauncher).value_or(fallback));
}

/// The size and the free bytes of /dev/shm, or -1 each when statvfs cannot
/// tell.
struct DevShm {
    double total = -1;
    double free = -1;
};
DevShm dev_shm() {
    struct statvfs vfs {};
    if (statvfs("/dev/shm", &vfs) != 0) return {};
    const auto block = static_cast<double>(vfs.f_frsize);
    return {static_cast<double>(vfs.f_blocks) * block, static_cast<double>(vfs.f_bavail) * block};
}
double dev_shm_free() { return dev_shm().free; }

/// "; NAME=VALUE ... set the segment's size: a likely cause" for those of
/// kGeometrySettings that are set, else "".
std::string geometry_settings_note() {
    std::vector<std::string> set;
    for (const char* name : kGeometrySettings) {
        if (const char* v = std::getenv(name); v != nullptr && *v != '\0') set.push_back(fmt::format("{}={}", name, v));
    }
    if (set.empty()) return "";
    return fmt::format("; {} set{} the segment's size: a likely cause", fmt::join(set, ", "),
                       set.size() == 1 ? "s" : "");
}

/// The message for a /dev/shm without room: how much is free, how much the
/// job needs, and the ways to make room, with a size that would hold the
/// segment besides what /dev/shm holds now (whole GiB, 1 at least).
std::string no_room_message(double avail_bytes, std::uint32_t nranks, std::size_t size) {
    const DevShm d = dev_shm();
    const double used = d.total >= 0 && d.free >= 0 ? d.total - d.free : 0;
    const double gib = std::max(1.0, std::ceil((used + static_cast<double>(size)) / (1024.0 * 1048576.0)));
    return fmt::format(
        "shmpi: /dev/shm has {:.1f} MiB free but the segment for {} ranks needs {:.1f} MiB; "
        "free space there (stale files: ls -l /dev/shm) or enlarge it "
        "(mount -o remount,size={:.0f}G /dev/shm; docker run --shm-size={:.0f}g), or run fewer ranks{}",
        avail_bytes / 1048576.0, nranks, static_cast<double>(size) / 1048576.0, gib, gib, geometry_settings_note());
}

/// The first line of `path`, or "" when it cannot be read.
std::string first_line(const std::string& path) {
    std::ifstream in(path);
    std::string line;
    std::getline(in, line);
    return line;
}

/// Room left in this process's memory cgroup, in bytes; -1 when there is
/// no limit or it cannot be read.
double cgroup_room() {
    std::ifstream in("/proc/self/cgroup");
    std::string line;
    while (std::getline(in, line)) {
        std::string limit_file;
        std::string usage_file;
        if (line.starts_with("0::")) {  // cgroup v2
            const std::string dir = "/sys/fs/cgroup" + line.substr(3);
            limit_file = dir + "/memory.max";
            usage_file = dir + "/memory.current";
        } else if (const auto at = line.find(":memory:"); at != std::string::npos) {  // v1
            const std::string dir = "/sys/fs/cgroup/memory" + line.substr(at + 8);
            limit_file = dir + "/memory.limit_in_bytes";
            usage_file = dir + "/memory.usage_in_bytes";
        } else {
            continue;
        }
        const std::string limit = first_line(limit_file);
        const std::string usage = first_line(usage_file);
        if (limit.empty() || usage.empty() || limit == "max") continue;
        const double l = std::strtod(limit.c_str(), nullptr);
        const double u = std::strtod(usage.c_str(), nullptr);
        if (l <= 0 || l >= 0x1p62) continue;  // v1 writes "no limit" as a huge number
        return l > u ? l - u : 0;
    }
    return -1;
}

/// The message for a job that needs more memory than there is.
std::string no_memory_message(double avail_bytes, std::uint32_t nranks, std::size_t segment,
                              std::size_t private_rings) {
    return fmt::format(
        "shmpi: the segment for {} ranks needs {:.1f} MiB of memory (and each rank {:.1f} MiB more for "
        "its ring to itself), but only {:.1f} MiB are available (MemAvailable and SwapFree, or the "
        "memory cgroup's limit); run fewer ranks, or lower SHMPI_RING_CELLS, SHMPI_CELL_BYTES, "
        "SHMPI_STREAM_BYTES, SHMPI_COLL_CELL_BYTES or SHMPI_COLL_WIDE_BYTES{}",
        nranks, static_cast<double>(segment) / 1048576.0,
        static_cast<double>(private_rings) / nranks / 1048576.0, avail_bytes / 1048576.0, geometry_settings_note());
}

/// Maps `size` bytes of `fd` shared, read-write.  Throws with strerror.
void* map_fd(int fd, std::size_t size, const char* who) {
    void* p = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) {
        throw SegmentError(fmt::format("shmpi: {}: cannot map the {}-byte segment: {}", who, size,
                                       std::strerror(errno)));
    }
    return p;
}

}  // namespace

double meminfo_available(std::string_view meminfo) {
    double total = 0;
    for (const std::string_view key : {"MemAvailable:", "SwapFree:"}) {
        const std::size_t at = meminfo.find(key);
        if (at == std::string_view::npos) return -1;
        const std::string rest(meminfo.substr(at + key.size(), 32));
        total += std::strtod(rest.c_str(), nullptr) * 1024.0;  // the file counts in kB
    }
    return total;
}

double memory_available() {
    std::ifstream in("/proc/meminfo");
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    double avail = meminfo_available(text);
    if (const double room = cgroup_room(); room >= 0 && (avail < 0 || room < avail)) avail = room;
    return avail;
}

Geometry Geometry::for_ranks(std::uint32_t nranks, std::uint32_t cpus) {
    Geometry g;
    g.nranks = nranks;
    // Point-to-point cells: a message that fits one cell takes the engine's
    // one-cell path, so a cell holds 4 KiB of payload after its sequence
    // word and wire header (4096 + 128 bytes).  Measured with bench/pingpong
    // on the 2-CPU VM (docs/BENCHMARKS.md): 2 KiB to 16 KiB messages took
    // 25-35% less time than with the 2 KiB cells used before, 8 B as long.
    // 16 cells per ring from 9 ranks, and smaller cells beyond 16, keep the
    // N * N rings within a few tens of MiB.
    if (nranks <= 8) {
        g.ring_cells = 32;
        g.cell_bytes = 4224;
    } else if (nranks <= 16) {
        g.ring_cells = 16;
        g.cell_bytes = 4224;
    } else if (nranks <= 32) {
        g.ring_cells = 16;
        g.cell_bytes = 1024;
    } else {
        g.ring_cells = 8;
        g.cell_bytes = 1024;
    }
    // Collective cells: 128 KiB per rank (8 slots of 16 KiB) keeps the
    // world's region at 2 MiB for 16 ranks; larger jobs get less per rank
    // so /dev/shm use stays modest.
    if (nranks <= 16) {
        g.coll_cell_bytes = 131072;
    } else if (nranks <= 64) {
        g.coll_cell_bytes = 65536;
    } else if (nranks <= 256) {
        g.coll_cell_bytes = 32768;
    } else {
        g.coll_cell_bytes = 16384;
    }
    // Stream buffers: 1 MiB per rank up to 16 ranks.  Measured with
    // bench/dtype_sendrecv (docs/BENCHMARKS.md): once a message outgrows the
    // buffer, the sender writes into lines the receiver has only just read,
    // and each of those writes must first take the line back from the
    // receiver's cache; with 256 KiB a 1 MiB vector message moved at 9.5 GB/s,
    // with 1 MiB at 24 GB/s.  Larger jobs get less, so /dev/shm use stays
    // modest (16 MiB of buffers at 64 ranks).
    if (nranks <= 16) {
        g.stream_bytes = 1u << 20;
    } else if (nranks <= 64) {
        g.stream_bytes = 256u << 10;
    } else if (nranks <= 256) {
        g.stream_bytes = 128u << 10;
    } else {
        g.stream_bytes = 64u << 10;
    }
    // Wide cells for MPI_COMM_WORLD's broadcasts, gathers and all-to-alls
    // when ranks outnumber the CPUs: a root whose message outgrows its
    // cells waits for every reader before it reuses a slot, a member whose
    // blocks outgrow them waits for the readers of its buffer, and there
    // each wait is a context switch.  With 4 MiB a rank (eight slots of
    // 512 KiB) a Bcast of up to 4 MiB fits whole and the root leaves at
    // once, and so does the owner of such blocks.  On the 2-CPU development
    // VMs (docs/BENCHMARKS.md): 1 MiB a rank made Bcasts of 192 KiB to
    // 1 MiB take 0.35-0.77 of the time at 4 to 16 ranks, Gathers and
    // Allgathers of 128 KiB to 1 MiB blocks 0.14-0.90, Alltoalls 0.55-0.89
    // (sessions 47 and 48); 4 MiB against 1 MiB, 2 and 4 MiB messages at 8
    // and 16 ranks: Bcasts 0.45-0.67, Gathers 0.14-0.40, Allgathers
    // 0.46-0.59 (session 56), sizes up to 1 MiB unchanged.  The price is
    // the pages: 3 MiB more a rank to reserve at launch (4 ranks: 18 to
    // 25 ms) and to hold.  Only the world's region (Scatter, Allreduce and
    // the pool's regions keep their cells), only up to 16 ranks (64 MiB at
    // most), and optional: where /dev/shm or memory cannot hold them,
    // create() shrinks them (fit_room()).
    if (cpus > 0 && nranks > cpus && nranks <= 16) g.wide_cell_bytes = 4u << 20;
    g.ring_cells = env_u32("SHMPI_RING_CELLS", g.ring_cells);
    g.cell_bytes = env_u32("SHMPI_CELL_BYTES", g.cell_bytes);
    g.coll_cell_bytes = env_u32("SHMPI_COLL_CELL_BYTES", g.coll_cell_bytes);
    // The wide cells a user sets are theirs: create() shrinks only ours.
    if (const auto wide = integer_setting("SHMPI_COLL_WIDE_BYTES", 0, 1u << 24, kReadByLauncher)) {
        g.wide_cell_bytes = static_cast<std::uint32_t>(*wide);
    } else {
        g.wide_cells_optional = g.wide_cell_bytes > 0;
    }
    g.ring_summary = nranks > kRingSummaryRanks ? 1 : 0;
    if (const auto summary = integer_setting("SHMPI_RING_SUMMARY", 0, 1, kReadByLauncher)) {
        g.ring_summary = static_cast<std::uint32_t>(*summary);
    }
    g.stream_bytes = env_u32("SHMPI_STREAM_BYTES", g.stream_bytes, true);
    g.pool_regions = env_u32("SHMPI_COLL_REGIONS", g.pool_regions, true, kMaxPoolRegions);
    if ((g.ring_cells & (g.ring_cells - 1)) != 0) {
        throw SegmentError(
            fmt::format("shmpi: SHMPI_RING_CELLS={} must be a power of two", g.ring_cells));
    }
    if (g.cell_bytes % kLine != 0 || g.cell_bytes < 2 * kLine) {
        throw SegmentError(fmt::format(
            "shmpi: SHMPI_CELL_BYTES={} must be a multiple of {} and at least {}", g.cell_bytes,
            kLine, 2 * kLine));
    }
    if (g.coll_cell_bytes % 4096 != 0) {
        throw SegmentError(fmt::format(
            "shmpi: SHMPI_COLL_CELL_BYTES={} must be a multiple of 4096",
            g.coll_cell_bytes));
    }
    if (g.wide_cell_bytes % 4096 != 0) {
        throw SegmentError(fmt::format(
            "shmpi: SHMPI_COLL_WIDE_BYTES={} must be a multiple of 4096 (0: no wide cells)",
            g.wide_cell_bytes));
    }
    if (g.stream_bytes % 4096 != 0) {
        throw SegmentError(fmt::format(
            "shmpi: SHMPI_STREAM_BYTES={} must be a multiple of 4096 (0 turns streamed sends off)",
            g.stream_bytes));
    }
    return g;
}

std::size_t Geometry::ranks_offset() const { return round_up(sizeof(SegmentHeader), kLine); }

std::size_t Geometry::rings_offset() const {
    return round_up(ranks_offset() + std::size_t{nranks} * sizeof(RankSlot), 4096);
}

std::size_t Geometry::ring_stride() const {
    return round_up(ring_bytes(ring_cells, cell_bytes), kLine);
}

std::size_t Geometry::heads_offset() const {
    return round_up(rings_offset() + std::size_t{nranks} * nranks * ring_stride(), 4096);
}

std::size_t Geometry::heads_row() const { return round_up(std::size_t{nranks} * sizeof(std::uint64_t), kLine); }

std::size_t Geometry::coll_offset() const {
    return round_up(heads_offset() + std::size_t{nranks} * heads_row(), 4096);
}

std::size_t Geometry::coll_cells_offset() const {
    return round_up(coll_offset() + std::size_t{nranks} * sizeof(CollMember), 4096);
}

std::size_t Geometry::stream_offset() const {
    return round_up(coll_cells_offset() + std::size_t{nranks} * world_cell_stride(), 4096);
}

std::size_t Geometry::pool_offset() const {
    return round_up(stream_offset() + std::size_t{nranks} * stream_bytes, 4096);
}

std::size_t Geometry::pool_regions_offset() const {
    return round_up(pool_offset() + std::size_t{pool_regions} * sizeof(PoolEntry), 4096);
}

std::size_t Geometry::pool_region_cells() const {
    return round_up(std::size_t{nranks} * sizeof(CollMember), 4096);
}

std::size_t Geometry::pool_region_stride() const {
    return pool_region_cells() + std::size_t{nranks} * coll_cell_bytes;
}

std::size_t Geometry::total_bytes() const {
    return pool_regions_offset() + std::size_t{pool_regions} * pool_region_stride();
}

bool Geometry::fits(double shm_free, double memory) const {
    const auto size = static_cast<double>(total_bytes());
    return (shm_free < 0 || size <= shm_free) &&
           (memory < 0 || size + static_cast<double>(private_ring_bytes()) <= memory);
}

Geometry Geometry::fit_room(double shm_free, double memory) const {
    Geometry g = *this;
    if (!wide_cells_optional) return g;
    for (const std::uint32_t wide : {wide_cell_bytes, std::min(wide_cell_bytes, 1u << 20), 0u}) {
        g.wide_cell_bytes = wide;
        if (g.fits(shm_free, memory)) break;
    }
    return g;
}

Layout check_header(const SegmentHeader& h, std::size_t file_size, std::uint32_t expect_nranks,
                    const char* who) {
    // 1. Fields that are not offsets: each within the range the launcher can
    //    produce, so that the arithmetic of step 2 cannot overflow.
    auto refuse = [&](const char* field, std::uint64_t value, const char* must) {
        return SegmentError(fmt::format(
            "shmpi: {}: the segment header's {} is {} (must be {}); refusing the segment", who,
            field, value, must));
    };
    constexpr std::uint32_t kMaxRanks = 1u << 20;  // as the launcher and env_number allow
    constexpr std::uint32_t kMaxCount = 1u << 24;  // as env_u32 allows
    if (h.nranks == 0 || h.nranks > kMaxRanks || h.nranks != expect_nranks) {
        throw SegmentError(fmt::format(
            "shmpi: {}: the segment header says {} ranks but {}={}; refusing the segment", who,
            h.nranks, kEnvSize, expect_nranks));
    }
    if (h.size != file_size) {
        throw SegmentError(fmt::format(
            "shmpi: {}: the segment header says {} bytes but the file has {}; refusing the segment",
            who, h.size, file_size));
    }
    if (h.ring_cells == 0 || h.ring_cells > kMaxCount || (h.ring_cells & (h.ring_cells - 1)) != 0) {
        throw refuse("ring_cells", h.ring_cells, "a power of two up to 2^24");
    }
    if (h.cell_bytes % kLine != 0 || h.cell_bytes < 2 * kLine || h.cell_bytes > kMaxCount) {
        throw refuse("cell_bytes", h.cell_bytes, "a multiple of 128 in 256..2^24");
    }
    if (h.coll_cell_bytes % 4096 != 0 || h.coll_cell_bytes == 0 || h.coll_cell_bytes > kMaxCount) {
        throw refuse("coll_cell_bytes", h.coll_cell_bytes, "a multiple of 4096 in 4096..2^24");
    }
    if (h.wide_cell_bytes % 4096 != 0 || h.wide_cell_bytes > kMaxCount) {
        throw refuse("wide_cell_bytes", h.wide_cell_bytes, "a multiple of 4096 in 0..2^24");
    }
    if (h.stream_bytes % 4096 != 0 || h.stream_bytes > kMaxCount) {
        throw refuse("stream_bytes", h.stream_bytes, "a multiple of 4096 in 0..2^24");
    }
    if (h.pool_regions > kMaxPoolRegions) {
        throw refuse("pool_regions", h.pool_regions, "at most 64");
    }
    if (h.ring_summary > 1) throw refuse("ring_summary", h.ring_summary, "0 or 1");

    // 2. The rings are the big product (nranks^2 * stride): bound it by the
    //    file before Geometry multiplies, so no sum below can wrap around.
    Geometry g;
    g.nranks = h.nranks;
    g.ring_cells = h.ring_cells;
    g.cell_bytes = h.cell_bytes;
    g.coll_cell_bytes = h.coll_cell_bytes;
    g.wide_cell_bytes = h.wide_cell_bytes;
    g.stream_bytes = h.stream_bytes;
    g.pool_regions = h.pool_regions;
    g.ring_summary = h.ring_summary;
    const std::size_t pairs = std::size_t{h.nranks} * h.nranks;  // <= 2^40
    if (pairs > file_size / g.ring_stride()) {
        throw SegmentError(fmt::format(
            "shmpi: {}: the segment header's {} ranks of {}-cell rings do not fit in {} bytes; "
            "refusing the segment", who, h.nranks, h.ring_cells, file_size));
    }

    // 3. Every offset must be the one the sizes imply, and the total the file.
    auto expect = [&](const char* field, std::uint64_t value, std::uint64_t wanted) {
        if (value != wanted) {
            throw SegmentError(fmt::format(
                "shmpi: {}: the segment header's {} is {} (the layout implies {}); refusing the "
                "segment", who, field, value, wanted));
        }
    };
    expect("ranks_offset", h.ranks_offset, g.ranks_offset());
    expect("rings_offset", h.rings_offset, g.rings_offset());
    expect("ring_stride", h.ring_stride, g.ring_stride());
    expect("heads_offset", h.heads_offset, g.heads_offset());
    expect("coll_offset", h.coll_offset, g.coll_offset());
    expect("coll_cells_offset", h.coll_cells_offset, g.coll_cells_offset());
    expect("stream_offset", h.stream_offset, g.stream_offset());
    expect("pool_offset", h.pool_offset, g.pool_offset());
    expect("pool_regions_offset", h.pool_regions_offset, g.pool_regions_offset());
    expect("pool_region_stride", h.pool_region_stride, g.pool_region_stride());
    expect("size", h.size, g.total_bytes());

    return Layout(g);
}

Layout::Layout(const Geometry& g)
    : geometry(g),
      ranks_offset(g.ranks_offset()),
      rings_offset(g.rings_offset()),
      ring_stride(g.ring_stride()),
      heads_offset(g.heads_offset()),
      heads_row(g.heads_row()),
      coll_offset(g.coll_offset()),
      coll_cells_offset(g.coll_cells_offset()),
      stream_offset(g.stream_offset()),
      pool_offset(g.pool_offset()),
      pool_regions_offset(g.pool_regions_offset()),
      pool_region_stride(g.pool_region_stride()),
      pool_region_cells(g.pool_region_cells()),
      size(g.total_bytes()) {}

Segment Segment::create(const Geometry& wanted, std::int64_t launcher_pid, Name name,
                        const std::function<bool()>& stop) {
    // 1. Room in /dev/shm.  tmpfs fills pages lazily, so without this check a
    //    full /dev/shm would show up later as SIGBUS in some rank.
    //    Room in memory: /dev/shm is usually as large as RAM, and step 3
    //    takes every page of the segment at once, so a segment larger than
    //    the memory left would set off the OOM killer (which picks any
    //    process of the machine).  Each rank also allocates a private ring
    //    to itself of a ring's size.
    //    Wide cells that only speed up large collectives give way first
    //    (fit_room()); mpirun tells the user (layout().geometry).
    const double shm_free = dev_shm_free();
    const double memory = memory_available();
    const Geometry g = wanted.fit_room(shm_free, memory);
    const std::size_t size = g.total_bytes();
    if (!g.fits(shm_free, -1)) throw SegmentError(no_room_message(shm_free, g.nranks, size));
    if (!g.fits(-1, memory)) throw SegmentError(no_memory_message(memory, g.nranks, size, g.private_ring_bytes()));

    // 2. Exclusive creation under an unguessable name, mode 0600.
    Segment seg;
    seg.name_ = fmt::format("shmpi-{}-{}-{:016x}", getuid(), launcher_pid, random64());
    const std::string shown = seg.name_;  // for messages, after a Name::Drop
    try {
        bip::shared_memory_object shm(bip::create_only, seg.name_.c_str(), bip::read_write,
                                      bip::permissions(0600));
        // Keep our own descriptor: the Boost object closes its one when it goes.
        seg.fd_ = fcntl(shm.get_mapping_handle().handle, F_DUPFD_CLOEXEC, 3);
        if (seg.fd_ < 0) {
            const int err = errno;
            bip::shared_memory_object::remove(seg.name_.c_str());
            throw SegmentError(fmt::format("shmpi: cannot duplicate the segment descriptor: {}",
                                           std::strerror(err)));
        }
        if (name == Name::Drop) seg.unlink();
        shm.truncate(static_cast<bip::offset_t>(size));
    } catch (const bip::interprocess_exception& e) {
        seg.unlink();
        throw SegmentError(fmt::format("shmpi: cannot create shared memory /dev/shm/{} ({} bytes): {}", shown,
                                       size, e.what()));
    }
    seg.size_ = size;

    // 3. Reserve every page now.  Step 1 is only a snapshot: another job can
    //    fill /dev/shm before our ranks touch their pages, and a page tmpfs
    //    cannot supply is a SIGBUS in whichever rank touches it first.  A
    //    file system without fallocate keeps step 1's check only.  A step
    //    at a time, so that `stop` is heard.
    for (std::size_t at = 0; at < size; at += kReserveStep) {
        const std::size_t step = std::min(kReserveStep, size - at);
        const int err = posix_fallocate(seg.fd_, static_cast<off_t>(at), static_cast<off_t>(step));
        if (err == ENOSPC || err == ENOMEM) {
            seg.unlink();
            throw SegmentError(no_room_message(dev_shm_free(), g.nranks, size));
        }
        if (err == EOPNOTSUPP || err == EINVAL || err == ENOSYS) break;
        if (err != 0) {
            seg.unlink();
            throw SegmentError(fmt::format("shmpi: cannot reserve {} bytes for /dev/shm/{}: {}", size, shown,
                                           std::strerror(err)));
        }
        if (stop && stop()) {
            seg.unlink();
            throw SegmentStopped();
        }
    }
    try {
        seg.base_ = map_fd(seg.fd_, size, "mpirun");
    } catch (...) {
        seg.unlink();
        throw;
    }

    // 4. The immutable header and the rank slots.  The file is zero-filled, so
    //    rings start empty and every atomic starts at zero.
    auto* h = new (seg.base_) SegmentHeader{};
    h->magic = kMagic;
    h->version = kLayoutVersion;
    h->nranks = g.nranks;
    h->size = size;
    h->ranks_offset = g.ranks_offset();
    h->rings_offset = g.rings_offset();
    h->ring_stride = g.ring_stride();
    h->ring_cells = g.ring_cells;
    h->cell_bytes = g.cell_bytes;
    h->launcher_pid = launcher_pid;
    h->job_id = random64();
    h->ring_summary = g.ring_summary;
    h->heads_offset = g.heads_offset();
    h->coll_offset = g.coll_offset();
    h->coll_cells_offset = g.coll_cells_offset();
    h->coll_cell_bytes = g.coll_cell_bytes;
    h->wide_cell_bytes = g.wide_cell_bytes;
    cpu_set_t mine;
    CPU_ZERO(&mine);
    h->cpus = sched_getaffinity(0, sizeof mine, &mine) == 0 ? static_cast<std::uint32_t>(CPU_COUNT(&mine)) : 0;
    h->stream_bytes = g.stream_bytes;
    h->stream_offset = g.stream_offset();
    h->pool_offset = g.pool_offset();
    h->pool_regions_offset = g.pool_regions_offset();
    h->pool_region_stride = g.pool_region_stride();
    h->pool_regions = g.pool_regions;
    h->abort_rank.store(-1, std::memory_order_relaxed);  // published by fork
    h->awake.store(static_cast<std::int32_t>(g.nranks), std::memory_order_relaxed);  // the same
    h->next_shared_context.store(kSharedContextBase + kSharedContextSlots,
                                 std::memory_order_relaxed);  // the same; shared_context_users: 0
    // The same check every rank makes, so a Geometry the check would refuse
    // fails here, in mpirun, with the field named.
    seg.layout_ = check_header(*h, size, g.nranks, "mpirun");
    for (std::uint32_t r = 0; r < g.nranks; ++r) new (&seg.slot(r)) RankSlot{};
    const CollRegion coll = seg.world_coll_region();
    for (std::uint32_t r = 0; r < coll.count; ++r) new (&coll.members[r]) CollMember{};
    // The pool: every region free (owner 0), every flag at "no step yet".
    for (std::uint32_t k = 0; k < seg.pool_regions(); ++k) {
        new (&seg.pool_entry(k)) PoolEntry{};
        const CollRegion region = seg.pool_region(k);
        for (std::uint32_t r = 0; r < region.count; ++r) new (&region.members[r]) CollMember{};
    }
    return seg;
}

Segment Segment::attach(int fd, std::uint32_t expect_nranks) {
    // The descriptor is closed on every path, as the contract says.
    struct FdCloser {
        int fd;
        ~FdCloser() {
            if (fd >= 0) close(fd);
        }
    } closer{fd};
    struct stat st {};
    if (fstat(fd, &st) != 0) {
        throw SegmentError(fmt::format("shmpi: MPI_Init: {}={} is not an open descriptor: {}",
                                       kEnvFd, fd, std::strerror(errno)));
    }
    if (st.st_uid != getuid() || (st.st_mode & 0077) != 0) {
        throw SegmentError(fmt::format(
            "shmpi: MPI_Init: segment descriptor {} belongs to uid {} with mode {:o}; refusing it",
            fd, st.st_uid, st.st_mode & 0777));
    }
    if (st.st_size < 0 || static_cast<std::size_t>(st.st_size) < sizeof(SegmentHeader)) {
        throw SegmentError(fmt::format(
            "shmpi: MPI_Init: segment descriptor {} holds {} bytes, less than a header", fd,
            st.st_size));
    }
    const auto file_size = static_cast<std::size_t>(st.st_size);
    Segment seg;
    seg.base_ = map_fd(fd, file_size, "MPI_Init");
    seg.size_ = file_size;

    // Check the header before trusting any offset in it, on a private copy:
    // a peer writing the shared header during the checks cannot make one
    // field pass and then change it.
    SegmentHeader copy{};
    std::memcpy(static_cast<void*>(&copy), seg.base_, offsetof(SegmentHeader, abort_state));
    if (copy.magic != kMagic || copy.version != kLayoutVersion) {
        throw SegmentError(fmt::format(
            "shmpi: MPI_Init: the segment has magic {:#x} version {} (expected {:#x} version {}): "
            "was this program started by a different shmpi's mpirun?",
            copy.magic, copy.version, kMagic, kLayoutVersion));
    }
    seg.layout_ = check_header(copy, file_size, expect_nranks, "MPI_Init");
    return seg;
}

Segment::Segment(Segment&& o) noexcept
    : base_(std::exchange(o.base_, nullptr)),
      size_(std::exchange(o.size_, 0)),
      layout_(std::exchange(o.layout_, Layout{})),
      fd_(std::exchange(o.fd_, -1)),
      name_(std::move(o.name_)) {
    o.name_.clear();
}

Segment& Segment::operator=(Segment&& o) noexcept {
    if (this != &o) {
        release();
        base_ = std::exchange(o.base_, nullptr);
        size_ = std::exchange(o.size_, 0);
        layout_ = std::exchange(o.layout_, Layout{});
        fd_ = std::exchange(o.fd_, -1);
        name_ = std::move(o.name_);
        o.name_.clear();
    }
    return *this;
}

Segment::~Segment() { release(); }

void Segment::release() noexcept {
    unlink();
    if (base_ != nullptr) munmap(base_, size_);
    if (fd_ >= 0) close(fd_);
    base_ = nullptr;
    fd_ = -1;
}

void Segment::unlink() {
    if (!name_.empty()) {
        bip::shared_memory_object::remove(name_.c_str());
        name_.clear();
    }
}

RankSlot& Segment::slot(std::uint32_t rank) const {
    assert(rank < layout_.geometry.nranks && "rank slot index out of range");
    return reinterpret_cast<RankSlot*>(static_cast<std::byte*>(base_) + layout_.ranks_offset)[rank];
}

Ring Segment::ring(std::uint32_t src, std::uint32_t dst) const {
    const Layout& l = layout_;
    assert(src < l.geometry.nranks && dst < l.geometry.nranks && src != dst && "ring endpoints out of range");
    std::byte* p = static_cast<std::byte*>(base_) + l.rings_offset +
                   (std::size_t{src} * l.geometry.nranks + dst) * l.ring_stride;
    return Ring(p, l.geometry.ring_cells, l.geometry.cell_bytes);
}

std::atomic<std::uint64_t>* Segment::heads(std::uint32_t dst) const {
    const Layout& l = layout_;
    assert(dst < l.geometry.nranks && "heads row index out of range");
    return reinterpret_cast<std::atomic<std::uint64_t>*>(static_cast<std::byte*>(base_) + l.heads_offset +
                                                         std::size_t{dst} * l.heads_row);
}

CollRegion Segment::world_coll_region() const {
    auto* base = static_cast<std::byte*>(base_);
    CollRegion r;
    r.members = reinterpret_cast<CollMember*>(base + layout_.coll_offset);
    r.cells = base + layout_.coll_cells_offset;
    r.cell_bytes = layout_.geometry.coll_cell_bytes;
    r.wide_bytes = layout_.geometry.wide_cell_bytes;
    r.count = layout_.geometry.nranks;
    return r;
}

PoolEntry& Segment::pool_entry(std::uint32_t k) const {
    assert(k < layout_.geometry.pool_regions && "pool region index out of range");
    return reinterpret_cast<PoolEntry*>(static_cast<std::byte*>(base_) + layout_.pool_offset)[k];
}

CollRegion Segment::pool_region(std::uint32_t k) const {
    assert(k < layout_.geometry.pool_regions && "pool region index out of range");
    std::byte* start = static_cast<std::byte*>(base_) + layout_.pool_regions_offset +
                       std::size_t{k} * layout_.pool_region_stride;
    CollRegion r;
    r.members = reinterpret_cast<CollMember*>(start);
    r.cells = start + layout_.pool_region_cells;
    r.cell_bytes = layout_.geometry.coll_cell_bytes;
    r.count = layout_.geometry.nranks;
    return r;
}

std::uint64_t Segment::activity() const {
    // FNV-1a over 64-bit words: any change of any word changes the digest.
    std::uint64_t h = 0xcbf29ce484222325ull;
    auto mix = [&h](std::uint64_t v) { h = (h ^ v) * 0x100000001b3ull; };
    constexpr auto relaxed = std::memory_order_relaxed;
    const std::uint32_t n = nranks();
    mix(header().abort_state.load(relaxed));
    for (std::uint32_t r = 0; r < n; ++r) {
        const RankSlot& s = slot(r);
        mix(s.state.load(relaxed));
        mix(s.doorbell.load(relaxed));
        mix(s.stream_token.load(relaxed));
        mix(s.stream_packed.load(relaxed));
        mix(s.stream_taken.load(relaxed));
        for (std::uint32_t d = 0; d < n; ++d) {
            if (d == r) continue;
            const Ring ring_rd = ring(r, d);
            mix(ring_rd.published());
            mix(ring_rd.consumed());
        }
    }
    auto mix_region = [&](const CollRegion& region) {
        for (std::uint32_t m = 0; m < region.count; ++m) {
            const CollMember& cm = region.members[m];
            for (const CollLine& line : cm.lines) mix(line.release.load(relaxed));
            mix(cm.gather.load(relaxed));
            for (const CollCall& c : cm.calls) mix(c.call.load(relaxed));
        }
    };
    mix_region(world_coll_region());
    for (std::uint32_t k = 0; k < pool_regions(); ++k) {
        mix(pool_entry(k).owner.load(relaxed));
        mix(pool_entry(k).users.load(relaxed));
        mix_region(pool_region(k));
    }
    return h;
}

std::byte* Segment::stream_buffer(std::uint32_t rank) const {
    assert(rank < layout_.geometry.nranks && "stream buffer index out of range");
    return static_cast<std::byte*>(base_) + layout_.stream_offset + std::size_t{rank} * layout_.geometry.stream_bytes;
}

}  // namespace shmpi::shm
