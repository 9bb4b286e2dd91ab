// The nonblocking collectives (MPI_Ibarrier ...): each call builds this
// member's Schedule (coll/schedule.hpp) and starts it; the request it
// returns completes in later waits and tests, while the program goes on.
//
// Same arguments and conventions as coll/typed.hpp (checked by the C
// boundary; MPI_IN_PLACE as the standard places it; datatypes a rank does
// not use may be null), except that reductions take their operation as a
// shared binding the schedule keeps.
//
// Algorithms: point-to-point messages on the communicator's nbc_context(),
// so the shared-memory state of the blocking collectives is never touched
// and the two kinds may be freely interleaved (docs/COLLECTIVES.md):
//   barrier          dissemination, ceil(log2 n) rounds of empty messages
//   bcast            binomial tree from the root
//   reduce, allreduce  the canonical fold of coll.hpp as a tree (member lo
//                    of [lo, hi) takes fold(mid, hi) from member mid), so the
//                    bits equal the blocking calls'; allreduce then
//                    broadcasts member 0's result down a binomial tree
//   reduce_scatter(_block)  the fold of the whole vector, then member 0
//                    sends each member its block
//   scan, exscan     a chain: member r takes the prefix of 0..r-1 from r-1
//                    and passes on the prefix of 0..r
//   gather(v), scatter(v)  the root exchanges one message with each member
//   allgather(v), alltoall(v/w)  one message each way between every pair
// Every member's own block is copied locally.  The buffers of MPI_IN_PLACE
// calls that others' data overwrites (all-to-all) are packed at the call.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "communicator.hpp"
#include "dtype/datatype.hpp"
#include "op.hpp"
#include "p2p.hpp"
#include "topo/neighbor.hpp"

namespace shmpi::coll::nbc {

using Binding = std::shared_ptr<const op::Binding>;

p2p::Task* barrier(Communicator& c);
p2p::Task* bcast(Communicator& c, void* buf, std::int64_t count, const dtype::Datatype& type, int root);

p2p::Task* reduce(Communicator& c, const void* send, void* recv, std::int64_t count,
                     const dtype::Datatype& type, Binding op, int root);
p2p::Task* allreduce(Communicator& c, const void* send, void* recv, std::int64_t count,
                        const dtype::Datatype& type, Binding op);
p2p::Task* reduce_scatter(Communicator& c, const void* send, void* recv, const int* counts,
                             const dtype::Datatype& type, Binding op);
p2p::Task* reduce_scatter_block(Communicator& c, const void* send, void* recv, std::int64_t count,
                                   const dtype::Datatype& type, Binding op);
p2p::Task* scan(Communicator& c, const void* send, void* recv, std::int64_t count,
                   const dtype::Datatype& type, Binding op);
p2p::Task* exscan(Communicator& c, const void* send, void* recv, std::int64_t count,
                     const dtype::Datatype& type, Binding op);

p2p::Task* gather(Communicator& c, const void* send, std::int64_t scount, const dtype::Datatype* stype,
                     void* recv, std::int64_t rcount, const dtype::Datatype* rtype, int root);
p2p::Task* gatherv(Communicator& c, const void* send, std::int64_t scount, const dtype::Datatype* stype,
                      void* recv, const int* rcounts, const int* displs, const dtype::Datatype* rtype,
                      int root);
p2p::Task* scatter(Communicator& c, const void* send, std::int64_t scount, const dtype::Datatype* stype,
                      void* recv, std::int64_t rcount, const dtype::Datatype* rtype, int root);
p2p::Task* scatterv(Communicator& c, const void* send, const int* scounts, const int* displs,
                       const dtype::Datatype* stype, void* recv, std::int64_t rcount,
                       const dtype::Datatype* rtype, int root);
p2p::Task* allgather(Communicator& c, const void* send, std::int64_t scount, const dtype::Datatype* stype,
                        void* recv, std::int64_t rcount, const dtype::Datatype& rtype);
p2p::Task* allgatherv(Communicator& c, const void* send, std::int64_t scount, const dtype::Datatype* stype,
                         void* recv, const int* rcounts, const int* displs, const dtype::Datatype& rtype);
p2p::Task* alltoall(Communicator& c, const void* send, std::int64_t scount, const dtype::Datatype* stype,
                       void* recv, std::int64_t rcount, const dtype::Datatype& rtype);
p2p::Task* alltoallv(Communicator& c, const void* send, const int* scounts, const int* sdispls,
                        const dtype::Datatype* stype, void* recv, const int* rcounts, const int* rdispls,
                        const dtype::Datatype& rtype);
/// Displacements in bytes; `stypes` unused (may be null) for MPI_IN_PLACE.
p2p::Task* alltoallw(Communicator& c, const void* send, const int* scounts, const int* sdispls,
                        const dtype::Datatype* const* stypes, void* recv, const int* rcounts,
                        const int* rdispls, const dtype::Datatype* const* rtypes);

/// The nonblocking neighbourhood collectives: topo::neighbor_exchange's
/// messages as one round of a schedule.
p2p::Task* neighbor_exchange(Communicator& c, const topo::Neighborhood& nb,
                                std::span<const topo::Block> send, std::span<const topo::Block> recv);

// ---- Intercommunicators (MPI-3.1 5.2.2) ----
//
// Each call runs on the intercommunicator's local() group (its own context)
// and on the intercommunicator's nbc_context() for the messages between the
// groups (Schedule::set_remote()).  The data moves directly where it can:
//   barrier          the local group gathers at its rank 0, the two rank 0s
//                    swap empty messages, and each tells its group
//   exchange()       one round of messages with remote ranks: bcast (the
//                    root to every remote rank), gather(v), scatter(v),
//                    allgather(v), alltoall(v/w) are all this
//   reduce           the contributing group folds its members' data
//                    towards its rank 0 (the canonical fold of coll.hpp,
//                    so in rank order), which sends it to the root
//   allreduce, reduce_scatter(_block)  each group folds its data at its
//                    rank 0; the two rank 0s swap their folds, and each
//                    hands its group the other group's (whole, or block by
//                    block)
// MPI_IN_PLACE does not exist on intercommunicators; the C boundary
// refuses it.  Blocking calls are these schedules, waited for at once.

/// A block of a message: `count` elements of `type` at `buf`.
struct Piece {
    const void* buf = nullptr;
    std::int64_t count = 0;
    const dtype::Datatype* type = nullptr;
};

p2p::Task* inter_barrier(Communicator& c);
/// One round: `sends[r]` goes to remote rank r and `recvs[r]` comes from it,
/// for every r whose piece has a type (the others exchange nothing).
/// Either vector may be empty.
p2p::Task* inter_exchange(Communicator& c, const std::vector<Piece>& sends, const std::vector<Piece>& recvs);
/// `root` as the C call takes it: MPI_ROOT on the root, MPI_PROC_NULL on
/// the rest of its group, and the root's rank in the other group.
p2p::Task* inter_reduce(Communicator& c, const void* send, void* recv, std::int64_t count,
                        const dtype::Datatype& type, Binding op, int root);
p2p::Task* inter_allreduce(Communicator& c, const void* send, void* recv, std::int64_t count,
                           const dtype::Datatype& type, Binding op);
/// `counts` are the local group's: each member folds its sum of elements,
/// and the result, the other group's fold, is scattered by them.
p2p::Task* inter_reduce_scatter(Communicator& c, const void* send, void* recv, const int* counts,
                                const dtype::Datatype& type, Binding op);

}  // namespace shmpi::coll::nbc
