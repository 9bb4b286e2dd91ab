// What the linear collectives share: their tags, and an Exchange that posts
// point-to-point messages on the team's collective context, waits for all of
// them, and checks that every message had the size its receiver expected.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "coll/coll.hpp"
#include "coll/linear.hpp"
#include "errors.hpp"

namespace shmpi::p2p {
struct Request;
}
namespace shmpi::dtype {
struct Datatype;
}

namespace shmpi::coll::linear {

/// One tag per collective family, for readable traces.  Messages of
/// consecutive collectives cannot be confused even with equal tags: each
/// pair of ranks delivers in order, and a blocking collective has matched
/// all its receives before the next one posts any.
enum Tag : std::int32_t {
    kTagBarrier = 1,
    kTagBcast,
    kTagReduce,
    kTagGather,
    kTagScatter,
    kTagAllgather,
    kTagAlltoall,
    kTagScan,
};

/// The messages of one step of a linear collective.  Post sends and
/// receives, then wait(): it waits for every one of them, and only then
/// throws, for the first receive whose message did not have the expected
/// size, so that a mismatch never leaves a peer waiting.
class Exchange {
public:
    Exchange(const Team& team, std::int32_t tag) : team_(team), tag_(tag) {}
    Exchange(const Exchange&) = delete;
    Exchange& operator=(const Exchange&) = delete;
    /// Gives up requests still outstanding (only after an error).
    ~Exchange();

    /// Sends `bytes` at `buf` to team rank `peer`; `buf` must stay valid
    /// until wait() returns.
    void send(int peer, const void* buf, std::int64_t bytes);
    /// Receives exactly `bytes` from team rank `peer` into `buf`.
    void recv(int peer, void* buf, std::int64_t bytes);
    /// The same for `count` elements of `type` (alive until wait() returns).
    void send(int peer, const void* buf, std::int64_t count, const dtype::Datatype& type);
    void recv(int peer, void* buf, std::int64_t count, const dtype::Datatype& type);
    /// Waits for everything posted; throws MpiError (MPI_ERR_TRUNCATE: a
    /// message larger than expected; MPI_ERR_COUNT: smaller; MPI_ERR_OTHER
    /// and the like at once, without waiting for the rest, when a member of
    /// a team in shared memory made another collective call: see
    /// ShmTeam::check_call()).
    void wait();

private:
    struct Posted {
        p2p::Request* req;
        int peer;
        std::int64_t want;  ///< -1 for sends
    };
    const Team& team_;
    std::int32_t tag_;
    std::vector<Posted> posted_;
};

/// Uniform blocks: block r is `block` bytes at r * block.
struct Uniform {
    std::vector<std::int64_t> bytes;
    std::vector<std::int64_t> offsets;
    Uniform(int n, std::int64_t block);
    Blocks blocks() const { return Blocks{bytes.data(), offsets.data()}; }
};

/// Blocks back to back: block r is counts[r] elements of `elem_bytes`
/// bytes, right after block r - 1 (a Reduce_scatter's vector).
struct Consecutive {
    std::vector<std::int64_t> bytes;
    std::vector<std::int64_t> offsets;
    Consecutive(const std::int64_t* counts, int n, std::int64_t elem_bytes);
    Blocks blocks() const { return Blocks{bytes.data(), offsets.data()}; }
};

/// Copies a rank's own block locally (as much as fits).  Returns the error
/// to throw once the rest of the exchange has completed when the two sizes
/// differ, else nullptr.
std::unique_ptr<MpiError> copy_own(const void* from, std::int64_t from_bytes, void* to,
                                   std::int64_t to_bytes, int rank);
/// The same between typed buffers (as much of the two streams as both hold).
std::unique_ptr<MpiError> copy_own(const void* from, std::int64_t from_count,
                                   const dtype::Datatype& from_type, void* to, std::int64_t to_count,
                                   const dtype::Datatype& to_type, int rank);

/// Blocking one-message forms.
void send(const Team& team, std::int32_t tag, int peer, const void* buf, std::int64_t bytes);
void recv(const Team& team, std::int32_t tag, int peer, void* buf, std::int64_t bytes);

}  // namespace shmpi::coll::linear
