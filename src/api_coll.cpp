// C boundary: collective communication and reduction operations.
//
// Each function checks its arguments (only those the standard makes
// significant on this rank), translates handles and calls one function of
// coll/typed.hpp, or for the nonblocking form (MPI_Ibcast ...) starts one of
// coll/nonblocking.hpp after the very same checks.  MPI_IN_PLACE is accepted
// exactly where MPI-3.1 allows it and is MPI_ERR_BUFFER elsewhere.
#include <fmt/format.h>

#include <cstdint>
#include <memory>
#include <string>

#include "api_common.hpp"
#include "api_requests.hpp"
#include "coll/nonblocking.hpp"
#include "coll/typed.hpp"
#include "op.hpp"

using namespace shmpi;
using namespace shmpi::api;
namespace typed = shmpi::coll::typed;
namespace nbc = shmpi::coll::nbc;

namespace {

typed::Call call(Communicator& c, const char* fn) {
    return typed::Call{c, runtime().coll_selection(), fn};
}

[[gnu::always_inline]] inline void check_root(const Communicator& c, int root, const char* fn) {
    if (root < 0 || root >= c.size()) [[unlikely]] {
        fail(MPI_ERR_ROOT, "{}: root {} is not a rank of {} (ranks 0 to {})", fn, root, c.label(), c.size() - 1);
    }
}

[[gnu::always_inline]] inline void check_count_arg(int count, const char* arg, const char* fn) {
    if (count < 0) [[unlikely]] fail(MPI_ERR_COUNT, "{}: {} {} is negative", fn, arg, count);
}

/// The argument names of one side of a collective, for messages.
struct Side {
    const char* count;
    const char* type;
    const char* buf;
};
constexpr Side kSend{"sendcount", "sendtype", "sendbuf"};
constexpr Side kRecv{"recvcount", "recvtype", "recvbuf"};

/// One (buffer, count, datatype) side: checks the count, the type, and the
/// buffer as holding `elems` elements of the type (the count times the
/// blocks the buffer holds); returns the type.  Always inlined (its checks
/// are a few tests each; out of line, 66 instructions a Gather's send side).
[[gnu::always_inline]] inline const dtype::Datatype& buffer_arg(const void* buf, int count, std::int64_t elems,
                                                                MPI_Datatype type, const Side& side, const char* fn) {
    check_count_arg(count, side.count, fn);
    const dtype::Datatype& t = type_arg(type, side.type, fn);
    check_buffer(buf, elems, t, side.buf, fn);
    return t;
}

/// How check_alias() names the two buffers, and what it advises.
struct AliasWords {
    const char* send = "sendbuf";
    const char* recv = "recvbuf";
    const char* advice = "pass MPI_IN_PLACE as sendbuf to use recvbuf for both";
};

/// sendbuf and recvbuf must not be the same memory (MPI_IN_PLACE says that).
[[gnu::always_inline]] inline void check_alias(const void* send, const void* recv, std::int64_t bytes, const char* fn,
                                               const AliasWords& w = {}) {
    if (send == recv && send != nullptr && bytes > 0) [[unlikely]] {
        fail(MPI_ERR_BUFFER, "{}: {} and {} are the same buffer {}; {}", fn, w.send, w.recv, send, w.advice);
    }
}

/// Part of one side of a collective's data in this process: `count`
/// elements of `t`, starting `displ` extents from `buf`.
struct Part {
    const void* buf;
    std::int64_t displ;
    std::int64_t count;
    const dtype::Datatype& t;
};

/// The send side's data and the receive side's must not share memory
/// (MPI-3.1 2.3; MPI_IN_PLACE is the way to use one buffer for both), the
/// usual slip being a sendbuf that points at this rank's own block of
/// recvbuf.  Where both parts are single runs of bytes, any overlap is
/// refused; where either has gaps (which the other may fill legally), only
/// the same buffer.
[[gnu::always_inline]] inline void check_alias(const Part& send, const Part& recv, const char* fn,
                                               const AliasWords& w = {}) {
    if (send.count <= 0 || recv.count <= 0 || send.t.size == 0 || recv.t.size == 0) return;
    if (send.displ == 0 && recv.displ == 0) check_alias(send.buf, recv.buf, send.count * send.t.size, fn, w);
    if (!send.t.is_run(send.count) || !recv.t.is_run(recv.count)) return;
    // Unsigned arithmetic: negative bounds and displacements wrap the same
    // way on both sides.
    auto lo = [](const Part& p) {
        return reinterpret_cast<std::uintptr_t>(p.buf) + static_cast<std::uintptr_t>(p.displ * p.t.extent) +
               static_cast<std::uintptr_t>(p.t.true_lb);
    };
    const std::uintptr_t s_lo = lo(send);
    const std::uintptr_t r_lo = lo(recv);
    const std::uintptr_t s_hi = s_lo + static_cast<std::uintptr_t>(send.count * send.t.size);
    const std::uintptr_t r_hi = r_lo + static_cast<std::uintptr_t>(recv.count * recv.t.size);
    if (s_lo < r_hi && r_lo < s_hi) [[unlikely]] {
        fail(MPI_ERR_BUFFER,
             "{}: the data of {} ({} bytes at {:#x}, {} {}) overlaps the data of {} ({} bytes at {:#x}, {} {}); the "
             "two must be disjoint ({})",
             fn, w.send, s_hi - s_lo, s_lo, w.send, send.buf, w.recv, r_hi - r_lo, r_lo, w.recv, recv.buf, w.advice);
    }
}

/// check_alias() of `one` against each rank's block of a "v" buffer, which
/// is the send side where `blocks_send`.
void check_alias_blocks(const Part& one, const void* buf, const int* counts, const int* displs, int n,
                        const dtype::Datatype& t, bool blocks_send, const char* fn) {
    for (int r = 0; r < n; ++r) {
        const Part block{buf, displs[r], counts[r], t};
        if (blocks_send) {
            check_alias(block, one, fn);
        } else {
            check_alias(one, block, fn);
        }
    }
}

/// An array of one int per rank (counts or displacements).
void check_array(const int* a, const char* arg, const char* fn) {
    if (a == nullptr) throw MpiError(MPI_ERR_ARG, fmt::format("{}: {} is NULL", fn, arg));
}

void check_counts(const int* counts, int n, const char* arg, const char* fn) {
    check_array(counts, arg, fn);
    for (int r = 0; r < n; ++r) {
        if (counts[r] < 0) {
            throw MpiError(MPI_ERR_COUNT, fmt::format("{}: {}[{}] = {} is negative", fn, arg, r, counts[r]));
        }
    }
}

/// The largest element count a v-form buffer reaches, for the NULL check.
std::int64_t total_of(const int* counts, int n) {
    std::int64_t t = 0;
    for (int r = 0; r < n; ++r) t += counts[r];
    return t;
}

/// The argument names of one side given as a count and a displacement per
/// rank (the "v" collectives), for messages.
struct BlocksSide {
    const char* counts;
    const char* displs;
    const char* type;
    const char* buf;
};
constexpr BlocksSide kSendBlocks{"sendcounts", "displs", "sendtype", "sendbuf"};   // Scatterv
constexpr BlocksSide kRecvBlocks{"recvcounts", "displs", "recvtype", "recvbuf"};   // Gatherv, Allgatherv
constexpr BlocksSide kSendBlocksV{"sendcounts", "sdispls", "sendtype", "sendbuf"};  // Alltoallv
constexpr BlocksSide kRecvBlocksV{"recvcounts", "rdispls", "recvtype", "recvbuf"};  // Alltoallv

/// One side of `n` blocks: checks the counts, the displacements, the type,
/// and the buffer as holding every block; returns the type.
const dtype::Datatype& blocks_arg(const void* buf, const int* counts, const int* displs, int n, MPI_Datatype type,
                                  const BlocksSide& side, const char* fn) {
    check_counts(counts, n, side.counts, fn);
    check_array(displs, side.displs, fn);
    const dtype::Datatype& t = type_arg(type, side.type, fn);
    check_buffer(buf, total_of(counts, n), t, side.buf, fn);
    return t;
}

/// The common checks of the reductions that take (sendbuf, recvbuf, count,
/// datatype, op): count, datatype and the operation on it.
struct ReductionArgs {
    const dtype::Datatype& type;
    op::Binding binding;
    ReductionArgs(int count, MPI_Datatype datatype, MPI_Op op, const char* fn)
        : type((check_count_arg(count, "count", fn), type_arg(datatype, "datatype", fn))),
          binding(op::op_of(op, fn), datatype, type, count, fn) {}
};

/// The operation bound to its datatype, for a schedule to keep.
nbc::Binding shared_binding(MPI_Op op, MPI_Datatype datatype, const dtype::Datatype& type, std::int64_t count,
                            const char* fn) {
    return std::make_shared<const op::Binding>(op::op_of(op, fn), datatype, type, count, fn);
}

/// Allreduce, Scan and Exscan share their checks.
// ------------------------------------------------------ intercommunicators
//
// The same calls on an intercommunicator (MPI-3.1 5.2.2): the rooted ones
// take MPI_ROOT at the root, MPI_PROC_NULL at the rest of its group and the
// root's rank in the other group; the arrays of counts and displacements
// that describe the other group's blocks have one entry per remote rank;
// MPI_IN_PLACE is not allowed (check_buffer() refuses it).  Each builds one
// schedule of coll/nonblocking.hpp; the blocking form waits for it at once.

/// What a rank does in a rooted call on an intercommunicator.
enum class Role { Root, Idle, Member };

Role inter_role(const Communicator& c, int root, const char* fn) {
    if (root == MPI_ROOT) return Role::Root;
    if (root == MPI_PROC_NULL) return Role::Idle;
    if (root < 0 || root >= c.peer_count()) {
        throw MpiError(MPI_ERR_ROOT,
                       fmt::format("{}: root {} is not MPI_ROOT, MPI_PROC_NULL or a rank of the remote group "
                                   "of {} (ranks 0 to {})",
                                   fn, root, c.label(), c.peer_count() - 1));
    }
    return Role::Member;
}

/// The blocking form: runs the schedule to its end now; its error, if any,
/// is this call's.
void run_now(Communicator& c, p2p::Task* t, const char* fn) {
    p2p::Engine& engine = c.engine();
    engine.wait(*t);
    const int error_class = t->status.MPI_ERROR;
    const std::string text = t->error;
    engine.release(t);
    if (error_class != MPI_SUCCESS) throw MpiError(error_class, fmt::format("{}: {}", fn, text));
}

template <class Later>
void inter_finish(Communicator& c, MPI_Comm comm, Form form, const char* fn, Later later) {
    finish(
        form, comm, fn, [&] { run_now(c, later(), fn); }, later);
}

const std::byte* block_at(const void* buf, std::int64_t offset) {
    return static_cast<const std::byte*>(buf) + offset;
}

/// One piece per remote rank: `count(r)` elements of `type(r)` at `where(r)`.
template <class Count, class Where, class Type>
std::vector<nbc::Piece> pieces(const Communicator& c, Count count, Where where, Type type) {
    std::vector<nbc::Piece> v(static_cast<std::size_t>(c.peer_count()));
    for (int r = 0; r < c.peer_count(); ++r) v[static_cast<std::size_t>(r)] = {where(r), count(r), type(r)};
    return v;
}

/// Equal blocks of `count` elements of `t`, block r at r * count extents.
std::vector<nbc::Piece> equal_pieces(const Communicator& c, const void* buf, std::int64_t count,
                                     const dtype::Datatype& t) {
    return pieces(
        c, [&](int) { return count; }, [&](int r) { return block_at(buf, r * count * t.extent); },
        [&](int) { return &t; });
}

/// Blocks of counts[r] elements of `t` at displs[r] extents.
std::vector<nbc::Piece> placed_pieces(const Communicator& c, const void* buf, const int* counts,
                                      const int* displs, const dtype::Datatype& t) {
    return pieces(
        c, [&](int r) { return std::int64_t{counts[r]}; },
        [&](int r) { return block_at(buf, displs[r] * t.extent); }, [&](int) { return &t; });
}

/// The same buffer to every remote rank.
std::vector<nbc::Piece> same_piece(const Communicator& c, const void* buf, std::int64_t count,
                                   const dtype::Datatype& t) {
    return std::vector<nbc::Piece>(static_cast<std::size_t>(c.peer_count()), nbc::Piece{buf, count, &t});
}

/// A single piece, to or from remote rank `r`.
std::vector<nbc::Piece> one_piece(const Communicator& c, int r, const void* buf, std::int64_t count,
                                  const dtype::Datatype& t) {
    std::vector<nbc::Piece> v(static_cast<std::size_t>(c.peer_count()));
    v[static_cast<std::size_t>(r)] = {buf, count, &t};
    return v;
}

/// A member's one block in a rooted call on an intercommunicator.
struct MemberBlock {
    const void* buf;
    int count;
    MPI_Datatype type;
    const Side& side;
};

/// Gather(v) (`to_root`) and Scatter(v) on an intercommunicator: the root
/// moves the pieces `root_pieces()` gives (having checked its side; one per
/// remote rank), each rank of the other group its one block, to the root or
/// from it; the rest of the root's group moves nothing.
template <class RootPieces>
void inter_rooted(Communicator& c, int root, bool to_root, const MemberBlock& member, RootPieces&& root_pieces,
                  MPI_Comm comm, Form form, const char* fn) {
    std::vector<nbc::Piece> at_root;
    std::vector<nbc::Piece> at_member;
    const Role role = inter_role(c, root, fn);
    if (role == Role::Root) {
        at_root = root_pieces();
    } else if (role == Role::Member) {
        at_member = one_piece(c, root, member.buf, member.count,
                              buffer_arg(member.buf, member.count, member.count, member.type, member.side, fn));
    }
    const std::vector<nbc::Piece>& sends = to_root ? at_member : at_root;
    const std::vector<nbc::Piece>& recvs = to_root ? at_root : at_member;
    inter_finish(c, comm, form, fn, [&] { return nbc::inter_exchange(c, sends, recvs); });
}

void inter_bcast(Communicator& c, void* buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm,
                 Form form, const char* fn) {
    const Role role = inter_role(c, root, fn);
    std::vector<nbc::Piece> sends;
    std::vector<nbc::Piece> recvs;
    if (role != Role::Idle) {
        check_count_arg(count, "count", fn);
        const dtype::Datatype& t = type_arg(datatype, "datatype", fn);
        check_buffer(buffer, count, t, "buffer", fn);
        if (role == Role::Root) {
            sends = same_piece(c, buffer, count, t);
        } else {
            recvs = one_piece(c, root, buffer, count, t);
        }
    }
    inter_finish(c, comm, form, fn, [&] { return nbc::inter_exchange(c, sends, recvs); });
}

void inter_reduce(Communicator& c, const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype,
                  MPI_Op op, int root, MPI_Comm comm, Form form, const char* fn) {
    const Role role = inter_role(c, root, fn);
    if (role == Role::Idle) {
        inter_finish(c, comm, form, fn, [&] { return nbc::inter_exchange(c, {}, {}); });
        return;
    }
    const ReductionArgs a(count, datatype, op, fn);
    if (role == Role::Root) {
        check_buffer(recvbuf, count, a.type, "recvbuf", fn);
    } else {
        check_buffer(sendbuf, count, a.type, "sendbuf", fn);
    }
    inter_finish(c, comm, form, fn, [&] {
        return nbc::inter_reduce(c, sendbuf, recvbuf, count, a.type,
                                 shared_binding(op, datatype, a.type, count, fn), root);
    });
}

void inter_allreduce(Communicator& c, const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype,
                     MPI_Op op, MPI_Comm comm, Form form, const char* fn) {
    const ReductionArgs a(count, datatype, op, fn);
    check_buffer(sendbuf, count, a.type, "sendbuf", fn);
    check_buffer(recvbuf, count, a.type, "recvbuf", fn);
    check_alias({sendbuf, 0, count, a.type}, {recvbuf, 0, count, a.type}, fn);
    inter_finish(c, comm, form, fn, [&] {
        return nbc::inter_allreduce(c, sendbuf, recvbuf, count, a.type,
                                    shared_binding(op, datatype, a.type, count, fn));
    });
}

/// Reduce_scatter and Reduce_scatter_block: `counts` are the local group's.
void inter_reduce_scatter(Communicator& c, const void* sendbuf, void* recvbuf, const int* counts,
                          MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, Form form, const char* fn) {
    const std::int64_t total = total_of(counts, c.size());
    const dtype::Datatype& t = type_arg(datatype, "datatype", fn);
    const op::Binding b(op::op_of(op, fn), datatype, t, total, fn);
    check_buffer(sendbuf, total, t, "sendbuf", fn);
    check_buffer(recvbuf, counts[c.rank()], t, "recvbuf", fn);
    check_alias({sendbuf, 0, total, t}, {recvbuf, 0, counts[c.rank()], t}, fn);
    inter_finish(c, comm, form, fn, [&] {
        return nbc::inter_reduce_scatter(c, sendbuf, recvbuf, counts, t,
                                         shared_binding(op, datatype, t, total, fn));
    });
}

/// Which of the calls everyone_reduces() serves.  Scan and Exscan are
/// defined on intracommunicators only; Allreduce on an intercommunicator
/// is inter_allreduce().  MPI_Exscan's receive buffer is not significant
/// on rank 0 (MPI-3.1 5.11.2) unless it holds the input (MPI_IN_PLACE).
enum class Everyone { Allreduce, Scan, Exscan };

template <class Now, class Later>
int everyone_reduces(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                     MPI_Comm comm, Form form, const char* fn, Now now, Later later, Everyone which) {
    const bool allreduce = which == Everyone::Allreduce;
    return guard(comm, fn, [&] {
        Communicator& c = allreduce ? comm_of(comm, fn) : intracomm_of(comm, fn);
        if (c.inter()) {
            inter_allreduce(c, sendbuf, recvbuf, count, datatype, op, comm, form, fn);
            return;
        }
        const ReductionArgs a(count, datatype, op, fn);
        const bool recv_unused = which == Everyone::Exscan && c.rank() == 0 && sendbuf != MPI_IN_PLACE;
        if (!recv_unused) check_buffer(recvbuf, count, a.type, "recvbuf", fn);
        if (sendbuf != MPI_IN_PLACE) {
            check_buffer(sendbuf, count, a.type, "sendbuf", fn);
            // Rank 0 of Exscan refuses the same buffer too: every other
            // rank refuses it, and rank 0 alone going ahead would split the
            // collective.  A NULL recvbuf there means "no buffer", not
            // MPI_BOTTOM, so there is nothing to overlap.
            if (!recv_unused || recvbuf != nullptr) {
                check_alias({sendbuf, 0, count, a.type}, {recvbuf, 0, count, a.type}, fn);
            }
        }
        finish(
            form, comm, fn, [&] { now(call(c, fn), sendbuf, recvbuf, count, a.type, a.binding); },
            [&] {
                return later(c, sendbuf, recvbuf, count, a.type,
                             shared_binding(op, datatype, a.type, count, fn));
            });
    });
}

int barrier_call(MPI_Comm comm, Form form, const char* fn) {
    return guard(comm, fn, [&] {
        Communicator& c = comm_of(comm, fn);
        if (c.inter()) {
            inter_finish(c, comm, form, fn, [&] { return nbc::inter_barrier(c); });
            return;
        }
        finish(
            form, comm, fn, [&] { typed::barrier(call(c, fn)); }, [&] { return nbc::barrier(c); });
    });
}

int bcast_call(void* buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm, Form form,
               const char* fn) {
    return guard(comm, fn, [&] {
        Communicator& c = comm_of(comm, fn);
        if (c.inter()) {
            inter_bcast(c, buffer, count, datatype, root, comm, form, fn);
            return;
        }
        check_count_arg(count, "count", fn);
        const dtype::Datatype& t = type_arg(datatype, "datatype", fn);
        check_root(c, root, fn);
        check_buffer(buffer, count, t, "buffer", fn);
        finish(
            form, comm, fn, [&] { typed::bcast(call(c, fn), buffer, count, t, root); },
            [&] { return nbc::bcast(c, buffer, count, t, root); });
    });
}

int reduce_call(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, int root,
                MPI_Comm comm, Form form, const char* fn) {
    return guard(comm, fn, [&] {
        Communicator& c = comm_of(comm, fn);
        if (c.inter()) {
            inter_reduce(c, sendbuf, recvbuf, count, datatype, op, root, comm, form, fn);
            return;
        }
        const ReductionArgs a(count, datatype, op, fn);
        check_root(c, root, fn);
        if (c.rank() == root) {
            check_buffer(recvbuf, count, a.type, "recvbuf", fn);
            if (sendbuf != MPI_IN_PLACE) {
                check_buffer(sendbuf, count, a.type, "sendbuf", fn);
                check_alias({sendbuf, 0, count, a.type}, {recvbuf, 0, count, a.type}, fn);
            }
        } else {
            check_buffer(sendbuf, count, a.type, "sendbuf", fn);
        }
        finish(
            form, comm, fn,
            [&] { typed::reduce(call(c, fn), sendbuf, recvbuf, count, a.type, a.binding, root); },
            [&] {
                return nbc::reduce(c, sendbuf, recvbuf, count, a.type,
                                   shared_binding(op, datatype, a.type, count, fn), root);
            });
    });
}

int allreduce_call(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                   MPI_Comm comm, Form form, const char* fn) {
    return everyone_reduces(sendbuf, recvbuf, count, datatype, op, comm, form, fn, typed::allreduce,
                            nbc::allreduce, Everyone::Allreduce);
}

int scan_call(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
              Form form, const char* fn) {
    return everyone_reduces(sendbuf, recvbuf, count, datatype, op, comm, form, fn, typed::scan, nbc::scan,
                            Everyone::Scan);
}

int exscan_call(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                MPI_Comm comm, Form form, const char* fn) {
    return everyone_reduces(sendbuf, recvbuf, count, datatype, op, comm, form, fn, typed::exscan,
                            nbc::exscan, Everyone::Exscan);
}

int reduce_scatter_call(const void* sendbuf, void* recvbuf, const int recvcounts[], MPI_Datatype datatype,
                        MPI_Op op, MPI_Comm comm, Form form, const char* fn) {
    return guard(comm, fn, [&] {
        Communicator& c = comm_of(comm, fn);
        check_counts(recvcounts, c.size(), "recvcounts", fn);
        if (c.inter()) {
            inter_reduce_scatter(c, sendbuf, recvbuf, recvcounts, datatype, op, comm, form, fn);
            return;
        }
        const std::int64_t total = total_of(recvcounts, c.size());
        const dtype::Datatype& t = type_arg(datatype, "datatype", fn);
        const op::Binding b(op::op_of(op, fn), datatype, t, total, fn);
        if (sendbuf == MPI_IN_PLACE) {
            check_buffer(recvbuf, total, t, "recvbuf", fn);
        } else {
            check_buffer(recvbuf, recvcounts[c.rank()], t, "recvbuf", fn);
            check_buffer(sendbuf, total, t, "sendbuf", fn);
            check_alias({sendbuf, 0, total, t}, {recvbuf, 0, recvcounts[c.rank()], t}, fn);
        }
        finish(
            form, comm, fn, [&] { typed::reduce_scatter(call(c, fn), sendbuf, recvbuf, recvcounts, t, b); },
            [&] {
                return nbc::reduce_scatter(c, sendbuf, recvbuf, recvcounts, t,
                                           shared_binding(op, datatype, t, total, fn));
            });
    });
}

int reduce_scatter_block_call(const void* sendbuf, void* recvbuf, int recvcount, MPI_Datatype datatype,
                              MPI_Op op, MPI_Comm comm, Form form, const char* fn) {
    return guard(comm, fn, [&] {
        Communicator& c = comm_of(comm, fn);
        check_count_arg(recvcount, "recvcount", fn);
        if (c.inter()) {
            const std::vector<int> counts(static_cast<std::size_t>(c.size()), recvcount);
            inter_reduce_scatter(c, sendbuf, recvbuf, counts.data(), datatype, op, comm, form, fn);
            return;
        }
        const std::int64_t total = static_cast<std::int64_t>(recvcount) * c.size();
        const dtype::Datatype& t = type_arg(datatype, "datatype", fn);
        const op::Binding b(op::op_of(op, fn), datatype, t, total, fn);
        if (sendbuf == MPI_IN_PLACE) {
            check_buffer(recvbuf, total, t, "recvbuf", fn);
        } else {
            check_buffer(recvbuf, recvcount, t, "recvbuf", fn);
            check_buffer(sendbuf, total, t, "sendbuf", fn);
            check_alias({sendbuf, 0, total, t}, {recvbuf, 0, recvcount, t}, fn);
        }
        finish(
            form, comm, fn,
            [&] { typed::reduce_scatter_block(call(c, fn), sendbuf, recvbuf, recvcount, t, b); },
            [&] {
                return nbc::reduce_scatter_block(c, sendbuf, recvbuf, recvcount, t,
                                                 shared_binding(op, datatype, t, total, fn));
            });
    });
}

int gather_call(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                MPI_Datatype recvtype, int root, MPI_Comm comm, Form form, const char* fn) {
    return guard(comm, fn, [&] {
        Communicator& c = comm_of(comm, fn);
        if (c.inter()) {
            inter_rooted(c, root, true, {sendbuf, sendcount, sendtype, kSend}, [&] {
                const std::int64_t all = static_cast<std::int64_t>(recvcount) * c.peer_count();
                return equal_pieces(c, recvbuf, recvcount, buffer_arg(recvbuf, recvcount, all, recvtype, kRecv, fn));
            }, comm, form, fn);
            return;
        }
        check_root(c, root, fn);
        const bool is_root = c.rank() == root;
        const dtype::Datatype* st = nullptr;
        const dtype::Datatype* rt = nullptr;
        if (!is_root || sendbuf != MPI_IN_PLACE) {
            st = &buffer_arg(sendbuf, sendcount, sendcount, sendtype, kSend, fn);
        }
        if (is_root) {
            rt = &buffer_arg(recvbuf, recvcount, static_cast<std::int64_t>(recvcount) * c.size(), recvtype,
                             kRecv, fn);
            if (st != nullptr) {
                check_alias({sendbuf, 0, sendcount, *st},
                            {recvbuf, 0, static_cast<std::int64_t>(recvcount) * c.size(), *rt}, fn);
            }
        }
        finish(
            form, comm, fn,
            [&] { typed::gather(call(c, fn), sendbuf, sendcount, st, recvbuf, recvcount, rt, root); },
            [&] { return nbc::gather(c, sendbuf, sendcount, st, recvbuf, recvcount, rt, root); });
    });
}

int gatherv_call(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                 const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root, MPI_Comm comm,
                 Form form, const char* fn) {
    return guard(comm, fn, [&] {
        Communicator& c = comm_of(comm, fn);
        if (c.inter()) {
            inter_rooted(c, root, true, {sendbuf, sendcount, sendtype, kSend}, [&] {
                const dtype::Datatype& rt =
                    blocks_arg(recvbuf, recvcounts, displs, c.peer_count(), recvtype, kRecvBlocks, fn);
                return placed_pieces(c, recvbuf, recvcounts, displs, rt);
            }, comm, form, fn);
            return;
        }
        check_root(c, root, fn);
        const bool is_root = c.rank() == root;
        const dtype::Datatype* st = nullptr;
        const dtype::Datatype* rt = nullptr;
        if (!is_root || sendbuf != MPI_IN_PLACE) {
            st = &buffer_arg(sendbuf, sendcount, sendcount, sendtype, kSend, fn);
        }
        if (is_root) {
            rt = &blocks_arg(recvbuf, recvcounts, displs, c.size(), recvtype, kRecvBlocks, fn);
            if (st != nullptr) {
                check_alias_blocks({sendbuf, 0, sendcount, *st}, recvbuf, recvcounts, displs, c.size(), *rt, false, fn);
            }
        }
        finish(
            form, comm, fn,
            [&] {
                typed::gatherv(call(c, fn), sendbuf, sendcount, st, recvbuf, recvcounts, displs, rt, root);
            },
            [&] { return nbc::gatherv(c, sendbuf, sendcount, st, recvbuf, recvcounts, displs, rt, root); });
    });
}

int allgather_call(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                   MPI_Datatype recvtype, MPI_Comm comm, Form form, const char* fn) {
    return guard(comm, fn, [&] {
        Communicator& c = comm_of(comm, fn);
        if (c.inter()) {
            const dtype::Datatype& st = buffer_arg(sendbuf, sendcount, sendcount, sendtype, kSend, fn);
            const dtype::Datatype& rt =
                buffer_arg(recvbuf, recvcount, static_cast<std::int64_t>(recvcount) * c.peer_count(),
                           recvtype, kRecv, fn);
            const std::vector<nbc::Piece> sends = same_piece(c, sendbuf, sendcount, st);
            const std::vector<nbc::Piece> recvs = equal_pieces(c, recvbuf, recvcount, rt);
            inter_finish(c, comm, form, fn, [&] { return nbc::inter_exchange(c, sends, recvs); });
            return;
        }
        const dtype::Datatype* st = nullptr;
        if (sendbuf != MPI_IN_PLACE) {
            st = &buffer_arg(sendbuf, sendcount, sendcount, sendtype, kSend, fn);
        }
        const dtype::Datatype& rt = buffer_arg(
            recvbuf, recvcount, static_cast<std::int64_t>(recvcount) * c.size(), recvtype, kRecv, fn);
        if (st != nullptr) {
            check_alias({sendbuf, 0, sendcount, *st}, {recvbuf, 0, static_cast<std::int64_t>(recvcount) * c.size(), rt},
                        fn);
        }
        finish(
            form, comm, fn,
            [&] { typed::allgather(call(c, fn), sendbuf, sendcount, st, recvbuf, recvcount, rt); },
            [&] { return nbc::allgather(c, sendbuf, sendcount, st, recvbuf, recvcount, rt); });
    });
}

int allgatherv_call(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                    const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm,
                    Form form, const char* fn) {
    return guard(comm, fn, [&] {
        Communicator& c = comm_of(comm, fn);
        if (c.inter()) {
            const dtype::Datatype& st = buffer_arg(sendbuf, sendcount, sendcount, sendtype, kSend, fn);
            const dtype::Datatype& rt =
                blocks_arg(recvbuf, recvcounts, displs, c.peer_count(), recvtype, kRecvBlocks, fn);
            const std::vector<nbc::Piece> sends = same_piece(c, sendbuf, sendcount, st);
            const std::vector<nbc::Piece> recvs = placed_pieces(c, recvbuf, recvcounts, displs, rt);
            inter_finish(c, comm, form, fn, [&] { return nbc::inter_exchange(c, sends, recvs); });
            return;
        }
        const dtype::Datatype* st = nullptr;
        if (sendbuf != MPI_IN_PLACE) {
            st = &buffer_arg(sendbuf, sendcount, sendcount, sendtype, kSend, fn);
        }
        const dtype::Datatype& rt = blocks_arg(recvbuf, recvcounts, displs, c.size(), recvtype, kRecvBlocks, fn);
        if (st != nullptr) {
            check_alias_blocks({sendbuf, 0, sendcount, *st}, recvbuf, recvcounts, displs, c.size(), rt, false, fn);
        }
        finish(
            form, comm, fn,
            [&] { typed::allgatherv(call(c, fn), sendbuf, sendcount, st, recvbuf, recvcounts, displs, rt); },
            [&] { return nbc::allgatherv(c, sendbuf, sendcount, st, recvbuf, recvcounts, displs, rt); });
    });
}

int scatter_call(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                 MPI_Datatype recvtype, int root, MPI_Comm comm, Form form, const char* fn) {
    return guard(comm, fn, [&] {
        Communicator& c = comm_of(comm, fn);
        if (c.inter()) {
            inter_rooted(c, root, false, {recvbuf, recvcount, recvtype, kRecv}, [&] {
                const std::int64_t all = static_cast<std::int64_t>(sendcount) * c.peer_count();
                return equal_pieces(c, sendbuf, sendcount, buffer_arg(sendbuf, sendcount, all, sendtype, kSend, fn));
            }, comm, form, fn);
            return;
        }
        check_root(c, root, fn);
        const bool is_root = c.rank() == root;
        const dtype::Datatype* st = nullptr;
        const dtype::Datatype* rt = nullptr;
        if (is_root) {
            st = &buffer_arg(sendbuf, sendcount, static_cast<std::int64_t>(sendcount) * c.size(), sendtype,
                             kSend, fn);
        }
        if (!is_root || recvbuf != MPI_IN_PLACE) {
            rt = &buffer_arg(recvbuf, recvcount, recvcount, recvtype, kRecv, fn);
            if (is_root) {
                check_alias({sendbuf, 0, static_cast<std::int64_t>(sendcount) * c.size(), *st},
                            {recvbuf, 0, recvcount, *rt}, fn);
            }
        }
        finish(
            form, comm, fn,
            [&] { typed::scatter(call(c, fn), sendbuf, sendcount, st, recvbuf, recvcount, rt, root); },
            [&] { return nbc::scatter(c, sendbuf, sendcount, st, recvbuf, recvcount, rt, root); });
    });
}

int scatterv_call(const void* sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype,
                  void* recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, Form form,
                  const char* fn) {
    return guard(comm, fn, [&] {
        Communicator& c = comm_of(comm, fn);
        if (c.inter()) {
            inter_rooted(c, root, false, {recvbuf, recvcount, recvtype, kRecv}, [&] {
                const dtype::Datatype& st =
                    blocks_arg(sendbuf, sendcounts, displs, c.peer_count(), sendtype, kSendBlocks, fn);
                return placed_pieces(c, sendbuf, sendcounts, displs, st);
            }, comm, form, fn);
            return;
        }
        check_root(c, root, fn);
        const bool is_root = c.rank() == root;
        const dtype::Datatype* st = nullptr;
        const dtype::Datatype* rt = nullptr;
        if (is_root) {
            st = &blocks_arg(sendbuf, sendcounts, displs, c.size(), sendtype, kSendBlocks, fn);
        }
        if (!is_root || recvbuf != MPI_IN_PLACE) {
            rt = &buffer_arg(recvbuf, recvcount, recvcount, recvtype, kRecv, fn);
            if (is_root) {
                check_alias_blocks({recvbuf, 0, recvcount, *rt}, sendbuf, sendcounts, displs, c.size(), *st, true, fn);
            }
        }
        finish(
            form, comm, fn,
            [&] {
                typed::scatterv(call(c, fn), sendbuf, sendcounts, displs, st, recvbuf, recvcount, rt, root);
            },
            [&] { return nbc::scatterv(c, sendbuf, sendcounts, displs, st, recvbuf, recvcount, rt, root); });
    });
}

int alltoall_call(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                  MPI_Datatype recvtype, MPI_Comm comm, Form form, const char* fn) {
    return guard(comm, fn, [&] {
        Communicator& c = comm_of(comm, fn);
        if (c.inter()) {
            const std::int64_t n = c.peer_count();
            const dtype::Datatype& st = buffer_arg(sendbuf, sendcount, sendcount * n, sendtype, kSend, fn);
            const dtype::Datatype& rt = buffer_arg(recvbuf, recvcount, recvcount * n, recvtype, kRecv, fn);
            const std::vector<nbc::Piece> sends = equal_pieces(c, sendbuf, sendcount, st);
            const std::vector<nbc::Piece> recvs = equal_pieces(c, recvbuf, recvcount, rt);
            inter_finish(c, comm, form, fn, [&] { return nbc::inter_exchange(c, sends, recvs); });
            return;
        }
        const dtype::Datatype* st = nullptr;
        if (sendbuf != MPI_IN_PLACE) {
            st = &buffer_arg(sendbuf, sendcount, static_cast<std::int64_t>(sendcount) * c.size(), sendtype,
                             kSend, fn);
        }
        const dtype::Datatype& rt = buffer_arg(
            recvbuf, recvcount, static_cast<std::int64_t>(recvcount) * c.size(), recvtype, kRecv, fn);
        if (st != nullptr) {
            check_alias({sendbuf, 0, static_cast<std::int64_t>(sendcount) * c.size(), *st},
                        {recvbuf, 0, static_cast<std::int64_t>(recvcount) * c.size(), rt}, fn);
        }
        finish(
            form, comm, fn,
            [&] { typed::alltoall(call(c, fn), sendbuf, sendcount, st, recvbuf, recvcount, rt); },
            [&] { return nbc::alltoall(c, sendbuf, sendcount, st, recvbuf, recvcount, rt); });
    });
}

int alltoallv_call(const void* sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                   void* recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,
                   MPI_Comm comm, Form form, const char* fn) {
    return guard(comm, fn, [&] {
        Communicator& c = comm_of(comm, fn);
        if (c.inter()) {
            const int n = c.peer_count();
            const dtype::Datatype& st = blocks_arg(sendbuf, sendcounts, sdispls, n, sendtype, kSendBlocksV, fn);
            const dtype::Datatype& rt = blocks_arg(recvbuf, recvcounts, rdispls, n, recvtype, kRecvBlocksV, fn);
            const std::vector<nbc::Piece> sends = placed_pieces(c, sendbuf, sendcounts, sdispls, st);
            const std::vector<nbc::Piece> recvs = placed_pieces(c, recvbuf, recvcounts, rdispls, rt);
            inter_finish(c, comm, form, fn, [&] { return nbc::inter_exchange(c, sends, recvs); });
            return;
        }
        const dtype::Datatype* st = nullptr;
        if (sendbuf != MPI_IN_PLACE) {
            st = &blocks_arg(sendbuf, sendcounts, sdispls, c.size(), sendtype, kSendBlocksV, fn);
        }
        const dtype::Datatype& rt = blocks_arg(recvbuf, recvcounts, rdispls, c.size(), recvtype, kRecvBlocksV, fn);
        if (st != nullptr) check_alias(sendbuf, recvbuf, total_of(sendcounts, c.size()) * st->size, fn);
        finish(
            form, comm, fn,
            [&] {
                typed::alltoallv(call(c, fn), sendbuf, sendcounts, sdispls, st, recvbuf, recvcounts, rdispls,
                                 rt);
            },
            [&] {
                return nbc::alltoallv(c, sendbuf, sendcounts, sdispls, st, recvbuf, recvcounts, rdispls, rt);
            });
    });
}

int alltoallw_call(const void* sendbuf, const int sendcounts[], const int sdispls[],
                   const MPI_Datatype sendtypes[], void* recvbuf, const int recvcounts[], const int rdispls[],
                   const MPI_Datatype recvtypes[], MPI_Comm comm, Form form, const char* fn) {
    return guard(comm, fn, [&] {
        Communicator& c = comm_of(comm, fn);
        // On an intercommunicator every array has one entry per remote rank.
        const auto n = static_cast<std::size_t>(c.peer_count());
        // One datatype per peer on each side, each checked with its buffer
        // (displacements are in bytes, so each block is its own buffer).
        auto types_of = [&](const MPI_Datatype* handles, const int* counts, const int* displs,
                            const void* buf, const char* types_arg, const char* displs_arg,
                            const char* buf_arg) {
            check_array(displs, displs_arg, fn);
            if (handles == nullptr) throw MpiError(MPI_ERR_ARG, fmt::format("{}: {} is NULL", fn, types_arg));
            std::vector<const dtype::Datatype*> types(n);
            for (std::size_t r = 0; r < n; ++r) {
                const std::string arg = fmt::format("{}[{}]", types_arg, r);
                types[r] = &block_type_arg(handles[r], counts[r], arg.c_str(), fn);
                check_buffer(buf, counts[r], *types[r], buf_arg, fn);
            }
            return types;
        };
        std::vector<const dtype::Datatype*> st;
        if (sendbuf != MPI_IN_PLACE || c.inter()) {
            check_counts(sendcounts, c.peer_count(), "sendcounts", fn);
            st = types_of(sendtypes, sendcounts, sdispls, sendbuf, "sendtypes", "sdispls", "sendbuf");
        }
        check_counts(recvcounts, c.peer_count(), "recvcounts", fn);
        const std::vector<const dtype::Datatype*> rt =
            types_of(recvtypes, recvcounts, rdispls, recvbuf, "recvtypes", "rdispls", "recvbuf");
        if (c.inter()) {
            const std::vector<nbc::Piece> sends = pieces(
                c, [&](int r) { return std::int64_t{sendcounts[r]}; },
                [&](int r) { return block_at(sendbuf, sdispls[r]); },
                [&](int r) { return st[static_cast<std::size_t>(r)]; });
            const std::vector<nbc::Piece> recvs = pieces(
                c, [&](int r) { return std::int64_t{recvcounts[r]}; },
                [&](int r) { return block_at(recvbuf, rdispls[r]); },
                [&](int r) { return rt[static_cast<std::size_t>(r)]; });
            inter_finish(c, comm, form, fn, [&] { return nbc::inter_exchange(c, sends, recvs); });
            return;
        }
        if (!st.empty()) {
            std::int64_t send_bytes = 0;
            for (int r = 0; r < c.size(); ++r)
                send_bytes += std::int64_t{sendcounts[r]} * st[static_cast<std::size_t>(r)]->size;
            check_alias(sendbuf, recvbuf, send_bytes, fn);
        }
        finish(
            form, comm, fn,
            [&] {
                typed::alltoallw(call(c, fn), sendbuf, sendcounts, sdispls, st.empty() ? nullptr : st.data(),
                                 recvbuf, recvcounts, rdispls, rt.data());
            },
            [&] {
                return nbc::alltoallw(c, sendbuf, sendcounts, sdispls, st.empty() ? nullptr : st.data(),
                                      recvbuf, recvcounts, rdispls, rt.data());
            });
    });
}

}  // namespace

extern "C" {

int PMPI_Barrier(MPI_Comm comm) {
    return barrier_call(comm, kBlocking, "MPI_Barrier");
}
SHMPI_WEAK_ALIAS(Barrier);

int PMPI_Ibarrier(MPI_Comm comm, MPI_Request* request) {
    return barrier_call(comm, Form{true, request}, "MPI_Ibarrier");
}
SHMPI_WEAK_ALIAS(Ibarrier);

int PMPI_Bcast(void* buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm) {
    return bcast_call(buffer, count, datatype, root, comm, kBlocking, "MPI_Bcast");
}
SHMPI_WEAK_ALIAS(Bcast);

int PMPI_Ibcast(void* buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm,
                MPI_Request* request) {
    return bcast_call(buffer, count, datatype, root, comm, Form{true, request}, "MPI_Ibcast");
}
SHMPI_WEAK_ALIAS(Ibcast);

int PMPI_Reduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, int root,
                MPI_Comm comm) {
    return reduce_call(sendbuf, recvbuf, count, datatype, op, root, comm, kBlocking, "MPI_Reduce");
}
SHMPI_WEAK_ALIAS(Reduce);

int PMPI_Ireduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, int root,
                 MPI_Comm comm, MPI_Request* request) {
    return reduce_call(sendbuf, recvbuf, count, datatype, op, root, comm, Form{true, request}, "MPI_Ireduce");
}
SHMPI_WEAK_ALIAS(Ireduce);

int PMPI_Allreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                   MPI_Comm comm) {
    return allreduce_call(sendbuf, recvbuf, count, datatype, op, comm, kBlocking, "MPI_Allreduce");
}
SHMPI_WEAK_ALIAS(Allreduce);

int PMPI_Iallreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                    MPI_Comm comm, MPI_Request* request) {
    return allreduce_call(sendbuf, recvbuf, count, datatype, op, comm, Form{true, request}, "MPI_Iallreduce");
}
SHMPI_WEAK_ALIAS(Iallreduce);

int PMPI_Scan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
              MPI_Comm comm) {
    return scan_call(sendbuf, recvbuf, count, datatype, op, comm, kBlocking, "MPI_Scan");
}
SHMPI_WEAK_ALIAS(Scan);

int PMPI_Iscan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
               MPI_Request* request) {
    return scan_call(sendbuf, recvbuf, count, datatype, op, comm, Form{true, request}, "MPI_Iscan");
}
SHMPI_WEAK_ALIAS(Iscan);

int PMPI_Exscan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                MPI_Comm comm) {
    return exscan_call(sendbuf, recvbuf, count, datatype, op, comm, kBlocking, "MPI_Exscan");
}
SHMPI_WEAK_ALIAS(Exscan);

int PMPI_Iexscan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                 MPI_Comm comm, MPI_Request* request) {
    return exscan_call(sendbuf, recvbuf, count, datatype, op, comm, Form{true, request}, "MPI_Iexscan");
}
SHMPI_WEAK_ALIAS(Iexscan);

int PMPI_Reduce_scatter(const void* sendbuf, void* recvbuf, const int recvcounts[], MPI_Datatype datatype,
                        MPI_Op op, MPI_Comm comm) {
    return reduce_scatter_call(sendbuf, recvbuf, recvcounts, datatype, op, comm, kBlocking,
                               "MPI_Reduce_scatter");
}
SHMPI_WEAK_ALIAS(Reduce_scatter);

int PMPI_Ireduce_scatter(const void* sendbuf, void* recvbuf, const int recvcounts[], MPI_Datatype datatype,
                         MPI_Op op, MPI_Comm comm, MPI_Request* request) {
    return reduce_scatter_call(sendbuf, recvbuf, recvcounts, datatype, op, comm, Form{true, request},
                               "MPI_Ireduce_scatter");
}
SHMPI_WEAK_ALIAS(Ireduce_scatter);

int PMPI_Reduce_scatter_block(const void* sendbuf, void* recvbuf, int recvcount, MPI_Datatype datatype,
                              MPI_Op op, MPI_Comm comm) {
    return reduce_scatter_block_call(sendbuf, recvbuf, recvcount, datatype, op, comm, kBlocking,
                                     "MPI_Reduce_scatter_block");
}
SHMPI_WEAK_ALIAS(Reduce_scatter_block);

int PMPI_Ireduce_scatter_block(const void* sendbuf, void* recvbuf, int recvcount, MPI_Datatype datatype,
                               MPI_Op op, MPI_Comm comm, MPI_Request* request) {
    return reduce_scatter_block_call(sendbuf, recvbuf, recvcount, datatype, op, comm, Form{true, request},
                                     "MPI_Ireduce_scatter_block");
}
SHMPI_WEAK_ALIAS(Ireduce_scatter_block);

int PMPI_Reduce_local(const void* inbuf, void* inoutbuf, int count, MPI_Datatype datatype, MPI_Op op) {
    const char* fn = "MPI_Reduce_local";
    return guard(MPI_COMM_WORLD, fn, [&] {
        running(fn);
        const ReductionArgs a(count, datatype, op, fn);
        check_buffer(inbuf, count, a.type, "inbuf", fn);
        check_buffer(inoutbuf, count, a.type, "inoutbuf", fn);
        check_alias({inbuf, 0, count, a.type}, {inoutbuf, 0, count, a.type}, fn,
                    {"inbuf", "inoutbuf", "MPI arguments that a call writes must not alias others"});
        op::reduce_local(a.binding, inbuf, inoutbuf, count, a.type);
    });
}
SHMPI_WEAK_ALIAS(Reduce_local);

int PMPI_Gather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                MPI_Datatype recvtype, int root, MPI_Comm comm) {
    return gather_call(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, kBlocking,
                       "MPI_Gather");
}
SHMPI_WEAK_ALIAS(Gather);

int PMPI_Igather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                 MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request* request) {
    return gather_call(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm,
                       Form{true, request}, "MPI_Igather");
}
SHMPI_WEAK_ALIAS(Igather);

int PMPI_Gatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                 const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root, MPI_Comm comm) {
    return gatherv_call(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm,
                        kBlocking, "MPI_Gatherv");
}
SHMPI_WEAK_ALIAS(Gatherv);

int PMPI_Igatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                  const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root, MPI_Comm comm,
                  MPI_Request* request) {
    return gatherv_call(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm,
                        Form{true, request}, "MPI_Igatherv");
}
SHMPI_WEAK_ALIAS(Igatherv);

int PMPI_Allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                   MPI_Datatype recvtype, MPI_Comm comm) {
    return allgather_call(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, kBlocking,
                          "MPI_Allgather");
}
SHMPI_WEAK_ALIAS(Allgather);

int PMPI_Iallgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                    MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
    return allgather_call(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm,
                          Form{true, request}, "MPI_Iallgather");
}
SHMPI_WEAK_ALIAS(Iallgather);

int PMPI_Allgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                    const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm) {
    return allgatherv_call(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm,
                           kBlocking, "MPI_Allgatherv");
}
SHMPI_WEAK_ALIAS(Allgatherv);

int PMPI_Iallgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                     const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm,
                     MPI_Request* request) {
    return allgatherv_call(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm,
                           Form{true, request}, "MPI_Iallgatherv");
}
SHMPI_WEAK_ALIAS(Iallgatherv);

int PMPI_Scatter(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                 MPI_Datatype recvtype, int root, MPI_Comm comm) {
    return scatter_call(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, kBlocking,
                        "MPI_Scatter");
}
SHMPI_WEAK_ALIAS(Scatter);

int PMPI_Iscatter(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                  MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request* request) {
    return scatter_call(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm,
                        Form{true, request}, "MPI_Iscatter");
}
SHMPI_WEAK_ALIAS(Iscatter);

int PMPI_Scatterv(const void* sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype,
                  void* recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
    return scatterv_call(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm,
                         kBlocking, "MPI_Scatterv");
}
SHMPI_WEAK_ALIAS(Scatterv);

int PMPI_Iscatterv(const void* sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype,
                   void* recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                   MPI_Request* request) {
    return scatterv_call(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm,
                         Form{true, request}, "MPI_Iscatterv");
}
SHMPI_WEAK_ALIAS(Iscatterv);

int PMPI_Alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                  MPI_Datatype recvtype, MPI_Comm comm) {
    return alltoall_call(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, kBlocking,
                         "MPI_Alltoall");
}
SHMPI_WEAK_ALIAS(Alltoall);

int PMPI_Ialltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                   MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
    return alltoall_call(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm,
                         Form{true, request}, "MPI_Ialltoall");
}
SHMPI_WEAK_ALIAS(Ialltoall);

int PMPI_Alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                   void* recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,
                   MPI_Comm comm) {
    return alltoallv_call(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype,
                          comm, kBlocking, "MPI_Alltoallv");
}
SHMPI_WEAK_ALIAS(Alltoallv);

int PMPI_Ialltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                    void* recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,
                    MPI_Comm comm, MPI_Request* request) {
    return alltoallv_call(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype,
                          comm, Form{true, request}, "MPI_Ialltoallv");
}
SHMPI_WEAK_ALIAS(Ialltoallv);

int PMPI_Alltoallw(const void* sendbuf, const int sendcounts[], const int sdispls[],
                   const MPI_Datatype sendtypes[], void* recvbuf, const int recvcounts[], const int rdispls[],
                   const MPI_Datatype recvtypes[], MPI_Comm comm) {
    return alltoallw_call(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes,
                          comm, kBlocking, "MPI_Alltoallw");
}
SHMPI_WEAK_ALIAS(Alltoallw);

int PMPI_Ialltoallw(const void* sendbuf, const int sendcounts[], const int sdispls[],
                    const MPI_Datatype sendtypes[], void* recvbuf, const int recvcounts[],
                    const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                    MPI_Request* request) {
    return alltoallw_call(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes,
                          comm, Form{true, request}, "MPI_Ialltoallw");
}
SHMPI_WEAK_ALIAS(Ialltoallw);

// ----------------------------------------------------------- operations

int PMPI_Op_create(MPI_User_function* user_fn, int commute, MPI_Op* op) {
    const char* fn = "MPI_Op_create";
    return guard(MPI_COMM_WORLD, fn, [&] {
        running(fn);
        if (user_fn == nullptr) throw MpiError(MPI_ERR_ARG, fmt::format("{}: user_fn is NULL", fn));
        if (op == nullptr) throw MpiError(MPI_ERR_ARG, fmt::format("{}: op is NULL", fn));
        *op = op::create(user_fn, commute != 0);
    });
}
SHMPI_WEAK_ALIAS(Op_create);

int PMPI_Op_free(MPI_Op* op) {
    const char* fn = "MPI_Op_free";
    return guard(MPI_COMM_WORLD, fn, [&] {
        running(fn);
        if (op == nullptr) throw MpiError(MPI_ERR_ARG, fmt::format("{}: op is NULL", fn));
        op::destroy(*op, fn);
        *op = MPI_OP_NULL;
    });
}
SHMPI_WEAK_ALIAS(Op_free);

int PMPI_Op_commutative(MPI_Op op, int* commute) {
    const char* fn = "MPI_Op_commutative";
    return guard(MPI_COMM_WORLD, fn, [&] {
        running(fn);
        const op::Op& o = op::op_of(op, fn);
        if (commute == nullptr) throw MpiError(MPI_ERR_ARG, fmt::format("{}: commute is NULL", fn));
        *commute = o.commutative ? 1 : 0;
    });
}
SHMPI_WEAK_ALIAS(Op_commutative);

}  // extern "C"
