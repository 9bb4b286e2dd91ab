// Alltoall in shared memory, for exchanges small enough for the cells:
// every member publishes its whole send buffer (all n blocks, dense) once,
// inline with its flag (up to 64 B) or in its cells, and every member copies
// its own block out of every other member's.  One flag per member replaces
// the n - 1 point-to-point messages each member sends and receives.
//
// Taken when n blocks of the call's block size fit a member's cells
// (ShmTeam::carry_for() is not Direct): the choice depends only on the
// team and the block size, which every member has alike, so all take it or
// all decline.  Larger exchanges, and Alltoallv/w, run linear.
//
// At the call's step s:
//   1. Every member makes its n send blocks one dense run (in place: the
//      caller staged the other blocks; a send type that is not one
//      contiguous run is packed block by block), puts it (put_block()),
//      stores release = s and wakes everyone.
//   2. Member by member (each starting at a different one), it waits for
//      that member's release of s and copies block `me` of what it
//      published into its own receive block m (unpacked into the receive
//      type when that is not one run), checking the member's block size.
//   3. It copies its own block, stores gather = s and wakes everyone (the
//      next call's claim() waits for every reader's gather before it
//      reuses the cells).
//   4. It reports the first member whose block size disagreed with ours.
#include <cstring>
#include <memory>

#include "coll/linear.hpp"
#include "coll/linear_p2p.hpp"
#include "coll/shm_team.hpp"
#include "dtype/datatype.hpp"

namespace shmpi::coll {
namespace {

std::byte* block_at(PeerBlocks side, int r) { return static_cast<std::byte*>(side.base) + side.displs[r]; }

/// Our n send blocks as one dense run of n * `block` bytes: the send
/// buffer itself when its blocks already are one (MPI_Alltoall of a
/// contiguous type), else packed into the piece buffer block by block (in
/// place, our own block has no type and its part of the run is not read).
const void* dense_image(ShmTeam& shm, PeerBlocks send, std::int64_t block, int n, int me) {
    const dtype::Datatype* type = send.types[me];
    bool whole = type != nullptr && type->is_run(send.counts[me] * n);
    for (int r = 0; r < n && whole; ++r) {
        whole = send.types[r] == type && send.counts[r] == send.counts[me] &&
                send.displs[r] - send.displs[0] == r * send.counts[me] * type->extent;
    }
    if (whole) return block_at(send, 0) + type->true_lb;
    std::byte* stage = shm.bounce(static_cast<std::size_t>(n * block));
    for (int r = 0; r < n; ++r) {
        if (send.types[r] != nullptr)
            dtype::pack(*send.types[r], block_at(send, r), send.counts[r], stage + r * block);
    }
    return stage;
}

}  // namespace

bool alltoall_shm(const Team& team, std::int64_t block, PeerBlocks send, PeerBlocks recv) {
    ShmTeam* shm = ready(team);
    if (shm == nullptr || team.size < 2) return false;
    const int n = shm->size();
    const int me = shm->index();
    // n blocks of `b` bytes; past 2^64, the largest size (which fits nothing).
    const auto image_bytes = [n](std::int64_t b) {
        std::uint64_t bytes = 0;
        const bool over = b < 0 || __builtin_mul_overflow(static_cast<std::uint64_t>(n),
                                                          static_cast<std::uint64_t>(b), &bytes);
        return over ? ~std::uint64_t{0} : bytes;
    };
    const auto fits = [&](std::uint64_t bytes) { return shm->carry_for(bytes) != ShmTeam::Carry::Direct; };
    if (!fits(image_bytes(block))) return false;

    // 1.  Our block size, from any block with a type (the others are alike
    // in an Alltoall; in place our own has none).  Blocks of another size
    // than the call's are an error the readers report; too large for our
    // cells, only their size is published.
    std::int64_t mine = 0;
    for (int r = 0; r < n; ++r) {
        if (send.types[r] != nullptr) {
            mine = send.counts[r] * send.types[r]->size;
            break;
        }
    }
    // Too large to publish: the readers see the size and report it.
    const std::uint64_t total = image_bytes(mine);
    const bool mine_fits = fits(total);
    const void* image = mine > 0 && mine_fits ? dense_image(*shm, send, mine, n, me) : nullptr;
    const std::uint64_t s = shm->begin_call();
    if (mine_fits) {
        shm->put_block(s, image, total, ShmTeam::Readers::all());
    } else {
        shm->put_line(s, ShmTeam::Readers::all(), total, 0);
    }
    shm->release(s);
    shm->notify_all();

    // 2.
    int bad = -1;
    std::uint64_t bad_bytes = 0;
    for (int k = 1; k < n; ++k) {
        const int m = (me + k) % n;
        shm->wait_release(m, s);
        const std::uint64_t got = shm->line(m, s).bytes;
        const std::uint64_t theirs = got / static_cast<std::uint64_t>(n);
        if (theirs != static_cast<std::uint64_t>(block)) {
            if (bad < 0) {
                bad = m;
                bad_bytes = theirs;
            }
            continue;
        }
        if (block == 0) continue;
        const std::byte* from = shm->published(m, s, got) + static_cast<std::uint64_t>(me) * theirs;
        const dtype::Datatype& type = *recv.types[m];
        if (type.is_run(recv.counts[m])) {
            std::memcpy(block_at(recv, m) + type.true_lb, from, static_cast<std::size_t>(block));
        } else {
            dtype::unpack(type, from, block, block_at(recv, m));
        }
    }

    // 3.
    std::unique_ptr<MpiError> own;
    if (send.types[me] != nullptr) {
        own = linear::copy_own(block_at(send, me), send.counts[me], *send.types[me], block_at(recv, me),
                               recv.counts[me], *recv.types[me], team.rank);
    }
    shm->gather(s);
    shm->notify_all();

    // 4.
    if (bad >= 0) throw_size_mismatch(bad, bad_bytes, team.rank, static_cast<std::uint64_t>(block));
    if (own) throw *own;
    return true;
}

}  // namespace shmpi::coll
