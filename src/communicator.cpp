#include "communicator.hpp"

#include "coll/shm_team.hpp"
#include "shm/layout.hpp"

namespace shmpi {

Communicator::Communicator(p2p::Engine& engine, std::uint32_t context,
                           std::vector<std::uint32_t> world_ranks, int my_rank, std::string name)
    : engine_(engine), context_(context), world_(std::move(world_ranks)), rank_(my_rank),
      name_(std::move(name)) {
    engine_.context_ids().hold(context_);  // first: a throw here leaves nothing to undo
    team_.engine = &engine_;
    team_.context = coll_context();
    team_.rank = rank_;
    team_.size = size();
    team_.world = &world_;
}

std::unique_ptr<Communicator> Communicator::make_inter(p2p::Engine& engine, std::uint32_t context,
                                                       std::vector<std::uint32_t> local_world, int my_rank,
                                                       std::vector<std::uint32_t> remote_world) {
    auto c = std::make_unique<Communicator>(engine, context, local_world, my_rank, "");
    c->remote_ = std::move(remote_world);
    c->local_ = std::make_unique<Communicator>(engine, context + 1, std::move(local_world), my_rank, "");
    return c;
}

Communicator::~Communicator() {
    magic_ = 0;
    leave_pool_region();
    // local_, with the next id, drops its own.
    engine_.context_ids().drop(context_);
}

void Communicator::linger() {
    magic_ = kLingerMagic;
    leave_pool_region();
}

void Communicator::leave_pool_region() {
    team_.shm = nullptr;
    pool_team_.reset();
    if (pool_entry_ == nullptr) return;
    // Why every member has finished with every other member's data in the
    // region when the count reaches 0: MPI_Comm_free is collective, and
    // only the blocking collectives use the region (the nonblocking ones
    // travel as point-to-point messages and never touch it), so each member
    // decrements only after it returned from its last collective that used
    // the region, and a member returns from a collective only after it has
    // read all it needed from the others (a root that only publishes
    // returns early, but its readers decrement after their reads).  The
    // last decrement thus follows every member's last access to the region;
    // its acquire gathers them (every decrement releases its member's flag
    // stores), and the release store of 0 hands them all to the next
    // claimer's acquire.
    if (pool_entry_->users.fetch_sub(1, std::memory_order_acq_rel) == 1) {
        pool_entry_->owner.store(0, std::memory_order_release);
    }
    pool_entry_ = nullptr;
}

void Communicator::hold_pool_region(std::unique_ptr<coll::ShmTeam> shm, shm::PoolEntry& entry) {
    pool_team_ = std::move(shm);
    pool_entry_ = &entry;
    team_.shm = pool_team_.get();
}

std::string Communicator::label() const {
    if (!name_.empty()) return name_;
    return "communicator of size " + std::to_string(size()) + " (context " + std::to_string(context_) + ")";
}

MPI_Status null_status() {
    MPI_Status s{};
    s.MPI_SOURCE = MPI_PROC_NULL;
    s.MPI_TAG = MPI_ANY_TAG;
    s.MPI_ERROR = MPI_SUCCESS;
    return s;
}

p2p::Request* Communicator::isend(const void* buf, std::int64_t count, const dtype::Datatype& type,
                                  int dest, int tag, p2p::Mode mode) {
    if (dest == MPI_PROC_NULL) {
        p2p::Request* r = engine_.new_request();
        r->done = true;
        r->status = null_status();
        return r;
    }
    return engine_.isend(context_, rank_, tag, peer_world(dest), buf, count, type, mode);
}

void Communicator::send(const void* buf, std::int64_t count, const dtype::Datatype& type, int dest,
                        int tag, p2p::Mode mode) {
    if (dest == MPI_PROC_NULL) return;
    engine_.send(context_, rank_, tag, peer_world(dest), buf, count, type, mode);
}

p2p::Request* Communicator::irecv(void* buf, std::int64_t count, const dtype::Datatype& type,
                                  int source, int tag) {
    if (source == MPI_PROC_NULL) {
        p2p::Request* r = engine_.new_request();
        r->type = p2p::Request::Type::Recv;
        r->done = true;
        r->status = null_status();
        return r;
    }
    return engine_.irecv(context_, source, tag, buf, count, type);
}

std::uint64_t Communicator::recv(void* buf, std::int64_t count, const dtype::Datatype& type,
                                 int source, int tag, MPI_Status& status) {
    if (source == MPI_PROC_NULL) {
        status = null_status();
        return 0;
    }
    // -1: any source (the engine's fast path needs a named one).
    const std::int64_t src_world = source == MPI_ANY_SOURCE ? -1 : std::int64_t{peer_world(source)};
    return engine_.recv(context_, source, tag, buf, count, type, status, src_world);
}

bool Communicator::iprobe(int source, int tag, MPI_Status& status) {
    if (source == MPI_PROC_NULL) {
        status = null_status();
        return true;
    }
    return engine_.iprobe(context_, source, tag, status);
}

void Communicator::probe(int source, int tag, MPI_Status& status) {
    if (source == MPI_PROC_NULL) {
        status = null_status();
        return;
    }
    engine_.probe(context_, source, tag, status);
}

bool Communicator::improbe(int source, int tag, MPI_Status& status, p2p::Unexpected*& message) {
    message = nullptr;
    if (source == MPI_PROC_NULL) {
        status = null_status();
        return true;
    }
    message = engine_.improbe(context_, source, tag, status);
    return message != nullptr;
}

p2p::Unexpected* Communicator::mprobe(int source, int tag, MPI_Status& status) {
    if (source == MPI_PROC_NULL) {
        status = null_status();
        return nullptr;
    }
    return engine_.mprobe(context_, source, tag, status);
}

p2p::Request* Communicator::imrecv(p2p::Unexpected* message, void* buf, std::int64_t count,
                                   const dtype::Datatype& type) {
    if (message == nullptr) return irecv(buf, count, type, MPI_PROC_NULL, MPI_ANY_TAG);
    return engine_.imrecv(message, buf, count, type);
}

}  // namespace shmpi
