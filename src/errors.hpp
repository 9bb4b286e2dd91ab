// MPI errors inside the library: one exception type carrying the MPI error
// class and a message that names the function, the argument and the bad
// value.  It is thrown below the C boundary and caught exactly once, in the
// shim, which turns it into an error code through the communicator's error
// handler.
#pragma once

#include <fmt/format.h>
#include <mpi.h>

#include <stdexcept>
#include <string>
#include <utility>

namespace shmpi {

class MpiError : public std::runtime_error {
public:
    /// `error_class` is one of the MPI_ERR_* classes; `message` is complete
    /// ("MPI_Send: invalid rank 7 (communicator size 4)").
    MpiError(int error_class, std::string message)
        : std::runtime_error(std::move(message)), class_(error_class) {}
    /// An error whose code is given: a user callback's own code (of a
    /// class the program added, say), which the MPI call then returns as
    /// it is.  `message` is what a fatal error handler prints.
    MpiError(int error_class, std::string message, int code)
        : std::runtime_error(std::move(message)), class_(error_class), code_(code) {}
    int error_class() const { return class_; }
    /// The code to return, or -1: one made from the class and the message.
    int code() const { return code_; }

private:
    int class_;
    int code_ = -1;
};

/// Throws MpiError(error_class, the message formatted from `f` and `args`),
/// out of line and marked cold, so that a check on a hot path compiles to its
/// test and a call: a small collective's argument checks took about a third
/// of its 700 instructions while each held its own fmt::format and throw
/// (callgrind, 2 ranks, 8 B MPI_Reduce; docs/BENCHMARKS.md).
template <class... Args>
[[noreturn, gnu::cold, gnu::noinline]] void fail(int error_class, fmt::format_string<Args...> f, Args&&... args) {
    throw MpiError(error_class, fmt::format(f, std::forward<Args>(args)...));
}

/// Returns an error code for `error_class` that remembers `message`:
/// MPI_Error_class() maps it back to the class and MPI_Error_string() gives the
/// message.  Each class keeps its last 254 different messages: a code
/// shows its own message until 253 more errors of its class were made, then
/// that of a newer error of its class that took its slot (error codes must
/// stay below MPI_ERR_LASTCODE, 16383, so there is no room to tell them
/// apart).  A class that is not predefined comes back as it is.
int make_error_code(int error_class, const std::string& message);

/// The class of a code made by make_error_code() (or a class itself); -1 if
/// `code` is neither.
int error_class_of(int code);

/// The text for a code: its own message if still remembered, else the class's
/// description; nullptr if `code` is not valid.
std::string error_text(int code);

/// MPI_Add_error_class: a new class, numbered after MPI_ERR_LASTCODE (the
/// codes made by make_error_code() stay below it).
int add_error_class();

/// MPI_Add_error_code: a new code of `error_class` (predefined or added);
/// -1 if `error_class` is neither.
int add_error_code(int error_class);

/// MPI_Add_error_string: the text of an added class or code; false if
/// `code` is not one.
bool set_error_string(int code, const std::string& text);

/// MPI_LASTUSEDCODE: the largest error class so far (MPI-3.1 8.5), added
/// ones included.
int last_used_code();

}  // namespace shmpi
