#include "coll/nonblocking.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "coll/schedule.hpp"

namespace shmpi::coll::nbc {
namespace {

/// Sub-tags (Schedule::send's `sub`) of a call's second kind of message.
constexpr int kResult = 1;

std::unique_ptr<Schedule> make(Communicator& c) {
    return std::make_unique<Schedule>(c.engine(), c.nbc_context(), c.next_nbc_tag() << 6, c.rank(),
                                      c.world_ranks());
}

p2p::Task* start(std::unique_ptr<Schedule> s) {
    return s.release()->start();
}

/// A reduction's schedule: it holds the datatype and the operation.
std::unique_ptr<Schedule> make_reduction(Communicator& c, const dtype::Datatype& type, const Binding& op) {
    auto s = make(c);
    s->hold(type);
    s->keep(op);
    return s;
}

std::byte* at(void* buf, std::int64_t offset) {
    return static_cast<std::byte*>(buf) + offset;
}
const std::byte* at(const void* buf, std::int64_t offset) {
    return static_cast<const std::byte*>(buf) + offset;
}

/// `count` elements of `t` at `buf`, packed now into the schedule's memory.
std::byte* pack_now(Schedule& s, const void* buf, std::int64_t count, const dtype::Datatype& t) {
    std::byte* p = s.scratch(count * t.size);
    if (count > 0 && t.size > 0) dtype::pack(t, buf, count, p);
    return p;
}

/// This member's block to itself, copied now: `scount` elements of `st` at
/// `src` into `rcount` elements of `rt` at `dst`.  Sizes that differ are
/// reported as the other ranks' messages would be, after copying what fits.
void copy_own(Schedule& s, const void* src, std::int64_t scount, const dtype::Datatype& st, void* dst,
              std::int64_t rcount, const dtype::Datatype& rt) {
    const std::int64_t sent = scount * st.size;
    const std::int64_t wanted = rcount * rt.size;
    if (sent != wanted) {
        s.report(sent > wanted ? MPI_ERR_TRUNCATE : MPI_ERR_COUNT,
                 fmt::format("rank {} sends {} bytes to itself but its receive arguments expect {} (the "
                             "datatype signatures differ)",
                             s.rank(), sent, wanted));
    }
    const std::int64_t n = std::min(sent, wanted);
    if (n <= 0) return;
    if (st.contiguous && rt.contiguous) {
        std::memmove(at(dst, rt.true_lb), at(src, st.true_lb), static_cast<std::size_t>(n));
        return;
    }
    dtype::copy(st, src, scount, rt, dst, rcount);
}

/// The unpack of dense bytes into a typed buffer, as local work.
void unpack_later(Schedule& s, const std::byte* dense, std::int64_t bytes, const dtype::Datatype& t,
                  void* buf) {
    if (bytes <= 0) return;
    const dtype::Datatype* type = &t;
    s.local([=] { dtype::unpack(*type, dense, bytes, buf); });
}

/// Where member `r` of `n` stands in the canonical fold (coll.hpp): the
/// members whose folds it takes, innermost range first, and the member it
/// sends its own fold to (-1 for member 0, which ends with the whole).
struct FoldPlan {
    std::vector<int> from;
    int parent = -1;
};

FoldPlan fold_plan(int r, int n) {
    FoldPlan plan;
    int lo = 0;
    int hi = n;
    while (hi - lo > 1) {
        const int mid = canonical_mid(lo, hi);
        if (r < mid) {
            if (r == lo) plan.from.push_back(mid);  // r folds [lo, hi): takes fold(mid, hi) from mid
            hi = mid;
        } else {
            if (r == mid) plan.parent = lo;
            lo = mid;
        }
    }
    std::reverse(plan.from.begin(), plan.from.end());
    return plan;
}

/// Adds this member's part of the canonical fold of every member's dense
/// contribution (`mine`, `bytes` bytes) towards member 0.  Returns where
/// the member's fold is once the schedule has got that far: on member 0,
/// the whole reduction.
std::byte* fold(Schedule& s, std::byte* mine, std::int64_t bytes, const op::Binding& op) {
    const FoldPlan plan = fold_plan(s.rank(), s.size());
    const coll::Reduction red = op.reduction();  // its state lives in `op`, which the schedule keeps
    const std::int64_t dense = op.dense_count();
    std::byte* acc = mine;
    std::byte* spare = plan.from.empty() ? nullptr : s.scratch(bytes);
    for (const int from : plan.from) {
        // fold(lo, hi) = fold(lo, mid) op fold(mid, hi): ours is the left,
        // lower-ranked operand, `in` of the combine.
        std::byte* right = spare;
        s.recv_bytes(from, right, bytes);
        s.next_round();
        s.local([=] { red.combine(acc, right, dense, red.state); });
        spare = acc;
        acc = right;
    }
    if (plan.parent >= 0) s.send_bytes(plan.parent, acc, bytes);
    return acc;
}

/// The start of Ireduce, Iallreduce and Ireduce_scatter: this member's
/// `count` elements (from `send`, or `recv` for MPI_IN_PLACE) packed now and
/// folded towards member 0 (fold(); never null).  A team of one has nothing
/// to fold: its contribution is copied into `recv`, and nullptr comes back.
std::byte* pack_and_fold(Schedule& s, const void* send, void* recv, std::int64_t count,
                         const dtype::Datatype& type, const op::Binding& op) {
    if (s.size() == 1) {
        if (send != MPI_IN_PLACE) copy_own(s, send, count, type, recv, count, type);
        return nullptr;
    }
    std::byte* mine = pack_now(s, send == MPI_IN_PLACE ? recv : send, count, type);
    return fold(s, mine, count * type.size, op);
}

/// This member's part of a binomial-tree broadcast of `count` elements of
/// `t` at `buf` from `root`: the receive from its parent, then (next round)
/// the sends to its children, largest subtree first.
void binomial_bcast(Schedule& s, int root, void* buf, std::int64_t count, const dtype::Datatype& t, int sub) {
    const int n = s.size();
    const int v = (s.rank() - root + n) % n;  // rank relative to the root
    int span = 1;
    while (span < n) span <<= 1;
    if (v != 0) {
        span = v & -v;
        s.recv((v - span + root) % n, buf, count, t, sub);
        s.next_round();
    }
    for (int m = span >> 1; m >= 1; m >>= 1) {
        if (v + m < n) s.send((v + m + root) % n, buf, count, t, sub);
    }
}

/// Where reduce-scatter's blocks of `counts` elements of `type` start in
/// the dense result of the fold (`offsets`, one per member of `n`); returns
/// the elements of the whole vector.
std::int64_t block_offsets(const int* counts, int n, const dtype::Datatype& type,
                           std::vector<std::int64_t>& offsets) {
    offsets.assign(static_cast<std::size_t>(n), 0);
    std::int64_t total = 0;
    for (int r = 0; r < n; ++r) {
        offsets[static_cast<std::size_t>(r)] = total * type.size;
        total += counts[r];
    }
    return total;
}

/// Reduce-scatter's work once the fold is laid out: member 0 sends each
/// member its block of the result, whose dense offsets are `offsets`.
void scatter_result(Schedule& s, std::byte* result, const std::vector<std::int64_t>& offsets,
                    const int* counts, const dtype::Datatype& type, void* recv) {
    s.next_round();
    if (s.rank() == 0) {
        for (int r = 1; r < s.size(); ++r) {
            s.send_bytes(r, result + offsets[static_cast<std::size_t>(r)], counts[r] * type.size, kResult);
        }
        unpack_later(s, result, counts[0] * type.size, type, recv);
    } else {
        s.recv(0, recv, counts[s.rank()], type, kResult);
    }
}

}  // namespace

p2p::Task* barrier(Communicator& c) {
    auto s = make(c);
    const int n = s->size();
    const int r = s->rank();
    for (int dist = 1; dist < n; dist <<= 1) {
        s->send_bytes((r + dist) % n, nullptr, 0);
        s->recv_bytes((r - dist + n) % n, nullptr, 0);
        s->next_round();
    }
    return start(std::move(s));
}

p2p::Task* bcast(Communicator& c, void* buf, std::int64_t count, const dtype::Datatype& type, int root) {
    auto s = make(c);
    s->hold(type);
    binomial_bcast(*s, root, buf, count, type, 0);
    return start(std::move(s));
}

// ---------------------------------------------------------------- reductions

p2p::Task* reduce(Communicator& c, const void* send, void* recv, std::int64_t count,
                     const dtype::Datatype& type, Binding op, int root) {
    auto s = make_reduction(c, type, op);
    const std::int64_t bytes = count * type.size;
    std::byte* result = pack_and_fold(*s, send, recv, count, type, *op);
    if (result == nullptr) return start(std::move(s));
    s->next_round();
    if (s->rank() == 0) {
        if (root == 0) {
            unpack_later(*s, result, bytes, type, recv);
        } else {
            s->send_bytes(root, result, bytes, kResult);
        }
    } else if (s->rank() == root) {
        s->recv(0, recv, count, type, kResult);
    }
    return start(std::move(s));
}

p2p::Task* allreduce(Communicator& c, const void* send, void* recv, std::int64_t count,
                        const dtype::Datatype& type, Binding op) {
    auto s = make_reduction(c, type, op);
    const std::int64_t bytes = count * type.size;
    std::byte* result = pack_and_fold(*s, send, recv, count, type, *op);
    if (result == nullptr) return start(std::move(s));
    s->next_round();
    // Member 0's result goes down a binomial tree as dense bytes; members
    // with a contiguous type take it straight into their buffer.
    const bool direct = s->rank() != 0 && type.contiguous;
    std::byte* res = s->rank() == 0 ? result : direct ? at(recv, type.true_lb) : s->scratch(bytes);
    binomial_bcast(*s, 0, res, bytes, dtype::byte_type(), kResult);
    if (!direct) {
        s->next_round();
        unpack_later(*s, res, bytes, type, recv);
    }
    return start(std::move(s));
}

p2p::Task* reduce_scatter(Communicator& c, const void* send, void* recv, const int* counts,
                             const dtype::Datatype& type, Binding op) {
    auto s = make_reduction(c, type, op);
    std::vector<std::int64_t> offsets;
    const std::int64_t total = block_offsets(counts, s->size(), type, offsets);
    std::byte* result = pack_and_fold(*s, send, recv, total, type, *op);  // total == counts[0] alone
    if (result == nullptr) return start(std::move(s));
    scatter_result(*s, result, offsets, counts, type, recv);
    return start(std::move(s));
}

p2p::Task* reduce_scatter_block(Communicator& c, const void* send, void* recv, std::int64_t count,
                                   const dtype::Datatype& type, Binding op) {
    const std::vector<int> counts(static_cast<std::size_t>(c.size()), static_cast<int>(count));
    return reduce_scatter(c, send, recv, counts.data(), type, std::move(op));
}

p2p::Task* scan(Communicator& c, const void* send, void* recv, std::int64_t count,
                   const dtype::Datatype& type, Binding op) {
    auto s = make_reduction(c, type, op);
    const std::int64_t bytes = count * type.size;
    const int n = s->size();
    const int r = s->rank();
    std::byte* acc = pack_now(*s, send == MPI_IN_PLACE ? recv : send, count, type);
    if (r > 0) {
        // prefix(0..r) = prefix(0..r-1) op x_r: the prefix is the lower operand.
        std::byte* prefix = s->scratch(bytes);
        const coll::Reduction red = op->reduction();
        const std::int64_t dense = op->dense_count();
        s->recv_bytes(r - 1, prefix, bytes);
        s->next_round();
        s->local([=] { red.combine(prefix, acc, dense, red.state); });
    }
    if (r < n - 1) s->send_bytes(r + 1, acc, bytes);
    unpack_later(*s, acc, bytes, type, recv);
    return start(std::move(s));
}

p2p::Task* exscan(Communicator& c, const void* send, void* recv, std::int64_t count,
                     const dtype::Datatype& type, Binding op) {
    auto s = make_reduction(c, type, op);
    const std::int64_t bytes = count * type.size;
    const int n = s->size();
    const int r = s->rank();
    if (n == 1) return start(std::move(s));  // rank 0's recvbuf is undefined
    std::byte* acc = pack_now(*s, send == MPI_IN_PLACE ? recv : send, count, type);
    if (r > 0) {
        std::byte* prefix = s->scratch(bytes);
        s->recv_bytes(r - 1, prefix, bytes);
        s->next_round();
        unpack_later(*s, prefix, bytes, type, recv);
        if (r < n - 1) {
            const coll::Reduction red = op->reduction();
            const std::int64_t dense = op->dense_count();
            s->local([=] { red.combine(prefix, acc, dense, red.state); });
        }
    }
    if (r < n - 1) s->send_bytes(r + 1, acc, bytes);
    return start(std::move(s));
}

// ------------------------------------------------------- gathers, scatters

namespace {

/// Gather's and gatherv's schedule: the root's block r is `count(r)`
/// elements of `rtype` at `where(r)`.
template <class Count, class Where>
p2p::Task* gather_blocks(Communicator& c, const void* send, std::int64_t scount,
                            const dtype::Datatype* stype, const dtype::Datatype* rtype, int root, Count count,
                            Where where) {
    auto s = make(c);
    if (stype != nullptr) s->hold(*stype);
    if (c.rank() != root) {
        s->send(root, send, scount, *stype);
        return start(std::move(s));
    }
    s->hold(*rtype);
    for (int r = 0; r < s->size(); ++r) {
        if (r != root) s->recv(r, where(r), count(r), *rtype);
    }
    if (send != MPI_IN_PLACE) copy_own(*s, send, scount, *stype, where(root), count(root), *rtype);
    return start(std::move(s));
}

/// Scatter's and scatterv's schedule: the root's block r is `count(r)`
/// elements of `stype` at `where(r)`.
template <class Count, class Where>
p2p::Task* scatter_blocks(Communicator& c, const dtype::Datatype* stype, void* recv, std::int64_t rcount,
                             const dtype::Datatype* rtype, int root, Count count, Where where) {
    auto s = make(c);
    if (rtype != nullptr) s->hold(*rtype);
    if (c.rank() != root) {
        s->recv(root, recv, rcount, *rtype);
        return start(std::move(s));
    }
    s->hold(*stype);
    for (int r = 0; r < s->size(); ++r) {
        if (r != root) s->send(r, where(r), count(r), *stype);
    }
    if (recv != MPI_IN_PLACE) copy_own(*s, where(root), count(root), *stype, recv, rcount, *rtype);
    return start(std::move(s));
}

}  // namespace

p2p::Task* gather(Communicator& c, const void* send, std::int64_t scount, const dtype::Datatype* stype,
                     void* recv, std::int64_t rcount, const dtype::Datatype* rtype, int root) {
    return gather_blocks(
        c, send, scount, stype, rtype, root, [&](int) { return rcount; },
        [&](int r) { return at(recv, r * rcount * rtype->extent); });
}

p2p::Task* gatherv(Communicator& c, const void* send, std::int64_t scount, const dtype::Datatype* stype,
                      void* recv, const int* rcounts, const int* displs, const dtype::Datatype* rtype,
                      int root) {
    return gather_blocks(
        c, send, scount, stype, rtype, root, [&](int r) { return std::int64_t{rcounts[r]}; },
        [&](int r) { return at(recv, displs[r] * rtype->extent); });
}

p2p::Task* scatter(Communicator& c, const void* send, std::int64_t scount, const dtype::Datatype* stype,
                      void* recv, std::int64_t rcount, const dtype::Datatype* rtype, int root) {
    return scatter_blocks(
        c, stype, recv, rcount, rtype, root, [&](int) { return scount; },
        [&](int r) { return at(send, r * scount * stype->extent); });
}

p2p::Task* scatterv(Communicator& c, const void* send, const int* scounts, const int* displs,
                       const dtype::Datatype* stype, void* recv, std::int64_t rcount,
                       const dtype::Datatype* rtype, int root) {
    return scatter_blocks(
        c, stype, recv, rcount, rtype, root, [&](int r) { return std::int64_t{scounts[r]}; },
        [&](int r) { return at(send, displs[r] * stype->extent); });
}

// ------------------------------------------------- allgathers, all-to-all

namespace {

/// One message each way between this member and every other, nearest
/// ranks first: `block_to(peer)` is sent, `block_from(peer)` received.
template <class To, class From>
void exchange_all(Schedule& s, To&& block_to, From&& block_from) {
    const int n = s.size();
    const int r = s.rank();
    for (int k = 1; k < n; ++k) {
        const int to = (r + k) % n;
        const int from = (r - k + n) % n;
        block_from(from);
        block_to(to);
    }
}

/// Allgather's and allgatherv's schedule: block r of the receive buffer is
/// `count(r)` elements of `rtype` at `where(r)`.
template <class Count, class Where>
p2p::Task* allgather_blocks(Communicator& c, const void* send, std::int64_t scount,
                               const dtype::Datatype* stype, const dtype::Datatype& rtype, Count count,
                               Where where) {
    auto s = make(c);
    s->hold(rtype);
    const int me = c.rank();
    if (send != MPI_IN_PLACE) {
        s->hold(*stype);
        copy_own(*s, send, scount, *stype, where(me), count(me), rtype);
    }
    exchange_all(
        *s,
        [&](int to) {
            if (send == MPI_IN_PLACE) {
                s->send(to, where(me), count(me), rtype);
            } else {
                s->send(to, send, scount, *stype);
            }
        },
        [&](int from) { s->recv(from, where(from), count(from), rtype); });
    return start(std::move(s));
}

}  // namespace

p2p::Task* allgather(Communicator& c, const void* send, std::int64_t scount, const dtype::Datatype* stype,
                        void* recv, std::int64_t rcount, const dtype::Datatype& rtype) {
    return allgather_blocks(
        c, send, scount, stype, rtype, [&](int) { return rcount; },
        [&](int r) { return at(recv, r * rcount * rtype.extent); });
}

p2p::Task* allgatherv(Communicator& c, const void* send, std::int64_t scount, const dtype::Datatype* stype,
                         void* recv, const int* rcounts, const int* displs, const dtype::Datatype& rtype) {
    return allgather_blocks(
        c, send, scount, stype, rtype, [&](int r) { return std::int64_t{rcounts[r]}; },
        [&](int r) { return at(recv, displs[r] * rtype.extent); });
}

p2p::Task* alltoall(Communicator& c, const void* send, std::int64_t scount, const dtype::Datatype* stype,
                       void* recv, std::int64_t rcount, const dtype::Datatype& rtype) {
    auto s = make(c);
    s->hold(rtype);
    const int me = c.rank();
    const std::int64_t rblock = rcount * rtype.extent;
    if (send == MPI_IN_PLACE) {
        // The blocks to send are overwritten by those received: send from
        // a packed copy; our own block stays where it is.
        const std::int64_t dense = rcount * rtype.size;
        std::byte* packed = pack_now(*s, recv, rcount * s->size(), rtype);
        exchange_all(
            *s, [&](int to) { s->send_bytes(to, packed + to * dense, dense); },
            [&](int from) { s->recv(from, at(recv, from * rblock), rcount, rtype); });
        return start(std::move(s));
    }
    s->hold(*stype);
    const std::int64_t sblock = scount * stype->extent;
    copy_own(*s, at(send, me * sblock), scount, *stype, at(recv, me * rblock), rcount, rtype);
    exchange_all(
        *s, [&](int to) { s->send(to, at(send, to * sblock), scount, *stype); },
        [&](int from) { s->recv(from, at(recv, from * rblock), rcount, rtype); });
    return start(std::move(s));
}

p2p::Task* alltoallv(Communicator& c, const void* send, const int* scounts, const int* sdispls,
                        const dtype::Datatype* stype, void* recv, const int* rcounts, const int* rdispls,
                        const dtype::Datatype& rtype) {
    auto s = make(c);
    s->hold(rtype);
    const int me = c.rank();
    auto rblock = [&](int r) { return at(recv, rdispls[r] * rtype.extent); };
    if (send == MPI_IN_PLACE) {
        exchange_all(
            *s,
            [&](int to) {
                s->send_bytes(to, pack_now(*s, rblock(to), rcounts[to], rtype), rcounts[to] * rtype.size);
            },
            [&](int from) { s->recv(from, rblock(from), rcounts[from], rtype); });
        return start(std::move(s));
    }
    s->hold(*stype);
    auto sblock = [&](int r) { return at(send, sdispls[r] * stype->extent); };
    copy_own(*s, sblock(me), scounts[me], *stype, rblock(me), rcounts[me], rtype);
    exchange_all(
        *s, [&](int to) { s->send(to, sblock(to), scounts[to], *stype); },
        [&](int from) { s->recv(from, rblock(from), rcounts[from], rtype); });
    return start(std::move(s));
}

p2p::Task* alltoallw(Communicator& c, const void* send, const int* scounts, const int* sdispls,
                        const dtype::Datatype* const* stypes, void* recv, const int* rcounts,
                        const int* rdispls, const dtype::Datatype* const* rtypes) {
    auto s = make(c);
    const int n = s->size();
    const int me = c.rank();
    for (int r = 0; r < n; ++r) s->hold(*rtypes[r]);
    if (send == MPI_IN_PLACE) {
        // Packed in the loop, before any receive is started.
        exchange_all(
            *s,
            [&](int to) {
                s->send_bytes(to, pack_now(*s, at(recv, rdispls[to]), rcounts[to], *rtypes[to]),
                              rcounts[to] * rtypes[to]->size);
            },
            [&](int from) { s->recv(from, at(recv, rdispls[from]), rcounts[from], *rtypes[from]); });
        return start(std::move(s));
    }
    for (int r = 0; r < n; ++r) s->hold(*stypes[r]);
    copy_own(*s, at(send, sdispls[me]), scounts[me], *stypes[me], at(recv, rdispls[me]), rcounts[me],
             *rtypes[me]);
    exchange_all(
        *s, [&](int to) { s->send(to, at(send, sdispls[to]), scounts[to], *stypes[to]); },
        [&](int from) { s->recv(from, at(recv, rdispls[from]), rcounts[from], *rtypes[from]); });
    return start(std::move(s));
}

p2p::Task* neighbor_exchange(Communicator& c, const topo::Neighborhood& nb,
                                std::span<const topo::Block> send, std::span<const topo::Block> recv) {
    auto s = make(c);
    // The direction in the sub-tag, as topo/neighbor.cpp does it in the tag
    // (modulo 64 keeps j ^ 1 paired with j).
    for (std::size_t j = 0; j < recv.size(); ++j) {
        const int src = nb.sources[j];
        if (src == MPI_PROC_NULL) continue;
        const topo::Block& b = recv[j];
        s->hold(*b.type);
        s->recv(src, const_cast<void*>(b.buf), b.count, *b.type,
                nb.directional ? static_cast<int>((j ^ 1u) % 64) : 0);
    }
    for (std::size_t j = 0; j < send.size(); ++j) {
        const int dst = nb.destinations[j];
        if (dst == MPI_PROC_NULL) continue;
        const topo::Block& b = send[j];
        s->hold(*b.type);
        s->send(dst, b.buf, b.count, *b.type, nb.directional ? static_cast<int>(j % 64) : 0);
    }
    return start(std::move(s));
}

// ------------------------------------------------------ intercommunicators

namespace {

/// A schedule of `c`'s local group (its own context) that also reaches the
/// remote group on `c`'s nbc_context(), both with the tag of `c`'s call.
std::unique_ptr<Schedule> make_inter(Communicator& c) {
    Communicator& local = *c.local();
    auto s = std::make_unique<Schedule>(c.engine(), local.nbc_context(), c.next_nbc_tag() << 6, c.rank(),
                                        local.world_ranks());
    s->set_remote(c.nbc_context(), c.peers());
    return s;
}

/// Allreduce's and reduce-scatter's start on an intercommunicator: this
/// group's fold of `count` elements at local rank 0, swapped there for the
/// other group's.  Returns the other group's fold on local rank 0 (ready in
/// the round after), nullptr elsewhere.
std::byte* swap_folds(Schedule& s, const void* send, std::int64_t count, const dtype::Datatype& type,
                      const op::Binding& op) {
    const std::int64_t bytes = count * type.size;
    std::byte* mine = pack_now(s, send, count, type);
    std::byte* acc = fold(s, mine, bytes, op);
    if (s.rank() != 0) return nullptr;
    std::byte* theirs = s.scratch(bytes);
    s.send_remote_bytes(0, acc, bytes);
    s.recv_remote_bytes(0, theirs, bytes);
    return theirs;
}

}  // namespace

p2p::Task* inter_barrier(Communicator& c) {
    auto s = make_inter(c);
    if (s->rank() != 0) {
        s->send_bytes(0, nullptr, 0);
        s->next_round();
        s->recv_bytes(0, nullptr, 0, kResult);
        return start(std::move(s));
    }
    for (int r = 1; r < s->size(); ++r) s->recv_bytes(r, nullptr, 0);
    s->next_round();
    // Every member of this group has arrived: tell the other group's rank 0,
    // and wait until it says the same of its group.
    s->send_remote_bytes(0, nullptr, 0);
    s->recv_remote_bytes(0, nullptr, 0);
    s->next_round();
    for (int r = 1; r < s->size(); ++r) s->send_bytes(r, nullptr, 0, kResult);
    return start(std::move(s));
}

p2p::Task* inter_exchange(Communicator& c, const std::vector<Piece>& sends, const std::vector<Piece>& recvs) {
    auto s = make_inter(c);
    for (std::size_t r = 0; r < recvs.size(); ++r) {
        const Piece& p = recvs[r];
        if (p.type == nullptr) continue;
        s->hold(*p.type);
        s->recv_remote(static_cast<int>(r), const_cast<void*>(p.buf), p.count, *p.type);
    }
    for (std::size_t r = 0; r < sends.size(); ++r) {
        const Piece& p = sends[r];
        if (p.type == nullptr) continue;
        s->hold(*p.type);
        s->send_remote(static_cast<int>(r), p.buf, p.count, *p.type);
    }
    return start(std::move(s));
}

p2p::Task* inter_reduce(Communicator& c, const void* send, void* recv, std::int64_t count,
                        const dtype::Datatype& type, Binding op, int root) {
    auto s = make_inter(c);
    s->hold(type);
    s->keep(op);
    if (root == MPI_PROC_NULL) return start(std::move(s));
    if (root == MPI_ROOT) {
        // The other group's fold comes from its rank 0.
        s->recv_remote(0, recv, count, type);
        return start(std::move(s));
    }
    const std::int64_t bytes = count * type.size;
    std::byte* acc = fold(*s, pack_now(*s, send, count, type), bytes, *op);
    // Sent in the round of the fold's last combine, after it has run.
    if (s->rank() == 0) s->send_remote_bytes(root, acc, bytes);
    return start(std::move(s));
}

p2p::Task* inter_allreduce(Communicator& c, const void* send, void* recv, std::int64_t count,
                           const dtype::Datatype& type, Binding op) {
    auto s = make_inter(c);
    s->hold(type);
    s->keep(op);
    const std::int64_t bytes = count * type.size;
    std::byte* theirs = swap_folds(*s, send, count, type, *op);
    s->next_round();
    if (s->rank() == 0) {
        for (int r = 1; r < s->size(); ++r) s->send_bytes(r, theirs, bytes, kResult);
        unpack_later(*s, theirs, bytes, type, recv);
    } else {
        s->recv(0, recv, count, type, kResult);
    }
    return start(std::move(s));
}

p2p::Task* inter_reduce_scatter(Communicator& c, const void* send, void* recv, const int* counts,
                                const dtype::Datatype& type, Binding op) {
    auto s = make_inter(c);
    s->hold(type);
    s->keep(op);
    std::vector<std::int64_t> offsets;
    const std::int64_t total = block_offsets(counts, s->size(), type, offsets);
    std::byte* theirs = swap_folds(*s, send, total, type, *op);
    scatter_result(*s, theirs, offsets, counts, type, recv);
    return start(std::move(s));
}

}  // namespace shmpi::coll::nbc
