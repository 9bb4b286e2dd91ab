// Broadcast by single copy: every member copies the message straight out of
// the root's buffer with process_vm_readv, all at once.  One copy per
// member, none through the cells, so it wins for large messages.
//
// At the call's step s:
//   1. The root claims its release line (the readers of its previous inline
//      data have finished), writes `bytes` and its buffer's address there,
//      stores release = s and wakes everyone.
//   2. Every other member waits for the root's release, copies
//      min(root's bytes, its own) out of the root's buffer, stores
//      gather = s and wakes the root.
//   3. The root returns only when every member has gathered s: until then
//      its buffer is being read.
//   4. A member whose size disagreed with the root's reports it.
#include <algorithm>

#include "coll/shm_team.hpp"

namespace shmpi::coll {

bool bcast_shm_direct(const Team& team, void* buf, std::int64_t bytes, int root) {
    ShmTeam* shm = ready(team);
    if (shm == nullptr || !shm->single_copy()) return false;
    if (shm->size() == 1 || bytes == 0) return true;
    const std::uint64_t s = shm->begin_call();
    const auto want = static_cast<std::uint64_t>(bytes);

    if (team.rank == root) {
        // 1.
        shm->claim(ShmTeam::inline_area(s), s, ShmTeam::Readers::all());
        shm::CollLine& mine = shm->my_line(s);
        mine.bytes = want;
        mine.addr = reinterpret_cast<std::uint64_t>(buf);
        shm->release(s);
        shm->notify_all();
        // 3.
        shm->wait_gather_all(s);
        return true;
    }
    // 2.
    shm->wait_release(root, s);
    const shm::CollLine& src = shm->line(root, s);
    const std::uint64_t total = src.bytes;
    shm->read(root, reinterpret_cast<const void*>(src.addr), buf, std::min(total, want));
    shm->gather(s);
    shm->notify(root);
    // 4.
    if (total != want) throw_size_mismatch(root, total, team.rank, want);
    return true;
}

}  // namespace shmpi::coll
