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
#include <cstring>
#include <vector>

namespace shmpi::p2p {
class Engine;
}

namespace shmpi::coll {

/// Copies `n` bytes, at most 64 (a release line's inline data), without a
/// call: fixed-width moves, the last one overlapping the one before.  The
/// small collectives copy 8 bytes several times a call, and the library's
/// memcpy took 15-20 instructions a time for what two moves do.
[[gnu::always_inline]] inline void copy_small(void* to, const void* from, std::size_t n) {
    auto* d = static_cast<std::byte*>(to);
    const auto* s = static_cast<const std::byte*>(from);
    if (n >= 16) {
        for (std::size_t i = 0; i + 16 < n; i += 16) std::memcpy(d + i, s + i, 16);
        std::memcpy(d + n - 16, s + n - 16, 16);
    } else if (n >= 8) {
        std::memcpy(d, s, 8);
        std::memcpy(d + n - 8, s + n - 8, 8);
    } else if (n >= 4) {
        std::memcpy(d, s, 4);
        std::memcpy(d + n - 4, s + n - 4, 4);
    } else {
        for (std::size_t i = 0; i < n; ++i) d[i] = s[i];
    }
}

/// A reduction operator on dense elements.
struct Reduction {
    /// inout[i] = in[i] op inout[i] for i < count, where `in` holds the
    /// contribution of the LOWER ranks and `inout` that of the higher ones.
    void (*combine)(const void* in, void* inout, std::int64_t count, const void* state) = nullptr;
    const void* state = nullptr;
    bool commutative = true;
    std::int64_t elem_bytes = 0;  ///< bytes of one element in dense form
    /// An MPI_Op_create operation: `combine` calls the user's function on
    /// whole elements of the caller's datatype (op.cpp).
    bool user = false;
};

/// A receive buffer that is not dense (a derived datatype's), which an
/// algorithm may fill in place of the dense staging buffer it is also
/// given, saving the caller's unpack pass: data from the cells is stored
/// piece by piece as it arrives.  Single copies (process_vm_readv) still go
/// to the dense buffer where the sender shares that copying (Bcast,
/// Gather), which saves more than landing them would; an Allgather lands
/// them too, a piece at a time.  The communicator layer supplies the store over its
/// datatype, so the algorithms still never see one.  Offsets are those of
/// the dense buffer.  An algorithm that fills it sets `filled`; otherwise
/// the caller unpacks the staging buffer as before.
struct Landing {
    /// Stores `len` bytes at `from` as bytes [off, off + len).
    void (*store)(const void* state, std::int64_t off, const void* from, std::int64_t len);
    const void* state;
    bool filled = false;
};

/// A send buffer that is not dense (a derived datatype's), handed to an
/// algorithm with a dense buffer that is NOT filled yet: the algorithm
/// either packs the pieces it sends straight into the cells (part()), or
/// calls dense() before it touches the dense buffer.  Offsets are those of
/// the dense buffer.
struct Source {
    /// Packs bytes [off, off + len) into `to`.
    void (*pack_part)(const void* state, std::int64_t off, void* to, std::int64_t len);
    /// Fills the whole dense buffer.
    void (*pack)(const void* state);
    const void* state;
    bool packed = false;
    void part(std::uint64_t off, void* to, std::uint64_t len) const {
        pack_part(state, static_cast<std::int64_t>(off), to, static_cast<std::int64_t>(len));
    }
    /// Packs the dense buffer unless that was done already.
    void dense() {
        if (!packed) pack(state);
        packed = true;
    }
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

// ---- Shared-memory algorithms (src/coll/*_shm.cpp) ----
//
// Same parameters and conventions as the linear ones (linear.hpp); each
// returns false, before it has touched anything, when it cannot take the
// call: the team has no shared-memory state (team.shm == nullptr), or the
// variant needs single-copy reads (process_vm_readv) and this job cannot do
// them, or a reduction element is larger than a slot of cells.  Every such
// reason is the same on every member, so all members decline together.
// The first call on a team makes one extra collective step (the
// single-copy probe), so every member must call the same algorithms.
//
// *_shm (no suffix) chooses among the shared-memory variants by size (see
// docs/DESIGN.md, "Collectives in shared memory"); the suffixed ones run one
// variant, for forcing and benchmarking:
//   _tree    release/gather flag tree, data inline in the flag line (up to
//            64 B) or pipelined through cells, any size
//   _direct  single copy from the root's buffer (process_vm_readv)
//   _rsag    reduce-scatter in place (each member folds its slice, reading
//            every peer's contribution), then allgather / gather to the root
//   _push    every member writes its partial fold straight into its parent's
//            memory (process_vm_writev), where the parent's next combine
//            folds it in; for Allreduce everyone then copies the fold out of
//            member 0's buffer, chunk by chunk as it lands
struct Blocks;
struct PeerBlocks;

bool barrier_shm(const Team& team);
/// `land` (non-roots) and `source` (the root) are the typed buffers, where
/// there are (Landing, Source).
bool bcast_shm(const Team& team, void* buf, std::int64_t bytes, int root, Landing* land = nullptr,
               Source* source = nullptr);
bool bcast_shm_tree(const Team& team, void* buf, std::int64_t bytes, int root, Landing* land = nullptr,
                    Source* source = nullptr);
bool bcast_shm_direct(const Team& team, void* buf, std::int64_t bytes, int root, Landing* land = nullptr,
                      Source* source = nullptr);
bool reduce_shm(const Team& team, const void* send, void* recv, std::int64_t count,
                const Reduction& red, int root);
bool reduce_shm_tree(const Team& team, const void* send, void* recv, std::int64_t count,
                     const Reduction& red, int root);
bool reduce_shm_rsag(const Team& team, const void* send, void* recv, std::int64_t count,
                     const Reduction& red, int root);
bool reduce_shm_push(const Team& team, const void* send, void* recv, std::int64_t count,
                     const Reduction& red, int root);
bool allreduce_shm(const Team& team, const void* send, void* recv, std::int64_t count,
                   const Reduction& red);
bool allreduce_shm_tree(const Team& team, const void* send, void* recv, std::int64_t count,
                        const Reduction& red);
bool allreduce_shm_rsag(const Team& team, const void* send, void* recv, std::int64_t count,
                        const Reduction& red);
bool allreduce_shm_push(const Team& team, const void* send, void* recv, std::int64_t count,
                        const Reduction& red);
/// Gathers: each block travels inline (up to 64 B), through the member's
/// cells (up to a cell's size), or by a single copy the root makes from the
/// member's buffer.  Scatters and allgathers likewise.
bool gather_shm(const Team& team, const void* send, std::int64_t block, void* recv, int root,
                Landing* land = nullptr);
bool gatherv_shm(const Team& team, const void* send, std::int64_t send_bytes, void* recv,
                 Blocks blocks, int root);
bool scatter_shm(const Team& team, const void* send, void* recv, std::int64_t block, int root,
                 Landing* land = nullptr, Source* source = nullptr);
bool scatterv_shm(const Team& team, const void* send, Blocks blocks, void* recv,
                  std::int64_t recv_bytes, int root);
/// `mine` (Allgather): this member's block as a typed send buffer; the
/// block is then in place (`send` null) but not packed there yet: the
/// algorithm packs pieces of it (part()) or asks for it whole (dense()).
bool allgather_shm(const Team& team, const void* send, std::int64_t block, void* recv,
                   Landing* land = nullptr, Source* mine = nullptr);
bool allgatherv_shm(const Team& team, const void* send, std::int64_t send_bytes, void* recv,
                    Blocks blocks);
/// Alltoall with every member's n blocks (`block` bytes each, the call's
/// receive size) together in its cells: declines (on every member alike)
/// when they do not fit.  alltoall_shm.cpp.
bool alltoall_shm(const Team& team, std::int64_t block, PeerBlocks send, PeerBlocks recv);
/// Whether alltoall_shm() takes a call of `block`-byte blocks on `shm`:
/// n blocks fit a member's cells.
bool alltoall_fits_cells(const ShmTeam& shm, std::int64_t block);
/// Alltoall where every member copies its block out of every other
/// member's send buffer with process_vm_readv, one reader per member at a
/// time; declines (on every member alike) when the team has no single
/// copies.  alltoall_shm.cpp.
bool alltoall_direct(const Team& team, std::int64_t block, PeerBlocks send, PeerBlocks recv);
/// Alltoallv and Alltoallw: each member writes a table of where its
/// blocks lie at the head of its cells; a block above
/// ShmTuning::alltoall_direct() is read out of its sender's memory (as in
/// alltoall_direct()), a smaller one from the sender's cells while they
/// hold it, and the rest come as point-to-point messages.  Declines when
/// the table does not fit the cells (the same on every member).
/// alltoall_shm.cpp.
bool alltoallv_shm(const Team& team, PeerBlocks send, PeerBlocks recv);
/// Prefix reductions and reduce-scatters composed of the ones above
/// (prefix_shm.cpp): allgather then a canonical fold, or a whole-vector
/// allreduce of which each member keeps its block.
bool scan_shm(const Team& team, const void* send, void* recv, std::int64_t count, const Reduction& red);
bool exscan_shm(const Team& team, const void* send, void* recv, std::int64_t count, const Reduction& red);
bool reduce_scatter_block_shm(const Team& team, const void* send, void* recv, std::int64_t count,
                              const Reduction& red);
bool reduce_scatter_shm(const Team& team, const void* send, void* recv, const std::int64_t* counts,
                        const Reduction& red);
/// Reduce_scatter(_block) as the first half of allreduce_shm_rsag(): each
/// member folds its own block, reading it out of every peer's send buffer
/// with process_vm_readv, straight into its receive buffer.  Declines (on
/// every member alike) when the team has no single copies.
/// reduce_rsag_shm.cpp.
bool reduce_scatter_shm_rsag(const Team& team, const void* send, void* recv, const std::int64_t* counts,
                             const Reduction& red);
bool reduce_scatter_block_shm_rsag(const Team& team, const void* send, void* recv, std::int64_t count,
                                   const Reduction& red);
/// Scan and Exscan down a chain of the members in shared memory, pipelined
/// in chunks of a slot (scan_chain_shm.cpp): n - 1 folds in all, in the
/// linear algorithm's order.  Declines without shared memory, or for an
/// element larger than a slot of cells (the same on every member).
bool scan_chain(const Team& team, const void* send, void* recv, std::int64_t count, const Reduction& red);
bool exscan_chain(const Team& team, const void* send, void* recv, std::int64_t count, const Reduction& red);

}  // namespace shmpi::coll
