// Which shared-memory variant runs a call that asked for "shm": by size,
// the same choice on every member (sizes agree, and single_copy() is the
// same everywhere).  The thresholds are ShmTuning's (SHMPI_COLL_SHM_DIRECT,
// SHMPI_COLL_SHM_RSAG); docs/DESIGN.md explains them.
#include "coll/shm_team.hpp"

namespace shmpi::coll {

bool bcast_shm(const Team& team, void* buf, std::int64_t bytes, int root, Landing* land, Source* source) {
    ShmTeam* shm = ready(team);
    if (shm == nullptr) return false;
    if (bytes >= shm->tuning().direct_min && shm->single_copy()) {
        return bcast_shm_direct(team, buf, bytes, root, land, source);
    }
    return bcast_shm_tree(team, buf, bytes, root, land, source);
}

bool reduce_shm(const Team& team, const void* send, void* recv, std::int64_t count,
                const Reduction& red, int root) {
    ShmTeam* shm = ready(team);
    if (shm == nullptr) return false;
    // Measured on 2 CPUs (docs/COLLECTIVES.md): the tree wins up to 128 KiB
    // at 2, 4 and 8 members; push from 256 KiB.
    if (count * red.elem_bytes >= shm->tuning().rsag_min && shm->single_copy()) {
        // Declines (having touched nothing) only past 2^8 members.
        if (reduce_shm_push(team, send, recv, count, red, root)) return true;
        return reduce_shm_rsag(team, send, recv, count, red, root);
    }
    return reduce_shm_tree(team, send, recv, count, red, root);
}

bool allreduce_shm(const Team& team, const void* send, void* recv, std::int64_t count,
                   const Reduction& red) {
    ShmTeam* shm = ready(team);
    if (shm == nullptr) return false;
    // Measured on 2 CPUs (docs/COLLECTIVES.md): the tree wins below 256 KiB
    // (below 128 KiB with 2 members, where rsag's two halves run in
    // parallel); beyond, rsag up to 4 members, push from 5 (whose tree
    // keeps fewer members busy copying at once).
    const std::int64_t bytes = count * red.elem_bytes;
    const std::int64_t from = shm->size() == 2 ? shm->tuning().rsag_min / 2 : shm->tuning().rsag_min;
    if (bytes >= from && shm->single_copy()) {
        if (shm->size() <= 4 && allreduce_shm_rsag(team, send, recv, count, red)) return true;
        if (allreduce_shm_push(team, send, recv, count, red)) return true;
        return allreduce_shm_rsag(team, send, recv, count, red);
    }
    return allreduce_shm_tree(team, send, recv, count, red);
}

}  // namespace shmpi::coll
