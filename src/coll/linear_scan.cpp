// Linear prefix reductions: rank r receives the contributions of ranks
// 0 .. r-1 (each rank sends its own to every higher rank) and folds them
// left to right (linear.hpp) over [0, r + 1) (scan) or [0, r) (exscan).
#include <cstring>

#include "coll/linear.hpp"
#include "coll/linear_p2p.hpp"
#include "coll/scratch.hpp"

namespace shmpi::coll {
namespace {

/// Posts the receives from the lower ranks into their slots and the sends
/// of `send` to the higher ranks.
void exchange_prefix(const Team& team, linear::Exchange& ex, const void* send, std::byte* slots,
                     std::int64_t bytes) {
    for (int j = 0; j < team.rank; ++j) ex.recv(j, slots + j * bytes, bytes);
    for (int j = team.rank + 1; j < team.size; ++j) ex.send(j, send, bytes);
}

}  // namespace

void scan_linear(const Team& team, const void* send, void* recv, std::int64_t count,
                 const Reduction& red) {
    const std::int64_t bytes = count * red.elem_bytes;
    const int me = team.rank;
    const Scratch slots((me + 1) * bytes);
    linear::Exchange ex(team, linear::kTagScan);
    exchange_prefix(team, ex, send, slots.get(), bytes);
    if (bytes > 0) std::memcpy(slots.get() + me * bytes, send, static_cast<std::size_t>(bytes));
    ex.wait();
    fold_chain(slots.get(), bytes, 0, me + 1, count, red);
    if (bytes > 0) std::memcpy(recv, slots.get() + me * bytes, static_cast<std::size_t>(bytes));
}

void exscan_linear(const Team& team, const void* send, void* recv, std::int64_t count,
                   const Reduction& red) {
    const std::int64_t bytes = count * red.elem_bytes;
    const int me = team.rank;
    const Scratch slots(me * bytes);
    linear::Exchange ex(team, linear::kTagScan);
    exchange_prefix(team, ex, send, slots.get(), bytes);
    ex.wait();
    if (me == 0) return;
    fold_chain(slots.get(), bytes, 0, me, count, red);
    if (bytes > 0) std::memcpy(recv, slots.get() + (me - 1) * bytes, static_cast<std::size_t>(bytes));
}

}  // namespace shmpi::coll
