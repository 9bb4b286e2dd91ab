// The search behind MPI_Dims_create.
//
// 1. Check the fixed (positive) entries and divide nnodes by their product:
//    `rest` is what the k free entries must multiply to.
// 2. Search the non-increasing k-tuples of divisors of `rest` whose product
//    is `rest`, largest entry first, keeping the one with the smallest
//    spread (largest - smallest).  The smallest entry of any completion of a
//    partial tuple is at most the (k-j)-th root of what is left, which bounds
//    the spread from below and prunes the search; the largest entry is tried
//    in increasing order, so on equal spread the first found has the
//    smallest largest entry.
// 3. Write the tuple into the free entries, in order.
#include "topo/dims_create.hpp"

#include <fmt/format.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "errors.hpp"

namespace shmpi::topo {
namespace {

/// The largest r with r^k <= n.
std::int64_t int_root(std::int64_t n, int k) {
    if (k <= 1) return n;
    auto r = static_cast<std::int64_t>(std::pow(static_cast<double>(n), 1.0 / k));
    auto pow_le = [&](std::int64_t x) {
        std::int64_t p = 1;
        for (int i = 0; i < k; ++i) {
            if (p > n / x) return false;
            p *= x;
        }
        return p <= n;
    };
    while (r > 1 && !pow_le(r)) --r;
    while (pow_le(r + 1)) ++r;
    return r < 1 ? 1 : r;
}

struct Search {
    std::vector<std::int64_t> divisors;  // of the full `rest`, increasing
    std::vector<std::int64_t> current;
    std::vector<std::int64_t> best;
    std::int64_t best_spread = INT64_MAX;

    /// Places the entries of `current` from index j on: they multiply to
    /// `left` and none exceeds `cap`.
    void place(std::size_t j, std::size_t k, std::int64_t left, std::int64_t cap) {
        const auto parts = static_cast<int>(k - j);
        if (parts == 1) {
            if (left > cap) return;
            current[j] = left;
            const std::int64_t spread = current[0] - left;
            if (spread < best_spread) {
                best_spread = spread;
                best = current;
            }
            return;
        }
        // This entry is the largest of the rest: at least the parts-th root.
        const std::int64_t root = int_root(left, parts);
        for (const std::int64_t d : divisors) {
            if (d < root) continue;
            if (d > cap || d > left) break;
            if (left % d != 0) continue;
            const std::int64_t first = j == 0 ? d : current[0];
            // The smallest entry is at most the (parts-1)-th root of left/d.
            // Larger d only lowers that root, so the bound only grows.
            if (first - int_root(left / d, parts - 1) >= best_spread) break;
            current[j] = d;
            place(j + 1, k, left / d, d);
        }
    }
};

}  // namespace

void dims_create(int nnodes, std::span<int> dims, const char* fn) {
    // 1. Fixed entries.
    if (nnodes < 1) {
        throw MpiError(MPI_ERR_ARG, fmt::format("{}: nnodes is {} (must be at least 1)", fn, nnodes));
    }
    std::int64_t fixed = 1;
    std::size_t free_count = 0;
    for (std::size_t i = 0; i < dims.size(); ++i) {
        if (dims[i] < 0) {
            throw MpiError(MPI_ERR_DIMS, fmt::format("{}: dims[{}] is {} (must be 0 or positive)", fn, i, dims[i]));
        }
        if (dims[i] == 0) {
            ++free_count;
        } else {
            fixed *= dims[i];
            if (fixed > nnodes) break;  // cannot divide; reported below
        }
    }
    if (dims.empty() && nnodes != 1) {
        throw MpiError(MPI_ERR_DIMS,
                       fmt::format("{}: ndims is 0, and a grid of no dimensions has 1 node, not "
                                   "nnodes {}",
                                   fn, nnodes));
    }
    if (fixed > nnodes || nnodes % fixed != 0 || (free_count == 0 && fixed != nnodes)) {
        std::string given;
        for (std::size_t i = 0; i < dims.size(); ++i) given += fmt::format("{}{}", i == 0 ? "" : ",", dims[i]);
        throw MpiError(MPI_ERR_DIMS,
                       fmt::format("{}: nnodes {} is not {} the product of the fixed entries of dims ({})", fn,
                                   nnodes, free_count == 0 ? "equal to" : "a multiple of", given));
    }
    if (free_count == 0) return;
    const std::int64_t rest = nnodes / fixed;

    // 2. Search.
    Search s;
    for (std::int64_t d = 1; d * d <= rest; ++d) {
        if (rest % d == 0) s.divisors.push_back(d);
    }
    for (std::size_t i = s.divisors.size(); i-- > 0;) {
        const std::int64_t other = rest / s.divisors[i];
        if (other != s.divisors[i]) s.divisors.push_back(other);
    }
    s.current.assign(free_count, 1);
    s.place(0, free_count, rest, rest);

    // 3. Write back.
    std::size_t next = 0;
    for (int& d : dims) {
        if (d == 0) d = static_cast<int>(s.best[next++]);
    }
}

}  // namespace shmpi::topo
