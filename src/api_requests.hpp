// Requests at the C boundary: what an MPI_Request handle stands for, shared
// by request completion (api_p2p.cpp), the other send modes and persistent
// requests (api_p2p_modes.cpp) and generalized requests (api_grequest.cpp).
#pragma once

#include <mpi.h>

#include <cstdint>
#include <string>
#include <vector>

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

/// A generalized request (MPI_Grequest_start, MPI-3.1 12.2): an operation
/// the program carries out itself and declares finished with
/// MPI_Grequest_complete.  A Task, so that it lives and dies like a
/// nonblocking collective: every wait and test completes it, the engine
/// deletes it once it is done and released.  The library calls the
/// program's three callbacks with `extra_state`: query_fn when a wait, test
/// or MPI_Request_get_status reports its status, free_fn once it is both
/// complete and released (by a wait or test, or by MPI_Request_free), and
/// cancel_fn in MPI_Cancel.
class Generalized final : public p2p::Task {
public:
    Generalized(MPI_Grequest_query_function* query_fn, MPI_Grequest_free_function* free_fn,
                MPI_Grequest_cancel_function* cancel_fn, void* extra_state);

    /// Turns MPI_Grequest_complete's mark into `done`.  Only the engine sets
    /// `done` on a Task: it takes a Task off its list when it sees it done,
    /// and a wait may delete the request right after.
    bool advance() override;

    /// MPI_Grequest_complete: the operation is finished.  `done` follows at
    /// the engine's next progress(), which every wait and test makes.
    void complete() { completed_ = true; }
    /// MPI_Grequest_complete has been called.
    bool completed() const { return completed_; }

    /// Lets query_fn fill in an empty status (its own one when `status` is
    /// MPI_STATUS_IGNORE: query_fn always gets a valid status) and copies
    /// that to `status`, all but MPI_ERROR, which stays the caller's (see
    /// put_status()).  Returns query_fn's code.
    int query(MPI_Status* status);
    /// free_fn: the program may let go of `extra_state`; returns its code.
    int free_state();
    /// cancel_fn, told whether MPI_Grequest_complete was called; returns
    /// its code.
    int cancel();

private:
    MPI_Grequest_query_function* query_fn_;
    MPI_Grequest_free_function* free_fn_;
    MPI_Grequest_cancel_function* cancel_fn_;
    void* extra_state_;
    /// Set by MPI_Grequest_complete, read by advance() in a later MPI call
    /// or in a wait's poll.  Not atomic: both run with the C boundary's
    /// lock held under MPI_THREAD_MULTIPLE (shm/gate.hpp), and below that
    /// level no thread may call MPI_Grequest_complete while another is
    /// inside an MPI call.  Under MPI_THREAD_MULTIPLE a wait opens the lock
    /// between its polls, so another thread completes the request and, as
    /// it leaves the lock, wakes the wait; below, a wait on a request not
    /// complete yet can only end with the job, and meanwhile waits as every
    /// wait does (progress for the other ranks, sleeps on the doorbell,
    /// leaves when the job is aborting).
    bool completed_ = false;
};

/// The generalized request `r` is, or nullptr (also for nullptr).
Generalized* generalized_of(p2p::Request* r);

/// The status of a wait on a null or inactive request: source
/// MPI_ANY_SOURCE, tag MPI_ANY_TAG, no error, count 0.
MPI_Status empty_status();
/// Sets a user status (unless MPI_STATUS_IGNORE) to the empty status, its
/// MPI_ERROR included (MPI-3.1 3.7.3: "error = MPI_SUCCESS").
inline void put_empty_status(MPI_Status* out) {
    if (out != MPI_STATUS_IGNORE) *out = empty_status();
}

using p2p::set_status_bytes;
using p2p::status_bytes;

/// A request that is complete already and reports `status`: for calls that
/// finish their work before they return a request (the request-based
/// one-sided operations, the nonblocking file accesses).
MPI_Request completed_request(const MPI_Status& status);

/// The errors of a call that completes several requests (Waitall, Testall,
/// Waitsome, Testsome).  MPI-3.1 3.7.5: each failed request's status gets
/// its own error code in MPI_ERROR, and the call returns MPI_ERR_IN_STATUS,
/// which the error handler sees once.  The statuses' MPI_ERROR fields are
/// written then only (3.2.5): MPI_SUCCESS in those of the requests that
/// succeeded.
class ArrayErrors {
public:
    explicit ArrayErrors(const char* fn) : fn_(fn) {}
    ~ArrayErrors();
    ArrayErrors(const ArrayErrors&) = delete;
    ArrayErrors& operator=(const ArrayErrors&) = delete;
    /// Records request `index`'s error `e`, raised on `comm`'s requests;
    /// returns a code for its status: `code` when given, else a new one.
    /// No handler runs.
    int defer(int index, MPI_Comm comm, const MpiError& e, int code = -1);
    /// Notes the status (or MPI_STATUS_IGNORE) of a request just completed
    /// with `code` (MPI_SUCCESS, or what defer() returned).
    void completed(MPI_Status* status, int code) {
        if (status != MPI_STATUS_IGNORE) statuses_.push_back({status, code});
    }
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
    struct Completed {
        MPI_Status* status;
        int code;
    };
    std::vector<Completed> statuses_;
};

/// Takes a finished request out of the user's hands: copies its status and
/// frees it; the handle becomes MPI_REQUEST_NULL, or, for a persistent
/// request, inactive.  Returns the error code to report, after the
/// request's communicator's error handler has seen it; with `errors`, the
/// error is recorded there as request `index`'s and no handler runs.
int retire(MPI_Request* handle, MPI_Status* status, const char* fn, ArrayErrors* errors = nullptr,
           int index = 0);

/// The last step of a wait or test that completes generalized request `g`
/// (retire() calls it): query_fn fills `status` (a status of our own for
/// MPI_STATUS_IGNORE), then free_fn runs.  A callback's error code is what
/// the call reports (MPI-3.1 12.2), free_fn's when both fail; it goes to
/// `errors` or through the error handler as in retire().  Returns the code
/// to report.  The caller releases `g`.
int conclude(Generalized& g, MPI_Status* status, const char* fn, ArrayErrors* errors, int index);

/// Reports `code`, which `what` (a callback of generalized request `g`,
/// with any detail) returned inside `fn`: the MPI call returns the
/// callback's own code (MPI-3.1 12.2), or a new one of class MPI_ERR_OTHER
/// when it is not an MPI error code.  Runs the error handler and returns
/// the code, or, with `errors`, records it there as request `index`'s.
int callback_failed(const Generalized& g, const std::string& what, int code, const char* fn,
                    ArrayErrors* errors = nullptr, int index = 0);

/// The engine request `handle` stands for now: nullptr for MPI_REQUEST_NULL
/// and for an inactive persistent request.  Throws MPI_ERR_REQUEST naming
/// `fn` (and array_of_requests[index] for index >= 0) for anything else
/// that is not a request.
p2p::Request* active_of(MPI_Request handle, const char* fn, int index = -1);

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
