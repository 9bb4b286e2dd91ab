// Broadcast by single copies between the members' own buffers, all at once:
// every member copies the message out of the root's buffer
// (process_vm_readv), and the root, whose CPU would otherwise only wait,
// writes the last 1/n of it into every member's buffer
// (process_vm_writev), so the n CPUs each copy about (n-1)/n of a message.
//
// A root whose buffer is typed (a Source) streams instead: it packs the
// message chunk by chunk into its cells, and every member copies each
// chunk out (into its own typed buffer when it has one, a Landing) while
// the root packs the next.  Packing and copying out overlap, and no pass
// over a whole dense copy is left.  (Streaming single copies of the root's
// dense buffer, packed a chunk at a time, measured slower: 148 against 108
// us for 1 MiB of 1 KiB blocks at 2 ranks.)
//
// At the call's step s:
//   1. Every member publishes its buffer's address and its size; the root
//      claims its release line for everyone, the others for the root; they
//      store release = s and wake the root (the root wakes everyone).  A
//      streaming root says so in `aux` (Carry::Stream).
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
//   Streaming, instead of 2-4: chunk k (a slot of cells) is published at
//   step s + 1 + k in slot k mod kSlots, claimed for everyone; a member
//   copies it out after the root's release of that step, stores
//   gather = s + 1 + k and wakes the root, which may be waiting to reuse
//   the slot.  The root never reads the members' lines; its gather of the
//   last step releases them.
//   5. A member whose size disagreed with the root's reports it.
#include <algorithm>

#include "coll/shm_team.hpp"

namespace shmpi::coll {
namespace {

/// The root's side of a streamed broadcast (after step 1's publication):
/// chunk g packed from `typed`, for everyone.
void stream_out(ShmTeam& shm, std::uint64_t s, Source& typed, std::uint64_t total) {
    const std::uint64_t chunk = shm.slot_bytes();
    for (std::uint64_t g = 0; g < shm.chunks(total); ++g) {
        shm.put_chunk(s, g, ShmTeam::Readers::all(), [&](std::byte* slot) {
            ShmTeam::pack_into(typed, g * chunk, slot, std::min(chunk, total - g * chunk), shm.bounce(chunk));
        });
        shm.notify_all();
    }
    // Done with the members' lines of step s (never read).
    shm.gather(s + shm.chunks(total));
}

}  // namespace

bool bcast_shm_direct(const Team& team, void* buf, std::int64_t bytes, int root, Landing* land,
                      Source* typed) {
    ShmTeam* shm = ready(team);
    if (shm == nullptr || !shm->single_copy()) return false;
    if (shm->size() == 1 || bytes == 0) return true;
    const std::uint64_t s = shm->begin_call();
    const auto want = static_cast<std::uint64_t>(bytes);
    const auto n = static_cast<std::uint64_t>(shm->size());
    auto* out = static_cast<std::byte*>(buf);
    const bool is_root = team.rank == root;
    // A typed root streams when the chunks fit the call's steps.
    const bool stream = is_root && typed != nullptr && shm->streams() && shm->steps_fit(want, 1);
    if (is_root && typed != nullptr && !stream) typed->dense();

    // 1.
    shm->put_line(s, is_root ? ShmTeam::Readers::all() : ShmTeam::Readers::member(root), want,
                  stream ? ShmTeam::kStreamed : 0, buf);
    shm->release(s);
    if (is_root) {
        shm->notify_all();
    } else {
        shm->notify(root);
    }
    if (stream) {
        stream_out(*shm, s, *typed, want);
        return true;
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
    if (src.aux == ShmTeam::kStreamed) {
        shm->take_chunks(root, s, 0, total, out, want, land);
        if (land != nullptr) land->filled = true;
    } else {
        // A typed buffer takes the dense copy and is unpacked afterwards:
        // the root's share of the copying (its writes of the tails) saves
        // more than landing in place would (measured: 1 MiB of a vector of
        // 1 KiB blocks, 2 ranks, 137 against 180 us).
        const std::uint64_t head = total == want ? want - tail : std::min(total, want);
        shm->read(root, reinterpret_cast<const void*>(src.addr), buf, head);
        // 4.
        shm->wait_release(root, s + 1);
        shm->gather(s + 1);
        shm->notify(root);
    }
    // 5.
    if (total != want) throw_size_mismatch(root, total, team.rank, want);
    return true;
}

}  // namespace shmpi::coll
