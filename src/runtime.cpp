#include "runtime.hpp"

#include <fmt/format.h>

#include <numeric>

#include "dtype/wide_copy.hpp"
#include "errors.hpp"

namespace shmpi {

Runtime::Runtime(int thread_level, int required)
    : transport_(shm::Transport::from_environment()),
      thread_level_(thread_level),
      required_thread_level_(std::clamp(required, int{MPI_THREAD_SINGLE}, int{MPI_THREAD_MULTIPLE})),
      main_thread_(std::this_thread::get_id()) {
    // The settings read from here on are the same in every rank: a bad one
    // is reported once for the job (rethrow_init_failure()).
    try {
        dtype::check_copy_settings();
        engine_ = std::make_unique<p2p::Engine>(*transport_);
        coll_selection_ = coll::Selection::from_environment(transport_->rank() == 0);
        build_communicators();
    } catch (const std::exception&) {
        transport_->rethrow_init_failure();
    }
}

void Runtime::build_communicators() {
    const std::uint32_t n = transport_->size();
    const std::uint32_t me = transport_->rank();
    std::vector<std::uint32_t> all(n);
    std::iota(all.begin(), all.end(), 0u);
    world_ = std::make_unique<Communicator>(*engine_, kContextWorld, std::move(all),
                                            static_cast<int>(me), "MPI_COMM_WORLD");
    self_ = std::make_unique<Communicator>(*engine_, kContextSelf, std::vector<std::uint32_t>{me}, 0,
                                           "MPI_COMM_SELF");
    // The world's collectives get their region of the segment; MPI_COMM_SELF
    // has one member and needs none.
    world_shm_ = coll::ShmTeam::for_world(*transport_, *engine_);
    world_->set_shm_team(world_shm_.get());
}

Runtime::~Runtime() = default;

std::uint32_t Runtime::take_shared_context(const char* fn, std::uint32_t count, std::uint32_t users) {
    const shm::Segment* seg = transport_->segment();
    if (seg == nullptr) {
        // A singleton is every member of every communicator it makes: an id
        // it holds nowhere is free for all of them.
        const std::uint32_t c = engine_->context_ids().next_free(ContextIds::kFirst, count);
        if (c == ContextIds::kEnd) ContextIds::throw_exhausted(fn, count);
        return c;
    }
    // 1. A run of `count` free counted ids (reused).
    if (const std::uint32_t c = engine_->context_ids().claim_shared(count, users)) return c;
    // 2. All taken: ids that are never reused.  Relaxed: only the
    //    increment's atomicity matters (no two callers get one id); the id
    //    is sent to the members, nothing else is published with it.  Past
    //    the end it keeps counting (64 bits: it never wraps back into the
    //    range), and every caller fails.
    const std::uint64_t c = seg->header().next_shared_context.fetch_add(count, std::memory_order_relaxed);
    // kContextEnd - 2 and - 1 are never handed out: an idup's duplicate
    // carries them while it waits for its own (comm_create.cpp).
    if (c < shm::kSharedContextBase + shm::kSharedContextSlots || c + count > shm::kContextEnd - 2) {
        throw MpiError(MPI_ERR_OTHER,
                       fmt::format("{}: out of context ids for nonblocking communicator constructions: "
                                   "the {} reused ones are all held by communicators not yet freed, and "
                                   "the {} others, each used once when all of those are held, are spent",
                                   fn, shm::kSharedContextSlots,
                                   shm::kContextEnd - 2 - shm::kSharedContextBase - shm::kSharedContextSlots));
    }
    return static_cast<std::uint32_t>(c);
}

void Runtime::finalize() {
    // 1. Our sends, including freed and buffered ones, are all in rings or
    //    read by peers.
    bsend_buffer_.detach(*engine_);
    engine_->flush();
    // 2. Dissemination barrier on the internal context: after it, no peer
    //    will ask us for anything, so leaving is safe.
    const int n = static_cast<int>(transport_->size());
    const int me = static_cast<int>(transport_->rank());
    const dtype::Datatype& byte = dtype::byte_type();
    for (int k = 1; k < n; k <<= 1) {
        p2p::Request* s = engine_->isend(kContextInternal, me, k, static_cast<std::uint32_t>((me + k) % n),
                                         nullptr, 0, byte, p2p::Mode::Standard);
        MPI_Status st;
        engine_->recv(kContextInternal, (me - k + n) % n, k, nullptr, 0, byte, st);
        engine_->wait(*s);
        engine_->release(s);
    }
    engine_->flush();
    // A finalized rank waits no more, so it stops counting as awake
    // (Transport::crowded).
    transport_->leave_awake_count();
    transport_->set_state(shm::kFinalized);
}

}  // namespace shmpi
