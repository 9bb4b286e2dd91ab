// Large Reduce by pushes up the binary canonical tree: every member writes
// its partial fold straight into its parent's memory (process_vm_writev),
// where the parent folds it in with the next combine, chunk by chunk.
//
// Why: combine() overwrites its right operand, the higher ranks' value.  If
// a child puts its value where the parent will combine, the parent's combine
// needs no copy of its own: each edge of the tree costs one copy, made by
// the child's CPU, and each combine runs once, on the parent's, so the two
// overlap chunk by chunk.  With two ranks that is one copy and one combine
// in parallel; the root's last child writes straight into the receive
// buffer, so the fold ends where it belongs.
//
// The tree is tree_shm.hpp's band tree with band 1: member i's program is
// its own value combined with its children's, smallest subtree first
// (coll.hpp's bracketing).  Steps, from the call's step s:
//   1. Every member claims its release line (read by its children, its
//      parent and, on a root that is not member 0, member 0) and publishes,
//      for each child j,
//      where child j must write (a private staging buffer, or for the last
//      child of a root that is member 0, the receive buffer itself), its
//      size, and the receive buffer's address (read by member 0 when the
//      root is another member); release = s; wake children (and member 0).
//   2. It waits for its parent's release of s (member 0: the root's) and
//      takes its destination from that line.  If the parent's size differs
//      from its own, it will write nothing (so nothing lands outside the
//      parent's buffers) but still release every step the parent expects.
//   3. For each chunk k (step s + 1 + k): starting from its own send chunk,
//      it combines each child's chunk in order (waiting for the child's
//      release of the step), the result landing in that child's buffer;
//      then it writes the result to its destination, stores release and
//      wakes the parent (or, for member 0 with root 0, copies it to the
//      receive buffer if it is not there already).
//   4. The root, when it is not member 0, waits for member 0's release of
//      every chunk: the fold has landed in its receive buffer.
//   5. Every member stores gather = the last step (it has read its parent's
//      line) and wakes the members whose lines it read.
//   6. A size that disagreed is reported: by the child that saw it, and by
//      the parent, which left that child's contribution out.
//
// Allreduce is the same reduction to member 0 with a release of the result
// folded into it: member 0 stores release = s + 1 + k once the fold of chunk
// k is in its receive buffer, and after its own chunks every other member
// copies the fold out of it chunk by chunk (process_vm_readv) as it lands,
// so the broadcast overlaps the reduction.  Member 0 returns when everyone
// has gathered the last step.
#include <algorithm>
#include <cstring>
#include <vector>

#include "arith.hpp"
#include "coll/shm_team.hpp"

namespace shmpi::coll {
namespace {

/// Elements per chunk for `bytes` in all down a tree `depth` edges deep: the
/// message over twice the depth (a pipeline over `depth` edges fills in
/// about that many chunks) and in 4 chunks at least, between 16 KiB (a
/// system call per chunk must stay cheap) and 512 KiB.  Each chunk costs a
/// process_vm_writev and a wait on both sides, and with few edges to
/// overlap that cost is what counts: 2 members, 256 KiB, took 33-35 us in
/// eighths and 25.5-26 us in halves (docs/BENCHMARKS.md); but in halves a
/// 1 MiB Reduce leaves half the message's combine after the last write:
/// 118-121 us, against 106-114 in quarters (2 CPUs; 128-512 KiB and 2 MiB
/// even, and with 3 members).  A function of the size and the team alone,
/// so that a child can work out its parent's chunks from the parent's
/// size.
std::int64_t chunk_elems(std::uint64_t bytes, std::int64_t eb, int depth) {
    const auto parts = std::max<std::uint64_t>(4, 2 * static_cast<std::uint64_t>(std::max(1, depth)));
    const auto b = static_cast<std::int64_t>(std::clamp<std::uint64_t>(bytes / parts, 16 * 1024, 512 * 1024));
    return std::max<std::int64_t>(1, b / eb);
}

std::int64_t chunks_of(std::uint64_t bytes, std::int64_t eb, int depth) {
    const auto count = static_cast<std::int64_t>(bytes / static_cast<std::uint64_t>(eb));
    return ceil_div(count, chunk_elems(bytes, eb, depth));
}
/// Children a member can publish destinations for (in its line's data).
constexpr std::size_t kMaxChildren = shm::kCollInline / sizeof(std::uint64_t);

/// Steps 1-6 (and the allreduce's release of the result when `everyone`).
bool push_reduce(const Team& team, const void* send, void* recv, std::int64_t count,
                 const Reduction& red, int root, bool everyone) {
    ShmTeam* shm = ready(team);
    if (shm == nullptr || !shm->single_copy() || red.elem_bytes <= 0) return false;
    const tree::BandTree& t = shm->band_tree(1);
    for (int m = 0; m < shm->size(); ++m) {
        if (t.children(m).size() > kMaxChildren) return false;  // more than 2^8 members
    }
    const std::int64_t eb = red.elem_bytes;
    const auto bytes = static_cast<std::uint64_t>(count * eb);
    const int depth = t.height() - 1;
    const std::int64_t per = chunk_elems(bytes, eb, depth);
    const std::int64_t chunks = ceil_div(count, per);
    if (static_cast<std::uint64_t>(chunks) + 1 >= ShmTeam::kMaxSteps) return false;
    if (reduction_needs_nobody(*shm, send, recv, bytes)) return true;

    const std::uint64_t s = shm->begin_call();
    const int me = shm->index();
    const int parent = t.parent(me);
    const std::span<const int> children = t.children(me);
    auto* out = static_cast<std::byte*>(recv);
    const auto* in = static_cast<const std::byte*>(send);
    const bool final_here = me == 0 && root == 0;  // the fold ends in our recv
    const bool in_place = send == recv;

    // 1. Where each child writes.
    std::vector<std::byte*> dest(children.size());
    for (std::size_t j = 0; j < children.size(); ++j) {
        const bool straight = final_here && !in_place && j + 1 == children.size();
        dest[j] = straight ? out : shm->buffer(2 + static_cast<int>(j), bytes);
    }
    // Who reads our line: the children (where to write), the parent (our
    // size, at chunk 0) and, on a root that is not member 0, member 0 (the
    // receive buffer's address).  claim() waits for all of them before a
    // later call overwrites the line.
    std::vector<int> line_readers(children.begin(), children.end());
    if (me != 0) line_readers.push_back(parent);
    if (me == root && root != 0 && parent != 0) line_readers.push_back(0);
    shm->claim(ShmTeam::inline_area(s), s,
               everyone && me == 0 ? ShmTeam::Readers::all() : ShmTeam::Readers::of(line_readers));
    shm::CollLine& mine = shm->my_line(s);
    mine.bytes = bytes;
    mine.addr = reinterpret_cast<std::uint64_t>(recv);
    for (std::size_t j = 0; j < children.size(); ++j) {
        const auto a = reinterpret_cast<std::uint64_t>(dest[j]);
        std::memcpy(mine.data + j * sizeof a, &a, sizeof a);
    }
    shm->release(s);
    if (everyone && me == 0) {
        shm->notify_all();
    } else {
        shm->notify(line_readers);
    }

    // 2. Where we write.
    const int up = me != 0 ? parent : (root != 0 ? root : -1);
    std::uint64_t up_dest = 0;
    std::uint64_t up_bytes = bytes;
    if (up >= 0) {
        shm->wait_release(up, s);
        const shm::CollLine& l = shm->line(up, s);
        up_bytes = l.bytes;
        if (me != 0) {
            const auto j = static_cast<std::size_t>(
                std::find(t.children(up).begin(), t.children(up).end(), me) - t.children(up).begin());
            std::memcpy(&up_dest, l.data + j * sizeof up_dest, sizeof up_dest);
        } else {
            up_dest = l.addr;
        }
    }
    const bool push = up >= 0 && up_bytes == bytes;
    // A child whose size differs from ours: left out of the fold.
    int bad_child = -1;
    std::uint64_t bad_bytes = 0;
    std::vector<bool> skip(children.size(), false);

    // 3. The chunks.
    const std::int64_t steps = push || up < 0 ? chunks : chunks_of(up_bytes, eb, depth);
    for (std::int64_t k = 0; k < std::max(chunks, steps); ++k) {
        const std::uint64_t step = s + 1 + static_cast<std::uint64_t>(k);
        const std::int64_t first = k * per;
        const std::int64_t n = std::min(per, count - first);
        const std::byte* acc = nullptr;
        if (k < chunks) {
            const auto off = static_cast<std::size_t>(first * eb);
            acc = in + off;
            for (std::size_t j = 0; j < children.size(); ++j) {
                const int c = children[j];
                shm->wait_release(c, step);
                if (k == 0 && shm->line(c, s).bytes != bytes) {
                    skip[j] = true;
                    if (bad_child < 0) {
                        bad_child = c;
                        bad_bytes = shm->line(c, s).bytes;
                    }
                }
                if (skip[j]) continue;
                red.combine(acc, dest[j] + off, n, red.state);
                acc = dest[j] + off;
            }
            if (final_here && acc != out + off) std::memcpy(out + off, acc, static_cast<std::size_t>(n * eb));
            if (final_here && everyone) {
                shm->release(step);  // the fold of chunk k is in our recv
                shm->notify_all();
            }
            if (push) {
                shm->write(up, reinterpret_cast<void*>(up_dest + off), acc, static_cast<std::size_t>(n * eb));
            }
        }
        if (up >= 0 && k < steps) {
            shm->release(step);
            shm->notify(up);
        }
    }
    // 4.
    if (me == root && root != 0) {
        for (std::int64_t k = 0; k < chunks; ++k) shm->wait_release(0, s + 1 + static_cast<std::uint64_t>(k));
    }
    // The allreduce's release: the fold, out of member 0's recv.
    std::int64_t last = std::max(chunks, steps);
    if (everyone && me != 0) {
        shm->wait_release(0, s);
        const std::uint64_t top = shm->line(0, s).addr;
        const std::uint64_t top_bytes = shm->line(0, s).bytes;
        const std::int64_t top_chunks = chunks_of(top_bytes, eb, depth);
        const std::int64_t top_per = chunk_elems(top_bytes, eb, depth);
        const std::int64_t top_count = static_cast<std::int64_t>(top_bytes / static_cast<std::uint64_t>(eb));
        last = std::max(last, top_chunks);
        for (std::int64_t k = 0; k < top_chunks; ++k) {
            shm->wait_release(0, s + 1 + static_cast<std::uint64_t>(k));
            const std::int64_t first = k * top_per;
            const std::int64_t n = std::min({top_per, top_count - first, std::max<std::int64_t>(0, count - first)});
            if (n > 0) {
                const auto off = static_cast<std::size_t>(first * eb);
                shm->read(0, reinterpret_cast<const std::byte*>(top + off), out + off,
                          static_cast<std::size_t>(n * eb));
            }
        }
    }
    // 5.
    shm->gather(s + static_cast<std::uint64_t>(last));
    if (up >= 0) shm->notify(up);
    if (everyone) {
        if (me != 0) {
            shm->notify(0);
        } else {
            shm->wait_gather_all(s + static_cast<std::uint64_t>(chunks));  // they read our recv
        }
    }
    // 6.
    if (up >= 0 && !push) throw_size_mismatch(up, up_bytes, team.rank, bytes);
    if (bad_child >= 0) throw_size_mismatch(bad_child, bad_bytes, team.rank, bytes);
    return true;
}

}  // namespace

bool reduce_shm_push(const Team& team, const void* send, void* recv, std::int64_t count,
                     const Reduction& red, int root) {
    return push_reduce(team, send, recv, count, red, root, false);
}

bool allreduce_shm_push(const Team& team, const void* send, void* recv, std::int64_t count,
                        const Reduction& red) {
    return push_reduce(team, send, recv, count, red, 0, true);
}

}  // namespace shmpi::coll
