// Broadcast by single copies between the members' own buffers, all at once:
// every member copies the message out of the root's buffer
// (process_vm_readv), and the root, whose CPU would otherwise only wait,
// writes the last 1/n of it into every member's buffer
// (process_vm_writev), so the n CPUs each copy about (n-1)/n of a message.
//
// At the call's step s:
//   1. Every member publishes its buffer's address and its size; the root
//      claims its release line for everyone, the others for the root; they
//      store release = s and wake the root (the root wakes everyone).
//   2. A member waits for the root's release and copies the head of the
//      message (all of it, up to its own size, if the sizes differ) out of
//      the root's buffer.
//   3. The root, member by member, waits for its release and writes the
//      tail into its buffer (not when the sizes differ); then it stores
//      release = s + 1 and gather = s + 1 (it has read their lines) and
//      wakes everyone.
//   4. A member waits for the root's release of s + 1 (the tail is in), then
//      stores gather = s + 1 and wakes the root; the root returns when
//      everyone has gathered s + 1: until then its buffer is being read.
//   5. A member whose size disagreed with the root's reports it.
#include <algorithm>

#include "coll/shm_team.hpp"

namespace shmpi::coll {

bool bcast_shm_direct(const Team& team, void* buf, std::int64_t bytes, int root, Landing* /*land*/) {
    // A typed buffer still takes the dense copy and is unpacked afterwards:
    // the root's share of the copying (its writes of the tails) saves more
    // than landing in place would (measured: 1 MiB of a vector of 1 KiB
    // blocks, 2 ranks, 137 against 180 us).
    ShmTeam* shm = ready(team);
    if (shm == nullptr || !shm->single_copy()) return false;
    if (shm->size() == 1 || bytes == 0) return true;
    const std::uint64_t s = shm->begin_call();
    const auto want = static_cast<std::uint64_t>(bytes);
    const auto n = static_cast<std::uint64_t>(shm->size());
    auto* out = static_cast<std::byte*>(buf);

    // 1.
    const bool is_root = team.rank == root;
    shm->claim(ShmTeam::inline_area(s), s,
               is_root ? ShmTeam::Readers::all() : ShmTeam::Readers::member(root));
    shm::CollLine& mine = shm->my_line(s);
    mine.bytes = want;
    mine.addr = reinterpret_cast<std::uint64_t>(buf);
    shm->release(s);
    if (is_root) {
        shm->notify_all();
    } else {
        shm->notify(root);
    }

    const std::uint64_t tail = want / n;  // the root's share
    if (is_root) {
        // 3.
        for (int m = 0; m < shm->size(); ++m) {
            if (m == root) continue;
            shm->wait_release(m, s);
            const shm::CollLine& l = shm->line(m, s);
            if (l.bytes != want || tail == 0) continue;
            shm->write(m, reinterpret_cast<std::byte*>(l.addr) + (want - tail), out + (want - tail), tail);
        }
        shm->release(s + 1);
        // We have read every member's line: they may reuse them.
        shm->gather(s + 1);
        shm->notify_all();
        // 4.
        shm->wait_gather_all(s + 1);
        return true;
    }
    // 2.
    shm->wait_release(root, s);
    const shm::CollLine& src = shm->line(root, s);
    const std::uint64_t total = src.bytes;
    const std::uint64_t head = total == want ? want - tail : std::min(total, want);
    shm->read(root, reinterpret_cast<const void*>(src.addr), buf, head);
    // 4.
    shm->wait_release(root, s + 1);
    shm->gather(s + 1);
    shm->notify(root);
    // 5.
    if (total != want) throw_size_mismatch(root, total, team.rank, want);
    return true;
}

}  // namespace shmpi::coll
