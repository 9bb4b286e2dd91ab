// Requests at the C boundary: what an MPI_Request handle stands for, shared
// by request completion (api_p2p.cpp) and the other send modes and
// persistent requests (api_p2p_modes.cpp).
#pragma once

#include <mpi.h>

#include <string>

#include "api_common.hpp"
#include "request.hpp"

namespace shmpi::api {

/// A persistent request (MPI_Send_init, MPI_Recv_init, ...): the arguments
/// of one communication, which each MPI_Start starts again.  The handle is
/// the user's from the init call to MPI_Request_free; `active` is the engine
/// request of the current start, or nullptr while the request is inactive.
/// The base's type_hold keeps a derived datatype alive.  Lives and dies at
/// the C boundary: the engine never sees it.
struct Persistent : p2p::Request {
    enum class Op : std::uint8_t { Send, Ssend, Bsend, Recv };
    Op op = Op::Send;
    void* buf = nullptr;  ///< const for the sends
    int count = 0;
    int peer = 0;         ///< destination or source
    int msg_tag = 0;
    p2p::Request* active = nullptr;
};

/// The status of a wait on a null or inactive request: source
/// MPI_ANY_SOURCE, tag MPI_ANY_TAG, no error, count 0.
MPI_Status empty_status();

/// The errors of a call that completes several requests (Waitall, Testall,
/// Waitsome, Testsome).  MPI-3.1 3.7.5: each failed request's status gets
/// its own error code in MPI_ERROR, and the call returns MPI_ERR_IN_STATUS,
/// which the error handler sees once.
class ArrayErrors {
public:
    explicit ArrayErrors(const char* fn) : fn_(fn) {}
    ~ArrayErrors();
    ArrayErrors(const ArrayErrors&) = delete;
    ArrayErrors& operator=(const ArrayErrors&) = delete;
    /// Records request `index`'s error `e`, raised on `comm`'s requests;
    /// returns a code for its status.  No handler runs.
    int defer(int index, MPI_Comm comm, const MpiError& e);
    /// MPI_SUCCESS if nothing failed, else MPI_ERR_IN_STATUS (or the
    /// handler's code) after the first failed request's communicator's
    /// error handler has seen it.
    int result() const;

private:
    const char* fn_;
    int failed_ = 0;
    int first_index_ = -1;
    MPI_Comm first_comm_ = MPI_COMM_WORLD;
    bool holds_first_ = false;  ///< we hold first_comm_ (add_comm_hold())
    std::string first_message_;
};

/// Takes a finished request out of the user's hands: copies its status and
/// frees it; the handle becomes MPI_REQUEST_NULL, or, for a persistent
/// request, inactive.  Returns the error code to report, after the
/// request's communicator's error handler has seen it; with `errors`, the
/// error is recorded there as request `index`'s and no handler runs.
int retire(MPI_Request* handle, MPI_Status* status, const char* fn, ArrayErrors* errors = nullptr,
           int index = 0);

/// The engine request `handle` stands for now: nullptr for MPI_REQUEST_NULL
/// and for an inactive persistent request.  Throws MPI_ERR_REQUEST naming
/// `fn` for anything else that is not a request.
p2p::Request* active_of(MPI_Request handle, const char* fn);

/// The checks every send call makes (count, datatype, buffer, tag,
/// destination, in that order); returns the datatype.
const dtype::Datatype& check_send(Communicator& c, const void* buf, int count, MPI_Datatype type,
                                  int dest, int tag, const char* fn);

/// MPI_Bsend's work: packs the message into the attached buffer and starts
/// its send from there.  Returns a request that is already done (a buffered
/// send completes locally).  Throws MPI_ERR_BUFFER when the buffer has no
/// room.  Arguments are checked by the caller.
p2p::Request* start_bsend(Communicator& c, const void* buf, int count, const dtype::Datatype& t,
                          int dest, int tag, const char* fn);

/// Whether a call is the blocking form or the nonblocking one (MPI_Ibcast
/// ...), whose request goes to `*request`.  Both make the same checks.
struct Form {
    bool nonblocking = false;
    MPI_Request* request = nullptr;
};
constexpr Form kBlocking{};

/// The last step of every collective (api_coll.cpp, api_topo.cpp), once
/// its arguments are checked: run it now (`now`), or start it (`later`
/// returns the started schedule, a p2p::Task) and hand its request to the
/// user.
template <class Now, class Later>
void finish(Form form, MPI_Comm comm, const char* fn, Now&& now, Later&& later) {
    if (!form.nonblocking) {
        now();
        return;
    }
    need(form.request, "request", fn);
    p2p::Task* t = later();
    t->origin = fn;
    // The handle is the address of the Request part, which is not the
    // Task's own (Task adds a vtable pointer in front of it).
    p2p::Request* r = t;
    hold_comm(*r, comm);
    *form.request = reinterpret_cast<MPI_Request>(r);
}

}  // namespace shmpi::api
