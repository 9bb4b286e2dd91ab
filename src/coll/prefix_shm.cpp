// Scan, Exscan, Reduce_scatter and Reduce_scatter_block on top of the
// shared-memory collectives, without point-to-point messages.
//
//   scan / exscan        every member's contribution is gathered everywhere
//                        (allgather_shm); member r then folds slots [0, r]
//                        (scan) or [0, r) (exscan) left to right with
//                        fold_chain, the order of the linear reference, so
//                        the bits are the same whichever runs, and a
//                        non-commutative operation is applied in rank order.
//   reduce_scatter(_block), by the mean block size (the same on every
//   member):
//     64 KiB or more     each member folds its block straight out of the
//                        peers' send buffers (reduce_scatter_shm_rsag,
//                        reduce_rsag_shm.cpp), where the team has single
//                        copies;
//     512 B or more      every member's block r goes to member r
//                        (alltoall_shm, alltoallv_shm), which folds the n
//                        blocks with fold_slots;
//     else, or where those decline: the whole vector is reduced everywhere
//                        (allreduce_shm, canonical bracketing per element)
//                        and each member keeps its block.
//
// Scan and the whole-vector reduction gather or reduce more than a member
// needs (all n contributions, the whole vector), which pays while messages
// are small and the shared-memory paths are far cheaper than the linear
// exchange; select.cpp takes Scan and Exscan up to kComposeMax bytes of
// gathered data where its chain (scan_chain_shm.cpp) is not taken.  All
// decline (touching nothing) where the building block declines, on a team
// without shared memory, or above kComposeLimit bytes of temporary memory;
// every member decides alike, from the same sizes.
#include <algorithm>
#include <cstring>
#include <numeric>
#include <vector>

#include "coll/coll.hpp"
#include "coll/linear.hpp"
#include "coll/linear_p2p.hpp"
#include "coll/scratch.hpp"
#include "coll/shm_team.hpp"
#include "dtype/datatype.hpp"

namespace shmpi::coll {
namespace {

/// The most temporary memory a composed call allocates, even when forced.
constexpr std::int64_t kComposeLimit = std::int64_t{256} << 20;

bool prefix(const Team& team, const void* send, void* recv, std::int64_t count, const Reduction& red,
            bool inclusive) {
    if (ready(team) == nullptr) return false;
    const std::int64_t bytes = count * red.elem_bytes;
    const int n = team.size;
    if (bytes > kComposeLimit / n) return false;
    const Scratch slots(n * bytes);
    if (!allgather_shm(team, send, bytes, slots.get())) return false;
    const int hi = inclusive ? team.rank + 1 : team.rank;
    if (hi == 0 || bytes == 0) return true;  // exscan on rank 0: recv is undefined
    fold_chain(slots.get(), bytes, 0, hi, count, red);
    std::memcpy(recv, slots.get() + (hi - 1) * bytes, static_cast<std::size_t>(bytes));
    return true;
}

/// Reduces the `total` elements at `send` everywhere and keeps the `mine`
/// elements from element `first` on.
bool reduce_then_keep(const Team& team, const void* send, void* recv, std::int64_t total,
                      std::int64_t first, std::int64_t mine, const Reduction& red) {
    if (ready(team) == nullptr) return false;
    if (total > kComposeLimit / (red.elem_bytes > 0 ? red.elem_bytes : 1)) return false;
    const Scratch all(total * red.elem_bytes);
    if (!allreduce_shm(team, send, all.get(), total, red)) return false;
    if (mine > 0) {
        std::memcpy(recv, all.get() + first * red.elem_bytes, static_cast<std::size_t>(mine * red.elem_bytes));
    }
    return true;
}

/// The smallest mean block Reduce_scatter(_block) exchanges.  Below, the
/// Allreduce of the whole vector is as quick or quicker: 2 ranks, us,
/// Allreduce / exchange: 8 B blocks 0.16-0.20 / 0.22-0.27, 64 B 0.20 /
/// 0.24, 256 B 0.24-0.35 / 0.25-0.31, 512 B 0.36-0.50 / 0.28-0.32.
constexpr std::int64_t kExchangeMin = 512;

/// The smallest mean block Reduce_scatter(_block) folds by single copies
/// (reduce_scatter_shm_rsag).  `coll_bench --ops reduce_scatter_block`,
/// exchange / single copies, us: 2 ranks, 32 KiB blocks 8.8-18 / 10-17,
/// 64 KiB 34-61 / 19-32; 4 ranks on 2 CPUs, 32 KiB 66-143 / 120-180, 64 KiB
/// 295-540 / 225-286 (docs/BENCHMARKS.md; before the wide cells of
/// session 56, where such exchanges now go: see reduce_scatter_any()).
constexpr std::int64_t kSingleCopyMin = 64 * 1024;

/// Reduce_scatter(_block) by an exchange: member m's block r goes to member
/// r (alltoall_shm when the blocks are alike, else alltoallv_shm), which
/// folds the n blocks it holds in the canonical order.  Each member copies
/// n - 1 blocks and folds one, where reduce_then_keep() reduces the whole
/// vector everywhere.  Declines where the exchange does, or when a member's
/// n blocks would take more than kComposeLimit bytes: the same on every
/// member.
bool exchange_then_fold(const Team& team, const void* send, void* recv, const std::int64_t* counts,
                        const Reduction& red) {
    const int n = team.size;
    const linear::Consecutive v(counts, n, red.elem_bytes);
    if (*std::max_element(v.bytes.begin(), v.bytes.end()) > kComposeLimit / n) return false;
    const bool uniform = std::all_of(counts, counts + n, [&](std::int64_t c) { return c == counts[0]; });
    const std::int64_t bytes = v.bytes[static_cast<std::size_t>(team.rank)];  // our block
    const Scratch slots(n * bytes);
    const linear::Uniform in_slots(n, bytes);
    const std::vector<const dtype::Datatype*> types(static_cast<std::size_t>(n), &dtype::byte_type());
    const PeerBlocks from{const_cast<void*>(send), v.bytes.data(), v.offsets.data(), types.data()};
    const PeerBlocks to{slots.get(), in_slots.bytes.data(), in_slots.offsets.data(), types.data()};
    if (!(uniform ? alltoall_shm(team, bytes, from, to) : alltoallv_shm(team, from, to))) return false;
    if (bytes == 0) return true;
    const int k = fold_slots(slots.get(), bytes, 0, n, counts[team.rank], red);
    std::memcpy(recv, slots.get() + k * bytes, static_cast<std::size_t>(bytes));
    return true;
}

/// Both Reduce_scatters: the way by the mean block size (see the top).
bool reduce_scatter_any(const Team& team, const void* send, void* recv, const std::int64_t* counts,
                        const Reduction& red) {
    const std::int64_t first = std::accumulate(counts, counts + team.rank, std::int64_t{0});
    const std::int64_t total = std::accumulate(counts, counts + team.size, std::int64_t{0});
    const std::int64_t mean_block = total * red.elem_bytes / team.size;
    // Where ranks outnumber CPUs, the exchange while every member's n
    // blocks fit its cells or wide cells: no member then waits for the
    // readers of its memory, a context switch each (3 and 4 ranks on 2
    // CPUs, 64 and 256 KiB blocks: 0.43-0.66 of the time, 8 and 16 ranks
    // 0.46-0.81; docs/BENCHMARKS.md, session 57).  The same on every
    // member: so are the counts, the team and its cells.
    const auto cells_first = [&] {
        const ShmTeam* shm = ready(team);
        return shm != nullptr && shm->crowded() &&
               alltoall_fits_cells(*shm, *std::max_element(counts, counts + team.size) * red.elem_bytes);
    };
    if (mean_block >= kSingleCopyMin && !cells_first() && reduce_scatter_shm_rsag(team, send, recv, counts, red)) {
        return true;
    }
    if (mean_block >= kExchangeMin && exchange_then_fold(team, send, recv, counts, red)) return true;
    return reduce_then_keep(team, send, recv, total, first, counts[team.rank], red);
}

}  // namespace

bool scan_shm(const Team& team, const void* send, void* recv, std::int64_t count, const Reduction& red) {
    return prefix(team, send, recv, count, red, true);
}

bool exscan_shm(const Team& team, const void* send, void* recv, std::int64_t count, const Reduction& red) {
    return prefix(team, send, recv, count, red, false);
}

bool reduce_scatter_block_shm(const Team& team, const void* send, void* recv, std::int64_t count,
                              const Reduction& red) {
    const std::vector<std::int64_t> counts(static_cast<std::size_t>(team.size), count);
    return reduce_scatter_any(team, send, recv, counts.data(), red);
}

bool reduce_scatter_shm(const Team& team, const void* send, void* recv, const std::int64_t* counts,
                        const Reduction& red) {
    return reduce_scatter_any(team, send, recv, counts, red);
}

}  // namespace shmpi::coll
