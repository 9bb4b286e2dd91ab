// The per-process MPI runtime: made by MPI_Init, torn down by MPI_Finalize,
// and passed down from the C boundary to everything below it.
#pragma once

#include <memory>
#include <thread>

#include "coll/select.hpp"
#include "coll/shm_team.hpp"
#include "communicator.hpp"
#include "bsend.hpp"
#include "p2p.hpp"
#include "shm/transport.hpp"

namespace shmpi {

/// Context ids.  Every communicator has its own; the engine never lets
/// traffic of one context match a receive on another.  These are the
/// predefined ones; the others are agreed on (ContextIds, from
/// ContextIds::kFirst) or taken from the segment (take_shared_context()).
enum : std::uint32_t { kContextWorld = 0, kContextSelf = 1, kContextInternal = 2 };

class Runtime {
public:
    /// Attaches to the job (or makes a 1-rank job) and builds MPI_COMM_WORLD
    /// and MPI_COMM_SELF.  `thread_level` is what MPI_Init_thread provides,
    /// `required` what its caller asked for (MPI_THREAD_SINGLE for MPI_Init).
    /// Throws shm::SegmentError or MpiError (also for a bad SHMPI_COLL*).
    Runtime(int thread_level, int required);
    ~Runtime();

    shm::Transport& transport() { return *transport_; }
    p2p::Engine& engine() { return *engine_; }
    /// The buffer of MPI_Bsend (MPI_Buffer_attach).
    p2p::BsendBuffer& bsend_buffer() { return bsend_buffer_; }
    Communicator& world() { return *world_; }
    Communicator& self() { return *self_; }
    /// MPI_COMM_WORLD's shared-memory collective state, or null (a singleton
    /// without a segment).  comm_create.cpp reuses its single-copy probe.
    coll::ShmTeam* world_shm() { return world_shm_.get(); }
    int thread_level() const { return thread_level_; }
    /// The level MPI_Init_thread was asked for (MPI_INFO_ENV's "thread_level").
    int required_thread_level() const { return required_thread_level_; }
    bool is_main_thread() const { return std::this_thread::get_id() == main_thread_; }
    /// Which algorithm each collective runs (SHMPI_COLL*, read at MPI_Init).
    const coll::Selection& coll_selection() const { return coll_selection_; }
    /// A context id that no process holds, taken without asking anyone
    /// (MPI_Comm_idup's rank 0; shm::kSharedContextBase and up): one that
    /// the segment counts (reused, SegmentHeader::shared_context_users),
    /// claimed for `users` processes, each of which gives it back by
    /// deleting its communicator on it; when all those are held, one of
    /// next_shared_context's (never reused).  A singleton takes an id it
    /// does not hold (ContextIds).  With `count` > 1, that many consecutive
    /// ids, the first returned.  Throws MpiError (MPI_ERR_INTERN, naming
    /// `fn`) once the range is used up.
    std::uint32_t take_shared_context(const char* fn, std::uint32_t count, std::uint32_t users);

    /// MPI_Finalize: completes outgoing traffic, then waits for every rank
    /// (a barrier on an internal context), then marks this rank finalized.
    void finalize();

private:
    /// MPI_COMM_WORLD, MPI_COMM_SELF and the world's collective state.
    void build_communicators();

    std::unique_ptr<shm::Transport> transport_;
    std::unique_ptr<p2p::Engine> engine_;
    p2p::BsendBuffer bsend_buffer_;
    std::unique_ptr<Communicator> world_;
    std::unique_ptr<Communicator> self_;
    /// MPI_COMM_WORLD's shared-memory collective state (null in a singleton
    /// without a segment); declared after world_ so it goes first.
    std::unique_ptr<coll::ShmTeam> world_shm_;
    int thread_level_;
    int required_thread_level_;
    std::thread::id main_thread_;
    coll::Selection coll_selection_;
};

}  // namespace shmpi
