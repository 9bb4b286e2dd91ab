// Broadcast down a release tree (flat for small teams), in shared memory.
//
// Every member but the root copies the message out of its parent's area
// (into its typed buffer, a Landing, chunk by chunk when it has one); a
// member with children also publishes it in its own area for them.  A root
// whose buffer is typed (a Source) packs each chunk straight into its
// cells.  At the call's step s, with C = a slot of cells:
//   1. Up to 64 bytes travel inline: the source writes `bytes` and the data
//      into its release line (after claim(): the readers of its previous
//      inline data have finished), stores release = s and wakes its children.
//   2. Larger messages go in chunks of C bytes, chunk k at step s + k in
//      slot k mod kSlots, so up to kSlots chunks are in flight on each level
//      of the tree; the line's `bytes` goes with chunk 0.  Where the team
//      has wide cells (MPI_COMM_WORLD when ranks outnumber CPUs), a message
//      the cells cannot hold whole goes through their slots instead, C an
//      eighth of it: a source then publishes up to 1 MiB without waiting
//      for a reader, each wait being a context switch there.
//   3. A reader waits for its parent's release of the step, takes the size
//      from the parent's line (so all members follow the root's size, even
//      a member that expected another), copies the chunk out, republishes
//      it for its own children (steps 1-2), then stores gather = the step
//      and wakes its parent, which may wait to reuse that area.
//   4. After the last chunk a member whose size disagreed with the root's
//      reports it (MPI_ERR_TRUNCATE or MPI_ERR_COUNT).
#include <algorithm>
#include <cstring>

#include "arith.hpp"
#include "coll/shm_team.hpp"

namespace shmpi::coll {

bool bcast_shm_tree(const Team& team, void* buf, std::int64_t bytes, int root, Landing* land, Source* typed) {
    ShmTeam* shm = ready(team);
    if (shm == nullptr) return false;
    if (!shm->steps_fit(static_cast<std::uint64_t>(bytes), 1)) return false;
    if (shm->size() == 1 || bytes == 0) return true;
    const std::uint64_t s = shm->begin_call();
    const ShmTeam::ReleaseNode& node = shm->release_node(root);
    const int parent = node.parent;
    const auto readers = node.children_all ? ShmTeam::Readers::all() : ShmTeam::Readers::of(node.children);
    const bool source = parent < 0;
    const bool relay = !node.children.empty();
    auto* out = static_cast<std::byte*>(buf);
    const auto want = static_cast<std::uint64_t>(bytes);
    shm::CollLine& mine = shm->my_line(s);

    // The size everyone follows: the root's.
    std::uint64_t total = want;
    if (!source) {
        shm->wait_release(parent, s);
        total = shm->line(parent, s).bytes;
    }

    if (total <= shm::kCollInline) {
        // 1. Inline.
        if (typed != nullptr) typed->dense();
        const std::byte* from = source ? out : shm->line(parent, s).data;
        if (relay) {
            shm->claim(ShmTeam::inline_area(s), s, readers);
            mine.bytes = total;
            copy_small(mine.data, from, total);
            shm->release(s);
            shm->notify(node.children);
        }
        if (!source) {
            ShmTeam::store(out, from, std::min(total, want), land, 0);
            // 3. Done with the parent's line.
            shm->gather(s);
            shm->notify(parent);
        }
    } else {
        // 2. Chunks through the cells, or, for a message the cells cannot
        // hold whole, through the wide cells where the team has them, in
        // chunks of an eighth of the message (whole pages; at least a slot
        // of the cells, at most a wide slot), so that up to a wide cell's
        // worth the source never waits and the readers still start after
        // an eighth.  Every member decides alike, from the root's size.
        const bool wide = shm->wide_slot_bytes() > shm->slot_bytes() && total > shm->cell_bytes();
        const std::uint64_t chunk =
            wide ? std::clamp<std::uint64_t>(ceil_div(total, ShmTeam::kSlots * 4096) * 4096, shm->slot_bytes(),
                                              shm->wide_slot_bytes())
                 : shm->slot_bytes();
        const std::uint64_t chunks = ceil_div(total, chunk);
        for (std::uint64_t k = 0; k < chunks; ++k) {
            const std::uint64_t step = s + k;
            const int slot = static_cast<int>(k % ShmTeam::kSlots);
            const std::uint64_t off = k * chunk;
            const std::uint64_t len = std::min(chunk, total - off);
            const std::byte* from = out + off;
            if (!source) {
                if (k > 0) shm->wait_release(parent, step);
                from = shm->slot_of(parent, slot, wide);
                if (off < want) ShmTeam::store(out + off, from, std::min(len, want - off), land, off);
            }
            if (relay) {
                if (k == 0) {
                    shm->claim(ShmTeam::inline_area(s), step, readers);
                    mine.bytes = total;
                }
                shm->claim(ShmTeam::slot_area(slot, wide), step, readers);
                std::byte* to = shm->my_slot(slot, wide);
                if (typed != nullptr) {
                    ShmTeam::pack_into(*typed, off, to, len, shm->bounce(chunk));
                } else {
                    std::memcpy(to, from, len);
                }
                shm->release(step);
                shm->notify(node.children);
            }
            if (!source) {
                // 3. Done with the parent's slot.
                shm->gather(step);
                shm->notify(parent);
            }
        }
    }
    if (land != nullptr && !source) land->filled = true;
    // 4.
    if (total != want) throw_size_mismatch(root, total, team.rank, want);
    return true;
}

}  // namespace shmpi::coll
