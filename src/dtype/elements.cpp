// MPI_Get_count and MPI_Get_elements: how many elements, or basic
// elements, a number of received bytes holds.
#include <algorithm>

#include "dtype/datatype.hpp"

namespace shmpi::dtype {
namespace {

std::int64_t prefix_elements(const Datatype& t, std::int64_t n, std::int64_t bytes);

/// Basic elements in the first `bytes` bytes (bytes < size) of one
/// element's stream, or -1 when they end inside a basic element.
std::int64_t partial_elements(const Datatype& t, std::int64_t bytes) {
    if (bytes == 0) return 0;
    switch (t.kind) {
    case Kind::Builtin:
    case Kind::Marker: return -1;
    case Kind::Vector: {
        const Datatype& c = *t.child;
        const std::int64_t block = t.blocklen * c.size;
        const std::int64_t full = bytes / block;
        const std::int64_t rest = prefix_elements(c, t.blocklen, bytes % block);
        return rest < 0 ? -1 : full * t.blocklen * c.elements + rest;
    }
    case Kind::Blocks:
    case Kind::Struct: {
        std::int64_t n = 0;
        for (std::int64_t b = 0; b < t.count; ++b) {
            const auto k = static_cast<std::size_t>(b);
            const Datatype& c = t.kind == Kind::Struct ? *t.children[k] : *t.child;
            const std::int64_t here = t.prefix[k + 1] - t.prefix[k];
            if (bytes < here) {
                const std::int64_t rest = prefix_elements(c, t.blocklens[k], bytes);
                return rest < 0 ? -1 : n + rest;
            }
            n += t.blocklens[k] * c.elements;
            bytes -= here;
        }
        return bytes == 0 ? n : -1;
    }
    case Kind::Resized: return partial_elements(*t.child, bytes);
    }
    return -1;
}

/// Basic elements in the first `bytes` bytes of the stream of `n` elements.
std::int64_t prefix_elements(const Datatype& t, std::int64_t n, std::int64_t bytes) {
    if (t.size == 0) return 0;
    const std::int64_t whole = std::min(n, bytes / t.size);
    const std::int64_t rest = bytes - whole * t.size;
    if (rest == 0) return whole * t.elements;
    const std::int64_t more = partial_elements(t, rest);
    return more < 0 ? -1 : whole * t.elements + more;
}

}  // namespace

std::int64_t count_in(const Datatype& type, std::int64_t bytes) {
    if (type.size == 0) return 0;
    return bytes % type.size == 0 ? bytes / type.size : MPI_UNDEFINED;
}

std::int64_t elements_in(const Datatype& type, std::int64_t bytes) {
    if (type.size == 0) return 0;
    const std::int64_t whole = bytes / type.size;
    const std::int64_t more = partial_elements(type, bytes % type.size);
    return more < 0 ? MPI_UNDEFINED : whole * type.elements + more;
}

}  // namespace shmpi::dtype
