// Helpers of the C boundary: the one Runtime pointer, handle translation,
// argument checks, and the single place where an MpiError becomes an error
// code through the communicator's error handler.
//
// Every MPI_X is defined as PMPI_X with a weak alias MPI_X
// (SHMPI_WEAK_ALIAS), so a profiling library can define MPI_X itself and
// call PMPI_X.
#pragma once

#include <cxxabi.h>
#include <mpi.h>

#include <cstdint>
#include <new>
#include <string>

#include "communicator.hpp"
#include "errors.hpp"
#include "handle_storage.hpp"
#include "runtime.hpp"
#include "shm/gate.hpp"
#include "shm/transport.hpp"

/// Defines MPI_<name> as a weak alias of PMPI_<name>, which this file
/// must define: one address, two names, and a profiling library's own
/// MPI_<name> takes precedence (when linking statically too).  Assembler,
/// not `#pragma weak` or `__attribute__((weak, alias))`: GCC's link-time
/// optimisation, which libshmpi uses (src/meson.build), makes both into
/// strong symbols when it links the shared library (GCC 12), while top-level
/// assembler goes through it unchanged.  test/profiling checks the result.
#define SHMPI_WEAK_ALIAS(name) asm(".weak MPI_" #name "\n\t.set MPI_" #name ", PMPI_" #name)

namespace shmpi::api {

enum class Phase { Before, Running, After };

/// Where the library is in its life: before MPI_Init, between Init and
/// Finalize, after Finalize.
Phase phase();
void set_phase(Phase p);

/// The runtime; only valid while phase() == Running.
Runtime& runtime();
void set_runtime(Runtime* rt);

/// Ends this process at once with `code`, after flushing stdout and stderr,
/// so that what the program printed before is not lost (no atexit handlers
/// or destructors run: the library's state may be what failed).
[[noreturn]] void exit_flushed(int code);
/// Ends the process because `fn` was called outside Init..Finalize.
[[noreturn]] void not_running(const char* fn);

/// The runtime, or ends the process with a message naming `fn`.
inline Runtime& running(const char* fn) {
    if (phase() != Phase::Running) not_running(fn);
    return runtime();
}

/// Handles below this value are predefined constants (mpi.h), never
/// addresses of objects.
inline constexpr std::uintptr_t kPredefinedLimit = 0x1000;

/// Translates a communicator handle; throws MPI_ERR_COMM naming `fn`.
Communicator& comm_of(MPI_Comm handle, const char* fn);
/// comm_of() for the calls MPI-3.1 defines on intracommunicators only (or
/// that shmpi offers on them only): an intercommunicator is MPI_ERR_COMM.
Communicator& intracomm_of(MPI_Comm handle, const char* fn);
/// Makes request `r` report its errors to `comm`'s error handler, and keeps
/// a communicator the user made alive for it: MPI_Comm_free of a
/// communicator that requests still hold only marks it freed
/// (Communicator::linger()).  Every request the C boundary hands out gets
/// one hold (a persistent request for its whole life, its starts none).
void hold_comm(p2p::Request& r, MPI_Comm comm);
/// Ends `r`'s hold, when its handle goes (completion, MPI_Request_free):
/// deletes a freed communicator with its last hold.
void drop_comm(p2p::Request& r);
/// The same for holders other than requests: true if `comm` is one the
/// user made (predefined ones are never freed and need no hold).
bool add_comm_hold(MPI_Comm comm);
void drop_comm_hold(MPI_Comm comm);
namespace detail {
/// type_of() and type_arg() for a handle that failed their quick test:
/// throws the error that names what is wrong with it.
[[noreturn]] void bad_type(MPI_Datatype handle, const char* arg, const char* fn);
}  // namespace detail

/// Translates a datatype handle given as the argument `arg`; throws
/// MPI_ERR_TYPE naming `fn` and `arg` (none when `arg` is null).  Checks
/// that the type is committed and may carry data (not MPI_LB/MPI_UB).
/// Inline, with the errors out of line: every call that moves data
/// translates one or two types.
inline const dtype::Datatype& type_arg(MPI_Datatype handle, const char* arg, const char* fn) {
    const dtype::Datatype* t = dtype::lookup(handle);
    if (t != nullptr && t->committed && handle != MPI_LB && handle != MPI_UB) [[likely]] return *t;
    detail::bad_type(handle, arg, fn);
}
/// A datatype for the calls that only compute sizes and counts from it
/// (MPI_Get_count, MPI_Get_elements(_x), MPI_Status_set_elements(_x),
/// MPI_Pack_size, MPI_Pack_external_size): type_of() without the commit
/// check, for MPI-3.1 4.1.9 asks for a committed type only before it is
/// used in a communication (MPICH accepts these too).  The bound markers
/// are still refused.
inline const dtype::Datatype& sized_type_of(MPI_Datatype handle, const char* fn) {
    const dtype::Datatype* t = dtype::lookup(handle);
    if (t != nullptr && handle != MPI_LB && handle != MPI_UB) [[likely]] return *t;
    detail::bad_type(handle, nullptr, fn);
}
/// A datatype for queries, constructors and attributes: any live type,
/// uncommitted ones and the bound markers included.  Throws MPI_ERR_TYPE
/// naming `fn` and `arg` (api_dtype.cpp).
const dtype::Datatype& any_type(MPI_Datatype handle, const char* fn, const char* arg = "datatype");
/// type_arg() whose messages name no argument.
inline const dtype::Datatype& type_of(MPI_Datatype handle, const char* fn) { return type_arg(handle, nullptr, fn); }
/// type_arg() for one block of the w-collectives (Alltoallw and the
/// neighbourhood one), whose type arrays hold one type per block: a block
/// of count 0 may name MPI_DATATYPE_NULL (as MPICH allows; programs pass it
/// for peers they exchange nothing with), which stands for no data.
const dtype::Datatype& block_type_arg(MPI_Datatype handle, int count, const char* arg, const char* fn);
/// How a message names request `handle`: "request 0x1234", or, for entry
/// `index` of an array argument (index >= 0), "request 0x1234
/// (array_of_requests[2])".
std::string request_text(MPI_Request handle, int index = -1);
/// Translates a request handle (not MPI_REQUEST_NULL); throws
/// MPI_ERR_REQUEST naming `fn`, and, for index >= 0, the handle as entry
/// `index` of array_of_requests.
p2p::Request& request_of(MPI_Request handle, const char* fn, int index = -1);

/// An output or input argument named `arg` must not be NULL (MPI_ERR_ARG).
void need(const void* p, const char* arg, const char* fn);
/// need() for a status the call reads (MPI_Get_count and the like): NULL
/// is MPI_STATUS_IGNORE, which the message names.
void need_status(const MPI_Status* status, const char* fn);
/// need() for the handle a constructor returns, which it then sets to
/// `null`: a call that fails from there on leaves the null handle rather
/// than whatever the variable held (MPICH does the same for communicators).
/// The input handles are the caller's copies, so `MPI_Comm_dup(c, &c)`
/// still duplicates c.
template <class Handle>
void need_new(Handle* p, Handle null, const char* arg, const char* fn) {
    need(p, arg, fn);
    *p = null;
}
void check_count(int count, const char* fn);
void check_send_tag(int tag, const char* fn);
void check_recv_tag(int tag, const char* fn);
/// `rank` must be a rank of `c` or MPI_PROC_NULL.
void check_dest(const Communicator& c, int rank, const char* fn);
/// `rank` must be a rank of `c`, MPI_PROC_NULL or MPI_ANY_SOURCE.
void check_source(const Communicator& c, int rank, const char* fn);
/// The buffer argument `arg` of `fn`, holding `count` elements of `t`:
/// not MPI_IN_PLACE (a caller that allows it deals with it first), its
/// byte count fits 64 bits, its span fits MPI_Aint, and it is not NULL
/// when it holds data of a predefined type (a derived type may address
/// absolute memory from MPI_BOTTOM).  Inline: collectives call it on
/// their fast path.
[[gnu::always_inline]] inline void check_buffer(const void* buf, std::int64_t count, const dtype::Datatype& t,
                                                const char* arg, const char* fn) {
    if (buf == MPI_IN_PLACE) [[unlikely]] {
        fail(MPI_ERR_BUFFER, "{}: {} is MPI_IN_PLACE, which {} does not allow here", fn, arg, fn);
    }
    std::int64_t bytes = 0;
    if (__builtin_mul_overflow(count, t.size, &bytes)) [[unlikely]] {
        fail(MPI_ERR_COUNT, "{}: {} holds {} elements of {} (size {} bytes): the byte count overflows 64 bits", fn,
             arg, count, t.name, t.size);
    }
    if (!t.span_fits(count)) [[unlikely]] {
        fail(MPI_ERR_COUNT, "{}: {} holds {} elements of {} (extent {} bytes): they span more memory than MPI_Aint "
             "can address", fn, arg, count, t.name, t.extent);
    }
    if (buf == nullptr && count > 0 && t.size > 0 && t.predefined) [[unlikely]] {
        fail(MPI_ERR_BUFFER, "{}: {} is NULL but holds {} elements of {}", fn, arg, count, t.name);
    }
}

/// A handler made by MPI_Comm_create_errhandler.  Reference counted: each
/// communicator using it and each handle the user holds is one reference.
struct UserErrhandler : HandleStorage {
    static constexpr std::uint32_t kMagic = 0x45525248;  // "ERRH"
    std::uint32_t magic = kMagic;
    /// MPI_Comm_create_errhandler's function, or null for a window's or a file's.
    MPI_Comm_errhandler_function* fn = nullptr;
    /// MPI_Win_create_errhandler's function, or null for a communicator's.
    MPI_Win_errhandler_function* win_fn = nullptr;
    /// MPI_File_create_errhandler's function, or null for the others'.
    MPI_File_errhandler_function* file_fn = nullptr;
    int refs = 1;
};

/// The user handler behind `e`, or nullptr for predefined or invalid handles.
UserErrhandler* user_errhandler(MPI_Errhandler e);
/// What an error handler is set on.
enum class HandlerKind { Comm, Win, File };
/// Whether `e` may be set on an object of `kind`: a predefined handler, or
/// a user handler made for that kind (MPI_Comm/Win/File_create_errhandler).
bool handler_fits(MPI_Errhandler e, HandlerKind kind);
/// MPI_Win_set_errhandler and MPI_File_set_errhandler: puts `e` in `slot`,
/// keeping the reference counts; MPI_ERR_ARG naming `fn` when `e` does
/// not fit `kind`.
void set_errhandler_slot(MPI_Errhandler& slot, MPI_Errhandler e, HandlerKind kind, const char* fn);
/// Adds or drops a reference to a user handler (no-op for predefined ones).
void retain(MPI_Errhandler e);
void release(MPI_Errhandler e);

/// Applies `comm`'s error handler to `e` (MPI_COMM_WORLD's when `comm` is not
/// a valid communicator): prints and ends the job under
/// MPI_ERRORS_ARE_FATAL / MPI_ERRORS_ABORT, calls a user handler, and returns
/// the error code (`code` when given, else a new one for `e`).
int raise(MPI_Comm comm, const MpiError& e, int code = -1);
/// MPI_Comm_call_errhandler and MPI_Win_call_errhandler: the error that
/// hands `errorcode` to a handler, its text the code's (or what it is).
MpiError called_error(int errorcode, const char* fn);
/// raise() for the error of a request (its completion, or the completion of
/// several): the request's communicator handles it even after
/// MPI_Comm_free (it lingers while requests hold it).  Everything else
/// made on a freed handle goes to MPI_COMM_WORLD's handler, so a handler
/// that calls MPI with the freed handle it was given cannot recurse.
int raise_on_request(MPI_Comm comm, const MpiError& e, int code = -1);

/// One MPI call at the C boundary: holds the lock of MPI_THREAD_MULTIPLE
/// while it lives (shm::Gate; nothing at lower levels), and names the call
/// this thread is in for the launcher's deadlock report
/// (shm::current_call, read by shm::Transport::park); the outer call's name
/// comes back when a callback's call returns.
struct CallName {
    shm::Gate::Hold hold;
    const char* outer = shm::current_call;
    explicit CallName(const char* name) { shm::current_call = name; }
    ~CallName() { shm::current_call = outer; }
    CallName(const CallName&) = delete;
    CallName& operator=(const CallName&) = delete;
};

/// Runs `body`; turns what it throws into an error code through `comm`'s
/// error handler.  The one place an error crosses the C boundary.
/// Whatever a user callback throws becomes MPI_ERR_INTERN of the call (a
/// std::exception with its what()), so it cannot leave the library
/// half-way through a call; only a thread cancellation's unwinding passes,
/// and what a user error handler throws (it runs inside the handlers below,
/// so it reaches the caller: the idiom that turns MPI errors into C++
/// exceptions).
///
/// Always inlined into the function that calls it, with `body`: the body
/// then reads that function's arguments where they are, where a guard
/// called out of line took a closure of references to all of them (a
/// blocking MPI_Gather spent 50 instructions storing its ten).
template <class Body>
[[gnu::always_inline]] inline int guard(MPI_Comm comm, const char* fn, Body&& body) {
    const CallName call_name(fn);
    try {
        body();
        return MPI_SUCCESS;
    } catch (const MpiError& e) {
        return raise(comm, e, e.code());
    } catch (const std::bad_alloc&) {
        return raise(comm, MpiError(MPI_ERR_NO_MEM, std::string(fn) + ": out of memory"));
    } catch (const std::exception& e) {
        return raise(comm, MpiError(MPI_ERR_INTERN, std::string(fn) + ": " + e.what()));
    } catch (const abi::__forced_unwind&) {
        throw;  // pthread_cancel's unwinding must go on
    } catch (...) {
        return raise(comm, MpiError(MPI_ERR_INTERN, std::string(fn) + ": a callback threw an exception that is not a "
                                                                      "std::exception"));
    }
}

/// guard() for the calls on an object with an error handler of its own (a
/// window, a file): `raise_to(e, code)` applies that handler, with `code`
/// -1 for a new code.
template <class Raise, class Body>
int object_guard(const char* fn, Raise&& raise_to, Body&& body) {
    const CallName call_name(fn);
    try {
        running(fn);
        body();
        return MPI_SUCCESS;
    } catch (const MpiError& e) {
        return raise_to(e, e.code());
    } catch (const std::bad_alloc&) {
        return raise_to(MpiError(MPI_ERR_NO_MEM, std::string(fn) + ": out of memory"), -1);
    } catch (const std::exception& e) {
        return raise_to(MpiError(MPI_ERR_INTERN, std::string(fn) + ": " + e.what()), -1);
    }
}

/// Copies `s` into a user status unless it is MPI_STATUS_IGNORE, all but
/// its MPI_ERROR: MPI-3.1 3.2.5, "message-passing calls do not modify the
/// value of the error code field of status variables", but for the calls
/// that complete several requests and return MPI_ERR_IN_STATUS
/// (ArrayErrors), and for an empty status (put_empty_status()).
inline void put_status(MPI_Status* out, const MPI_Status& s) {
    if (out == MPI_STATUS_IGNORE) return;
    const int error = out->MPI_ERROR;
    *out = s;
    out->MPI_ERROR = error;
}

}  // namespace shmpi::api
