// C boundary: error handlers and error codes.
#include <cstring>
#include <fmt/format.h>

#include "api_common.hpp"

using namespace shmpi;
using namespace shmpi::api;

namespace {

bool predefined_handler(MPI_Errhandler e) {
    return e == MPI_ERRORS_ARE_FATAL || e == MPI_ERRORS_RETURN || e == MPI_ERRORS_ABORT;
}

}  // namespace

namespace {

int create_errhandler(MPI_Comm_errhandler_function* function, MPI_Errhandler* errhandler, const char* fn) {
    return guard(MPI_COMM_WORLD, fn, [&] {
        if (function == nullptr) throw MpiError(MPI_ERR_ARG, fmt::format("{}: function is NULL", fn));
        need(errhandler, "errhandler", fn);
        auto* u = new UserErrhandler();
        u->fn = function;
        *errhandler = reinterpret_cast<MPI_Errhandler>(u);
    });
}

/// An error handler argument for a message: MPI_ERRHANDLER_NULL by name,
/// anything else as its value.
std::string errhandler_text(MPI_Errhandler h) {
    if (h == MPI_ERRHANDLER_NULL) return "MPI_ERRHANDLER_NULL";
    return fmt::format("{:#x}", reinterpret_cast<std::uintptr_t>(h));
}

/// MPI_Comm_set_errhandler and its MPI-1 name MPI_Errhandler_set; `fn` is
/// the name the program called, for the messages.
int set_comm_errhandler(MPI_Comm comm, MPI_Errhandler errhandler, const char* fn) {
    return guard(comm, fn, [&] {
        Communicator& c = comm_of(comm, fn);
        if (!handler_fits(errhandler, HandlerKind::Comm)) {
            throw MpiError(MPI_ERR_ARG, fmt::format("{}: invalid error handler {}", fn, errhandler_text(errhandler)));
        }
        retain(errhandler);
        release(c.errhandler());
        c.set_errhandler(errhandler);
    });
}

/// MPI_Comm_get_errhandler and its MPI-1 name MPI_Errhandler_get.
int get_comm_errhandler(MPI_Comm comm, MPI_Errhandler* errhandler, const char* fn) {
    return guard(comm, fn, [&] {
        Communicator& c = comm_of(comm, fn);
        if (errhandler == nullptr) throw MpiError(MPI_ERR_ARG, fmt::format("{}: errhandler is NULL", fn));
        *errhandler = c.errhandler();
        retain(*errhandler);  // the caller frees it with MPI_Errhandler_free
    });
}

}  // namespace

namespace shmpi::api {

bool handler_fits(MPI_Errhandler e, HandlerKind kind) {
    if (predefined_handler(e)) return true;
    const UserErrhandler* u = user_errhandler(e);
    if (u == nullptr) return false;
    switch (kind) {
    case HandlerKind::Comm:
        return u->fn != nullptr;
    case HandlerKind::Win:
        return u->win_fn != nullptr;
    case HandlerKind::File:
        return u->file_fn != nullptr;
    }
    return false;
}

void set_errhandler_slot(MPI_Errhandler& slot, MPI_Errhandler e, HandlerKind kind, const char* fn) {
    if (!handler_fits(e, kind)) {
        const bool win = kind == HandlerKind::Win;
        fail(MPI_ERR_ARG, "{}: errhandler {:#x} is not a {} error handler ({}'s, or a predefined one)", fn,
             reinterpret_cast<std::uintptr_t>(e), win ? "window" : kind == HandlerKind::File ? "file" : "communicator",
             win ? "MPI_Win_create_errhandler" : kind == HandlerKind::File ? "MPI_File_create_errhandler"
                                                                          : "MPI_Comm_create_errhandler");
    }
    retain(e);
    release(slot);
    slot = e;
}

MpiError called_error(int errorcode, const char* fn) {
    const int cls = error_class_of(errorcode);
    std::string text = error_text(errorcode);
    if (cls < 0) {
        text = fmt::format("error code {} (not a valid error code)", errorcode);
    } else if (text.empty()) {  // an added class or code without MPI_Add_error_string
        text = cls == errorcode ? fmt::format("error class {} (no text set)", cls)
                                : fmt::format("error code {} of class {} (no text set)", errorcode, cls);
    }
    return MpiError(cls < 0 || cls == MPI_ERR_LASTCODE ? MPI_ERR_UNKNOWN : cls, fmt::format("{}: {}", fn, text));
}

}  // namespace shmpi::api

extern "C" {

int PMPI_Comm_set_errhandler(MPI_Comm comm, MPI_Errhandler errhandler) {
    return set_comm_errhandler(comm, errhandler, "MPI_Comm_set_errhandler");
}
SHMPI_WEAK_ALIAS(Comm_set_errhandler);

int PMPI_Comm_get_errhandler(MPI_Comm comm, MPI_Errhandler* errhandler) {
    return get_comm_errhandler(comm, errhandler, "MPI_Comm_get_errhandler");
}
SHMPI_WEAK_ALIAS(Comm_get_errhandler);

int PMPI_Errhandler_set(MPI_Comm comm, MPI_Errhandler errhandler) {
    return set_comm_errhandler(comm, errhandler, "MPI_Errhandler_set");
}
SHMPI_WEAK_ALIAS(Errhandler_set);

int PMPI_Errhandler_get(MPI_Comm comm, MPI_Errhandler* errhandler) {
    return get_comm_errhandler(comm, errhandler, "MPI_Errhandler_get");
}
SHMPI_WEAK_ALIAS(Errhandler_get);

int PMPI_Errhandler_free(MPI_Errhandler* errhandler) {
    const char* fn = "MPI_Errhandler_free";
    return guard(MPI_COMM_WORLD, fn, [&] {
        if (errhandler == nullptr) throw MpiError(MPI_ERR_ARG, fmt::format("{}: errhandler is NULL", fn));
        if (!predefined_handler(*errhandler) && user_errhandler(*errhandler) == nullptr) {  // any kind
            throw MpiError(MPI_ERR_ARG, fmt::format("{}: invalid error handler {}", fn, errhandler_text(*errhandler)));
        }
        // Drops the caller's reference; communicators and windows keep theirs.
        release(*errhandler);
        *errhandler = MPI_ERRHANDLER_NULL;
    });
}
SHMPI_WEAK_ALIAS(Errhandler_free);

int PMPI_Comm_create_errhandler(MPI_Comm_errhandler_function* function, MPI_Errhandler* errhandler) {
    return create_errhandler(function, errhandler, "MPI_Comm_create_errhandler");
}
SHMPI_WEAK_ALIAS(Comm_create_errhandler);

// The MPI-1 spelling; MPI_Handler_function has the same type.
int PMPI_Errhandler_create(MPI_Handler_function* function, MPI_Errhandler* errhandler) {
    return create_errhandler(function, errhandler, "MPI_Errhandler_create");
}
SHMPI_WEAK_ALIAS(Errhandler_create);

int PMPI_Comm_call_errhandler(MPI_Comm comm, int errorcode) {
    const char* fn = "MPI_Comm_call_errhandler";
    return guard(comm, fn, [&] {
        comm_of(comm, fn);
        // The handler sees the code as given; MPI-3.1 has this call return
        // MPI_SUCCESS once the handler returns.
        raise(comm, called_error(errorcode, fn), errorcode);
    });
}
SHMPI_WEAK_ALIAS(Comm_call_errhandler);

int PMPI_Error_class(int errorcode, int* errorclass) {
    const char* fn = "MPI_Error_class";
    return guard(MPI_COMM_WORLD, fn, [&] {
        if (errorclass == nullptr) throw MpiError(MPI_ERR_ARG, "MPI_Error_class: errorclass is NULL");
        const int cls = error_class_of(errorcode);
        if (cls < 0) throw MpiError(MPI_ERR_ARG, fmt::format("{}: invalid error code {}", fn, errorcode));
        *errorclass = cls;
    });
}
SHMPI_WEAK_ALIAS(Error_class);

int PMPI_Error_string(int errorcode, char* string, int* resultlen) {
    const char* fn = "MPI_Error_string";
    return guard(MPI_COMM_WORLD, fn, [&] {
        need(string, "string", fn);
        need(resultlen, "resultlen", fn);
        if (error_class_of(errorcode) < 0) {
            throw MpiError(MPI_ERR_ARG, fmt::format("{}: invalid error code {}", fn, errorcode));
        }
        // An added class or code without MPI_Add_error_string has "".
        std::string text = error_text(errorcode);
        if (text.size() >= MPI_MAX_ERROR_STRING) text.resize(MPI_MAX_ERROR_STRING - 1);
        std::memcpy(string, text.c_str(), text.size() + 1);
        *resultlen = static_cast<int>(text.size());
    });
}
SHMPI_WEAK_ALIAS(Error_string);

// ---- classes, codes and strings the program adds (MPI-3.1 8.5) ----

int PMPI_Add_error_class(int* errorclass) {
    const char* fn = "MPI_Add_error_class";
    return guard(MPI_COMM_WORLD, fn, [&] {
        running(fn);
        if (errorclass == nullptr) throw MpiError(MPI_ERR_ARG, fmt::format("{}: errorclass is NULL", fn));
        *errorclass = add_error_class();
    });
}
SHMPI_WEAK_ALIAS(Add_error_class);

int PMPI_Add_error_code(int errorclass, int* errorcode) {
    const char* fn = "MPI_Add_error_code";
    return guard(MPI_COMM_WORLD, fn, [&] {
        running(fn);
        if (errorcode == nullptr) throw MpiError(MPI_ERR_ARG, fmt::format("{}: errorcode is NULL", fn));
        const int code = add_error_code(errorclass);
        if (code < 0) {
            throw MpiError(MPI_ERR_ARG, fmt::format("{}: errorclass {} is not an error class (predefined, other "
                                                    "than MPI_SUCCESS, or from MPI_Add_error_class)",
                                                    fn, errorclass));
        }
        *errorcode = code;
    });
}
SHMPI_WEAK_ALIAS(Add_error_code);

int PMPI_Add_error_string(int errorcode, const char* string) {
    const char* fn = "MPI_Add_error_string";
    return guard(MPI_COMM_WORLD, fn, [&] {
        running(fn);
        if (string == nullptr) throw MpiError(MPI_ERR_ARG, fmt::format("{}: string is NULL", fn));
        const std::size_t n = std::strlen(string);
        if (n >= MPI_MAX_ERROR_STRING) {
            throw MpiError(MPI_ERR_ARG, fmt::format("{}: string of {} characters is longer than {} "
                                                    "(MPI_MAX_ERROR_STRING counts the NUL)",
                                                    fn, n, MPI_MAX_ERROR_STRING - 1));
        }
        if (!set_error_string(errorcode, std::string(string, n))) {
            throw MpiError(MPI_ERR_ARG, fmt::format("{}: {} is not a class or code from MPI_Add_error_class or "
                                                    "MPI_Add_error_code (predefined ones keep their text)",
                                                    fn, errorcode));
        }
    });
}
SHMPI_WEAK_ALIAS(Add_error_string);

}  // extern "C"
