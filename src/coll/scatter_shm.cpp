// Scatter and scatterv in shared memory: the root publishes its send
// buffer once and every member copies its own block out of it (straight
// into its typed buffer, a Landing, when the block is inline or in the
// cells).
//
// Scatter, at the call's step s:
//   1. The root puts the whole send buffer (n blocks) where members can
//      read it: inline with its flag when it fits 64 B, else in its cells
//      when it fits kCellsCarrySlots slots, else it stays in the root's
//      buffer for single copies (put_block()); it stores release = s and
//      wakes everyone.
//   2. Every other member waits for the root's release, takes the block
//      size from the root's published total (so a member that expected
//      another size still follows the root), copies its block, stores
//      gather = s and wakes the root.
//   3. The root copies its own block unless in place; when its buffer is
//      read in place, it then waits until everyone has gathered s.
//   With 2 members, each with a CPU, a block left in the root's buffer is
//   split instead, as Bcast's `direct` splits its message (2 ranks, 1 MiB:
//   the member's read of its whole block alone took 159 us, the split
//   Scatter 103-110 in all; docs/BENCHMARKS.md, session 51):
//   2a. The member publishes its buffer's address and its size at step s,
//      wakes the root, reads the head of its block (all of it where the
//      sizes differ), waits for the root's release of s + 1, stores
//      gather = s + 1 and wakes the root.
//   3a. The root waits for the member's release of s, writes the tail of
//      its block (the last half) into the member's buffer when the sizes
//      agree, stores release = s + 1 and gather = s + 1 (it has read the
//      member's line), wakes it, copies its own block and waits for its
//      gather of s + 1.
//   A root whose buffer is typed (a Source) and too large for the cells
//   streams instead of 1-3, and so does a contiguous one of blocks up to
//   ShmTuning::spread_max with a CPU for each of 3 or more members (their
//   single copies out of the root would all pin its pages at once): it
//   publishes kind Stream at step s, then packs (or copies) the members'
//   blocks (member by member in index order, but its own) chunk by chunk
//   straight into its slots, the g-th chunk of the call at
//   step s + 1 + g in slot g mod kSlots, claimed for its one reader.  A
//   member copies each of its chunks out after the root's release of that
//   step, then stores gather = that step and wakes the root.
//   Where such a root does not stream (ranks outnumber CPUs: a chunk could
//   cost a context switch), it paces the single copies instead: it
//   publishes kind Paced with the address of its dense buffer at step s,
//   then packs the members' blocks into it in the same order, releasing
//   step s + 1 + i after the i-th, so that member i copies its block while
//   the root packs the next ones (a block costs at most one switch).  The
//   member waits for that step instead of s, then goes on as in 2 and the
//   root as in 3.
//   4. A member whose size disagreed reports it.
//
// Scatterv: members cannot know where their block lies without the root's
// counts, so the root writes a table at the head of its cells (a
// TableEntry per member: its block's size and where it lies), followed by
// the blocks of up to ShmTuning::alltoall_direct() bytes while the cells
// hold them; the others stay in the root's buffer for single copies.
// Table (without the root's entry) and blocks go inline in the root's line
// instead when they fit its 64 bytes (2 ranks' blocks of up to 48 bytes, 3
// ranks' of 16).
//   1. The root writes the table and the blocks, stores release = s, wakes
//      everyone and copies its own block.
//   2. Every other member waits for the root's release, reads its entry
//      and copies its block out of the cells or the root's buffer, then
//      stores gather = s and wakes the root.
//   3. When a block was left in its buffer, the root waits until everyone
//      has gathered s.
//   With 2 members, each with a CPU, a block left in the root's buffer is
//   split as in Scatter's 2a and 3a: the member publishes its buffer and
//   size, reads the head, waits for the root's release of s + 1 and
//   gathers it; the root writes the tail when the sizes agree, releases
//   and gathers s + 1, copies its own block and waits for the member.
//   4. A member whose size disagreed reports it.
// (Three single copies per member, the two table entries and then the
// block, cost 6-9 us at 2 ranks whatever the block, against 0.4-0.5 for
// a Scatter of 1 KiB; docs/BENCHMARKS.md.)
#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "arith.hpp"
#include "coll/linear.hpp"
#include "coll/shm_team.hpp"
#include "errors.hpp"

namespace shmpi::coll {

namespace {

/// Whether a block left in the root's buffer is split between the
/// member, which reads its head, and the root, which writes its tail into
/// the member's buffer (steps 2a-3a): in a team of 2 with a CPU each.
bool split_direct(const ShmTeam& shm) { return shm.size() == 2 && !shm.crowded(); }

/// The bytes of a split block that the root writes into its member's buffer
/// (the tail; the member reads the head).
std::uint64_t tail_share(std::uint64_t block) { return block / 2; }

/// Step 3a, the root's side of a split block: waits for the member's
/// release of s, writes the tail of its block (`bytes` at `block`, in our
/// buffer) into the member's buffer when their sizes agree, stores
/// release = s + 1 and gather = s + 1 and wakes the member.
void write_tail(ShmTeam& shm, std::uint64_t s, const std::byte* block, std::uint64_t bytes) {
    const int other = 1 - shm.index();
    shm.wait_release(other, s);
    const shm::CollLine& l = shm.line(other, s);
    const std::uint64_t tail = tail_share(bytes);
    if (l.bytes == bytes && tail > 0) {
        shm.write(other, reinterpret_cast<std::byte*>(l.addr) + (bytes - tail), block + (bytes - tail), tail);
    }
    shm.release(s + 1);
    shm.gather(s + 1);
    shm.notify(other);
}

/// Step 2a, the member's side: publishes `recv` and its size `room` at step
/// s, wakes the root, reads the head of our block (`bytes` at `from` in the
/// root's memory; all of what `recv` takes where the sizes differ), waits
/// for the root's release of s + 1 and stores gather = s + 1.  The caller
/// wakes the root.
void read_head(ShmTeam& shm, int root, std::uint64_t s, void* recv, std::uint64_t room, const std::byte* from,
               std::uint64_t bytes) {
    shm.put_line(s, ShmTeam::Readers::member(root), room, 0, recv);
    shm.release(s);
    shm.notify(root);
    const std::uint64_t head = bytes == room ? bytes - tail_share(bytes) : std::min(bytes, room);
    if (head > 0) shm.read(root, from, recv, static_cast<std::size_t>(head));
    shm.wait_release(root, s + 1);
    shm.gather(s + 1);
}

/// The root's side of a streamed scatter (after its line is published for
/// step s): member by member in index order, chunk by chunk, each chunk
/// packed from `typed` (or copied from `send` when it is null) for its one
/// reader.
void stream_out(ShmTeam& shm, std::uint64_t s, Source* typed, const void* send, std::uint64_t block) {
    const std::uint64_t chunk = shm.slot_bytes();
    const auto* in = static_cast<const std::byte*>(send);
    std::uint64_t g = 0;
    for (int m = 0; m < shm.size(); ++m) {
        if (m == shm.index()) continue;
        for (std::uint64_t k = 0; k < shm.chunks(block); ++k, ++g) {
            const std::uint64_t at = static_cast<std::uint64_t>(m) * block + k * chunk;
            const std::uint64_t len = std::min(chunk, block - k * chunk);
            shm.put_chunk(s, g, ShmTeam::Readers::member(m), [&](std::byte* slot) {
                if (typed != nullptr) {
                    ShmTeam::pack_into(*typed, at, slot, len, shm.bounce(chunk));
                } else {
                    std::memcpy(slot, in + at, len);
                }
            });
            shm.notify(m);
        }
    }
}

}  // namespace

bool scatter_shm(const Team& team, const void* send, void* recv, std::int64_t block, int root, Landing* land,
                 Source* typed) {
    ShmTeam* shm = ready(team);
    if (shm == nullptr) return false;
    const auto n = static_cast<std::uint64_t>(shm->size());
    const std::uint64_t want = static_cast<std::uint64_t>(block);
    // The whole buffer too large for the cells: single copies, or a stream.
    const bool direct = shm->carry_for(n * want, want) == ShmTeam::Carry::Direct;
    if (direct && !shm->single_copy()) return false;
    if (block == 0) return true;
    const int me = shm->index();
    if (me == root) {
        // A typed buffer too large for the cells streams through them,
        // when the root's own block is the caller's (recv null) and the
        // chunks fit the call's steps.
        const bool typed_direct = typed != nullptr && recv == nullptr && n > 1 && direct;
        // So does a contiguous buffer of blocks up to ShmTuning::spread_max
        // with a CPU for each of 3 or more members (their single copies
        // would all pin our pages at once).
        const bool spread = typed == nullptr && direct && shm->spreads(want);
        const bool stream = ((typed_direct && shm->streams()) || spread) && shm->steps_fit(n * want, 1);
        if (typed != nullptr && recv != nullptr) typed->dense();
        const auto* in = static_cast<const std::byte*>(send);
        // Our own block, copied once the members can copy theirs (copied
        // before publishing, it made a 2-rank Scatter of 4 MiB take two
        // copies' time: docs/BENCHMARKS.md, session 50).
        auto own = [&] {
            if (recv != nullptr) {
                ShmTeam::store(recv, in + static_cast<std::uint64_t>(me) * want, want, land, 0);
            }
            if (land != nullptr) land->filled = true;
        };
        if (n == 1) {
            own();
            return true;
        }
        const std::uint64_t s = shm->begin_call();
        // 1.
        if (stream) {
            shm->put_line(s, ShmTeam::Readers::all(), n * want,
                          static_cast<std::uint64_t>(ShmTeam::Carry::Stream));
            shm->release(s);
            shm->notify_all();
            stream_out(*shm, s, typed, send, want);
            own();
            return true;
        }
        if (typed_direct) {
            shm->put_line(s, ShmTeam::Readers::all(), n * want,
                          static_cast<std::uint64_t>(ShmTeam::Carry::Paced), send);
            shm->release(s);
            shm->notify_all();
            // (`send` is the Source's dense buffer, ours to fill.)
            auto* dense = const_cast<std::byte*>(static_cast<const std::byte*>(send));
            std::uint64_t i = 0;
            for (int m = 0; m < shm->size(); ++m) {
                if (m == me) continue;
                const std::uint64_t at = static_cast<std::uint64_t>(m) * want;
                typed->part(at, dense + at, want);
                shm->release(s + 1 + i++);
                shm->notify(m);
            }
            own();
            shm->wait_gather_all(s);
            return true;
        }
        const ShmTeam::Carry carry = shm->put_block(s, send, n * want, ShmTeam::Readers::all(), typed, 0, 0, want);
        shm->release(s);
        shm->notify_all();
        if (carry == ShmTeam::Carry::Direct && split_direct(*shm)) {
            write_tail(*shm, s, in + static_cast<std::uint64_t>(1 - me) * want, want);
            own();
            shm->wait_gather_all(s + 1);
            return true;
        }
        // 3.
        own();
        if (carry == ShmTeam::Carry::Direct) shm->wait_gather_all(s);
        return true;
    }
    const std::uint64_t s = shm->begin_call();
    // 2.
    shm->wait_release(root, s);
    const shm::CollLine& src = shm->line(root, s);
    const std::uint64_t got = src.bytes / n;
    const std::uint64_t off = got * static_cast<std::uint64_t>(me);
    const std::uint64_t len = std::min(got, want);
    switch (static_cast<ShmTeam::Carry>(src.aux)) {
        case ShmTeam::Carry::Inline:
            ShmTeam::store(recv, src.data + off, len, land, 0);
            break;
        case ShmTeam::Carry::Cells:
            ShmTeam::store(recv, shm->cells_of(root) + off, len, land, 0);
            break;
        case ShmTeam::Carry::Paced:
            // Our block once the root has packed it (index order, but its own).
            shm->wait_release(root, s + 1 + static_cast<std::uint64_t>(me < root ? me : me - 1));
            [[fallthrough]];
        case ShmTeam::Carry::Direct:
            // Into the dense buffer even for a typed one (`land`), which the
            // caller unpacks: one kernel copy into the type's runs measured
            // no faster than a dense copy and an unpack.
            if (split_direct(*shm) && static_cast<ShmTeam::Carry>(src.aux) == ShmTeam::Carry::Direct) {
                read_head(*shm, root, s, recv, want, reinterpret_cast<const std::byte*>(src.addr) + off, got);
                shm->notify(root);
                if (got != want) throw_size_mismatch(root, got, me, want);
                return true;
            }
            shm->read(root, reinterpret_cast<const std::byte*>(src.addr) + off, recv, len);
            land = nullptr;
            break;
        case ShmTeam::Carry::Stream:
            // (Gathers each chunk's step, all past s.)
            // Our chunks follow those of the members before us (but the root).
            shm->take_chunks(root, s, static_cast<std::uint64_t>(me < root ? me : me - 1) * shm->chunks(got),
                             got, static_cast<std::byte*>(recv), want, land);
            break;
        default:
            shm->throw_peer_state(
                fmt::format("collective: rank {} published its blocks in an unknown way ({})", root, src.aux));
    }
    if (static_cast<ShmTeam::Carry>(src.aux) != ShmTeam::Carry::Stream) {
        shm->gather(s);
        shm->notify(root);
    }
    if (land != nullptr) land->filled = true;
    // 4.
    if (got != want) throw_size_mismatch(root, got, me, want);
    return true;
}

bool scatterv_shm(const Team& team, const void* send, Blocks blocks, void* recv,
                  std::int64_t recv_bytes, int root) {
    ShmTeam* shm = ready(team);
    // Without single copies a block too large for the cells could not
    // travel, and only the root knows the sizes: the whole call declines,
    // and so does a team whose table does not fit the cells (the same on
    // every member).
    if (shm == nullptr || !shm->single_copy()) return false;
    const int n = shm->size();
    const int me = shm->index();
    const std::uint64_t room = shm->cell_bytes();
    const std::uint64_t table_bytes = static_cast<std::uint64_t>(n) * sizeof(TableEntry);
    if (table_bytes > room) return false;
    if (me == root) {
        // Our own block, copied once the members can copy theirs.
        auto own = [&] {
            if (recv != nullptr && blocks.bytes[me] > 0) {
                std::memcpy(recv, static_cast<const std::byte*>(send) + blocks.offsets[me],
                            static_cast<std::size_t>(std::min(blocks.bytes[me], recv_bytes)));
            }
        };
        if (n == 1) own();
        if (n > 1) {
            // 1.
            const auto above = static_cast<std::uint64_t>(shm->tuning().alltoall_direct(n));
            // A table (without our own entry: table_at()) and blocks that
            // fit the inline bytes of our line, each block 8-byte aligned, go
            // there (Carry::Inline), as Alltoallv's do: a member then finds
            // its entry and its block in the line it reads for our release
            // (2 ranks, 8 B: see docs/BENCHMARKS.md, session 57).
            const bool in_line = table_fits_line(
                n, me, [&](int r) { return static_cast<std::uint64_t>(blocks.bytes[r]); },
                [&](std::uint64_t b) { return b <= above; });
            const std::uint64_t area = in_line ? shm::kCollInline : room;
            const std::uint64_t align = in_line ? kInlineBlockAlign : 64;
            // Where block r goes: in the cells (or the line) from `end`
            // (which it moves) while they hold it, else left in our buffer.
            auto where_of = [&](int r, std::uint64_t& end) {
                const auto b = static_cast<std::uint64_t>(blocks.bytes[r]);
                const std::uint64_t at = round_up(end, align);
                if (r == me || b > above || at > area || b > area - at) return kInMemory;
                end = at + b;
                return kInCells | at;
            };
            const std::uint64_t head = in_line ? table_bytes - sizeof(TableEntry) : table_bytes;
            std::uint64_t used = head;
            for (int r = 0; r < n; ++r) where_of(r, used);
            const std::uint64_t s = shm->begin_call();
            alignas(8) std::byte line_bytes[shm::kCollInline] = {};
            std::byte* cells = shm->table_area(s, in_line, used, line_bytes);
            std::uint64_t end = head;
            bool lent = false;  // some block is read straight out of our buffer
            for (int r = 0; r < n; ++r) {
                TableEntry e{where_of(r, end), static_cast<std::uint64_t>(blocks.bytes[r])};
                if (r == me || e.bytes == 0) {
                    // (Nothing to read.)
                } else if (e.where != kInMemory) {
                    std::memcpy(cells + (e.where & ~kInCells), static_cast<const std::byte*>(send) + blocks.offsets[r],
                                static_cast<std::size_t>(e.bytes));
                } else {
                    e.where = reinterpret_cast<std::uint64_t>(static_cast<const std::byte*>(send) + blocks.offsets[r]);
                    lent = true;
                }
                if (r != me || !in_line) std::memcpy(cells + table_at(r, me, in_line), &e, sizeof e);
            }
            if (in_line) shm->put_block(s, line_bytes, used, ShmTeam::Readers::all());
            shm->release(s);
            shm->notify_all();
            if (lent && split_direct(*shm)) {
                // 3a.
                const int other = 1 - me;
                write_tail(*shm, s, static_cast<const std::byte*>(send) + blocks.offsets[other],
                           static_cast<std::uint64_t>(blocks.bytes[other]));
                own();
                shm->wait_gather_all(s + 1);
            } else {
                own();
                // 3.
                if (lent) shm->wait_gather_all(s);
            }
        }
        if (recv != nullptr && blocks.bytes[me] != recv_bytes) {
            throw_size_mismatch(me, static_cast<std::uint64_t>(blocks.bytes[me]), me,
                                static_cast<std::uint64_t>(recv_bytes));
        }
        return true;
    }
    const std::uint64_t s = shm->begin_call();
    // 2.
    shm->wait_release(root, s);
    const std::byte* theirs = shm->published(root, s, shm->line(root, s).bytes);
    TableEntry e{};
    std::memcpy(&e, theirs + table_at(me, root, inline_at(*shm, root, s)), sizeof e);
    const std::uint64_t take = std::min(e.bytes, static_cast<std::uint64_t>(recv_bytes));
    if (e.bytes > 0 && (e.where & kInCells) == 0 && split_direct(*shm)) {
        // 2a.
        read_head(*shm, root, s, recv, static_cast<std::uint64_t>(recv_bytes),
                  reinterpret_cast<const std::byte*>(e.where), e.bytes);
    } else {
        if (take > 0 && (e.where & kInCells) != 0) {
            std::memcpy(recv, theirs + (e.where & ~kInCells), static_cast<std::size_t>(take));
        } else if (take > 0) {
            shm->read(root, reinterpret_cast<const std::byte*>(e.where), recv, static_cast<std::size_t>(take));
        }
        shm->gather(s);
    }
    shm->notify(root);
    // 4.
    if (e.bytes != static_cast<std::uint64_t>(recv_bytes)) {
        throw_size_mismatch(root, e.bytes, me, static_cast<std::uint64_t>(recv_bytes));
    }
    return true;
}

}  // namespace shmpi::coll
