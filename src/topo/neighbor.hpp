// The MPI-3 neighbourhood collectives (MPI_Neighbor_allgather(v),
// MPI_Neighbor_alltoall(v)) over any topology, as point-to-point messages on
// the communicator's collective context: each rank posts one receive per
// source and one send per destination of its Neighborhood, then waits for
// all of them.  MPI_PROC_NULL neighbours move no data; their blocks of the
// receive buffer are left untouched.
#pragma once

#include <cstdint>
#include <span>

#include "communicator.hpp"
#include "dtype/datatype.hpp"
#include "topo/topology.hpp"

namespace shmpi::topo {

/// One block of a send or receive buffer: `count` elements of `type` at
/// `buf`.
struct Block {
    const void* buf;
    std::int64_t count;
    const dtype::Datatype* type;
};

/// Sends send[i] to nb.destinations[i] and receives recv[i] from
/// nb.sources[i] (recv[i].buf is written), on c's collective context.
/// Throws MpiError naming `fn` once every message has completed:
/// MPI_ERR_TRUNCATE when a neighbour sent more than its block holds,
/// MPI_ERR_COUNT when it sent less (the type signatures must match).
void neighbor_exchange(Communicator& c, const Neighborhood& nb, std::span<const Block> send,
                       std::span<const Block> recv, const char* fn);

}  // namespace shmpi::topo
