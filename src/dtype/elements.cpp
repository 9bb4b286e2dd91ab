// MPI_Get_count and MPI_Get_elements: how many elements, or basic
// elements, a number of received bytes holds; and the inverse for
// MPI_Status_set_elements: how many bytes hold a number of basic elements.
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

std::int64_t leading_bytes(const Datatype& t, std::int64_t k);

/// Bytes of the first `k` basic elements of a run of copies of `t`.
std::int64_t run_bytes(const Datatype& t, std::int64_t k) {
    if (k == 0) return 0;
    return (k / t.elements) * t.size + leading_bytes(t, k % t.elements);
}

/// Bytes of the first `k` basic elements of one element's stream, for
/// 0 <= k < t.elements: the inverse of partial_elements(), walking the same
/// normalised layout, so that partial_elements(t, leading_bytes(t, k)) == k.
std::int64_t leading_bytes(const Datatype& t, std::int64_t k) {
    if (k == 0) return 0;
    switch (t.kind) {
    case Kind::Builtin:
    case Kind::Marker: return 0;  // a builtin has 1 element, a marker none: k is 0
    case Kind::Vector: {
        const Datatype& c = *t.child;
        const std::int64_t per_block = t.blocklen * c.elements;
        return (k / per_block) * t.blocklen * c.size + run_bytes(c, k % per_block);
    }
    case Kind::Blocks:
    case Kind::Struct: {
        std::int64_t bytes = 0;
        for (std::int64_t b = 0; b < t.count; ++b) {
            const auto i = static_cast<std::size_t>(b);
            const Datatype& c = t.kind == Kind::Struct ? *t.children[i] : *t.child;
            const std::int64_t here = t.blocklens[i] * c.elements;
            if (k < here) return bytes + run_bytes(c, k);
            k -= here;
            bytes += t.prefix[i + 1] - t.prefix[i];
        }
        return bytes;
    }
    case Kind::Resized: return leading_bytes(*t.child, k);
    }
    return 0;
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

std::int64_t bytes_of_elements(const Datatype& type, std::int64_t elements) {
    if (elements == 0) return 0;
    // Whole elements, then the leading basic elements of one more, which
    // take fewer than `type.size` bytes (and at least one: a basic element
    // has data), so count_in() says MPI_UNDEFINED unless there are none.
    std::int64_t bytes = 0;
    if (__builtin_mul_overflow(elements / type.elements, type.size, &bytes) ||
        __builtin_add_overflow(bytes, leading_bytes(type, elements % type.elements), &bytes)) {
        return -1;
    }
    return bytes;
}

}  // namespace shmpi::dtype
