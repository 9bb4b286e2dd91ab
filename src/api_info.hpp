// Info objects at the C boundary (api_info.cpp), for the calls that take an
// MPI_Info argument.
#pragma once

#include <mpi.h>

#include <string>
#include <utility>
#include <vector>

namespace shmpi::api {

struct Info;

/// The info behind `handle` (MPI_INFO_ENV included).  Throws MPI_ERR_INFO
/// naming `fn` for MPI_INFO_NULL and anything that is not an info.
const Info& info_of(MPI_Info handle, const char* fn);

/// Checks an info argument of a call that takes hints: MPI_INFO_NULL or a
/// valid info.
void check_info_arg(MPI_Info handle, const char* fn);

/// Whether the info `handle` (MPI_INFO_NULL or valid) sets `key` to "true".
bool info_says_true(MPI_Info handle, const char* key, const char* fn);

/// The (key, value) pairs of the info `handle` (MPI_INFO_NULL: none), in
/// the order they were set.
std::vector<std::pair<std::string, std::string>> info_entries(MPI_Info handle, const char* fn);

/// A new info holding `entries`, which the caller frees (MPI_*_get_info).
MPI_Info new_info(std::vector<std::pair<std::string, std::string>> entries = {});

}  // namespace shmpi::api
