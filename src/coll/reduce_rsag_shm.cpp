// Large reductions as a reduce-scatter followed by an allgather (allreduce)
// or a gather to the root (reduce), and large Reduce_scatter(_block)s, the
// reduce-scatter alone: by single copies between the members' own buffers;
// the cells are not used at all.
//
// The element range is cut into one slice per member (even slices, or the
// Reduce_scatter's counts).  Each member folds
// its own slice: it reads that slice of every peer's contribution straight
// out of the peer's send buffer (process_vm_readv) and combines them with
// the canonical program of coll.hpp (flat_program: the same bracketing and
// operand order as the linear reference), so the bits equal the linear
// result whatever the slicing.  All members fold at once, so the combining
// work is spread over the whole team.
//
// Steps, from the call's step s:
//   1. Publish the send buffer's address (addr), where our slice of the
//      result will be (aux: the receive buffer, or a private buffer on a
//      reduce's non-root) and our size; store release = s, wake everyone.
//   2. Wait for everyone's release of s.
//   3. Fold our slice, in sub-chunks that stay in cache, into its place.
//   4. Store release = s + 1 ("my slice is done"; we also read nothing of
//      the peers' buffers any more) and wake the readers of our slice.
//   Allreduce:
//   5. Wait for everyone's release of s + 1, then copy each peer's slice
//      out of its receive buffer into ours.  In place, our slice j was
//      read by member j in step 3, which it has finished.
//   6. Store gather = s + 1, wake everyone, and wait until everyone has
//      gathered s + 1: then nobody reads our buffers any more.
//   Reduce_scatter (the slice went straight into the receive buffer):
//   5". Store gather = s + 1 and wake everyone, then wait for everyone's
//      release of s + 1: nobody reads our send buffer any more.
//   Reduce:
//   5'. The root waits for everyone's release of s + 1, copies every slice
//      into its receive buffer, stores gather = s + 1 and wakes everyone.
//   6'. The others store gather = s + 1 (they read nothing more) and wait
//      for the root's gather of s + 1, which implies that every member
//      finished step 3, so no one reads their buffers any more.
#include <algorithm>
#include <cstring>
#include <vector>

#include "coll/fold_shm.hpp"
#include "coll/shm_team.hpp"

namespace shmpi::coll {
namespace {

/// Bytes folded at a time: large enough to amortise a system call per peer,
/// small enough for the scratch buffers to stay in cache.
constexpr std::int64_t kSubChunk = 128 * 1024;

/// Where each member's slice of the element range starts: member m folds
/// elements [first(m), first(m + 1)).
class Slices {
public:
    /// `count` elements cut into n slices of about the same size.
    Slices(std::int64_t count, int n) : starts_(static_cast<std::size_t>(n) + 1) {
        for (int m = 0; m <= n; ++m) starts_[static_cast<std::size_t>(m)] = count * m / n;
    }
    /// Slices of counts[0], ..., counts[n - 1] elements.
    Slices(const std::int64_t* counts, int n) : starts_(static_cast<std::size_t>(n) + 1) {
        for (int m = 0; m < n; ++m)
            starts_[static_cast<std::size_t>(m) + 1] = starts_[static_cast<std::size_t>(m)] + counts[m];
    }
    std::int64_t first(int m) const { return starts_[static_cast<std::size_t>(m)]; }
    std::int64_t size(int m) const { return first(m + 1) - first(m); }
    std::int64_t total() const { return starts_.back(); }

private:
    std::vector<std::int64_t> starts_;
};

/// Steps 1-3: publish, wait, fold our slice into `dest` (the slice's place).
/// Returns the first member whose size differs from ours, or -1.
int fold_my_slice(ShmTeam& shm, std::uint64_t s, const std::byte* send, std::uint64_t result_base,
                  std::byte* dest, std::int64_t count, const Reduction& red, const Slices& sl) {
    const std::int64_t eb = red.elem_bytes;
    const auto bytes = static_cast<std::uint64_t>(count * eb);
    // 1.
    shm.claim(ShmTeam::inline_area(s), s, ShmTeam::Readers::all());
    shm::CollLine& mine = shm.my_line(s);
    mine.bytes = bytes;
    mine.addr = reinterpret_cast<std::uint64_t>(send);
    mine.aux = result_base;
    shm.release(s);
    shm.notify_all();
    // 2.
    shm.wait_release_all(s);
    int bad = -1;
    for (int m = 0; m < shm.size(); ++m) {
        if (shm.line(m, s).bytes != bytes) {
            bad = m;
            break;
        }
    }
    if (bad >= 0) return bad;  // reading a peer's buffer at our sizes could fault
    // 3.
    const int me = shm.index();
    const std::int64_t per = std::max<std::int64_t>(1, kSubChunk / eb);
    shm.scratch().resize(static_cast<std::size_t>(per * eb));
    const std::int64_t end = sl.first(me) + sl.size(me);
    for (std::int64_t first = sl.first(me); first < end; first += per) {
        const std::int64_t n = std::min(per, end - first);
        const auto off = static_cast<std::size_t>(first * eb);
        auto leaf = [&](const tree::Op& op, std::byte* spare) -> const std::byte* {
            if (op.kind == tree::Op::Self) return send + off;
            const auto* remote = reinterpret_cast<const std::byte*>(shm.line(op.member, s).addr) + off;
            shm.read(op.member, remote, spare, static_cast<std::size_t>(n * eb));
            return spare;
        };
        fold::evaluate(shm.flat_program(), leaf, dest + (first - sl.first(me)) * eb, n, red,
                       shm.scratch());
    }
    return -1;
}

bool usable(const Team& team, const Reduction& red, ShmTeam*& shm) {
    shm = ready(team);
    return shm != nullptr && red.elem_bytes > 0 && shm->single_copy();
}

}  // namespace

bool allreduce_shm_rsag(const Team& team, const void* send, void* recv, std::int64_t count,
                        const Reduction& red) {
    ShmTeam* shm = nullptr;
    if (!usable(team, red, shm)) return false;
    const std::int64_t eb = red.elem_bytes;
    if (reduction_needs_nobody(*shm, send, recv, static_cast<std::size_t>(count * eb))) return true;
    const std::uint64_t s = shm->begin_call();
    const Slices sl(count, shm->size());
    const int me = shm->index();
    auto* out = static_cast<std::byte*>(recv);
    // 1-3.
    const int bad = fold_my_slice(*shm, s, static_cast<const std::byte*>(send),
                                  reinterpret_cast<std::uint64_t>(out), out + sl.first(me) * eb,
                                  count, red, sl);
    // 4.
    shm->release(s + 1);
    shm->notify_all();
    // 5.
    shm->wait_release_all(s + 1);
    if (bad < 0) {
        for (int m = 0; m < shm->size(); ++m) {
            if (m == me || sl.size(m) == 0) continue;
            const auto off = static_cast<std::size_t>(sl.first(m) * eb);
            shm->read(m, reinterpret_cast<const std::byte*>(shm->line(m, s).aux) + off, out + off,
                      static_cast<std::size_t>(sl.size(m) * eb));
        }
    }
    // 6.
    shm->gather(s + 1);
    shm->notify_all();
    shm->wait_gather_all(s + 1);
    if (bad >= 0) {
        throw_size_mismatch(bad, shm->line(bad, s).bytes, team.rank,
                            static_cast<std::uint64_t>(count * eb));
    }
    return true;
}

bool reduce_shm_rsag(const Team& team, const void* send, void* recv, std::int64_t count,
                     const Reduction& red, int root) {
    ShmTeam* shm = nullptr;
    if (!usable(team, red, shm)) return false;
    const std::int64_t eb = red.elem_bytes;
    if (reduction_needs_nobody(*shm, send, recv, static_cast<std::size_t>(count * eb))) return true;
    const std::uint64_t s = shm->begin_call();
    const Slices sl(count, shm->size());
    const int me = shm->index();
    // Where our slice of the result goes: the root's receive buffer, or a
    // private buffer the root reads from.
    std::byte* dest = nullptr;
    std::uint64_t base = 0;
    if (me == root) {
        dest = static_cast<std::byte*>(recv) + sl.first(me) * eb;
        base = reinterpret_cast<std::uint64_t>(recv);
    } else {
        dest = shm->buffer(0, static_cast<std::size_t>(std::max<std::int64_t>(1, sl.size(me) * eb)));
        base = reinterpret_cast<std::uint64_t>(dest) - static_cast<std::uint64_t>(sl.first(me) * eb);
    }
    // 1-3.
    const int bad = fold_my_slice(*shm, s, static_cast<const std::byte*>(send), base, dest, count,
                                  red, sl);
    // 4.
    shm->release(s + 1);
    if (me != root) {
        // We read nothing more in this call: say so at once, for members
        // that will claim their lines in the next call.
        shm->gather(s + 1);
        shm->notify_all();
        // 6'.
        shm->wait_gather(root, s + 1);
    } else {
        // 5'.
        shm->wait_release_all(s + 1);
        if (bad < 0) {
            auto* out = static_cast<std::byte*>(recv);
            for (int m = 0; m < shm->size(); ++m) {
                if (m == me || sl.size(m) == 0) continue;
                const auto off = static_cast<std::size_t>(sl.first(m) * eb);
                shm->read(m, reinterpret_cast<const std::byte*>(shm->line(m, s).aux) + off,
                          out + off, static_cast<std::size_t>(sl.size(m) * eb));
            }
        }
        shm->gather(s + 1);
        shm->notify_all();
    }
    if (bad >= 0) {
        throw_size_mismatch(bad, shm->line(bad, s).bytes, team.rank,
                            static_cast<std::uint64_t>(count * eb));
    }
    return true;
}

bool reduce_scatter_shm_rsag(const Team& team, const void* send, void* recv, const std::int64_t* counts,
                             const Reduction& red) {
    ShmTeam* shm = nullptr;
    if (!usable(team, red, shm)) return false;
    const std::int64_t eb = red.elem_bytes;
    const Slices sl(counts, shm->size());
    const int me = shm->index();
    const auto mine = static_cast<std::size_t>(sl.size(me) * eb);
    if (shm->size() == 1) {
        if (mine > 0 && send != recv) std::memcpy(recv, send, mine);
        return true;
    }
    if (sl.total() == 0) return true;
    const std::uint64_t s = shm->begin_call();
    // Our slice of the result goes straight into the receive buffer, unless
    // that lies in the send buffer (in place, it is its head), which the
    // peers read until step 5": then into a private buffer first.
    const auto* in = static_cast<const std::byte*>(send);
    auto* out = static_cast<std::byte*>(recv);
    const auto at = [](const void* p) { return reinterpret_cast<std::uintptr_t>(p); };
    const bool overlap =
        mine > 0 && at(out) < at(in) + static_cast<std::uintptr_t>(sl.total() * eb) && at(in) < at(out) + mine;
    std::byte* dest = overlap ? shm->buffer(0, mine) : out;
    // 1-3.  (No member reads our result: `aux` stays 0.)
    const int bad = fold_my_slice(*shm, s, in, 0, dest, sl.total(), red, sl);
    // 4, 5".
    shm->release(s + 1);
    shm->gather(s + 1);
    shm->notify_all();
    shm->wait_release_all(s + 1);
    if (bad >= 0) {
        throw_size_mismatch(bad, shm->line(bad, s).bytes, team.rank, static_cast<std::uint64_t>(sl.total() * eb));
    }
    if (overlap) std::memcpy(out, dest, mine);
    return true;
}

bool reduce_scatter_block_shm_rsag(const Team& team, const void* send, void* recv, std::int64_t count,
                                   const Reduction& red) {
    const std::vector<std::int64_t> counts(static_cast<std::size_t>(team.size), count);
    return reduce_scatter_shm_rsag(team, send, recv, counts.data(), red);
}

}  // namespace shmpi::coll
