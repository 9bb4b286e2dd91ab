// Gather and gatherv in shared memory: every member publishes its block
// where the root can take it, and the root copies each block once into its
// receive buffer.  A block travels inline with the member's flag (up to
// 64 B: one cache miss for the root), through the member's cells (up to a
// cell area), through its wide cells (up to their size, where there are
// some: ranks outnumber CPUs, and a member that waited for the root would
// wait for a context switch), or not at all: it is copied straight between
// the member's send buffer and the root's receive buffer.  Then the
// member writes the head of its block into the root's buffer itself
// (process_vm_writev) while the root reads the last 1/n
// (process_vm_readv): the n CPUs share the copying.  With 2 members the
// member writes all of it while the root copies its own block (when it has
// one: not in place).  A Gather's member
// knows where its block goes (every block the same size); a Gatherv's
// root tells its members in a table.  (2 ranks, us, against the root
// reading each Gatherv block whole: 256 KiB blocks 31-50 against 63-92,
// 1 MiB 141-177 against 282-372.)  A root whose
// receive buffer is typed (a Landing) stores the inline and cell blocks
// straight into it, and has a Gather's large blocks streamed to it through
// the members' cells, so that it unpacks each chunk while the member
// copies the next one in (no dense copy of the block, no pass over it).
//
// At the call's step s:
//   1. Every member but the root puts its block (put_wide(): claims its
//      line and cells, the root having finished with their previous use),
//      stores release = s and wakes the root.  A member whose block stays
//      in its own buffer waits for the root (step 3); the others return.
//   2. For a Gather of large blocks the root first publishes its receive
//      buffer's address, the block size and whether it reads tails
//      (release = s, wakes everyone); for a Gatherv where it expects some
//      large block, the address and size of every block (a TableEntry
//      each, in its line or its cells; its own says whether it reads
//      tails).
//   3. A member whose block stays in its buffer waits for the root's release
//      of s (or, if the root does not split, its gather of s).  If the root
//      expects the size the member sends, the member writes its block (only
//      the head when the root reads tails) into the root's buffer; it
//      stores release = s + 1 and gather = s + 1, wakes the root, and waits
//      for the root's release of s + 2 + its index (the root is done with
//      its send buffer).  A member that put its block inline or in its
//      cells stores gather = s (it may be a reader of the root's line) and
//      returns.
//   4. The root copies its own block (unless in place), then, member by
//      member, waits for the release of s and copies the block as that
//      member published it (its size and carry come from the member, so a
//      size mismatch cannot make the two sides disagree on the protocol):
//      of a split block only the tail, if it reads tails.  When it split,
//      it then stores release = s + 2 + m and wakes m, and after the last
//      member waits for every release of s + 1 (every head written).
//   Streaming (a Gather of large blocks into a typed root buffer, or of
//   contiguous blocks up to ShmTuning::spread_max with a CPU for each of 3
//   or more members, whose single copies into the root would all pin its
//   pages at once): in step
//   2 the root publishes Carry::Stream in `aux`; in step 3 the member, instead of
//   writing, copies its block through its slots, chunk k at step
//   s + 1 + m * K + k (K: the chunks of the root's block size; member m's
//   steps never meet another's), claimed for the root, and returns after
//   storing gather = s.  In step 4 the root stores each chunk into its
//   buffer (typed or dense) after the member's release of its step, then stores
//   gather = that step (the slot is free again) and wakes the member.
//   5. The root stores gather = s (s + 1 when it split, past every chunk's
//      step when it streamed) and wakes everyone.
//   6. The root reports the first member whose size disagreed.
#include <algorithm>
#include <cstring>

#include "coll/linear.hpp"
#include "coll/shm_team.hpp"

namespace shmpi::coll {
namespace {

/// The part of a block of `bytes` the root reads itself when it splits the
/// copy with the member (the member writes the rest): the last 1/n when the
/// root reads tails, else none.  A root of 2 members reads no tail unless
/// it has no block of its own to copy (in place): its own copy takes about
/// as long as the member's write of its whole block.  Measured, coll_bench
/// Gather and Gatherv, µs, the member writing all against half: 2 CPUs,
/// 256 KiB 12-17 against 22, 1 MiB 82-106 against 130-143, 4 MiB 535-641
/// against 632-693, and on 16 cores 0.69-0.81 of the time at 64 KiB-4 MiB.
/// With more members the tails stay: with a CPU each, 4 and 8 members
/// writing whole blocks took 1.1-1.3 times as long at 256 KiB-1 MiB (0.7
/// at 4 MiB with 4); on 2 CPUs even (docs/BENCHMARKS.md, session 50).
std::uint64_t root_share(std::uint64_t bytes, int n, bool tails) {
    return tails ? bytes / static_cast<std::uint64_t>(n) : 0;
}

/// A Gather root's `aux` when it splits and reads tails (0: it splits
/// without; ShmTeam::kStreamed: it streams).  A Gatherv root says the
/// same in its own table entry, which no member needs otherwise: `where`
/// 1 for tails, 0 without.
constexpr std::uint64_t kTails = std::uint64_t{1} << 32;

/// The root's release that tells member m, in a split gather of step s,
/// that the root is done with m's send buffer: it reads the members' tails
/// in index order, so these grow, and each member returns as soon as its
/// own block is copied instead of waiting for everyone's.
std::uint64_t member_done(std::uint64_t s, int m) { return s + 2 + static_cast<std::uint64_t>(m); }

/// A member's side of a streamed gather: `bytes` of `send` as its chunks
/// from me * K on (K: the chunks of the root's block `block`, so members
/// never share a step and the root's gather flag only grows).
void stream_out(ShmTeam& shm, std::uint64_t s, const void* send, std::uint64_t bytes, std::uint64_t block,
                int root) {
    const std::uint64_t chunk = shm.slot_bytes();
    const std::uint64_t g0 = static_cast<std::uint64_t>(shm.index()) * shm.chunks(block);
    const auto* from = static_cast<const std::byte*>(send);
    for (std::uint64_t k = 0; k < shm.chunks(bytes); ++k) {
        shm.put_chunk(s, g0 + k, ShmTeam::Readers::member(root), [&](std::byte* slot) {
            std::memcpy(slot, from + k * chunk, std::min(chunk, bytes - k * chunk));
        });
        shm.notify(root);
    }
}

/// Whether the root of a Gatherv splits the copies of its single-copy
/// blocks with their members: when it expects some block that large, and
/// the table of where each block goes fits its cells.
bool splits(const ShmTeam& shm, const Blocks& lay) {
    if (static_cast<std::uint64_t>(shm.size()) * sizeof(TableEntry) > shm.cell_bytes()) return false;
    for (int m = 0; m < shm.size(); ++m) {
        if (m != shm.index() &&
            shm.wide_carry(static_cast<std::uint64_t>(lay.size(m))) == ShmTeam::Carry::Direct) {
            return true;
        }
    }
    return false;
}

/// A Gatherv root's step 2: the table of the address and size of every
/// member's block in `out` (TableEntry), in its line when it fits there,
/// else at the head of its cells.
void publish_table(ShmTeam& shm, std::uint64_t s, const Blocks& lay, std::byte* out, bool tails) {
    const std::uint64_t bytes = static_cast<std::uint64_t>(shm.size()) * sizeof(TableEntry);
    const bool in_line = bytes <= shm::kCollInline;
    shm.put_line(s, ShmTeam::Readers::all(), bytes,
                 static_cast<std::uint64_t>(in_line ? ShmTeam::Carry::Inline : ShmTeam::Carry::Cells));
    std::byte* table = shm.my_line(s).data;
    if (!in_line) {
        shm.claim_cells(s, ShmTeam::Readers::all(), bytes);
        table = shm.my_cells();
    }
    for (int m = 0; m < shm.size(); ++m) {
        const std::uint64_t where =
            m == shm.index() ? std::uint64_t{tails} : reinterpret_cast<std::uint64_t>(out + lay.offset(m));
        const TableEntry e{where, static_cast<std::uint64_t>(lay.size(m))};
        std::memcpy(table + static_cast<std::size_t>(m) * sizeof e, &e, sizeof e);
    }
}

void gather_core(ShmTeam& shm, const void* send, std::int64_t send_bytes, void* recv, const Blocks& lay, bool fixed,
                 int root, Landing* land) {
    const std::uint64_t s = shm.begin_call();
    const int me = shm.index();
    const int n = shm.size();
    if (me != root) {
        // 1.
        const auto mine = static_cast<std::uint64_t>(send_bytes);
        const ShmTeam::Carry carry = shm.put_wide(s, send, mine, ShmTeam::Readers::member(root));
        shm.release(s);
        if (carry != ShmTeam::Carry::Direct) {
            // The root may have published its line for everyone (if some
            // block is not carried as ours is): say we are done with step s.
            shm.gather(s);
            shm.notify(root);
            return;
        }
        shm.notify(root);
        // 3.
        shm.wait([&] { return shm.has_released(root, s) || shm.has_gathered(root, s); });
        if (!shm.has_released(root, s)) return;  // the root read it all
        const shm::CollLine& r = shm.line(root, s);
        if (fixed && r.aux == ShmTeam::kStreamed) {
            stream_out(shm, s, send, std::min(mine, r.bytes), r.bytes, root);
            shm.gather(s);  // (we read the root's line)
            return;
        }
        // Where our block goes in the root's buffer, if the root expects
        // the size we send, and whether the root reads its tail.
        std::uint64_t to = 0;
        bool tails = false;
        if (fixed) {
            if (r.bytes == mine) to = r.addr + static_cast<std::uint64_t>(me) * mine;
            tails = r.aux == kTails;
        } else {
            TableEntry e{};
            TableEntry at_root{};
            const std::byte* table = shm.published(root, s, static_cast<std::uint64_t>(n) * sizeof e);
            std::memcpy(&e, table + static_cast<std::size_t>(me) * sizeof e, sizeof e);
            std::memcpy(&at_root, table + static_cast<std::size_t>(root) * sizeof e, sizeof e);
            if (e.bytes == mine) to = e.where;
            tails = at_root.where != 0;
        }
        if (to != 0) shm.write(root, reinterpret_cast<std::byte*>(to), send, mine - root_share(mine, n, tails));
        shm.release(s + 1);
        shm.gather(s + 1);
        shm.notify(root);
        shm.wait_release(root, member_done(s, me));
        return;
    }
    auto* out = static_cast<std::byte*>(recv);
    // 2.
    const auto block = static_cast<std::uint64_t>(lay.block);
    bool split = fixed ? shm.wide_carry(block) == ShmTeam::Carry::Direct : splits(shm, lay);
    // A typed receive buffer (`land`) takes the blocks that come inline or
    // through the cells in place, and large blocks stream through the
    // members' cells into it (when their chunks fit the call's steps).
    // So do contiguous blocks up to ShmTuning::spread_max in a team with a
    // CPU for each member (every member copies its block into its cells on
    // its own, instead of all of them pinning our pages at once).
    const bool stream = fixed && split && (land != nullptr ? shm.gather_streams() : shm.spreads(block)) &&
                        shm.steps_fit(static_cast<std::uint64_t>(n) * block, 1);
    if (stream) split = false;
    // Split single copies go to the dense buffer, which the caller unpacks.
    if (split) land = nullptr;
    // Tails: we read the last 1/n of each member's block while it writes
    // the rest, unless we are 2 and have a block of our own to copy.
    const bool tails = n > 2 || send == nullptr || lay.size(me) == 0;
    if (split || stream) {
        if (fixed) {
            shm.put_line(s, ShmTeam::Readers::all(), block,
                         stream ? ShmTeam::kStreamed : tails ? kTails : 0, recv);
        } else {
            publish_table(shm, s, lay, out, tails);
        }
        shm.release(s);
        shm.notify_all();
    }
    // 4.
    int bad = -1;
    std::uint64_t bad_bytes = 0;
    if (send != nullptr && lay.size(me) > 0) {
        ShmTeam::store(out + lay.offset(me), send,
                       static_cast<std::uint64_t>(std::min(lay.size(me), send_bytes)), land,
                       static_cast<std::uint64_t>(lay.offset(me)));
    }
    if (send != nullptr && send_bytes != lay.size(me)) {
        bad = me;
        bad_bytes = static_cast<std::uint64_t>(send_bytes);
    }
    for (int m = 0; m < n; ++m) {
        if (m == me) continue;
        shm.wait_release(m, s);
        const auto want = static_cast<std::uint64_t>(lay.size(m));
        const shm::CollLine& l = shm.line(m, s);
        if (stream && static_cast<ShmTeam::Carry>(l.aux) == ShmTeam::Carry::Direct) {
            const std::uint64_t got = l.bytes;
            const auto at = static_cast<std::uint64_t>(lay.offset(m));
            shm.take_chunks(m, s, static_cast<std::uint64_t>(m) * shm.chunks(block), std::min(got, want),
                            out + at, want, land, at);
            if (got != want && bad < 0) {
                bad = m;
                bad_bytes = got;
            }
            continue;
        }
        if (split && l.bytes == want && static_cast<ShmTeam::Carry>(l.aux) == ShmTeam::Carry::Direct) {
            // The member writes the head; we read the tail (if any).
            const std::uint64_t head = want - root_share(want, n, tails);
            if (head < want) {
                shm.read(m, reinterpret_cast<const std::byte*>(l.addr) + head, out + lay.offset(m) + head,
                         want - head);
            }
        } else {
            const std::uint64_t got =
                shm.get_block(m, s, out + lay.offset(m), want, land, static_cast<std::uint64_t>(lay.offset(m)));
            if (got != want && bad < 0) {
                bad = m;
                bad_bytes = got;
            }
        }
        if (split) {
            // Done with m's send buffer: m may return (step 3).
            shm.release(member_done(s, m));
            shm.notify(m);
        }
    }
    if (split) {
        for (int m = 0; m < n; ++m) {
            const shm::CollLine& l = shm.line(m, s);
            if (m != me && l.bytes == static_cast<std::uint64_t>(lay.size(m)) &&
                static_cast<ShmTeam::Carry>(l.aux) == ShmTeam::Carry::Direct) {
                shm.wait_release(m, s + 1);
            }
        }
    }
    // 5.
    shm.gather(stream ? s + 1 + static_cast<std::uint64_t>(n) * shm.chunks(block) : split ? s + 1 : s);
    shm.notify_all();
    if (land != nullptr) land->filled = true;
    // 6.
    if (bad >= 0) throw_size_mismatch(bad, bad_bytes, root, static_cast<std::uint64_t>(lay.size(bad)));
}

}  // namespace

bool gather_shm(const Team& team, const void* send, std::int64_t block, void* recv, int root, Landing* land) {
    ShmTeam* shm = ready(team);
    if (shm == nullptr) return false;
    if (shm->wide_carry(static_cast<std::uint64_t>(block)) == ShmTeam::Carry::Direct &&
        !shm->single_copy()) {
        return false;
    }
    if (block == 0) return true;
    if (shm->size() == 1) {
        if (send != nullptr) ShmTeam::store(recv, send, static_cast<std::uint64_t>(block), land, 0);
        if (land != nullptr) land->filled = true;
        return true;
    }
    gather_core(*shm, send, block, recv, Blocks{nullptr, nullptr, block}, true, root, land);
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
    gather_core(*shm, send, send_bytes, recv, blocks, false, root, nullptr);
    return true;
}

}  // namespace shmpi::coll
