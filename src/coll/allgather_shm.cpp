// Allgather and allgatherv in shared memory: every member publishes its
// block once and every member copies every other block straight into its
// receive buffer (into its typed buffer, a Landing, when it has one).
//
// At the call's step s:
//   1. Every member puts its block (put_wide(): inline up to 64 B, in
//      its cells up to their size, in its wide cells up to theirs where
//      there are some, else left in its own buffer for single copies),
//      stores release = s and wakes everyone.  In place, the block
//      is taken from its place in the receive buffer.  An Allgather member
//      whose own block is a typed send buffer (`mine`, a Source) and too
//      large for its cells streams it instead: it publishes Carry::Stream in
//      its line's `aux`.
//   2. It waits for every member's release of s.  If any member streams,
//      all go through K rounds (K: the chunks of a block): in round k each
//      streaming member packs chunk k of its block into its slot k mod
//      kSlots and releases step s + 1 + k; every member copies chunk k of
//      every streaming member, then stores gather = s + 1 + k and wakes the
//      streaming members.  So every member's gather flag says which round
//      it has finished, and a streaming member claims a slot again only
//      once every member has taken what it held (claim()).
//   3. Member by member, it copies the blocks that were not streamed, as
//      the member published them.
//   4. It stores gather = s (s + K + 1 after rounds: past every round's
//      step) and wakes everyone; then it copies its own block into its
//      typed buffer (or, from `mine`, into the dense one), unless it
//      streamed it: then each chunk went there from the bounce buffer it
//      was packed in.  If its own block stayed in its buffer, it waits
//      until everyone has gathered that: a streaming member stores each
//      round's gather before its step 3 reads the block (waiting for s
//      alone once let a contiguous sender return, and reuse its buffer,
//      while a member whose send type was not contiguous still read it).
//   5. It reports the first member whose size disagreed with its table.
// Two members with a CPU each whose blocks both stay in their buffers
// (Direct) write them into each other's receive buffers instead of reading
// them, which measured quicker (2 ranks, 64-256 KiB blocks 0.42-0.47 of
// the time, 1 MiB 0.66-0.75, 4 MiB even; docs/BENCHMARKS.md, session 51):
//   1a. Each also offers, in its line's inline bytes (unused by a Direct
//      block), where the other's block goes in its receive buffer, how
//      many bytes it takes there, and the step (so an offer left from an
//      earlier call never counts).
//   2a. Having seen the other's release of s, a member that offered and
//      finds the other's offer writes its block (at most the room offered)
//      there, stores release = s + 1, wakes the other, copies its own
//      block, waits for the other's release of s + 1 (its block is in),
//      stores gather = s + 1 and wakes it.  Neither reads the other's
//      buffer, so neither waits for the other's gather.
#include <algorithm>
#include <cstring>

#include "coll/linear.hpp"
#include "coll/shm_team.hpp"

namespace shmpi::coll {
namespace {

/// Stores `n` bytes at `from` as bytes [off, off + n) of `land`.
void land_at(Landing& land, std::uint64_t off, const void* from, std::uint64_t n) {
    land.store(land.state, static_cast<std::int64_t>(off), from, static_cast<std::int64_t>(n));
}

/// Our own block into its place: stored into the typed buffer `land` from
/// the dense buffer `at` (or from `mine` through the bounce buffer when
/// `mine` did not fill `at`), or packed into `at` when there is no `land`.
void own_block(ShmTeam& shm, Source& mine, std::byte* at, std::uint64_t off, std::uint64_t bytes,
               Landing* land) {
    if (land == nullptr) {
        mine.dense();
        return;
    }
    if (mine.packed) {
        land_at(*land, off, at, bytes);
        return;
    }
    const std::uint64_t piece = shm.slot_bytes();
    std::byte* bounce = shm.bounce(piece);
    for (std::uint64_t done = 0; done < bytes; done += piece) {
        const std::uint64_t len = std::min(piece, bytes - done);
        mine.part(done, bounce, len);
        land_at(*land, off + done, bounce, len);
    }
}

void allgather_core(ShmTeam& shm, const void* send, std::int64_t send_bytes, void* recv, const Blocks& lay, int my_rank,
                    Landing* land, Source* mine) {
    const std::uint64_t s = shm.begin_call();
    const int me = shm.index();
    const int n = shm.size();
    auto* out = static_cast<std::byte*>(recv);
    std::byte* const own_at = out + lay.offset(me);
    const void* own = send != nullptr ? send : own_at;
    const auto own_bytes = static_cast<std::uint64_t>(send != nullptr ? send_bytes : lay.size(me));
    // 1.
    const bool stream = mine != nullptr && shm.wide_carry(own_bytes) == ShmTeam::Carry::Direct &&
                        shm.gather_streams() && shm.steps_fit(own_bytes, 1);
    ShmTeam::Carry carry = ShmTeam::Carry::Stream;
    if (stream) {
        shm.put_line(s, ShmTeam::Readers::all(), own_bytes, ShmTeam::kStreamed);
    } else {
        carry = shm.put_wide(s, own, own_bytes, ShmTeam::Readers::all(), mine);
    }
    // 1a.
    const bool offer =
        n == 2 && !shm.crowded() && carry == ShmTeam::Carry::Direct && land == nullptr && mine == nullptr;
    if (offer) PairOffer::make(shm, s, out + lay.offset(1 - me), static_cast<std::uint64_t>(lay.size(1 - me)));
    shm.release(s);
    shm.notify_all();
    int bad = -1;
    std::uint64_t bad_bytes = 0;
    if (send != nullptr && send_bytes != lay.size(me)) {
        bad = me;
        bad_bytes = static_cast<std::uint64_t>(send_bytes);
    }
    auto check = [&](int m, std::uint64_t got) {
        if (got != static_cast<std::uint64_t>(lay.size(m)) && bad < 0) {
            bad = m;
            bad_bytes = got;
        }
    };
    // 2.  (Only an Allgather streams: its blocks, and so K, are the same for
    // every member.)
    auto streams = [&](int m) { return shm.line(m, s).aux == ShmTeam::kStreamed; };
    bool others_stream = false;
    for (int k = 1; k < n; ++k) {
        const int m = (me + k) % n;  // start at different members
        shm.wait_release(m, s);
        others_stream = others_stream || streams(m);
    }
    if (offer) {
        const int other = 1 - me;
        const shm::CollLine& theirs = shm.line(other, s);
        const PairOffer o = PairOffer::of(shm, other, s);
        if (static_cast<ShmTeam::Carry>(theirs.aux) == ShmTeam::Carry::Direct && o.step == s) {
            // 2a.
            const std::uint64_t put = std::min(own_bytes, o.room);
            if (put > 0) shm.write(other, reinterpret_cast<void*>(o.to), own, put);
            check(other, theirs.bytes);
            PairOffer::finish(shm, other, s, [&] {
                if (send != nullptr) {
                    std::memcpy(own_at, send, static_cast<std::size_t>(std::min(send_bytes, lay.size(me))));
                }
            });
            if (bad >= 0) throw_size_mismatch(bad, bad_bytes, my_rank, static_cast<std::uint64_t>(lay.size(bad)));
            return;
        }
    }
    const std::uint64_t rounds =
        stream || others_stream ? shm.chunks(static_cast<std::uint64_t>(lay.block)) : 0;
    const std::uint64_t chunk = shm.slot_bytes();
    for (std::uint64_t g = 0; g < rounds; ++g) {
        const std::uint64_t off = g * chunk;
        if (stream) {
            // Packed once into the bounce buffer, from where it goes both
            // to our slot and, still in cache, to our own block's place.
            const std::uint64_t len = std::min(chunk, own_bytes - off);
            std::byte* bounce = shm.bounce(chunk);
            shm.put_chunk(s, g, ShmTeam::Readers::all(),
                          [&](std::byte* slot) { ShmTeam::pack_into(*mine, off, slot, len, bounce); });
            shm.notify_all();
            ShmTeam::store(own_at + off, bounce, len, land, static_cast<std::uint64_t>(lay.offset(me)) + off);
        }
        for (int k = 1; k < n; ++k) {
            const int m = (me + k) % n;
            if (!streams(m)) continue;
            const std::uint64_t got = shm.line(m, s).bytes;
            const auto want = static_cast<std::uint64_t>(lay.size(m));
            shm.wait_release(m, s + 1 + g);
            if (off < std::min(got, want)) {
                const std::uint64_t at = static_cast<std::uint64_t>(lay.offset(m)) + off;
                ShmTeam::store(out + at, shm.slot_of(m, static_cast<int>(g % ShmTeam::kSlots)),
                               std::min({chunk, got - off, want - off}), land, at);
            }
        }
        shm.gather(s + 1 + g);
        for (int m = 0; m < n; ++m) {
            if (m != me && streams(m)) shm.notify(m);
        }
    }
    // 3.
    for (int k = 1; k < n; ++k) {
        const int m = (me + k) % n;
        if (streams(m)) {
            check(m, shm.line(m, s).bytes);
            continue;
        }
        check(m, shm.get_block(m, s, out + lay.offset(m), static_cast<std::uint64_t>(lay.size(m)), land,
                               static_cast<std::uint64_t>(lay.offset(m))));
    }
    // 4.  (After rounds, one step past the last round's: a member whose
    // block stayed in its buffer must not take a streaming member's round
    // for this, which comes before that member's step 3 reads the block.)
    const std::uint64_t done = rounds > 0 ? s + rounds + 1 : s;
    shm.gather(done);
    shm.notify_all();
    if (stream) {
        // (Our block went to its place round by round.)
    } else if (mine != nullptr) {
        own_block(shm, *mine, own_at, static_cast<std::uint64_t>(lay.offset(me)), own_bytes, land);
    } else if (send != nullptr) {
        ShmTeam::store(own_at, send, static_cast<std::uint64_t>(std::min(send_bytes, lay.size(me))), land,
                       static_cast<std::uint64_t>(lay.offset(me)));
    } else if (land != nullptr) {
        land_at(*land, static_cast<std::uint64_t>(lay.offset(me)), own_at, own_bytes);
    }
    if (land != nullptr) land->filled = true;
    if (carry == ShmTeam::Carry::Direct) shm.wait_gather_all(done);
    // 5.
    if (bad >= 0) throw_size_mismatch(bad, bad_bytes, my_rank, static_cast<std::uint64_t>(lay.size(bad)));
}

}  // namespace

bool allgather_shm(const Team& team, const void* send, std::int64_t block, void* recv, Landing* land,
                   Source* mine) {
    ShmTeam* shm = ready(team);
    if (shm == nullptr) return false;
    if (shm->wide_carry(static_cast<std::uint64_t>(block)) == ShmTeam::Carry::Direct &&
        !shm->single_copy()) {
        return false;
    }
    if (block == 0) return true;
    if (shm->size() == 1) {
        if (send != nullptr) ShmTeam::store(recv, send, static_cast<std::uint64_t>(block), land, 0);
        if (mine != nullptr)
            own_block(*shm, *mine, static_cast<std::byte*>(recv), 0, static_cast<std::uint64_t>(block), land);
        if (send == nullptr && mine == nullptr && land != nullptr) {
            land_at(*land, 0, recv, static_cast<std::uint64_t>(block));
        }
        if (land != nullptr) land->filled = true;
        return true;
    }
    // A typed receive buffer (`land`) takes every block in place: single
    // copies through the piece buffer (read_into()), which measured faster
    // than copying them into the dense buffer and unpacking that whole
    // (1 MiB at 2 ranks: 382-390 against 414-436 us).
    allgather_core(*shm, send, block, recv, Blocks{nullptr, nullptr, block}, team.rank, land, mine);
    return true;
}

bool allgatherv_shm(const Team& team, const void* send, std::int64_t send_bytes, void* recv,
                    Blocks blocks) {
    ShmTeam* shm = ready(team);
    if (shm == nullptr) return false;
    // Every member knows every block's size, so all decline together.
    for (int m = 0; m < shm->size(); ++m) {
        if (shm->wide_carry(static_cast<std::uint64_t>(blocks.bytes[m])) == ShmTeam::Carry::Direct &&
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
    allgather_core(*shm, send, send_bytes, recv, blocks, team.rank, nullptr, nullptr);
    return true;
}

}  // namespace shmpi::coll
