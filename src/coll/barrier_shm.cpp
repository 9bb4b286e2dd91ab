// Barrier in shared memory: a gather up the tree, then a release down it,
// over one flag per member (MPICH release_gather, Open MPI xhc).
//
// Tree teams (more members than SHMPI_COLL_SHM_FLAT), all at the call's
// step s:
//   1. Wait until every child's gather flag reaches s: its subtree arrived.
//   2. Store our gather flag = s and wake the parent.
//   3. The root goes on at once; every other member waits for its parent's
//      release flag to reach s.
//   4. Store our release flag = s and wake the children.
//
// Flat teams collapse the two trees into one hop, since every member can
// watch every other's flag: step 2 for everyone, then every member waits
// for all gather flags to reach s.  No member waits for a root that must
// first be scheduled, which is what matters when ranks outnumber cores.
#include "coll/shm_team.hpp"

namespace shmpi::coll {

bool barrier_shm(const Team& team) {
    ShmTeam* shm = ready(team);
    if (shm == nullptr) return false;
    if (shm->size() == 1) return true;
    const std::uint64_t s = shm->begin_call();

    if (shm->size() <= shm->tuning().flat_max) {
        // 2. Arrive, wake whoever already waits.
        shm->gather(s);
        shm->notify_all();
        // 1./3. Everyone has arrived.
        shm->wait_gather_all(s);
        return true;
    }

    const ShmTeam::ReleaseNode& node = shm->release_node(0);
    // 1. Our subtree has arrived.
    for (const int c : node.children) shm->wait_gather(c, s);
    // 2. Tell the parent.
    shm->gather(s);
    if (node.parent >= 0) {
        shm->notify(node.parent);
        // 3. Wait for the release from above.
        shm->wait_release(node.parent, s);
    }
    // 4. Release our subtree.
    if (!node.children.empty()) {
        shm->release(s);
        shm->notify(node.children);
    }
    return true;
}

}  // namespace shmpi::coll
