// Scan, Exscan, Reduce_scatter and Reduce_scatter_block on top of the
// shared-memory collectives, without point-to-point messages.
//
//   scan / exscan        every member's contribution is gathered everywhere
//                        (allgather_shm); member r then folds slots [0, r]
//                        (scan) or [0, r) (exscan) with fold_slots, the same
//                        canonical bracketing as the linear reference, so
//                        the bits are the same whichever runs, and a
//                        non-commutative operation is applied in rank order.
//   reduce_scatter_block every member's block r goes to member r
//                        (alltoall_shm), which folds the n blocks with
//                        fold_slots; where that declines, and for blocks
//                        under 512 B, as reduce_scatter:
//   reduce_scatter       the whole vector is reduced everywhere
//                        (allreduce_shm, canonical bracketing per element)
//                        and each member keeps its block.
//
// All but the exchange gather or reduce more than a member needs (all n
// contributions, the whole vector), which pays while messages are small and
// the shared-memory paths are far cheaper than the linear exchange; select.cpp
// takes them up to kComposeMax bytes of gathered data and leaves larger calls
// to the linear algorithms.  They decline (touching nothing) where the building block
// declines, on a team without shared memory, or above kComposeLimit bytes
// of temporary memory; every member decides alike, from the same sizes.
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
    const int k = fold_slots(slots.get(), bytes, 0, hi, count, red);
    std::memcpy(recv, slots.get() + k * bytes, static_cast<std::size_t>(bytes));
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

/// The smallest block Reduce_scatter_block exchanges.  Below, the
/// Allreduce of the whole vector is as quick or quicker: 2 ranks, us,
/// Allreduce / exchange: 8 B blocks 0.16-0.20 / 0.22-0.27, 64 B 0.20 /
/// 0.24, 256 B 0.24-0.35 / 0.25-0.31, 512 B 0.36-0.50 / 0.28-0.32.
constexpr std::int64_t kExchangeMin = 512;

/// Reduce_scatter_block by an exchange: member m's block r goes to member r
/// (alltoall_shm), which folds the n blocks it holds in the canonical order.
/// Each member copies n - 1 blocks and folds one, where reduce_then_keep()
/// reduces the whole vector everywhere.  Declines where alltoall_shm does
/// (the n blocks do not fit a member's cells), the same on every member.
bool exchange_then_fold(const Team& team, const void* send, void* recv, std::int64_t count, const Reduction& red) {
    const std::int64_t bytes = count * red.elem_bytes;
    const int n = team.size;
    if (bytes < kExchangeMin || bytes > kComposeLimit / n) return false;
    const Scratch slots(n * bytes);
    const linear::Uniform u(n, bytes);
    const std::vector<const dtype::Datatype*> types(static_cast<std::size_t>(n), &dtype::byte_type());
    const PeerBlocks from{const_cast<void*>(send), u.bytes.data(), u.offsets.data(), types.data()};
    const PeerBlocks to{slots.get(), u.bytes.data(), u.offsets.data(), types.data()};
    if (!alltoall_shm(team, bytes, from, to)) return false;
    const int k = fold_slots(slots.get(), bytes, 0, n, count, red);
    std::memcpy(recv, slots.get() + k * bytes, static_cast<std::size_t>(bytes));
    return true;
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
    if (exchange_then_fold(team, send, recv, count, red)) return true;
    return reduce_then_keep(team, send, recv, count * team.size, count * team.rank, count, red);
}

bool reduce_scatter_shm(const Team& team, const void* send, void* recv, const std::int64_t* counts,
                        const Reduction& red) {
    const std::int64_t first = std::accumulate(counts, counts + team.rank, std::int64_t{0});
    const std::int64_t total = std::accumulate(counts, counts + team.size, std::int64_t{0});
    return reduce_then_keep(team, send, recv, total, first, counts[team.rank], red);
}

}  // namespace shmpi::coll
