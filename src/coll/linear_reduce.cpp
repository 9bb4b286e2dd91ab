// Linear reductions: the root receives every contribution, then folds them in
// the canonical bracketing (coll.hpp).  Allreduce is reduce to rank 0 plus
// broadcast, so every rank gets the root's bits; reduce-scatter is reduce to
// rank 0 plus scatter.
#include <cstring>
#include <numeric>
#include <optional>
#include <vector>

#include "coll/linear.hpp"
#include "coll/linear_p2p.hpp"
#include "coll/scratch.hpp"

namespace shmpi::coll {

void reduce_linear(const Team& team, const void* send, void* recv, std::int64_t count,
                   const Reduction& red, int root) {
    using namespace linear;
    const std::int64_t bytes = count * red.elem_bytes;
    if (team.rank != root) {
        linear::send(team, kTagReduce, root, send, bytes);
        return;
    }
    if (team.size == 1) {
        if (send != recv && bytes > 0) std::memcpy(recv, send, static_cast<std::size_t>(bytes));
        return;
    }
    // 1. Every contribution into its slot, rank order.
    const Scratch slots(team.size * bytes);
    Exchange ex(team, kTagReduce);
    for (int r = 0; r < team.size; ++r) {
        if (r != root) ex.recv(r, slots.get() + r * bytes, bytes);
    }
    if (bytes > 0) std::memcpy(slots.get() + root * bytes, send, static_cast<std::size_t>(bytes));
    ex.wait();
    // 2. The canonical fold, then the result out.
    const int k = fold_slots(slots.get(), bytes, 0, team.size, count, red);
    if (bytes > 0) std::memcpy(recv, slots.get() + k * bytes, static_cast<std::size_t>(bytes));
}

void allreduce_linear(const Team& team, const void* send, void* recv, std::int64_t count,
                      const Reduction& red) {
    reduce_linear(team, send, recv, count, red, 0);
    bcast_linear(team, recv, count * red.elem_bytes, 0);
}

void reduce_scatter_linear(const Team& team, const void* send, void* recv,
                           const std::int64_t* counts, const Reduction& red) {
    const std::int64_t total = std::accumulate(counts, counts + team.size, std::int64_t{0});
    const linear::Consecutive blocks(counts, team.size, red.elem_bytes);
    std::optional<Scratch> all;
    if (team.rank == 0) all.emplace(total * red.elem_bytes);
    std::byte* const whole = all ? all->get() : nullptr;
    reduce_linear(team, send, whole, total, red, 0);
    scatterv_linear(team, whole, blocks.blocks(), recv, counts[team.rank] * red.elem_bytes, 0);
}

void reduce_scatter_block_linear(const Team& team, const void* send, void* recv,
                                 std::int64_t count, const Reduction& red) {
    const std::vector<std::int64_t> counts(static_cast<std::size_t>(team.size), count);
    reduce_scatter_linear(team, send, recv, counts.data(), red);
}

}  // namespace shmpi::coll
