// Alltoall in shared memory, two ways, and Alltoallv/w (at the end).
//
// `shm`, for exchanges small enough for the cells: every member publishes
// its whole send buffer (all n blocks, dense) once, inline with its flag (up
// to 64 B) or in its cells, and every member copies its own block out of
// every other member's.  One flag per member replaces the n - 1
// point-to-point messages each member sends and receives.  Taken when n
// blocks of the call's block size fit a member's cells, or its wide cells
// where there are some (ranks outnumbering CPUs; ShmTeam::wide_carry() is
// not Direct): the choice depends only on the team and the block size,
// which every member has alike, so all take it or all decline.
//
// `direct`, for larger exchanges: every member publishes the address of its
// n blocks (its send buffer, or a dense copy of it when the send type is not
// one run), and every member copies its own block out of each other member's
// memory with one process_vm_readv, member me + k at round k: in each round
// every member's memory has one reader, so the readers do not take turns
// pinning one process's pages (docs/COLLECTIVES.md, SHMPI_COLL_SHM_SPREAD).
// When ranks outnumber CPUs, a member that has not released yet is passed
// over for the next that has (take_all()).
// It replaces the 2(n - 1) rendezvous messages of the linear exchange, whose
// reads come in whatever order the messages arrive.  Declines (on every
// member alike) when the team cannot read across processes.
//
// At the call's step s:
//   1. Every member makes its n send blocks one dense run (in place: the
//      caller staged the other blocks; a send type that is not one
//      contiguous run is packed block by block).  `shm` puts it
//      (put_wide()); `direct` publishes its size and address (put_line()).
//      It stores release = s and wakes everyone.
//   2. Member by member (member me + k at round k), it waits for that
//      member's release of s and copies block `me` of what it published
//      into its own receive block m (unpacked into the receive type when
//      that is not one run), checking the member's block size.
//   3. It copies its own block, stores gather = s and wakes everyone (the
//      next call's claim() waits for every reader's gather before it
//      reuses the cells).  `direct` then waits for everyone's gather of s:
//      they read its send buffer until then.
//   4. It reports the first member whose block size disagreed with ours.
// `direct` with two members, each with a CPU, whose receive blocks are one
// run each: they write each other's block instead, which measured quicker
// (2 ranks, 64-256 KiB blocks 0.54-0.55 of the time, 1 MiB 0.75-0.89,
// 4 MiB even; docs/BENCHMARKS.md, session 51):
//   1a. Each also offers, in its line's inline bytes, where the other's
//      block goes in its receive buffer, its size and the step.
//   2a. Having seen the other's release of s and its offer, each writes
//      its block for the other there (nothing when the sizes differ),
//      stores release = s + 1, wakes the other, copies its own block,
//      waits for the other's release of s + 1, stores gather = s + 1, wakes
//      it and reports a size that disagreed.  Neither reads the other's
//      buffer.  (A member that offers goes on as in 2-4 when the other
//      did not.)
//
// Alltoallv and Alltoallw (`shm`): the members' block sizes differ, and no
// member knows whether another's blocks fit its cells, so each sender
// chooses per block and says so in a table at the head of its cells
// (TableEntry: for each reader, where its block lies and its size), or
// inline in its line (the table without the sender's own entry) when the
// table and the blocks fit there.  A
// block above the `direct` bound stays in the sender's memory for one
// process_vm_readv; a smaller one goes into the cells after the table while
// they hold it; the rest are sent as point-to-point messages, which each
// reader receives once it has read the sender's table.  Where ranks
// outnumber CPUs, each reader takes its blocks from whichever senders have
// released first, as `direct`'s readers do, and a sender whose wide cells
// hold all its blocks puts them all there (no reader then reads its
// memory, so it need not wait for them).  Only a table too large for the
// cells declines, the same on every member.  Two members
// with a CPU each whose blocks for each other both stay in their memory,
// and whose receive blocks are one run each, write them instead, as
// `direct`'s pairs do (offers in their lines; each still reads the other's
// table for the size check; 2 ranks, 64-256 KiB 0.54-0.58 of the time,
// 1 MiB 0.84-0.87, 4 MiB even).
#include <algorithm>
#include <cstring>
#include <memory>
#include <vector>

#include "arith.hpp"
#include "coll/linear.hpp"
#include "coll/linear_p2p.hpp"
#include "coll/shm_team.hpp"
#include "dtype/datatype.hpp"

namespace shmpi::coll {
namespace {

std::byte* block_at(PeerBlocks side, int r) { return static_cast<std::byte*>(side.base) + side.displs[r]; }

/// n blocks of `b` bytes; past 2^64, the largest size (which fits nothing).
std::uint64_t image_bytes(int n, std::int64_t b) {
    std::uint64_t bytes = 0;
    const bool over =
        b < 0 || __builtin_mul_overflow(static_cast<std::uint64_t>(n), static_cast<std::uint64_t>(b), &bytes);
    return over ? ~std::uint64_t{0} : bytes;
}

/// This member's block size, from any block with a type (the others are
/// alike in an Alltoall; in place our own has none).  Blocks of another
/// size than the call's are an error the readers report.
std::int64_t own_block_bytes(PeerBlocks send, int n) {
    for (int r = 0; r < n; ++r) {
        if (send.types[r] != nullptr) return send.counts[r] * send.types[r]->size;
    }
    return 0;
}

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
    std::byte* stage = shm.image_buffer(static_cast<std::size_t>(n * block));
    for (int r = 0; r < n; ++r) {
        if (send.types[r] != nullptr)
            dtype::pack(*send.types[r], block_at(send, r), send.counts[r], stage + r * block);
    }
    return stage;
}

/// Copies our own block (member `me`'s) from `send` to `recv` (nothing in
/// place); returns the error of a block whose two types disagree, for the
/// caller to throw once it has done its part of the call.
std::unique_ptr<MpiError> copy_own_block(const Team& team, int me, PeerBlocks send, PeerBlocks recv) {
    if (send.types[me] == nullptr) return nullptr;
    return linear::copy_own(block_at(send, me), send.counts[me], *send.types[me], block_at(recv, me), recv.counts[me],
                            *recv.types[me], team.rank);
}

/// Copies `bytes` at `from` (published in our reach: inline or in cells)
/// into our receive block m, unpacked when its type is not one run.
void store_block(PeerBlocks recv, int m, const std::byte* from, std::uint64_t bytes) {
    // An empty block may have no buffer at all (count 0, NULL).
    if (bytes == 0) return;
    const dtype::Datatype& type = *recv.types[m];
    std::byte* to = block_at(recv, m);
    if (type.is_run(recv.counts[m])) {
        std::memcpy(to + type.true_lb, from, static_cast<std::size_t>(bytes));
    } else {
        dtype::unpack(type, from, static_cast<std::int64_t>(bytes), to);
    }
}

/// Copies `bytes` at `from` in member m's memory into our receive block m
/// (process_vm_readv): at once when its type is one run, else a piece at a
/// time through a buffer that stays in cache, unpacking each.
void read_block(ShmTeam& shm, PeerBlocks recv, int m, const std::byte* from, std::uint64_t bytes) {
    const dtype::Datatype& type = *recv.types[m];
    std::byte* to = block_at(recv, m);
    if (type.is_run(recv.counts[m])) {
        shm.read(m, from, to + type.true_lb, static_cast<std::size_t>(bytes));
        return;
    }
    constexpr std::uint64_t kPiece = 128 * 1024;
    std::byte* piece = shm.bounce(static_cast<std::size_t>(std::min(bytes, kPiece)));
    for (std::uint64_t done = 0; done < bytes;) {
        const std::uint64_t len = std::min(bytes - done, kPiece);
        shm.read(m, from + done, piece, static_cast<std::size_t>(len));
        dtype::unpack(type, to, recv.counts[m], static_cast<std::int64_t>(done), piece, static_cast<std::int64_t>(len));
        done += len;
    }
}

/// Calls visit(k) once for each round k from 1 to n - 1, once member
/// of(k) has released step s.  In round order, unless `as_released`:
/// then, of the rounds left, the first whose member has released (ranks
/// outnumbering CPUs: member of(k) may not have run since the call began,
/// and waiting for it is a context switch; 8 and 16 ranks on 2 CPUs, 1-4
/// MiB blocks: 0.85-0.98 of the time; docs/BENCHMARKS.md, session 56).
template <class Of, class Visit>
void each_released(ShmTeam& shm, std::uint64_t s, bool as_released, Of&& of, Visit&& visit) {
    const int n = shm.size();
    if (!as_released) {
        for (int k = 1; k < n; ++k) {
            shm.wait_release(of(k), s);
            visit(k);
        }
        return;
    }
    std::vector<int> pending;
    for (int k = 1; k < n; ++k) pending.push_back(k);
    const auto ready = [&] {
        return std::find_if(pending.begin(), pending.end(), [&](int k) { return shm.has_released(of(k), s); });
    };
    while (!pending.empty()) {
        auto it = ready();
        if (it == pending.end()) {
            shm.wait([&] { return ready() != pending.end(); });
            it = ready();
        }
        visit(*it);
        pending.erase(it);
    }
}

/// Steps 2 to 4 of both algorithms, after this member released step s:
/// take(m, got) copies block `me` of member m's published n blocks (`got`
/// bytes in all) into our receive block m.  With `wait_readers`, returns
/// only once every member has gathered s (our blocks stay where they were
/// published until then), and where ranks outnumber CPUs takes the members
/// as they release, not one by one in round order.
template <class Take>
void take_all(ShmTeam& shm, const Team& team, std::uint64_t s, std::int64_t block, PeerBlocks send, PeerBlocks recv,
              bool wait_readers, Take&& take) {
    const int n = shm.size();
    const int me = shm.index();
    // 2.
    int bad = -1, bad_k = n;
    std::uint64_t bad_bytes = 0;
    const auto take_from = [&](int k) {
        const int m = (me + k) % n;
        const std::uint64_t got = shm.line(m, s).bytes;
        const std::uint64_t theirs = got / static_cast<std::uint64_t>(n);
        if (theirs != static_cast<std::uint64_t>(block)) {
            if (k < bad_k) {
                bad = m;
                bad_k = k;
                bad_bytes = theirs;
            }
            return;
        }
        if (block > 0) take(m, got);
    };
    // Where ranks outnumber CPUs, the single copies come from whichever
    // members have released: no more readers run at once than there are
    // CPUs, so the rounds' one reader per memory matters less there.
    each_released(
        shm, s, wait_readers && shm.crowded(), [&](int k) { return (me + k) % n; }, take_from);

    // 3.
    const std::unique_ptr<MpiError> own = copy_own_block(team, me, send, recv);
    shm.gather(s);
    shm.notify_all();
    if (wait_readers) shm.wait_gather_all(s);

    // 4.
    if (bad >= 0) throw_size_mismatch(bad, bad_bytes, team.rank, static_cast<std::uint64_t>(block));
    if (own) throw *own;
}

/// Whether `bytes` of our blocks, of which each reader copies one of
/// `block` bytes, go inline, in our cells or in our wide cells.
bool in_cells(const ShmTeam& shm, std::uint64_t bytes, std::int64_t block) {
    return shm.wide_carry(bytes, static_cast<std::uint64_t>(block)) != ShmTeam::Carry::Direct;
}

}  // namespace

bool alltoall_fits_cells(const ShmTeam& shm, std::int64_t block) {
    return in_cells(shm, image_bytes(shm.size(), block), block);
}

bool alltoall_shm(const Team& team, std::int64_t block, PeerBlocks send, PeerBlocks recv) {
    ShmTeam* shm = ready(team);
    if (shm == nullptr || team.size < 2) return false;
    const int n = shm->size();
    const int me = shm->index();
    if (!alltoall_fits_cells(*shm, block)) return false;

    // 1.  Too large for our cells, only the size of our blocks is
    // published: the readers see it and report it.
    const std::int64_t mine = own_block_bytes(send, n);
    const std::uint64_t total = image_bytes(n, mine);
    const bool mine_fits = in_cells(*shm, total, mine);
    const void* image = mine > 0 && mine_fits ? dense_image(*shm, send, mine, n, me) : nullptr;
    const std::uint64_t s = shm->begin_call();
    if (mine_fits) {
        // (Our own block is copied straight from the send buffer in step 3.)
        shm->put_wide(s, image, total, ShmTeam::Readers::all(), nullptr, static_cast<std::uint64_t>(me * mine),
                      static_cast<std::uint64_t>(mine), static_cast<std::uint64_t>(mine));
    } else {
        shm->put_line(s, ShmTeam::Readers::all(), total, 0);
    }
    shm->release(s);
    shm->notify_all();

    take_all(*shm, team, s, block, send, recv, false, [&](int m, std::uint64_t got) {
        store_block(recv, m, shm->published(m, s, got) + static_cast<std::uint64_t>(me) * (got / n),
                    static_cast<std::uint64_t>(block));
    });
    return true;
}

bool alltoall_direct(const Team& team, std::int64_t block, PeerBlocks send, PeerBlocks recv) {
    ShmTeam* shm = ready(team);
    if (shm == nullptr || team.size < 2 || !shm->single_copy()) return false;
    const int n = shm->size();
    const int me = shm->index();

    // 1.  Blocks whose n copies would pass 2^64 bytes publish the largest
    // size and no address: no reader takes them.
    const std::int64_t mine = own_block_bytes(send, n);
    const std::uint64_t total = image_bytes(n, mine);
    const bool whole = total != ~std::uint64_t{0};
    const void* image = mine > 0 && whole ? dense_image(*shm, send, mine, n, me) : nullptr;
    const std::uint64_t s = shm->begin_call();
    shm->put_line(s, ShmTeam::Readers::all(), total, static_cast<std::uint64_t>(ShmTeam::Carry::Direct), image);
    // 1a.
    const int other = 1 - me;
    const bool offer = n == 2 && !shm->crowded() && image != nullptr && block > 0 &&
                       recv.types[other]->is_run(recv.counts[other]);
    if (offer) {
        PairOffer::make(*shm, s, block_at(recv, other) + recv.types[other]->true_lb, static_cast<std::uint64_t>(block));
    }
    shm->release(s);
    shm->notify_all();
    if (offer) {
        shm->wait_release(other, s);
        const shm::CollLine& theirs = shm->line(other, s);
        const PairOffer o = PairOffer::of(*shm, other, s);
        if (o.step == s) {
            // 2a.
            if (static_cast<std::uint64_t>(mine) == o.room) {
                shm->write(other, reinterpret_cast<void*>(o.to),
                           static_cast<const std::byte*>(image) + static_cast<std::uint64_t>(other) * o.room, o.room);
            }
            const std::uint64_t got = theirs.bytes / 2;
            std::unique_ptr<MpiError> own;
            PairOffer::finish(*shm, other, s, [&] { own = copy_own_block(team, me, send, recv); });
            if (got != static_cast<std::uint64_t>(block)) {
                throw_size_mismatch(other, got, team.rank, static_cast<std::uint64_t>(block));
            }
            if (own) throw *own;
            return true;
        }
    }

    take_all(*shm, team, s, block, send, recv, true, [&](int m, std::uint64_t got) {
        read_block(
            *shm, recv, m,
            reinterpret_cast<const std::byte*>(shm->line(m, s).addr) + static_cast<std::uint64_t>(me) * (got / n),
            static_cast<std::uint64_t>(block));
    });
    return true;
}

bool alltoallv_shm(const Team& team, PeerBlocks send, PeerBlocks recv) {
    ShmTeam* shm = ready(team);
    if (shm == nullptr || team.size < 2) return false;
    const int n = shm->size();
    const int me = shm->index();
    // Our cells, and the wide cells after them where there are some (ranks
    // outnumbering CPUs): one run of memory (ShmTeam::claim_cells()).
    const bool wide = shm->wide_slot_bytes() > 0;
    // (The same on every member: all decline together.)
    if (static_cast<std::uint64_t>(n) * sizeof(TableEntry) > shm->cell_bytes()) return false;
    const bool single = shm->single_copy();
    const auto above = static_cast<std::uint64_t>(shm->tuning().alltoall_direct(n));
    auto bytes_of = [](PeerBlocks side, int r) {
        return static_cast<std::uint64_t>(side.counts[r] * side.types[r]->size);
    };
    // A table (without our own entry: table_at()) and blocks that fit the
    // inline bytes of our line, each block 8-byte aligned, go there
    // (Carry::Inline): a reader then finds them in the line it reads for
    // our release, not in two more lines of our cells (2 ranks, 8-byte
    // blocks: see docs/BENCHMARKS.md, session 57).  That takes 2 ranks'
    // blocks of up to 48 bytes, 3 ranks' of 16.
    const bool in_line = table_fits_line(
        n, me, [&](int r) { return bytes_of(send, r); }, [&](std::uint64_t b) { return b <= above || !single; });
    const std::uint64_t table_bytes = static_cast<std::uint64_t>(in_line ? n - 1 : n) * sizeof(TableEntry);
    const std::uint64_t room =
        in_line ? shm::kCollInline : shm->cell_bytes() + shm->wide_slot_bytes() * ShmTeam::kSlots;
    const std::uint64_t align = in_line ? kInlineBlockAlign : 64;
    // Where our block for r goes: single copies above the bound, else in
    // our cells after the ones before it (at `end`, which it moves) while
    // they hold it, else a message.  With wide cells, all in the cells when
    // they hold them all: a sender that lends its memory waits for its
    // readers, a context switch each.  When they do not, lending some
    // blocks makes us wait all the same, and each block put in the cells
    // instead is one more copy (8 and 16 ranks, 1 MiB blocks: see
    // docs/BENCHMARKS.md, session 57).
    const auto fits_from = [&](std::uint64_t bytes, std::uint64_t& end) {
        const std::uint64_t at = round_up(end, align);
        if (at > room || bytes > room - at) return false;
        end = at + bytes;
        return true;
    };
    bool all_in_cells = wide;
    std::uint64_t all_end = table_bytes;
    for (int r = 0; r < n && all_in_cells; ++r) all_in_cells = r == me || fits_from(bytes_of(send, r), all_end);
    auto where_of = [&](std::uint64_t bytes, std::uint64_t& end) {
        if (bytes > above && single && !all_in_cells) return kInMemory;
        const std::uint64_t at = round_up(end, align);
        if (fits_from(bytes, end)) return kInCells | at;
        return bytes > above && single ? kInMemory : kByMessage;
    };

    // 1.  Our table and the blocks that go in our cells, straight into them;
    // first how much of the cells that takes, and of the image buffer the
    // typed blocks read out of our memory take, packed.
    std::uint64_t used = table_bytes;
    std::uint64_t packed_bytes = 0;
    for (int r = 0; r < n; ++r) {
        if (r == me) continue;
        const std::uint64_t b = bytes_of(send, r);
        if (where_of(b, used) == kInMemory && !send.types[r]->is_run(send.counts[r])) packed_bytes += b;
    }
    const std::uint64_t s = shm->begin_call();
    alignas(8) std::byte line_bytes[shm::kCollInline] = {};
    std::byte* cells = shm->table_area(s, in_line, used, line_bytes);
    std::uint64_t end = table_bytes;
    bool lent = false;  // some block of ours is read straight out of our memory
    int lent_to = -1;   // the last member whose block is, where it lies, its size
    std::uint64_t lent_at = 0;
    std::uint64_t lent_bytes = 0;
    bool messages = false;
    std::byte* packed = packed_bytes > 0 ? shm->image_buffer(static_cast<std::size_t>(packed_bytes)) : nullptr;
    for (int r = 0; r < n; ++r) {
        TableEntry e{kByMessage, 0};
        if (r != me) {
            const dtype::Datatype& type = *send.types[r];
            const std::int64_t count = send.counts[r];
            e.bytes = bytes_of(send, r);
            e.where = where_of(e.bytes, end);
            if (e.where == kByMessage) {
                messages = true;
            } else if ((e.where & kInCells) != 0) {
                std::byte* to = cells + (e.where & ~kInCells);
                if (e.bytes == 0) {
                    // Nothing to copy, from a buffer that may be NULL.
                } else if (type.is_run(count)) {
                    std::memcpy(to, block_at(send, r) + type.true_lb, static_cast<std::size_t>(e.bytes));
                } else {
                    dtype::pack(type, block_at(send, r), count, to);
                }
            } else if (type.is_run(count)) {
                e.where = reinterpret_cast<std::uint64_t>(block_at(send, r) + type.true_lb);
                lent = true;
            } else {
                dtype::pack(type, block_at(send, r), count, packed);
                e.where = reinterpret_cast<std::uint64_t>(packed);
                packed += e.bytes;
                lent = true;
            }
        }
        if (r != me || !in_line) std::memcpy(cells + table_at(r, me, in_line), &e, sizeof e);
        if (r != me && e.where != kByMessage && (e.where & kInCells) == 0 && e.bytes > 0) {
            lent_to = r;
            lent_at = e.where;
            lent_bytes = e.bytes;
        }
    }
    if (in_line) shm->put_block(s, line_bytes, used, ShmTeam::Readers::all());
    // 1a.
    const int other = 1 - me;
    const bool offer = n == 2 && !shm->crowded() && lent_to == other && bytes_of(recv, other) > 0 &&
                       recv.types[other]->is_run(recv.counts[other]);
    if (offer) PairOffer::make(*shm, s, block_at(recv, other) + recv.types[other]->true_lb, bytes_of(recv, other));
    shm->release(s);
    shm->notify_all();
    if (offer) {
        shm->wait_release(other, s);
        const PairOffer o = PairOffer::of(*shm, other, s);
        if (o.step == s) {
            // 2a.
            if (lent_bytes == o.room) {
                shm->write(other, reinterpret_cast<void*>(o.to), reinterpret_cast<const void*>(lent_at), o.room);
            }
            const std::byte* theirs = shm->published(other, s, shm->line(other, s).bytes);
            TableEntry e{};
            std::memcpy(&e, theirs + table_at(me, other, inline_at(*shm, other, s)), sizeof e);
            std::unique_ptr<MpiError> own;
            PairOffer::finish(*shm, other, s, [&] { own = copy_own_block(team, me, send, recv); });
            const std::uint64_t want = bytes_of(recv, other);
            if (e.bytes != want) throw_size_mismatch(other, e.bytes, team.rank, want);
            if (own) throw *own;
            return true;
        }
    }

    // 2.  Our messages, then every member's block for us: member me - k in
    // round k (the one that sends to us in the same round), as its table
    // says.  A message is received only once its sender's table is read;
    // an earlier one from the same sender (its next call's) cannot overtake
    // it, messages between two ranks matching in order.
    linear::Exchange ex(team, linear::kTagAlltoall);
    if (messages) {
        for (int k = 1; k < n; ++k) {
            const int to = (me + k) % n;
            TableEntry e{};
            std::memcpy(&e, cells + table_at(to, me, in_line), sizeof e);
            if (e.where == kByMessage) ex.send(to, block_at(send, to), send.counts[to], *send.types[to]);
        }
    }
    // Where ranks outnumber CPUs, from whichever members have released
    // first, as `direct` does (8 and 16 ranks on 2 CPUs, 1-4 MiB blocks:
    // see docs/BENCHMARKS.md, session 57).
    int bad = -1, bad_k = n;
    std::uint64_t bad_bytes = 0;
    std::uint64_t bad_want = 0;
    const auto sender = [&](int k) { return (me - k + n) % n; };
    each_released(*shm, s, shm->crowded(), sender, [&](int k) {
        const int m = sender(k);
        const std::byte* theirs = shm->published(m, s, shm->line(m, s).bytes);
        TableEntry e{};
        std::memcpy(&e, theirs + table_at(me, m, inline_at(*shm, m, s)), sizeof e);
        if (e.where == kByMessage) {
            // (A size that differs from ours is reported by the exchange.)
            ex.recv(m, block_at(recv, m), recv.counts[m], *recv.types[m]);
            return;
        }
        const std::uint64_t want = bytes_of(recv, m);
        if (e.bytes != want) {
            if (k < bad_k) {
                bad = m;
                bad_k = k;
                bad_bytes = e.bytes;
                bad_want = want;
            }
            return;
        }
        if ((e.where & kInCells) != 0) {
            store_block(recv, m, theirs + (e.where & ~kInCells), want);
        } else {
            read_block(*shm, recv, m, reinterpret_cast<const std::byte*>(e.where), want);
        }
    });

    // 3.
    const std::unique_ptr<MpiError> own = copy_own_block(team, me, send, recv);
    std::unique_ptr<MpiError> exchanged;
    try {
        ex.wait();
    } catch (const MpiError& e) {
        exchanged = std::make_unique<MpiError>(e);
    }
    shm->gather(s);
    shm->notify_all();
    if (lent) shm->wait_gather_all(s);

    // 4.
    if (bad >= 0) throw_size_mismatch(bad, bad_bytes, team.rank, bad_want);
    if (exchanged) throw *exchanged;
    if (own) throw *own;
    return true;
}

}  // namespace shmpi::coll
