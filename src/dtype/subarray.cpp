// Array types: MPI_Type_create_subarray and MPI_Type_create_darray, built
// as MPI-3.1 4.1.3 and 4.1.4 define them, one array dimension at a time
// from the fastest-varying one: a level is the blocks of the level below
// that this process selects in that dimension, resized to the whole
// dimension [0, size * extent of the level below).
#include <fmt/format.h>

#include <initializer_list>

#include "dtype/build.hpp"
#include "dtype/datatype.hpp"
#include "errors.hpp"

namespace shmpi::dtype {
namespace {

/// An internal type the user never holds a handle to.
std::unique_ptr<Datatype> internal(const char* what) {
    auto t = build::create(what);
    t->handles.store(0, std::memory_order_relaxed);
    return t;
}

/// One dimension: blocks of `c` (lengths in copies, displacements in
/// copies of `c`), resized to [0, dim_size * extent(c)).  Written into `t`.
void level(Datatype& t, std::vector<std::int64_t> lens, std::vector<std::int64_t> starts,
           std::int64_t dim_size, const Datatype& c, const char* fn) {
    auto blocks = internal("array level");
    build::Bounds b(fn);
    for (std::int64_t& s : starts) s = build::mul(s, c.extent, fn, "array index * extent");
    build::set_blocks(*blocks, std::move(lens), std::move(starts), c, fn, b);
    b.store(*blocks, true);
    build::finish(*blocks, fn);
    const Ref held = build::adopt(std::move(blocks));
    const std::int64_t span = build::mul(dim_size, c.extent, fn, "array size * extent");
    build::set_resized(t, *held, 0, span, fn);
    build::finish(t, fn);
}

/// The levels from the fastest dimension (`dims` lists the dimensions in
/// that order); the last one is written into `result`.
template <class Select>
void build_levels(Datatype& result, const std::vector<int>& dims, const int sizes[],
                  const Datatype& old, const char* fn, Select&& select) {
    Ref below(&old);
    for (std::size_t k = 0; k < dims.size(); ++k) {
        const int d = dims[k];
        std::vector<std::int64_t> lens;
        std::vector<std::int64_t> starts;
        select(d, lens, starts);
        if (k + 1 == dims.size()) {
            level(result, std::move(lens), std::move(starts), sizes[d], *below, fn);
        } else {
            auto t = internal("array level");
            level(*t, std::move(lens), std::move(starts), sizes[d], *below, fn);
            below = build::adopt(std::move(t));
        }
    }
}

std::vector<int> fastest_first(int ndims, int order) {
    std::vector<int> dims(static_cast<std::size_t>(ndims));
    for (int i = 0; i < ndims; ++i) dims[static_cast<std::size_t>(i)] = order == MPI_ORDER_C ? ndims - 1 - i : i;
    return dims;
}

void check_order(int order, const char* fn) {
    if (order != MPI_ORDER_C && order != MPI_ORDER_FORTRAN) {
        throw MpiError(MPI_ERR_ARG,
                       fmt::format("{}: order {} is neither MPI_ORDER_C nor MPI_ORDER_FORTRAN", fn, order));
    }
}

/// An array argument of ndims entries, and its name in the standard.
struct ArrayArg {
    const void* p;
    const char* name;
};

/// ndims must be positive and each array given; the message names the
/// first NULL one.
void check_ndims(int ndims, std::initializer_list<ArrayArg> arrays, const char* fn) {
    if (ndims <= 0) throw MpiError(MPI_ERR_ARG, fmt::format("{}: ndims {} is not positive", fn, ndims));
    for (const ArrayArg& a : arrays) {
        if (a.p == nullptr) {
            throw MpiError(MPI_ERR_ARG, fmt::format("{}: {} is NULL but ndims is {}", fn, a.name, ndims));
        }
    }
}

[[noreturn]] void bad(const char* fn, const char* arg, int i, int v, const char* why) {
    throw MpiError(MPI_ERR_ARG, fmt::format("{}: {}[{}] = {} {}", fn, arg, i, v, why));
}

}  // namespace

Datatype* make_subarray(int ndims, const int sizes[], const int subsizes[], const int starts[], int order,
                        const Datatype& old, const char* fn) {
    check_ndims(ndims, {{sizes, "array_of_sizes"}, {subsizes, "array_of_subsizes"}, {starts, "array_of_starts"}},
                fn);
    check_order(order, fn);
    build::check_old(old, fn);
    for (int i = 0; i < ndims; ++i) {
        if (sizes[i] <= 0) bad(fn, "array_of_sizes", i, sizes[i], "is not positive");
        if (subsizes[i] < 0 || subsizes[i] > sizes[i]) {
            bad(fn, "array_of_subsizes", i, subsizes[i], fmt::format("is not within [0, {}]", sizes[i]).c_str());
        }
        if (starts[i] < 0 || starts[i] > sizes[i] - subsizes[i]) {
            bad(fn, "array_of_starts", i, starts[i],
                fmt::format("is not within [0, {}]", sizes[i] - subsizes[i]).c_str());
        }
    }
    auto t = build::create("subarray");
    build_levels(*t, fastest_first(ndims, order), sizes, old, fn,
                 [&](int d, std::vector<std::int64_t>& lens, std::vector<std::int64_t>& at) {
                     lens = {subsizes[d]};
                     at = {starts[d]};
                 });
    std::vector<int> ints{ndims};
    ints.insert(ints.end(), sizes, sizes + ndims);
    ints.insert(ints.end(), subsizes, subsizes + ndims);
    ints.insert(ints.end(), starts, starts + ndims);
    ints.push_back(order);
    build::set_envelope(*t, MPI_COMBINER_SUBARRAY, std::move(ints), {}, {&old});
    return t.release();
}

Datatype* make_darray(int size, int rank, int ndims, const int gsizes[], const int distribs[],
                      const int dargs[], const int psizes[], int order, const Datatype& old,
                      const char* fn) {
    if (size <= 0) throw MpiError(MPI_ERR_ARG, fmt::format("{}: size {} is not positive", fn, size));
    if (rank < 0 || rank >= size) {
        throw MpiError(MPI_ERR_RANK, fmt::format("{}: rank {} is not within [0, {})", fn, rank, size));
    }
    check_ndims(ndims,
                {{gsizes, "array_of_gsizes"},
                 {distribs, "array_of_distribs"},
                 {dargs, "array_of_dargs"},
                 {psizes, "array_of_psizes"}},
                fn);
    check_order(order, fn);
    build::check_old(old, fn);
    std::int64_t grid = 1;
    std::vector<int> darg(static_cast<std::size_t>(ndims));
    for (int i = 0; i < ndims; ++i) {
        if (gsizes[i] <= 0) bad(fn, "array_of_gsizes", i, gsizes[i], "is not positive");
        if (psizes[i] <= 0) bad(fn, "array_of_psizes", i, psizes[i], "is not positive");
        grid *= psizes[i];
        if (grid > size) break;
        int a = dargs[i];
        switch (distribs[i]) {
        case MPI_DISTRIBUTE_NONE:
            if (psizes[i] != 1) bad(fn, "array_of_psizes", i, psizes[i], "must be 1 for MPI_DISTRIBUTE_NONE");
            a = gsizes[i];
            break;
        case MPI_DISTRIBUTE_BLOCK:
            if (a == MPI_DISTRIBUTE_DFLT_DARG) a = (gsizes[i] + psizes[i] - 1) / psizes[i];
            if (a <= 0) bad(fn, "array_of_dargs", i, dargs[i], "is not positive");
            if (static_cast<std::int64_t>(a) * psizes[i] < gsizes[i]) {
                bad(fn, "array_of_dargs", i, dargs[i], "times the process grid size does not cover the dimension");
            }
            break;
        case MPI_DISTRIBUTE_CYCLIC:
            if (a == MPI_DISTRIBUTE_DFLT_DARG) a = 1;
            if (a <= 0) bad(fn, "array_of_dargs", i, dargs[i], "is not positive");
            break;
        default: bad(fn, "array_of_distribs", i, distribs[i], "is not an MPI_DISTRIBUTE_ constant");
        }
        darg[static_cast<std::size_t>(i)] = a;
    }
    if (grid != size) {
        throw MpiError(MPI_ERR_ARG,
                       fmt::format("{}: the process grid (product of array_of_psizes) has {} ranks, not size {}",
                                   fn, grid, size));
    }
    // The process grid is row-major whatever the array order (MPI-3.1 4.1.4).
    std::vector<int> coord(static_cast<std::size_t>(ndims));
    for (int i = ndims - 1, r = rank; i >= 0; --i) {
        coord[static_cast<std::size_t>(i)] = r % psizes[i];
        r /= psizes[i];
    }

    auto t = build::create("darray");
    // In dimension d this process owns the blocks j = coord, coord + psize,
    // ... of darg elements (the last block of the dimension may be short).
    build_levels(*t, fastest_first(ndims, order), gsizes, old, fn,
                 [&](int d, std::vector<std::int64_t>& lens, std::vector<std::int64_t>& at) {
                     const std::int64_t a = darg[static_cast<std::size_t>(d)];
                     for (std::int64_t j = coord[static_cast<std::size_t>(d)]; j * a < gsizes[d]; j += psizes[d]) {
                         lens.push_back(std::min<std::int64_t>(a, gsizes[d] - j * a));
                         at.push_back(j * a);
                     }
                 });
    std::vector<int> ints{size, rank, ndims};
    for (const int* a : {gsizes, distribs, dargs, psizes}) ints.insert(ints.end(), a, a + ndims);
    ints.push_back(order);
    build::set_envelope(*t, MPI_COMBINER_DARRAY, std::move(ints), {}, {&old});
    return t.release();
}

}  // namespace shmpi::dtype
