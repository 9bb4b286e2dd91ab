// Helpers the C boundary shares for communicators and groups (api_comm.cpp,
// api_group.cpp, api_attr.cpp, and api_topo.cpp, which makes communicators
// too).
#pragma once

#include <mpi.h>

#include <cstdint>
#include <exception>
#include <memory>
#include <vector>

#include "communicator.hpp"
#include "group.hpp"

namespace shmpi::api {

/// Hands a communicator made by comm_create.hpp to the user: its handle, or
/// MPI_COMM_NULL for nullptr.  MPI_Comm_free deletes it again.
MPI_Comm comm_handle(std::unique_ptr<Communicator> c);
/// The handle that names `c` (MPI_COMM_WORLD / MPI_COMM_SELF for those).
MPI_Comm handle_of(Communicator& c);

/// Translates a group handle (MPI_GROUP_EMPTY included); throws
/// MPI_ERR_GROUP naming `fn` and `arg`.
Group& group_of(MPI_Group handle, const char* fn, const char* arg = "group");
/// A new group handle for `world` ranks (MPI_GROUP_EMPTY when empty).
MPI_Group group_handle(std::vector<std::uint32_t> world);

/// MPI_Finalize's first step (MPI-3.1 8.7.1): deletes the attributes of
/// MPI_COMM_SELF, then those of MPI_COMM_WORLD, running their delete
/// callbacks while MPI is still usable.  Every attribute goes, also when
/// its callback fails; returns the first failure (an MpiError), null if
/// none.  Defined in api_attr.cpp.
std::exception_ptr finalize_attributes();

}  // namespace shmpi::api
