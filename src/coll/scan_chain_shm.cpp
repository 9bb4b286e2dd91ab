// Scan and Exscan down a chain in shared memory, pipelined in chunks.
//
// The prefix reductions fold left to right (linear.hpp): rank r's scan
// result is S_r = S_{r-1} op x_r, S_0 = x_0.  So member r takes S_{r-1}
// from member r - 1, a chunk at a time, combines its own contribution into
// it and passes S_r on to member r + 1: n - 1 folds in all, the fewest
// that give n prefixes, and while member r folds chunk g its successor may
// fold chunk g - 1.  An Exscan passes the same S_r on and keeps the
// S_{r-1} it took.
//
// At the call's step s, with chunks of a slot of cells (up to kCollInline
// bytes: one chunk, in the release line of step s; of a wide slot, up to
// kWideChunk, where the team has wide cells and the message does not fit
// the cells, so that a member can publish up to kSlots such chunks without
// waiting for its successor: with ranks two or more to a CPU each such
// wait is a context switch); chunk g at step s + 1 + g in slot g mod kSlots:
//   1. Member r < n - 1 publishes its message size in its release line for
//      s (put_line(), claimed for member r + 1), released with chunk 0.
//   2. Member r >= 1 waits for member r - 1's release of s + 1 + g; on
//      chunk 0 it compares r - 1's size with its own and reports a
//      mismatch (MPI_ERR_TRUNCATE or MPI_ERR_COUNT) before it reads data.
//      It combines the chunk of S_{r-1} (the lower operand, read in place
//      in r - 1's slot) with its own contribution:
//        Scan:   into its receive buffer, a copy of its send buffer's chunk;
//        Exscan: into its slot, after it claimed the slot as in 3.
//      Then (Exscan: after it copied the chunk of S_{r-1} to its receive
//      buffer) it stores gather = s + 1 + g and wakes member r - 1, which
//      may be waiting to reuse that slot.
//   3. Member r < n - 1 claims slot g mod kSlots for member r + 1 (waiting
//      until r + 1 has gathered the step that last used it), writes S_r's
//      chunk there (member 0: x_0's), stores release = s + 1 + g and wakes
//      member r + 1.
// A member waits only for its predecessor's data and its successor's
// reads of older chunks, so the chain cannot deadlock; a member whose
// predecessor sent another size leaves the chain at once, and the members
// that wait for it find the differing call signature (check_calls()).
#include <algorithm>
#include <cstring>

#include "coll/shm_team.hpp"

namespace shmpi::coll {
namespace {

/// The largest chunk a wide slot carries down the chain.
constexpr std::uint64_t kWideChunk = std::uint64_t{128} << 10;

bool chain(const Team& team, const void* send, void* recv, std::int64_t count, const Reduction& red,
           bool inclusive) {
    ShmTeam* shm = ready(team);
    if (shm == nullptr) return false;
    const int n = shm->size();
    const int r = shm->index();
    const auto elem = static_cast<std::uint64_t>(red.elem_bytes);
    const auto bytes = static_cast<std::uint64_t>(count) * elem;
    if (n == 1) {
        if (inclusive && bytes > 0 && recv != send) std::memcpy(recv, send, bytes);
        return true;
    }
    // Chunks of a wide slot stop at 128 KiB: with 512 KiB ones (4 MiB wide
    // cells) the chain's pipeline was shorter and the 4 MiB Scan at 16
    // ranks took 1.4 times as long (docs/BENCHMARKS.md, session 56).
    const bool wide = shm->wide_slot_bytes() > shm->slot_bytes() && bytes > shm->cell_bytes();
    const std::uint64_t slot = wide ? std::min<std::uint64_t>(shm->wide_slot_bytes(), kWideChunk) : shm->slot_bytes();
    const std::uint64_t per = elem == 0 ? 0 : slot / elem * elem;  // whole elements a chunk
    if (bytes > 0 && per == 0) return false;  // an element larger than a slot
    const std::uint64_t chunks = bytes == 0 ? 0 : (bytes + per - 1) / per;
    if (chunks >= ShmTeam::kMaxSteps) return false;
    // Every member takes its steps, even one with nothing to fold, so that
    // the steps of the calls after this one agree.
    const std::uint64_t s = shm->begin_call();
    if (bytes == 0) return true;

    const auto* in = static_cast<const std::byte*>(send);
    auto* out = static_cast<std::byte*>(recv);
    const bool passes_on = r + 1 < n;
    const auto next = ShmTeam::Readers::member(r + 1);
    auto slot_index = [](std::uint64_t g) { return static_cast<int>(g % ShmTeam::kSlots); };
    // Up to kCollInline bytes travel in the release line of step s, which
    // put_line() claimed: a line a call, so a member runs as many calls
    // ahead of its successor as it has release lines (slot 0, which every
    // small call would use, let it run one call ahead).
    const bool in_line = bytes <= shm::kCollInline;
    // 3. Chunk g of S_r (filled by fill(area)) for member r + 1.
    auto publish = [&](std::uint64_t g, auto&& fill) {
        if (in_line) {
            fill(shm->my_line(s).data);
        } else {
            shm->claim(ShmTeam::slot_area(slot_index(g), wide), s + 1 + g, next);
            fill(shm->my_slot(slot_index(g), wide));
        }
        shm->release(s + 1 + g);
        shm->notify(r + 1);
    };
    // 1.
    if (passes_on) shm->put_line(s, next, bytes, 0);

    for (std::uint64_t g = 0; g < chunks; ++g) {
        const std::uint64_t step = s + 1 + g;
        const std::uint64_t off = g * per;
        const std::uint64_t len = std::min(per, bytes - off);
        const auto elems = static_cast<std::int64_t>(len / elem);
        const std::byte* x = in + off;
        std::byte* o = out + off;
        if (r == 0) {
            // S_0 = x_0.
            publish(g, [&](std::byte* mine) { std::memcpy(mine, x, len); });
            if (inclusive && o != x) std::memcpy(o, x, len);
            continue;
        }
        // 2.
        shm->wait_release(r - 1, step);
        if (g == 0) {
            const std::uint64_t theirs = shm->line(r - 1, s).bytes;
            if (theirs != bytes) throw_size_mismatch(r - 1, theirs, r, bytes);
        }
        const std::byte* prev = in_line ? shm->line(r - 1, s).data : shm->slot_of(r - 1, slot_index(g), wide);
        if (inclusive) {
            if (o != x) std::memcpy(o, x, len);
            red.combine(prev, o, elems, red.state);
            shm->gather(step);
            shm->notify(r - 1);
            if (passes_on) publish(g, [&](std::byte* mine) { std::memcpy(mine, o, len); });
        } else {
            if (passes_on) {
                // (x is read here, before o, which may be x, is written.)
                publish(g, [&](std::byte* mine) {
                    std::memcpy(mine, x, len);
                    red.combine(prev, mine, elems, red.state);
                });
            }
            std::memcpy(o, prev, len);
            shm->gather(step);
            shm->notify(r - 1);
        }
    }
    return true;
}

}  // namespace

bool scan_chain(const Team& team, const void* send, void* recv, std::int64_t count, const Reduction& red) {
    return chain(team, send, recv, count, red, true);
}

bool exscan_chain(const Team& team, const void* send, void* recv, std::int64_t count, const Reduction& red) {
    return chain(team, send, recv, count, red, false);
}

}  // namespace shmpi::coll
