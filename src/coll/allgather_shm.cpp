// Allgather and allgatherv in shared memory: every member publishes its
// block once and every member copies every other block straight into its
// receive buffer (into its typed buffer, a Landing, when the blocks come
// inline or through the cells).
//
// At the call's step s:
//   1. Every member puts its block (put_block(): inline up to 64 B, in its
//      cells up to their size, else left in its own buffer for single
//      copies), stores release = s and wakes everyone.  In place, the block
//      is taken from its place in the receive buffer.
//   2. Member by member, it waits for the release of s and copies that
//      member's block as the member published it.
//   3. It stores gather = s and wakes everyone.  If its own block stayed in
//      its buffer, it waits until everyone has gathered s.
//   4. It reports the first member whose size disagreed with its table.
#include <algorithm>
#include <cstring>

#include "coll/linear.hpp"
#include "coll/shm_team.hpp"

namespace shmpi::coll {
namespace {

/// Everyone's blocks: a Blocks table, or every block `block` bytes at
/// m * block (no table to build for a plain allgather).
struct Layout {
    const std::int64_t* bytes = nullptr;
    const std::int64_t* offsets = nullptr;
    std::int64_t block = 0;
    std::int64_t size(int m) const { return bytes != nullptr ? bytes[m] : block; }
    std::int64_t offset(int m) const { return offsets != nullptr ? offsets[m] : m * block; }
};

void allgather_core(ShmTeam& shm, const void* send, std::int64_t send_bytes, void* recv, const Layout& lay,
                    int my_rank, Landing* land) {
    const std::uint64_t s = shm.begin_call();
    const int me = shm.index();
    auto* out = static_cast<std::byte*>(recv);
    const void* mine = send != nullptr ? send : out + lay.offset(me);
    const std::int64_t mine_bytes = send != nullptr ? send_bytes : lay.size(me);
    // 1.
    const ShmTeam::Carry carry =
        shm.put_block(s, mine, static_cast<std::uint64_t>(mine_bytes), ShmTeam::Readers::all());
    shm.release(s);
    shm.notify_all();
    int bad = -1;
    std::uint64_t bad_bytes = 0;
    if (send != nullptr) {
        ShmTeam::store(out + lay.offset(me), send,
                       static_cast<std::uint64_t>(std::min(send_bytes, lay.size(me))), land,
                       static_cast<std::uint64_t>(lay.offset(me)));
        if (send_bytes != lay.size(me)) {
            bad = me;
            bad_bytes = static_cast<std::uint64_t>(send_bytes);
        }
    }
    // 2.
    for (int k = 1; k < shm.size(); ++k) {
        const int m = (me + k) % shm.size();  // start at different members
        shm.wait_release(m, s);
        const auto want = static_cast<std::uint64_t>(lay.size(m));
        const std::uint64_t got =
            shm.get_block(m, s, out + lay.offset(m), want, land, static_cast<std::uint64_t>(lay.offset(m)));
        if (got != want && bad < 0) {
            bad = m;
            bad_bytes = got;
        }
    }
    // 3.
    shm.gather(s);
    shm.notify_all();
    if (land != nullptr) land->filled = true;
    if (carry == ShmTeam::Carry::Direct) shm.wait_gather_all(s);
    // 4.
    if (bad >= 0) throw_size_mismatch(bad, bad_bytes, my_rank, static_cast<std::uint64_t>(lay.size(bad)));
}

}  // namespace

bool allgather_shm(const Team& team, const void* send, std::int64_t block, void* recv, Landing* land) {
    ShmTeam* shm = ready(team);
    if (shm == nullptr) return false;
    if (shm->carry_for(static_cast<std::uint64_t>(block)) == ShmTeam::Carry::Direct &&
        !shm->single_copy()) {
        return false;
    }
    if (block == 0) return true;
    if (shm->size() == 1) {
        if (send != nullptr) std::memcpy(recv, send, static_cast<std::size_t>(block));
        return true;
    }
    // A typed receive buffer (`land`) takes the inline and cell blocks in
    // place (and our own block, from where it is); single copies go to the
    // dense buffer, which the caller unpacks.
    if (land != nullptr && shm->carry_for(static_cast<std::uint64_t>(block)) == ShmTeam::Carry::Direct) {
        land = nullptr;
    }
    if (land != nullptr && send == nullptr) {
        const auto at = static_cast<std::uint64_t>(team.rank) * static_cast<std::uint64_t>(block);
        land->store(land->state, static_cast<std::int64_t>(at), static_cast<const std::byte*>(recv) + at,
                    block);
    }
    allgather_core(*shm, send, block, recv, Layout{nullptr, nullptr, block}, team.rank, land);
    return true;
}

bool allgatherv_shm(const Team& team, const void* send, std::int64_t send_bytes, void* recv,
                    Blocks blocks) {
    ShmTeam* shm = ready(team);
    if (shm == nullptr) return false;
    // Every member knows every block's size, so all decline together.
    for (int m = 0; m < shm->size(); ++m) {
        if (shm->carry_for(static_cast<std::uint64_t>(blocks.bytes[m])) == ShmTeam::Carry::Direct &&
            !shm->single_copy()) {
            return false;
        }
    }
    if (shm->size() == 1) {
        if (send != nullptr && send_bytes > 0) {
            std::memcpy(static_cast<std::byte*>(recv) + blocks.offsets[0], send,
                        static_cast<std::size_t>(std::min(send_bytes, blocks.bytes[0])));
        }
        return true;
    }
    allgather_core(*shm, send, send_bytes, recv, Layout{blocks.bytes, blocks.offsets, 0}, team.rank, nullptr);
    return true;
}

}  // namespace shmpi::coll
