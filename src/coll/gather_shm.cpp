// Gather and gatherv in shared memory: every member publishes its block
// where the root can take it, and the root copies each block once into its
// receive buffer.  A block travels inline with the member's flag (up to
// 64 B: one cache miss for the root), through the member's cells (up to a
// cell area), or not at all: the root copies it straight out of the
// member's send buffer (process_vm_readv), a single copy.
//
// At the call's step s:
//   1. Every member but the root puts its block (put_block(): claims its
//      line and cells, the root having finished with their previous use),
//      stores release = s and wakes the root.  A member whose block stays
//      in its own buffer waits for the root's gather of s before returning;
//      the others return at once.
//   2. The root copies its own block (unless in place), then, member by
//      member, waits for the release of s and copies the block as that
//      member published it (its size and carry come from the member, so a
//      size mismatch cannot make the two sides disagree on the protocol).
//   3. The root stores gather = s and wakes everyone.
//   4. The root reports the first member whose size disagreed.
#include <algorithm>
#include <cstring>

#include "coll/linear.hpp"
#include "coll/shm_team.hpp"

namespace shmpi::coll {
namespace {

/// The root's blocks: a Blocks table, or every block `block` bytes at
/// m * block (no table to build for a plain gather).
struct Layout {
    const std::int64_t* bytes = nullptr;
    const std::int64_t* offsets = nullptr;
    std::int64_t block = 0;
    std::int64_t size(int m) const { return bytes != nullptr ? bytes[m] : block; }
    std::int64_t offset(int m) const { return offsets != nullptr ? offsets[m] : m * block; }
};

void gather_core(ShmTeam& shm, const void* send, std::int64_t send_bytes, void* recv,
                 const Layout& lay, int root) {
    const std::uint64_t s = shm.begin_call();
    const int me = shm.index();
    if (me != root) {
        // 1.
        const ShmTeam::Carry carry = shm.put_block(s, send, static_cast<std::uint64_t>(send_bytes),
                                                   ShmTeam::Readers::member(root));
        shm.release(s);
        shm.notify(root);
        if (carry == ShmTeam::Carry::Direct) shm.wait_gather(root, s);
        return;
    }
    // 2.
    auto* out = static_cast<std::byte*>(recv);
    int bad = -1;
    std::uint64_t bad_bytes = 0;
    if (send != nullptr && lay.size(me) > 0) {
        std::memcpy(out + lay.offset(me), send,
                    static_cast<std::size_t>(std::min(lay.size(me), send_bytes)));
    }
    if (send != nullptr && send_bytes != lay.size(me)) {
        bad = me;
        bad_bytes = static_cast<std::uint64_t>(send_bytes);
    }
    for (int m = 0; m < shm.size(); ++m) {
        if (m == me) continue;
        shm.wait_release(m, s);
        const auto want = static_cast<std::uint64_t>(lay.size(m));
        const std::uint64_t got = shm.get_block(m, s, out + lay.offset(m), want);
        if (got != want && bad < 0) {
            bad = m;
            bad_bytes = got;
        }
    }
    // 3.
    shm.gather(s);
    shm.notify_all();
    // 4.
    if (bad >= 0) throw_size_mismatch(bad, bad_bytes, root, static_cast<std::uint64_t>(lay.size(bad)));
}

}  // namespace

bool gather_shm(const Team& team, const void* send, std::int64_t block, void* recv, int root) {
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
    gather_core(*shm, send, block, recv, Layout{nullptr, nullptr, block}, root);
    return true;
}

bool gatherv_shm(const Team& team, const void* send, std::int64_t send_bytes, void* recv,
                 Blocks blocks, int root) {
    ShmTeam* shm = ready(team);
    // Members cannot tell whether some other block is too large for the
    // cells, so without single copies the whole call declines.
    if (shm == nullptr || !shm->single_copy()) return false;
    if (shm->size() == 1) {
        if (send != nullptr && send_bytes > 0) {
            std::memcpy(static_cast<std::byte*>(recv) + blocks.offsets[0], send,
                        static_cast<std::size_t>(std::min(send_bytes, blocks.bytes[0])));
        }
        if (send != nullptr && send_bytes != blocks.bytes[0]) {
            throw_size_mismatch(0, static_cast<std::uint64_t>(send_bytes), 0,
                                static_cast<std::uint64_t>(blocks.bytes[0]));
        }
        return true;
    }
    gather_core(*shm, send, send_bytes, recv, Layout{blocks.bytes, blocks.offsets, 0}, root);
    return true;
}

}  // namespace shmpi::coll
