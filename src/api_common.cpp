#include "api_common.hpp"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <fmt/format.h>
#include <unistd.h>

namespace shmpi::api {
namespace {
/// MPI_Initialized and MPI_Finalized may be called from any thread at any
/// time (MPI-3.1 8.7: "always thread-safe"), so the phase is atomic.
/// Written by MPI_Init and MPI_Finalize; release: a thread that sees
/// Running (acquire) also sees the runtime set up before it.
std::atomic<Phase> g_phase{Phase::Before};
Runtime* g_runtime = nullptr;

}  // namespace

Phase phase() { return g_phase.load(std::memory_order_acquire); }
void set_phase(Phase p) { g_phase.store(p, std::memory_order_release); }
Runtime& runtime() { return *g_runtime; }
void set_runtime(Runtime* rt) { g_runtime = rt; }

void exit_flushed(int code) {
    std::fflush(stdout);
    std::fflush(stderr);
    _exit(code);
}

void not_running(const char* fn) {
    std::fprintf(stderr, "shmpi: %s: called %s\n", fn,
                 phase() == Phase::Before ? "before MPI_Init" : "after MPI_Finalize");
    exit_flushed(1);
}

Communicator& comm_of(MPI_Comm handle, const char* fn) {
    Runtime& rt = running(fn);
    if (handle == MPI_COMM_WORLD) return rt.world();
    if (handle == MPI_COMM_SELF) return rt.self();
    const auto v = reinterpret_cast<std::uintptr_t>(handle);
    if (handle == MPI_COMM_NULL) throw MpiError(MPI_ERR_COMM, fmt::format("{}: communicator is MPI_COMM_NULL", fn));
    if (v < kPredefinedLimit || !HandleStorage::may_read_as<Communicator>(handle)) {
        throw MpiError(MPI_ERR_COMM, fmt::format("{}: invalid communicator {:#x}", fn, v));
    }
    const std::uint32_t magic = reinterpret_cast<const Communicator*>(handle)->magic();
    if (magic == kFreedMagic || magic == Communicator::kLingerMagic) {
        throw MpiError(MPI_ERR_COMM, fmt::format("{}: communicator {:#x} has been freed (MPI_Comm_free)", fn, v));
    }
    if (magic != Communicator::kMagic) throw MpiError(MPI_ERR_COMM, fmt::format("{}: invalid communicator {:#x}", fn, v));
    return *reinterpret_cast<Communicator*>(handle);
}

Communicator& intracomm_of(MPI_Comm handle, const char* fn) {
    Communicator& c = comm_of(handle, fn);
    if (c.inter()) {
        throw MpiError(
            MPI_ERR_COMM,
            fmt::format("{}: {} is an intercommunicator; {} needs an intracommunicator", fn, c.label(), fn));
    }
    return c;
}

namespace detail {

void bad_type(MPI_Datatype handle, const char* arg, const char* fn) {
    // Named after the argument where the caller gave one: "MPI_Send:
    // datatype ... (argument datatype)".
    auto say = [arg](std::string m) { return arg == nullptr ? m : fmt::format("{} (argument {})", m, arg); };
    const auto v = reinterpret_cast<std::uintptr_t>(handle);
    if (handle == MPI_DATATYPE_NULL) throw MpiError(MPI_ERR_TYPE, say(fmt::format("{}: datatype is MPI_DATATYPE_NULL", fn)));
    const dtype::Datatype* t = dtype::lookup(handle);
    if (t == nullptr && dtype::freed(handle)) {
        throw MpiError(MPI_ERR_TYPE, say(fmt::format("{}: datatype {:#x} has been freed (MPI_Type_free)", fn, v)));
    }
    if (t == nullptr) throw MpiError(MPI_ERR_TYPE, say(fmt::format("{}: invalid datatype {:#x}", fn, v)));
    if (handle == MPI_LB || handle == MPI_UB) {
        throw MpiError(MPI_ERR_TYPE, say(fmt::format("{}: {} is a bound marker, not a datatype for data", fn, t->name)));
    }
    throw MpiError(MPI_ERR_TYPE,
                   say(fmt::format("{}: datatype {} is not committed (call MPI_Type_commit)", fn, t->name)));
}

}  // namespace detail

const dtype::Datatype& block_type_arg(MPI_Datatype handle, int count, const char* arg, const char* fn) {
    if (count == 0 && handle == MPI_DATATYPE_NULL) return dtype::byte_type();
    return type_arg(handle, arg, fn);
}

std::string request_text(MPI_Request handle, int index) {
    const auto v = reinterpret_cast<std::uintptr_t>(handle);
    if (index < 0) return fmt::format("request {:#x}", v);
    return fmt::format("request {:#x} (array_of_requests[{}])", v, index);
}

p2p::Request& request_of(MPI_Request handle, const char* fn, int index) {
    const auto v = reinterpret_cast<std::uintptr_t>(handle);
    const std::uint32_t magic = v < kPredefinedLimit || !HandleStorage::may_read_as<p2p::Request>(handle)
                                    ? 0
                                    : reinterpret_cast<const p2p::Request*>(handle)->magic;
    if (magic == kFreedMagic) {
        throw MpiError(MPI_ERR_REQUEST, fmt::format("{}: {} has been freed (completed, or MPI_Request_free)", fn,
                                                    request_text(handle, index)));
    }
    if (magic != p2p::Request::kMagic) {
        throw MpiError(MPI_ERR_REQUEST, fmt::format("{}: invalid {}", fn, request_text(handle, index)));
    }
    return *reinterpret_cast<p2p::Request*>(handle);
}

void need(const void* p, const char* arg, const char* fn) {
    if (p == nullptr) throw MpiError(MPI_ERR_ARG, fmt::format("{}: {} is NULL", fn, arg));
}

void need_status(const MPI_Status* status, const char* fn) {
    if (status == MPI_STATUS_IGNORE) {
        throw MpiError(MPI_ERR_ARG, fmt::format("{}: status is NULL (MPI_STATUS_IGNORE), which holds nothing to read",
                                                fn));
    }
}

void check_count(int count, const char* fn) {
    if (count < 0) throw MpiError(MPI_ERR_COUNT, fmt::format("{}: count {} is negative", fn, count));
}

void check_send_tag(int tag, const char* fn) {
    if (tag < 0) {
        throw MpiError(MPI_ERR_TAG, fmt::format("{}: invalid tag {} (tags go from 0 to MPI_TAG_UB)", fn, tag));
    }
}

void check_recv_tag(int tag, const char* fn) {
    if (tag < 0 && tag != MPI_ANY_TAG) {
        throw MpiError(MPI_ERR_TAG,
                       fmt::format("{}: invalid tag {} (tags go from 0 to MPI_TAG_UB, or MPI_ANY_TAG)", fn, tag));
    }
}

void check_dest(const Communicator& c, int rank, const char* fn) {
    if (rank == MPI_PROC_NULL) return;
    if (rank < 0 || rank >= c.peer_count()) {
        if (c.inter()) {
            throw MpiError(MPI_ERR_RANK, fmt::format("{}: invalid rank {} (remote group size {})", fn, rank,
                                                     c.peer_count()));
        }
        throw MpiError(MPI_ERR_RANK, fmt::format("{}: invalid rank {} (communicator size {})", fn, rank, c.size()));
    }
}

void check_source(const Communicator& c, int rank, const char* fn) {
    if (rank == MPI_ANY_SOURCE) return;
    check_dest(c, rank, fn);
}

UserErrhandler* user_errhandler(MPI_Errhandler e) {
    const auto v = reinterpret_cast<std::uintptr_t>(e);
    if (v < kPredefinedLimit || !HandleStorage::may_read_as<UserErrhandler>(e)) return nullptr;
    auto* u = reinterpret_cast<UserErrhandler*>(e);
    return u->magic == UserErrhandler::kMagic ? u : nullptr;
}

void retain(MPI_Errhandler e) {
    if (UserErrhandler* u = user_errhandler(e)) ++u->refs;
}

void release(MPI_Errhandler e) {
    UserErrhandler* u = user_errhandler(e);
    if (u != nullptr && --u->refs == 0) {
        u->magic = 0;
        delete u;
    }
}

namespace {

/// raise() and raise_on_request(): `lingering` says whether a communicator
/// freed while requests hold it may still handle the error.
int raise_on(MPI_Comm comm, const MpiError& e, int code, bool lingering) {
    MPI_Errhandler eh = MPI_ERRORS_ARE_FATAL;
    MPI_Comm target = MPI_COMM_WORLD;
    if (phase() == Phase::Running) {
        Runtime& rt = runtime();
        Communicator* c = &rt.world();
        if (comm == MPI_COMM_SELF) {
            c = &rt.self();
            target = comm;
        } else if (comm != MPI_COMM_WORLD && comm != MPI_COMM_NULL &&
                   reinterpret_cast<std::uintptr_t>(comm) >= kPredefinedLimit &&
                   HandleStorage::may_read_as<Communicator>(comm)) {
            const std::uint32_t magic = reinterpret_cast<const Communicator*>(comm)->magic();
            if (magic == Communicator::kMagic || (lingering && magic == Communicator::kLingerMagic)) {
                c = reinterpret_cast<Communicator*>(comm);
                target = comm;
            }
        }
        eh = c->errhandler();
    }
    if (eh == MPI_ERRORS_RETURN) return code >= 0 ? code : make_error_code(e.error_class(), e.what());
    if (UserErrhandler* u = user_errhandler(eh)) {
        if (code < 0) code = make_error_code(e.error_class(), e.what());
        u->fn(&target, &code);
        return code;
    }
    std::fprintf(stderr, "shmpi: %s\n", e.what());
    // mpirun names the class in its line; the job's exit status is 1.
    if (phase() == Phase::Running) runtime().transport().abort_job(e.error_class(), shm::kAbortFatal);
    exit_flushed(1);
}

}  // namespace

int raise(MPI_Comm comm, const MpiError& e, int code) {
    return raise_on(comm, e, code, false);
}

int raise_on_request(MPI_Comm comm, const MpiError& e, int code) {
    return raise_on(comm, e, code, true);
}

}  // namespace shmpi::api
