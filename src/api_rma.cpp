// C boundary: one-sided communication (MPI-3.1 chapter 11).  The calls
// check their arguments here and hand the rest to rma::Window, which moves
// the data and keeps the epochs (rma/window.hpp).  Errors of a call on a
// window go to the window's error handler (MPI_ERRORS_ARE_FATAL unless the
// program sets another), those of the creating calls to the communicator's.
#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <iterator>
#include <numeric>
#include <string>
#include <vector>

#include "api_comm.hpp"
#include "api_common.hpp"
#include "api_info.hpp"
#include "api_requests.hpp"
#include "api_rma.hpp"
#include "comm_create.hpp"
#include "op.hpp"
#include "rma/window.hpp"

using namespace shmpi;
using namespace shmpi::api;
using shmpi::rma::Flavor;
using shmpi::rma::Window;

namespace shmpi::api {

Window& win_of(MPI_Win handle, const char* fn) {
    if (handle == MPI_WIN_NULL) fail(MPI_ERR_WIN, "{}: win is MPI_WIN_NULL", fn);
    Window* w = rma::window_of(handle);
    if (w == nullptr) {
        const bool freed = reinterpret_cast<std::uintptr_t>(handle) >= kPredefinedLimit &&
                           HandleStorage::may_read_as<Window>(handle) &&
                           reinterpret_cast<const Window*>(handle)->magic() == kFreedMagic;
        fail(MPI_ERR_WIN, "{}: invalid window {:#x}{}", fn, reinterpret_cast<std::uintptr_t>(handle),
             freed ? " (it has been freed with MPI_Win_free)" : "");
    }
    return *w;
}

int raise_win(MPI_Win win, const MpiError& e, int code) {
    Window* w = phase() == Phase::Running ? rma::window_of(win) : nullptr;
    if (w == nullptr) return raise(MPI_COMM_WORLD, e, code);
    const MPI_Errhandler eh = w->errhandler;
    if (eh == MPI_ERRORS_RETURN) return code >= 0 ? code : make_error_code(e.error_class(), e.what());
    if (UserErrhandler* u = user_errhandler(eh); u != nullptr && u->win_fn != nullptr) {
        if (code < 0) code = make_error_code(e.error_class(), e.what());
        MPI_Win target = win;
        u->win_fn(&target, &code);
        return code;
    }
    std::fprintf(stderr, "shmpi: %s\n", e.what());
    runtime().transport().abort_job(e.error_class(), shm::kAbortFatal);
}

}  // namespace shmpi::api

namespace {

void check_target(const Window& w, int rank, const char* fn) {
    if (rank == MPI_PROC_NULL) return;
    if (rank < 0 || rank >= w.size()) {
        fail(MPI_ERR_RANK, "{}: invalid target_rank {} (the window has {} ranks)", fn, rank, w.size());
    }
}

/// The origin or result buffer `arg` of an operation.
Window::Buf buf_arg(const void* addr, int count, MPI_Datatype type, const char* arg, const char* type_arg_name,
                    const char* fn) {
    check_count(count, fn);
    const dtype::Datatype& t = type_arg(type, type_arg_name, fn);
    check_buffer(addr, count, t, arg, fn);
    return Window::Buf{addr, count, &t};
}

Window::Target target_arg(const Window& w, int rank, MPI_Aint disp, int count, MPI_Datatype type, const char* fn) {
    check_target(w, rank, fn);
    check_count(count, fn);
    const dtype::Datatype& t = type_arg(type, "target_datatype", fn);
    return Window::Target{rank, static_cast<std::int64_t>(disp), count, &t};
}

/// An operation for an accumulate: predefined ones, MPI_REPLACE and
/// MPI_NO_OP (MPI-3.1 11.3.4: no user operations).
const op::Op& acc_op(MPI_Op handle, const char* fn) {
    const op::Op& o = op::op_of(handle, fn);
    if (!o.predefined) {
        fail(MPI_ERR_OP, "{}: op {:#x} is an MPI_Op_create operation; one-sided accumulates take predefined "
             "operations only (MPI-3.1 11.3.4)", fn, reinterpret_cast<std::uintptr_t>(handle));
    }
    return o;
}

void need_passive(const Window& w, int rank, const char* fn) {
    if (rank != MPI_PROC_NULL && !w.passive(rank)) {
        fail(MPI_ERR_RMA_SYNC, "{}: request-based operations need a passive-target epoch (MPI_Win_lock or "
             "MPI_Win_lock_all) towards rank {} (MPI-3.1 11.3.5)", fn, rank);
    }
}

/// The window members of `group`, in the group's order (MPI_ERR_GROUP for
/// a process that is not one).
std::vector<int> members_of(Window& w, MPI_Group group, const char* fn) {
    const Group& g = group_of(group, fn);
    std::vector<int> out;
    out.reserve(static_cast<std::size_t>(g.size()));
    const auto& world = w.comm().world_ranks();
    for (const std::uint32_t wr : g.world_ranks()) {
        const auto it = std::find(world.begin(), world.end(), wr);
        if (it == world.end()) {
            fail(MPI_ERR_GROUP, "{}: the group holds world rank {}, which is not a member of the window", fn, wr);
        }
        out.push_back(static_cast<int>(it - world.begin()));
    }
    return out;
}

/// The window hints MPI-3.1 defines (11.2.1, 11.2.3), with their defaults
/// ("" for none): the ones a window keeps and MPI_Win_get_info reports.
struct Hint {
    const char* key;
    const char* fallback;
};
constexpr Hint kHints[] = {
    {"no_locks", "false"},         {"accumulate_ordering", "rar,raw,war,waw"},
    {"accumulate_ops", "same_op_no_op"}, {"same_size", ""},
    {"same_disp_unit", ""},        {"alloc_shared_noncontig", ""},
};

/// Updates `hints` with the known keys `info` sets.
void take_hints(std::vector<std::pair<std::string, std::string>>& hints, MPI_Info info, const char* fn) {
    for (auto& [key, value] : info_entries(info, fn)) {
        const bool known = std::any_of(std::begin(kHints), std::end(kHints),
                                       [&](const Hint& h) { return key == h.key; });
        if (!known) continue;
        auto it = std::find_if(hints.begin(), hints.end(), [&](const auto& e) { return e.first == key; });
        if (it != hints.end()) {
            it->second = value;
        } else {
            hints.emplace_back(key, value);
        }
    }
}

/// The creating calls: a new window over `comm` (collective).
void make_window(MPI_Comm comm, Flavor flavor, void* base, MPI_Aint size, int disp_unit, MPI_Info info,
                 void* baseptr, MPI_Win* win, const char* fn) {
    Communicator& c = intracomm_of(comm, fn);
    need_new(win, MPI_WIN_NULL, "win", fn);
    if (flavor == Flavor::Allocate || flavor == Flavor::Shared) need(baseptr, "baseptr", fn);
    check_info_arg(info, fn);
    if (size < 0) fail(MPI_ERR_SIZE, "{}: size {} is negative", fn, size);
    if (disp_unit <= 0) fail(MPI_ERR_DISP, "{}: disp_unit {} is not positive", fn, disp_unit);
    if (flavor == Flavor::Create && base == nullptr && size > 0) {
        fail(MPI_ERR_BASE, "{}: base is NULL but size is {}", fn, size);
    }
    const bool noncontig = flavor == Flavor::Shared && info_says_true(info, "alloc_shared_noncontig", fn);
    // The window's own communicator: a duplicate, whose error handler is
    // never used (the window's is).
    std::vector<int> all(static_cast<std::size_t>(c.size()));
    std::iota(all.begin(), all.end(), 0);
    std::unique_ptr<Communicator> dup = create_from_members(c, all);
    release(dup->errhandler());
    dup->set_errhandler(MPI_ERRORS_ARE_FATAL);
    std::unique_ptr<Window> w =
        Window::create(runtime(), std::move(dup), flavor, base, size, disp_unit, noncontig, fn);
    for (const Hint& h : kHints) {
        if (*h.fallback != '\0') w->hints.emplace_back(h.key, h.fallback);
    }
    take_hints(w->hints, info, fn);
    if (baseptr != nullptr) *static_cast<void**>(baseptr) = w->base();
    *win = reinterpret_cast<MPI_Win>(w.release());
}

}  // namespace

extern "C" {

// ------------------------------------------------------------ windows

int PMPI_Win_create(void* base, MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, MPI_Win* win) {
    const char* fn = "MPI_Win_create";
    return guard(comm, fn, [&] { make_window(comm, Flavor::Create, base, size, disp_unit, info, nullptr, win, fn); });
}
SHMPI_WEAK_ALIAS(Win_create);

int PMPI_Win_allocate(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void* baseptr, MPI_Win* win) {
    const char* fn = "MPI_Win_allocate";
    return guard(comm, fn,
                 [&] { make_window(comm, Flavor::Allocate, nullptr, size, disp_unit, info, baseptr, win, fn); });
}
SHMPI_WEAK_ALIAS(Win_allocate);

int PMPI_Win_allocate_shared(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void* baseptr,
                             MPI_Win* win) {
    const char* fn = "MPI_Win_allocate_shared";
    return guard(comm, fn,
                 [&] { make_window(comm, Flavor::Shared, nullptr, size, disp_unit, info, baseptr, win, fn); });
}
SHMPI_WEAK_ALIAS(Win_allocate_shared);

int PMPI_Win_create_dynamic(MPI_Info info, MPI_Comm comm, MPI_Win* win) {
    const char* fn = "MPI_Win_create_dynamic";
    return guard(comm, fn, [&] { make_window(comm, Flavor::Dynamic, nullptr, 0, 1, info, nullptr, win, fn); });
}
SHMPI_WEAK_ALIAS(Win_create_dynamic);

int PMPI_Win_shared_query(MPI_Win win, int rank, MPI_Aint* size, int* disp_unit, void* baseptr) {
    const char* fn = "MPI_Win_shared_query";
    return win_guard(win, fn, [&] {
        Window& w = win_of(win, fn);
        need(size, "size", fn);
        need(disp_unit, "disp_unit", fn);
        need(baseptr, "baseptr", fn);
        if (w.flavor() != Flavor::Shared) {
            fail(MPI_ERR_RMA_FLAVOR, "{}: the window was not made by MPI_Win_allocate_shared", fn);
        }
        if (rank != MPI_PROC_NULL && (rank < 0 || rank >= w.size())) {
            fail(MPI_ERR_RANK, "{}: invalid rank {} (the window has {} ranks)", fn, rank, w.size());
        }
        std::int64_t sz = 0;
        w.shared_query(rank, &sz, disp_unit, static_cast<void**>(baseptr));
        *size = static_cast<MPI_Aint>(sz);
    });
}
SHMPI_WEAK_ALIAS(Win_shared_query);

int PMPI_Win_attach(MPI_Win win, void* base, MPI_Aint size) {
    const char* fn = "MPI_Win_attach";
    return win_guard(win, fn, [&] {
        Window& w = win_of(win, fn);
        if (w.flavor() != Flavor::Dynamic) {
            fail(MPI_ERR_RMA_FLAVOR, "{}: the window was not made by MPI_Win_create_dynamic", fn);
        }
        if (size < 0) fail(MPI_ERR_SIZE, "{}: size {} is negative", fn, size);
        if (base == nullptr && size > 0) fail(MPI_ERR_BASE, "{}: base is NULL but size is {}", fn, size);
        w.attach(base, size, fn);
    });
}
SHMPI_WEAK_ALIAS(Win_attach);

int PMPI_Win_detach(MPI_Win win, const void* base) {
    const char* fn = "MPI_Win_detach";
    return win_guard(win, fn, [&] {
        Window& w = win_of(win, fn);
        if (w.flavor() != Flavor::Dynamic) {
            fail(MPI_ERR_RMA_FLAVOR, "{}: the window was not made by MPI_Win_create_dynamic", fn);
        }
        w.detach(base, fn);
    });
}
SHMPI_WEAK_ALIAS(Win_detach);

int PMPI_Win_free(MPI_Win* win) {
    const char* fn = "MPI_Win_free";
    const MPI_Win handle = win != nullptr ? *win : MPI_WIN_NULL;
    return win_guard(handle, fn, [&] {
        need(win, "win", fn);
        Window& w = win_of(*win, fn);
        // The delete callbacks first: one that fails leaves the window as it
        // was, before any member waits for this one (MPI_Comm_free's order).
        w.attributes.clear(*win, fn);
        w.free(fn);  // collective: no epoch open, every member here
        release(w.errhandler);
        delete &w;
        *win = MPI_WIN_NULL;
    });
}
SHMPI_WEAK_ALIAS(Win_free);

int PMPI_Win_get_group(MPI_Win win, MPI_Group* group) {
    const char* fn = "MPI_Win_get_group";
    return win_guard(win, fn, [&] {
        Window& w = win_of(win, fn);
        need(group, "group", fn);
        *group = group_handle(w.comm().world_ranks());
    });
}
SHMPI_WEAK_ALIAS(Win_get_group);

int PMPI_Win_set_info(MPI_Win win, MPI_Info info) {
    const char* fn = "MPI_Win_set_info";
    return win_guard(win, fn, [&] {
        Window& w = win_of(win, fn);
        info_of(info, fn);
        take_hints(w.hints, info, fn);  // kept for MPI_Win_get_info; none changes what the window does
    });
}
SHMPI_WEAK_ALIAS(Win_set_info);

int PMPI_Win_get_info(MPI_Win win, MPI_Info* info_used) {
    const char* fn = "MPI_Win_get_info";
    return win_guard(win, fn, [&] {
        const Window& w = win_of(win, fn);
        need(info_used, "info_used", fn);
        *info_used = new_info(w.hints);
    });
}
SHMPI_WEAK_ALIAS(Win_get_info);

int PMPI_Win_set_name(MPI_Win win, const char* win_name) {
    const char* fn = "MPI_Win_set_name";
    return win_guard(win, fn, [&] {
        Window& w = win_of(win, fn);
        need(win_name, "win_name", fn);
        // Longer names are cut to what MPI_Win_get_name can return.
        w.name.assign(win_name, strnlen(win_name, MPI_MAX_OBJECT_NAME - 1));
    });
}
SHMPI_WEAK_ALIAS(Win_set_name);

int PMPI_Win_get_name(MPI_Win win, char* win_name, int* resultlen) {
    const char* fn = "MPI_Win_get_name";
    return win_guard(win, fn, [&] {
        Window& w = win_of(win, fn);
        need(win_name, "win_name", fn);
        need(resultlen, "resultlen", fn);
        std::memcpy(win_name, w.name.c_str(), w.name.size() + 1);
        *resultlen = static_cast<int>(w.name.size());
    });
}
SHMPI_WEAK_ALIAS(Win_get_name);

// ------------------------------------------------------------ error handlers

int PMPI_Win_create_errhandler(MPI_Win_errhandler_function* win_errhandler_fn, MPI_Errhandler* errhandler) {
    const char* fn = "MPI_Win_create_errhandler";
    return guard(MPI_COMM_WORLD, fn, [&] {
        running(fn);
        if (win_errhandler_fn == nullptr) fail(MPI_ERR_ARG, "{}: win_errhandler_fn is NULL", fn);
        need(errhandler, "errhandler", fn);
        auto* u = new UserErrhandler();
        u->win_fn = win_errhandler_fn;
        *errhandler = reinterpret_cast<MPI_Errhandler>(u);
    });
}
SHMPI_WEAK_ALIAS(Win_create_errhandler);

int PMPI_Win_set_errhandler(MPI_Win win, MPI_Errhandler errhandler) {
    const char* fn = "MPI_Win_set_errhandler";
    return win_guard(win, fn, [&] {
        set_errhandler_slot(win_of(win, fn).errhandler, errhandler, HandlerKind::Win, fn);
    });
}
SHMPI_WEAK_ALIAS(Win_set_errhandler);

int PMPI_Win_get_errhandler(MPI_Win win, MPI_Errhandler* errhandler) {
    const char* fn = "MPI_Win_get_errhandler";
    return win_guard(win, fn, [&] {
        Window& w = win_of(win, fn);
        need(errhandler, "errhandler", fn);
        *errhandler = w.errhandler;
        retain(*errhandler);  // the caller frees it with MPI_Errhandler_free
    });
}
SHMPI_WEAK_ALIAS(Win_get_errhandler);

int PMPI_Win_call_errhandler(MPI_Win win, int errorcode) {
    const char* fn = "MPI_Win_call_errhandler";
    return win_guard(win, fn, [&] {
        win_of(win, fn);
        // The handler sees the code as given; the call returns MPI_SUCCESS
        // once the handler returns (MPI-3.1 8.3).
        raise_win(win, called_error(errorcode, fn), errorcode);
    });
}
SHMPI_WEAK_ALIAS(Win_call_errhandler);

// ------------------------------------------------------------ communication

int PMPI_Put(const void* origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
             MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win) {
    const char* fn = "MPI_Put";
    return win_guard(win, fn, [&] {
        Window& w = win_of(win, fn);
        const Window::Buf o = buf_arg(origin_addr, origin_count, origin_datatype, "origin_addr", "origin_datatype", fn);
        w.put(o, target_arg(w, target_rank, target_disp, target_count, target_datatype, fn), fn);
    });
}
SHMPI_WEAK_ALIAS(Put);

int PMPI_Get(void* origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
             MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win) {
    const char* fn = "MPI_Get";
    return win_guard(win, fn, [&] {
        Window& w = win_of(win, fn);
        const Window::Buf o = buf_arg(origin_addr, origin_count, origin_datatype, "origin_addr", "origin_datatype", fn);
        w.get(o, target_arg(w, target_rank, target_disp, target_count, target_datatype, fn), fn);
    });
}
SHMPI_WEAK_ALIAS(Get);

int PMPI_Accumulate(const void* origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
                    MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win) {
    const char* fn = "MPI_Accumulate";
    return win_guard(win, fn, [&] {
        Window& w = win_of(win, fn);
        const Window::Buf o = buf_arg(origin_addr, origin_count, origin_datatype, "origin_addr", "origin_datatype", fn);
        const op::Op& the_op = acc_op(op, fn);
        w.accumulate(o, nullptr, target_arg(w, target_rank, target_disp, target_count, target_datatype, fn), the_op,
                     fn);
    });
}
SHMPI_WEAK_ALIAS(Accumulate);

namespace {

void get_accumulate(Window& w, const void* origin_addr, int origin_count, MPI_Datatype origin_datatype,
                    void* result_addr, int result_count, MPI_Datatype result_datatype, int target_rank,
                    MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Op op,
                    const char* fn) {
    const op::Op& the_op = acc_op(op, fn);
    // MPI_NO_OP ignores the origin arguments (MPI-3.1 11.3.4).
    const bool no_op = op == MPI_NO_OP;
    const Window::Buf o = no_op ? Window::Buf{nullptr, 0, &dtype::byte_type()}
                                : buf_arg(origin_addr, origin_count, origin_datatype, "origin_addr",
                                          "origin_datatype", fn);
    const Window::Buf r = buf_arg(result_addr, result_count, result_datatype, "result_addr", "result_datatype", fn);
    w.accumulate(o, &r, target_arg(w, target_rank, target_disp, target_count, target_datatype, fn), the_op, fn);
}

}  // namespace

int PMPI_Get_accumulate(const void* origin_addr, int origin_count, MPI_Datatype origin_datatype, void* result_addr,
                        int result_count, MPI_Datatype result_datatype, int target_rank, MPI_Aint target_disp,
                        int target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win) {
    const char* fn = "MPI_Get_accumulate";
    return win_guard(win, fn, [&] {
        get_accumulate(win_of(win, fn), origin_addr, origin_count, origin_datatype, result_addr, result_count,
                       result_datatype, target_rank, target_disp, target_count, target_datatype, op, fn);
    });
}
SHMPI_WEAK_ALIAS(Get_accumulate);

int PMPI_Fetch_and_op(const void* origin_addr, void* result_addr, MPI_Datatype datatype, int target_rank,
                      MPI_Aint target_disp, MPI_Op op, MPI_Win win) {
    const char* fn = "MPI_Fetch_and_op";
    return win_guard(win, fn, [&] {
        get_accumulate(win_of(win, fn), origin_addr, 1, datatype, result_addr, 1, datatype, target_rank,
                       target_disp, 1, datatype, op, fn);
    });
}
SHMPI_WEAK_ALIAS(Fetch_and_op);

int PMPI_Compare_and_swap(const void* origin_addr, const void* compare_addr, void* result_addr,
                          MPI_Datatype datatype, int target_rank, MPI_Aint target_disp, MPI_Win win) {
    const char* fn = "MPI_Compare_and_swap";
    return win_guard(win, fn, [&] {
        Window& w = win_of(win, fn);
        const dtype::Datatype& t = type_arg(datatype, "datatype", fn);
        need(origin_addr, "origin_addr", fn);
        need(compare_addr, "compare_addr", fn);
        need(result_addr, "result_addr", fn);
        check_target(w, target_rank, fn);
        w.compare_and_swap(origin_addr, compare_addr, result_addr, t, target_rank, target_disp, fn);
    });
}
SHMPI_WEAK_ALIAS(Compare_and_swap);

int PMPI_Rput(const void* origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
              MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win,
              MPI_Request* request) {
    const char* fn = "MPI_Rput";
    return win_guard(win, fn, [&] {
        Window& w = win_of(win, fn);
        need_new(request, MPI_REQUEST_NULL, "request", fn);
        const Window::Buf o = buf_arg(origin_addr, origin_count, origin_datatype, "origin_addr", "origin_datatype", fn);
        const Window::Target t = target_arg(w, target_rank, target_disp, target_count, target_datatype, fn);
        need_passive(w, target_rank, fn);
        w.put(o, t, fn);
        *request = completed_request(MPI_Status{});  // every operation is complete in its call
    });
}
SHMPI_WEAK_ALIAS(Rput);

int PMPI_Rget(void* origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
              MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win,
              MPI_Request* request) {
    const char* fn = "MPI_Rget";
    return win_guard(win, fn, [&] {
        Window& w = win_of(win, fn);
        need_new(request, MPI_REQUEST_NULL, "request", fn);
        const Window::Buf o = buf_arg(origin_addr, origin_count, origin_datatype, "origin_addr", "origin_datatype", fn);
        const Window::Target t = target_arg(w, target_rank, target_disp, target_count, target_datatype, fn);
        need_passive(w, target_rank, fn);
        w.get(o, t, fn);
        *request = completed_request(MPI_Status{});  // every operation is complete in its call
    });
}
SHMPI_WEAK_ALIAS(Rget);

int PMPI_Raccumulate(const void* origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
                     MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win,
                     MPI_Request* request) {
    const char* fn = "MPI_Raccumulate";
    return win_guard(win, fn, [&] {
        Window& w = win_of(win, fn);
        need_new(request, MPI_REQUEST_NULL, "request", fn);
        const Window::Buf o = buf_arg(origin_addr, origin_count, origin_datatype, "origin_addr", "origin_datatype", fn);
        const op::Op& the_op = acc_op(op, fn);
        const Window::Target t = target_arg(w, target_rank, target_disp, target_count, target_datatype, fn);
        need_passive(w, target_rank, fn);
        w.accumulate(o, nullptr, t, the_op, fn);
        *request = completed_request(MPI_Status{});  // every operation is complete in its call
    });
}
SHMPI_WEAK_ALIAS(Raccumulate);

int PMPI_Rget_accumulate(const void* origin_addr, int origin_count, MPI_Datatype origin_datatype, void* result_addr,
                         int result_count, MPI_Datatype result_datatype, int target_rank, MPI_Aint target_disp,
                         int target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win,
                         MPI_Request* request) {
    const char* fn = "MPI_Rget_accumulate";
    return win_guard(win, fn, [&] {
        Window& w = win_of(win, fn);
        need_new(request, MPI_REQUEST_NULL, "request", fn);
        check_target(w, target_rank, fn);
        need_passive(w, target_rank, fn);
        get_accumulate(w, origin_addr, origin_count, origin_datatype, result_addr, result_count, result_datatype,
                       target_rank, target_disp, target_count, target_datatype, op, fn);
        *request = completed_request(MPI_Status{});  // every operation is complete in its call
    });
}
SHMPI_WEAK_ALIAS(Rget_accumulate);

// ------------------------------------------------------------ synchronisation

int PMPI_Win_fence(int assert, MPI_Win win) {
    const char* fn = "MPI_Win_fence";
    return win_guard(win, fn, [&] { win_of(win, fn).fence(assert, fn); });
}
SHMPI_WEAK_ALIAS(Win_fence);

int PMPI_Win_start(MPI_Group group, int assert, MPI_Win win) {
    const char* fn = "MPI_Win_start";
    return win_guard(win, fn, [&] {
        Window& w = win_of(win, fn);
        w.start(members_of(w, group, fn), assert, fn);
    });
}
SHMPI_WEAK_ALIAS(Win_start);

int PMPI_Win_complete(MPI_Win win) {
    const char* fn = "MPI_Win_complete";
    return win_guard(win, fn, [&] { win_of(win, fn).complete(fn); });
}
SHMPI_WEAK_ALIAS(Win_complete);

int PMPI_Win_post(MPI_Group group, int assert, MPI_Win win) {
    const char* fn = "MPI_Win_post";
    return win_guard(win, fn, [&] {
        Window& w = win_of(win, fn);
        w.post(members_of(w, group, fn), assert, fn);
    });
}
SHMPI_WEAK_ALIAS(Win_post);

int PMPI_Win_wait(MPI_Win win) {
    const char* fn = "MPI_Win_wait";
    return win_guard(win, fn, [&] { win_of(win, fn).wait(fn); });
}
SHMPI_WEAK_ALIAS(Win_wait);

int PMPI_Win_test(MPI_Win win, int* flag) {
    const char* fn = "MPI_Win_test";
    return win_guard(win, fn, [&] {
        Window& w = win_of(win, fn);
        need(flag, "flag", fn);
        *flag = w.test(fn) ? 1 : 0;
        if (*flag == 0) {
            runtime().engine().progress();
            runtime().engine().missed();
        }
    });
}
SHMPI_WEAK_ALIAS(Win_test);

int PMPI_Win_lock(int lock_type, int rank, int assert, MPI_Win win) {
    const char* fn = "MPI_Win_lock";
    return win_guard(win, fn, [&] {
        Window& w = win_of(win, fn);
        check_target(w, rank, fn);
        w.lock(lock_type, rank, assert, fn);
    });
}
SHMPI_WEAK_ALIAS(Win_lock);

int PMPI_Win_unlock(int rank, MPI_Win win) {
    const char* fn = "MPI_Win_unlock";
    return win_guard(win, fn, [&] {
        Window& w = win_of(win, fn);
        check_target(w, rank, fn);
        w.unlock(rank, fn);
    });
}
SHMPI_WEAK_ALIAS(Win_unlock);

int PMPI_Win_lock_all(int assert, MPI_Win win) {
    const char* fn = "MPI_Win_lock_all";
    return win_guard(win, fn, [&] { win_of(win, fn).lock_all(assert, fn); });
}
SHMPI_WEAK_ALIAS(Win_lock_all);

int PMPI_Win_unlock_all(MPI_Win win) {
    const char* fn = "MPI_Win_unlock_all";
    return win_guard(win, fn, [&] { win_of(win, fn).unlock_all(fn); });
}
SHMPI_WEAK_ALIAS(Win_unlock_all);

}  // extern "C"

namespace {

/// MPI_Win_flush and MPI_Win_flush_local (rank: a rank or MPI_PROC_NULL),
/// and their _all forms (rank -1): every operation is complete in its call,
/// so the local and the remote completion are one.
int flush_call(int rank, MPI_Win win, const char* fn) {
    return win_guard(win, fn, [&] {
        Window& w = win_of(win, fn);
        if (rank != -1) check_target(w, rank, fn);
        w.flush(rank, fn);
    });
}

}  // namespace

extern "C" {

int PMPI_Win_flush(int rank, MPI_Win win) { return flush_call(rank, win, "MPI_Win_flush"); }
SHMPI_WEAK_ALIAS(Win_flush);

int PMPI_Win_flush_all(MPI_Win win) { return flush_call(-1, win, "MPI_Win_flush_all"); }
SHMPI_WEAK_ALIAS(Win_flush_all);

int PMPI_Win_flush_local(int rank, MPI_Win win) { return flush_call(rank, win, "MPI_Win_flush_local"); }
SHMPI_WEAK_ALIAS(Win_flush_local);

int PMPI_Win_flush_local_all(MPI_Win win) { return flush_call(-1, win, "MPI_Win_flush_local_all"); }
SHMPI_WEAK_ALIAS(Win_flush_local_all);

int PMPI_Win_sync(MPI_Win win) {
    const char* fn = "MPI_Win_sync";
    return win_guard(win, fn, [&] { win_of(win, fn).sync(); });
}
SHMPI_WEAK_ALIAS(Win_sync);

}  // extern "C"
