// coll::Scratch: the collectives' temporary buffers, kept per thread between
// calls (src/coll/scratch.hpp).
#include "coll/scratch.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <thread>

namespace {

using shmpi::coll::Scratch;

TEST(Scratch, ReusesAKeptBufferThatIsLargeEnough) {
    Scratch::drop_kept();
    std::byte* first = nullptr;
    {
        const Scratch s(1 << 20);
        first = s.get();
        std::memset(s.get(), 0x5a, 1 << 20);  // the whole size is usable
    }
    EXPECT_GE(Scratch::kept_bytes(), std::size_t{1} << 20);
    const Scratch smaller(1 << 19);
    EXPECT_EQ(smaller.get(), first);
}

TEST(Scratch, NestedLeasesGetDistinctBuffers) {
    const Scratch outer(4096);
    const Scratch inner(4096);
    EXPECT_NE(outer.get(), inner.get());
    std::memset(outer.get(), 1, 4096);
    std::memset(inner.get(), 2, 4096);
    EXPECT_EQ(outer.get()[4095], std::byte{1});
}

TEST(Scratch, ZeroBytesStillGivesAValidBuffer) {
    const Scratch s(0);
    ASSERT_NE(s.get(), nullptr);
    s.get()[0] = std::byte{7};
}

TEST(Scratch, KeepsAtMostTheLargestBuffersUpToTheCap) {
    Scratch::drop_kept();
    { const Scratch huge(static_cast<std::int64_t>(Scratch::kKeepMax) + 4096); }
    EXPECT_EQ(Scratch::kept_bytes(), 0u) << "a buffer over kKeepMax is not kept";
    {
        const Scratch a(1000);
        const Scratch b(2000);
        const Scratch c(3000);
    }
    // Three buffers came back to two slots: the two largest stay.
    EXPECT_EQ(Scratch::kept_bytes(), 5000u);
    { const Scratch big(1 << 16); }
    EXPECT_EQ(Scratch::kept_bytes(), 3000u + (1u << 16)) << "the smallest kept buffer made room";
    EXPECT_LE(Scratch::kept_bytes(), Scratch::kKeepSlots * Scratch::kKeepMax);
}

TEST(Scratch, EachThreadHasItsOwnPool) {
    Scratch::drop_kept();
    { const Scratch mine(1 << 16); }
    std::size_t other_kept = 1;
    std::thread t([&] {
        other_kept = Scratch::kept_bytes();  // nothing of this thread's pool
        const Scratch s(1 << 16);
        std::memset(s.get(), 3, 1 << 16);
    });
    t.join();
    EXPECT_EQ(other_kept, 0u);
    EXPECT_EQ(Scratch::kept_bytes(), std::size_t{1} << 16);
}

}  // namespace
