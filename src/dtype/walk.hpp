// The basic values of an element one by one, in type-map order: for the
// conversions that treat each value on its own (external32 in external.cpp,
// the file data representations of io/datarep.cpp).  They are for
// portability, not speed; the pack engine never walks this way.
#pragma once

#include <cstddef>
#include <cstdint>

#include "dtype/datatype.hpp"

namespace shmpi::dtype {

/// Calls `f(basic type, address)` for every basic value of one element of
/// `t` whose origin is at `base`, in type-map order, for as long as `f`
/// returns true.  Returns false when `f` stopped the walk.  A pair type
/// (MPI_DOUBLE_INT, ...) is two basic values.
template <class F>
bool walk(const Datatype& t, std::byte* base, F& f) {
    switch (t.kind) {
    case Kind::Builtin:
        return f(t, base);
    case Kind::Marker:
        return true;
    case Kind::Vector:
        for (std::int64_t b = 0; b < t.count; ++b) {
            for (std::int64_t j = 0; j < t.blocklen; ++j) {
                if (!walk(*t.child, base + b * t.stride + j * t.child->extent, f)) return false;
            }
        }
        return true;
    case Kind::Blocks:
        for (std::size_t b = 0; b < t.blocklens.size(); ++b) {
            for (std::int64_t j = 0; j < t.blocklens[b]; ++j) {
                if (!walk(*t.child, base + t.displs[b] + j * t.child->extent, f)) return false;
            }
        }
        return true;
    case Kind::Struct:
        for (std::size_t b = 0; b < t.blocklens.size(); ++b) {
            const Datatype& c = *t.children[b];
            for (std::int64_t j = 0; j < t.blocklens[b]; ++j) {
                if (!walk(c, base + t.displs[b] + j * c.extent, f)) return false;
            }
        }
        return true;
    case Kind::Resized:
        return walk(*t.child, base, f);
    }
    return true;
}

/// The sum of `size_of(basic type)` over the basic values of one element
/// of `t` (its size in a representation that gives each basic type its
/// own size), without visiting each value: blocks multiply.
template <class S>
std::int64_t sum_basic(const Datatype& t, S& size_of) {
    switch (t.kind) {
    case Kind::Builtin:
        return size_of(t);
    case Kind::Marker:
        return 0;
    case Kind::Vector:
        return t.count * t.blocklen * sum_basic(*t.child, size_of);
    case Kind::Blocks: {
        std::int64_t n = 0;
        for (const std::int64_t l : t.blocklens) n += l;
        return n * sum_basic(*t.child, size_of);
    }
    case Kind::Struct: {
        std::int64_t s = 0;
        for (std::size_t b = 0; b < t.blocklens.size(); ++b) s += t.blocklens[b] * sum_basic(*t.children[b], size_of);
        return s;
    }
    case Kind::Resized:
        return sum_basic(*t.child, size_of);
    }
    return 0;
}

/// The predefined type a basic value of type `b` (a Builtin the walk
/// visits) is: itself, or the type a duplicate or Fortran kind type copies.
inline const Datatype& basic_of(const Datatype& b) { return b.basic != nullptr ? *b.basic : b; }

}  // namespace shmpi::dtype
