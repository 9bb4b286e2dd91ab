// Allreduce in shared memory: the canonical fold (coll.hpp), the same bits
// on every member.
//
// Small payload, flat team, at the call's step s:
//   1. Every member claims its release line (everyone has finished reading
//      what it published there before), writes its contribution inline,
//      stores release = s and wakes everyone.
//   2. It waits for everyone's release of s.
//   3. It folds all the inline contributions itself, in the canonical
//      bracketing (on the stack with fold_slots() for teams up to 16): one
//      hop instead of a reduction up and a broadcast down, and every member
//      computes the same bits in the same order.  Its own contribution it
//      takes from its send buffer, not from its line: the stores into the
//      line wait in the store buffer until the line comes back from the
//      readers' caches, and a load that store forwarding cannot serve (a
//      memcpy of another width) waits for them (2 ranks, 8 B: 0.26 to
//      0.21 us per call).
//   4. It stores gather = s and wakes everyone: their lines are free.
//
// Otherwise: the band-tree reduction of reduce_tree_shm.cpp to member 0,
// which publishes the fold chunk by chunk in its cells, and every member
// copies the result out of them (a flat release of the result).
#include <cstring>

#include "coll/fold_shm.hpp"
#include "coll/reduce_tree_shm.hpp"

namespace shmpi::coll {

bool allreduce_shm_tree(const Team& team, const void* send, void* recv, std::int64_t count,
                        const Reduction& red) {
    ShmTeam* shm = ready(team);
    if (shm == nullptr) return false;
    if (!shm->reduction_fits(count, red.elem_bytes)) return false;
    const auto bytes = static_cast<std::size_t>(count * red.elem_bytes);
    if (reduction_needs_nobody(*shm, send, recv, bytes)) return true;
    const std::uint64_t s = shm->begin_call();

    if (bytes <= shm::kCollInline && shm->size() <= shm->tuning().flat_max) {
        // 1.
        shm->claim(ShmTeam::inline_area(s), s, ShmTeam::Readers::all());
        shm::CollLine& mine = shm->my_line(s);
        mine.bytes = bytes;
        copy_small(mine.data, send, bytes);
        shm->release(s);
        shm->notify_all();
        // 2.
        shm->wait_release_all(s);
        // 3.
        int bad = -1;
        auto contribution = [&](int m) -> const std::byte* {
            if (m == shm->index()) return static_cast<const std::byte*>(send);
            const shm::CollLine& c = shm->line(m, s);
            if (c.bytes != bytes && bad < 0) bad = m;
            return c.data;
        };
        auto* out = static_cast<std::byte*>(recv);
        if (shm->size() <= fold::kInlineFoldMax) {
            fold::fold_inline(shm->size(), contribution, out, count, red);
        } else {
            auto leaf = [&](const tree::Op& op, std::byte*) {
                return contribution(op.kind == tree::Op::Self ? shm->index() : op.member);
            };
            shm->scratch().resize(bytes);
            fold::evaluate(shm->flat_program(), leaf, out, count, red, shm->scratch());
        }
        // 4.
        shm->gather(s);
        shm->notify_all();
        if (bad >= 0) throw_size_mismatch(bad, shm->line(bad, s).bytes, team.rank, bytes);
        return true;
    }

    std::byte* out = static_cast<std::byte*>(recv);
    int bad_from = -1;
    std::uint64_t bad_bytes = 0;
    const bool tiny = bytes <= shm::kCollInline;
    const bool ok = detail::tree_reduce(*shm, s, static_cast<const std::byte*>(send), count, red,
                                        tiny ? shm->small_band() : shm->tuning().pipeline_band,
                                        shm->index() == 0 ? out : nullptr,
                                        detail::ResultReaders::All, 0, out, bad_from, bad_bytes);
    if (!ok) throw_size_mismatch(bad_from, bad_bytes, team.rank, bytes);
    return true;
}

}  // namespace shmpi::coll
