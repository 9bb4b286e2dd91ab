// C boundary: communicators (queries, construction, comparison, names).
#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <numeric>
#include <optional>

#include "api_comm.hpp"
#include "api_common.hpp"
#include "api_info.hpp"
#include "comm_create.hpp"

using namespace shmpi;
using namespace shmpi::api;

namespace shmpi::api {

MPI_Comm comm_handle(std::unique_ptr<Communicator> c) {
    if (!c) return MPI_COMM_NULL;
    return reinterpret_cast<MPI_Comm>(c.release());
}

bool add_comm_hold(MPI_Comm comm) {
    if (comm == MPI_COMM_WORLD || comm == MPI_COMM_SELF || comm == MPI_COMM_NULL) return false;
    reinterpret_cast<Communicator*>(comm)->add_hold();
    return true;
}

void drop_comm_hold(MPI_Comm comm) {
    auto* c = reinterpret_cast<Communicator*>(comm);
    if (c->drop_hold() == 0 && c->lingering()) {
        // MPI_Comm_free ran its attribute callbacks already.
        release(c->errhandler());
        delete c;
    }
}

void hold_comm(p2p::Request& r, MPI_Comm comm) {
    r.comm_handle = comm;
    r.holds_comm = add_comm_hold(comm);
}

void drop_comm(p2p::Request& r) {
    if (!r.holds_comm) return;
    r.holds_comm = false;
    drop_comm_hold(r.comm_handle);
}

MPI_Comm handle_of(Communicator& c) {
    Runtime& rt = runtime();
    if (&c == &rt.world()) return MPI_COMM_WORLD;
    if (&c == &rt.self()) return MPI_COMM_SELF;
    return reinterpret_cast<MPI_Comm>(&c);
}

}  // namespace shmpi::api

namespace {

/// Deletes a communicator the user made: attributes first (their delete
/// callbacks may fail, and then nothing is freed), then its reference on
/// the error handler.  While requests still hold it (hold_comm()), it only
/// lingers, and the last drop_comm() deletes it.
void destroy(Communicator* c, MPI_Comm handle, const char* fn) {
    c->attributes().clear(handle, fn);
    if (c->holds() > 0) {
        c->linger();
        return;
    }
    release(c->errhandler());
    delete c;
}

/// The calls defined on intercommunicators only: an intracommunicator is
/// MPI_ERR_COMM.
Communicator& inter_of(MPI_Comm handle, const char* fn) {
    Communicator& c = comm_of(handle, fn);
    if (!c.inter()) {
        throw MpiError(MPI_ERR_COMM,
                       fmt::format("{}: {} is an intracommunicator; {} needs an intercommunicator", fn,
                                   handle == MPI_COMM_WORLD  ? std::string("MPI_COMM_WORLD")
                                   : handle == MPI_COMM_SELF ? std::string("MPI_COMM_SELF")
                                                             : c.label(),
                                   fn));
    }
    return c;
}

/// MPI_Comm_create and MPI_Comm_create_group: the group must be a subset of
/// the communicator's.  Returns each group member's rank in `c` (in the
/// local group, for an intercommunicator).
std::vector<int> check_subset(const Communicator& c, const Group& g, const char* fn) {
    std::vector<int> ranks(static_cast<std::size_t>(g.size()));
    for (int r = 0; r < g.size(); ++r) {
        const std::uint32_t w = g.world_rank(r);
        const auto at = std::find(c.world_ranks().begin(), c.world_ranks().end(), w);
        if (at == c.world_ranks().end()) {
            throw MpiError(MPI_ERR_GROUP,
                           fmt::format("{}: group rank {} (world rank {}) is not in the communicator", fn, r, w));
        }
        ranks[static_cast<std::size_t>(r)] = static_cast<int>(at - c.world_ranks().begin());
    }
    return ranks;
}

/// MPI_Comm_dup and MPI_Comm_dup_with_info.
void dup(MPI_Comm comm, MPI_Comm* newcomm, const char* fn) {
    Communicator& c = comm_of(comm, fn);
    need_new(newcomm, MPI_COMM_NULL, "newcomm", fn);
    // 1. Same members, same order, a new context (collective).
    std::unique_ptr<Communicator> d;
    if (c.inter()) {
        d = dup_inter(c);
    } else {
        std::vector<int> members(static_cast<std::size_t>(c.size()));
        std::iota(members.begin(), members.end(), 0);
        d = create_from_members(c, members);
    }
    // 2. What a duplicate inherits besides the error handler.
    d->set_topology(c.topology());
    Communicator* raw = d.release();
    const MPI_Comm h = reinterpret_cast<MPI_Comm>(raw);
    try {
        c.attributes().copy_into(handle_of(c), raw->attributes(), h, fn);
    } catch (...) {
        release(raw->errhandler());
        delete raw;
        *newcomm = MPI_COMM_NULL;
        throw;
    }
    *newcomm = h;
}

}  // namespace

extern "C" {

int PMPI_Comm_rank(MPI_Comm comm, int* rank) {
    const char* fn = "MPI_Comm_rank";
    return guard(comm, fn, [&] {
        Communicator& c = comm_of(comm, fn);
        if (rank == nullptr) throw MpiError(MPI_ERR_ARG, "MPI_Comm_rank: rank is NULL");
        *rank = c.rank();
    });
}
SHMPI_WEAK_ALIAS(Comm_rank);

int PMPI_Comm_size(MPI_Comm comm, int* size) {
    const char* fn = "MPI_Comm_size";
    return guard(comm, fn, [&] {
        Communicator& c = comm_of(comm, fn);
        if (size == nullptr) throw MpiError(MPI_ERR_ARG, "MPI_Comm_size: size is NULL");
        *size = c.size();
    });
}
SHMPI_WEAK_ALIAS(Comm_size);

int PMPI_Comm_dup(MPI_Comm comm, MPI_Comm* newcomm) {
    const char* fn = "MPI_Comm_dup";
    return guard(comm, fn, [&] { dup(comm, newcomm, fn); });
}
SHMPI_WEAK_ALIAS(Comm_dup);

int PMPI_Comm_dup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm* newcomm) {
    const char* fn = "MPI_Comm_dup_with_info";
    return guard(comm, fn, [&] {
        check_info_arg(info, fn);  // checked; no hints are used
        dup(comm, newcomm, fn);
    });
}
SHMPI_WEAK_ALIAS(Comm_dup_with_info);

int PMPI_Comm_idup(MPI_Comm comm, MPI_Comm* newcomm, MPI_Request* request) {
    const char* fn = "MPI_Comm_idup";
    return guard(comm, fn, [&] {
        Communicator& c = comm_of(comm, fn);
        need_new(newcomm, MPI_COMM_NULL, "newcomm", fn);
        need(request, "request", fn);
        // The duplicate's attributes are the parent's at this call, as
        // MPI_Comm_dup's are at its.  A failing copy callback fails this
        // member's duplicate only, reported by the request, which still
        // takes part so that no member waits for it.
        std::unique_ptr<Communicator> child = idup_child(c);
        std::optional<MpiError> failed;
        try {
            c.attributes().copy_into(handle_of(c), child->attributes(),
                                     reinterpret_cast<MPI_Comm>(child.get()), fn);
        } catch (const MpiError& e) {
            failed = e;
        } catch (const std::bad_alloc&) {
            failed = MpiError(MPI_ERR_NO_MEM, std::string(fn) + ": out of memory");
        }
        // *newcomm is written when the request completes (inside a wait or
        // test, or any call that moves the engine on).
        p2p::Task* t =
            start_idup(c, std::move(child), std::move(failed),
                       [newcomm](std::unique_ptr<Communicator> d) { *newcomm = comm_handle(std::move(d)); });
        t->origin = fn;
        p2p::Request* r = t;  // the handle is the Request part (see finish())
        hold_comm(*r, comm);
        *request = reinterpret_cast<MPI_Request>(r);
    });
}
SHMPI_WEAK_ALIAS(Comm_idup);

int PMPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm* newcomm) {
    const char* fn = "MPI_Comm_split";
    return guard(comm, fn, [&] {
        Communicator& c = comm_of(comm, fn);
        need_new(newcomm, MPI_COMM_NULL, "newcomm", fn);
        *newcomm = comm_handle(c.inter() ? split_inter(c, color, key) : split(c, color, key));
    });
}
SHMPI_WEAK_ALIAS(Comm_split);

int PMPI_Comm_split_type(MPI_Comm comm, int split_type, int key, MPI_Info info, MPI_Comm* newcomm) {
    const char* fn = "MPI_Comm_split_type";
    return guard(comm, fn, [&] {
        Communicator& c = intracomm_of(comm, fn);
        need_new(newcomm, MPI_COMM_NULL, "newcomm", fn);
        check_info_arg(info, fn);  // checked; no hints are used
        if (split_type != MPI_COMM_TYPE_SHARED && split_type != MPI_UNDEFINED) {
            throw MpiError(MPI_ERR_ARG, fmt::format("{}: split_type {} is not MPI_COMM_TYPE_SHARED or "
                                                    "MPI_UNDEFINED",
                                                    fn, split_type));
        }
        // Every rank of a job shares this machine's memory: one color.
        *newcomm = comm_handle(split(c, split_type == MPI_UNDEFINED ? MPI_UNDEFINED : 0, key));
    });
}
SHMPI_WEAK_ALIAS(Comm_split_type);

int PMPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm* newcomm) {
    const char* fn = "MPI_Comm_create";
    return guard(comm, fn, [&] {
        Communicator& c = comm_of(comm, fn);
        Group& g = group_of(group, fn);
        need_new(newcomm, MPI_COMM_NULL, "newcomm", fn);
        check_subset(c, g, fn);  // on an intercommunicator, of the local group
        int my_rank = MPI_UNDEFINED;
        std::uint32_t lowest = UINT32_MAX;
        for (int r = 0; r < g.size(); ++r) {
            const std::uint32_t w = g.world_rank(r);
            if (w == c.world_rank(c.rank())) my_rank = r;
            lowest = std::min(lowest, w);
        }
        if (c.inter()) {
            // Each group names its side (MPI-3.1 6.4.2): one color.
            *newcomm = comm_handle(split_inter(c, my_rank == MPI_UNDEFINED ? MPI_UNDEFINED : 0, my_rank));
            return;
        }
        // A split with one color per group (its lowest world rank), ordered
        // by group rank: this also serves MPI-2.2's disjoint groups.
        const int color = my_rank == MPI_UNDEFINED ? MPI_UNDEFINED : static_cast<int>(lowest);
        *newcomm = comm_handle(split(c, color, my_rank));
    });
}
SHMPI_WEAK_ALIAS(Comm_create);

int PMPI_Comm_create_group(MPI_Comm comm, MPI_Group group, int tag, MPI_Comm* newcomm) {
    const char* fn = "MPI_Comm_create_group";
    return guard(comm, fn, [&] {
        Communicator& c = intracomm_of(comm, fn);
        Group& g = group_of(group, fn);
        check_send_tag(tag, fn);
        need_new(newcomm, MPI_COMM_NULL, "newcomm", fn);
        const std::vector<int> members = check_subset(c, g, fn);
        // Only the group's members call; a process outside it gets
        // MPI_COMM_NULL at once (as with MPICH).
        *newcomm = comm_handle(create_group(c, members, tag));
    });
}
SHMPI_WEAK_ALIAS(Comm_create_group);

int PMPI_Comm_free(MPI_Comm* comm) {
    const char* fn = "MPI_Comm_free";
    return guard(comm != nullptr ? *comm : MPI_COMM_WORLD, fn, [&] {
        need(comm, "comm", fn);
        Communicator& c = comm_of(*comm, fn);
        if (*comm == MPI_COMM_WORLD || *comm == MPI_COMM_SELF) {
            throw MpiError(MPI_ERR_COMM, fmt::format("{}: {} is predefined and cannot be freed", fn, c.name()));
        }
        destroy(&c, *comm, fn);
        *comm = MPI_COMM_NULL;
    });
}
SHMPI_WEAK_ALIAS(Comm_free);

int PMPI_Comm_compare(MPI_Comm comm1, MPI_Comm comm2, int* result) {
    const char* fn = "MPI_Comm_compare";
    return guard(comm1, fn, [&] {
        Communicator& a = comm_of(comm1, fn);
        Communicator& b = comm_of(comm2, fn);
        need(result, "result", fn);
        if (&a == &b) {
            *result = MPI_IDENT;
            return;
        }
        // An intercommunicator compares both its groups (MPI-3.1 6.6.1);
        // it is never like an intracommunicator.
        if (a.inter() != b.inter()) {
            *result = MPI_UNEQUAL;
            return;
        }
        if (a.world_ranks() == b.world_ranks() && a.peers() == b.peers()) {
            *result = MPI_CONGRUENT;
            return;
        }
        const auto same_members = [](std::vector<std::uint32_t> x, std::vector<std::uint32_t> y) {
            std::sort(x.begin(), x.end());
            std::sort(y.begin(), y.end());
            return x == y;
        };
        const bool similar =
            same_members(a.world_ranks(), b.world_ranks()) && same_members(a.peers(), b.peers());
        *result = similar ? MPI_SIMILAR : MPI_UNEQUAL;
    });
}
SHMPI_WEAK_ALIAS(Comm_compare);

int PMPI_Comm_group(MPI_Comm comm, MPI_Group* group) {
    const char* fn = "MPI_Comm_group";
    return guard(comm, fn, [&] {
        Communicator& c = comm_of(comm, fn);
        need_new(group, MPI_GROUP_NULL, "group", fn);
        *group = group_handle(c.world_ranks());
    });
}
SHMPI_WEAK_ALIAS(Comm_group);

int PMPI_Comm_test_inter(MPI_Comm comm, int* flag) {
    const char* fn = "MPI_Comm_test_inter";
    return guard(comm, fn, [&] {
        const Communicator& c = comm_of(comm, fn);
        need(flag, "flag", fn);
        *flag = c.inter() ? 1 : 0;
    });
}
SHMPI_WEAK_ALIAS(Comm_test_inter);

int PMPI_Comm_remote_size(MPI_Comm comm, int* size) {
    const char* fn = "MPI_Comm_remote_size";
    return guard(comm, fn, [&] {
        const Communicator& c = inter_of(comm, fn);
        need(size, "size", fn);
        *size = c.peer_count();
    });
}
SHMPI_WEAK_ALIAS(Comm_remote_size);

int PMPI_Comm_remote_group(MPI_Comm comm, MPI_Group* group) {
    const char* fn = "MPI_Comm_remote_group";
    return guard(comm, fn, [&] {
        const Communicator& c = inter_of(comm, fn);
        need_new(group, MPI_GROUP_NULL, "group", fn);
        *group = group_handle(c.peers());
    });
}
SHMPI_WEAK_ALIAS(Comm_remote_group);

int PMPI_Intercomm_create(MPI_Comm local_comm, int local_leader, MPI_Comm peer_comm, int remote_leader,
                          int tag, MPI_Comm* newintercomm) {
    const char* fn = "MPI_Intercomm_create";
    return guard(local_comm, fn, [&] {
        Communicator& local = intracomm_of(local_comm, fn);
        need_new(newintercomm, MPI_COMM_NULL, "newintercomm", fn);
        // peer_comm matters at the local leader only (MPI-3.1 6.6.2), and
        // there the leader checks it before telling its group.
        // A bad one there is still told to the group, so nobody waits.
        Communicator* peer = nullptr;
        std::optional<MpiError> peer_error;
        if (local.rank() == local_leader && peer_comm != MPI_COMM_NULL) {
            try {
                peer = &comm_of(peer_comm, fn);
            } catch (const MpiError& e) {
                peer_error = e;
            }
        }
        *newintercomm = comm_handle(intercomm_create(local, local_leader, peer, remote_leader, tag,
                                                     peer_error ? &*peer_error : nullptr));
    });
}
SHMPI_WEAK_ALIAS(Intercomm_create);

int PMPI_Intercomm_merge(MPI_Comm intercomm, int high, MPI_Comm* newintracomm) {
    const char* fn = "MPI_Intercomm_merge";
    return guard(intercomm, fn, [&] {
        Communicator& c = inter_of(intercomm, fn);
        need_new(newintracomm, MPI_COMM_NULL, "newintracomm", fn);
        *newintracomm = comm_handle(intercomm_merge(c, high != 0));
    });
}
SHMPI_WEAK_ALIAS(Intercomm_merge);

int PMPI_Comm_get_parent(MPI_Comm* parent) {
    const char* fn = "MPI_Comm_get_parent";
    return guard(MPI_COMM_WORLD, fn, [&] {
        running(fn);
        need(parent, "parent", fn);
        // Programs ask to learn whether MPI_Comm_spawn started them; shmpi
        // spawns nothing, so no process has a parent (MPI-3.1 10.3.2).
        *parent = MPI_COMM_NULL;
    });
}
SHMPI_WEAK_ALIAS(Comm_get_parent);

int PMPI_Comm_set_name(MPI_Comm comm, const char* comm_name) {
    const char* fn = "MPI_Comm_set_name";
    return guard(comm, fn, [&] {
        Communicator& c = comm_of(comm, fn);
        need(comm_name, "comm_name", fn);
        // Longer names are cut to what MPI_Comm_get_name can return.
        c.set_name(std::string(comm_name, strnlen(comm_name, MPI_MAX_OBJECT_NAME - 1)));
    });
}
SHMPI_WEAK_ALIAS(Comm_set_name);

int PMPI_Comm_get_name(MPI_Comm comm, char* comm_name, int* resultlen) {
    const char* fn = "MPI_Comm_get_name";
    return guard(comm, fn, [&] {
        Communicator& c = comm_of(comm, fn);
        need(comm_name, "comm_name", fn);
        need(resultlen, "resultlen", fn);
        const std::size_t n = std::min<std::size_t>(c.name().size(), MPI_MAX_OBJECT_NAME - 1);
        std::memcpy(comm_name, c.name().data(), n);
        comm_name[n] = '\0';
        *resultlen = static_cast<int>(n);
    });
}
SHMPI_WEAK_ALIAS(Comm_get_name);

}  // extern "C"
