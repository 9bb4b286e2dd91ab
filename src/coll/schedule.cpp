#include "coll/schedule.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <exception>
#include <string>

namespace shmpi::coll {

Schedule::Schedule(p2p::Engine& engine, std::uint32_t context, std::int32_t tag, int rank,
                   std::vector<std::uint32_t> world)
    : engine_(engine), context_(context), tag_(tag), rank_(rank), world_(std::move(world)) {
    // A collective's request reports no source, tag or count.
    status.MPI_SOURCE = MPI_ANY_SOURCE;
    status.MPI_TAG = MPI_ANY_TAG;
    status.MPI_ERROR = MPI_SUCCESS;
}

void Schedule::next_round() {
    if (!rounds_.back().empty()) rounds_.emplace_back();
}

void Schedule::local(std::function<void()> work) {
    Step s;
    s.kind = Kind::Local;
    s.work = std::move(work);
    rounds_.back().push_back(std::move(s));
}

void Schedule::send(int peer, const void* buf, std::int64_t count, const dtype::Datatype& type, int sub) {
    Step s;
    s.kind = Kind::Send;
    s.peer = peer;
    s.sub = sub;
    s.buf = const_cast<void*>(buf);  // only read
    s.count = count;
    s.type = &type;
    rounds_.back().push_back(std::move(s));
}

void Schedule::recv(int peer, void* buf, std::int64_t count, const dtype::Datatype& type, int sub) {
    Step s;
    s.kind = Kind::Recv;
    s.peer = peer;
    s.sub = sub;
    s.buf = buf;
    s.count = count;
    s.type = &type;
    rounds_.back().push_back(std::move(s));
}

void Schedule::send_bytes(int peer, const void* buf, std::int64_t bytes, int sub) {
    send(peer, buf, bytes, dtype::byte_type(), sub);
}

void Schedule::recv_bytes(int peer, void* buf, std::int64_t bytes, int sub) {
    recv(peer, buf, bytes, dtype::byte_type(), sub);
}

void Schedule::set_remote(std::uint32_t context, std::vector<std::uint32_t> world) {
    remote_context_ = context;
    remote_world_ = std::move(world);
}

void Schedule::send_remote(int peer, const void* buf, std::int64_t count, const dtype::Datatype& type,
                           int sub) {
    send(peer, buf, count, type, sub);
    rounds_.back().back().remote = true;
}

void Schedule::recv_remote(int peer, void* buf, std::int64_t count, const dtype::Datatype& type, int sub) {
    recv(peer, buf, count, type, sub);
    rounds_.back().back().remote = true;
}

void Schedule::send_remote_bytes(int peer, const void* buf, std::int64_t bytes, int sub) {
    send_remote(peer, buf, bytes, dtype::byte_type(), sub);
}

void Schedule::recv_remote_bytes(int peer, void* buf, std::int64_t bytes, int sub) {
    recv_remote(peer, buf, bytes, dtype::byte_type(), sub);
}

std::byte* Schedule::scratch(std::int64_t bytes) {
    scratch_.emplace_back(new std::byte[static_cast<std::size_t>(std::max<std::int64_t>(bytes, 1))]);
    return scratch_.back().get();
}

void Schedule::hold(const dtype::Datatype& t) {
    types_.emplace_back(&t);
}

p2p::Task* Schedule::start() {
    if (rounds_.back().empty() && rounds_.size() > 1) rounds_.pop_back();
    engine_.start(this);
    return this;
}

void Schedule::report(int error_class, std::string text) {
    if (status.MPI_ERROR != MPI_SUCCESS) return;  // the first error is the one reported
    status.MPI_ERROR = error_class;
    error = std::move(text);
}

void Schedule::begin_round() {
    round_begun_ = true;
    for (const Step& s : rounds_[round_]) {
        switch (s.kind) {
            case Kind::Local:
                try {
                    s.work();
                } catch (const std::exception& e) {
                    // Out of memory, say: report it, and go on, so that every
                    // message the peers expect still comes.
                    report(MPI_ERR_INTERN,
                           fmt::format("local work of round {} failed: {}", round_, e.what()));
                }
                break;
            case Kind::Send: {
                const std::vector<std::uint32_t>& world = s.remote ? remote_world_ : world_;
                posted_.push_back({engine_.isend(s.remote ? remote_context_ : context_, rank_, tag_ + s.sub,
                                                 world[static_cast<std::size_t>(s.peer)], s.buf, s.count,
                                                 *s.type, p2p::Mode::Standard),
                                   &s});
                break;
            }
            case Kind::Recv:
                posted_.push_back({engine_.irecv(s.remote ? remote_context_ : context_, s.peer, tag_ + s.sub,
                                                 s.buf, s.count, *s.type),
                                   &s});
                break;
        }
    }
}

void Schedule::check(const Posted& p) {
    if (p.step->kind != Kind::Recv) return;
    const std::uint64_t got = p.req->incoming;
    const auto want = static_cast<std::uint64_t>(p.step->count * p.step->type->size);
    if (got == want && p.req->status.MPI_ERROR == MPI_SUCCESS) return;
    report(got > want ? MPI_ERR_TRUNCATE : MPI_ERR_COUNT,
           fmt::format("{} sent {} bytes to rank {}, which expected {} (the datatype signatures of the "
                       "two calls differ)",
                       p.step->remote ? fmt::format("remote rank {}", p.step->peer)
                                      : fmt::format("rank {}", p.step->peer),
                       got, rank_, want));
}

bool Schedule::advance() {
    bool did = false;
    while (!done) {
        if (!round_begun_) {
            begin_round();
            did = true;
        }
        for (const Posted& p : posted_) {
            if (!p.req->done) return did;
        }
        for (const Posted& p : posted_) {
            check(p);
            engine_.release(p.req);
        }
        posted_.clear();
        round_begun_ = false;
        if (++round_ == rounds_.size()) done = true;
    }
    return did;
}

}  // namespace shmpi::coll
