// Making new communicators from an existing one (the parent): the members
// agree on a context id no member uses for anything else, and each member
// builds its Communicator.  Every function here but create_group() is
// collective over the parent: all its members call it, in the same order
// as their other collectives on the parent.  create_group() is collective
// over the new communicator's members only.
//
// Context ids.  Each process knows the ids its communicators hold
// (ContextIds, in the engine); a new communicator takes the lowest id that
// no process of its parent holds (ContextIds::agree(), rounds of linear
// allreduces, one round when the processes hold the same ids), and gives
// it back when deleted.  A process therefore never belongs to two
// communicators with the same context; communicators made by one split
// share a context, but their members are disjoint and never send to each
// other on it.  MPI_Comm_idup cannot wait for that agreement: its rank 0
// takes an id from a range of its own (shm::kSharedContextBase up), whose
// holders the segment counts (Runtime::take_shared_context()).
//
// A new communicator inherits the parent's error handler (with a reference
// on it, dropped by MPI_Comm_free) and nothing else: no name, no
// attributes, no topology.
//
// Shared-memory collectives.  A new communicator of two or more members
// takes a region of the segment's pool for its collectives: its rank 0
// claims a free one and tells the members which (one more point-to-point
// message, on the new communicator), and each member builds a ShmTeam over
// it; MPI_Comm_free gives it back (Communicator::~Communicator).  When the
// pool is exhausted (SHMPI_COLL_REGIONS, 8 by default) the communicator
// runs the point-to-point algorithms, as every communicator did before.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>

#include "communicator.hpp"
#include "errors.hpp"

namespace shmpi {

/// Collective over `parent`: every member calls it with the same `members` (ranks of `parent`, in the new
/// communicator's rank order, no duplicates).  Returns the new communicator for a member, nullptr for the
/// others.  The new communicator inherits nothing but the error handler.
/// Throws MpiError (MPI_ERR_RANK: a member out of range or listed twice),
/// on every rank alike before any communication, since all pass the same
/// `members`.
std::unique_ptr<Communicator> create_from_members(Communicator& parent, std::span<const int> members);

/// MPI_Comm_create_group: collective over the members only, whose ranks
/// in `parent` `members` lists in the new communicator's rank order (valid
/// and distinct, checked by the caller).  `tag` tells concurrent calls on
/// one parent apart.  Returns nullptr to a process not in `members`.
std::unique_ptr<Communicator> create_group(Communicator& parent, std::span<const int> members, int tag);

/// MPI_Comm_idup, step 1: this member's duplicate of `parent` as far as it
/// can be built at once (members, rank, error handler, topology; the caller
/// copies the attributes), without a context.
std::unique_ptr<Communicator> idup_child(Communicator& parent);
/// MPI_Comm_idup, step 2, collective over `parent` but nonblocking: rank 0
/// takes a context from the segment (Runtime::take_shared_context(): no
/// agreement, so no waiting) and a region of the pool, and sends both to
/// the other members in a schedule on the parent's nbc_context(); each
/// member then gives `child` its context and team and hands it to
/// `deliver` (nullptr, with the error in the request, when rank 0 found no
/// context or when this member `failed` already, e.g. in an attribute copy
/// callback: it still takes part, so that nobody waits for it).  Returns
/// the started schedule.  An intercommunicator's duplicate takes two
/// contexts and no region; the rank 0 of the group whose rank 0 has the
/// lower world rank decides, and the other group's rank 0 passes its offer
/// on.
p2p::Task* start_idup(Communicator& parent, std::unique_ptr<Communicator> child,
                      std::optional<MpiError> failed,
                      std::function<void(std::unique_ptr<Communicator>)> deliver);

/// MPI_Comm_split: collective over `parent`; nullptr for color MPI_UNDEFINED.
/// Members of one color are ordered by `key`, ties by their rank in
/// `parent`.  Throws MpiError (MPI_ERR_ARG) for a negative color other than
/// MPI_UNDEFINED, after taking part in the exchange so that no rank hangs.
std::unique_ptr<Communicator> split(Communicator& parent, int color, int key);

// ---- Intercommunicators (MPI-3.1 6.6) ----
//
// Context ids.  An intercommunicator takes two: its own and, for its
// local() group, the next one.  Both groups agree on them as the
// intracommunicator constructions do, over both groups' members: in each
// round each group reduces its proposals (a linear allreduce over its
// local group), the two leaders exchange their maxima, and each leader
// broadcasts the larger to its group.

/// MPI_Intercomm_create: collective over `local`; the two leaders
/// (`local_leader` of each local communicator) also talk over `peer`
/// (significant at the leader only: `peer` may be null elsewhere, and
/// `peer_error`, when given, is why the leader has none), with
/// `tag`, where `remote_leader` is the other leader's rank.  Throws
/// MpiError on every member of `local` alike: a bad local_leader everywhere
/// before any communication; a bad peer, remote_leader or tag, or groups
/// that overlap, once the leader has told its members.
std::unique_ptr<Communicator> intercomm_create(Communicator& local, int local_leader, Communicator* peer,
                                               int remote_leader, int tag,
                                               const MpiError* peer_error = nullptr);

/// MPI_Intercomm_merge: collective over both groups of `inter`.  The group
/// whose members pass high = false comes first; when both pass the same
/// value, the group whose leader has the lower world rank does.
std::unique_ptr<Communicator> intercomm_merge(Communicator& inter, bool high);

/// MPI_Comm_split of an intercommunicator (MPI-3.1 6.4.2): an
/// intercommunicator between the members of each color in the two groups,
/// each side ordered by key, ties by rank; nullptr for MPI_UNDEFINED and
/// for a color with no member in the other group.  MPI_Comm_create on an
/// intercommunicator is this split with one color.
std::unique_ptr<Communicator> split_inter(Communicator& inter, int color, int key);

/// MPI_Comm_dup of an intercommunicator: same groups, new contexts.
std::unique_ptr<Communicator> dup_inter(Communicator& inter);

}  // namespace shmpi
