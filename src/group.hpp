// Process groups (MPI-3.1 chapter 6.3): an ordered set of processes, kept as
// their world ranks.  Group rank r is world rank world[r].  The set
// operations keep the order MPI prescribes (the first group's order, then
// the second's for union).
//
// Handles: a user group is a heap Group with a reference count (each handle
// the user holds is one reference; MPI_Group_free drops one);
// MPI_GROUP_EMPTY is a predefined handle for the one empty group.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <span>
#include <vector>

#include "handle_storage.hpp"

namespace shmpi {

class Group : public HandleStorage {
public:
    static constexpr std::uint32_t kMagic = 0x47525550;  // "GRUP"

    explicit Group(std::vector<std::uint32_t> world) : world_(std::move(world)) {}
    ~Group() { magic_ = 0; }
    Group(const Group&) = delete;
    Group& operator=(const Group&) = delete;

    std::uint32_t magic() const { return magic_; }
    int size() const { return static_cast<int>(world_.size()); }
    const std::vector<std::uint32_t>& world_ranks() const { return world_; }
    std::uint32_t world_rank(int r) const { return world_[static_cast<std::size_t>(r)]; }
    /// The group rank of world rank `w`, or MPI_UNDEFINED.
    int rank_of_world(std::uint32_t w) const;

    // ---- set operations; each throws MpiError naming `fn` on bad input ----
    /// MPI_Group_incl: ranks[i] of this group becomes rank i (MPI_ERR_RANK:
    /// out of range or repeated).
    std::vector<std::uint32_t> incl(std::span<const int> ranks, const char* fn) const;
    /// MPI_Group_excl: every rank but those listed, in order (MPI_ERR_RANK).
    std::vector<std::uint32_t> excl(std::span<const int> ranks, const char* fn) const;
    /// The ranks named by (first, last, stride) triplets, in order: the
    /// expansion both range calls share.  MPI_ERR_ARG for a zero stride,
    /// MPI_ERR_RANK for a rank out of range or named twice.
    std::vector<int> expand_ranges(std::span<const int[3]> ranges, const char* fn) const;

    /// MPI_IDENT, MPI_SIMILAR or MPI_UNEQUAL.
    static int compare(const Group& a, const Group& b);
    static std::vector<std::uint32_t> set_union(const Group& a, const Group& b);
    static std::vector<std::uint32_t> set_intersection(const Group& a, const Group& b);
    static std::vector<std::uint32_t> set_difference(const Group& a, const Group& b);

    /// Handle references (see the top of this file).
    void retain() { ++refs_; }
    /// Drops a reference; returns true when it was the last (delete it then).
    bool release() { return --refs_ == 0; }

private:
    std::uint32_t magic_ = kMagic;
    std::vector<std::uint32_t> world_;
    int refs_ = 1;
};

}  // namespace shmpi
