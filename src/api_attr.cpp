// C boundary: attribute caching on communicators and datatypes, with the
// MPI-1 spellings (MPI_Keyval_create, MPI_Attr_put/get/delete), and the
// predefined attributes every communicator answers for.
#include <fmt/format.h>

#include <climits>

#include "api_comm.hpp"
#include "api_common.hpp"
#include "api_rma.hpp"
#include "attributes.hpp"
#include "runtime.hpp"

using namespace shmpi;
using namespace shmpi::api;

namespace {

/// The name of a predefined (communicator) keyval; nullptr for others.
const char* predefined_name(int k) {
    switch (k) {
    case MPI_TAG_UB: return "MPI_TAG_UB";
    case MPI_HOST: return "MPI_HOST";
    case MPI_IO: return "MPI_IO";
    case MPI_WTIME_IS_GLOBAL: return "MPI_WTIME_IS_GLOBAL";
    case MPI_APPNUM: return "MPI_APPNUM";
    case MPI_UNIVERSE_SIZE: return "MPI_UNIVERSE_SIZE";
    case MPI_LASTUSEDCODE: return "MPI_LASTUSEDCODE";
    default: return nullptr;
    }
}

bool predefined_key(int k) { return predefined_name(k) != nullptr; }

const char* kind_name(attr::Kind k) {
    return k == attr::Kind::Comm ? "communicator" : k == attr::Kind::Type ? "datatype" : "window";
}

/// The user keyval `id` of `kind`; MPI_ERR_KEYVAL naming `fn` otherwise.
/// With `freed_ok` (getting and deleting attributes), also a keyval the
/// user freed while attributes still use it (MPI-3.1 6.7.2).
attr::Keyval& keyval_of(int id, attr::Kind kind, const char* fn, bool freed_ok = false) {
    if (const char* name = predefined_name(id)) {
        // (Getting a communicator's predefined attribute does not come here.)
        if (kind != attr::Kind::Comm) {
            throw MpiError(MPI_ERR_KEYVAL, fmt::format("{}: keyval {} ({}) is a communicator attribute, not a {} one",
                                                       fn, id, name, kind_name(kind)));
        }
        throw MpiError(MPI_ERR_KEYVAL, fmt::format("{}: keyval {} ({}) is predefined: it cannot be set, deleted "
                                                   "or freed",
                                                   fn, id, name));
    }
    if (id == MPI_KEYVAL_INVALID) throw MpiError(MPI_ERR_KEYVAL, fmt::format("{}: keyval is MPI_KEYVAL_INVALID", fn));
    attr::Keyval* k = attr::find_keyval(id);
    if (k == nullptr) {
        throw MpiError(MPI_ERR_KEYVAL, fmt::format("{}: keyval {} is not a keyval (never made, or freed)", fn, id));
    }
    if (k->freed && !freed_ok) {
        throw MpiError(MPI_ERR_KEYVAL, fmt::format("{}: keyval {} has been freed", fn, id));
    }
    if (k->kind != kind) {
        throw MpiError(MPI_ERR_KEYVAL, fmt::format("{}: keyval {} was made for {}s, not {}s", fn, id,
                                                   kind_name(k->kind), kind_name(kind)));
    }
    return *k;
}

/// The values behind the predefined attributes (MPI hands out pointers).
struct Predefined {
    int tag_ub = INT_MAX;              // any non-negative int is a tag
    int host = MPI_PROC_NULL;          // no host rank
    int io = MPI_ANY_SOURCE;           // every rank may do I/O
    int wtime_is_global = 1;           // MPI_Wtime reads CLOCK_MONOTONIC, one clock per machine
    int appnum = 0;                    // which of mpirun's programs (MPMD), from the rank's slot
    int universe_size = 1;             // filled in from the job size
    int last_used_code = MPI_ERR_LASTCODE;  // grows with MPI_Add_error_class/_code
};

/// Looks up a predefined attribute; returns nullptr for other keys.
int* predefined_value(int key) {
    static Predefined p;
    Runtime& rt = runtime();
    p.universe_size = rt.world().size();
    p.appnum = static_cast<int>(rt.transport().appnum());
    p.last_used_code = last_used_code();
    switch (key) {
    case MPI_TAG_UB: return &p.tag_ub;
    case MPI_HOST: return &p.host;
    case MPI_IO: return &p.io;
    case MPI_WTIME_IS_GLOBAL: return &p.wtime_is_global;
    case MPI_APPNUM: return &p.appnum;
    case MPI_UNIVERSE_SIZE: return &p.universe_size;
    case MPI_LASTUSEDCODE: return &p.last_used_code;
    default: return nullptr;
    }
}

int create_comm_keyval(MPI_Comm_copy_attr_function* copy, MPI_Comm_delete_attr_function* del, int* keyval,
                       void* extra, const char* fn) {
    return guard(MPI_COMM_WORLD, fn, [&] {
        running(fn);
        need(keyval, "keyval", fn);
        attr::Keyval k;
        k.kind = attr::Kind::Comm;
        k.comm_copy = copy;
        k.comm_delete = del;
        k.extra_state = extra;
        *keyval = attr::create_keyval(k);
    });
}

int free_keyval(int* keyval, attr::Kind kind, const char* fn) {
    return guard(MPI_COMM_WORLD, fn, [&] {
        running(fn);
        need(keyval, "keyval", fn);
        attr::free_keyval(keyval_of(*keyval, kind, fn));
        *keyval = MPI_KEYVAL_INVALID;
    });
}

int comm_set(MPI_Comm comm, int keyval, void* value, const char* fn) {
    return guard(comm, fn, [&] {
        Communicator& c = comm_of(comm, fn);
        c.attributes().set(handle_of(c), keyval_of(keyval, attr::Kind::Comm, fn), value, fn);
    });
}

int comm_get(MPI_Comm comm, int keyval, void* value, int* flag, const char* fn) {
    return guard(comm, fn, [&] {
        Communicator& c = comm_of(comm, fn);
        need(value, "attribute_val", fn);
        need(flag, "flag", fn);
        // The predefined attributes: every communicator answers them.
        if (predefined_key(keyval)) {
            int* p = predefined_value(keyval);
            *flag = p != nullptr ? 1 : 0;
            if (p != nullptr) *static_cast<void**>(value) = p;
            return;
        }
        *flag = c.attributes().get(keyval_of(keyval, attr::Kind::Comm, fn, true), static_cast<void**>(value))
                    ? 1
                    : 0;
    });
}

int comm_delete(MPI_Comm comm, int keyval, const char* fn) {
    return guard(comm, fn, [&] {
        Communicator& c = comm_of(comm, fn);
        // Deleting an attribute that is not set is allowed and does nothing.
        c.attributes().erase(handle_of(c), keyval_of(keyval, attr::Kind::Comm, fn, true), fn);
    });
}

/// A datatype handle for attribute calls: any live type, committed or not,
/// predefined ones included.
const dtype::Datatype& attr_type(MPI_Datatype handle, const char* fn) {
    running(fn);
    return any_type(handle, fn);
}

}  // namespace

std::exception_ptr shmpi::api::finalize_attributes() {
    const char* fn = "MPI_Finalize";
    Runtime& rt = runtime();
    const std::exception_ptr self_failed = rt.self().attributes().clear_all(MPI_COMM_SELF, fn);
    const std::exception_ptr world_failed = rt.world().attributes().clear_all(MPI_COMM_WORLD, fn);
    return self_failed != nullptr ? self_failed : world_failed;
}

extern "C" {

// ---------------------------------------------------------- communicators

int PMPI_Comm_create_keyval(MPI_Comm_copy_attr_function* comm_copy_attr_fn,
                            MPI_Comm_delete_attr_function* comm_delete_attr_fn, int* comm_keyval,
                            void* extra_state) {
    return create_comm_keyval(comm_copy_attr_fn, comm_delete_attr_fn, comm_keyval, extra_state,
                              "MPI_Comm_create_keyval");
}
SHMPI_WEAK_ALIAS(Comm_create_keyval);

int PMPI_Comm_free_keyval(int* comm_keyval) {
    return free_keyval(comm_keyval, attr::Kind::Comm, "MPI_Comm_free_keyval");
}
SHMPI_WEAK_ALIAS(Comm_free_keyval);

int PMPI_Comm_set_attr(MPI_Comm comm, int comm_keyval, void* attribute_val) {
    return comm_set(comm, comm_keyval, attribute_val, "MPI_Comm_set_attr");
}
SHMPI_WEAK_ALIAS(Comm_set_attr);

int PMPI_Comm_get_attr(MPI_Comm comm, int comm_keyval, void* attribute_val, int* flag) {
    return comm_get(comm, comm_keyval, attribute_val, flag, "MPI_Comm_get_attr");
}
SHMPI_WEAK_ALIAS(Comm_get_attr);

int PMPI_Comm_delete_attr(MPI_Comm comm, int comm_keyval) {
    return comm_delete(comm, comm_keyval, "MPI_Comm_delete_attr");
}
SHMPI_WEAK_ALIAS(Comm_delete_attr);

// MPI-1 spellings: the same operations (MPI_Copy_function has the type of
// MPI_Comm_copy_attr_function).

int PMPI_Keyval_create(MPI_Copy_function* copy_fn, MPI_Delete_function* delete_fn, int* keyval,
                       void* extra_state) {
    return create_comm_keyval(copy_fn, delete_fn, keyval, extra_state, "MPI_Keyval_create");
}
SHMPI_WEAK_ALIAS(Keyval_create);

int PMPI_Keyval_free(int* keyval) { return free_keyval(keyval, attr::Kind::Comm, "MPI_Keyval_free"); }
SHMPI_WEAK_ALIAS(Keyval_free);

int PMPI_Attr_put(MPI_Comm comm, int keyval, void* attribute_val) {
    return comm_set(comm, keyval, attribute_val, "MPI_Attr_put");
}
SHMPI_WEAK_ALIAS(Attr_put);

int PMPI_Attr_get(MPI_Comm comm, int keyval, void* attribute_val, int* flag) {
    return comm_get(comm, keyval, attribute_val, flag, "MPI_Attr_get");
}
SHMPI_WEAK_ALIAS(Attr_get);

int PMPI_Attr_delete(MPI_Comm comm, int keyval) { return comm_delete(comm, keyval, "MPI_Attr_delete"); }
SHMPI_WEAK_ALIAS(Attr_delete);

// -------------------------------------------------------------- datatypes

int PMPI_Type_create_keyval(MPI_Type_copy_attr_function* type_copy_attr_fn,
                            MPI_Type_delete_attr_function* type_delete_attr_fn, int* type_keyval,
                            void* extra_state) {
    const char* fn = "MPI_Type_create_keyval";
    return guard(MPI_COMM_WORLD, fn, [&] {
        running(fn);
        need(type_keyval, "type_keyval", fn);
        attr::Keyval k;
        k.kind = attr::Kind::Type;
        k.type_copy = type_copy_attr_fn;
        k.type_delete = type_delete_attr_fn;
        k.extra_state = extra_state;
        *type_keyval = attr::create_keyval(k);
    });
}
SHMPI_WEAK_ALIAS(Type_create_keyval);

int PMPI_Type_free_keyval(int* type_keyval) {
    return free_keyval(type_keyval, attr::Kind::Type, "MPI_Type_free_keyval");
}
SHMPI_WEAK_ALIAS(Type_free_keyval);

int PMPI_Type_set_attr(MPI_Datatype datatype, int type_keyval, void* attribute_val) {
    const char* fn = "MPI_Type_set_attr";
    return guard(MPI_COMM_WORLD, fn, [&] {
        const dtype::Datatype& t = attr_type(datatype, fn);
        t.attributes.set(datatype, keyval_of(type_keyval, attr::Kind::Type, fn), attribute_val, fn);
    });
}
SHMPI_WEAK_ALIAS(Type_set_attr);

int PMPI_Type_get_attr(MPI_Datatype datatype, int type_keyval, void* attribute_val, int* flag) {
    const char* fn = "MPI_Type_get_attr";
    return guard(MPI_COMM_WORLD, fn, [&] {
        const dtype::Datatype& t = attr_type(datatype, fn);
        need(attribute_val, "attribute_val", fn);
        need(flag, "flag", fn);
        attr::Keyval& k = keyval_of(type_keyval, attr::Kind::Type, fn, true);
        *flag = t.attributes.get(k, static_cast<void**>(attribute_val)) ? 1 : 0;
    });
}
SHMPI_WEAK_ALIAS(Type_get_attr);

int PMPI_Type_delete_attr(MPI_Datatype datatype, int type_keyval) {
    const char* fn = "MPI_Type_delete_attr";
    return guard(MPI_COMM_WORLD, fn, [&] {
        const dtype::Datatype& t = attr_type(datatype, fn);
        t.attributes.erase(datatype, keyval_of(type_keyval, attr::Kind::Type, fn, true), fn);
    });
}
SHMPI_WEAK_ALIAS(Type_delete_attr);

// Window attributes: user keyvals, and the five predefined ones
// (MPI_WIN_BASE ... MPI_WIN_MODEL, MPI-3.1 11.2.6), which every window
// answers and nobody may set or delete.

int PMPI_Win_create_keyval(MPI_Win_copy_attr_function* win_copy_attr_fn,
                           MPI_Win_delete_attr_function* win_delete_attr_fn, int* win_keyval, void* extra_state) {
    const char* fn = "MPI_Win_create_keyval";
    return guard(MPI_COMM_WORLD, fn, [&] {
        running(fn);
        need(win_keyval, "win_keyval", fn);
        (void)win_copy_attr_fn;  // windows are never copied
        attr::Keyval k;
        k.kind = attr::Kind::Win;
        k.win_delete = win_delete_attr_fn;
        k.extra_state = extra_state;
        *win_keyval = attr::create_keyval(k);
    });
}
SHMPI_WEAK_ALIAS(Win_create_keyval);

int PMPI_Win_free_keyval(int* win_keyval) {
    return free_keyval(win_keyval, attr::Kind::Win, "MPI_Win_free_keyval");
}
SHMPI_WEAK_ALIAS(Win_free_keyval);

namespace {

bool win_predefined_key(int k) { return k >= MPI_WIN_BASE && k <= MPI_WIN_MODEL; }

void refuse_predefined(int k, const char* fn) {
    if (win_predefined_key(k)) {
        throw MpiError(MPI_ERR_KEYVAL, fmt::format("{}: keyval {} is a predefined window attribute: it cannot be "
                                                   "set or deleted", fn, k));
    }
}

}  // namespace

int PMPI_Win_set_attr(MPI_Win win, int win_keyval, void* attribute_val) {
    const char* fn = "MPI_Win_set_attr";
    return win_guard(win, fn, [&] {
        rma::Window& w = win_of(win, fn);
        refuse_predefined(win_keyval, fn);
        w.attributes.set(win, keyval_of(win_keyval, attr::Kind::Win, fn), attribute_val, fn);
    });
}
SHMPI_WEAK_ALIAS(Win_set_attr);

int PMPI_Win_get_attr(MPI_Win win, int win_keyval, void* attribute_val, int* flag) {
    const char* fn = "MPI_Win_get_attr";
    return win_guard(win, fn, [&] {
        rma::Window& w = win_of(win, fn);
        need(attribute_val, "attribute_val", fn);
        need(flag, "flag", fn);
        if (win_predefined_key(win_keyval)) {
            // MPI_WIN_BASE's value is the base itself; the others point at
            // values the window keeps.
            *static_cast<void**>(attribute_val) = w.predefined_attribute(win_keyval);
            *flag = 1;
            return;
        }
        attr::Keyval& k = keyval_of(win_keyval, attr::Kind::Win, fn, true);
        *flag = w.attributes.get(k, static_cast<void**>(attribute_val)) ? 1 : 0;
    });
}
SHMPI_WEAK_ALIAS(Win_get_attr);

int PMPI_Win_delete_attr(MPI_Win win, int win_keyval) {
    const char* fn = "MPI_Win_delete_attr";
    return win_guard(win, fn, [&] {
        rma::Window& w = win_of(win, fn);
        refuse_predefined(win_keyval, fn);
        w.attributes.erase(win, keyval_of(win_keyval, attr::Kind::Win, fn, true), fn);
    });
}
SHMPI_WEAK_ALIAS(Win_delete_attr);

}  // extern "C"
