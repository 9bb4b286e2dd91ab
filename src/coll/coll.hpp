// What a collective algorithm sees: a team of ranks, dense byte buffers, and
// a reduction as a function.  Algorithms never see MPI handles or datatypes:
// the communicator layer packs non-contiguous data into dense buffers before
// calling them and unpacks afterwards.
//
// Canonical reduction order (seed 001).  Every reduction algorithm combines
// the contributions x_0 ... x_{n-1} (rank order) with the same bracketing,
// the recursive bisection of the rank range:
//
//     fold(lo, hi) = x_lo                                   if hi - lo == 1
//                  = fold(lo, mid) op fold(mid, hi)          mid = lo + (hi - lo + 1) / 2
//
// so the result is bitwise the same whatever algorithm is chosen, on every
// call, and on every rank of an allreduce.  `a op b` keeps rank order: the
// left operand comes from the lower ranks.  canonical_mid() below is the one
// definition of `mid`.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace shmpi::p2p {
class Engine;
}

namespace shmpi::coll {

/// A reduction operator on dense elements.
struct Reduction {
    /// inout[i] = in[i] op inout[i] for i < count, where `in` holds the
    /// contribution of the LOWER ranks and `inout` that of the higher ones.
    void (*combine)(const void* in, void* inout, std::int64_t count, const void* state) = nullptr;
    const void* state = nullptr;
    bool commutative = true;
    std::int64_t elem_bytes = 0;  ///< bytes of one element in dense form
};

/// The split point of the rank range [lo, hi) in the canonical bracketing.
constexpr int canonical_mid(int lo, int hi) { return lo + (hi - lo + 1) / 2; }

/// The shared-memory state of one communicator's collectives (flags and
/// cells in the segment); defined by the shared-memory algorithms.
class ShmTeam;

/// The members of a communicator, as the algorithms see them.
struct Team {
    p2p::Engine* engine = nullptr;      ///< point-to-point, for the linear algorithms
    std::uint32_t context = 0;          ///< context for collective traffic (not the p2p one)
    int rank = 0;                       ///< this process's rank in the team
    int size = 1;
    const std::vector<std::uint32_t>* world = nullptr;  ///< world rank of each member
    ShmTeam* shm = nullptr;             ///< null: no shared-memory fast path for this team
};

}  // namespace shmpi::coll
