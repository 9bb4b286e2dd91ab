// Reduce in shared memory along the canonical bracketing (coll.hpp).
//
// Small payload, flat team (the common case of a few bytes on a few ranks),
// at the call's step s:
//   1. Every member but the root claims its release line, writes its
//      contribution inline and stores release = s (it does not wait: it may
//      run ahead to its next call, up to its next claim of that line).
//   2. The root waits for everyone's release of s and folds the inline
//      contributions itself in the canonical bracketing (on the stack with
//      fold_slots() for teams up to 16, else the flat program).
//   3. The root stores gather = s and wakes everyone: their lines are free.
//
// Anything else goes up a band tree (tree_shm.hpp) whose shape is the
// canonical bisection, pipelined in chunks of a slot, in windows of kSlots
// chunks (tree_reduce() below):
//   4. For each chunk k of the window (step s + k, slot k mod kSlots), a
//      member evaluates its program: its own contribution, its children's
//      published values (waiting for each child's release of the step),
//      combined in canonical order.  Member 0's program gives the fold.
//   5. A member with a parent claims its slot (its parent has finished the
//      chunk that used it last), writes its value there, stores release and
//      wakes the parent.  Member 0 writes the fold to its destination and,
//      when others read the result, also publishes it in its slot.
//   6. A member that does not read the result stores gather = the step
//      after each chunk and wakes its children (their slots are free).
//   7. A member that reads the result (the root, when it is not member 0;
//      everyone in an allreduce) copies the window's result chunks out of
//      member 0's slots after its own part of the window, then stores
//      gather = the window's last step and wakes its children and member 0.
// Children write only slots their parent has finished with, and a window's
// chunks use distinct slots, so no member ever waits for a later step of
// another: the pipeline cannot deadlock.
#include "coll/reduce_tree_shm.hpp"

#include <algorithm>
#include <cstring>
#include <vector>

#include "arith.hpp"
#include "coll/fold_shm.hpp"

namespace shmpi::coll {
namespace detail {

bool tree_reduce(ShmTeam& shm, std::uint64_t s, const std::byte* send, std::int64_t count,
                 const Reduction& red, int band, std::byte* top, ResultReaders who, int root,
                 std::byte* result, int& bad_from, std::uint64_t& bad_bytes) {
    const int me = shm.index();
    const tree::BandTree& t = shm.band_tree(band);
    const std::span<const tree::Op> program = t.program(me);
    const std::span<const int> children = t.children(me);
    const int parent = t.parent(me);
    const std::int64_t eb = red.elem_bytes;
    const auto bytes = static_cast<std::uint64_t>(count * eb);
    const bool tiny = bytes <= shm::kCollInline;
    const std::int64_t per_chunk = tiny ? count : static_cast<std::int64_t>(shm.slot_bytes()) / eb;
    const std::int64_t chunks = ceil_div(count, per_chunk);
    const bool reads_result = me != 0 && (who == ResultReaders::All || (who == ResultReaders::Root && me == root));
    const bool publishes = me != 0 || who != ResultReaders::None;
    // Who reads what this member publishes: its parent, or for member 0
    // the result's readers.
    ShmTeam::Readers readers = ShmTeam::Readers::member(parent);
    if (me == 0) {
        readers = who == ResultReaders::All ? ShmTeam::Readers::all() : ShmTeam::Readers::member(root);
    }
    // Whom our gather may wake: our children, and member 0 when we read
    // its result.
    std::vector<int> gather_waiters(children.begin(), children.end());
    if (reads_result) gather_waiters.push_back(0);

    shm::CollLine& mine = shm.my_line(s);
    shm.scratch().resize(static_cast<std::size_t>(per_chunk * eb));
    bool ok = true;

    for (std::int64_t w0 = 0; w0 < chunks; w0 += ShmTeam::kSlots) {
        const std::int64_t w1 = std::min<std::int64_t>(chunks, w0 + ShmTeam::kSlots);
        for (std::int64_t k = w0; k < w1; ++k) {
            const std::uint64_t step = s + static_cast<std::uint64_t>(k);
            const int area = tiny ? ShmTeam::inline_area(s) : static_cast<int>(k % ShmTeam::kSlots);
            const std::int64_t first = k * per_chunk;
            const std::int64_t n = std::min(per_chunk, count - first);
            const std::size_t off = static_cast<std::size_t>(first * eb);

            // 4. Our program for this chunk.
            auto leaf = [&](const tree::Op& op, std::byte*) -> const std::byte* {
                if (op.kind == tree::Op::Self) return send + off;
                shm.wait_release(op.member, step);
                const shm::CollLine& c = shm.line(op.member, s);
                if (k == 0 && c.bytes != bytes && ok) {
                    ok = false;
                    bad_from = op.member;
                    bad_bytes = c.bytes;
                }
                return tiny ? c.data : shm.slot_of(op.member, area);
            };
            if (publishes) {
                // 5. Into our area, for the parent (or the result's readers).
                if (k == 0 && !tiny) shm.claim(ShmTeam::inline_area(s), step, readers);
                shm.claim(area, step, readers);
                std::byte* dest = tiny ? mine.data : shm.my_slot(area);
                fold::evaluate(program, leaf, dest, n, red, shm.scratch());
                if (k == 0) mine.bytes = bytes;
                shm.release(step);
                if (me != 0) {
                    shm.notify(parent);
                } else if (who == ResultReaders::All) {
                    shm.notify_all();
                } else {
                    shm.notify(root);
                }
                if (me == 0 && top != nullptr) std::memcpy(top + off, dest, static_cast<std::size_t>(n * eb));
            } else {
                fold::evaluate(program, leaf, top + off, n, red, shm.scratch());
            }
            // 6.
            if (!reads_result && !children.empty()) {
                shm.gather(step);
                shm.notify(children);
            }
        }
        // 7. The window's result, out of member 0's area.
        if (reads_result) {
            for (std::int64_t k = w0; k < w1; ++k) {
                const std::uint64_t step = s + static_cast<std::uint64_t>(k);
                const std::int64_t first = k * per_chunk;
                const std::int64_t n = std::min(per_chunk, count - first);
                shm.wait_release(0, step);
                const std::byte* from = tiny ? shm.line(0, s).data
                                             : shm.slot_of(0, static_cast<int>(k % ShmTeam::kSlots));
                std::memcpy(result + first * eb, from, static_cast<std::size_t>(n * eb));
            }
            shm.gather(s + static_cast<std::uint64_t>(w1 - 1));
            shm.notify(gather_waiters);
        }
    }
    return ok;
}

}  // namespace detail

namespace {

/// Steps 1-3: the root folds everyone's inline contribution itself.
void reduce_flat(ShmTeam& shm, std::uint64_t s, const void* send, void* recv, std::int64_t count,
                 const Reduction& red, int root, int my_rank) {
    const auto bytes = static_cast<std::uint64_t>(count * red.elem_bytes);
    if (shm.index() != root) {
        // 1.
        shm.claim(ShmTeam::inline_area(s), s, ShmTeam::Readers::member(root));
        shm::CollLine& mine = shm.my_line(s);
        mine.bytes = bytes;
        copy_small(mine.data, send, bytes);
        shm.release(s);
        shm.notify(root);
        return;
    }
    // 2.
    shm.wait_release_all(s);
    int bad = -1;
    auto contribution = [&](int m) -> const std::byte* {
        if (m == root) return static_cast<const std::byte*>(send);
        const shm::CollLine& c = shm.line(m, s);
        if (c.bytes != bytes && bad < 0) bad = m;
        return c.data;
    };
    auto* out = static_cast<std::byte*>(recv);
    if (shm.size() <= fold::kInlineFoldMax) {
        fold::fold_inline(shm.size(), contribution, out, count, red);
    } else {
        auto leaf = [&](const tree::Op& op, std::byte*) {
            return contribution(op.kind == tree::Op::Self ? root : op.member);
        };
        shm.scratch().resize(bytes);
        fold::evaluate(shm.flat_program(), leaf, out, count, red, shm.scratch());
    }
    // 3.
    shm.gather(s);
    shm.notify_all();
    if (bad >= 0) throw_size_mismatch(bad, shm.line(bad, s).bytes, my_rank, bytes);
}

}  // namespace

bool reduce_shm_tree(const Team& team, const void* send, void* recv, std::int64_t count,
                     const Reduction& red, int root) {
    ShmTeam* shm = ready(team);
    if (shm == nullptr) return false;
    if (!shm->reduction_fits(count, red.elem_bytes)) return false;
    const auto bytes = static_cast<std::size_t>(count * red.elem_bytes);
    if (reduction_needs_nobody(*shm, send, recv, bytes)) return true;
    const std::uint64_t s = shm->begin_call();
    const bool tiny = bytes <= shm::kCollInline;
    if (tiny && shm->size() <= shm->tuning().flat_max) {
        reduce_flat(*shm, s, send, recv, count, red, root, team.rank);
        return true;
    }
    const int me = shm->index();
    std::byte* out = static_cast<std::byte*>(recv);
    const detail::ResultReaders who = root == 0 ? detail::ResultReaders::None : detail::ResultReaders::Root;
    int bad_from = -1;
    std::uint64_t bad_bytes = 0;
    const bool ok = detail::tree_reduce(*shm, s, static_cast<const std::byte*>(send), count, red,
                                        tiny ? shm->small_band() : shm->tuning().pipeline_band,
                                        me == 0 && root == 0 ? out : nullptr, who, root,
                                        me == root ? out : nullptr, bad_from, bad_bytes);
    if (!ok) throw_size_mismatch(bad_from, bad_bytes, team.rank, bytes);
    return true;
}

}  // namespace shmpi::coll
