// The indexed family: MPI_Type_indexed, MPI_Type_create_hindexed (and
// MPI-1's MPI_Type_hindexed), MPI_Type_create_indexed_block,
// MPI_Type_create_hindexed_block.  All become the Blocks layout, or a
// Vector when the blocks turn out evenly spaced.
#include <fmt/format.h>

#include "dtype/build.hpp"
#include "dtype/datatype.hpp"
#include "errors.hpp"

namespace shmpi::dtype {
namespace build {

void set_blocks(Datatype& t, std::vector<std::int64_t> blocklens, std::vector<std::int64_t> displs,
                const Datatype& c, const char* fn, Bounds& b) {
    for (std::size_t i = 0; i < blocklens.size(); ++i) b.add(c, blocklens[i], displs[i], displs[i]);

    // Normalise the layout:
    //   1. drop blocks of length 0;
    //   2. merge a block into the previous one when it continues its copies;
    //   3. one block at displacement 0, or equal blocks evenly spaced from
    //      displacement 0, are a Vector.
    std::size_t n = 0;
    for (std::size_t i = 0; i < blocklens.size(); ++i) {
        if (blocklens[i] == 0) continue;
        if (n > 0) {
            std::int64_t end = 0;
            if (!__builtin_mul_overflow(blocklens[n - 1], c.extent, &end) &&
                !__builtin_add_overflow(end, displs[n - 1], &end) && end == displs[i]) {
                blocklens[n - 1] = add(blocklens[n - 1], blocklens[i], fn, "merged block length");
                continue;
            }
        }
        blocklens[n] = blocklens[i];
        displs[n] = displs[i];
        ++n;
    }
    blocklens.resize(n);
    displs.resize(n);

    if (n > 0 && displs[0] == 0) {
        bool even = true;
        const std::int64_t stride = n > 1 ? displs[1] : 0;
        for (std::size_t i = 1; i < n && even; ++i) {
            std::int64_t step = 0;
            even = blocklens[i] == blocklens[0] &&
                   !__builtin_sub_overflow(displs[i], displs[i - 1], &step) && step == stride;
        }
        if (even) {
            Bounds ignored(fn);  // the bounds were taken from the blocks above
            set_vector(t, static_cast<std::int64_t>(n), blocklens[0], stride, c, fn, ignored);
            return;
        }
    }
    t.kind = Kind::Blocks;
    t.count = static_cast<std::int64_t>(n);
    t.blocklens = std::move(blocklens);
    t.displs = std::move(displs);
    t.child = Ref(&c);
}

}  // namespace build

namespace {

Datatype* blocks_type(const char* what, std::vector<std::int64_t> blocklens,
                      std::vector<std::int64_t> displs, const Datatype& old, const char* fn,
                      int combiner, std::vector<int> ints, std::vector<MPI_Aint> aints) {
    auto t = build::create(what);
    build::Bounds b(fn);
    build::set_blocks(*t, std::move(blocklens), std::move(displs), old, fn, b);
    b.store(*t, true);
    build::finish(*t, fn);
    build::set_envelope(*t, combiner, std::move(ints), std::move(aints), {&old});
    return t.release();
}

/// The block lengths, checked.
std::vector<std::int64_t> lengths(int count, const int blocklens[], const char* fn) {
    std::vector<std::int64_t> out(static_cast<std::size_t>(count));
    for (int i = 0; i < count; ++i) {
        if (blocklens[i] < 0) {
            throw MpiError(MPI_ERR_ARG, fmt::format("{}: array_of_blocklengths[{}] = {} is negative", fn,
                                                    i, blocklens[i]));
        }
        out[static_cast<std::size_t>(i)] = blocklens[i];
    }
    return out;
}

/// Displacements in units of `old`'s extent, in bytes.
std::vector<std::int64_t> scaled(int count, const int displs[], const Datatype& old, const char* fn) {
    std::vector<std::int64_t> out(static_cast<std::size_t>(count));
    for (int i = 0; i < count; ++i) {
        out[static_cast<std::size_t>(i)] =
            build::mul(displs[i], old.extent, fn, "array_of_displacements[i] * extent of oldtype");
    }
    return out;
}

void check_common(int count, const void* blocklens, const void* displs, const Datatype& old,
                  const char* fn) {
    build::check_count(count, fn, "count");
    build::check_array(blocklens, count, fn, "array_of_blocklengths");
    build::check_array(displs, count, fn, "array_of_displacements");
    build::check_old(old, fn);
}

}  // namespace

Datatype* make_indexed(int count, const int blocklens[], const int displs[], const Datatype& old,
                       const char* fn) {
    check_common(count, blocklens, displs, old, fn);
    std::vector<int> ints{count};
    ints.insert(ints.end(), blocklens, blocklens + count);
    ints.insert(ints.end(), displs, displs + count);
    return blocks_type("indexed", lengths(count, blocklens, fn), scaled(count, displs, old, fn), old, fn,
                       MPI_COMBINER_INDEXED, std::move(ints), {});
}

Datatype* make_hindexed(int count, const int blocklens[], const MPI_Aint displs[], const Datatype& old,
                        const char* fn) {
    check_common(count, blocklens, displs, old, fn);
    std::vector<int> ints{count};
    ints.insert(ints.end(), blocklens, blocklens + count);
    std::vector<std::int64_t> d(displs, displs + count);
    return blocks_type("hindexed", lengths(count, blocklens, fn), d, old, fn, MPI_COMBINER_HINDEXED,
                       std::move(ints), std::vector<MPI_Aint>(displs, displs + count));
}

Datatype* make_indexed_block(int count, int blocklen, const int displs[], const Datatype& old,
                             const char* fn) {
    check_common(count, &blocklen, displs, old, fn);
    build::check_blocklen(blocklen, fn, "blocklength");
    std::vector<int> ints{count, blocklen};
    ints.insert(ints.end(), displs, displs + count);
    return blocks_type("indexed_block", std::vector<std::int64_t>(static_cast<std::size_t>(count), blocklen),
                       scaled(count, displs, old, fn), old, fn, MPI_COMBINER_INDEXED_BLOCK,
                       std::move(ints), {});
}

Datatype* make_hindexed_block(int count, int blocklen, const MPI_Aint displs[], const Datatype& old,
                              const char* fn) {
    check_common(count, &blocklen, displs, old, fn);
    build::check_blocklen(blocklen, fn, "blocklength");
    std::vector<std::int64_t> d(displs, displs + count);
    return blocks_type("hindexed_block", std::vector<std::int64_t>(static_cast<std::size_t>(count), blocklen),
                       d, old, fn, MPI_COMBINER_HINDEXED_BLOCK, {count, blocklen},
                       std::vector<MPI_Aint>(displs, displs + count));
}

}  // namespace shmpi::dtype
