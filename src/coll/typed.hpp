// The collectives as the communicator layer runs them: typed user buffers in,
// dense bytes to the selected algorithm (select.hpp), typed buffers out.
//
// A buffer of a contiguous datatype goes to the algorithm as it is (no
// copy); any other is packed into a staging buffer first and unpacked
// afterwards, unless the algorithm stored the data straight into the typed
// receive buffer (coll::Landing: Bcast, Gather, Scatter and Allgather).  A Bcast or
// Scatter root's typed buffer is packed only if the algorithm asks
// (coll::Source): a streaming algorithm packs it piece by piece into the
// cells instead.  MPI_IN_PLACE arrives here as it is and becomes
// the dense conventions of linear.hpp.  Arguments were checked by the C boundary: datatypes that a rank does
// not use (the receive side on a gather's non-root, the send side of an MPI_IN_PLACE call) may be null.
//
// Errors found during the call (the two sides of a message disagree on its
// size) are thrown as MpiError whose message starts with the MPI function's
// name, after this rank has done its part of the communication.
#pragma once

#include <cstdint>

#include "coll/select.hpp"
#include "communicator.hpp"
#include "dtype/datatype.hpp"
#include "op.hpp"

namespace shmpi::coll::typed {

/// One collective call.
struct Call {
    Communicator& comm;
    const Selection& selection;
    const char* fn;  ///< "MPI_Gather", for messages
};

void barrier(const Call& c);
void bcast(const Call& c, void* buf, std::int64_t count, const dtype::Datatype& type, int root);

void reduce(const Call& c, const void* send, void* recv, std::int64_t count,
            const dtype::Datatype& type, const op::Binding& op, int root);
void allreduce(const Call& c, const void* send, void* recv, std::int64_t count,
               const dtype::Datatype& type, const op::Binding& op);
/// `counts` has one entry per rank (elements of `type`).
void reduce_scatter(const Call& c, const void* send, void* recv, const int* counts,
                    const dtype::Datatype& type, const op::Binding& op);
void reduce_scatter_block(const Call& c, const void* send, void* recv, std::int64_t count,
                          const dtype::Datatype& type, const op::Binding& op);
void scan(const Call& c, const void* send, void* recv, std::int64_t count,
          const dtype::Datatype& type, const op::Binding& op);
void exscan(const Call& c, const void* send, void* recv, std::int64_t count,
            const dtype::Datatype& type, const op::Binding& op);

void gather(const Call& c, const void* send, std::int64_t scount, const dtype::Datatype* stype,
            void* recv, std::int64_t rcount, const dtype::Datatype* rtype, int root);
void gatherv(const Call& c, const void* send, std::int64_t scount, const dtype::Datatype* stype,
             void* recv, const int* rcounts, const int* displs, const dtype::Datatype* rtype,
             int root);
void scatter(const Call& c, const void* send, std::int64_t scount, const dtype::Datatype* stype,
             void* recv, std::int64_t rcount, const dtype::Datatype* rtype, int root);
void scatterv(const Call& c, const void* send, const int* scounts, const int* displs,
              const dtype::Datatype* stype, void* recv, std::int64_t rcount,
              const dtype::Datatype* rtype, int root);
void allgather(const Call& c, const void* send, std::int64_t scount, const dtype::Datatype* stype,
               void* recv, std::int64_t rcount, const dtype::Datatype& rtype);
void allgatherv(const Call& c, const void* send, std::int64_t scount, const dtype::Datatype* stype,
                void* recv, const int* rcounts, const int* displs, const dtype::Datatype& rtype);
void alltoall(const Call& c, const void* send, std::int64_t scount, const dtype::Datatype* stype,
              void* recv, std::int64_t rcount, const dtype::Datatype& rtype);
void alltoallv(const Call& c, const void* send, const int* scounts, const int* sdispls,
               const dtype::Datatype* stype, void* recv, const int* rcounts, const int* rdispls,
               const dtype::Datatype& rtype);
/// MPI_Alltoallw: a datatype per peer on each side, displacements in bytes;
/// `stypes` is unused (may be null) when `send` is MPI_IN_PLACE.
void alltoallw(const Call& c, const void* send, const int* scounts, const int* sdispls,
               const dtype::Datatype* const* stypes, void* recv, const int* rcounts, const int* rdispls,
               const dtype::Datatype* const* rtypes);

}  // namespace shmpi::coll::typed
