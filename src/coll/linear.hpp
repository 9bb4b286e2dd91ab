// The linear collectives: every collective written in the simplest way over
// point-to-point messages on the team's collective context.  They are the
// fallback for any call a faster algorithm cannot take, and the oracle the
// tests compare the faster algorithms against.
//
// The dense-byte interface below is the one every algorithm of a collective
// shares (select.cpp calls them through it):
//
//   * Buffers are dense bytes; the caller has packed derived datatypes.
//   * Reductions take `count` dense elements of `red.elem_bytes` bytes; the
//     send buffer may be the receive buffer (MPI_IN_PLACE), never a partial
//     overlap.  Every result is the canonical fold of coll.hpp.
//   * Gathers and scatters describe the root's (or everyone's) blocks with a
//     Blocks table: block r is bytes[r] bytes at offset offsets[r] from the
//     buffer.  A null `send` (gathers) or `recv` (scatters) means
//     MPI_IN_PLACE: this rank's own block is already where it belongs and
//     must not be touched.  The caller never passes null otherwise (a
//     zero-byte block gets some valid address).
//   * A message of the wrong size (the two sides disagree on the amount of
//     data: MPI requires equal type signatures) is detected by the receiver,
//     which completes its part of the pattern first, so that no rank hangs,
//     then throws MpiError: MPI_ERR_TRUNCATE when more arrived than
//     expected, MPI_ERR_COUNT when less.  The message lacks the MPI function
//     name; the caller prefixes it.
//
// The all-to-alls are the exception: their blocks go as point-to-point
// messages, and the point-to-point engine packs and unpacks a derived
// datatype piece by piece as each message travels, so they take the user's
// typed blocks (PeerBlocks) and never stage a whole buffer.
//
// A shared-memory algorithm has the same parameters and returns bool:
// false, before it has touched anything, when it cannot take the call; the
// caller then runs the linear one.
//
// Order of the prefix reductions: left to right.  MPI_Scan gives rank r
// S_r = (((x_0 op x_1) op x_2) ... op x_r), that is S_{r-1} op x_r;
// MPI_Exscan gives rank r >= 1 S_{r-1} and leaves rank 0's receive buffer
// untouched.  Every algorithm, blocking or not, gives every rank the same
// bits as the linear one.  (Not the canonical bisection of the reductions:
// rank r's bisection shares little with rank r - 1's, and the n prefixes
// would cost about n^1.6 folds in all where the chain takes n - 1; so the
// last rank's scan may differ from an allreduce in the last bits.)
#pragma once

#include <cstddef>
#include <cstdint>

#include "coll/coll.hpp"

namespace shmpi::dtype {
struct Datatype;
}

namespace shmpi::coll {

/// Per-rank blocks of a gather or scatter buffer (arrays of team.size), or,
/// without arrays, every block `block` bytes at m * block (a plain Gather
/// or Allgather: no table to build).
struct Blocks {
    const std::int64_t* bytes = nullptr;
    const std::int64_t* offsets = nullptr;
    std::int64_t block = 0;
    std::int64_t size(int m) const { return bytes != nullptr ? bytes[m] : block; }
    std::int64_t offset(int m) const { return offsets != nullptr ? offsets[m] : m * block; }
};

void barrier_linear(const Team& team);

/// `bytes` at `buf` on `root` end up at `buf` on every rank.
void bcast_linear(const Team& team, void* buf, std::int64_t bytes, int root);

/// `recv` on `root` = fold of everyone's `send` (count elements).  `recv` is
/// unused elsewhere and may be null there.
void reduce_linear(const Team& team, const void* send, void* recv, std::int64_t count,
                   const Reduction& red, int root);

/// Every rank's `recv` = fold of everyone's `send`, the same bits everywhere.
void allreduce_linear(const Team& team, const void* send, void* recv, std::int64_t count,
                      const Reduction& red);

/// Every rank sends `send_bytes`; the root's block r of `recv` gets rank r's.
/// `recv` is used on the root only.
void gatherv_linear(const Team& team, const void* send, std::int64_t send_bytes, void* recv,
                    Blocks blocks, int root);
/// gatherv with block r = `block` bytes at r * block.
void gather_linear(const Team& team, const void* send, std::int64_t block, void* recv, int root);

/// The root's block r of `send` goes to rank r's `recv` (`recv_bytes`).
void scatterv_linear(const Team& team, const void* send, Blocks blocks, void* recv,
                     std::int64_t recv_bytes, int root);
/// scatterv with block r = `block` bytes at r * block.
void scatter_linear(const Team& team, const void* send, void* recv, std::int64_t block, int root);

/// Every rank's block r of `recv` gets rank r's `send`.
void allgatherv_linear(const Team& team, const void* send, std::int64_t send_bytes, void* recv,
                       Blocks blocks);
void allgather_linear(const Team& team, const void* send, std::int64_t block, void* recv);

/// One side of an all-to-all as typed blocks (arrays of team.size): block r
/// is counts[r] elements of *types[r] at base + displs[r] bytes.  The send
/// side is only read.  On the send side a null types[team.rank] means
/// MPI_IN_PLACE: this rank's own block is in the receive buffer already.
struct PeerBlocks {
    void* base = nullptr;
    const std::int64_t* counts = nullptr;
    const std::int64_t* displs = nullptr;
    const dtype::Datatype* const* types = nullptr;
};

/// Block j of rank i's `send` goes to block i of rank j's `recv`, each block
/// one typed point-to-point message; a rank's own block is copied typed to
/// typed.  A block whose two sides differ in size is reported like a
/// message of the wrong size (the rank's own block after the exchange).
void alltoallw_linear(const Team& team, PeerBlocks send, PeerBlocks recv);
/// The same over dense bytes.  Never in place (the caller copies the send
/// data out of the receive buffer).
void alltoallv_linear(const Team& team, const void* send, Blocks send_blocks, void* recv,
                      Blocks recv_blocks);
void alltoall_linear(const Team& team, const void* send, std::int64_t block, void* recv);

/// The fold of everyone's `send` (sum of counts[] elements); rank r's `recv`
/// gets the counts[r] elements starting at element counts[0] + ... +
/// counts[r-1].  `recv` may be `send`.
void reduce_scatter_linear(const Team& team, const void* send, void* recv,
                           const std::int64_t* counts, const Reduction& red);
void reduce_scatter_block_linear(const Team& team, const void* send, void* recv,
                                 std::int64_t count, const Reduction& red);

/// Inclusive and exclusive prefix reductions, as defined above.
void scan_linear(const Team& team, const void* send, void* recv, std::int64_t count,
                 const Reduction& red);
void exscan_linear(const Team& team, const void* send, void* recv, std::int64_t count,
                   const Reduction& red);

/// The left-to-right fold of the `hi - lo` contributions stored at
/// `slots + r * stride` for r in [lo, hi), the prefix reductions' order:
/// in place, each slot after the first ends up holding the fold of the
/// slots up to it, so the result is in slot hi - 1.
inline void fold_chain(std::byte* slots, std::int64_t stride, int lo, int hi, std::int64_t count,
                       const Reduction& red) {
    // Slot r - 1 holds the lower ranks: it is `in`, the result lands in r.
    for (int r = lo + 1; r < hi; ++r) red.combine(slots + (r - 1) * stride, slots + r * stride, count, red.state);
}

/// The canonical fold of the `hi - lo` contributions stored at
/// `slots + r * stride` for r in [lo, hi), in place: the contributions are
/// overwritten, and the index of the slot that holds the result is returned.
/// Any algorithm that has all contributions of a range in one place may
/// use it.  Inline, with a pair folded at once: the small flat reductions
/// fold two contributions on every call, where the call and its recursion
/// cost more than the one combine.
inline int fold_slots(std::byte* slots, std::int64_t stride, int lo, int hi, std::int64_t count,
                      const Reduction& red) {
    if (hi - lo == 1) return lo;
    if (hi - lo == 2) {
        // canonical_mid(lo, lo + 2) == lo + 1: the recursion's one combine.
        red.combine(slots + lo * stride, slots + (lo + 1) * stride, count, red.state);
        return lo + 1;
    }
    const int mid = canonical_mid(lo, hi);
    const int left = fold_slots(slots, stride, lo, mid, count, red);
    const int right = fold_slots(slots, stride, mid, hi, count, red);
    // left holds the lower ranks: it is `in`, the result lands in `right`.
    red.combine(slots + left * stride, slots + right * stride, count, red.state);
    return right;
}

}  // namespace shmpi::coll
