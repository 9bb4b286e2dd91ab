// The context ids this process's communicators hold, and the agreement by
// which the members of a new communicator find ids that none of them holds.
//
// Every communicator has a context id (two for an intercommunicator: its
// own and its local group's, the next one); the engine matches a message
// only to a receive on the same context.  Ids from kFirst up to kEnd are
// agreed on by the members of each new communicator and come free again
// when the communicator is deleted: this process then takes them for its
// next communicators.  That is safe because MPI_Comm_free is collective: a
// correct program has received every message sent to it on a communicator
// before it frees it, so nothing of the old communicator is left to match
// a receive of the new one.  (A message that a program sends and never
// receives may be matched by a later communicator on the same id, as in
// MPICH; the program is erroneous either way.)
//
// Ids below kFirst belong to MPI_COMM_WORLD, MPI_COMM_SELF and the
// runtime's internal traffic, and are not tracked.  Ids from kEnd up come
// from the segment for MPI_Comm_idup, which cannot wait for an agreement
// (Runtime::take_shared_context()): the segment counts the processes that
// hold each of the first shm::kSharedContextSlots of them, and drop()
// counts this process out.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "shm/layout.hpp"

namespace shmpi {

class ContextIds {
public:
    class Proposal;
    static constexpr std::uint32_t kFirst = 16;
    static constexpr std::uint32_t kEnd = shm::kSharedContextBase;

    /// True for the ids this class tracks (agreed, reused).
    static bool agreed(std::uint32_t c) { return c >= kFirst && c < kEnd; }

    /// The lowest id c >= max(from, kFirst) such that c to c + count - 1
    /// are all free and below kEnd; kEnd when there is none.
    std::uint32_t next_free(std::uint32_t from, std::uint32_t count) const;
    /// What this process proposes in a round of agree() that starts at
    /// `from`: the first id at or above it that begins kProposalRun free
    /// ids (at least `count`).  Not merely the first free id: members whose
    /// ids interleave (each holding every n-th of a range, as after many
    /// communicators of one member each) would then propose ids one apart,
    /// and the rounds, each a collective, would climb the range one id at a
    /// time (MPI_Comm_create of one-member groups took 14 ms per call at 4
    /// ranks after 400 calls).  A run that long is beyond every member's
    /// interleaved ids at once.  Holes shorter than the run stay unused
    /// until their neighbours come free (the ids are plentiful: 2^29).
    /// Under MPI_THREAD_MULTIPLE, agreements of other threads of this
    /// process run at the same time (each opens the lock in its waits): a
    /// proposal also skips the ids they have proposed or agreed on and no
    /// communicator holds yet (pending_), but those of `self`'s own.
    std::uint32_t propose(std::uint32_t from, std::uint32_t count, const Proposal* self = nullptr) const;
    static constexpr std::uint32_t kProposalRun = 64;
    bool held(std::uint32_t c) const;
    /// A communicator of this process was built on `c`.  Ids outside
    /// [kFirst, kEnd) are ignored.  Throws MpiError (MPI_ERR_INTERN) when
    /// `c` is held already: two communicators of one process on one id
    /// would take each other's messages.
    void hold(std::uint32_t c);
    /// The communicator on `c` is deleted; `c` is free again.  For an id
    /// the segment counts (see share()), this process's count goes.
    void drop(std::uint32_t c);
    /// The segment's SegmentHeader::shared_context_users, for drop(); a
    /// singleton has none.  (hold() counts nothing there: MPI_Comm_idup's
    /// rank 0 counted every member when it took the id.)
    void share(std::atomic<std::uint32_t>* shared_users) { shared_users_ = shared_users; }
    /// MPI_Comm_idup's rank 0: claims `count` consecutive counted ids for
    /// `users` processes (each gives its count back through drop()).
    /// Returns the first, or 0 when no such run is free or there is no
    /// segment.
    std::uint32_t claim_shared(std::uint32_t count, std::uint32_t users);
    /// How many ids are held.
    std::size_t held_count() const;

    /// The ids agree() found, kept pending until this goes (moved from, it
    /// keeps nothing).  The communicators built on them hold them before
    /// it goes; if none does, they are free again for this process.
    class [[nodiscard]] Agreed {
    public:
        Agreed(Agreed&& other) noexcept : ids_(std::exchange(other.ids_, nullptr)), first_(other.first_) {}
        Agreed& operator=(Agreed&&) = delete;
        Agreed(const Agreed&) = delete;
        Agreed& operator=(const Agreed&) = delete;
        ~Agreed() {
            if (ids_ != nullptr) ids_->forget(first_);
        }
        /// The first id of the run agreed on.
        std::uint32_t first() const { return first_; }

    private:
        friend class ContextIds;
        Agreed(ContextIds& ids, std::uint32_t first) : ids_(&ids), first_(first) {}
        ContextIds* ids_;
        std::uint32_t first_;
    };

    /// The agreement, run by every participant (each with its own
    /// ContextIds) in the same order as its other collectives on the group
    /// it runs over.  `exchange(words)` replaces the two words by their
    /// element-wise maximum over all participants.  In each round every
    /// participant proposes its first free run (propose()) at or above the
    /// round's start (first kFirst, then the previous round's largest
    /// proposal), as {p, ~p}: the maxima are the largest and the smallest
    /// proposal.  When they are equal, every participant has that run free
    /// and it is the result; else the next round starts at the largest,
    /// which is then higher than the last start, so the rounds end.  Every
    /// participant sees the same maxima, so all run the same rounds and
    /// return the same ids or throw MpiError (MPI_ERR_INTERN, naming `fn`)
    /// together when no run is free everywhere.  Holds nothing: the
    /// communicators built on the result do (Communicator's constructor).
    /// The Agreed returned keeps the result pending until it goes, so that
    /// no other thread's agreement takes it meanwhile; each round's
    /// proposal is pending while its exchange runs.  A process that builds
    /// no communicator on the result (MPI_Comm_create outside the group,
    /// MPI_Comm_split with MPI_UNDEFINED, an error in between) gives it
    /// back by letting the Agreed go.  A caller that made the first round's
    /// proposal itself (exchanged with other data) passes the Proposal it
    /// set it in as `early`.
    template <class Exchange>
    Agreed agree(std::uint32_t count, const char* fn, Exchange&& exchange, const Proposal* early = nullptr) {
        const Proposal own(*this);
        const Proposal& pending = early != nullptr ? *early : own;
        std::uint32_t from = kFirst;
        for (;;) {
            const std::uint32_t mine = propose(from, count, &pending);
            pending.add(mine, count);
            std::uint32_t words[2] = {mine, ~mine};
            exchange(words);
            const std::uint32_t largest = words[0];
            const std::uint32_t smallest = ~words[1];
            if (largest >= kEnd) throw_exhausted(fn, count);
            if (largest == smallest) {
                pending.keep(largest, count);
                return Agreed(*this, largest);
            }
            from = largest;
        }
    }
    /// MPI_ERR_INTERN, naming `fn`: no run of `count` ids is free on every
    /// member.
    [[noreturn]] static void throw_exhausted(const char* fn, std::uint32_t count);

    /// One agreement's entries in pending_: every proposal it has made,
    /// removed when it ends (an exception included) but for the agreed
    /// ids, which keep() leaves pending for the Agreed that agree() returns.
    class Proposal {
    public:
        explicit Proposal(ContextIds& ids) : ids_(ids) {}
        ~Proposal() { ids_.unpend(this); }
        Proposal(const Proposal&) = delete;
        Proposal& operator=(const Proposal&) = delete;
        /// `count` ids from `first` were proposed.
        void add(std::uint32_t first, std::uint32_t count) const;
        /// They were agreed on: the proposals go, these stay.
        void keep(std::uint32_t first, std::uint32_t count) const;

    private:
        ContextIds& ids_;
    };

private:
    /// Ids proposed in a round of agree() that has not ended, or agreed on
    /// by one whose Agreed has not gone yet: `count` ids from `first`, for
    /// the agreement `owner` (nullptr once agreed).
    struct Pending {
        std::uint32_t first;
        std::uint32_t count;
        const Proposal* owner;
    };
    /// Removes the entries of `owner`.
    void unpend(const Proposal* owner);
    /// The Agreed for the run that starts at `c` goes: the run is no
    /// longer pending (it is held, or free again).  Agreed runs never
    /// overlap: a pending run is proposed by no other agreement.
    void forget(std::uint32_t c);

    /// Bit (c - kFirst) is set while id c is held; grows on demand.
    std::vector<std::uint64_t> bits_;
    /// Almost always empty or one entry (more only while threads of this
    /// process agree at once); written by the thread inside MPI.
    std::vector<Pending> pending_;
    std::atomic<std::uint32_t>* shared_users_ = nullptr;
};

}  // namespace shmpi
