// Scan, Exscan, Reduce_scatter and Reduce_scatter_block on top of the
// shared-memory collectives, without point-to-point messages.
//
//   scan / exscan        every member's contribution is gathered everywhere
//                        (allgather_shm); member r then folds slots [0, r]
//                        (scan) or [0, r) (exscan) with fold_slots, the same
//                        canonical bracketing as the linear reference, so
//                        the bits are the same whichever runs, and a
//                        non-commutative operation is applied in rank order.
//   reduce_scatter(_block)
//                        the whole vector is reduced everywhere
//                        (allreduce_shm, canonical bracketing per element)
//                        and each member keeps its block.
//
// Both gather or reduce more than a member needs (all n contributions, the
// whole vector), which pays while messages are small and the shared-memory
// paths are far cheaper than the linear exchange; select.cpp takes them up
// to kComposeMax bytes of gathered data and leaves larger calls to the linear
// algorithms.  They decline (touching nothing) where the building block
// declines, on a team without shared memory, or above kComposeLimit bytes
// of temporary memory; every member decides alike, from the same sizes.
#include <cstring>
#include <numeric>

#include "coll/coll.hpp"
#include "coll/linear.hpp"
#include "coll/scratch.hpp"
#include "coll/shm_team.hpp"

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

}  // namespace

bool scan_shm(const Team& team, const void* send, void* recv, std::int64_t count, const Reduction& red) {
    return prefix(team, send, recv, count, red, true);
}

bool exscan_shm(const Team& team, const void* send, void* recv, std::int64_t count, const Reduction& red) {
    return prefix(team, send, recv, count, red, false);
}

bool reduce_scatter_block_shm(const Team& team, const void* send, void* recv, std::int64_t count,
                              const Reduction& red) {
    return reduce_then_keep(team, send, recv, count * team.size, count * team.rank, count, red);
}

bool reduce_scatter_shm(const Team& team, const void* send, void* recv, const std::int64_t* counts,
                        const Reduction& red) {
    const std::int64_t first = std::accumulate(counts, counts + team.rank, std::int64_t{0});
    const std::int64_t total = std::accumulate(counts, counts + team.size, std::int64_t{0});
    return reduce_then_keep(team, send, recv, total, first, counts[team.rank], red);
}

}  // namespace shmpi::coll
