// The point-to-point engine against forged cells: every field of a cell that
// steers the receiver is checked before it is used, and a bad one ends in an
// MPI_ERR_INTERN error that names the sender and the field, not in a wild
// write, a wrong MPI_SOURCE or a hang.
//
// Each case makes a real 2-rank segment, writes the forged cells into the
// ring from rank 0 to rank 1 (and, for streamed sends, rank 0's stream line)
// as rank 0 would, then forks a child that attaches as rank 1, runs the
// engine (posting a receive where the case needs one) and reports through
// its exit status whether it got the expected error.  One positive case
// shows that a well-formed message built the same way is received intact.
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "../attach_rank.hpp"
#include "dtype/datatype.hpp"
#include "errors.hpp"
#include "p2p.hpp"
#include "shm/layout.hpp"
#include "shm/segment.hpp"
#include "shm/transport.hpp"

namespace {

using shmpi::MpiError;
using shmpi::p2p::Kind;
using shmpi::p2p::Wire;
namespace shm = shmpi::shm;
namespace p2p = shmpi::p2p;

constexpr std::uint32_t kContext = 0;

/// Writes `w` and `payload` into the next cell of the ring 0 -> 1.
void put_cell(const shm::Segment& seg, Wire w, const void* payload = nullptr, std::size_t n = 0) {
    shm::Ring ring = seg.ring(0, 1);
    std::byte* cell = ring.try_claim();
    ASSERT_NE(cell, nullptr) << "ring full";
    if (w.frag == 0 && n > 0) w.frag = static_cast<std::uint32_t>(n);
    std::memcpy(cell, &w, sizeof w);
    if (n > 0) std::memcpy(cell + p2p::kWireBytes, payload, n);
    ring.publish();
}

Wire eager(std::int32_t src, std::uint64_t total) {
    Wire w{};
    w.kind = Kind::Eager;
    w.tag = 5;
    w.context = kContext;
    w.src = src;
    w.total = total;
    return w;
}

Wire streamed_rts(std::uint64_t token, std::uint64_t total) {
    Wire w{};
    w.kind = Kind::Rts;
    w.flags = p2p::kStreamed;
    w.tag = 5;
    w.context = kContext;
    w.src = 0;
    w.total = total;
    w.sender_token = token;
    return w;
}

/// Runs `body` as rank 1 of `seg` in a child process.  Returns the child's
/// error text: "" when body returned normally, the MpiError's message when
/// it threw one, "other: ..." for anything else.
std::string run_rank1(shm::Segment& seg, const std::function<void(p2p::Engine&)>& body) {
    const shmpi_test::Child child = shmpi_test::spawn([&] {
        try {
            auto transport = shmpi_test::attach_rank(seg, 1, 2);
            p2p::Engine engine(*transport);
            body(engine);
        } catch (const MpiError& e) {
            const std::string out = e.what();
            return out.empty() ? std::string("(empty message)") : out;
        }
        return std::string();
    });
    return shmpi_test::collect(child).value_or("other: child died");
}

class Wire_ : public ::testing::Test {
protected:
    void SetUp() override {
        shm::Geometry g = shm::Geometry::for_ranks(2);
        seg_.emplace(shm::Segment::create(g, getpid()));
        seg_->unlink();
        byte_ = shmpi::dtype::predefined(MPI_BYTE);
        ASSERT_NE(byte_, nullptr);
    }
    /// Posts a receive of up to `n` bytes from rank 0 and makes progress
    /// until it completes (a bounded number of times: the forged cells are
    /// all in the ring before the engine starts).
    std::function<void(p2p::Engine&)> receive(std::vector<std::byte>& into, MPI_Status& st) {
        return [this, &into, &st](p2p::Engine& e) {
            p2p::Request* r =
                e.irecv(kContext, 0, MPI_ANY_TAG, into.data(), static_cast<std::int64_t>(into.size()), *byte_);
            for (int i = 0; i < 1000 && !r->done; ++i) e.progress();
            if (!r->done) throw std::runtime_error("receive did not complete");
            st = r->status;
            e.release(r);
        };
    }
    std::optional<shm::Segment> seg_;
    const shmpi::dtype::Datatype* byte_ = nullptr;
};

TEST_F(Wire_, WellFormedEagerMessageArrives) {
    const char msg[] = "twelve bytes";
    put_cell(*seg_, eager(0, sizeof msg), msg, sizeof msg);
    std::vector<std::byte> into(64);
    MPI_Status st{};
    std::string text;
    // The check runs in the child; it reports a mismatch as an error text.
    text = run_rank1(*seg_, [&](p2p::Engine& e) {
        receive(into, st)(e);
        if (std::memcmp(into.data(), msg, sizeof msg) != 0) throw MpiError(MPI_ERR_OTHER, "payload differs");
        if (st.MPI_SOURCE != 0 || st.MPI_TAG != 5) throw MpiError(MPI_ERR_OTHER, "status differs");
    });
    EXPECT_EQ(text, "");
}

TEST_F(Wire_, SourceOutsideTheJobIsRefused) {
    put_cell(*seg_, eager(7, 4), "abcd", 4);
    std::vector<std::byte> into(64);
    MPI_Status st{};
    const std::string text = run_rank1(*seg_, receive(into, st));
    EXPECT_NE(text.find("source rank 7 in a job of 2 ranks"), std::string::npos) << text;
}

TEST_F(Wire_, NegativeSourceIsRefused) {
    put_cell(*seg_, eager(-3, 4), "abcd", 4);
    std::vector<std::byte> into(64);
    MPI_Status st{};
    const std::string text = run_rank1(*seg_, receive(into, st));
    EXPECT_NE(text.find("source rank -3"), std::string::npos) << text;
}

TEST_F(Wire_, FragmentLongerThanACellIsRefused) {
    Wire w = eager(0, 100000);
    w.frag = 1u << 20;
    put_cell(*seg_, w);
    const std::string text = run_rank1(*seg_, [](p2p::Engine& e) { e.progress(); });
    EXPECT_NE(text.find("fragment of"), std::string::npos) << text;
    EXPECT_NE(text.find("rank 0"), std::string::npos) << text;
}

TEST_F(Wire_, ContinuationWithoutAMessageIsRefused) {
    Wire w{};
    w.kind = Kind::Cont;
    w.frag = 8;
    put_cell(*seg_, w, "12345678", 8);
    const std::string text = run_rank1(*seg_, [](p2p::Engine& e) { e.progress(); });
    EXPECT_NE(text.find("continuation without a message"), std::string::npos) << text;
}

TEST_F(Wire_, FinForAnUnknownSendIsRefused) {
    Wire w{};
    w.kind = Kind::Fin;
    w.sender_token = 12345;
    put_cell(*seg_, w);
    const std::string text = run_rank1(*seg_, [](p2p::Engine& e) { e.progress(); });
    EXPECT_NE(text.find("unknown request 12345"), std::string::npos) << text;
}

TEST_F(Wire_, StreamLineOfAnotherSendIsRefused) {
    // The Rts names send 41; rank 0's stream line says 42.
    shm::RankSlot& s0 = seg_->slot(0);
    s0.stream_token.store(42, std::memory_order_relaxed);
    s0.stream_packed.store(0, std::memory_order_relaxed);
    put_cell(*seg_, streamed_rts(41, 100000));
    std::vector<std::byte> into(100000);
    MPI_Status st{};
    const std::string text = run_rank1(*seg_, receive(into, st));
    EXPECT_NE(text.find("stream line names send 42, the Rts send 41"), std::string::npos) << text;
}

TEST_F(Wire_, StreamLongerThanItsMessageIsRefused) {
    shm::RankSlot& s0 = seg_->slot(0);
    s0.stream_token.store(41, std::memory_order_relaxed);
    s0.stream_packed.store(1u << 30, std::memory_order_relaxed);
    put_cell(*seg_, streamed_rts(41, 100000));
    std::vector<std::byte> into(100000);
    MPI_Status st{};
    const std::string text = run_rank1(*seg_, receive(into, st));
    EXPECT_NE(text.find("for a 100000-byte message"), std::string::npos) << text;
}

TEST_F(Wire_, SecondStreamFromOneSenderIsRefused) {
    // Two streamed Rts from rank 0 while the first is still open (nothing
    // packed yet), both matched by posted receives.
    shm::RankSlot& s0 = seg_->slot(0);
    s0.stream_token.store(41, std::memory_order_relaxed);
    s0.stream_packed.store(0, std::memory_order_relaxed);
    put_cell(*seg_, streamed_rts(41, 100000));
    put_cell(*seg_, streamed_rts(43, 100000));
    const std::string text = run_rank1(*seg_, [this](p2p::Engine& e) {
        std::vector<std::byte> a(100000), b(100000);
        p2p::Request* r1 = e.irecv(kContext, 0, MPI_ANY_TAG, a.data(), 100000, *byte_);
        p2p::Request* r2 = e.irecv(kContext, 0, MPI_ANY_TAG, b.data(), 100000, *byte_);
        for (int i = 0; i < 100; ++i) e.progress();
        e.release(r1);
        e.release(r2);
    });
    EXPECT_NE(text.find("a second stream while one is open"), std::string::npos) << text;
}

TEST_F(Wire_, StreamedMessageArrivesWhole) {
    // The positive case for streams: rank 0's buffer holds the whole
    // message and its line says so; the receive gets every byte.
    constexpr std::size_t kBytes = 100000;
    ASSERT_GE(seg_->layout().geometry.stream_bytes, kBytes);
    std::byte* buf = seg_->stream_buffer(0);
    for (std::size_t i = 0; i < kBytes; ++i) buf[i] = static_cast<std::byte>(i * 7 + 3);
    shm::RankSlot& s0 = seg_->slot(0);
    s0.stream_token.store(41, std::memory_order_relaxed);
    s0.stream_packed.store(kBytes, std::memory_order_relaxed);
    put_cell(*seg_, streamed_rts(41, kBytes));
    std::vector<std::byte> into(kBytes);
    MPI_Status st{};
    const std::string text = run_rank1(*seg_, [&](p2p::Engine& e) {
        receive(into, st)(e);
        for (std::size_t i = 0; i < kBytes; ++i) {
            if (into[i] != static_cast<std::byte>(i * 7 + 3)) throw MpiError(MPI_ERR_OTHER, "byte differs");
        }
    });
    EXPECT_EQ(text, "");
    // The receiver handed the whole buffer back before its Fin.
    EXPECT_EQ(s0.stream_taken.load(std::memory_order_relaxed), kBytes);
}

}  // namespace
