// C boundary: point-to-point communication and request completion.
#include <fmt/format.h>

#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "api_common.hpp"
#include "api_requests.hpp"

using namespace shmpi;
using namespace shmpi::api;
using shmpi::p2p::Mode;
using shmpi::p2p::Request;

namespace {

/// A received message whose bytes end inside a basic element of the
/// receive type (Engine::check_elements).
MpiError partial_element(const char* fn, const MPI_Status& st, std::uint64_t bytes, const dtype::Datatype& t) {
    return MpiError(MPI_ERR_TYPE, fmt::format("{}: message from rank {} with tag {} has {} bytes, which end inside "
                                              "a basic element of the receive type {}: the send and receive type "
                                              "signatures differ",
                                              fn, st.MPI_SOURCE, st.MPI_TAG, bytes, t.name));
}

/// The error a finished request reports, as an MpiError naming `fn`.
MpiError request_error(const Request& r, const char* fn) {
    if (r.type == Request::Type::Task) {
        const auto& t = static_cast<const p2p::Task&>(r);
        return MpiError(r.status.MPI_ERROR, fmt::format("{}: {}: {}", fn, t.origin, t.error));
    }
    if (r.status.MPI_ERROR == MPI_ERR_TYPE && r.type_info != nullptr) {
        return partial_element(fn, r.status, r.incoming, *r.type_info);
    }
    return MpiError(r.status.MPI_ERROR,
                    fmt::format("{}: message from rank {} with tag {} has {} bytes but the receive "
                                "buffer holds only {} (count {} of {})",
                                fn, r.status.MPI_SOURCE, r.status.MPI_TAG, r.incoming, r.capacity,
                                r.count, r.type_info != nullptr ? r.type_info->name : "?"));
}

}  // namespace

namespace shmpi::api {

MPI_Status empty_status() {
    MPI_Status s{};
    s.MPI_SOURCE = MPI_ANY_SOURCE;
    s.MPI_TAG = MPI_ANY_TAG;
    s.MPI_ERROR = MPI_SUCCESS;
    return s;
}

MPI_Request completed_request(const MPI_Status& status) {
    p2p::Request* r = runtime().engine().new_request();
    r->done = true;
    r->comm_handle = MPI_COMM_WORLD;
    r->status = status;
    return reinterpret_cast<MPI_Request>(r);
}

int ArrayErrors::defer(int index, MPI_Comm comm, const MpiError& e, int code) {
    if (failed_++ == 0) {
        first_index_ = index;
        first_comm_ = comm;
        // result() raises on it after the request's own hold is gone.
        holds_first_ = add_comm_hold(comm);
        first_message_ = e.what();
    }
    return code >= 0 ? code : make_error_code(e.error_class(), e.what());
}

ArrayErrors::~ArrayErrors() {
    if (holds_first_) drop_comm_hold(first_comm_);
}

int ArrayErrors::result() const {
    if (failed_ == 0) return MPI_SUCCESS;
    for (const Completed& c : statuses_) c.status->MPI_ERROR = c.code;
    // The request's own message names fn_ already: drop that prefix.
    std::string_view first = first_message_;
    const std::string prefix = std::string(fn_) + ": ";
    if (first.starts_with(prefix)) first.remove_prefix(prefix.size());
    // The code is MPI_ERR_IN_STATUS itself (MPI-3.1 3.7.5: programs compare
    // with it); the text is for MPI_ERRORS_ARE_FATAL's message.
    return raise_on_request(
        first_comm_,
        MpiError(MPI_ERR_IN_STATUS,
                 fmt::format("{}: {} request{} failed (MPI_ERR_IN_STATUS: each status's MPI_ERROR "
                             "has its error); the first, request {}: {}",
                             fn_, failed_, failed_ == 1 ? "" : "s", first_index_, first)),
        MPI_ERR_IN_STATUS);
}

int retire(MPI_Request* handle, MPI_Status* status, const char* fn, ArrayErrors* errors, int index) {
    Request* r = reinterpret_cast<Request*>(*handle);
    Persistent* p = r->type == Request::Type::Persistent ? static_cast<Persistent*>(r) : nullptr;
    if (p != nullptr) r = p->active;
    int rc = MPI_SUCCESS;
    if (Generalized* g = generalized_of(r)) {
        rc = conclude(*g, status, fn, errors, index);
    } else {
        MPI_Status st = r->status;
        if (st.MPI_ERROR != MPI_SUCCESS) {
            const MpiError e = request_error(*r, fn);
            rc = errors != nullptr ? errors->defer(index, r->comm_handle, e)
                                   : raise_on_request(r->comm_handle, e);
        }
        put_status(status, st);
    }
    if (errors != nullptr) errors->completed(status, rc);
    drop_comm(*r);  // after the error handler ran: this may delete a freed communicator
    runtime().engine().release(r);
    if (p != nullptr) {
        p->active = nullptr;
    } else {
        *handle = MPI_REQUEST_NULL;
    }
    return rc;
}

p2p::Request* active_of(MPI_Request handle, const char* fn, int index) {
    if (handle == MPI_REQUEST_NULL) return nullptr;
    Request& r = request_of(handle, fn, index);
    if (r.type == Request::Type::Persistent) return static_cast<Persistent&>(r).active;
    return &r;
}

}  // namespace shmpi::api

namespace {

/// Checks a request array and returns the active requests (nullptr for null
/// and inactive ones).
std::vector<Request*> requests_of(int count, MPI_Request reqs[], const char* fn) {
    if (count < 0) throw MpiError(MPI_ERR_COUNT, fmt::format("{}: count {} is negative", fn, count));
    if (count > 0 && reqs == nullptr) throw MpiError(MPI_ERR_ARG, fmt::format("{}: array_of_requests is NULL", fn));
    std::vector<Request*> out(static_cast<std::size_t>(count), nullptr);
    for (int i = 0; i < count; ++i) out[static_cast<std::size_t>(i)] = active_of(reqs[i], fn, i);
    return out;
}

/// Waitall and Testall once every request is done: retires each active one
/// into its status (an empty status for the rest); returns MPI_SUCCESS or
/// MPI_ERR_IN_STATUS as ArrayErrors decides.
int retire_all(MPI_Request reqs[], const std::vector<Request*>& rs, MPI_Status statuses[], const char* fn) {
    ArrayErrors errors(fn);
    for (std::size_t i = 0; i < rs.size(); ++i) {
        const int at = static_cast<int>(i);
        MPI_Status* st = statuses == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE : &statuses[i];
        if (rs[i] == nullptr) {
            put_empty_status(st);
            continue;
        }
        retire(&reqs[i], st, fn, &errors, at);
    }
    return errors.result();
}

int start_send(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
               MPI_Request* request, Mode mode, const char* fn) {
    return guard(comm, fn, [&] {
        Communicator& c = comm_of(comm, fn);
        const dtype::Datatype& t = check_send(c, buf, count, type, dest, tag, fn);
        if (request == nullptr) throw MpiError(MPI_ERR_ARG, fmt::format("{}: request is NULL", fn));
        Request* r = c.isend(buf, count, t, dest, tag, mode);
        hold_comm(*r, comm);
        *request = reinterpret_cast<MPI_Request>(r);
    });
}

int blocking_send(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                  Mode mode, const char* fn) {
    return guard(comm, fn, [&] {
        Communicator& c = comm_of(comm, fn);
        const dtype::Datatype& t = check_send(c, buf, count, type, dest, tag, fn);
        c.send(buf, count, t, dest, tag, mode);
    });
}

}  // namespace

extern "C" {

int PMPI_Send(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
    return blocking_send(buf, count, type, dest, tag, comm, Mode::Standard, "MPI_Send");
}
SHMPI_WEAK_ALIAS(Send);

int PMPI_Ssend(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
    return blocking_send(buf, count, type, dest, tag, comm, Mode::Sync, "MPI_Ssend");
}
SHMPI_WEAK_ALIAS(Ssend);

int PMPI_Isend(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
               MPI_Request* request) {
    return start_send(buf, count, type, dest, tag, comm, request, Mode::Standard, "MPI_Isend");
}
SHMPI_WEAK_ALIAS(Isend);

int PMPI_Issend(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                MPI_Request* request) {
    return start_send(buf, count, type, dest, tag, comm, request, Mode::Sync, "MPI_Issend");
}
SHMPI_WEAK_ALIAS(Issend);

int PMPI_Recv(void* buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
              MPI_Status* status) {
    const char* fn = "MPI_Recv";
    return guard(comm, fn, [&] {
        Communicator& c = comm_of(comm, fn);
        check_count(count, fn);
        const dtype::Datatype& t = type_of(type, fn);
        check_buffer(buf, count, t, "buf", fn);
        check_recv_tag(tag, fn);
        check_source(c, source, fn);
        MPI_Status st;
        const std::uint64_t incoming = c.recv(buf, count, t, source, tag, st);
        put_status(status, st);
        if (st.MPI_ERROR == MPI_ERR_TYPE) throw partial_element(fn, st, incoming, t);
        if (st.MPI_ERROR != MPI_SUCCESS) {
            throw MpiError(st.MPI_ERROR,
                           fmt::format("{}: message from rank {} with tag {} has {} bytes but the "
                                       "receive buffer holds only {} (count {} of {})",
                                       fn, st.MPI_SOURCE, st.MPI_TAG, incoming, count * t.size, count, t.name));
        }
    });
}
SHMPI_WEAK_ALIAS(Recv);

int PMPI_Irecv(void* buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
               MPI_Request* request) {
    const char* fn = "MPI_Irecv";
    return guard(comm, fn, [&] {
        Communicator& c = comm_of(comm, fn);
        check_count(count, fn);
        const dtype::Datatype& t = type_of(type, fn);
        check_buffer(buf, count, t, "buf", fn);
        check_recv_tag(tag, fn);
        check_source(c, source, fn);
        if (request == nullptr) throw MpiError(MPI_ERR_ARG, "MPI_Irecv: request is NULL");
        Request* r = c.irecv(buf, count, t, source, tag);
        hold_comm(*r, comm);
        *request = reinterpret_cast<MPI_Request>(r);
    });
}
SHMPI_WEAK_ALIAS(Irecv);

int PMPI_Sendrecv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag,
                  void* recvbuf, int recvcount, MPI_Datatype recvtype, int source, int recvtag,
                  MPI_Comm comm, MPI_Status* status) {
    const char* fn = "MPI_Sendrecv";
    int rc = MPI_SUCCESS;
    const int outer = guard(comm, fn, [&] {
        Communicator& c = comm_of(comm, fn);
        check_count(sendcount, fn);
        check_count(recvcount, fn);
        const dtype::Datatype& st = type_of(sendtype, fn);
        const dtype::Datatype& rt = type_of(recvtype, fn);
        check_buffer(sendbuf, sendcount, st, "sendbuf", fn);
        check_buffer(recvbuf, recvcount, rt, "recvbuf", fn);
        check_send_tag(sendtag, fn);
        check_recv_tag(recvtag, fn);
        check_dest(c, dest, fn);
        check_source(c, source, fn);
        Request* r = c.irecv(recvbuf, recvcount, rt, source, recvtag);
        hold_comm(*r, comm);
        c.send(sendbuf, sendcount, st, dest, sendtag, Mode::Standard);
        c.engine().wait(*r);
        MPI_Request h = reinterpret_cast<MPI_Request>(r);
        rc = retire(&h, status, fn);
    });
    return outer != MPI_SUCCESS ? outer : rc;
}
SHMPI_WEAK_ALIAS(Sendrecv);

int PMPI_Sendrecv_replace(void* buf, int count, MPI_Datatype type, int dest, int sendtag, int source,
                          int recvtag, MPI_Comm comm, MPI_Status* status) {
    const char* fn = "MPI_Sendrecv_replace";
    int rc = MPI_SUCCESS;
    const int outer = guard(comm, fn, [&] {
        Communicator& c = comm_of(comm, fn);
        check_count(count, fn);
        const dtype::Datatype& t = type_of(type, fn);
        check_buffer(buf, count, t, "buf", fn);
        check_send_tag(sendtag, fn);
        check_recv_tag(recvtag, fn);
        check_dest(c, dest, fn);
        check_source(c, source, fn);
        // Send from a packed copy, so the receive may land in `buf` at once.
        const std::int64_t bytes = count * t.size;
        std::unique_ptr<std::byte[]> copy(new std::byte[static_cast<std::size_t>(bytes)]);
        dtype::pack(t, buf, count, copy.get());
        const dtype::Datatype& byte = dtype::byte_type();
        Request* r = c.irecv(buf, count, t, source, recvtag);
        hold_comm(*r, comm);
        c.send(copy.get(), bytes, byte, dest, sendtag, Mode::Standard);
        c.engine().wait(*r);
        MPI_Request h = reinterpret_cast<MPI_Request>(r);
        rc = retire(&h, status, fn);
    });
    return outer != MPI_SUCCESS ? outer : rc;
}
SHMPI_WEAK_ALIAS(Sendrecv_replace);

int PMPI_Wait(MPI_Request* request, MPI_Status* status) {
    const char* fn = "MPI_Wait";
    int rc = MPI_SUCCESS;
    const int outer = guard(MPI_COMM_WORLD, fn, [&] {
        Runtime& rt = running(fn);
        if (request == nullptr) throw MpiError(MPI_ERR_ARG, "MPI_Wait: request is NULL");
        Request* r = active_of(*request, fn);
        if (r == nullptr) {
            put_empty_status(status);
            return;
        }
        rt.engine().wait(*r);
        rc = retire(request, status, fn);
    });
    return outer != MPI_SUCCESS ? outer : rc;
}
SHMPI_WEAK_ALIAS(Wait);

int PMPI_Test(MPI_Request* request, int* flag, MPI_Status* status) {
    const char* fn = "MPI_Test";
    int rc = MPI_SUCCESS;
    const int outer = guard(MPI_COMM_WORLD, fn, [&] {
        Runtime& rt = running(fn);
        if (request == nullptr || flag == nullptr) [[unlikely]] {  // MPI_Test is polled: no call unless one is NULL
            need(request, "request", fn);
            need(flag, "flag", fn);
        }
        Request* r = active_of(*request, fn);
        if (r == nullptr) {
            *flag = 1;
            put_empty_status(status);
            return;
        }
        if (!r->done) rt.engine().progress();
        *flag = r->done ? 1 : 0;
        if (r->done) {
            rc = retire(request, status, fn);
        } else {
            rt.engine().missed();
        }
    });
    return outer != MPI_SUCCESS ? outer : rc;
}
SHMPI_WEAK_ALIAS(Test);

int PMPI_Waitall(int count, MPI_Request reqs[], MPI_Status statuses[]) {
    const char* fn = "MPI_Waitall";
    int rc = MPI_SUCCESS;
    const int outer = guard(MPI_COMM_WORLD, fn, [&] {
        Runtime& rt = running(fn);
        std::vector<Request*> rs = requests_of(count, reqs, fn);
        // A request once done stays done: each poll goes on from the first
        // one that was not (rescanning from the start made a Waitall of n
        // sends O(n^2): 400,000 took 16 s).
        std::size_t pending = 0;
        rt.engine().wait_until([&] {
            while (pending < rs.size() && (rs[pending] == nullptr || rs[pending]->done)) ++pending;
            return pending == rs.size();
        });
        rc = retire_all(reqs, rs, statuses, fn);
    });
    return outer != MPI_SUCCESS ? outer : rc;
}
SHMPI_WEAK_ALIAS(Waitall);

int PMPI_Testall(int count, MPI_Request reqs[], int* flag, MPI_Status statuses[]) {
    const char* fn = "MPI_Testall";
    int rc = MPI_SUCCESS;
    const int outer = guard(MPI_COMM_WORLD, fn, [&] {
        Runtime& rt = running(fn);
        if (flag == nullptr) throw MpiError(MPI_ERR_ARG, "MPI_Testall: flag is NULL");
        std::vector<Request*> rs = requests_of(count, reqs, fn);
        rt.engine().progress();
        for (Request* r : rs) {
            if (r != nullptr && !r->done) {
                *flag = 0;
                rt.engine().missed();
                return;
            }
        }
        *flag = 1;
        rc = retire_all(reqs, rs, statuses, fn);
    });
    return outer != MPI_SUCCESS ? outer : rc;
}
SHMPI_WEAK_ALIAS(Testall);

namespace {

/// Shared by Waitany and Testany: the index of the first done request, -1 if
/// none is done, MPI_UNDEFINED if all are null.
int first_done(const std::vector<Request*>& rs) {
    bool any_active = false;
    for (std::size_t i = 0; i < rs.size(); ++i) {
        if (rs[i] == nullptr) continue;
        any_active = true;
        if (rs[i]->done) return static_cast<int>(i);
    }
    return any_active ? -1 : MPI_UNDEFINED;
}

/// Shared by Waitsome and Testsome: retires every done request.
int retire_done(std::vector<Request*>& rs, MPI_Request reqs[], int* outcount, int indices[],
                MPI_Status statuses[], const char* fn) {
    int n = 0;
    ArrayErrors errors(fn);
    for (std::size_t i = 0; i < rs.size(); ++i) {
        if (rs[i] == nullptr || !rs[i]->done) continue;
        indices[n] = static_cast<int>(i);
        MPI_Status* st = statuses == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE : &statuses[n];
        retire(&reqs[i], st, fn, &errors, static_cast<int>(i));
        ++n;
    }
    *outcount = n;
    return errors.result();
}

}  // namespace

int PMPI_Waitany(int count, MPI_Request reqs[], int* index, MPI_Status* status) {
    const char* fn = "MPI_Waitany";
    int rc = MPI_SUCCESS;
    const int outer = guard(MPI_COMM_WORLD, fn, [&] {
        Runtime& rt = running(fn);
        if (index == nullptr) throw MpiError(MPI_ERR_ARG, "MPI_Waitany: index is NULL");
        std::vector<Request*> rs = requests_of(count, reqs, fn);
        int i = first_done(rs);
        if (i == -1) rt.engine().wait_until([&] { return (i = first_done(rs)) != -1; });
        *index = i;
        if (i == MPI_UNDEFINED) {
            put_empty_status(status);
            return;
        }
        rc = retire(&reqs[i], status, fn);
    });
    return outer != MPI_SUCCESS ? outer : rc;
}
SHMPI_WEAK_ALIAS(Waitany);

int PMPI_Testany(int count, MPI_Request reqs[], int* index, int* flag, MPI_Status* status) {
    const char* fn = "MPI_Testany";
    int rc = MPI_SUCCESS;
    const int outer = guard(MPI_COMM_WORLD, fn, [&] {
        Runtime& rt = running(fn);
        if (index == nullptr || flag == nullptr) [[unlikely]] {
            need(index, "index", fn);
            need(flag, "flag", fn);
        }
        std::vector<Request*> rs = requests_of(count, reqs, fn);
        int i = first_done(rs);
        if (i == -1) {
            rt.engine().progress();
            i = first_done(rs);
        }
        if (i == -1) {
            *flag = 0;
            *index = MPI_UNDEFINED;
            rt.engine().missed();
            return;
        }
        *flag = 1;
        *index = i;
        if (i == MPI_UNDEFINED) {
            put_empty_status(status);
            return;
        }
        rc = retire(&reqs[i], status, fn);
    });
    return outer != MPI_SUCCESS ? outer : rc;
}
SHMPI_WEAK_ALIAS(Testany);

int PMPI_Waitsome(int incount, MPI_Request reqs[], int* outcount, int indices[], MPI_Status statuses[]) {
    const char* fn = "MPI_Waitsome";
    int rc = MPI_SUCCESS;
    const int outer = guard(MPI_COMM_WORLD, fn, [&] {
        Runtime& rt = running(fn);
        if (outcount == nullptr || (incount > 0 && indices == nullptr)) [[unlikely]] {
            need(outcount, "outcount", fn);
            need(indices, "array_of_indices", fn);
        }
        std::vector<Request*> rs = requests_of(incount, reqs, fn);
        int i = first_done(rs);
        if (i == MPI_UNDEFINED) {
            *outcount = MPI_UNDEFINED;
            return;
        }
        if (i == -1) rt.engine().wait_until([&] { return first_done(rs) != -1; });
        rc = retire_done(rs, reqs, outcount, indices, statuses, fn);
    });
    return outer != MPI_SUCCESS ? outer : rc;
}
SHMPI_WEAK_ALIAS(Waitsome);

int PMPI_Testsome(int incount, MPI_Request reqs[], int* outcount, int indices[], MPI_Status statuses[]) {
    const char* fn = "MPI_Testsome";
    int rc = MPI_SUCCESS;
    const int outer = guard(MPI_COMM_WORLD, fn, [&] {
        Runtime& rt = running(fn);
        if (outcount == nullptr || (incount > 0 && indices == nullptr)) [[unlikely]] {
            need(outcount, "outcount", fn);
            need(indices, "array_of_indices", fn);
        }
        std::vector<Request*> rs = requests_of(incount, reqs, fn);
        if (first_done(rs) == MPI_UNDEFINED) {
            *outcount = MPI_UNDEFINED;
            return;
        }
        rt.engine().progress();
        rc = retire_done(rs, reqs, outcount, indices, statuses, fn);
        if (*outcount == 0) rt.engine().missed();
    });
    return outer != MPI_SUCCESS ? outer : rc;
}
SHMPI_WEAK_ALIAS(Testsome);

int PMPI_Request_free(MPI_Request* request) {
    const char* fn = "MPI_Request_free";
    int rc = MPI_SUCCESS;
    const int outer = guard(MPI_COMM_WORLD, fn, [&] {
        Runtime& rt = running(fn);
        if (request == nullptr) throw MpiError(MPI_ERR_ARG, "MPI_Request_free: request is NULL");
        if (*request == MPI_REQUEST_NULL) {
            throw MpiError(MPI_ERR_REQUEST, "MPI_Request_free: request is MPI_REQUEST_NULL");
        }
        Request& r = request_of(*request, fn);
        if (Generalized* g = generalized_of(&r)) {
            // free_fn runs once the request is both freed and complete
            // (MPI-3.1 12.2): here if MPI_Grequest_complete came first, else
            // in MPI_Grequest_complete.  The engine deletes the request
            // after that, once it has seen it done.
            if (g->completed()) {
                const int code = g->free_state();
                if (code != MPI_SUCCESS) rc = callback_failed(*g, "free_fn", code, fn);
            }
            rt.engine().release(g);
            *request = MPI_REQUEST_NULL;
            return;
        }
        if (r.type == Request::Type::Task) {
            // The request is left as it was, and the error goes to its
            // communicator's handler, as its completion's errors do.
            rc = raise_on_request(
                r.comm_handle, MpiError(MPI_ERR_REQUEST,
                                        fmt::format("{}: request {:#x} belongs to a nonblocking collective, "
                                                    "which cannot be freed (MPI-3.1 5.12); complete it "
                                                    "with a wait or a test",
                                                    fn, reinterpret_cast<std::uintptr_t>(*request))));
            return;
        }
        if (r.type == Request::Type::Persistent) {
            // An active communication goes on and completes unseen.
            auto* p = static_cast<Persistent*>(&r);
            if (p->active != nullptr) rt.engine().release(p->active);
            drop_comm(*p);
            delete p;
        } else {
            drop_comm(r);  // nothing reports its errors any more
            rt.engine().release(&r);
        }
        *request = MPI_REQUEST_NULL;
    });
    return outer != MPI_SUCCESS ? outer : rc;
}
SHMPI_WEAK_ALIAS(Request_free);

int PMPI_Request_get_status(MPI_Request request, int* flag, MPI_Status* status) {
    const char* fn = "MPI_Request_get_status";
    int rc = MPI_SUCCESS;
    const int outer = guard(MPI_COMM_WORLD, fn, [&] {
        Runtime& rt = running(fn);
        if (flag == nullptr) throw MpiError(MPI_ERR_ARG, "MPI_Request_get_status: flag is NULL");
        Request* r = active_of(request, fn);
        if (r == nullptr) {
            *flag = 1;
            put_empty_status(status);
            return;
        }
        if (!r->done) rt.engine().progress();
        *flag = r->done ? 1 : 0;
        if (!r->done) {
            rt.engine().missed();
            return;
        }
        // As MPI_Test, but the request stays the user's: a later wait or
        // test frees it and reports its error again.  A generalized
        // request's status comes from query_fn, which runs again then;
        // free_fn does not run here.
        if (Generalized* g = generalized_of(r)) {
            const int code = g->query(status);
            if (code != MPI_SUCCESS) rc = callback_failed(*g, "query_fn", code, fn);
            return;
        }
        put_status(status, r->status);
        if (r->status.MPI_ERROR != MPI_SUCCESS) rc = raise_on_request(r->comm_handle, request_error(*r, fn));
    });
    return outer != MPI_SUCCESS ? outer : rc;
}
SHMPI_WEAK_ALIAS(Request_get_status);

int PMPI_Iprobe(int source, int tag, MPI_Comm comm, int* flag, MPI_Status* status) {
    const char* fn = "MPI_Iprobe";
    return guard(comm, fn, [&] {
        Communicator& c = comm_of(comm, fn);
        check_recv_tag(tag, fn);
        check_source(c, source, fn);
        if (flag == nullptr) throw MpiError(MPI_ERR_ARG, "MPI_Iprobe: flag is NULL");
        MPI_Status st{};
        *flag = c.iprobe(source, tag, st) ? 1 : 0;
        if (*flag) {
            put_status(status, st);
        } else {
            c.engine().missed();
        }
    });
}
SHMPI_WEAK_ALIAS(Iprobe);

int PMPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status* status) {
    const char* fn = "MPI_Probe";
    return guard(comm, fn, [&] {
        Communicator& c = comm_of(comm, fn);
        check_recv_tag(tag, fn);
        check_source(c, source, fn);
        MPI_Status st{};
        c.probe(source, tag, st);
        put_status(status, st);
    });
}
SHMPI_WEAK_ALIAS(Probe);

namespace {

/// MPI_Get_elements and MPI_Get_elements_x: the basic elements in the bytes
/// `status` reports, for a receive of `type`.
int get_elements(const MPI_Status* status, MPI_Datatype type, MPI_Count* count, const char* fn) {
    return guard(MPI_COMM_WORLD, fn, [&] {
        need_status(status, fn);
        need(count, "count", fn);
        const dtype::Datatype& t = sized_type_of(type, fn);
        *count = dtype::elements_in(t, static_cast<std::int64_t>(status_bytes(*status)));
    });
}

}  // namespace

int PMPI_Get_elements_x(const MPI_Status* status, MPI_Datatype type, MPI_Count* count) {
    return get_elements(status, type, count, "MPI_Get_elements_x");
}
SHMPI_WEAK_ALIAS(Get_elements_x);

int PMPI_Get_elements(const MPI_Status* status, MPI_Datatype type, int* count) {
    MPI_Count n = 0;
    const int rc = get_elements(status, type, count != nullptr ? &n : nullptr, "MPI_Get_elements");
    if (rc == MPI_SUCCESS) *count = (n > INT32_MAX) ? MPI_UNDEFINED : static_cast<int>(n);
    return rc;
}
SHMPI_WEAK_ALIAS(Get_elements);

int PMPI_Get_count(const MPI_Status* status, MPI_Datatype type, int* count) {
    const char* fn = "MPI_Get_count";
    return guard(MPI_COMM_WORLD, fn, [&] {
        need_status(status, fn);
        need(count, "count", fn);
        const dtype::Datatype& t = sized_type_of(type, fn);
        const std::int64_t n = dtype::count_in(t, static_cast<std::int64_t>(status_bytes(*status)));
        *count = n > INT32_MAX ? MPI_UNDEFINED : static_cast<int>(n);
    });
}
SHMPI_WEAK_ALIAS(Get_count);

}  // extern "C"
