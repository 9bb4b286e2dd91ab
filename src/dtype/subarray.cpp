// Array types: MPI_Type_create_subarray and MPI_Type_create_darray, built
// as MPI-3.1 4.1.3 and 4.1.4 define them, one array dimension at a time
// from the fastest-varying one: a level is the blocks of the level below
// that this process selects in that dimension, resized to the whole
// dimension [0, size * extent of the level below).
#include <fmt/format.h>

#include <algorithm>
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

/// What one process selects in one dimension, in copies of the level below:
/// `count` blocks of `len` copies, block i at index first + i * step, then,
/// when `tail` > 0, a short block of `tail` copies at first + count * step.
/// A subarray selects one block; a cyclic(darg) darray dimension every
/// psize-th block of darg elements, the dimension's last block maybe short
/// (MPI-3.1 4.1.4).  Kept as a pattern, not a list: cyclic(1) over INT_MAX
/// elements on one process is INT_MAX blocks, and listing them took 24 GB.
struct Selection {
    std::int64_t first = 0, step = 0, len = 0, count = 0, tail = 0;

    std::int64_t blocks() const { return count + (tail > 0 ? 1 : 0); }
    std::int64_t start(std::int64_t i) const { return first + i * step; }
    std::int64_t length(std::int64_t i) const { return i < count ? len : tail; }
};

/// The first i in [0, n) with fails(i), for a `fails` that holds from some
/// i on and at n - 1.
template <class Fails>
std::int64_t first_failing(std::int64_t n, Fails&& fails) {
    std::int64_t lo = 0, hi = n - 1;
    while (lo < hi) {
        const std::int64_t mid = lo + (hi - lo) / 2;
        if (fails(mid)) {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    return lo;
}

/// At most two blocks: listed, as set_blocks() normalises any list.
void listed_blocks(Datatype& t, const Selection& sel, const Datatype& c, const char* fn) {
    std::vector<std::int64_t> lens;
    std::vector<std::int64_t> starts;
    for (std::int64_t i = 0; i < sel.blocks(); ++i) {
        lens.push_back(sel.length(i));
        starts.push_back(build::mul(sel.start(i), c.extent, fn, "array index * extent"));
    }
    build::Bounds b(fn);
    build::set_blocks(t, std::move(lens), std::move(starts), c, fn, b);
    b.store(t, true);
    build::finish(t, fn);
}

/// Three blocks or more, in constant time and space: the same type map,
/// bounds, errors and (but for one more level of nesting) the layout that
/// listed_blocks() would make of the list.
void pattern_blocks(Datatype& t, const Selection& sel, const Datatype& c, const char* fn) {
    const std::int64_t n = sel.blocks();
    // 1. The checks the list makes block by block, failing at the block
    //    the list fails at first.  Starts grow along the dimension, so
    //    |start * extent| does, and so do the bounds of the full blocks in
    //    the direction the sign of the extent gives them: the blocks that
    //    fail a check are the last ones (of the full blocks, then the short
    //    one).  Rerunning the check at the first of them throws its error.
    const auto overflows = [&](std::int64_t i) {
        std::int64_t bytes = 0;
        return __builtin_mul_overflow(sel.start(i), c.extent, &bytes);
    };
    if (overflows(n - 1)) build::mul(sel.start(first_failing(n, overflows)), c.extent, fn, "array index * extent");
    const auto disp = [&](std::int64_t i) { return sel.start(i) * c.extent; };
    const auto place = [&](build::Bounds& into, std::int64_t i) { into.add(c, sel.length(i), disp(i), disp(i)); };
    const auto fails = [&](std::int64_t i) {
        build::Bounds scratch(fn);
        try {
            place(scratch, i);
        } catch (const MpiError&) {
            return true;
        }
        return false;
    };
    build::Bounds scratch(fn);
    if (fails(sel.count - 1)) place(scratch, first_failing(sel.count, fails));
    if (sel.tail > 0) place(scratch, sel.count);

    // 2. The bounds of the list: only the full blocks at the two ends and
    //    the short one count.
    build::Bounds b(fn);
    const std::int64_t first = disp(0);
    const std::int64_t last = disp(sel.count - 1);
    b.add(c, sel.len, std::min(first, last), std::max(first, last));
    if (sel.tail > 0) place(b, sel.count);

    // 3. The layout set_blocks() gives the list, with its checks in its
    //    order: blocks that continue one another (a zero extent, or step =
    //    len: one process in the dimension) are one block; equal blocks
    //    from displacement 0 a Vector; else (there is no layout with an
    //    offset) a Vector of the full blocks placed at the first one, then
    //    the short block.  The list's bounds are those found above.
    build::Bounds ignored(fn);
    const std::int64_t copies = sel.count * sel.len + sel.tail;
    const bool one = c.extent == 0 || sel.step == sel.len;
    const bool even = !one && sel.tail == 0 && first == 0;
    if (one) {
        build::set_blocks(t, {copies}, {first}, c, fn, ignored);
    } else if (even) {
        build::set_vector(t, sel.count, sel.len, disp(1) - first, c, fn, ignored);
    }
    b.store(t, true);
    if (!one && !even) {
        // The sums finish() checks on the list, before a part is built.
        build::mul(copies, c.size, fn, "size (copies * size of the old type)");
        build::mul(copies, c.elements, fn, "basic elements");
        auto full = internal("array blocks");
        build::Bounds fb(fn);
        build::set_vector(*full, sel.count, sel.len, disp(1) - first, c, fn, fb);
        fb.store(*full, true);
        build::finish(*full, fn);
        t.kind = Kind::Struct;
        t.blocklens = {1};
        t.displs = {first};
        t.children.push_back(build::adopt(std::move(full)));
        if (sel.tail > 0) {
            t.blocklens.push_back(sel.tail);
            t.displs.push_back(disp(sel.count));
            t.children.emplace_back(&c);
        }
        t.count = static_cast<std::int64_t>(t.blocklens.size());
    }
    build::finish(t, fn);
}

/// One dimension: the selected blocks of `c`, resized to [0, dim_size *
/// extent(c)).  Written into `t`.
void level(Datatype& t, const Selection& sel, std::int64_t dim_size, const Datatype& c, const char* fn) {
    auto blocks = internal("array level");
    if (sel.blocks() <= 2) {
        listed_blocks(*blocks, sel, c, fn);
    } else {
        pattern_blocks(*blocks, sel, c, fn);
    }
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
        const Selection sel = select(d);
        if (k + 1 == dims.size()) {
            level(result, sel, sizes[d], *below, fn);
        } else {
            auto t = internal("array level");
            level(*t, sel, sizes[d], *below, fn);
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
                 [&](int d) { return Selection{starts[d], 0, subsizes[d], 1, 0}; });
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
    // ... of darg elements; the dimension's last block may be short.
    build_levels(*t, fastest_first(ndims, order), gsizes, old, fn, [&](int d) {
        const auto i = static_cast<std::size_t>(d);
        const std::int64_t a = darg[i];
        const std::int64_t j = coord[i];
        const std::int64_t last = (gsizes[d] - 1) / a;  // the dimension's last block
        Selection sel;
        if (j > last) return sel;
        sel.first = j * a;
        sel.step = psizes[d] * a;
        sel.len = a;
        sel.count = (last - j) / psizes[d] + 1;
        if (sel.start(sel.count - 1) == last * a && gsizes[d] % a != 0) {
            --sel.count;
            sel.tail = gsizes[d] - last * a;
        }
        return sel;
    });
    std::vector<int> ints{size, rank, ndims};
    for (const int* a : {gsizes, distribs, dargs, psizes}) ints.insert(ints.end(), a, a + ndims);
    ints.push_back(order);
    build::set_envelope(*t, MPI_COMBINER_DARRAY, std::move(ints), {}, {&old});
    return t.release();
}

}  // namespace shmpi::dtype
