#include "coll/linear_p2p.hpp"

#include <fmt/format.h>

#include <chrono>
#include <cstring>
#include <exception>

#include "coll/linear.hpp"
#include "coll/shm_team.hpp"
#include "dtype/datatype.hpp"
#include "errors.hpp"
#include "p2p.hpp"

namespace shmpi::coll::linear {
namespace {

std::uint32_t world_of(const Team& team, int peer) {
    return (*team.world)[static_cast<std::size_t>(peer)];
}

std::unique_ptr<MpiError> own_mismatch(std::int64_t from_bytes, std::int64_t to_bytes, int rank) {
    if (from_bytes == to_bytes) return nullptr;
    return std::make_unique<MpiError>(
        from_bytes > to_bytes ? MPI_ERR_TRUNCATE : MPI_ERR_COUNT,
        fmt::format("rank {} sends {} bytes to itself but expects {} (the datatype signatures of "
                    "its send and receive arguments differ)",
                    rank, from_bytes, to_bytes));
}

/// Throws when a received message did not have the expected size.
void check_size(const Team& team, int peer, std::uint64_t got, std::int64_t want) {
    const auto w = static_cast<std::uint64_t>(want);
    if (got == w) return;
    throw MpiError(got > w ? MPI_ERR_TRUNCATE : MPI_ERR_COUNT,
                   fmt::format("rank {} sent {} bytes to rank {}, which expected {} (the datatype "
                               "signatures of the two calls differ)",
                               peer, got, team.rank, want));
}

/// How long a wait goes before its polls also compare call signatures:
/// a peer in the same call usually answers well within it, and the first
/// look at a peer's signature is a cache miss (the peer has just written
/// it), which cost a forced-linear 2-rank MPI_Gather a fifth of its time.
constexpr std::chrono::microseconds kCheckAfter{20};

/// Waits for `r`.  On a team in shared memory, once the wait has lasted
/// kCheckAfter, each poll that finds `r` not done also compares the
/// signature every member published for this call with ours
/// (ShmTeam::check_call()), and throws that error: a
/// member that refused its own arguments (MPI_ERRORS_RETURN) and went on
/// to its next collective call would otherwise leave us waiting for a
/// message that never comes.  (The error is thrown after the wait, not from
/// inside the transport's wait loop.)
void wait_for(const Team& team, p2p::Request& r) {
    if (team.shm == nullptr) {
        team.engine->wait(r);
        return;
    }
    // By time, not by a count of polls: a rank among more ranks than CPUs,
    // or on a loaded machine, may poll only a few times while it yields,
    // then once per nap of its sleep (800 ms).
    using Clock = std::chrono::steady_clock;
    const Clock::time_point start = Clock::now();
    std::exception_ptr mismatch;
    team.engine->wait_until([&] {
        if (r.done) return true;
        if (Clock::now() - start < kCheckAfter) return false;
        try {
            team.shm->check_call();
        } catch (const MpiError&) {
            mismatch = std::current_exception();
            return true;
        }
        return false;
    });
    if (mismatch) std::rethrow_exception(mismatch);
}

}  // namespace

Exchange::~Exchange() {
    for (const Posted& p : posted_) team_.engine->release(p.req);
}

void Exchange::send(int peer, const void* buf, std::int64_t bytes) {
    send(peer, buf, bytes, dtype::byte_type());
}

void Exchange::recv(int peer, void* buf, std::int64_t bytes) { recv(peer, buf, bytes, dtype::byte_type()); }

void Exchange::send(int peer, const void* buf, std::int64_t count, const dtype::Datatype& type) {
    p2p::Request* r = team_.engine->isend(team_.context, team_.rank, tag_, world_of(team_, peer), buf, count,
                                          type, p2p::Mode::Standard);
    posted_.push_back({r, peer, -1});
}

void Exchange::recv(int peer, void* buf, std::int64_t count, const dtype::Datatype& type) {
    p2p::Request* r = team_.engine->irecv(team_.context, peer, tag_, buf, count, type);
    posted_.push_back({r, peer, count * type.size});
}

void Exchange::wait() {
    for (const Posted& p : posted_) wait_for(team_, *p.req);
    // Everything is complete: find the first receive of the wrong size, then
    // give the requests back before reporting it.
    int bad_peer = -1;
    std::uint64_t got = 0;
    std::int64_t want = 0;
    for (const Posted& p : posted_) {
        if (bad_peer < 0 && p.want >= 0 && p.req->incoming != static_cast<std::uint64_t>(p.want)) {
            bad_peer = p.peer;
            got = p.req->incoming;
            want = p.want;
        }
        team_.engine->release(p.req);
    }
    posted_.clear();
    if (bad_peer >= 0) check_size(team_, bad_peer, got, want);
}

Uniform::Uniform(int n, std::int64_t block)
    : bytes(static_cast<std::size_t>(n), block), offsets(static_cast<std::size_t>(n)) {
    for (std::size_t r = 0; r < offsets.size(); ++r) offsets[r] = static_cast<std::int64_t>(r) * block;
}

Consecutive::Consecutive(const std::int64_t* counts, int n, std::int64_t elem_bytes)
    : bytes(static_cast<std::size_t>(n)), offsets(static_cast<std::size_t>(n)) {
    std::int64_t at = 0;
    for (std::size_t r = 0; r < bytes.size(); ++r) {
        offsets[r] = at;
        bytes[r] = counts[r] * elem_bytes;
        at += bytes[r];
    }
}

std::unique_ptr<MpiError> copy_own(const void* from, std::int64_t from_bytes, void* to,
                                   std::int64_t to_bytes, int rank) {
    const std::int64_t n = from_bytes < to_bytes ? from_bytes : to_bytes;
    if (n > 0 && from != to) std::memcpy(to, from, static_cast<std::size_t>(n));
    return own_mismatch(from_bytes, to_bytes, rank);
}

std::unique_ptr<MpiError> copy_own(const void* from, std::int64_t from_count,
                                   const dtype::Datatype& from_type, void* to, std::int64_t to_count,
                                   const dtype::Datatype& to_type, int rank) {
    dtype::copy(from_type, from, from_count, to_type, to, to_count);
    return own_mismatch(from_count * from_type.size, to_count * to_type.size, rank);
}

void send(const Team& team, std::int32_t tag, int peer, const void* buf, std::int64_t bytes) {
    if (team.shm == nullptr) {
        team.engine->send(team.context, team.rank, tag, world_of(team, peer), buf, bytes, dtype::byte_type(),
                          p2p::Mode::Standard);
        return;
    }
    // Through wait_for(), as recv() (a large message waits for its receiver).
    Exchange x(team, tag);
    x.send(peer, buf, bytes);
    x.wait();
}

void recv(const Team& team, std::int32_t tag, int peer, void* buf, std::int64_t bytes) {
    if (team.shm == nullptr) {
        MPI_Status st;
        const std::uint64_t got =
            team.engine->recv(team.context, peer, tag, buf, bytes, dtype::byte_type(), st, world_of(team, peer));
        check_size(team, peer, got, bytes);
        return;
    }
    // Through wait_for(), which notices a member in another call.
    Exchange x(team, tag);
    x.recv(peer, buf, bytes);
    x.wait();
}

}  // namespace shmpi::coll::linear
