// A communicator: a group of ranks (as world ranks), this process's rank in
// it, a context id that keeps its traffic apart from every other
// communicator's, its error handler, its cached attributes and, for
// MPI_Cart_create and friends, a virtual topology.  Point-to-point calls go
// through it to the engine, with ranks translated to world ranks.  New
// communicators come from comm_create.hpp.
//
// An intercommunicator (MPI-3.1 6.6) has two groups: the local one, which
// rank(), size(), world_ranks() and the team describe as for an
// intracommunicator, and the remote one, which point-to-point calls
// address: a destination or source rank is a rank of the remote group, and
// a message carries its sender's rank in the sender's own group.  Its
// collectives (coll/nonblocking.hpp, "Intercommunicators") also need the
// local group alone: local() is that group as an intracommunicator of its
// own, on the context after this one.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "attributes.hpp"
#include "coll/coll.hpp"
#include "dtype/datatype.hpp"
#include "p2p.hpp"
#include "handle_storage.hpp"

namespace shmpi::shm {
struct PoolEntry;
}  // namespace shmpi::shm

namespace shmpi::topo {
/// A virtual topology (cartesian, graph, distributed graph); defined in
/// topo/topology.hpp.
class Topology;
}  // namespace shmpi::topo

namespace shmpi {

class Communicator : public HandleStorage {
public:
    static constexpr std::uint32_t kMagic = 0x434f4d4d;  // "COMM"
    /// The magic of a communicator that MPI_Comm_free freed while requests
    /// still report their errors to it (see linger()): its handle is freed
    /// for every call, its error handler still serves those requests.
    static constexpr std::uint32_t kLingerMagic = 0x4c494e47;  // "LING"

    /// `world_ranks[r]` is the world rank of rank r; `my_rank` indexes it.
    /// Holds `context` in the engine's ContextIds until deleted; throws
    /// MpiError (MPI_ERR_INTERN) when this process holds it already.
    Communicator(p2p::Engine& engine, std::uint32_t context, std::vector<std::uint32_t> world_ranks,
                 int my_rank, std::string name);
    /// An intercommunicator: the local group `local_world` (this process is
    /// rank `my_rank` of it) and the remote group `remote_world`, on
    /// `context`; its local() intracommunicator takes `context` + 1.
    static std::unique_ptr<Communicator> make_inter(p2p::Engine& engine, std::uint32_t context,
                                                    std::vector<std::uint32_t> local_world, int my_rank,
                                                    std::vector<std::uint32_t> remote_world);
    /// Clears the magic, so that a freed handle reads as invalid, and gives
    /// back the pool region this communicator holds (see hold_pool_region())
    /// and its context id (ContextIds: the process may take it again).
    ~Communicator();

    std::uint32_t magic() const { return magic_; }
    int rank() const { return rank_; }
    int size() const { return static_cast<int>(world_.size()); }
    std::uint32_t context() const { return context_; }
    /// MPI_Comm_idup's duplicate learns its context after it was built
    /// (comm_create.cpp); nothing uses the communicator before that.  An
    /// intercommunicator's local() takes the next one.
    void assign_context(std::uint32_t context) {
        if (context == context_) return;  // rank 0 assigns its own twice
        engine_.context_ids().hold(context);
        engine_.context_ids().drop(context_);
        context_ = context;
        team_.context = coll_context();
        if (local_) local_->assign_context(context + 1);
    }
    /// The context of this communicator's collective traffic, so that it
    /// never matches a point-to-point receive.
    std::uint32_t coll_context() const { return context_ | 0x80000000u; }
    /// The context of this communicator's nonblocking collectives
    /// (coll/nonblocking.hpp), apart from both of the above.
    std::uint32_t nbc_context() const { return context_ | 0xc0000000u; }
    /// The tag of this member's next nonblocking collective: members start
    /// them in the same order (MPI-3.1 5.12), so the k-th call of every
    /// member gets the same tag.  Kept below 2^24 (coll/nonblocking.cpp
    /// adds a sub-tag of 6 bits below it); after 2^24 calls it wraps, which
    /// is safe because a pair's messages with one tag never overtake.
    std::int32_t next_nbc_tag() { return static_cast<std::int32_t>(nbc_calls_++ & 0xffffffu); }
    const std::vector<std::uint32_t>& world_ranks() const { return world_; }
    std::uint32_t world_rank(int r) const { return world_[static_cast<std::size_t>(r)]; }

    /// Whether this is an intercommunicator.
    bool inter() const { return local_ != nullptr; }
    /// The group point-to-point ranks name: the remote group of an
    /// intercommunicator, else the communicator's own.
    const std::vector<std::uint32_t>& peers() const { return inter() ? remote_ : world_; }
    int peer_count() const { return static_cast<int>(peers().size()); }
    std::uint32_t peer_world(int r) const { return peers()[static_cast<std::size_t>(r)]; }
    /// An intercommunicator's local group as an intracommunicator (never
    /// handed to the user); null for an intracommunicator.
    Communicator* local() const { return local_.get(); }
    /// The name set by MPI_Comm_set_name ("" for none, as MPI_Comm_get_name
    /// must report).
    const std::string& name() const { return name_; }
    /// The name, or a description for unnamed communicators, for messages.
    std::string label() const;
    void set_name(std::string n) { name_ = std::move(n); }
    MPI_Errhandler errhandler() const { return errhandler_; }
    void set_errhandler(MPI_Errhandler e) { errhandler_ = e; }

    // Point-to-point.  `dest`/`source` are ranks of this communicator, or
    // MPI_PROC_NULL (and MPI_ANY_SOURCE for receives); arguments are checked
    // by the caller.
    p2p::Request* isend(const void* buf, std::int64_t count, const dtype::Datatype& type, int dest,
                        int tag, p2p::Mode mode);
    void send(const void* buf, std::int64_t count, const dtype::Datatype& type, int dest, int tag,
              p2p::Mode mode);
    p2p::Request* irecv(void* buf, std::int64_t count, const dtype::Datatype& type, int source,
                        int tag);
    /// Returns the size in bytes of the message that matched (0 for
    /// MPI_PROC_NULL).
    std::uint64_t recv(void* buf, std::int64_t count, const dtype::Datatype& type, int source,
                       int tag, MPI_Status& status);
    bool iprobe(int source, int tag, MPI_Status& status);
    void probe(int source, int tag, MPI_Status& status);
    /// Matched probes: the message found leaves the queue for imrecv().
    /// MPI_PROC_NULL matches at once, with `message` nullptr.
    bool improbe(int source, int tag, MPI_Status& status, p2p::Unexpected*& message);
    p2p::Unexpected* mprobe(int source, int tag, MPI_Status& status);
    /// Receives a message a matched probe took (nullptr: MPI_PROC_NULL's).
    p2p::Request* imrecv(p2p::Unexpected* message, void* buf, std::int64_t count,
                         const dtype::Datatype& type);

    p2p::Engine& engine() { return engine_; }

    /// The members as the collective algorithms see them (coll/coll.hpp):
    /// collective traffic on coll_context(), and the shared-memory state of
    /// this communicator's collectives once one is attached.
    const coll::Team& team() const { return team_; }
    /// Attaches (or, with nullptr, detaches) the shared-memory collective
    /// state; the communicator does not own it.
    void set_shm_team(coll::ShmTeam* shm) { team_.shm = shm; }
    /// Attaches a team over a pool region this communicator now holds, and
    /// takes it over with the region's control words: the destructor (run
    /// by MPI_Comm_free on every member) drops the team and then counts this
    /// member out of `entry`'s users, freeing the region after the last one.
    void hold_pool_region(std::unique_ptr<coll::ShmTeam> shm, shm::PoolEntry& entry);

    /// The virtual topology attached by MPI_Cart_create and friends, or null.
    /// Immutable once attached, so MPI_Comm_dup shares it.
    const std::shared_ptr<const topo::Topology>& topology() const { return topology_; }
    void set_topology(std::shared_ptr<const topo::Topology> t) { topology_ = std::move(t); }

    /// Cached attributes (MPI_Comm_set_attr); MPI_Comm_dup copies them,
    /// MPI_Comm_free deletes them.
    attr::Store& attributes() { return attributes_; }

    // Requests (and calls completing them) that report their errors to
    // this communicator; the C boundary counts them (api::hold_comm()).
    // MPI-3.1 6.4.3: operations pending when MPI_Comm_free is called
    // complete normally, so such a request must still find this
    // communicator's error handler.
    int holds() const { return holds_; }
    void add_hold() { ++holds_; }
    /// Returns the holds left.
    int drop_hold() { return --holds_; }
    /// MPI_Comm_free while requests hold it: gives back the pool region
    /// now (the free is collective, as the destructor's reasoning needs)
    /// and marks the handle freed (kLingerMagic); the C boundary deletes
    /// it when the last hold goes.
    void linger();
    bool lingering() const { return magic_ == kLingerMagic; }

    Communicator(const Communicator&) = delete;  // team_ points at world_
    Communicator& operator=(const Communicator&) = delete;

private:
    std::uint32_t magic_ = kMagic;
    p2p::Engine& engine_;
    std::uint32_t context_;
    std::vector<std::uint32_t> world_;
    int rank_;
    std::string name_;
    MPI_Errhandler errhandler_ = MPI_ERRORS_ARE_FATAL;
    coll::Team team_;
    std::unique_ptr<coll::ShmTeam> pool_team_;  ///< the team over a pool region, or null
    shm::PoolEntry* pool_entry_ = nullptr;      ///< that region's control words
    std::shared_ptr<const topo::Topology> topology_;
    attr::Store attributes_;
    std::uint32_t nbc_calls_ = 0;  ///< nonblocking collectives started on it
    int holds_ = 0;                ///< see holds()
    std::vector<std::uint32_t> remote_;    ///< an intercommunicator's remote group (world ranks)
    std::unique_ptr<Communicator> local_;  ///< an intercommunicator's local group, see local()

    /// Drops the team over a pool region and counts this member out of the
    /// region's users (the last one frees it).
    void leave_pool_region();
};

/// The status of a receive from MPI_PROC_NULL: source MPI_PROC_NULL, tag
/// MPI_ANY_TAG, count 0.
MPI_Status null_status();

}  // namespace shmpi
