// C boundary: generalized requests (MPI-3.1 12.2), operations the program
// carries out itself behind an MPI_Request, and the calls with which their
// query functions fill a status (12.3: MPI_Status_set_elements(_x),
// MPI_Status_set_cancelled).  The waits and tests, MPI_Cancel and
// MPI_Request_free call the callbacks through conclude() and the
// Generalized methods (api_p2p.cpp, api_p2p_modes.cpp).
#include <fmt/format.h>

#include <cstdint>
#include <string>

#include "api_common.hpp"
#include "api_requests.hpp"

using namespace shmpi;
using namespace shmpi::api;

namespace shmpi::api {

Generalized::Generalized(MPI_Grequest_query_function* query_fn, MPI_Grequest_free_function* free_fn,
                         MPI_Grequest_cancel_function* cancel_fn, void* extra_state)
    : query_fn_(query_fn), free_fn_(free_fn), cancel_fn_(cancel_fn), extra_state_(extra_state) {
    origin = "MPI_Grequest_start";
    // No communicator: its errors go to MPI_COMM_WORLD's handler, as do
    // those of calls related to no object (MPI-3.1 8.3).
    comm_handle = MPI_COMM_WORLD;
}

bool Generalized::advance() {
    if (done || !completed_) return false;
    done = true;
    return true;
}

int Generalized::query(MPI_Status* status) {
    // query_fn fills a status of our own: fields it leaves alone read as for
    // an empty request, not as whatever the program's status held before.
    // Then everything but MPI_ERROR goes to the caller's (put_status()):
    // MPI-3.1 3.2.5 lets only the calls that return MPI_ERR_IN_STATUS write
    // that field, and ArrayErrors does it for them.  An MPI_ERROR query_fn
    // sets is dropped, as MPICH drops it; the call reports query_fn's
    // return code instead.
    MPI_Status st = empty_status();
    const int code = query_fn_(extra_state_, &st);
    put_status(status, st);
    return code;
}

int Generalized::free_state() { return free_fn_(extra_state_); }

int Generalized::cancel() { return cancel_fn_(extra_state_, completed_ ? 1 : 0); }

Generalized* generalized_of(p2p::Request* r) {
    if (r == nullptr || r->type != p2p::Request::Type::Task) return nullptr;
    return dynamic_cast<Generalized*>(static_cast<p2p::Task*>(r));
}

int callback_failed(const Generalized& g, const std::string& what, int code, const char* fn,
                    ArrayErrors* errors, int index) {
    const auto handle = reinterpret_cast<std::uintptr_t>(static_cast<const p2p::Request*>(&g));
    const int cls = error_class_of(code);
    if (cls < 0) {
        // Nothing to hand back that MPI_Error_class could read: a code of our own.
        const MpiError e(MPI_ERR_OTHER, fmt::format("{}: generalized request {:#x}: {} returned {}, which is "
                                                    "not an MPI error code",
                                                    fn, handle, what, code));
        return errors != nullptr ? errors->defer(index, g.comm_handle, e) : raise(g.comm_handle, e);
    }
    const std::string text = error_text(code);
    const MpiError e(cls, fmt::format("{}: generalized request {:#x}: {} returned error code {}{}", fn,
                                      handle, what, code, text.empty() ? "" : " (" + text + ")"));
    return errors != nullptr ? errors->defer(index, g.comm_handle, e, code) : raise(g.comm_handle, e, code);
}

int conclude(Generalized& g, MPI_Status* status, const char* fn, ArrayErrors* errors, int index) {
    const int query_code = g.query(status);
    const int free_code = g.free_state();
    int rc = MPI_SUCCESS;
    if (free_code != MPI_SUCCESS) {
        // MPI-3.1 12.2: a call that runs both "will return the error code
        // returned by the last callback, namely free_fn".
        const std::string what = query_code == MPI_SUCCESS
                                     ? "free_fn"
                                     : fmt::format("free_fn (after query_fn returned {})", query_code);
        rc = callback_failed(g, what, free_code, fn, errors, index);
    } else if (query_code != MPI_SUCCESS) {
        rc = callback_failed(g, "query_fn", query_code, fn, errors, index);
    }
    // (MPI_ERROR is the caller's: ArrayErrors writes it where the standard
    // wants it, see put_status().)
    return rc;
}

}  // namespace shmpi::api

namespace {

template <class F>
void need_callback(F* f, const char* arg, const char* fn) {
    if (f == nullptr) throw MpiError(MPI_ERR_ARG, fmt::format("{}: {} is NULL", fn, arg));
}

/// MPI_Status_set_elements and MPI_Status_set_elements_x: the status gets
/// the bytes of `count` basic elements of `type`, which MPI_Get_elements
/// turns back into `count` and MPI_Get_count into count / (basic elements
/// per element), or MPI_UNDEFINED when that does not divide.
int set_elements(MPI_Status* status, MPI_Datatype type, MPI_Count count, const char* fn) {
    return guard(MPI_COMM_WORLD, fn, [&] {
        need(status, "status", fn);
        const dtype::Datatype& t = sized_type_of(type, fn);
        if (count < 0) throw MpiError(MPI_ERR_COUNT, fmt::format("{}: count {} is negative", fn, count));
        if (count > 0 && t.elements == 0) {
            throw MpiError(MPI_ERR_COUNT,
                           fmt::format("{}: count {} of datatype {}, which holds no basic elements "
                                       "(its size is 0): only a count of 0 fits it",
                                       fn, count, t.name));
        }
        const std::int64_t bytes = dtype::bytes_of_elements(t, count);
        if (bytes < 0) {
            throw MpiError(MPI_ERR_COUNT,
                           fmt::format("{}: count {} basic elements of datatype {} ({} of them in {} "
                                       "bytes) take more than 2^63 - 1 bytes, more than a status can "
                                       "report",
                                       fn, count, t.name, t.elements, t.size));
        }
        set_status_bytes(*status, static_cast<std::uint64_t>(bytes));
    });
}

}  // namespace

extern "C" {

int PMPI_Grequest_start(MPI_Grequest_query_function* query_fn, MPI_Grequest_free_function* free_fn,
                        MPI_Grequest_cancel_function* cancel_fn, void* extra_state, MPI_Request* request) {
    const char* fn = "MPI_Grequest_start";
    return guard(MPI_COMM_WORLD, fn, [&] {
        Runtime& rt = running(fn);
        // MPI-3.1 defines no null callbacks for generalized requests.
        need_callback(query_fn, "query_fn", fn);
        need_callback(free_fn, "free_fn", fn);
        need_callback(cancel_fn, "cancel_fn", fn);
        need(request, "request", fn);
        auto* g = new Generalized(query_fn, free_fn, cancel_fn, extra_state);
        // From now on every progress() checks whether it is complete.
        rt.engine().start(g);
        // Until it is complete, the launcher's deadlock check leaves this
        // rank alone: another thread may complete it while we wait.
        rt.transport().grequest_opened();
        // The handle is the address of the Request part (see finish()).
        p2p::Request* r = g;
        *request = reinterpret_cast<MPI_Request>(r);
    });
}
SHMPI_WEAK_ALIAS(Grequest_start);

int PMPI_Grequest_complete(MPI_Request request) {
    const char* fn = "MPI_Grequest_complete";
    int rc = MPI_SUCCESS;
    const int outer = guard(MPI_COMM_WORLD, fn, [&] {
        Runtime& rt = running(fn);
        if (request == MPI_REQUEST_NULL) {
            throw MpiError(MPI_ERR_REQUEST, fmt::format("{}: request is MPI_REQUEST_NULL", fn));
        }
        const auto handle = reinterpret_cast<std::uintptr_t>(request);
        Generalized* g = generalized_of(&request_of(request, fn));
        if (g == nullptr) {
            throw MpiError(MPI_ERR_REQUEST,
                           fmt::format("{}: request {:#x} is not a generalized request (only "
                                       "MPI_Grequest_start makes those)",
                                       fn, handle));
        }
        if (g->completed()) {
            throw MpiError(MPI_ERR_REQUEST,
                           fmt::format("{}: generalized request {:#x} is already complete", fn, handle));
        }
        g->complete();
        rt.transport().grequest_completed();
        // Freed by MPI_Request_free before it was complete: free_fn's turn
        // is now (MPI-3.1 12.2), and the engine deletes the request at its
        // next progress(), once it has seen it done.
        if (g->freed) {
            const int code = g->free_state();
            if (code != MPI_SUCCESS) rc = callback_failed(*g, "free_fn", code, fn);
        }
    });
    return outer != MPI_SUCCESS ? outer : rc;
}
SHMPI_WEAK_ALIAS(Grequest_complete);

int PMPI_Status_set_elements(MPI_Status* status, MPI_Datatype datatype, int count) {
    return set_elements(status, datatype, count, "MPI_Status_set_elements");
}
SHMPI_WEAK_ALIAS(Status_set_elements);

int PMPI_Status_set_elements_x(MPI_Status* status, MPI_Datatype datatype, MPI_Count count) {
    return set_elements(status, datatype, count, "MPI_Status_set_elements_x");
}
SHMPI_WEAK_ALIAS(Status_set_elements_x);

int PMPI_Status_set_cancelled(MPI_Status* status, int flag) {
    const char* fn = "MPI_Status_set_cancelled";
    return guard(MPI_COMM_WORLD, fn, [&] {
        need(status, "status", fn);
        // What MPI_Test_cancelled reads.
        status->shmpi_cancelled = flag != 0 ? 1 : 0;
    });
}
SHMPI_WEAK_ALIAS(Status_set_cancelled);

}  // extern "C"
