#include "topo/cart.hpp"

#include <fmt/format.h>

#include "errors.hpp"

namespace shmpi::topo {

std::int64_t CartShape::points() const {
    std::int64_t n = 1;
    for (const int d : dims) n *= d;
    return n;
}

CartShape check_cart(int ndims, const int* dims, const int* periods, int group_size, const char* fn) {
    // The classes of a bad ndims and of a grid larger than the group are
    // MPI_ERR_ARG, as MPICH and Open MPI give them (MPI-3.1 names none):
    // code that tests the class behaves the same with all three.
    if (ndims < 0) {
        throw MpiError(MPI_ERR_ARG, fmt::format("{}: ndims is {} (must be 0 or more)", fn, ndims));
    }
    if (ndims > 0 && dims == nullptr) throw MpiError(MPI_ERR_ARG, fmt::format("{}: dims is NULL", fn));
    if (ndims > 0 && periods == nullptr) throw MpiError(MPI_ERR_ARG, fmt::format("{}: periods is NULL", fn));
    CartShape s;
    std::int64_t points = 1;
    for (int i = 0; i < ndims; ++i) {
        if (dims[i] < 1) {
            throw MpiError(MPI_ERR_DIMS,
                           fmt::format("{}: dims[{}] is {} (every dimension needs at least 1 process)", fn, i, dims[i]));
        }
        if (points <= group_size) points *= dims[i];
        s.dims.push_back(dims[i]);
        s.periods.push_back(periods[i] != 0);
    }
    if (points > group_size) {
        std::string given;
        for (int i = 0; i < ndims; ++i) given += fmt::format("{}{}", i == 0 ? "" : "x", dims[i]);
        throw MpiError(MPI_ERR_ARG,
                       fmt::format("{}: the grid {} has more points than the {} processes of the communicator", fn,
                                   given, group_size));
    }
    return s;
}

void coords_of(const CartShape& shape, int rank, std::span<int> coords) {
    for (int i = shape.ndims(); i-- > 0;) {
        coords[static_cast<std::size_t>(i)] = rank % shape.dims[static_cast<std::size_t>(i)];
        rank /= shape.dims[static_cast<std::size_t>(i)];
    }
}

std::vector<int> coords_of(const CartShape& shape, int rank) {
    std::vector<int> c(shape.dims.size());
    coords_of(shape, rank, c);
    return c;
}

int rank_of(const CartShape& shape, std::span<const int> coords, const char* fn) {
    int rank = 0;
    for (std::size_t i = 0; i < shape.dims.size(); ++i) {
        const int d = shape.dims[i];
        int c = coords[i];
        if (c < 0 || c >= d) {
            if (!shape.periods[i]) {
                throw MpiError(MPI_ERR_ARG,
                               fmt::format("{}: coords[{}] is {}, outside 0..{} of a non-periodic dimension", fn,
                                           i, c, d - 1));
            }
            c %= d;
            if (c < 0) c += d;
        }
        rank = rank * d + c;
    }
    return rank;
}

namespace {

/// The point `disp` steps from `rank` along `direction`, or MPI_PROC_NULL.
int step(const CartShape& shape, int rank, int direction, std::int64_t disp) {
    std::vector<int> c = coords_of(shape, rank);
    const auto dir = static_cast<std::size_t>(direction);
    const std::int64_t d = shape.dims[dir];
    std::int64_t x = c[dir] + disp;
    if (x < 0 || x >= d) {
        if (!shape.periods[dir]) return MPI_PROC_NULL;
        x %= d;
        if (x < 0) x += d;
    }
    c[dir] = static_cast<int>(x);
    return rank_of(shape, c, "shift");
}

}  // namespace

Shift shift(const CartShape& shape, int rank, int direction, int disp) {
    return Shift{step(shape, rank, direction, -static_cast<std::int64_t>(disp)),
                 step(shape, rank, direction, disp)};
}

SubGrid sub_grid(const CartShape& shape, int rank, const std::vector<bool>& remain) {
    const std::vector<int> c = coords_of(shape, rank);
    SubGrid g{0, 0, {}};
    for (std::size_t i = 0; i < shape.dims.size(); ++i) {
        if (remain[i]) {
            g.key = g.key * shape.dims[i] + c[i];
            g.shape.dims.push_back(shape.dims[i]);
            g.shape.periods.push_back(shape.periods[i]);
        } else {
            g.color = g.color * shape.dims[i] + c[i];
        }
    }
    return g;
}

std::vector<int> cart_neighbors(const CartShape& shape, int rank) {
    std::vector<int> n;
    n.reserve(2 * shape.dims.size());
    for (int d = 0; d < shape.ndims(); ++d) {
        const Shift s = shift(shape, rank, d, 1);
        n.push_back(s.source);
        n.push_back(s.dest);
    }
    return n;
}

}  // namespace shmpi::topo
