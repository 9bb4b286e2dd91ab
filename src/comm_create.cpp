#include "comm_create.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "api_common.hpp"
#include "coll/linear.hpp"
#include "coll/schedule.hpp"
#include "coll/shm_team.hpp"
#include "errors.hpp"
#include "runtime.hpp"

namespace shmpi {
namespace {

// Agreed contexts stay below ContextIds::kEnd; the ones above come from
// the segment (Runtime::take_shared_context(), for MPI_Comm_idup), and
// contexts end at shm::kContextEnd: coll_context() sets the top bit,
// group_context() the next one and nbc_context() both.

/// What an MPI_Comm_idup's duplicate carries until rank 0's offer arrives
/// (an intercommunicator's, this one less 1, and its local group this one);
/// Runtime::take_shared_context() never hands out either.
constexpr std::uint32_t kIdupPendingContext = shm::kContextEnd - 1;

/// Where MPI_Comm_create_group's members of a communicator with context
/// `c` agree on the new context: on no communicator's point-to-point or
/// collective context, so nothing else matches these messages; the user's
/// tag tells apart concurrent calls on one parent.
std::uint32_t group_context(std::uint32_t c) { return c | 0x40000000u; }

void max_u32(const void* in, void* inout, std::int64_t count, const void* /*state*/) {
    const auto* a = static_cast<const std::uint32_t*>(in);
    auto* b = static_cast<std::uint32_t*>(inout);
    for (std::int64_t i = 0; i < count; ++i) b[i] = std::max(a[i], b[i]);
}

ContextIds& context_ids() { return api::runtime().engine().context_ids(); }

/// ContextIds::agree() over `team`'s members: `count` consecutive ids free
/// at each of them, one linear allreduce a round.
ContextIds::Agreed agree_over(const coll::Team& team, std::uint32_t count, const char* fn) {
    const coll::Reduction red{max_u32, nullptr, true, sizeof(std::uint32_t)};
    return context_ids().agree(count, fn, [&](std::uint32_t* words) {
        const std::uint32_t mine[2] = {words[0], words[1]};
        coll::allreduce_linear(team, mine, words, 2, red);
    });
}

/// What the new communicator's rank 0 tells its members about their
/// collective region.
struct RegionOffer {
    std::int32_t region = -1;       ///< pool index, or -1: none (linear algorithms)
    std::uint32_t single_copy = 0;  ///< the world's probe: 0 not run yet, 1 yes, 2 no
    std::uint64_t first_call = 0;   ///< ShmTeam::start_calls_at()'s argument
};

/// Rank 0 of a new communicator `c`: takes a free region of the pool, if
/// any, for `c`, and says where its team's calls start.  The region is
/// quiescent once taken: its previous holder's members all freed it after
/// their last access (Communicator::~Communicator), the compare-exchange
/// below acquired all their stores, and nobody else touches it until this
/// rank names it to the members.  So the flags read here are final, and
/// the members, who learn first_call from us, all start above every one.
RegionOffer claim_region(const shm::Segment& seg, const Communicator& c, const coll::ShmTeam* world) {
    RegionOffer offer;
    if (world != nullptr) {
        if (const std::optional<bool> known = world->single_copy_known()) offer.single_copy = *known ? 1 : 2;
    }
    for (std::uint32_t k = 0; k < seg.pool_regions(); ++k) {
        shm::PoolEntry& e = seg.pool_entry(k);
        // Relaxed: a first look, so held regions cost no exclusive line.
        if (e.owner.load(std::memory_order_relaxed) != 0) continue;
        std::uint64_t free = 0;
        // Acq_rel: the acquire pairs with the previous holder's release of
        // 0 (its flags become visible); the release is for symmetry with
        // other claimers, who read nothing we wrote before it.
        if (!e.owner.compare_exchange_strong(free, std::uint64_t{c.context()} + 1, std::memory_order_acq_rel,
                                             std::memory_order_relaxed)) {
            continue;
        }
        // Relaxed: the members decrement only after our message naming the
        // region, which orders this store before them.
        e.users.store(static_cast<std::uint32_t>(c.size()), std::memory_order_relaxed);
        offer.region = static_cast<std::int32_t>(k);
        const auto members = static_cast<std::uint32_t>(c.size());
        offer.first_call = coll::ShmTeam::last_call_in(seg.pool_region(k), members) + 1;
        return offer;
    }
    return offer;  // the pool is exhausted: linear algorithms
}

/// Every member of `c`, with the same `offer` from rank 0's claim_region():
/// builds this member's team over the region offered, if any.
void attach_region(Communicator& c, const RegionOffer& offer) {
    Runtime& rt = api::runtime();
    const shm::Segment* seg = rt.transport().segment();
    if (seg == nullptr || offer.region < 0 ||
        static_cast<std::uint32_t>(offer.region) >= seg->pool_regions()) {
        return;
    }
    shm::CollRegion region = seg->pool_region(static_cast<std::uint32_t>(offer.region));
    region.count = static_cast<std::uint32_t>(c.size());
    std::optional<bool> single_copy;
    if (offer.single_copy != 0) single_copy = offer.single_copy == 1;
    c.hold_pool_region(coll::ShmTeam::for_pool(rt.transport(), rt.engine(), region, c.rank(), c.world_ranks(),
                                               offer.first_call, single_copy),
                       seg->pool_entry(static_cast<std::uint32_t>(offer.region)));
}

/// Collective over the new communicator `c` (every member, right after
/// building it): gives it a shared-memory team over a region of the pool
/// when one is free; otherwise it keeps the point-to-point algorithms.
/// Every member takes the same branch: the size and the segment's pool are
/// the same everywhere, and the region comes from rank 0's one message.
void share_pool_region(Communicator& c) {
    Runtime& rt = api::runtime();
    const shm::Segment* seg = rt.transport().segment();
    if (c.size() < 2 || seg == nullptr || seg->pool_regions() == 0) return;
    RegionOffer offer;
    if (c.rank() == 0) offer = claim_region(*seg, c, rt.world_shm());
    coll::bcast_linear(c.team(), &offer, sizeof offer, 0);
    attach_region(c, offer);
}

std::unique_ptr<Communicator> make(Communicator& parent, std::uint32_t context,
                                   std::vector<std::uint32_t> world, int my_rank) {
    auto c = std::make_unique<Communicator>(parent.engine(), context, std::move(world), my_rank, "");
    c->set_errhandler(parent.errhandler());
    api::retain(parent.errhandler());  // dropped by MPI_Comm_free
    share_pool_region(*c);
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
    //    collective is over the parent).
    const ContextIds::Agreed context = agree_over(parent.team(), 1, fn);
    if (my_rank < 0) return nullptr;  // `context` goes back
    // 3. Build it: member i is parent rank members[i].
    std::vector<std::uint32_t> world(members.size());
    for (std::size_t i = 0; i < members.size(); ++i) world[i] = parent.world_rank(members[i]);
    return make(parent, context.first(), std::move(world), my_rank);
}

std::unique_ptr<Communicator> create_group(Communicator& parent, std::span<const int> members, int tag) {
    const char* fn = "MPI_Comm_create_group";
    const auto it = std::find(members.begin(), members.end(), parent.rank());
    if (it == members.end()) return nullptr;
    const auto my_rank = static_cast<int>(it - members.begin());
    // 1. A context free at every member: each round's proposals are
    //    gathered by member 0 and their maxima sent back (linear: the group
    //    may be any subset, and only it calls).  The messages carry the
    //    members' ranks in the parent, not in the group: two calls on one
    //    parent with the same tag and different groups (one after the
    //    other, at each process) then cannot take each other's messages,
    //    since a member's are matched by who sent them.  Rounds of one call
    //    keep their order; concurrent calls differ in the tag.
    p2p::Engine& engine = parent.engine();
    const std::uint32_t context = group_context(parent.context());
    const dtype::Datatype& u32 = *dtype::predefined(MPI_UINT32_T);
    const ContextIds::Agreed agreed = context_ids().agree(1, fn, [&](std::uint32_t* words) {
        if (my_rank == 0) {
            for (const int from : members.subspan(1)) {
                std::uint32_t theirs[2] = {0, 0};
                MPI_Status st;
                engine.recv(context, from, tag, theirs, 2, u32, st);
                words[0] = std::max(words[0], theirs[0]);
                words[1] = std::max(words[1], theirs[1]);
            }
            for (const int to : members.subspan(1)) {
                engine.send(context, parent.rank(), tag, parent.world_rank(to), words, 2, u32,
                            p2p::Mode::Standard);
            }
        } else {
            engine.send(context, parent.rank(), tag, parent.world_rank(members[0]), words, 2, u32,
                        p2p::Mode::Standard);
            MPI_Status st;
            engine.recv(context, members[0], tag, words, 2, u32, st);
        }
    });
    // 2. Build it, in group order.
    std::vector<std::uint32_t> world(members.size());
    for (std::size_t i = 0; i < members.size(); ++i) world[i] = parent.world_rank(members[i]);
    return make(parent, agreed.first(), std::move(world), my_rank);
}

std::unique_ptr<Communicator> idup_child(Communicator& parent) {
    auto c = parent.inter() ? Communicator::make_inter(parent.engine(), kIdupPendingContext - 1,
                                                       parent.world_ranks(), parent.rank(), parent.peers())
                            : std::make_unique<Communicator>(parent.engine(), kIdupPendingContext,
                                                             parent.world_ranks(), parent.rank(), "");
    c->set_errhandler(parent.errhandler());
    api::retain(parent.errhandler());  // dropped by MPI_Comm_free
    c->set_topology(parent.topology());
    return c;
}

p2p::Task* start_idup(Communicator& parent, std::unique_ptr<Communicator> child,
                      std::optional<MpiError> failed,
                      std::function<void(std::unique_ptr<Communicator>)> deliver) {
    const char* fn = "MPI_Comm_idup";
    Runtime& rt = api::runtime();
    // A request's message gets "MPI_Wait: MPI_Comm_idup: " put in front.
    const auto unprefixed = [fn](const MpiError& e) {
        std::string text = e.what();
        const std::string prefix = std::string(fn) + ": ";
        if (text.starts_with(prefix)) text.erase(0, prefix.size());
        return text;
    };
    // What rank 0 tells the others: the context and the collective region.
    struct Offer {
        std::uint32_t context = 0;
        std::uint32_t failed = 0;  ///< 1: rank 0 found no context (its request says why)
        RegionOffer region;
    };
    // An intercommunicator's schedule runs on its local group and reaches
    // the remote group's rank 0 (coll::Schedule::set_remote()).
    const bool inter = parent.inter();
    Communicator& group = inter ? *parent.local() : parent;
    auto s = std::make_unique<coll::Schedule>(parent.engine(), group.nbc_context(),
                                              parent.next_nbc_tag() << 6, parent.rank(), group.world_ranks());
    if (inter) s->set_remote(parent.nbc_context(), parent.peers());
    // Who decides: rank 0; of an intercommunicator, the rank 0 of the group
    // whose rank 0 has the lower world rank, and it also tells the other
    // group's rank 0, which passes the offer on to its group.
    const bool leader = parent.rank() == 0;
    const bool decides = leader && (!inter || parent.world_rank(0) < parent.peer_world(0));
    auto* offer = reinterpret_cast<Offer*>(s->scratch(sizeof(Offer)));
    new (offer) Offer{};
    coll::Schedule* self = s.get();
    const bool failed_here = failed.has_value();
    if (failed_here) self->report(failed->error_class(), unprefixed(*failed));
    if (decides && failed_here) {
        // Without its rank 0 the duplicate is nothing: it fails everywhere.
        offer->failed = 1;
    } else if (decides) {
        // Rank 0 decides now, without waiting for anyone: a context nobody
        // has (two for an intercommunicator: its own and its local group's),
        // and a free region of the pool (claim_region() is a
        // compare-exchange; see its comment for why the region is quiescent).
        try {
            // Every process of both groups builds a communicator on each id.
            const auto users = static_cast<std::uint32_t>(parent.size() + (inter ? parent.peer_count() : 0));
            offer->context = rt.take_shared_context(fn, inter ? 2 : 1, users);
            child->assign_context(offer->context);
            const shm::Segment* seg = rt.transport().segment();
            if (!inter && child->size() >= 2 && seg != nullptr && seg->pool_regions() > 0) {
                offer->region = claim_region(*seg, *child, rt.world_shm());
            }
        } catch (const MpiError& e) {
            // The others still get an offer, so that none of them waits for
            // one that never comes; each reports the failure.
            offer->failed = 1;
            self->report(e.error_class(), unprefixed(e));
        }
    }
    if (inter && decides) s->send_remote_bytes(0, offer, sizeof(Offer));
    if (inter && leader && !decides) {
        s->recv_remote_bytes(0, offer, sizeof(Offer));
        s->next_round();
    }
    if (leader) {
        for (int r = 1; r < parent.size(); ++r) s->send_bytes(r, offer, sizeof(Offer));
    } else {
        s->recv_bytes(0, offer, sizeof(Offer));
    }
    s->next_round();
    // Then every member finishes its duplicate.  The work runs inside the
    // engine's progress, where nothing may throw.
    // std::function needs a copyable callable: the duplicate waits in a
    // shared box, which the work empties.
    auto box = std::make_shared<std::unique_ptr<Communicator>>(std::move(child));
    s->local([self, offer, box, failed_here, fn, deliver = std::move(deliver)] {
        std::unique_ptr<Communicator> c = std::move(*box);
        if (offer->failed != 0) {
            self->report(MPI_ERR_INTERN, "rank 0 of the communicator could not make the duplicate");
            // The copies made at the call get their delete callbacks, as
            // MPI_Comm_free would run them (a failing one changes nothing:
            // the request reports an error already).
            try {
                c->attributes().clear(reinterpret_cast<MPI_Comm>(c.get()), fn);
            } catch (const std::exception&) {
            }
            api::release(c->errhandler());
            deliver(nullptr);
            return;
        }
        try {
            c->assign_context(offer->context);
            // Also when this member failed: the region counts it among its
            // users, and deleting the duplicate counts it out again (as
            // MPI_Comm_dup does when a copy callback fails).
            attach_region(*c, offer->region);
        } catch (const std::exception& e) {
            // Only allocation can fail here; the duplicate still works, with
            // the point-to-point collectives.
            self->report(MPI_ERR_INTERN, e.what());
        }
        if (failed_here) {
            api::release(c->errhandler());
            deliver(nullptr);
            return;
        }
        deliver(std::move(c));
    });
    return s.release()->start();
}

std::unique_ptr<Communicator> split(Communicator& parent, int color, int key) {
    const char* fn = "MPI_Comm_split";
    // 1. Everyone learns everyone's (color, key) and first proposal for the
    //    context: one allgather.
    struct Entry {
        std::int32_t color;
        std::int32_t key;
        std::uint32_t proposal;
    };
    const int n = parent.size();
    ContextIds& ids = context_ids();
    const ContextIds::Proposal early(ids);  // pending while the allgather waits
    const Entry mine{color, key, ids.propose(ContextIds::kFirst, 1, &early)};
    early.add(mine.proposal, 1);
    std::vector<Entry> all(static_cast<std::size_t>(n));
    coll::allgather_linear(parent.team(), &mine, sizeof(Entry), all.data());
    // 2. The context, free at every process of the parent and shared by
    //    every color (their member sets are disjoint).  The allgather was
    //    the agreement's first round (its proposals are the ones agree()
    //    makes first); more rounds, when needed, are linear allreduces.
    bool first = true;
    const coll::Reduction red{max_u32, nullptr, true, sizeof(std::uint32_t)};
    const ContextIds::Agreed context = ids.agree(1, fn, [&](std::uint32_t* words) {
        if (!first) {
            const std::uint32_t proposed[2] = {words[0], words[1]};
            coll::allreduce_linear(parent.team(), proposed, words, 2, red);
            return;
        }
        first = false;
        // The allgathered proposals alone: ours among them is the early
        // one, which agree()'s own first proposal equals unless another
        // thread of ours took or freed ids since (MPI_THREAD_MULTIPLE).
        words[0] = 0;
        words[1] = 0;
        for (const Entry& e : all) {
            words[0] = std::max(words[0], e.proposal);
            words[1] = std::max(words[1], ~e.proposal);
        }
    }, &early);
    // Returning or throwing before make() gives `context` back.
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
    return make(parent, context.first(), std::move(world), my_rank);
}

namespace {

/// ContextIds::agree() for `count` ids over both groups of an
/// intercommunicator whose local group is `local` (any intracommunicator
/// of them, e.g. local()).  A round is a linear allreduce over the local
/// group, then `exchange`, which the local rank `leader` runs to swap its
/// group's three words for the remote group's, then a broadcast from
/// `leader`.  The third word carries `mine` each way: returned as
/// `.second`, the remote leader's.  `first`, when given, holds the first
/// round's maxima over both groups, found by the caller (the round is then
/// skipped, and `.second` is 0 unless a later round ran), and `early` the
/// Proposal that keeps the caller's own proposal for it pending.
template <class Exchange>
std::pair<ContextIds::Agreed, std::uint32_t> agree_across(Communicator& local, int leader, std::uint32_t count,
                                                     const char* fn, std::uint32_t mine,
                                                     const std::uint32_t* first, Exchange exchange,
                                                     const ContextIds::Proposal* early = nullptr) {
    const coll::Reduction red{max_u32, nullptr, true, sizeof(std::uint32_t)};
    std::uint32_t remote_word = 0;
    ContextIds::Agreed agreed = context_ids().agree(count, fn, [&](std::uint32_t* words) {
        if (first != nullptr) {
            words[0] = first[0];
            words[1] = first[1];
            first = nullptr;
            return;
        }
        std::uint32_t group[2] = {0, 0};
        coll::allreduce_linear(local.team(), words, group, 2, red);
        std::uint32_t out[3] = {group[0], group[1], mine};
        if (local.rank() == leader) {
            std::uint32_t theirs[3] = {0, 0, 0};
            exchange(out, theirs);
            out[0] = std::max(group[0], theirs[0]);
            out[1] = std::max(group[1], theirs[1]);
            out[2] = theirs[2];
        }
        coll::bcast_linear(local.team(), out, sizeof out, leader);
        words[0] = out[0];
        words[1] = out[1];
        remote_word = out[2];
    }, early);
    return {std::move(agreed), remote_word};
}

/// `out_bytes` at `mine` to the remote group's rank 0, and `in_bytes` from
/// it into `theirs`, over `inter`'s collective context (which its
/// collectives never use: they travel on nbc_context() and on local()'s
/// contexts).
void swap_with_remote_leader(Communicator& inter, const void* mine, std::int64_t out_bytes, void* theirs,
                             std::int64_t in_bytes) {
    p2p::Engine& engine = inter.engine();
    const dtype::Datatype& byte = dtype::byte_type();
    p2p::Request* r = engine.isend(inter.coll_context(), inter.rank(), 0, inter.peer_world(0), mine,
                                   out_bytes, byte, p2p::Mode::Standard);
    MPI_Status st;
    engine.recv(inter.coll_context(), 0, 0, theirs, in_bytes, byte, st);
    engine.wait(*r);
    engine.release(r);
}

/// agree_across() for an intercommunicator `inter`, through its leaders.
std::pair<ContextIds::Agreed, std::uint32_t> agree_across(Communicator& inter, std::uint32_t count,
                                                          const char* fn, std::uint32_t mine) {
    return agree_across(
        *inter.local(), 0, count, fn, mine, nullptr, [&](const std::uint32_t* out, std::uint32_t* in) {
            swap_with_remote_leader(inter, out, 3 * sizeof(std::uint32_t), in, 3 * sizeof(std::uint32_t));
        });
}

}  // namespace

std::unique_ptr<Communicator> intercomm_create(Communicator& local, int local_leader, Communicator* peer,
                                               int remote_leader, int tag, const MpiError* peer_error) {
    const char* fn = "MPI_Intercomm_create";
    if (local_leader < 0 || local_leader >= local.size()) {
        throw MpiError(MPI_ERR_RANK, fmt::format("{}: local_leader {} is not a rank of local_comm (size {})",
                                                 fn, local_leader, local.size()));
    }
    // 1. The first round of the agreement on two context ids (the new
    //    intercommunicator's and its local group's, ContextIds::agree()):
    //    the local group's maxima of the proposals, at every member.
    ContextIds& ids = context_ids();
    const ContextIds::Proposal early(ids);  // pending while the exchanges wait
    const std::uint32_t proposal = ids.propose(ContextIds::kFirst, 2, &early);
    early.add(proposal, 2);
    const std::uint32_t proposed[2] = {proposal, ~proposal};
    std::uint32_t group[2] = {0, 0};
    const coll::Reduction red{max_u32, nullptr, true, sizeof(std::uint32_t)};
    coll::allreduce_linear(local.team(), proposed, group, 2, red);
    // 2. The leaders swap {group size, the group's maxima} and then their
    //    groups' world ranks over `peer`.  What the leader tells its group:
    //    {status, remote size, the maxima over both groups}, status 0 for
    //    success, else the error class, with the message that follows.
    std::uint32_t head[4] = {0, 0, 0, 0};
    std::vector<std::uint32_t> remote;
    std::string failure;
    const dtype::Datatype& u32 = *dtype::predefined(MPI_UINT32_T);
    if (local.rank() == local_leader) {
        std::uint32_t mine[3] = {static_cast<std::uint32_t>(local.size()), group[0], group[1]};
        p2p::Request* sent[2] = {nullptr, nullptr};
        try {
            if (peer_error != nullptr) throw *peer_error;
            if (peer == nullptr)
                throw MpiError(MPI_ERR_COMM, fmt::format("{}: peer_comm is MPI_COMM_NULL", fn));
            if (remote_leader < 0 || remote_leader >= peer->peer_count()) {
                throw MpiError(MPI_ERR_RANK,
                               fmt::format("{}: remote_leader {} is not a rank of peer_comm (size {})", fn,
                                           remote_leader, peer->peer_count()));
            }
            if (peer->peer_world(remote_leader) == local.world_rank(local.rank())) {
                throw MpiError(MPI_ERR_RANK,
                               fmt::format("{}: remote_leader {} is this process, the local leader; "
                                           "the two groups must be disjoint",
                                           fn, remote_leader));
            }
            if (tag < 0) {
                throw MpiError(MPI_ERR_TAG,
                               fmt::format("{}: invalid tag {} (tags go from 0 to MPI_TAG_UB)", fn, tag));
            }
            std::uint32_t theirs[3] = {0, 0, 0};
            p2p::Engine& engine = peer->engine();
            const std::uint32_t ctx = peer->context();
            const std::uint32_t to = peer->peer_world(remote_leader);
            sent[0] = engine.isend(ctx, peer->rank(), tag, to, mine, 3, u32, p2p::Mode::Standard);
            sent[1] = engine.isend(ctx, peer->rank(), tag, to, local.world_ranks().data(), local.size(), u32,
                                   p2p::Mode::Standard);
            MPI_Status st;
            engine.recv(ctx, remote_leader, tag, theirs, 3, u32, st);
            remote.resize(theirs[0]);
            engine.recv(ctx, remote_leader, tag, remote.data(), static_cast<std::int64_t>(remote.size()), u32,
                        st);
            for (const std::uint32_t w : remote) {
                if (std::find(local.world_ranks().begin(), local.world_ranks().end(), w) !=
                    local.world_ranks().end()) {
                    throw MpiError(MPI_ERR_COMM,
                                   fmt::format("{}: world rank {} is in both the local and the remote "
                                               "group; the groups must be disjoint",
                                               fn, w));
                }
            }
            head[1] = theirs[0];
            head[2] = std::max(group[0], theirs[1]);
            head[3] = std::max(group[1], theirs[2]);
        } catch (const MpiError& e) {
            head[0] = static_cast<std::uint32_t>(e.error_class());
            failure = e.what();
        }
        // The sends read `mine`: they end before it goes.
        for (p2p::Request* r : sent) {
            if (r == nullptr) continue;
            peer->engine().wait(*r);
            peer->engine().release(r);
        }
    }
    // 3. The leader tells its group.
    coll::bcast_linear(local.team(), head, sizeof head, local_leader);
    if (head[0] != 0) {
        std::uint32_t length = static_cast<std::uint32_t>(failure.size());
        coll::bcast_linear(local.team(), &length, sizeof length, local_leader);
        failure.resize(length);
        coll::bcast_linear(local.team(), failure.data(), length, local_leader);
        if (local.rank() == local_leader) throw MpiError(static_cast<int>(head[0]), failure);
        throw MpiError(static_cast<int>(head[0]),
                       fmt::format("{}: the local leader (rank {}) failed: {}", fn, local_leader, failure));
    }
    remote.resize(head[1]);
    coll::bcast_linear(local.team(), remote.data(),
                       static_cast<std::int64_t>(remote.size() * sizeof(std::uint32_t)), local_leader);
    // 4. The agreement: its first round's maxima are in `head`; each
    //    further round (rare: only when the groups hold different ids) is
    //    the same allreduce, swap over `peer` (the leaders' rounds keep
    //    their order on `tag`) and broadcast.
    const ContextIds::Agreed context =
        agree_across(local, local_leader, 2, fn, 0, &head[2],
                     [&](const std::uint32_t* out, std::uint32_t* in) {
                         p2p::Engine& engine = peer->engine();
                         p2p::Request* r =
                             engine.isend(peer->context(), peer->rank(), tag, peer->peer_world(remote_leader),
                                          out, 3, u32, p2p::Mode::Standard);
                         MPI_Status st;
                         engine.recv(peer->context(), remote_leader, tag, in, 3, u32, st);
                         engine.wait(*r);
                         engine.release(r);
                     },
                     &early)
            .first;
    // Two contexts, the agreed one and the next, for local().
    auto c = Communicator::make_inter(local.engine(), context.first(), local.world_ranks(), local.rank(),
                                      std::move(remote));
    c->set_errhandler(local.errhandler());
    api::retain(local.errhandler());  // dropped by MPI_Comm_free
    return c;
}

std::unique_ptr<Communicator> intercomm_merge(Communicator& inter, bool high) {
    const char* fn = "MPI_Intercomm_merge";
    // The leaders swap their group's high flag with the agreement; ties go
    // to the lower leader's world rank.
    const auto [agreed, remote_high] = agree_across(inter, 1, fn, high ? 1 : 0);
    bool first = false;
    if (high != (remote_high != 0)) {
        first = !high;
    } else {
        first = inter.world_rank(0) < inter.peer_world(0);
    }
    std::vector<std::uint32_t> world;
    const std::vector<std::uint32_t>& lo = first ? inter.world_ranks() : inter.peers();
    const std::vector<std::uint32_t>& hi = first ? inter.peers() : inter.world_ranks();
    world.insert(world.end(), lo.begin(), lo.end());
    world.insert(world.end(), hi.begin(), hi.end());
    const int my_rank = first ? inter.rank() : static_cast<int>(lo.size()) + inter.rank();
    return make(inter, agreed.first(), std::move(world), my_rank);
}

std::unique_ptr<Communicator> dup_inter(Communicator& inter) {
    const char* fn = "MPI_Comm_dup";
    // Two ids: its own and its local group's.
    const ContextIds::Agreed context = agree_across(inter, 2, fn, 0).first;
    auto c = Communicator::make_inter(inter.engine(), context.first(), inter.world_ranks(), inter.rank(),
                                      inter.peers());
    c->set_errhandler(inter.errhandler());
    api::retain(inter.errhandler());  // dropped by MPI_Comm_free
    return c;
}

std::unique_ptr<Communicator> split_inter(Communicator& inter, int color, int key) {
    const char* fn = "MPI_Comm_split";
    // 1. The contexts, agreed over both groups (two: each new
    //    intercommunicator's own and its local group's).
    const ContextIds::Agreed context = agree_across(inter, 2, fn, 0).first;
    // 2. Each group's (color, key) table: gathered in the group, swapped by
    //    the leaders, and the other group's handed to every member.
    struct Entry {
        std::int32_t color;
        std::int32_t key;
    };
    Communicator& local = *inter.local();
    const Entry mine{color, key};
    std::vector<Entry> here(static_cast<std::size_t>(inter.size()));
    std::vector<Entry> there(static_cast<std::size_t>(inter.peer_count()));
    coll::allgather_linear(local.team(), &mine, sizeof(Entry), here.data());
    if (inter.rank() == 0) {
        swap_with_remote_leader(inter, here.data(), static_cast<std::int64_t>(here.size() * sizeof(Entry)),
                                there.data(), static_cast<std::int64_t>(there.size() * sizeof(Entry)));
    }
    coll::bcast_linear(local.team(), there.data(), static_cast<std::int64_t>(there.size() * sizeof(Entry)),
                       0);
    // As in split(): returning or throwing here gives `context` back.
    if (color == MPI_UNDEFINED) return nullptr;
    if (color < 0) {
        throw MpiError(MPI_ERR_ARG,
                       fmt::format("{}: color {} is negative (must be >= 0 or MPI_UNDEFINED)", fn, color));
    }
    // 3. The members of my color on each side, by key, ties by rank.
    const auto members_of = [color](const std::vector<Entry>& table,
                                    const std::vector<std::uint32_t>& world) {
        std::vector<int> ranks;
        for (std::size_t r = 0; r < table.size(); ++r) {
            if (table[r].color == color) ranks.push_back(static_cast<int>(r));
        }
        std::stable_sort(ranks.begin(), ranks.end(), [&](int a, int b) {
            return table[static_cast<std::size_t>(a)].key < table[static_cast<std::size_t>(b)].key;
        });
        std::vector<std::uint32_t> out;
        for (const int r : ranks) out.push_back(world[static_cast<std::size_t>(r)]);
        return out;
    };
    std::vector<std::uint32_t> local_world = members_of(here, inter.world_ranks());
    std::vector<std::uint32_t> remote_world = members_of(there, inter.peers());
    // A color with no member on the other side makes no intercommunicator.
    if (remote_world.empty()) return nullptr;
    const std::uint32_t me = inter.world_rank(inter.rank());
    const auto at = std::find(local_world.begin(), local_world.end(), me);
    const int my_rank = static_cast<int>(at - local_world.begin());
    auto c = Communicator::make_inter(inter.engine(), context.first(), std::move(local_world), my_rank,
                                      std::move(remote_world));
    c->set_errhandler(inter.errhandler());
    api::retain(inter.errhandler());  // dropped by MPI_Comm_free
    return c;
}

}  // namespace shmpi
