#include "comm_create.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "api_common.hpp"
#include "coll/linear.hpp"
#include "errors.hpp"
#include "runtime.hpp"

namespace shmpi {
namespace {

/// Contexts stay below this: coll_context() sets the top bit.
constexpr std::uint32_t kContextLimit = 0x7fffffffu;

void max_u32(const void* in, void* inout, std::int64_t count, const void* /*state*/) {
    const auto* a = static_cast<const std::uint32_t*>(in);
    auto* b = static_cast<std::uint32_t*>(inout);
    for (std::int64_t i = 0; i < count; ++i) b[i] = std::max(a[i], b[i]);
}

/// Takes `agreed` (the largest next_context of the parent's members) as a
/// new context, and moves this process's counter past it.
std::uint32_t take_context(std::uint32_t agreed, const char* fn) {
    if (agreed >= kContextLimit) {
        throw MpiError(MPI_ERR_INTERN, fmt::format("{}: out of context ids (every one up to {:#x} is taken)",
                                                   fn, kContextLimit));
    }
    api::runtime().next_context() = agreed + 1;
    return agreed;
}

std::unique_ptr<Communicator> make(Communicator& parent, std::uint32_t context,
                                   std::vector<std::uint32_t> world, int my_rank) {
    auto c = std::make_unique<Communicator>(parent.engine(), context, std::move(world), my_rank, "");
    c->set_errhandler(parent.errhandler());
    api::retain(parent.errhandler());  // dropped by MPI_Comm_free
    return c;
}

}  // namespace

std::unique_ptr<Communicator> create_from_members(Communicator& parent, std::span<const int> members) {
    const char* fn = "create_from_members";
    // 1. Check the list (the same on every rank, so all throw together).
    const int n = parent.size();
    std::vector<char> seen(static_cast<std::size_t>(n), 0);
    int my_rank = -1;
    for (std::size_t i = 0; i < members.size(); ++i) {
        const int r = members[i];
        if (r < 0 || r >= n) {
            throw MpiError(MPI_ERR_RANK, fmt::format("{}: members[{}] = {} is not a rank of a communicator of size {}",
                                                     fn, i, r, n));
        }
        if (seen[static_cast<std::size_t>(r)]++ != 0) {
            throw MpiError(MPI_ERR_RANK, fmt::format("{}: rank {} is listed twice in members", fn, r));
        }
        if (r == parent.rank()) my_rank = static_cast<int>(i);
    }
    // 2. Agree on a context over the whole parent (non-members too: the
    //    collective is over the parent, and their counters move as well).
    const std::uint32_t mine = api::runtime().next_context();
    std::uint32_t agreed = 0;
    const coll::Reduction red{max_u32, nullptr, true, sizeof(std::uint32_t)};
    coll::allreduce_linear(parent.team(), &mine, &agreed, 1, red);
    const std::uint32_t context = take_context(agreed, fn);
    if (my_rank < 0) return nullptr;
    // 3. Build it: member i is parent rank members[i].
    std::vector<std::uint32_t> world(members.size());
    for (std::size_t i = 0; i < members.size(); ++i) world[i] = parent.world_rank(members[i]);
    return make(parent, context, std::move(world), my_rank);
}

std::unique_ptr<Communicator> split(Communicator& parent, int color, int key) {
    const char* fn = "MPI_Comm_split";
    // 1. Everyone learns everyone's (color, key, next_context): one allgather.
    struct Entry {
        std::int32_t color;
        std::int32_t key;
        std::uint32_t next_context;
    };
    const int n = parent.size();
    const Entry mine{color, key, api::runtime().next_context()};
    std::vector<Entry> all(static_cast<std::size_t>(n));
    coll::allgather_linear(parent.team(), &mine, sizeof(Entry), all.data());
    // 2. The context: the largest counter over the parent, shared by every
    //    color (their member sets are disjoint).
    std::uint32_t agreed = 0;
    for (const Entry& e : all) agreed = std::max(agreed, e.next_context);
    const std::uint32_t context = take_context(agreed, fn);
    if (color == MPI_UNDEFINED) return nullptr;
    if (color < 0) {
        throw MpiError(MPI_ERR_ARG,
                       fmt::format("{}: color {} is negative (must be >= 0 or MPI_UNDEFINED)", fn, color));
    }
    // 3. My color's members, by key, ties by parent rank.
    std::vector<int> members;
    for (int r = 0; r < n; ++r) {
        if (all[static_cast<std::size_t>(r)].color == color) members.push_back(r);
    }
    std::stable_sort(members.begin(), members.end(), [&](int a, int b) {
        return all[static_cast<std::size_t>(a)].key < all[static_cast<std::size_t>(b)].key;
    });
    std::vector<std::uint32_t> world(members.size());
    int my_rank = -1;
    for (std::size_t i = 0; i < members.size(); ++i) {
        world[i] = parent.world_rank(members[i]);
        if (members[i] == parent.rank()) my_rank = static_cast<int>(i);
    }
    return make(parent, context, std::move(world), my_rank);
}

}  // namespace shmpi
