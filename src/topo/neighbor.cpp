// Neighbourhood collectives.
//
// Matching.  All messages travel on the collective context with tags of
// their own (kTagNeighbor...), so they never meet point-to-point traffic or
// another collective's.  On graphs the k-th message from a to b fills the
// k-th block b receives from a: a pair's messages arrive in order.  On
// Cartesian grids a rank may be both neighbours of another along one
// dimension (periodic, size 1 or 2), and order alone would put the block
// sent down into the slot for the neighbour below: there the tag names the
// direction.  A block sent to destination 2d (one step down dimension d)
// arrives at that neighbour as coming from its source 2d+1 (one step up),
// so it is sent with tag kTagNeighbor + 2d and received from source j with
// tag kTagNeighbor + (j ^ 1).
//
// Consecutive calls cannot be confused: a rank completes every receive of a
// call before it posts the next call's, and a pair's messages arrive in
// order.
#include "topo/neighbor.hpp"

#include <fmt/format.h>

#include <vector>

#include "errors.hpp"
#include "p2p.hpp"

namespace shmpi::topo {
namespace {

/// Above the tags of the linear collectives (coll/linear_p2p.hpp).
constexpr std::int32_t kTagNeighbor = 64;

struct Posted {
    p2p::Request* req;
    int peer;
    std::int64_t want;  ///< bytes a receive expects; -1 for sends
};

/// Gives the requests back even when a check throws.
struct Releaser {
    p2p::Engine& engine;
    std::vector<Posted>& posted;
    ~Releaser() {
        for (const Posted& p : posted) engine.release(p.req);
    }
};

}  // namespace

void neighbor_exchange(Communicator& c, const Neighborhood& nb, std::span<const Block> send,
                       std::span<const Block> recv, const char* fn) {
    p2p::Engine& engine = c.engine();
    std::vector<Posted> posted;
    posted.reserve(send.size() + recv.size());
    Releaser releaser{engine, posted};
    for (std::size_t j = 0; j < recv.size(); ++j) {
        const int src = nb.sources[j];
        if (src == MPI_PROC_NULL) continue;
        const std::int32_t tag = kTagNeighbor + (nb.directional ? static_cast<std::int32_t>(j ^ 1u) : 0);
        const Block& b = recv[j];
        p2p::Request* r = engine.irecv(c.coll_context(), src, tag, const_cast<void*>(b.buf), b.count, *b.type);
        posted.push_back({r, src, b.count * b.type->size});
    }
    for (std::size_t j = 0; j < send.size(); ++j) {
        const int dst = nb.destinations[j];
        if (dst == MPI_PROC_NULL) continue;
        const std::int32_t tag = kTagNeighbor + (nb.directional ? static_cast<std::int32_t>(j) : 0);
        const Block& b = send[j];
        p2p::Request* r = engine.isend(c.coll_context(), c.rank(), tag, c.world_rank(dst), b.buf, b.count, *b.type,
                                       p2p::Mode::Standard);
        posted.push_back({r, dst, -1});
    }
    for (const Posted& p : posted) engine.wait(*p.req);
    for (const Posted& p : posted) {
        if (p.want < 0) continue;
        const std::uint64_t got = p.req->incoming;
        const auto want = static_cast<std::uint64_t>(p.want);
        if (got != want) {
            throw MpiError(got > want ? MPI_ERR_TRUNCATE : MPI_ERR_COUNT,
                           fmt::format("{}: neighbour {} sent {} bytes to rank {}, which expected {} (the datatype "
                                       "signatures of the two calls differ)",
                                       fn, p.peer, got, c.rank(), want));
        }
    }
}

}  // namespace shmpi::topo
