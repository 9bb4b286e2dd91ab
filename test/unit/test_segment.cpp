// Tests for the segment's life cycle: the geometry's arithmetic, creation by
// the launcher (mode, name in /dev/shm, unlink), attachment by a rank through
// an inherited descriptor, and every header check attach() makes.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysinfo.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "shm/layout.hpp"
#include "shm/ring.hpp"
#include "shm/segment.hpp"

namespace {

namespace shm = shmpi::shm;
using shm::Geometry;
using shm::kLine;
using shm::Segment;
using shm::SegmentError;

/// Sets (or, with nullopt, unsets) an environment variable for the lifetime
/// of the guard and restores the old value afterwards.
class EnvGuard {
public:
    EnvGuard(const char* name, std::optional<std::string> value) : name_(name) {
        if (const char* old = std::getenv(name)) old_ = old;
        if (value) {
            setenv(name, value->c_str(), 1);
        } else {
            unsetenv(name);
        }
    }
    ~EnvGuard() {
        if (old_) {
            setenv(name_, old_->c_str(), 1);
        } else {
            unsetenv(name_);
        }
    }
    EnvGuard(const EnvGuard&) = delete;
    EnvGuard& operator=(const EnvGuard&) = delete;

private:
    const char* name_;
    std::optional<std::string> old_;
};

/// Clears both geometry overrides, so the defaults are what a test sees.
struct DefaultGeometryEnv {
    EnvGuard cells{"SHMPI_RING_CELLS", std::nullopt};
    EnvGuard bytes{"SHMPI_CELL_BYTES", std::nullopt};
    EnvGuard regions{"SHMPI_COLL_REGIONS", std::nullopt};
    EnvGuard coll_cells{"SHMPI_COLL_CELL_BYTES", std::nullopt};
    EnvGuard wide{"SHMPI_COLL_WIDE_BYTES", std::nullopt};
};

bool exists_in_dev_shm(const std::string& name, struct stat* st = nullptr) {
    struct stat tmp {};
    return stat(("/dev/shm/" + name).c_str(), st != nullptr ? st : &tmp) == 0;
}

bool fd_is_open(int fd) { return fcntl(fd, F_GETFD) != -1; }

/// Closes `fd` unless something closed it already.
void close_if_open(int fd) {
    if (fd >= 0 && fd_is_open(fd)) close(fd);
}

/// Creates a segment for `nranks` ranks with default geometry, or skips the
/// test when this machine has no usable /dev/shm.
std::optional<Segment> make_segment(std::uint32_t nranks) {
    DefaultGeometryEnv env;
    try {
        return Segment::create(Geometry::for_ranks(nranks), getpid());
    } catch (const SegmentError& e) {
        ADD_FAILURE() << "Segment::create failed: " << e.what();
        return std::nullopt;
    }
}

/// Runs attach() on a duplicate of `fd` and returns the error message, or
/// an empty string when attach() accepted it.
std::string attach_error(int fd, std::uint32_t expect_nranks) {
    const int dup_fd = dup(fd);
    if (dup_fd < 0) return std::string("dup failed: ") + std::strerror(errno);
    std::string message;
    try {
        Segment s = Segment::attach(dup_fd, expect_nranks);
    } catch (const SegmentError& e) {
        message = e.what();
    }
    // attach() closes the descriptor on every path, accepted or not.
    EXPECT_FALSE(fd_is_open(dup_fd)) << "attach() left descriptor " << dup_fd << " open";
    close_if_open(dup_fd);
    return message;
}

/// An unnamed POSIX shared memory object of mode 0600 holding `bytes` bytes
/// (ftruncate'd to `file_bytes`), for headers no launcher would write.
class ScratchShm {
public:
    explicit ScratchShm(std::size_t file_bytes) {
        const std::string name = "/shmpi-test-" + std::to_string(getpid());
        fd_ = shm_open(name.c_str(), O_RDWR | O_CREAT | O_EXCL, 0600);
        if (fd_ < 0) return;
        shm_unlink(name.c_str());
        if (ftruncate(fd_, static_cast<off_t>(file_bytes)) != 0) {
            close(fd_);
            fd_ = -1;
        }
    }
    ~ScratchShm() { close_if_open(fd_); }
    ScratchShm(const ScratchShm&) = delete;
    ScratchShm& operator=(const ScratchShm&) = delete;

    int fd() const { return fd_; }
    bool write(const void* data, std::size_t n) const {
        return pwrite(fd_, data, n, 0) == static_cast<ssize_t>(n);
    }

private:
    int fd_ = -1;
};

bool contains(const std::string& haystack, const std::string& needle) {
    return haystack.find(needle) != std::string::npos;
}

class SegmentTest : public ::testing::Test {
protected:
    void SetUp() override {
        struct stat st {};
        if (stat("/dev/shm", &st) != 0 || !S_ISDIR(st.st_mode)) {
            GTEST_SKIP() << "no /dev/shm on this machine";
        }
    }
};

// ---- geometry ----

TEST(Geometry, OffsetsAreConsistentForManyRankCounts) {
    DefaultGeometryEnv env;
    std::vector<std::uint32_t> counts;
    for (std::uint32_t n = 1; n <= 70; ++n) counts.push_back(n);
    for (std::uint32_t n : {96u, 127u, 128u, 200u, 256u}) counts.push_back(n);

    for (std::uint32_t n : counts) {
        SCOPED_TRACE("nranks = " + std::to_string(n));
        const Geometry g = Geometry::for_ranks(n);
        ASSERT_EQ(g.nranks, n);
        ASSERT_NE(g.ring_cells, 0u);
        EXPECT_EQ(g.ring_cells & (g.ring_cells - 1), 0u) << "ring_cells must be a power of two";
        EXPECT_EQ(g.cell_bytes % kLine, 0u);

        // The header, then the rank slots, then the rings, each aligned.
        EXPECT_GE(g.ranks_offset(), sizeof(shm::SegmentHeader));
        EXPECT_EQ(g.ranks_offset() % kLine, 0u);
        EXPECT_LE(g.ranks_offset() + n * sizeof(shm::RankSlot), g.rings_offset())
            << "rank slots overlap the rings";
        EXPECT_EQ(g.rings_offset() % kLine, 0u);

        // Each ring fits its stride, so ring i ends before ring i + 1 starts.
        EXPECT_GE(g.ring_stride(), shm::ring_bytes(g.ring_cells, g.cell_bytes));
        EXPECT_EQ(g.ring_stride() % kLine, 0u);

        // The last ring ends inside the segment.
        const std::size_t rings_end =
            g.rings_offset() + std::size_t{n} * n * g.ring_stride();
        EXPECT_GE(g.total_bytes(), rings_end);
        EXPECT_EQ(g.total_bytes() % 4096, 0u) << "the segment is a whole number of pages";
        EXPECT_LT(g.total_bytes(), std::size_t{1} << 30)
            << "the default geometry should stay within a few hundred MiB";
    }
}

TEST(Geometry, CellsHoldA4KiBMessageUpTo16Ranks) {
    // A message that fits one cell takes the engine's one-cell path: up to 16
    // ranks a cell holds 4 KiB after its sequence word and the 48-byte wire
    // header (p2p.hpp), both within the 128 bytes above 4096.
    DefaultGeometryEnv env;
    for (std::uint32_t n = 1; n <= 16; ++n) {
        EXPECT_GE(Geometry::for_ranks(n).cell_bytes, 4096u + 128u) << "nranks = " << n;
    }
}

TEST(Geometry, RingsShrinkAsPairsGrow) {
    DefaultGeometryEnv env;
    std::size_t last = 0;
    for (std::uint32_t n = 1; n <= 256; n *= 2) {
        const Geometry g = Geometry::for_ranks(n);
        const std::size_t per_ring = shm::ring_bytes(g.ring_cells, g.cell_bytes);
        if (last != 0) {
            EXPECT_LE(per_ring, last) << "nranks = " << n;
        }
        last = per_ring;
    }
}

TEST(Geometry, EnvironmentOverridesRingCells) {
    EnvGuard bytes("SHMPI_CELL_BYTES", std::nullopt);
    {
        EnvGuard cells("SHMPI_RING_CELLS", "128");
        EXPECT_EQ(Geometry::for_ranks(4).ring_cells, 128u);
        EXPECT_EQ(Geometry::for_ranks(100).ring_cells, 128u);
    }
    for (const char* bad : {"24", "3", "0", "-8", "abc", "16x", "99999999999"}) {
        SCOPED_TRACE(std::string("SHMPI_RING_CELLS=") + bad);
        EnvGuard cells("SHMPI_RING_CELLS", bad);
        try {
            (void)Geometry::for_ranks(4);
            ADD_FAILURE() << "accepted";
        } catch (const SegmentError& e) {
            EXPECT_TRUE(contains(e.what(), "SHMPI_RING_CELLS")) << e.what();
            EXPECT_TRUE(contains(e.what(), bad)) << "the message should name the bad value: "
                                                 << e.what();
        }
    }
    {
        EnvGuard cells("SHMPI_RING_CELLS", "");
        EXPECT_NO_THROW((void)Geometry::for_ranks(4)) << "an empty value means the default";
    }
}

TEST(Geometry, EnvironmentOverridesCellBytes) {
    EnvGuard cells("SHMPI_RING_CELLS", std::nullopt);
    {
        EnvGuard bytes("SHMPI_CELL_BYTES", "4096");
        const Geometry g = Geometry::for_ranks(2);
        EXPECT_EQ(g.cell_bytes, 4096u);
        EXPECT_GE(g.ring_stride(), shm::ring_bytes(g.ring_cells, 4096));
    }
    {
        EnvGuard bytes("SHMPI_CELL_BYTES", "256");
        EXPECT_EQ(Geometry::for_ranks(2).cell_bytes, 256u);
    }
    for (const char* bad : {"100", "128", "1000", "0", "big"}) {
        SCOPED_TRACE(std::string("SHMPI_CELL_BYTES=") + bad);
        EnvGuard bytes("SHMPI_CELL_BYTES", bad);
        try {
            (void)Geometry::for_ranks(2);
            ADD_FAILURE() << "accepted";
        } catch (const SegmentError& e) {
            EXPECT_TRUE(contains(e.what(), "SHMPI_CELL_BYTES")) << e.what();
        }
    }
}

TEST(Geometry, WideCellsWhenRanksOutnumberCpus) {
    DefaultGeometryEnv env;
    // 4 MiB a rank from one rank more than the CPUs up to 16 ranks; none
    // when the ranks fit, when the CPUs are unknown (0), or beyond 16.
    EXPECT_EQ(Geometry::for_ranks(3, 2).wide_cell_bytes, 4u << 20);
    EXPECT_EQ(Geometry::for_ranks(8, 2).wide_cell_bytes, 4u << 20);
    EXPECT_EQ(Geometry::for_ranks(16, 4).wide_cell_bytes, 4u << 20);
    EXPECT_TRUE(Geometry::for_ranks(8, 2).wide_cells_optional);
    EXPECT_EQ(Geometry::for_ranks(2, 2).wide_cell_bytes, 0u);
    EXPECT_EQ(Geometry::for_ranks(8, 16).wide_cell_bytes, 0u);
    EXPECT_EQ(Geometry::for_ranks(8, 0).wide_cell_bytes, 0u);
    EXPECT_EQ(Geometry::for_ranks(8).wide_cell_bytes, 0u);
    EXPECT_EQ(Geometry::for_ranks(17, 2).wide_cell_bytes, 0u);
    // Only the world region grows: the stream buffers move past its wide
    // cells, the pool's regions keep the cells alone.
    const Geometry wide = Geometry::for_ranks(8, 2);
    const Geometry plain = Geometry::for_ranks(8, 8);
    EXPECT_EQ(wide.coll_cell_bytes, plain.coll_cell_bytes);
    EXPECT_EQ(wide.world_cell_stride(), std::size_t{wide.coll_cell_bytes} + (4u << 20));
    EXPECT_GE(wide.stream_offset(), wide.coll_cells_offset() + 8 * wide.world_cell_stride());
    EXPECT_EQ(wide.pool_region_stride(), plain.pool_region_stride());
    EXPECT_EQ(wide.total_bytes() - plain.total_bytes(), std::size_t{32} << 20);
}

TEST(Geometry, OptionalWideCellsShrinkToFitTheRoom) {
    DefaultGeometryEnv env;
    const Geometry wide = Geometry::for_ranks(8, 2);
    const Geometry plain = Geometry::for_ranks(8, 8);
    const auto size = [](std::size_t bytes) { return static_cast<double>(bytes); };
    const double rings = size(wide.private_ring_bytes());
    const double one_mib = size(plain.total_bytes() + (std::size_t{8} << 20));
    // Room for all, or nothing known: as it was.
    EXPECT_EQ(wide.fit_room(size(wide.total_bytes()), -1).wide_cell_bytes, 4u << 20);
    EXPECT_EQ(wide.fit_room(-1, -1).wide_cell_bytes, 4u << 20);
    EXPECT_TRUE(wide.fits(size(wide.total_bytes()), size(wide.total_bytes()) + rings));
    EXPECT_FALSE(wide.fits(size(wide.total_bytes()), size(wide.total_bytes()) + rings - 1))
        << "memory must hold the ranks' private rings too";
    // /dev/shm or memory a byte short: 1 MiB a rank; short of that: none.
    EXPECT_EQ(wide.fit_room(size(wide.total_bytes()) - 1, -1).wide_cell_bytes, 1u << 20);
    EXPECT_EQ(wide.fit_room(-1, size(wide.total_bytes()) + rings - 1).wide_cell_bytes, 1u << 20);
    EXPECT_EQ(wide.fit_room(one_mib, -1).wide_cell_bytes, 1u << 20);
    EXPECT_EQ(wide.fit_room(one_mib - 1, -1).wide_cell_bytes, 0u);
    EXPECT_EQ(wide.fit_room(-1, one_mib + rings - 1).wide_cell_bytes, 0u);
    // Nothing fits: no wide cells, everything else as it was (create()
    // then reports the smallest segment it needs).
    const Geometry none = wide.fit_room(1, -1);
    EXPECT_EQ(none.wide_cell_bytes, 0u);
    EXPECT_EQ(none.total_bytes(), plain.total_bytes());
    EXPECT_EQ(none.ring_cells, wide.ring_cells);
    EXPECT_EQ(none.stream_bytes, wide.stream_bytes);
    // Wide cells the user set stay, room or not.
    EnvGuard set("SHMPI_COLL_WIDE_BYTES", "4194304");
    const Geometry theirs = Geometry::for_ranks(8, 2);
    EXPECT_FALSE(theirs.wide_cells_optional);
    EXPECT_EQ(theirs.fit_room(1, 1).wide_cell_bytes, 4u << 20);
}

TEST(Geometry, EnvironmentOverridesWideCells) {
    DefaultGeometryEnv env;
    {
        EnvGuard wide("SHMPI_COLL_WIDE_BYTES", "0");
        EXPECT_EQ(Geometry::for_ranks(8, 2).wide_cell_bytes, 0u) << "0 turns them off";
    }
    {
        EnvGuard wide("SHMPI_COLL_WIDE_BYTES", "262144");
        EXPECT_EQ(Geometry::for_ranks(2, 2).wide_cell_bytes, 262144u) << "and a size turns them on";
        EXPECT_EQ(Geometry::for_ranks(8, 2).wide_cell_bytes, 262144u);
    }
    for (const char* bad : {"5000", "-4096", "33554432", "wide"}) {
        SCOPED_TRACE(std::string("SHMPI_COLL_WIDE_BYTES=") + bad);
        EnvGuard wide("SHMPI_COLL_WIDE_BYTES", bad);
        try {
            (void)Geometry::for_ranks(8, 2);
            ADD_FAILURE() << "accepted";
        } catch (const SegmentError& e) {
            EXPECT_TRUE(contains(e.what(), "SHMPI_COLL_WIDE_BYTES")) << e.what();
            EXPECT_TRUE(contains(e.what(), bad)) << "the message should name the bad value: " << e.what();
        }
    }
}

// ---- creation and unlink ----

TEST_F(SegmentTest, CreateMakesPrivateNamedObject) {
    auto seg = make_segment(4);
    ASSERT_TRUE(seg);
    const std::string name = seg->name();
    ASSERT_FALSE(name.empty());
    EXPECT_TRUE(contains(name, std::to_string(getuid()) + "-" + std::to_string(getpid())))
        << "the name should carry the uid and the launcher pid: " << name;

    struct stat st {};
    ASSERT_TRUE(exists_in_dev_shm(name, &st)) << "/dev/shm/" << name;
    EXPECT_EQ(st.st_mode & 0777, 0600u);
    EXPECT_EQ(st.st_uid, getuid());
    EXPECT_EQ(static_cast<std::size_t>(st.st_size), seg->size());

    // The descriptor is the same object, and is not inherited across exec
    // unless the launcher's child clears FD_CLOEXEC.
    ASSERT_GE(seg->fd(), 0);
    struct stat fst {};
    ASSERT_EQ(fstat(seg->fd(), &fst), 0);
    EXPECT_EQ(fst.st_ino, st.st_ino);
    EXPECT_NE(fcntl(seg->fd(), F_GETFD) & FD_CLOEXEC, 0);

    seg->unlink();
    EXPECT_TRUE(seg->name().empty());
    EXPECT_FALSE(exists_in_dev_shm(name)) << "/dev/shm/" << name << " outlived unlink()";
    seg->unlink();  // idempotent
    EXPECT_FALSE(exists_in_dev_shm(name));

    // The mapping and the descriptor outlive the name.
    EXPECT_EQ(seg->header().magic, shm::kMagic);
    ASSERT_EQ(fstat(seg->fd(), &fst), 0);
    EXPECT_EQ(static_cast<std::size_t>(fst.st_size), seg->size());
}

TEST_F(SegmentTest, DestructorRemovesName) {
    std::string name;
    {
        auto seg = make_segment(2);
        ASSERT_TRUE(seg);
        name = seg->name();
        ASSERT_TRUE(exists_in_dev_shm(name));
    }
    EXPECT_FALSE(exists_in_dev_shm(name));
}

TEST_F(SegmentTest, MovedFromSegmentOwnsNothing) {
    auto seg = make_segment(2);
    ASSERT_TRUE(seg);
    const std::string name = seg->name();
    const int fd = seg->fd();
    Segment moved = std::move(*seg);
    EXPECT_EQ(seg->fd(), -1);
    EXPECT_TRUE(seg->name().empty());
    seg.reset();  // must not unlink or close what `moved` owns
    EXPECT_TRUE(exists_in_dev_shm(name));
    EXPECT_TRUE(fd_is_open(fd));
    EXPECT_EQ(moved.fd(), fd);
    EXPECT_EQ(moved.header().magic, shm::kMagic);
}

TEST_F(SegmentTest, CreateWritesHeaderAndEmptyRings) {
    constexpr std::uint32_t n = 5;
    auto seg = make_segment(n);
    ASSERT_TRUE(seg);
    DefaultGeometryEnv env;
    const Geometry g = Geometry::for_ranks(n);
    const shm::SegmentHeader& h = seg->header();
    EXPECT_EQ(h.magic, shm::kMagic);
    EXPECT_EQ(h.version, shm::kLayoutVersion);
    EXPECT_EQ(h.nranks, n);
    EXPECT_EQ(seg->nranks(), n);
    EXPECT_EQ(h.size, g.total_bytes());
    EXPECT_EQ(seg->size(), g.total_bytes());
    EXPECT_EQ(h.ranks_offset, g.ranks_offset());
    EXPECT_EQ(h.rings_offset, g.rings_offset());
    EXPECT_EQ(h.ring_stride, g.ring_stride());
    EXPECT_EQ(h.ring_cells, g.ring_cells);
    EXPECT_EQ(h.cell_bytes, g.cell_bytes);
    EXPECT_EQ(h.launcher_pid, getpid());
    EXPECT_EQ(h.abort_state.load(), shm::kRunning);
    EXPECT_EQ(h.abort_rank.load(), -1);
    // Every rank counts as awake until it first sleeps (Transport::crowded).
    EXPECT_EQ(h.awake.load(), static_cast<std::int32_t>(n));
    // The awake counter has its own line: waits read it, sleepers write it,
    // and neither should disturb the abort line every wait also polls.
    EXPECT_EQ(offsetof(shm::SegmentHeader, awake) % shm::kLine, 0u);
    EXPECT_NE(offsetof(shm::SegmentHeader, awake) / shm::kLine,
              offsetof(shm::SegmentHeader, abort_state) / shm::kLine);

    const auto* base = reinterpret_cast<const std::byte*>(&h);
    for (std::uint32_t r = 0; r < n; ++r) {
        const shm::RankSlot& slot = seg->slot(r);
        EXPECT_EQ(reinterpret_cast<const std::byte*>(&slot) - base,
                  static_cast<std::ptrdiff_t>(g.ranks_offset() + r * sizeof(shm::RankSlot)));
        EXPECT_EQ(slot.state.load(), shm::kNotStarted);
        EXPECT_EQ(slot.sleeping.load(), 0u);
    }
    for (std::uint32_t s = 0; s < n; ++s) {
        for (std::uint32_t d = 0; d < n; ++d) {
            if (s == d) continue;
            shm::Ring ring = seg->ring(s, d);
            EXPECT_EQ(ring.capacity(), g.ring_cells);
            EXPECT_EQ(ring.cell_bytes(), g.cell_bytes - shm::kCellSeqBytes);
            EXPECT_EQ(ring.free_cells(), g.ring_cells);
            EXPECT_EQ(ring.try_peek(), nullptr) << "ring " << s << "->" << d;
        }
    }
}

TEST_F(SegmentTest, RingsDoNotOverlap) {
    constexpr std::uint32_t n = 3;
    auto seg = make_segment(n);
    ASSERT_TRUE(seg);
    // Fill every cell of every ring with a byte naming the ring, then check
    // that every ring still holds only its own byte.
    auto tag = [](std::uint32_t s, std::uint32_t d) {
        return static_cast<std::byte>(1 + s * n + d);
    };
    for (std::uint32_t s = 0; s < n; ++s) {
        for (std::uint32_t d = 0; d < n; ++d) {
            if (s == d) continue;
            shm::Ring ring = seg->ring(s, d);
            while (std::byte* c = ring.try_claim()) {
                std::memset(c, static_cast<int>(tag(s, d)), ring.cell_bytes());
                ring.publish();
            }
        }
    }
    for (std::uint32_t s = 0; s < n; ++s) {
        for (std::uint32_t d = 0; d < n; ++d) {
            if (s == d) continue;
            shm::Ring ring = seg->ring(s, d);
            std::uint32_t cells = 0;
            while (const std::byte* c = ring.try_peek()) {
                for (std::uint32_t i = 0; i < ring.cell_bytes(); ++i) {
                    ASSERT_EQ(c[i], tag(s, d)) << "ring " << s << "->" << d << " byte " << i;
                }
                ring.release();
                ++cells;
            }
            EXPECT_EQ(cells, ring.capacity());
        }
    }
    EXPECT_EQ(seg->header().magic, shm::kMagic) << "a ring overwrote the header";
    EXPECT_EQ(seg->slot(n - 1).state.load(), shm::kNotStarted) << "a ring overwrote a rank slot";
}

TEST_F(SegmentTest, OverriddenGeometryReachesTheRanks) {
    EnvGuard cells("SHMPI_RING_CELLS", "64");
    EnvGuard bytes("SHMPI_CELL_BYTES", "512");
    Segment seg = Segment::create(Geometry::for_ranks(3), getpid());
    EXPECT_EQ(seg.header().ring_cells, 64u);
    EXPECT_EQ(seg.header().cell_bytes, 512u);
    EXPECT_EQ(seg.ring(2, 0).capacity(), 64u);
    EXPECT_EQ(seg.ring(2, 0).cell_bytes(), 512u - shm::kCellSeqBytes);
    // A rank does not read the variables: the header carries the geometry.
    EnvGuard other_cells("SHMPI_RING_CELLS", "8");
    EXPECT_EQ(attach_error(seg.fd(), 3), "");
}

// ---- attach ----

TEST_F(SegmentTest, ForkedRankAttachesAndSharesRings) {
    constexpr std::uint32_t n = 2;
    auto seg = make_segment(n);
    ASSERT_TRUE(seg);
    seg->unlink();  // as the launcher does before the first fork
    const std::uint64_t job_id = seg->header().job_id;

    // The launcher side leaves one cell in ring 0 -> 1 for the rank.
    shm::Ring to_rank = seg->ring(0, 1);
    std::byte* c = to_rank.try_claim();
    ASSERT_NE(c, nullptr);
    const std::uint64_t hello = 0x1234'5678'9abc'def0ull;
    std::memcpy(c, &hello, sizeof hello);
    to_rank.publish();

    const int rank_fd = dup(seg->fd());
    ASSERT_GE(rank_fd, 0);
    const pid_t pid = fork();
    ASSERT_GE(pid, 0) << std::strerror(errno);
    if (pid == 0) {
        // The rank: exit codes name the first check that failed.
        try {
            Segment mine = Segment::attach(rank_fd, n);
            if (fd_is_open(rank_fd)) _exit(2);  // attach() closes the descriptor
            if (mine.fd() != -1 || !mine.name().empty()) _exit(3);
            if (mine.header().magic != shm::kMagic || mine.nranks() != n) _exit(4);
            if (mine.header().job_id != job_id) _exit(5);
            shm::Ring in = mine.ring(0, 1);
            const std::byte* got = in.try_peek();
            if (got == nullptr) _exit(6);
            std::uint64_t v = 0;
            std::memcpy(&v, got, sizeof v);
            if (v != hello) _exit(7);
            in.release();
            shm::Ring out = mine.ring(1, 0);
            std::byte* reply = out.try_claim();
            if (reply == nullptr) _exit(8);
            const std::uint64_t answer = v + 1;
            std::memcpy(reply, &answer, sizeof answer);
            out.publish();
            mine.slot(1).state.store(shm::kAttached, std::memory_order_release);
        } catch (const SegmentError&) {
            _exit(1);
        }
        _exit(0);
    }
    close(rank_fd);
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status)) << "rank died: status " << status;
    ASSERT_EQ(WEXITSTATUS(status), 0) << "the rank's check number " << WEXITSTATUS(status)
                                      << " failed";

    EXPECT_EQ(to_rank.free_cells(), to_rank.capacity()) << "the rank released our cell";
    shm::Ring from_rank = seg->ring(1, 0);
    const std::byte* reply = from_rank.try_peek();
    ASSERT_NE(reply, nullptr);
    std::uint64_t answer = 0;
    std::memcpy(&answer, reply, sizeof answer);
    EXPECT_EQ(answer, hello + 1);
    EXPECT_EQ(seg->slot(1).state.load(std::memory_order_acquire), shm::kAttached);
}

TEST_F(SegmentTest, AttachAcceptsTheRightRankCount) {
    auto seg = make_segment(3);
    ASSERT_TRUE(seg);
    EXPECT_EQ(attach_error(seg->fd(), 3), "");
}

TEST_F(SegmentTest, AttachRejectsWrongRankCount) {
    auto seg = make_segment(3);
    ASSERT_TRUE(seg);
    for (std::uint32_t wrong : {0u, 1u, 2u, 4u, 300u}) {
        const std::string err = attach_error(seg->fd(), wrong);
        EXPECT_FALSE(err.empty()) << "accepted " << wrong << " ranks for a 3-rank segment";
        EXPECT_TRUE(contains(err, std::to_string(wrong))) << err;
    }
}

TEST_F(SegmentTest, AttachRejectsCorruptedMagic) {
    auto seg = make_segment(2);
    ASSERT_TRUE(seg);
    seg->header().magic ^= 1;
    const std::string err = attach_error(seg->fd(), 2);
    EXPECT_TRUE(contains(err, "magic")) << err;
}

TEST_F(SegmentTest, AttachRejectsWrongVersion) {
    auto seg = make_segment(2);
    ASSERT_TRUE(seg);
    seg->header().version = shm::kLayoutVersion + 1;
    const std::string err = attach_error(seg->fd(), 2);
    EXPECT_TRUE(contains(err, "version " + std::to_string(shm::kLayoutVersion + 1))) << err;
}

/// Tampers with a 2-rank segment's header one field at a time.  It keeps
/// the immutable part of the header (it ends where abort_state's line
/// begins) as it was at construction; rejects() changes the header, expects
/// attaching to fail, and puts the saved part back.
class HeaderTamper {
public:
    HeaderTamper(shm::SegmentHeader& h, int fd) : h_(h), fd_(fd) {
        std::memcpy(saved_, static_cast<const void*>(&h), kBytes);
    }
    /// Applies `change`; attaching as a job of `nranks` must then fail, with
    /// `needle` in the message unless it is empty.  `what` says what the
    /// change made.
    void rejects(const std::function<void(shm::SegmentHeader&)>& change, const std::string& needle,
                 const std::string& what, std::uint32_t nranks = 2) {
        change(h_);
        const std::string err = attach_error(fd_, nranks);
        if (needle.empty()) {
            EXPECT_FALSE(err.empty()) << "accepted " << what;
        } else {
            EXPECT_TRUE(contains(err, needle)) << "accepted " << what << " (error: '" << err << "')";
        }
        std::memcpy(static_cast<void*>(&h_), saved_, kBytes);
    }
    ~HeaderTamper() { EXPECT_EQ(attach_error(fd_, 2), "") << "the restored header should attach"; }

private:
    static constexpr std::size_t kBytes = offsetof(shm::SegmentHeader, abort_state);
    shm::SegmentHeader& h_;
    int fd_;
    std::byte saved_[kBytes];
};

TEST_F(SegmentTest, AttachRejectsInconsistentLayout) {
    auto seg = make_segment(2);
    ASSERT_TRUE(seg);
    HeaderTamper t(seg->header(), seg->fd());
    using H = shm::SegmentHeader;
    t.rejects([](H& h) { h.ring_stride += kLine; }, "", "a wrong ring stride");
    t.rejects([](H& h) { h.ring_cells = 24; }, "", "24 cells per ring");
    t.rejects([](H& h) { h.ring_cells = 0; }, "", "0 cells per ring");
    t.rejects([](H& h) { h.rings_offset += 4096; }, "", "a wrong rings offset");
    t.rejects([](H& h) { h.cell_bytes += 8; }, "", "cells 8 bytes longer");
    t.rejects([](H& h) { h.heads_offset += 4096; }, "heads_offset", "moved heads rows");
    t.rejects([](H& h) { h.ring_summary = 2; }, "ring_summary", "a ring_summary of 2");
}

TEST_F(SegmentTest, AttachRejectsCellsTooSmallForAHeader) {
    // A layout that is consistent in itself but whose cells cannot hold a
    // message header: the file is written by hand, as no launcher would.
    Geometry g;
    g.nranks = 2;
    g.ring_cells = 32;
    g.cell_bytes = 0;
    ScratchShm file(g.total_bytes());
    ASSERT_GE(file.fd(), 0) << "shm_open: " << std::strerror(errno);
    shm::SegmentHeader h{};
    h.magic = shm::kMagic;
    h.version = shm::kLayoutVersion;
    h.nranks = g.nranks;
    h.size = g.total_bytes();
    h.ranks_offset = g.ranks_offset();
    h.rings_offset = g.rings_offset();
    h.ring_stride = g.ring_stride();
    h.ring_cells = g.ring_cells;
    h.cell_bytes = g.cell_bytes;
    ASSERT_TRUE(file.write(&h, sizeof h));
    EXPECT_FALSE(attach_error(file.fd(), 2).empty()) << "accepted cells of 0 bytes";
}

TEST_F(SegmentTest, AttachRejectsTruncatedFile) {
    auto seg = make_segment(2);
    ASSERT_TRUE(seg);

    // A valid header whose file is shorter than the header says.
    ScratchShm half(seg->size() / 2);
    ASSERT_GE(half.fd(), 0) << "shm_open: " << std::strerror(errno);
    ASSERT_TRUE(half.write(&seg->header(), sizeof(shm::SegmentHeader)));
    std::string err = attach_error(half.fd(), 2);
    EXPECT_TRUE(contains(err, std::to_string(seg->size() / 2))) << "names the file size: " << err;

    // A file too short to hold a header at all.
    ScratchShm tiny(16);
    ASSERT_GE(tiny.fd(), 0);
    ASSERT_TRUE(tiny.write(&seg->header(), 16));
    err = attach_error(tiny.fd(), 2);
    EXPECT_TRUE(contains(err, "16 bytes")) << err;

    // An empty file.
    ScratchShm empty(0);
    ASSERT_GE(empty.fd(), 0);
    EXPECT_FALSE(attach_error(empty.fd(), 2).empty());
}

TEST_F(SegmentTest, AttachRejectsZeroedFile) {
    DefaultGeometryEnv env;
    ScratchShm zeros(Geometry::for_ranks(2).total_bytes());
    ASSERT_GE(zeros.fd(), 0);
    const std::string err = attach_error(zeros.fd(), 2);
    EXPECT_TRUE(contains(err, "magic")) << err;
}

TEST_F(SegmentTest, AttachRejectsGroupOrOtherPermissions) {
    for (mode_t mode : {0640, 0620, 0604, 0666, 0700 | 0060}) {
        SCOPED_TRACE("mode " + std::to_string(mode));
        auto seg = make_segment(2);
        ASSERT_TRUE(seg);
        ASSERT_EQ(fchmod(seg->fd(), mode), 0) << std::strerror(errno);
        const std::string err = attach_error(seg->fd(), 2);
        EXPECT_TRUE(contains(err, "refusing")) << err;
    }
}

TEST_F(SegmentTest, AttachRejectsBadDescriptor) {
    const int fd = open("/dev/null", O_RDONLY);
    ASSERT_GE(fd, 0);
    close(fd);  // now certainly not open
    try {
        Segment s = Segment::attach(fd, 2);
        ADD_FAILURE() << "attached a closed descriptor";
    } catch (const SegmentError& e) {
        EXPECT_TRUE(contains(e.what(), std::to_string(fd))) << e.what();
        EXPECT_TRUE(contains(e.what(), shm::kEnvFd)) << e.what();
    }
}

// ---- bound checks on what the header says (issue 7, point 4) ----

TEST_F(SegmentTest, AttachRejectsInconsistentCollectiveLayout) {
    auto seg = make_segment(2);
    ASSERT_TRUE(seg);
    const std::size_t size = seg->size();
    HeaderTamper t(seg->header(), seg->fd());
    using H = shm::SegmentHeader;
    t.rejects([](H& h) { h.coll_offset += 4096; }, "coll_offset", "a moved region");
    t.rejects([size](H& h) { h.coll_cells_offset = size - 4096; }, "coll_cells_offset",
              "cells that run past the end of the file");
    t.rejects([](H& h) { h.coll_cell_bytes *= 4; }, "", "larger collective cells");
    t.rejects([](H& h) { h.coll_cell_bytes = 100; }, "coll_cell_bytes is 100", "cells of 100 bytes");
    t.rejects([](H& h) { h.coll_cell_bytes = 0; }, "", "empty collective cells");
    t.rejects([](H& h) { h.wide_cell_bytes = 1u << 20; }, "", "wide cells the file has no room for");
    t.rejects([](H& h) { h.wide_cell_bytes = 100; }, "wide_cell_bytes is 100", "wide cells of 100 bytes");
    t.rejects([](H& h) { h.ranks_offset = 0; }, "ranks_offset", "rank slots on the header");
}

TEST_F(SegmentTest, AttachRejectsInconsistentStreamBuffers) {
    auto seg = make_segment(2);
    ASSERT_TRUE(seg);
    EXPECT_GT(seg->layout().geometry.stream_bytes, 0u);
    EXPECT_LE(seg->layout().stream_offset + 2 * std::size_t{seg->layout().geometry.stream_bytes}, seg->size());
    EXPECT_EQ(seg->stream_buffer(1) - seg->stream_buffer(0),
              static_cast<std::ptrdiff_t>(seg->layout().geometry.stream_bytes));
    const std::size_t size = seg->size();
    HeaderTamper t(seg->header(), seg->fd());
    using H = shm::SegmentHeader;
    t.rejects([size](H& h) { h.stream_offset = size - 4096; }, "stream_offset",
              "stream buffers that run past the end of the file");
    t.rejects([](H& h) { h.stream_bytes = 100; }, "stream_bytes is 100", "stream buffers of 100 bytes");
    t.rejects([](H& h) { h.stream_bytes *= 2; }, "", "larger stream buffers");
}

// ---- the pool of collective regions ----

TEST(Geometry, PoolFollowsTheStreamBuffersAndFitsItsRegions) {
    DefaultGeometryEnv env;
    for (std::uint32_t n : {1u, 2u, 3u, 8u, 17u, 64u, 200u}) {
        SCOPED_TRACE("nranks = " + std::to_string(n));
        const Geometry g = Geometry::for_ranks(n);
        EXPECT_EQ(g.pool_regions, 8u) << "the default pool";
        EXPECT_GE(g.pool_offset(), g.stream_offset() + std::size_t{n} * g.stream_bytes)
            << "the pool's control words overlap the stream buffers";
        EXPECT_EQ(g.pool_offset() % 4096, 0u);
        EXPECT_GE(g.pool_regions_offset(), g.pool_offset() + g.pool_regions * sizeof(shm::PoolEntry))
            << "the regions overlap the control words";
        EXPECT_EQ(g.pool_regions_offset() % 4096, 0u);
        // A region: the members, then page-aligned cells, one block per member.
        EXPECT_GE(g.pool_region_cells(), std::size_t{n} * sizeof(shm::CollMember));
        EXPECT_EQ(g.pool_region_cells() % 4096, 0u);
        EXPECT_EQ(g.pool_region_stride(), g.pool_region_cells() + std::size_t{n} * g.coll_cell_bytes);
        EXPECT_EQ(g.pool_region_stride() % 4096, 0u);
        EXPECT_EQ(g.total_bytes(), g.pool_regions_offset() + g.pool_regions * g.pool_region_stride())
            << "the last region ends the segment";
    }
    // The sizes the README quotes: about 26 MiB for 8 ranks, 52 MiB for 16
    // (within the 64 MiB /dev/shm of a default container), 95 MiB for 64.
    EXPECT_LT(Geometry::for_ranks(8).total_bytes(), std::size_t{27} << 20);
    EXPECT_LT(Geometry::for_ranks(16).total_bytes(), std::size_t{53} << 20);
    EXPECT_LT(Geometry::for_ranks(64).total_bytes(), std::size_t{95} << 20);
}

TEST(Geometry, HeadsRowsAboveSixtyFourRanks) {
    DefaultGeometryEnv env;
    EnvGuard summary("SHMPI_RING_SUMMARY", std::nullopt);
    EXPECT_EQ(Geometry::for_ranks(2).ring_summary, 0u);
    EXPECT_EQ(Geometry::for_ranks(shm::kRingSummaryRanks).ring_summary, 0u);
    EXPECT_EQ(Geometry::for_ranks(shm::kRingSummaryRanks + 1).ring_summary, 1u);
    // One row per receiver, a word per sender, each row on whole lines of
    // its own, between the rings and the world's collective region.
    for (std::uint32_t n : {1u, 2u, 16u, 17u, 100u}) {
        const Geometry g = Geometry::for_ranks(n);
        EXPECT_EQ(g.heads_row() % kLine, 0u);
        EXPECT_GE(g.heads_row(), n * sizeof(std::uint64_t));
        EXPECT_LT(g.heads_row(), n * sizeof(std::uint64_t) + kLine);
        EXPECT_GE(g.heads_offset(), g.rings_offset() + std::size_t{n} * n * g.ring_stride());
        EXPECT_LE(g.heads_offset() + n * g.heads_row(), g.coll_offset());
    }
    {
        EnvGuard on("SHMPI_RING_SUMMARY", "1");
        EXPECT_EQ(Geometry::for_ranks(2).ring_summary, 1u);
    }
    {
        EnvGuard off("SHMPI_RING_SUMMARY", "0");
        EXPECT_EQ(Geometry::for_ranks(200).ring_summary, 0u);
    }
    for (const char* bad : {"2", "-1", "yes"}) {
        SCOPED_TRACE(std::string("SHMPI_RING_SUMMARY=") + bad);
        EnvGuard summary_bad("SHMPI_RING_SUMMARY", bad);
        try {
            (void)Geometry::for_ranks(4);
            ADD_FAILURE() << "accepted";
        } catch (const SegmentError& e) {
            EXPECT_TRUE(contains(e.what(), "SHMPI_RING_SUMMARY")) << e.what();
            EXPECT_TRUE(contains(e.what(), bad)) << "the message should name the bad value: " << e.what();
        }
    }
}

TEST(Geometry, EnvironmentSetsPoolRegions) {
    DefaultGeometryEnv env;
    const Geometry base = Geometry::for_ranks(4);
    {
        EnvGuard regions("SHMPI_COLL_REGIONS", "0");
        const Geometry g = Geometry::for_ranks(4);
        EXPECT_EQ(g.pool_regions, 0u);
        EXPECT_EQ(g.total_bytes(), g.pool_regions_offset()) << "no pool, no region bytes";
        EXPECT_LT(g.total_bytes(), base.total_bytes());
    }
    {
        EnvGuard regions("SHMPI_COLL_REGIONS", "64");
        EXPECT_EQ(Geometry::for_ranks(4).pool_regions, 64u);
    }
    for (const char* bad : {"65", "1000", "-1", "many"}) {
        SCOPED_TRACE(std::string("SHMPI_COLL_REGIONS=") + bad);
        EnvGuard regions("SHMPI_COLL_REGIONS", bad);
        try {
            (void)Geometry::for_ranks(4);
            ADD_FAILURE() << "accepted";
        } catch (const SegmentError& e) {
            EXPECT_TRUE(contains(e.what(), "SHMPI_COLL_REGIONS")) << e.what();
            EXPECT_TRUE(contains(e.what(), bad)) << "the message should name the bad value: " << e.what();
            EXPECT_TRUE(contains(e.what(), "0..64")) << "the message should give the range: " << e.what();
        }
    }
}

TEST_F(SegmentTest, WideCellsFollowEachWorldMember) {
    DefaultGeometryEnv env;
    std::optional<Segment> seg;
    try {
        seg.emplace(Segment::create(Geometry::for_ranks(3, 1), getpid()));
    } catch (const SegmentError& e) {
        FAIL() << "Segment::create failed: " << e.what();
    }
    const shm::CollRegion world = seg->world_coll_region();
    EXPECT_EQ(world.wide_bytes, std::size_t{4} << 20);
    EXPECT_EQ(seg->header().wide_cell_bytes, 4u << 20);
    const auto* base = reinterpret_cast<const std::byte*>(&seg->header());
    // Member 2's cells and wide cells end before the stream buffers.
    const std::byte* world_end = world.cells + 3 * (world.cell_bytes + world.wide_bytes);
    EXPECT_LE(world_end, base + seg->header().stream_offset);
    for (std::uint32_t k = 0; k < seg->pool_regions(); ++k) {
        const shm::CollRegion r = seg->pool_region(k);
        EXPECT_EQ(r.wide_bytes, 0u) << "region " << k << ": the pool's regions have no wide cells";
        EXPECT_GE(reinterpret_cast<const std::byte*>(r.members), world_end) << "region " << k;
    }
    // A second process sees the same (attach() checks every offset).
    const int fd = dup(seg->fd());
    ASSERT_GE(fd, 0);
    Segment other = Segment::attach(fd, 3);
    EXPECT_EQ(other.world_coll_region().wide_bytes, std::size_t{4} << 20);
    EXPECT_EQ(other.world_coll_region().cells - reinterpret_cast<const std::byte*>(&other.header()),
              world.cells - base);
}

TEST_F(SegmentTest, PoolRegionsAreFreeDistinctAndInside) {
    auto seg = make_segment(3);
    ASSERT_TRUE(seg);
    ASSERT_EQ(seg->pool_regions(), 8u);
    const auto* base = reinterpret_cast<const std::byte*>(&seg->header());
    const std::byte* end = base + seg->size();
    const shm::CollRegion world = seg->world_coll_region();
    const std::byte* last_end = nullptr;
    for (std::uint32_t k = 0; k < seg->pool_regions(); ++k) {
        SCOPED_TRACE("region " + std::to_string(k));
        const shm::PoolEntry& e = seg->pool_entry(k);
        EXPECT_EQ(e.owner.load(), 0u) << "a new pool's regions are free";
        EXPECT_EQ(e.users.load(), 0u);
        const shm::CollRegion r = seg->pool_region(k);
        EXPECT_EQ(r.count, 3u) << "room for every rank";
        EXPECT_EQ(r.cell_bytes, world.cell_bytes) << "the world region's shape";
        const auto* start = reinterpret_cast<const std::byte*>(r.members);
        EXPECT_GE(r.cells, start + 3 * sizeof(shm::CollMember)) << "cells overlap the members";
        if (last_end != nullptr) {
            EXPECT_GE(start, last_end) << "overlaps the previous region";
        }
        last_end = r.cells + 3 * r.cell_bytes;
        EXPECT_LE(last_end, end) << "runs past the segment";
        EXPECT_GE(start, reinterpret_cast<const std::byte*>(world.members) + 3 * world.cell_bytes)
            << "overlaps the world region";
        for (std::uint32_t m = 0; m < 3; ++m) {
            EXPECT_EQ(r.members[m].gather.load(), 0u);
            EXPECT_EQ(r.members[m].lines[0].release.load(), 0u);
        }
    }
    EXPECT_EQ(last_end, end) << "the last region ends the segment";
}

TEST_F(SegmentTest, AttachRejectsInconsistentPool) {
    auto seg = make_segment(2);
    ASSERT_TRUE(seg);
    const std::size_t size = seg->size();
    HeaderTamper t(seg->header(), seg->fd());
    using H = shm::SegmentHeader;
    t.rejects([](H& h) { h.pool_offset += 4096; }, "pool_offset", "moved control words");
    t.rejects([size](H& h) { h.pool_regions_offset = size - 4096; }, "pool_regions_offset",
              "regions that run past the end of the file");
    t.rejects([](H& h) { h.pool_region_stride *= 2; }, "pool_region_stride", "regions twice as far apart");
    t.rejects([](H& h) { h.pool_region_stride = 0; }, "pool_region_stride", "overlapping regions");
    t.rejects([](H& h) { h.pool_regions = 65; }, "pool_regions is 65", "65 regions");
    t.rejects([](H& h) { h.pool_regions = 0xffffffffu; }, "", "2^32 - 1 regions");
    t.rejects([](H& h) { h.pool_regions = 9; }, "", "more regions than the file holds");
    t.rejects([](H& h) { h.pool_regions = 7; }, "", "fewer regions than the file holds");
}

TEST_F(SegmentTest, SegmentWithoutPoolAttaches) {
    DefaultGeometryEnv env;
    EnvGuard regions("SHMPI_COLL_REGIONS", "0");
    Segment seg = Segment::create(Geometry::for_ranks(2), getpid());
    EXPECT_EQ(seg.pool_regions(), 0u);
    EXPECT_EQ(attach_error(seg.fd(), 2), "");
}

TEST_F(SegmentTest, AttachRejectsHugeCountsWithoutOverflow) {
    // Values whose products overflow 64 bits if multiplied unchecked; each
    // must be refused by a message, not wrap around into a small layout.
    auto seg = make_segment(2);
    ASSERT_TRUE(seg);
    HeaderTamper t(seg->header(), seg->fd());
    using H = shm::SegmentHeader;
    t.rejects([](H& h) { h.nranks = 1u << 20; }, "", "2^20 ranks", 1u << 20);
    t.rejects([](H& h) { h.nranks = 0xffffffffu; }, "", "2^32 - 1 ranks", 0xffffffffu);
    t.rejects([](H& h) { h.ring_cells = 1u << 31; }, "ring_cells", "2^31 cells");
    t.rejects([](H& h) { h.cell_bytes = 0xffffff80u; }, "cell_bytes", "huge cells");
    t.rejects(
        [](H& h) {
            h.ring_cells = 1u << 24;
            h.cell_bytes = 1u << 24;
        },
        "", "2^48-byte rings");
}

TEST_F(SegmentTest, LayoutIsAPrivateCopyThatPeersCannotMove) {
    // A corrupted peer rewrites the shared header after this rank attached:
    // the rank's rings, slots and region stay where the checked layout put
    // them, inside the mapping.
    auto seg = make_segment(3);
    ASSERT_TRUE(seg);
    const int fd = dup(seg->fd());
    ASSERT_GE(fd, 0);
    Segment mine = Segment::attach(fd, 3);
    const shm::Layout before = mine.layout();
    const std::byte* ring_before = mine.ring(2, 1).try_claim();  // empty ring: its first cell
    const auto* slot_before = &mine.slot(2);
    const auto* member_before = mine.world_coll_region().members;

    shm::SegmentHeader& shared = seg->header();
    shared.nranks = 1000;
    shared.rings_offset = 1ull << 40;
    shared.ring_stride = 1ull << 40;
    shared.ring_cells = 1u << 20;
    shared.ranks_offset = 1ull << 40;
    shared.coll_offset = 1ull << 40;
    shared.coll_cell_bytes = 1u << 30;
    shared.wide_cell_bytes = 1u << 30;

    EXPECT_EQ(mine.nranks(), 3u);
    EXPECT_EQ(mine.layout().rings_offset, before.rings_offset);
    EXPECT_EQ(mine.ring(2, 1).try_claim(), ring_before);
    EXPECT_EQ(mine.ring(2, 1).capacity(), before.geometry.ring_cells);
    EXPECT_EQ(&mine.slot(2), slot_before);
    EXPECT_EQ(mine.world_coll_region().members, member_before);
    EXPECT_EQ(mine.world_coll_region().cell_bytes, before.geometry.coll_cell_bytes);
    EXPECT_EQ(mine.world_coll_region().wide_bytes, before.geometry.wide_cell_bytes);
    EXPECT_EQ(mine.world_coll_region().count, 3u);
}

TEST_F(SegmentTest, CreateReservesEveryPage) {
    // posix_fallocate: the pages exist before any rank runs, so a /dev/shm
    // that fills up later cannot turn a rank's first touch into SIGBUS.
    auto seg = make_segment(4);
    ASSERT_TRUE(seg);
    struct stat st {};
    ASSERT_EQ(fstat(seg->fd(), &st), 0) << std::strerror(errno);
    EXPECT_GE(static_cast<std::size_t>(st.st_blocks) * 512, seg->size())
        << "the segment's pages are not reserved";
}

/// Names in /dev/shm of segments this process created (shmpi-UID-PID-...).
std::vector<std::string> my_segment_names() {
    const std::string prefix = "shmpi-" + std::to_string(getuid()) + "-" + std::to_string(getpid()) + "-";
    std::vector<std::string> out;
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator("/dev/shm", ec)) {
        const std::string name = e.path().filename().string();
        if (name.rfind(prefix, 0) == 0) out.push_back(name);
    }
    return out;
}

TEST_F(SegmentTest, CreateLooksAtStopAfterEachReserveStep) {
    // mpirun's stop (a signal, --timeout) is heard while a large segment's
    // pages are reserved: after each kReserveStep bytes, not at the end.
    DefaultGeometryEnv env;
    const Geometry g = Geometry::for_ranks(64);
    ASSERT_GT(g.total_bytes(), Segment::kReserveStep) << "the test needs more than one step";
    const std::size_t steps = (g.total_bytes() + Segment::kReserveStep - 1) / Segment::kReserveStep;
    std::size_t looks = 0;
    {
        Segment seg = Segment::create(g, getpid(), Segment::Name::Keep, [&looks] {
            ++looks;
            return false;
        });
        EXPECT_EQ(looks, steps);
        struct stat st {};
        ASSERT_EQ(fstat(seg.fd(), &st), 0) << std::strerror(errno);
        EXPECT_GE(static_cast<std::size_t>(st.st_blocks) * 512, seg.size()) << "not every page is reserved";
    }

    // Told to stop at the first look: SegmentStopped, no name left, and no
    // descriptor (the next open gets the lowest free one, as before).
    const int lowest_before = dup(0);
    ASSERT_GE(lowest_before, 0);
    close(lowest_before);
    looks = 0;
    EXPECT_THROW(Segment::create(g, getpid(), Segment::Name::Keep,
                                 [&looks] {
                                     ++looks;
                                     return true;
                                 }),
                 shm::SegmentStopped);
    EXPECT_EQ(looks, 1u);
    EXPECT_TRUE(my_segment_names().empty()) << "left in /dev/shm: " << my_segment_names().front();
    const int lowest_after = dup(0);
    EXPECT_EQ(lowest_after, lowest_before) << "a descriptor was left open";
    close(lowest_after);
}

}  // namespace

TEST(Memory, MeminfoAvailableAddsMemAvailableAndSwapFree) {
    const char* text =
        "MemTotal:       24576000 kB\n"
        "MemFree:         1000000 kB\n"
        "MemAvailable:    2000000 kB\n"
        "SwapTotal:       1048576 kB\n"
        "SwapFree:         524288 kB\n";
    EXPECT_DOUBLE_EQ(shm::meminfo_available(text), (2000000.0 + 524288.0) * 1024.0);
    EXPECT_EQ(shm::meminfo_available("MemTotal: 1 kB\nSwapFree: 0 kB\n"), -1);  // no MemAvailable
    EXPECT_EQ(shm::meminfo_available(""), -1);
}

TEST(Memory, ThisMachineHasSomeAndNotMoreThanRamAndSwap) {
    const double avail = shm::memory_available();
    ASSERT_GT(avail, 0);
    struct sysinfo info {};
    ASSERT_EQ(sysinfo(&info), 0);
    const double total =
        (static_cast<double>(info.totalram) + static_cast<double>(info.totalswap)) * info.mem_unit;
    EXPECT_LE(avail, total);
}

// ---- the launcher's deadlock check ----

TEST_F(SegmentTest, ActivityMovesWithEveryCounterARankWaitsOn) {
    auto seg = make_segment(3);
    ASSERT_TRUE(seg);
    ASSERT_GT(seg->pool_regions(), 1u);
    std::uint64_t last = seg->activity();
    EXPECT_EQ(seg->activity(), last) << "nothing moved";
    // Each change a waiting rank could be woken by, one at a time: the
    // digest differs from the one before every time.
    std::vector<std::pair<const char*, std::function<void()>>> changes = {
        {"doorbell", [&] { seg->slot(2).doorbell.fetch_add(1); }},
        {"rank state", [&] { seg->slot(1).state.store(shm::kAttached); }},
        {"stream bytes packed", [&] { seg->slot(0).stream_packed.fetch_add(4096); }},
        {"stream bytes taken", [&] { seg->slot(0).stream_taken.fetch_add(4096); }},
        {"a ring's cell published",
         [&] {
             shm::Ring ring = seg->ring(2, 1);
             ASSERT_NE(ring.try_claim(), nullptr);
             ring.publish();
         }},
        {"that cell consumed",
         [&] {
             shm::Ring ring = seg->ring(2, 1);
             ASSERT_NE(ring.try_peek(), nullptr);
             ring.release();
         }},
        {"world release flag", [&] { seg->world_coll_region().members[1].lines[5].release.store(7); }},
        {"world gather flag", [&] { seg->world_coll_region().members[2].gather.store(3); }},
        {"world call record", [&] { seg->world_coll_region().members[0].calls[9].call.store(10); }},
        {"pool entry", [&] { seg->pool_entry(1).owner.store(5); }},
        {"pool region flag", [&] { seg->pool_region(1).members[2].gather.store(1); }},
        {"job state", [&] { seg->header().abort_state.store(shm::kAborting); }},
    };
    for (auto& [what, change] : changes) {
        SCOPED_TRACE(what);
        change();
        const std::uint64_t now = seg->activity();
        EXPECT_NE(now, last) << "the digest missed the change";
        EXPECT_EQ(seg->activity(), now) << "the same segment, the same digest";
        last = now;
    }
    // What a rank writes about its own sleep is not activity: a rank that
    // wakes at the end of each nap and sleeps again moves nothing.
    shm::RankSlot& s = seg->slot(1);
    s.parked.store(1);
    s.parked_until.fetch_add(50'000'000);
    s.parked_on.store(s.doorbell.load());
    s.parked_in[0].store(0x12345678);
    EXPECT_EQ(seg->activity(), last);
}
