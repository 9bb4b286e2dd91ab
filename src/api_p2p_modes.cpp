// C boundary: the rest of the point-to-point chapter.  Ready and buffered
// sends (MPI_Rsend, MPI_Bsend and the buffer they use), persistent requests
// (MPI_Send_init ... MPI_Start), cancellation, matched probes (MPI_Mprobe,
// MPI_Mrecv), and MPI_Alloc_mem and MPI_Pcontrol.
#include <fmt/format.h>

#include <cstdarg>
#include <cstdlib>
#include <mutex>
#include <unordered_set>
#include <vector>

#include "api_common.hpp"
#include "api_info.hpp"
#include "api_requests.hpp"
#include "bsend.hpp"

using namespace shmpi;
using namespace shmpi::api;
using shmpi::p2p::Mode;
using shmpi::p2p::Request;

namespace shmpi::api {

p2p::Request* start_bsend(Communicator& c, const void* buf, int count, const dtype::Datatype& t,
                          int dest, int tag, const char* fn) {
    p2p::Engine& engine = c.engine();
    if (dest == MPI_PROC_NULL) return c.isend(buf, count, t, dest, tag, Mode::Standard);
    const auto bytes = static_cast<std::uint64_t>(count) * static_cast<std::uint64_t>(t.size);
    p2p::BsendBuffer& bb = runtime().bsend_buffer();
    std::byte* region = bb.reserve(engine, bytes);
    if (region == nullptr) {
        if (!bb.attached()) {
            throw MpiError(MPI_ERR_BUFFER,
                           fmt::format("{}: no buffer is attached for a buffered send of {} bytes "
                                       "(MPI_Buffer_attach)",
                                       fn, bytes));
        }
        throw MpiError(MPI_ERR_BUFFER,
                       fmt::format("{}: the attached buffer has no room for a message of {} bytes: "
                                   "it needs {} (MPI_BSEND_OVERHEAD included), and {} of the "
                                   "buffer's {} bytes are not held by pending buffered sends",
                                   fn, bytes, bytes + MPI_BSEND_OVERHEAD, bb.free_bytes(), bb.size()));
    }
    if (bytes > 0) dtype::pack(t, buf, count, region);
    // The engine's send from the buffer; the buffer owns its request.
    Request* r =
        c.isend(region, static_cast<std::int64_t>(bytes), dtype::byte_type(), dest, tag, Mode::Standard);
    bb.track(region, r);
    // What the user gets back: the send is complete as far as the caller is
    // concerned, since its buffer may be reused at once.
    Request* done = engine.new_request();
    done->done = true;
    return done;
}

const dtype::Datatype& check_send(Communicator& c, const void* buf, int count, MPI_Datatype type,
                                  int dest, int tag, const char* fn) {
    check_count(count, fn);
    const dtype::Datatype& t = type_of(type, fn);
    check_buffer(buf, count, t, "buf", fn);
    check_send_tag(tag, fn);
    check_dest(c, dest, fn);
    return t;
}

}  // namespace shmpi::api

namespace {

void check_request_out(const MPI_Request* request, const char* fn) {
    if (request == nullptr) throw MpiError(MPI_ERR_ARG, fmt::format("{}: request is NULL", fn));
}

/// A new persistent request with the arguments of one communication.
int init_persistent(Persistent::Op op, const void* buf, int count, MPI_Datatype type, int peer,
                    int tag, MPI_Comm comm, MPI_Request* request, const char* fn) {
    return guard(comm, fn, [&] {
        Communicator& c = comm_of(comm, fn);
        const dtype::Datatype* t = nullptr;
        if (op == Persistent::Op::Recv) {
            check_count(count, fn);
            t = &type_of(type, fn);
            check_buffer(buf, count, *t, "buf", fn);
            check_recv_tag(tag, fn);
            check_source(c, peer, fn);
        } else {
            t = &check_send(c, buf, count, type, peer, tag, fn);
        }
        check_request_out(request, fn);
        auto* p = new Persistent;
        p->type = Request::Type::Persistent;
        hold_comm(*p, comm);
        p->type_info = t;
        p->type_hold = dtype::Ref(t);  // a derived type stays valid if the user frees it
        p->op = op;
        p->buf = const_cast<void*>(buf);  // only the receive writes to it
        p->count = count;
        p->peer = peer;
        p->msg_tag = tag;
        *request = reinterpret_cast<MPI_Request>(p);
    });
}

/// The persistent request behind `handle`, which must be inactive.  For
/// index >= 0 the messages name it as array_of_requests[index].
Persistent& inactive_persistent(MPI_Request handle, const char* fn, int index = -1) {
    if (handle == MPI_REQUEST_NULL) {
        throw MpiError(MPI_ERR_REQUEST, index < 0 ? fmt::format("{}: request is MPI_REQUEST_NULL", fn)
                                                  : fmt::format("{}: array_of_requests[{}] is MPI_REQUEST_NULL",
                                                                fn, index));
    }
    Request& r = request_of(handle, fn, index);
    if (r.type != Request::Type::Persistent) {
        throw MpiError(MPI_ERR_REQUEST,
                       fmt::format("{}: {} is not persistent (only requests of "
                                   "MPI_Send_init, MPI_Recv_init and the like can be started)",
                                   fn, request_text(handle, index)));
    }
    auto& p = static_cast<Persistent&>(r);
    if (p.active != nullptr) {
        throw MpiError(MPI_ERR_REQUEST,
                       fmt::format("{}: {} is already active (complete it with a wait "
                                   "or a test before starting it again)",
                                   fn, request_text(handle, index)));
    }
    return p;
}

/// MPI_Startall's check, before it starts anything, of what start() would
/// refuse about `p` (array_of_requests[index]): a buffered send with no
/// buffer attached.  Whether the attached buffer has room is known only
/// when the send packs into it (earlier sends take room, finished ones give
/// it back), so that error still comes from start().
void check_startable(const Persistent& p, MPI_Request handle, int index, const char* fn) {
    if (p.op == Persistent::Op::Bsend && p.peer != MPI_PROC_NULL && !runtime().bsend_buffer().attached()) {
        throw MpiError(MPI_ERR_BUFFER,
                       fmt::format("{}: {} is a buffered send (MPI_Bsend_init) of {} bytes, and no buffer "
                                   "is attached (MPI_Buffer_attach)",
                                   fn, request_text(handle, index),
                                   static_cast<std::int64_t>(p.count) * p.type_info->size));
    }
}

/// Starts one more communication of `p`.  Its communicator may have been
/// freed since the init call: `p` holds it (hold_comm()), and the
/// operations of a request made before MPI_Comm_free go on as usual.
void start(Persistent& p, const char* fn) {
    Communicator& c =
        p.holds_comm ? *reinterpret_cast<Communicator*>(p.comm_handle) : comm_of(p.comm_handle, fn);
    const dtype::Datatype& t = *p.type_info;
    Request* r = nullptr;
    switch (p.op) {
        case Persistent::Op::Send:
            r = c.isend(p.buf, p.count, t, p.peer, p.msg_tag, Mode::Standard);
            break;
        case Persistent::Op::Ssend:
            r = c.isend(p.buf, p.count, t, p.peer, p.msg_tag, Mode::Sync);
            break;
        case Persistent::Op::Bsend:
            r = start_bsend(c, p.buf, p.count, t, p.peer, p.msg_tag, fn);
            break;
        case Persistent::Op::Recv:
            r = c.irecv(p.buf, p.count, t, p.peer, p.msg_tag);
            break;
    }
    r->comm_handle = p.comm_handle;  // held by `p`, not by each start
    p.active = r;
}

/// The communicator whose error handler sees errors about `handle`: a
/// persistent request's own, else MPI_COMM_WORLD.
MPI_Comm comm_for(MPI_Request handle) {
    if (handle == MPI_REQUEST_NULL) return MPI_COMM_WORLD;
    try {
        const MPI_Comm comm = request_of(handle, "").comm_handle;
        return comm != MPI_COMM_NULL ? comm : MPI_COMM_WORLD;
    } catch (const MpiError&) {
        return MPI_COMM_WORLD;  // the call itself reports the bad handle
    }
}

/// What an MPI_Message handle points at: a message a matched probe took out
/// of the queue, until MPI_Mrecv or MPI_Imrecv receives it.  It holds its
/// communicator (add_comm_hold()), as a request does, and hands the hold
/// to the receive's request: a message probed before MPI_Comm_free is still
/// received on it.
struct Message : HandleStorage {
    static constexpr std::uint32_t kMagic = 0x4d534748;  // "MSGH"
    std::uint32_t magic = kMagic;
    p2p::Unexpected* message = nullptr;
    MPI_Comm comm = MPI_COMM_NULL;
    bool holds_comm = false;
};

/// The communicator whose error handler takes an error of MPI_Mrecv or
/// MPI_Imrecv: the one the message was probed on (as the receive's
/// truncation error is), or MPI_COMM_WORLD for MPI_MESSAGE_NO_PROC and for
/// a handle the call itself reports as bad.  A message that holds a freed
/// communicator names its handle, whose errors go to MPI_COMM_WORLD's
/// handler (raise()).
MPI_Comm comm_for(const MPI_Message* message) {
    if (message == nullptr || *message == MPI_MESSAGE_NULL || *message == MPI_MESSAGE_NO_PROC) return MPI_COMM_WORLD;
    const auto* m = reinterpret_cast<const Message*>(*message);
    if (reinterpret_cast<std::uintptr_t>(*message) < kPredefinedLimit || !HandleStorage::may_read_as<Message>(m) ||
        m->magic != Message::kMagic) {
        return MPI_COMM_WORLD;
    }
    return m->comm;
}

MPI_Message message_handle(p2p::Unexpected* u, MPI_Comm comm) {
    if (u == nullptr) return MPI_MESSAGE_NO_PROC;
    auto* m = new Message{{}, Message::kMagic, u, comm, false};
    m->holds_comm = add_comm_hold(comm);
    return reinterpret_cast<MPI_Message>(m);
}

/// Receives the message behind `*message` (MPI_Mrecv, MPI_Imrecv) and sets
/// the handle to MPI_MESSAGE_NULL.  Returns the receive's request.
Request* receive_message(void* buf, int count, MPI_Datatype type, MPI_Message* message, const char* fn) {
    if (message == nullptr) throw MpiError(MPI_ERR_ARG, fmt::format("{}: message is NULL", fn));
    const auto v = reinterpret_cast<std::uintptr_t>(*message);
    Message* m = nullptr;
    if (*message == MPI_MESSAGE_NULL) {
        throw MpiError(MPI_ERR_REQUEST, fmt::format("{}: message is MPI_MESSAGE_NULL (a message handle comes from "
                                                    "MPI_Mprobe or MPI_Improbe and is received once)",
                                                    fn));
    }
    if (*message != MPI_MESSAGE_NO_PROC) {
        m = reinterpret_cast<Message*>(*message);
        if (v < kPredefinedLimit || !HandleStorage::may_read_as<Message>(m) || m->magic != Message::kMagic) {
            throw MpiError(MPI_ERR_REQUEST,
                           fmt::format("{}: invalid message {:#x} (a message handle comes from "
                                       "MPI_Mprobe or MPI_Improbe and is received once)",
                                       fn, v));
        }
    }
    // A held communicator may have been freed since the probe: it lingers.
    Communicator& c = m != nullptr && m->holds_comm ? *reinterpret_cast<Communicator*>(m->comm)
                                                    : comm_of(m != nullptr ? m->comm : MPI_COMM_SELF, fn);
    check_count(count, fn);
    const dtype::Datatype& t = type_of(type, fn);
    check_buffer(buf, count, t, "buf", fn);
    Request* r = c.imrecv(m != nullptr ? m->message : nullptr, buf, count, t);
    if (m != nullptr) {
        // The message's hold becomes the request's.
        r->comm_handle = m->comm;
        r->holds_comm = m->holds_comm;
        m->magic = 0;
        delete m;
    } else {
        hold_comm(*r, MPI_COMM_SELF);
    }
    *message = MPI_MESSAGE_NULL;
    return r;
}

/// The blocks MPI_Alloc_mem returned that MPI_Free_mem has not taken back:
/// MPI_Free_mem refuses any other pointer (MPI_ERR_BASE) instead of passing
/// it to free().  (Out here, not beside them in the extern "C" block: a
/// function there returning a C++ type has C linkage, which clang warns of.)
struct LiveBlocks {
    std::mutex lock;
    std::unordered_set<void*> blocks;
};

LiveBlocks& live_blocks() {
    static LiveBlocks live;
    return live;
}

}  // namespace

extern "C" {

// ---- ready mode: a standard send is a correct ready send (MPI-3.1 3.4) ----

int PMPI_Rsend(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
    const char* fn = "MPI_Rsend";
    return guard(comm, fn, [&] {
        Communicator& c = comm_of(comm, fn);
        const dtype::Datatype& t = check_send(c, buf, count, type, dest, tag, fn);
        c.send(buf, count, t, dest, tag, Mode::Standard);
    });
}
SHMPI_WEAK_ALIAS(Rsend);

int PMPI_Irsend(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                MPI_Request* request) {
    const char* fn = "MPI_Irsend";
    return guard(comm, fn, [&] {
        Communicator& c = comm_of(comm, fn);
        const dtype::Datatype& t = check_send(c, buf, count, type, dest, tag, fn);
        check_request_out(request, fn);
        Request* r = c.isend(buf, count, t, dest, tag, Mode::Standard);
        hold_comm(*r, comm);
        *request = reinterpret_cast<MPI_Request>(r);
    });
}
SHMPI_WEAK_ALIAS(Irsend);

// ---- buffered mode ----

int PMPI_Buffer_attach(void* buffer, int size) {
    const char* fn = "MPI_Buffer_attach";
    return guard(MPI_COMM_WORLD, fn, [&] {
        Runtime& rt = running(fn);
        if (size < 0) throw MpiError(MPI_ERR_ARG, fmt::format("{}: size {} is negative", fn, size));
        if (buffer == nullptr && size > 0) {
            throw MpiError(MPI_ERR_BUFFER, fmt::format("{}: buffer is NULL with size {}", fn, size));
        }
        p2p::BsendBuffer& bb = rt.bsend_buffer();
        if (bb.attached()) {
            throw MpiError(MPI_ERR_BUFFER,
                           fmt::format("{}: a buffer of {} bytes is already attached; detach it "
                                       "(MPI_Buffer_detach) before attaching another",
                                       fn, bb.size()));
        }
        bb.attach(buffer, static_cast<std::uint64_t>(size));
    });
}
SHMPI_WEAK_ALIAS(Buffer_attach);

int PMPI_Buffer_detach(void* buffer_addr, int* size) {
    const char* fn = "MPI_Buffer_detach";
    return guard(MPI_COMM_WORLD, fn, [&] {
        Runtime& rt = running(fn);
        need(buffer_addr, "buffer_addr", fn);
        need(size, "size", fn);
        p2p::BsendBuffer& bb = rt.bsend_buffer();
        void* base = bb.base();
        const auto bytes = static_cast<int>(bb.size());
        bb.detach(rt.engine());  // blocks until every buffered message has left
        *static_cast<void**>(buffer_addr) = base;
        *size = bytes;
    });
}
SHMPI_WEAK_ALIAS(Buffer_detach);

int PMPI_Bsend(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
    const char* fn = "MPI_Bsend";
    return guard(comm, fn, [&] {
        Communicator& c = comm_of(comm, fn);
        const dtype::Datatype& t = check_send(c, buf, count, type, dest, tag, fn);
        c.engine().release(start_bsend(c, buf, count, t, dest, tag, fn));
    });
}
SHMPI_WEAK_ALIAS(Bsend);

int PMPI_Ibsend(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                MPI_Request* request) {
    const char* fn = "MPI_Ibsend";
    return guard(comm, fn, [&] {
        Communicator& c = comm_of(comm, fn);
        const dtype::Datatype& t = check_send(c, buf, count, type, dest, tag, fn);
        check_request_out(request, fn);
        Request* r = start_bsend(c, buf, count, t, dest, tag, fn);
        hold_comm(*r, comm);
        *request = reinterpret_cast<MPI_Request>(r);
    });
}
SHMPI_WEAK_ALIAS(Ibsend);

// ---- persistent requests ----

int PMPI_Send_init(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                   MPI_Request* request) {
    return init_persistent(Persistent::Op::Send, buf, count, type, dest, tag, comm, request, "MPI_Send_init");
}
SHMPI_WEAK_ALIAS(Send_init);

int PMPI_Ssend_init(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                    MPI_Request* request) {
    return init_persistent(Persistent::Op::Ssend, buf, count, type, dest, tag, comm, request, "MPI_Ssend_init");
}
SHMPI_WEAK_ALIAS(Ssend_init);

int PMPI_Rsend_init(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                    MPI_Request* request) {
    return init_persistent(Persistent::Op::Send, buf, count, type, dest, tag, comm, request, "MPI_Rsend_init");
}
SHMPI_WEAK_ALIAS(Rsend_init);

int PMPI_Bsend_init(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                    MPI_Request* request) {
    return init_persistent(Persistent::Op::Bsend, buf, count, type, dest, tag, comm, request, "MPI_Bsend_init");
}
SHMPI_WEAK_ALIAS(Bsend_init);

int PMPI_Recv_init(void* buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
                   MPI_Request* request) {
    return init_persistent(Persistent::Op::Recv, buf, count, type, source, tag, comm, request, "MPI_Recv_init");
}
SHMPI_WEAK_ALIAS(Recv_init);

int PMPI_Start(MPI_Request* request) {
    const char* fn = "MPI_Start";
    if (request == nullptr) return guard(MPI_COMM_WORLD, fn, [] { throw MpiError(MPI_ERR_ARG, "MPI_Start: request is NULL"); });
    return guard(comm_for(*request), fn, [&] {
        running(fn);
        start(inactive_persistent(*request, fn), fn);
    });
}
SHMPI_WEAK_ALIAS(Start);

int PMPI_Startall(int count, MPI_Request array_of_requests[]) {
    const char* fn = "MPI_Startall";
    // An error about one request goes to that request's communicator's
    // handler, as MPI_Start's does; one about the array, to MPI_COMM_WORLD's.
    std::vector<Persistent*> ps;
    int rc = guard(MPI_COMM_WORLD, fn, [&] {
        running(fn);
        if (count < 0) throw MpiError(MPI_ERR_COUNT, fmt::format("{}: count {} is negative", fn, count));
        if (count > 0 && array_of_requests == nullptr) {
            throw MpiError(MPI_ERR_ARG, fmt::format("{}: array_of_requests is NULL", fn));
        }
        ps.reserve(static_cast<std::size_t>(count));
    });
    // All or nothing: every request is checked before any starts,
    // buffered sends for an attached buffer included (MPICH starts the
    // requests before such a send; the standard does not say).  Only a
    // buffered send that finds no room in the buffer fails after the
    // requests before it have started (check_startable()).
    for (int i = 0; i < count && rc == MPI_SUCCESS; ++i) {
        rc = guard(comm_for(array_of_requests[i]), fn, [&] {
            Persistent* p = &inactive_persistent(array_of_requests[i], fn, i);
            for (const Persistent* q : ps) {
                if (q == p) {
                    throw MpiError(MPI_ERR_REQUEST,
                                   fmt::format("{}: array_of_requests[{}] appears twice in the array", fn, i));
                }
            }
            check_startable(*p, array_of_requests[i], i, fn);
            ps.push_back(p);
        });
    }
    for (int i = 0; i < count && rc == MPI_SUCCESS; ++i) {
        rc = guard(comm_for(array_of_requests[i]), fn, [&] { start(*ps[static_cast<std::size_t>(i)], fn); });
    }
    return rc;
}
SHMPI_WEAK_ALIAS(Startall);

// ---- cancellation ----

int PMPI_Cancel(MPI_Request* request) {
    const char* fn = "MPI_Cancel";
    int rc = MPI_SUCCESS;
    const int outer = guard(MPI_COMM_WORLD, fn, [&] {
        Runtime& rt = running(fn);
        need(request, "request", fn);
        if (*request == MPI_REQUEST_NULL) {
            throw MpiError(MPI_ERR_REQUEST, fmt::format("{}: request is MPI_REQUEST_NULL", fn));
        }
        Request* r = active_of(*request, fn);
        if (r == nullptr) {
            throw MpiError(MPI_ERR_REQUEST,
                           fmt::format("{}: persistent request {:#x} is not active", fn,
                                       reinterpret_cast<std::uintptr_t>(*request)));
        }
        if (Generalized* g = generalized_of(r)) {
            // Cancelling is the program's business (MPI-3.1 12.2): cancel_fn
            // learns whether MPI_Grequest_complete was called, and query_fn
            // later reports whether it worked (MPI_Status_set_cancelled).
            const int code = g->cancel();
            if (code != MPI_SUCCESS) rc = callback_failed(*g, "cancel_fn", code, fn);
            return;
        }
        if (r->type == Request::Type::Task) {
            // Reported to the request's communicator, as its completion's
            // errors are; the request is left as it was.
            rc = raise_on_request(
                r->comm_handle,
                MpiError(MPI_ERR_REQUEST, fmt::format("{}: request {:#x} belongs to a nonblocking "
                                                      "collective, which cannot be cancelled "
                                                      "(MPI-3.1 5.12)",
                                                      fn, reinterpret_cast<std::uintptr_t>(*request))));
            return;
        }
        // A receive, or a synchronous or rendezvous send, that nothing has
        // matched yet is cancelled; anything else completes as it would
        // have (MPI-3.1 3.8.4 allows either; p2p.cpp, "cancelling sends").
        // The user still completes the request with a wait or a test.
        rt.engine().cancel(r);
    });
    return outer != MPI_SUCCESS ? outer : rc;
}
SHMPI_WEAK_ALIAS(Cancel);

int PMPI_Test_cancelled(const MPI_Status* status, int* flag) {
    const char* fn = "MPI_Test_cancelled";
    return guard(MPI_COMM_WORLD, fn, [&] {
        need_status(status, fn);
        need(flag, "flag", fn);
        *flag = status->shmpi_cancelled != 0 ? 1 : 0;
    });
}
SHMPI_WEAK_ALIAS(Test_cancelled);

// ---- matched probes ----

int PMPI_Improbe(int source, int tag, MPI_Comm comm, int* flag, MPI_Message* message, MPI_Status* status) {
    const char* fn = "MPI_Improbe";
    return guard(comm, fn, [&] {
        Communicator& c = comm_of(comm, fn);
        check_recv_tag(tag, fn);
        check_source(c, source, fn);
        need(flag, "flag", fn);
        need(message, "message", fn);
        MPI_Status st{};
        p2p::Unexpected* u = nullptr;
        *flag = c.improbe(source, tag, st, u) ? 1 : 0;
        if (*flag) {
            *message = message_handle(u, comm);
            put_status(status, st);
        } else {
            c.engine().missed();
        }
    });
}
SHMPI_WEAK_ALIAS(Improbe);

int PMPI_Mprobe(int source, int tag, MPI_Comm comm, MPI_Message* message, MPI_Status* status) {
    const char* fn = "MPI_Mprobe";
    return guard(comm, fn, [&] {
        Communicator& c = comm_of(comm, fn);
        check_recv_tag(tag, fn);
        check_source(c, source, fn);
        if (message == nullptr) throw MpiError(MPI_ERR_ARG, fmt::format("{}: message is NULL", fn));
        MPI_Status st{};
        p2p::Unexpected* u = c.mprobe(source, tag, st);
        *message = message_handle(u, comm);
        put_status(status, st);
    });
}
SHMPI_WEAK_ALIAS(Mprobe);

int PMPI_Mrecv(void* buf, int count, MPI_Datatype type, MPI_Message* message, MPI_Status* status) {
    const char* fn = "MPI_Mrecv";
    int rc = MPI_SUCCESS;
    const int outer = guard(comm_for(message), fn, [&] {
        Runtime& rt = running(fn);
        Request* r = receive_message(buf, count, type, message, fn);
        rt.engine().wait(*r);
        MPI_Request h = reinterpret_cast<MPI_Request>(r);
        rc = retire(&h, status, fn);
    });
    return outer != MPI_SUCCESS ? outer : rc;
}
SHMPI_WEAK_ALIAS(Mrecv);

int PMPI_Imrecv(void* buf, int count, MPI_Datatype type, MPI_Message* message, MPI_Request* request) {
    const char* fn = "MPI_Imrecv";
    return guard(comm_for(message), fn, [&] {
        running(fn);
        check_request_out(request, fn);
        *request = reinterpret_cast<MPI_Request>(receive_message(buf, count, type, message, fn));
    });
}
SHMPI_WEAK_ALIAS(Imrecv);

// ---- memory for communication: any memory serves, so the heap's ----

int PMPI_Alloc_mem(MPI_Aint size, MPI_Info info, void* baseptr) {
    const char* fn = "MPI_Alloc_mem";
    return guard(MPI_COMM_WORLD, fn, [&] {
        running(fn);
        check_info_arg(info, fn);  // checked; no hints are used
        if (size < 0) throw MpiError(MPI_ERR_ARG, fmt::format("{}: size {} is negative", fn, size));
        if (baseptr == nullptr) throw MpiError(MPI_ERR_ARG, fmt::format("{}: baseptr is NULL", fn));
        void* p = std::malloc(size > 0 ? static_cast<std::size_t>(size) : 1);
        if (p == nullptr) {
            throw MpiError(MPI_ERR_NO_MEM, fmt::format("{}: cannot allocate {} bytes", fn, size));
        }
        try {
            LiveBlocks& live = live_blocks();
            const std::lock_guard hold(live.lock);
            live.blocks.insert(p);
        } catch (...) {
            std::free(p);
            throw;
        }
        *static_cast<void**>(baseptr) = p;
    });
}
SHMPI_WEAK_ALIAS(Alloc_mem);

int PMPI_Free_mem(void* base) {
    const char* fn = "MPI_Free_mem";
    return guard(MPI_COMM_WORLD, fn, [&] {
        running(fn);
        if (base == nullptr) return;  // as free(NULL)
        {
            LiveBlocks& live = live_blocks();
            const std::lock_guard hold(live.lock);
            if (live.blocks.erase(base) == 0) {
                throw MpiError(MPI_ERR_BASE, fmt::format("{}: base {:#x} is not a block that MPI_Alloc_mem returned "
                                                         "(or it was freed already)",
                                                         fn, reinterpret_cast<std::uintptr_t>(base)));
            }
        }
        std::free(base);
    });
}
SHMPI_WEAK_ALIAS(Free_mem);

// ---- profiling control: the library itself has nothing to switch ----

int PMPI_Pcontrol(const int level, ...) {
    (void)level;
    return MPI_SUCCESS;
}
SHMPI_WEAK_ALIAS(Pcontrol);

}  // extern "C"
