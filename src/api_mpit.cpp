// C boundary: the tool information interface (MPI-3.1 chapter 14).
//
// Control variables are shmpi's settings, one per environment variable of
// README.md's "Environment variables" table (generated into mpit_settings.inc by
// src/mpit_settings.py, so their descriptions are the README's): strings
// (MPI_CHAR), bound to no object, MPI_T_SCOPE_CONSTANT (each is read from
// the environment when the program or mpirun starts, so writing one could
// change nothing: MPI_T_ERR_CVAR_SET_NEVER).  A variable's value is the
// environment's, or "" when it is not set and its default applies.
// Performance variables: the lengths of this process's two matching queues
// (MPI_T_PVAR_CLASS_LEVEL, unsigned long long, read-only, continuous, so
// they are never started, stopped or reset; 0 outside MPI_Init..Finalize).
// No enumerations; one category, "shmpi", holds every variable.
//
// The interface stands apart from MPI_Init/MPI_Finalize (14.2):
// MPI_T_init_thread may come before MPI_Init and after MPI_Finalize, and
// every MPI_T_init_thread needs its MPI_T_finalize.  Its functions return
// their error classes (MPI_T_ERR_*, MPI_ERR_ARG) and call no error handler.
// Handles and sessions are heap objects whose address is the handle, each
// checked against the set of live ones (a session's handles against its
// own).  The interface's state has a lock of its own: under
// MPI_THREAD_MULTIPLE its calls may come from any thread at any time.
#include <mpi.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <set>
#include <string>

#include "api_common.hpp"
#include "p2p.hpp"

namespace {

struct Setting {
    const char* name;
    const char* fallback;  ///< the README's default column
    const char* text;      ///< the README's description
};

constexpr Setting kSettings[] = {
#include "mpit_settings.inc"
};
constexpr int kNumCvars = static_cast<int>(sizeof kSettings / sizeof kSettings[0]);
/// Bytes a control variable's value may take, its terminating NUL
/// included: the count MPI_T_cvar_handle_alloc gives.
constexpr int kValueBytes = 1024;

const char* const kCategory = "shmpi";
const char* const kCategoryText =
    "shmpi's settings: the environment variables of README.md's table, as this process sees them";

/// A performance variable: a level this process's state holds.
struct Pvar {
    const char* name;
    const char* text;
    std::size_t (*read)(shmpi::p2p::Engine&);
};

const Pvar kPvars[] = {
    {"shmpi_posted_recvq_length",
     "receives this process has posted that no message has matched yet (its posted-receive queue)",
     [](shmpi::p2p::Engine& e) { return e.posted_receives(); }},
    {"shmpi_unexpected_recvq_length",
     "messages this process has taken in that no receive has matched yet (its unexpected-message queue; "
     "messages still in the shared-memory rings are not counted)",
     [](shmpi::p2p::Engine& e) { return e.unexpected_messages(); }},
};
constexpr int kNumPvars = static_cast<int>(sizeof kPvars / sizeof kPvars[0]);

struct CvarHandle {
    int index;
};
struct PvarHandle {
    int index;
};
struct Session {
    std::set<const PvarHandle*> handles;
};

struct State {
    std::mutex lock;
    int inits = 0;  ///< MPI_T_init_thread calls not yet finalized
    std::set<const CvarHandle*> handles;
    std::set<Session*> sessions;
};

State& state() {
    static auto* s = new State();  // never destroyed: MPI_T may be called from atexit handlers
    return *s;
}

/// Copies `text` into `out` (MPI-3.1 14.3.3): with a NULL `out` or a zero
/// *len, only the length the string needs (its NUL included) goes to *len;
/// otherwise at most *len - 1 characters and a NUL, and *len becomes the
/// characters written, the NUL included.
void put_string(const std::string& text, char* out, int* len) {
    if (len == nullptr) return;
    const int need = static_cast<int>(text.size()) + 1;
    if (out == nullptr || *len <= 0) {
        *len = need;
        return;
    }
    const int n = std::min(*len - 1, static_cast<int>(text.size()));
    std::memcpy(out, text.data(), static_cast<std::size_t>(n));
    out[n] = '\0';
    *len = n + 1;
}

template <class T>
void put(T* out, T value) {
    if (out != nullptr) *out = value;
}

/// Runs `body` (returning an MPI_T error class or MPI_SUCCESS) once the
/// interface is initialized, under the lock.
template <class Body>
int tool_call(Body&& body) {
    State& s = state();
    std::lock_guard guard(s.lock);
    if (s.inits == 0) return MPI_T_ERR_NOT_INITIALIZED;
    return body(s);
}

std::string value_of(int index) {
    const char* v = std::getenv(kSettings[index].name);
    std::string value = v != nullptr ? v : "";
    if (static_cast<int>(value.size()) >= kValueBytes) value.resize(kValueBytes - 1);
    return value;
}

std::string description_of(int index) {
    return std::string(kSettings[index].text) + " (default: " + kSettings[index].fallback + "; an empty value: "
           "not set, the default applies)";
}

bool is_cat(int index) { return index == 0; }

/// What a call on a performance variable handle of a session does.
enum class PvarOp { Start, Stop, Read, Write, Reset, ReadReset, Free };

/// The checks and work of a call on `session` and `handle`: the session,
/// then the handle (one of the session's; MPI_T_PVAR_ALL_HANDLES only for
/// start, stop and reset, where it skips the variables those do not apply
/// to: every one here), then what the variables allow (read-only and
/// continuous, all of them).
int pvar_call(MPI_T_pvar_session session, MPI_T_pvar_handle* handle, PvarOp op, void* buf) {
    return tool_call([&](State& s) {
        auto* x = reinterpret_cast<Session*>(session);
        if (s.sessions.count(x) == 0) return MPI_T_ERR_INVALID_SESSION;
        if (handle == nullptr) return MPI_ERR_ARG;
        if (*handle == MPI_T_PVAR_ALL_HANDLES) {
            const bool all_ok = op == PvarOp::Start || op == PvarOp::Stop || op == PvarOp::Reset;
            return all_ok ? MPI_SUCCESS : MPI_T_ERR_INVALID_HANDLE;
        }
        const auto* h = reinterpret_cast<const PvarHandle*>(*handle);
        if (x->handles.count(h) == 0) return MPI_T_ERR_INVALID_HANDLE;
        switch (op) {
        case PvarOp::Start:
        case PvarOp::Stop:
            return MPI_T_ERR_PVAR_NO_STARTSTOP;  // continuous
        case PvarOp::Write:
        case PvarOp::Reset:
        case PvarOp::ReadReset:
            return MPI_T_ERR_PVAR_NO_WRITE;  // read-only
        case PvarOp::Read: {
            if (buf == nullptr) return MPI_ERR_ARG;
            unsigned long long v = 0;
            if (shmpi::api::phase() == shmpi::api::Phase::Running) {
                v = kPvars[h->index].read(shmpi::api::runtime().engine());
            }
            std::memcpy(buf, &v, sizeof v);
            return MPI_SUCCESS;
        }
        case PvarOp::Free:
            x->handles.erase(h);
            delete h;
            *handle = MPI_T_PVAR_HANDLE_NULL;
            return MPI_SUCCESS;
        }
        return MPI_SUCCESS;
    });
}

void free_session(Session* x) {
    for (const PvarHandle* h : x->handles) delete h;
    delete x;
}

}  // namespace

int PMPI_T_init_thread(int required, int* provided) {
    if (provided == nullptr) return MPI_ERR_ARG;
    State& s = state();
    std::lock_guard guard(s.lock);
    ++s.inits;
    // As MPI_Init_thread: any level, MPI_THREAD_MULTIPLE included.
    *provided = std::clamp(required, int{MPI_THREAD_SINGLE}, int{MPI_THREAD_MULTIPLE});
    return MPI_SUCCESS;
}
SHMPI_WEAK_ALIAS(T_init_thread);

int PMPI_T_finalize(void) {
    State& s = state();
    std::lock_guard guard(s.lock);
    if (s.inits == 0) return MPI_T_ERR_NOT_INITIALIZED;
    if (--s.inits == 0) {
        // The last finalize frees what the tool left (MPI-3.1 14.2 lets
        // handles die with the interface).
        for (const CvarHandle* h : s.handles) delete h;
        for (Session* x : s.sessions) free_session(x);
        s.handles.clear();
        s.sessions.clear();
    }
    return MPI_SUCCESS;
}
SHMPI_WEAK_ALIAS(T_finalize);

// ------------------------------------------------------------ enumerations

int PMPI_T_enum_get_info(MPI_T_enum enumtype, int* num, char* name, int* name_len) {
    (void)enumtype, (void)num, (void)name, (void)name_len;
    return tool_call([&](State&) { return MPI_T_ERR_INVALID_HANDLE; });  // there are none
}
SHMPI_WEAK_ALIAS(T_enum_get_info);

int PMPI_T_enum_get_item(MPI_T_enum enumtype, int index, int* value, char* name, int* name_len) {
    (void)enumtype, (void)index, (void)value, (void)name, (void)name_len;
    return tool_call([&](State&) { return MPI_T_ERR_INVALID_HANDLE; });
}
SHMPI_WEAK_ALIAS(T_enum_get_item);

// ------------------------------------------------------- control variables

int PMPI_T_cvar_get_num(int* num_cvar) {
    return tool_call([&](State&) {
        if (num_cvar == nullptr) return MPI_ERR_ARG;
        *num_cvar = kNumCvars;
        return MPI_SUCCESS;
    });
}
SHMPI_WEAK_ALIAS(T_cvar_get_num);

int PMPI_T_cvar_get_info(int cvar_index, char* name, int* name_len, int* verbosity, MPI_Datatype* datatype,
                         MPI_T_enum* enumtype, char* desc, int* desc_len, int* bind, int* scope) {
    return tool_call([&](State&) {
        if (cvar_index < 0 || cvar_index >= kNumCvars) return MPI_T_ERR_INVALID_INDEX;
        put_string(kSettings[cvar_index].name, name, name_len);
        put(verbosity, MPI_T_VERBOSITY_TUNER_BASIC);
        put(datatype, MPI_CHAR);
        put(enumtype, MPI_T_ENUM_NULL);
        put_string(description_of(cvar_index), desc, desc_len);
        put(bind, MPI_T_BIND_NO_OBJECT);
        put(scope, MPI_T_SCOPE_CONSTANT);
        return MPI_SUCCESS;
    });
}
SHMPI_WEAK_ALIAS(T_cvar_get_info);

int PMPI_T_cvar_get_index(const char* name, int* cvar_index) {
    return tool_call([&](State&) {
        if (name == nullptr || cvar_index == nullptr) return MPI_ERR_ARG;
        for (int i = 0; i < kNumCvars; ++i) {
            if (std::strcmp(kSettings[i].name, name) == 0) {
                *cvar_index = i;
                return MPI_SUCCESS;
            }
        }
        return MPI_T_ERR_INVALID_NAME;
    });
}
SHMPI_WEAK_ALIAS(T_cvar_get_index);

int PMPI_T_cvar_handle_alloc(int cvar_index, void* obj_handle, MPI_T_cvar_handle* handle, int* count) {
    (void)obj_handle;  // bound to no object: ignored (14.3.6)
    return tool_call([&](State& s) {
        if (cvar_index < 0 || cvar_index >= kNumCvars) return MPI_T_ERR_INVALID_INDEX;
        if (handle == nullptr || count == nullptr) return MPI_ERR_ARG;
        auto* h = new CvarHandle{cvar_index};
        s.handles.insert(h);
        *handle = reinterpret_cast<MPI_T_cvar_handle>(h);
        *count = kValueBytes;
        return MPI_SUCCESS;
    });
}
SHMPI_WEAK_ALIAS(T_cvar_handle_alloc);

int PMPI_T_cvar_handle_free(MPI_T_cvar_handle* handle) {
    return tool_call([&](State& s) {
        if (handle == nullptr) return MPI_ERR_ARG;
        const auto* h = reinterpret_cast<const CvarHandle*>(*handle);
        if (s.handles.erase(h) == 0) return MPI_T_ERR_INVALID_HANDLE;
        delete h;
        *handle = MPI_T_CVAR_HANDLE_NULL;
        return MPI_SUCCESS;
    });
}
SHMPI_WEAK_ALIAS(T_cvar_handle_free);

int PMPI_T_cvar_read(MPI_T_cvar_handle handle, void* buf) {
    return tool_call([&](State& s) {
        const auto* h = reinterpret_cast<const CvarHandle*>(handle);
        if (s.handles.count(h) == 0) return MPI_T_ERR_INVALID_HANDLE;
        if (buf == nullptr) return MPI_ERR_ARG;
        const std::string v = value_of(h->index);
        std::memcpy(buf, v.c_str(), v.size() + 1);
        return MPI_SUCCESS;
    });
}
SHMPI_WEAK_ALIAS(T_cvar_read);

int PMPI_T_cvar_write(MPI_T_cvar_handle handle, const void* buf) {
    (void)buf;
    return tool_call([&](State& s) {
        if (s.handles.count(reinterpret_cast<const CvarHandle*>(handle)) == 0) return MPI_T_ERR_INVALID_HANDLE;
        return MPI_T_ERR_CVAR_SET_NEVER;  // MPI_T_SCOPE_CONSTANT
    });
}
SHMPI_WEAK_ALIAS(T_cvar_write);

// ---------------------------------------------------- performance variables

int PMPI_T_pvar_get_num(int* num_pvar) {
    return tool_call([&](State&) {
        if (num_pvar == nullptr) return MPI_ERR_ARG;
        *num_pvar = kNumPvars;
        return MPI_SUCCESS;
    });
}
SHMPI_WEAK_ALIAS(T_pvar_get_num);

int PMPI_T_pvar_get_info(int pvar_index, char* name, int* name_len, int* verbosity, int* var_class,
                         MPI_Datatype* datatype, MPI_T_enum* enumtype, char* desc, int* desc_len, int* bind,
                         int* readonly, int* continuous, int* atomic) {
    return tool_call([&](State&) {
        if (pvar_index < 0 || pvar_index >= kNumPvars) return MPI_T_ERR_INVALID_INDEX;
        put_string(kPvars[pvar_index].name, name, name_len);
        put(verbosity, MPI_T_VERBOSITY_USER_DETAIL);
        put(var_class, MPI_T_PVAR_CLASS_LEVEL);
        put(datatype, MPI_UNSIGNED_LONG_LONG);
        put(enumtype, MPI_T_ENUM_NULL);
        put_string(kPvars[pvar_index].text, desc, desc_len);
        put(bind, MPI_T_BIND_NO_OBJECT);
        put(readonly, 1);
        put(continuous, 1);
        put(atomic, 0);
        return MPI_SUCCESS;
    });
}
SHMPI_WEAK_ALIAS(T_pvar_get_info);

int PMPI_T_pvar_get_index(const char* name, int var_class, int* pvar_index) {
    return tool_call([&](State&) {
        if (name == nullptr || pvar_index == nullptr) return MPI_ERR_ARG;
        for (int i = 0; i < kNumPvars; ++i) {
            if (var_class == MPI_T_PVAR_CLASS_LEVEL && std::strcmp(kPvars[i].name, name) == 0) {
                *pvar_index = i;
                return MPI_SUCCESS;
            }
        }
        return MPI_T_ERR_INVALID_NAME;
    });
}
SHMPI_WEAK_ALIAS(T_pvar_get_index);

int PMPI_T_pvar_session_create(MPI_T_pvar_session* session) {
    return tool_call([&](State& s) {
        if (session == nullptr) return MPI_ERR_ARG;
        auto* x = new Session();
        s.sessions.insert(x);
        *session = reinterpret_cast<MPI_T_pvar_session>(x);
        return MPI_SUCCESS;
    });
}
SHMPI_WEAK_ALIAS(T_pvar_session_create);

int PMPI_T_pvar_session_free(MPI_T_pvar_session* session) {
    return tool_call([&](State& s) {
        if (session == nullptr) return MPI_ERR_ARG;
        auto* x = reinterpret_cast<Session*>(*session);
        if (s.sessions.erase(x) == 0) return MPI_T_ERR_INVALID_SESSION;
        free_session(x);  // with the handles it still holds
        *session = MPI_T_PVAR_SESSION_NULL;
        return MPI_SUCCESS;
    });
}
SHMPI_WEAK_ALIAS(T_pvar_session_free);

int PMPI_T_pvar_handle_alloc(MPI_T_pvar_session session, int pvar_index, void* obj_handle,
                             MPI_T_pvar_handle* handle, int* count) {
    (void)obj_handle;  // bound to no object: ignored
    return tool_call([&](State& s) {
        auto* x = reinterpret_cast<Session*>(session);
        if (s.sessions.count(x) == 0) return MPI_T_ERR_INVALID_SESSION;
        if (pvar_index < 0 || pvar_index >= kNumPvars) return MPI_T_ERR_INVALID_INDEX;
        if (handle == nullptr || count == nullptr) return MPI_ERR_ARG;
        auto* h = new PvarHandle{pvar_index};
        x->handles.insert(h);
        *handle = reinterpret_cast<MPI_T_pvar_handle>(h);
        *count = 1;
        return MPI_SUCCESS;
    });
}
SHMPI_WEAK_ALIAS(T_pvar_handle_alloc);

int PMPI_T_pvar_handle_free(MPI_T_pvar_session session, MPI_T_pvar_handle* handle) {
    return pvar_call(session, handle, PvarOp::Free, nullptr);  // (MPI_T_PVAR_ALL_HANDLES: invalid here)
}
SHMPI_WEAK_ALIAS(T_pvar_handle_free);

int PMPI_T_pvar_start(MPI_T_pvar_session session, MPI_T_pvar_handle handle) {
    return pvar_call(session, &handle, PvarOp::Start, nullptr);
}
SHMPI_WEAK_ALIAS(T_pvar_start);

int PMPI_T_pvar_stop(MPI_T_pvar_session session, MPI_T_pvar_handle handle) {
    return pvar_call(session, &handle, PvarOp::Stop, nullptr);
}
SHMPI_WEAK_ALIAS(T_pvar_stop);

int PMPI_T_pvar_read(MPI_T_pvar_session session, MPI_T_pvar_handle handle, void* buf) {
    // The engine's queues belong to the thread inside MPI: under
    // MPI_THREAD_MULTIPLE, wait for the C boundary's lock, taken before
    // the interface's own (the order every path takes them in).
    const shmpi::shm::Gate::Hold hold;
    return pvar_call(session, &handle, PvarOp::Read, buf);
}
SHMPI_WEAK_ALIAS(T_pvar_read);

int PMPI_T_pvar_write(MPI_T_pvar_session session, MPI_T_pvar_handle handle, const void* buf) {
    return pvar_call(session, &handle, PvarOp::Write, const_cast<void*>(buf));
}
SHMPI_WEAK_ALIAS(T_pvar_write);

int PMPI_T_pvar_reset(MPI_T_pvar_session session, MPI_T_pvar_handle handle) {
    return pvar_call(session, &handle, PvarOp::Reset, nullptr);
}
SHMPI_WEAK_ALIAS(T_pvar_reset);

int PMPI_T_pvar_readreset(MPI_T_pvar_session session, MPI_T_pvar_handle handle, void* buf) {
    return pvar_call(session, &handle, PvarOp::ReadReset, buf);
}
SHMPI_WEAK_ALIAS(T_pvar_readreset);

// -------------------------------------------------------------- categories

int PMPI_T_category_get_num(int* num_cat) {
    return tool_call([&](State&) {
        if (num_cat == nullptr) return MPI_ERR_ARG;
        *num_cat = 1;
        return MPI_SUCCESS;
    });
}
SHMPI_WEAK_ALIAS(T_category_get_num);

int PMPI_T_category_get_info(int cat_index, char* name, int* name_len, char* desc, int* desc_len, int* num_cvars,
                             int* num_pvars, int* num_categories) {
    return tool_call([&](State&) {
        if (!is_cat(cat_index)) return MPI_T_ERR_INVALID_INDEX;
        put_string(kCategory, name, name_len);
        put_string(kCategoryText, desc, desc_len);
        put(num_cvars, kNumCvars);
        put(num_pvars, kNumPvars);
        put(num_categories, 0);
        return MPI_SUCCESS;
    });
}
SHMPI_WEAK_ALIAS(T_category_get_info);

int PMPI_T_category_get_index(const char* name, int* cat_index) {
    return tool_call([&](State&) {
        if (name == nullptr || cat_index == nullptr) return MPI_ERR_ARG;
        if (std::strcmp(name, kCategory) != 0) return MPI_T_ERR_INVALID_NAME;
        *cat_index = 0;
        return MPI_SUCCESS;
    });
}
SHMPI_WEAK_ALIAS(T_category_get_index);

int PMPI_T_category_get_cvars(int cat_index, int len, int indices[]) {
    return tool_call([&](State&) {
        if (!is_cat(cat_index)) return MPI_T_ERR_INVALID_INDEX;
        if (len < 0 || (len > 0 && indices == nullptr)) return MPI_ERR_ARG;
        for (int i = 0; i < std::min(len, kNumCvars); ++i) indices[i] = i;
        return MPI_SUCCESS;
    });
}
SHMPI_WEAK_ALIAS(T_category_get_cvars);

int PMPI_T_category_get_pvars(int cat_index, int len, int indices[]) {
    return tool_call([&](State&) {
        if (!is_cat(cat_index)) return MPI_T_ERR_INVALID_INDEX;
        if (len < 0 || (len > 0 && indices == nullptr)) return MPI_ERR_ARG;
        for (int i = 0; i < std::min(len, kNumPvars); ++i) indices[i] = i;
        return MPI_SUCCESS;
    });
}
SHMPI_WEAK_ALIAS(T_category_get_pvars);

int PMPI_T_category_get_categories(int cat_index, int len, int indices[]) {
    (void)indices;
    return tool_call([&](State&) {
        if (!is_cat(cat_index)) return MPI_T_ERR_INVALID_INDEX;
        return len < 0 ? MPI_ERR_ARG : MPI_SUCCESS;
    });
}
SHMPI_WEAK_ALIAS(T_category_get_categories);

int PMPI_T_category_changed(int* stamp) {
    return tool_call([&](State&) {
        if (stamp == nullptr) return MPI_ERR_ARG;
        *stamp = 0;  // the variables and categories never change
        return MPI_SUCCESS;
    });
}
SHMPI_WEAK_ALIAS(T_category_changed);
