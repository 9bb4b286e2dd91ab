// The pool of collective regions, in one process: a new segment's regions
// are free, and a team that takes a region over starts its calls above
// every flag its predecessor left (ShmTeam::last_call_in), whatever member
// count either had.  The claim and release protocol itself runs in the
// multi-rank test comm_pool.c.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <optional>

#include "coll/shm_team.hpp"
#include "shm/segment.hpp"

namespace shm = shmpi::shm;
using shmpi::coll::ShmTeam;

namespace {

std::optional<shm::Segment> make_segment(std::uint32_t nranks) {
    struct stat st {};
    if (stat("/dev/shm", &st) != 0) return std::nullopt;
    try {
        shm::Geometry g = shm::Geometry::for_ranks(nranks);
        g.pool_regions = 4;
        return shm::Segment::create(g, getpid());
    } catch (const shm::SegmentError&) {
        return std::nullopt;
    }
}

std::uint64_t step(std::uint64_t call, std::uint64_t round) { return (call << ShmTeam::kStepBits) + round; }

}  // namespace

TEST(Pool, NewRegionsAreFreeAndHoldNoStep) {
    auto seg = make_segment(4);
    if (!seg) GTEST_SKIP() << "no usable shared memory";
    ASSERT_EQ(seg->pool_regions(), 4u);
    for (std::uint32_t k = 0; k < 4; ++k) {
        EXPECT_EQ(seg->pool_entry(k).owner.load(), 0u);
        EXPECT_EQ(ShmTeam::last_call_in(seg->pool_region(k), 4), 0u);
    }
}

TEST(Pool, LastCallSeesEveryFlagOfTheMembersInUse) {
    auto seg = make_segment(4);
    if (!seg) GTEST_SKIP() << "no usable shared memory";
    const shm::CollRegion r = seg->pool_region(1);
    // A predecessor of 3 members: member 1's last release line used call 7
    // (round 3), member 0's gather reached call 5, member 2 nothing yet.
    r.members[1].lines[7 % shm::kCollLines].release.store(step(7, 3));
    r.members[1].lines[6 % shm::kCollLines].release.store(step(6, 0));
    r.members[0].gather.store(step(5, 100));
    // An older, larger holder left member 3 further on.
    r.members[3].gather.store(step(40, 0));

    EXPECT_EQ(ShmTeam::last_call_in(r, 1), 5u) << "member 0 alone";
    EXPECT_EQ(ShmTeam::last_call_in(r, 2), 7u) << "a release line counts, not only gather";
    EXPECT_EQ(ShmTeam::last_call_in(r, 3), 7u);
    EXPECT_EQ(ShmTeam::last_call_in(r, 4), 40u) << "a team of 4 must start above member 3's flags";
    EXPECT_EQ(ShmTeam::last_call_in(seg->pool_region(2), 4), 0u) << "regions are independent";

    // A team that starts its calls at last + 1 (as comm_create.cpp does)
    // never sees an old flag as one of its steps.
    const std::uint64_t first = ShmTeam::last_call_in(r, 4) + 1;
    const std::uint64_t first_step = (first + 1) << ShmTeam::kStepBits;
    for (std::uint32_t m = 0; m < 4; ++m) {
        EXPECT_FALSE(shmpi::coll::reached(r.members[m].gather.load(), first_step)) << "member " << m;
        for (const shm::CollLine& l : r.members[m].lines) {
            EXPECT_FALSE(shmpi::coll::reached(l.release.load(), first_step)) << "member " << m;
        }
    }
}
