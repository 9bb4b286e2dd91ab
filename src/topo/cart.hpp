// Cartesian grids: the numbering of grid points (row-major: the last
// dimension varies fastest, as MPI prescribes), shifts, and the sub-grids of
// MPI_Cart_sub.  Pure functions on a shape; the checks that name an MPI
// function throw MpiError.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace shmpi::topo {

/// The shape of a Cartesian grid.  Zero dimensions is a grid of one point.
struct CartShape {
    std::vector<int> dims;
    std::vector<bool> periods;

    int ndims() const { return static_cast<int>(dims.size()); }
    /// The number of grid points (1 for zero dimensions).
    std::int64_t points() const;
};

/// Checks the arguments of MPI_Cart_create / MPI_Cart_map and returns the
/// shape: MPI_ERR_DIMS for an entry of dims below 1, MPI_ERR_ARG for
/// ndims < 0, a NULL array or a grid with more points than `group_size`.
CartShape check_cart(int ndims, const int* dims, const int* periods, int group_size, const char* fn);

/// The coordinates of grid point `rank` (0 <= rank < points()).
void coords_of(const CartShape& shape, int rank, std::span<int> coords);
std::vector<int> coords_of(const CartShape& shape, int rank);

/// The grid point at `coords`, wrapping periodic dimensions.  Throws
/// MpiError(MPI_ERR_ARG) naming `fn` when a coordinate of a non-periodic
/// dimension lies outside [0, dims[i]).
int rank_of(const CartShape& shape, std::span<const int> coords, const char* fn);

/// The source and destination of MPI_Cart_shift for the point `rank`:
/// `source` is the point `disp` steps down dimension `direction`, `dest` the
/// point `disp` steps up; MPI_PROC_NULL where a step leaves a non-periodic
/// dimension.  `direction` must be checked by the caller.
struct Shift {
    int source;
    int dest;
};
Shift shift(const CartShape& shape, int rank, int direction, int disp);

/// MPI_Cart_sub for the point `rank`: `color` names the sub-grid (the same
/// for exactly the points that agree on every dropped coordinate), `key` is
/// the rank within it, and `shape` the sub-grid's shape (the kept dimensions
/// in order; no dimension at all when none is kept).
struct SubGrid {
    int color;
    int key;
    CartShape shape;
};
SubGrid sub_grid(const CartShape& shape, int rank, const std::vector<bool>& remain);

/// The neighbours in the order of MPI-3 neighbourhood collectives: for each
/// dimension, the point one step down, then the point one step up
/// (MPI_PROC_NULL off a non-periodic edge).  2 * ndims entries.
std::vector<int> cart_neighbors(const CartShape& shape, int rank);

}  // namespace shmpi::topo
