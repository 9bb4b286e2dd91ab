// MPI_Dims_create: a balanced factorisation of a number of processes into a
// grid of a given number of dimensions, some of them fixed by the caller.
#pragma once

#include <span>

namespace shmpi::topo {

/// Fills the zero entries of `dims` so that the product of all entries is
/// `nnodes`, the filled entries are as close to one another as possible
/// (the smallest difference between the largest and the smallest of them;
/// among equally close choices, the one whose largest entries are smallest),
/// and they appear in non-increasing order.  Positive entries are kept.
///
/// Throws MpiError naming `fn`: MPI_ERR_ARG when nnodes < 1, MPI_ERR_DIMS
/// for a negative entry, or when the product of the positive entries does
/// not divide nnodes (equals it, when no entry is zero).  Example 6.1 of the
/// seed: (0,0) and 6 give (3,2); (0,0) and 7 give (7,1); (0,3,0) and 6 give
/// (2,3,1); (0,3,0) and 7 is an error.
void dims_create(int nnodes, std::span<int> dims, const char* fn);

}  // namespace shmpi::topo
