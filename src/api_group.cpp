// C boundary: process groups.
#include <span>

#include <fmt/format.h>

#include "api_comm.hpp"
#include "api_common.hpp"

using namespace shmpi;
using namespace shmpi::api;

namespace shmpi::api {
namespace {

/// The one empty group behind MPI_GROUP_EMPTY; never freed.
Group& empty_group() {
    static Group* g = new Group({});
    return *g;
}

void check_n(int n, const char* fn) {
    if (n < 0) throw MpiError(MPI_ERR_ARG, fmt::format("{}: n = {} is negative", fn, n));
}

/// MPI_Group_union, _intersection and _difference: check both groups and
/// the output, then store the handle of `op(group1, group2)`.
template <class Op>
int set_operation(const char* fn, MPI_Group group1, MPI_Group group2, MPI_Group* newgroup, Op op) {
    return guard(MPI_COMM_WORLD, fn, [&] {
        Group& a = group_of(group1, fn, "group1");
        Group& b = group_of(group2, fn, "group2");
        need_new(newgroup, MPI_GROUP_NULL, "newgroup", fn);
        *newgroup = group_handle(op(a, b));
    });
}

/// MPI_Group_incl and _excl: check the group, the list of n ranks and the
/// output, then store the handle of `op(group, ranks)`.
template <class Op>
int rank_list_operation(const char* fn, MPI_Group group, int n, const int ranks[], MPI_Group* newgroup, Op op) {
    return guard(MPI_COMM_WORLD, fn, [&] {
        Group& g = group_of(group, fn);
        check_n(n, fn);
        if (n > 0) need(ranks, "ranks", fn);
        need_new(newgroup, MPI_GROUP_NULL, "newgroup", fn);
        *newgroup = group_handle(op(g, std::span<const int>(ranks, static_cast<std::size_t>(n))));
    });
}

}  // namespace

Group& group_of(MPI_Group handle, const char* fn, const char* arg) {
    running(fn);
    if (handle == MPI_GROUP_EMPTY) return empty_group();
    if (handle == MPI_GROUP_NULL) throw MpiError(MPI_ERR_GROUP, fmt::format("{}: {} is MPI_GROUP_NULL", fn, arg));
    const auto v = reinterpret_cast<std::uintptr_t>(handle);
    const bool readable = v >= kPredefinedLimit && HandleStorage::may_read_as<Group>(handle);
    if (!readable || reinterpret_cast<const Group*>(handle)->magic() != Group::kMagic) {
        const bool freed = readable && reinterpret_cast<const Group*>(handle)->magic() == kFreedMagic;
        throw MpiError(MPI_ERR_GROUP, fmt::format("{}: {} is not a valid group ({:#x}{})", fn, arg, v,
                                                  freed ? ": it has been freed" : ""));
    }
    return *reinterpret_cast<Group*>(handle);
}

MPI_Group group_handle(std::vector<std::uint32_t> world) {
    if (world.empty()) return MPI_GROUP_EMPTY;
    return reinterpret_cast<MPI_Group>(new Group(std::move(world)));
}

}  // namespace shmpi::api

extern "C" {

int PMPI_Group_size(MPI_Group group, int* size) {
    const char* fn = "MPI_Group_size";
    return guard(MPI_COMM_WORLD, fn, [&] {
        Group& g = group_of(group, fn);
        need(size, "size", fn);
        *size = g.size();
    });
}
SHMPI_WEAK_ALIAS(Group_size);

int PMPI_Group_rank(MPI_Group group, int* rank) {
    const char* fn = "MPI_Group_rank";
    return guard(MPI_COMM_WORLD, fn, [&] {
        Group& g = group_of(group, fn);
        need(rank, "rank", fn);
        *rank = g.rank_of_world(static_cast<std::uint32_t>(runtime().world().rank()));
    });
}
SHMPI_WEAK_ALIAS(Group_rank);

int PMPI_Group_incl(MPI_Group group, int n, const int ranks[], MPI_Group* newgroup) {
    return rank_list_operation("MPI_Group_incl", group, n, ranks, newgroup,
                               [](const Group& g, std::span<const int> r) { return g.incl(r, "MPI_Group_incl"); });
}
SHMPI_WEAK_ALIAS(Group_incl);

int PMPI_Group_excl(MPI_Group group, int n, const int ranks[], MPI_Group* newgroup) {
    return rank_list_operation("MPI_Group_excl", group, n, ranks, newgroup,
                               [](const Group& g, std::span<const int> r) { return g.excl(r, "MPI_Group_excl"); });
}
SHMPI_WEAK_ALIAS(Group_excl);

int PMPI_Group_range_incl(MPI_Group group, int n, int ranges[][3], MPI_Group* newgroup) {
    const char* fn = "MPI_Group_range_incl";
    return guard(MPI_COMM_WORLD, fn, [&] {
        Group& g = group_of(group, fn);
        check_n(n, fn);
        if (n > 0) need(ranges, "ranges", fn);
        need_new(newgroup, MPI_GROUP_NULL, "newgroup", fn);
        const std::vector<int> ranks = g.expand_ranges({ranges, static_cast<std::size_t>(n)}, fn);
        *newgroup = group_handle(g.incl(ranks, fn));
    });
}
SHMPI_WEAK_ALIAS(Group_range_incl);

int PMPI_Group_range_excl(MPI_Group group, int n, int ranges[][3], MPI_Group* newgroup) {
    const char* fn = "MPI_Group_range_excl";
    return guard(MPI_COMM_WORLD, fn, [&] {
        Group& g = group_of(group, fn);
        check_n(n, fn);
        if (n > 0) need(ranges, "ranges", fn);
        need_new(newgroup, MPI_GROUP_NULL, "newgroup", fn);
        const std::vector<int> ranks = g.expand_ranges({ranges, static_cast<std::size_t>(n)}, fn);
        *newgroup = group_handle(g.excl(ranks, fn));
    });
}
SHMPI_WEAK_ALIAS(Group_range_excl);

int PMPI_Group_union(MPI_Group group1, MPI_Group group2, MPI_Group* newgroup) {
    return set_operation("MPI_Group_union", group1, group2, newgroup, Group::set_union);
}
SHMPI_WEAK_ALIAS(Group_union);

int PMPI_Group_intersection(MPI_Group group1, MPI_Group group2, MPI_Group* newgroup) {
    return set_operation("MPI_Group_intersection", group1, group2, newgroup, Group::set_intersection);
}
SHMPI_WEAK_ALIAS(Group_intersection);

int PMPI_Group_difference(MPI_Group group1, MPI_Group group2, MPI_Group* newgroup) {
    return set_operation("MPI_Group_difference", group1, group2, newgroup, Group::set_difference);
}
SHMPI_WEAK_ALIAS(Group_difference);

int PMPI_Group_translate_ranks(MPI_Group group1, int n, const int ranks1[], MPI_Group group2, int ranks2[]) {
    const char* fn = "MPI_Group_translate_ranks";
    return guard(MPI_COMM_WORLD, fn, [&] {
        Group& a = group_of(group1, fn, "group1");
        Group& b = group_of(group2, fn, "group2");
        check_n(n, fn);
        if (n == 0) return;
        need(ranks1, "ranks1", fn);
        need(ranks2, "ranks2", fn);
        for (int i = 0; i < n; ++i) {
            const int r = ranks1[i];
            if (r == MPI_PROC_NULL) continue;
            if (r < 0 || r >= a.size()) {
                throw MpiError(MPI_ERR_RANK, fmt::format("{}: ranks1[{}] = {} is not a rank of group1 (size {})",
                                                         fn, i, r, a.size()));
            }
        }
        for (int i = 0; i < n; ++i) {
            const int r = ranks1[i];
            ranks2[i] = r == MPI_PROC_NULL ? MPI_PROC_NULL : b.rank_of_world(a.world_rank(r));
        }
    });
}
SHMPI_WEAK_ALIAS(Group_translate_ranks);

int PMPI_Group_compare(MPI_Group group1, MPI_Group group2, int* result) {
    const char* fn = "MPI_Group_compare";
    return guard(MPI_COMM_WORLD, fn, [&] {
        Group& a = group_of(group1, fn, "group1");
        Group& b = group_of(group2, fn, "group2");
        need(result, "result", fn);
        *result = Group::compare(a, b);
    });
}
SHMPI_WEAK_ALIAS(Group_compare);

int PMPI_Group_free(MPI_Group* group) {
    const char* fn = "MPI_Group_free";
    return guard(MPI_COMM_WORLD, fn, [&] {
        need(group, "group", fn);
        Group& g = group_of(*group, fn);
        // MPI_GROUP_EMPTY is predefined: freeing it only clears the handle.
        if (*group != MPI_GROUP_EMPTY && g.release()) delete &g;
        *group = MPI_GROUP_NULL;
    });
}
SHMPI_WEAK_ALIAS(Group_free);

}  // extern "C"
