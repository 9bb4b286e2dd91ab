// Info objects at the C boundary (api_info.cpp), for the calls that take an
// MPI_Info argument.
#pragma once

#include <mpi.h>

namespace shmpi::api {

struct Info;

/// The info behind `handle` (MPI_INFO_ENV included).  Throws MPI_ERR_INFO
/// naming `fn` for MPI_INFO_NULL and anything that is not an info.
const Info& info_of(MPI_Info handle, const char* fn);

/// Checks an info argument of a call that takes hints: MPI_INFO_NULL or a
/// valid info.
void check_info_arg(MPI_Info handle, const char* fn);

}  // namespace shmpi::api
