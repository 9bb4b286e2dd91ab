#include "group.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <unordered_set>

#include "errors.hpp"

namespace shmpi {

int Group::rank_of_world(std::uint32_t w) const {
    for (std::size_t r = 0; r < world_.size(); ++r) {
        if (world_[r] == w) return static_cast<int>(r);
    }
    return MPI_UNDEFINED;
}

namespace {

/// Marks each listed rank; MPI_ERR_RANK for one out of range or repeated.
std::vector<char> mark(const Group& g, std::span<const int> ranks, const char* fn) {
    std::vector<char> seen(static_cast<std::size_t>(g.size()), 0);
    for (std::size_t i = 0; i < ranks.size(); ++i) {
        const int r = ranks[i];
        if (r < 0 || r >= g.size()) {
            throw MpiError(MPI_ERR_RANK, fmt::format("{}: ranks[{}] = {} is not a rank of the group (size {})", fn,
                                                     i, r, g.size()));
        }
        if (seen[static_cast<std::size_t>(r)]++ != 0) {
            throw MpiError(MPI_ERR_RANK, fmt::format("{}: ranks[{}] = {} is listed twice", fn, i, r));
        }
    }
    return seen;
}

std::unordered_set<std::uint32_t> as_set(const Group& g) {
    return {g.world_ranks().begin(), g.world_ranks().end()};
}

}  // namespace

std::vector<std::uint32_t> Group::incl(std::span<const int> ranks, const char* fn) const {
    mark(*this, ranks, fn);
    std::vector<std::uint32_t> out;
    out.reserve(ranks.size());
    for (int r : ranks) out.push_back(world_rank(r));
    return out;
}

std::vector<std::uint32_t> Group::excl(std::span<const int> ranks, const char* fn) const {
    const std::vector<char> seen = mark(*this, ranks, fn);
    std::vector<std::uint32_t> out;
    for (int r = 0; r < size(); ++r) {
        if (seen[static_cast<std::size_t>(r)] == 0) out.push_back(world_rank(r));
    }
    return out;
}

std::vector<int> Group::expand_ranges(std::span<const int[3]> ranges, const char* fn) const {
    std::vector<int> out;
    for (std::size_t i = 0; i < ranges.size(); ++i) {
        const int first = ranges[i][0], last = ranges[i][1], stride = ranges[i][2];
        if (stride == 0) {
            throw MpiError(MPI_ERR_ARG, fmt::format("{}: ranges[{}] = ({}, {}, {}) has stride 0", fn, i, first,
                                                    last, stride));
        }
        // The standard asks that every computed rank be a rank of the group, not last itself:
        // (0, 5, 4) in a group of 5 is ranks 0 and 4.  The computed ranks run monotonically from
        // first to the last one, so those two decide, before anything is generated.
        const bool empty = (stride > 0 && first > last) || (stride < 0 && first < last);
        const std::int64_t final_rank =
            empty ? first
                  : first + (static_cast<std::int64_t>(last) - first) / stride * static_cast<std::int64_t>(stride);
        for (std::int64_t r : {static_cast<std::int64_t>(first), final_rank}) {
            if (r < 0 || r >= size()) {
                throw MpiError(MPI_ERR_RANK,
                               fmt::format("{}: ranges[{}] = ({}, {}, {}) names rank {}, not a rank of the group "
                                           "(size {})",
                                           fn, i, first, last, stride, r, size()));
            }
        }
        if (empty) continue;  // a triplet that names no rank
        for (std::int64_t r = first; stride > 0 ? r <= final_rank : r >= final_rank; r += stride) {
            out.push_back(static_cast<int>(r));
        }
    }
    mark(*this, out, fn);  // a rank named by two triplets
    return out;
}

int Group::compare(const Group& a, const Group& b) {
    if (&a == &b || a.world_ == b.world_) return MPI_IDENT;
    if (a.size() != b.size()) return MPI_UNEQUAL;
    std::vector<std::uint32_t> x = a.world_, y = b.world_;
    std::sort(x.begin(), x.end());
    std::sort(y.begin(), y.end());
    return x == y ? MPI_SIMILAR : MPI_UNEQUAL;
}

std::vector<std::uint32_t> Group::set_union(const Group& a, const Group& b) {
    std::vector<std::uint32_t> out = a.world_;
    const auto in_a = as_set(a);
    for (std::uint32_t w : b.world_) {
        if (in_a.count(w) == 0) out.push_back(w);
    }
    return out;
}

std::vector<std::uint32_t> Group::set_intersection(const Group& a, const Group& b) {
    const auto in_b = as_set(b);
    std::vector<std::uint32_t> out;
    for (std::uint32_t w : a.world_) {
        if (in_b.count(w) != 0) out.push_back(w);
    }
    return out;
}

std::vector<std::uint32_t> Group::set_difference(const Group& a, const Group& b) {
    const auto in_b = as_set(b);
    std::vector<std::uint32_t> out;
    for (std::uint32_t w : a.world_) {
        if (in_b.count(w) == 0) out.push_back(w);
    }
    return out;
}

}  // namespace shmpi
