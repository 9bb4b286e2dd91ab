// The vector family: MPI_Type_contiguous, MPI_Type_vector,
// MPI_Type_create_hvector (and MPI-1's MPI_Type_hvector).  All become the
// Vector layout: `count` blocks of `blocklen` copies, block i at i * stride
// bytes.
#include <fmt/format.h>

#include <algorithm>

#include "dtype/build.hpp"
#include "dtype/datatype.hpp"
#include "errors.hpp"

namespace shmpi::dtype {
namespace build {

void set_vector(Datatype& t, std::int64_t count, std::int64_t blocklen, std::int64_t stride,
                const Datatype& c, const char* fn, Bounds& b) {
    // The bounds come from the blocks as the user placed them.
    if (count > 0 && blocklen > 0) {
        const std::int64_t last = mul(count - 1, stride, fn, "(count - 1) * stride");
        b.add(c, blocklen, std::min<std::int64_t>(0, last), std::max<std::int64_t>(0, last));
    }
    // Normalise the layout:
    //   1. an empty vector is count 0;
    //   2. blocks that continue one another's copies (stride = blocklen
    //      extents) are one block;
    //   3. a block of copies of a plain run of copies (an unpadded, unresized
    //      contiguous type) is a longer block of the inner copies.
    const Datatype* child = &c;
    if (count == 0 || blocklen == 0) {
        count = 0;
        blocklen = 0;
        stride = 0;
    } else if (count == 1 || stride == mul(blocklen, c.extent, fn, "blocklength * extent")) {
        blocklen = mul(count, blocklen, fn, "count * blocklength");
        count = 1;
        stride = 0;
    }
    std::int64_t inner = 0;
    if (count > 0 && c.kind == Kind::Vector && c.count == 1 &&
        !__builtin_mul_overflow(c.blocklen, c.child->extent, &inner) && c.extent == inner) {
        blocklen = mul(blocklen, c.blocklen, fn, "blocklength * inner count");
        if (count > 1 && stride == mul(blocklen, c.child->extent, fn, "blocklength * extent")) {
            blocklen = mul(count, blocklen, fn, "count * blocklength");
            count = 1;
            stride = 0;
        }
        child = c.child.get();
    }
    t.kind = Kind::Vector;
    t.count = count;
    t.blocklen = blocklen;
    t.stride = stride;
    t.child = Ref(child);
}

}  // namespace build

namespace {

Datatype* vector_type(const char* what, std::int64_t count, std::int64_t blocklen,
                      std::int64_t stride, const Datatype& old, const char* fn, int combiner,
                      std::vector<int> ints, std::vector<MPI_Aint> aints) {
    auto t = build::create(what);
    build::Bounds b(fn);
    build::set_vector(*t, count, blocklen, stride, old, fn, b);
    b.store(*t, true);
    build::finish(*t, fn);
    build::set_envelope(*t, combiner, std::move(ints), std::move(aints), {&old});
    return t.release();
}

}  // namespace

Datatype* make_contiguous(int count, const Datatype& old, const char* fn) {
    build::check_count(count, fn, "count");
    build::check_old(old, fn);
    return vector_type("contiguous", 1, count, 0, old, fn, MPI_COMBINER_CONTIGUOUS, {count}, {});
}

Datatype* make_vector(int count, int blocklen, int stride, const Datatype& old, const char* fn) {
    build::check_count(count, fn, "count");
    build::check_blocklen(blocklen, fn, "blocklength");
    build::check_old(old, fn);
    const std::int64_t bytes = build::mul(stride, old.extent, fn, "stride * extent of oldtype");
    return vector_type("vector", count, blocklen, bytes, old, fn, MPI_COMBINER_VECTOR,
                       {count, blocklen, stride}, {});
}

Datatype* make_hvector(int count, int blocklen, MPI_Aint stride, const Datatype& old, const char* fn) {
    build::check_count(count, fn, "count");
    build::check_blocklen(blocklen, fn, "blocklength");
    build::check_old(old, fn);
    return vector_type("hvector", count, blocklen, stride, old, fn, MPI_COMBINER_HVECTOR,
                       {count, blocklen}, {stride});
}

}  // namespace shmpi::dtype
