// C boundary helpers for the calls on a window (api_rma.cpp, and the
// window attribute calls of api_attr.cpp).
#pragma once

#include <mpi.h>

#include <new>
#include <string>
#include <utility>

#include "api_common.hpp"
#include "rma/window.hpp"

namespace shmpi::api {

/// Translates a window handle; throws MPI_ERR_WIN naming `fn`.
rma::Window& win_of(MPI_Win handle, const char* fn);

/// raise() for a window: its error handler takes the error (MPI_COMM_WORLD's
/// when `win` is not a window).
int raise_win(MPI_Win win, const MpiError& e, int code = -1);

/// guard() for the calls on a window: errors go to its handler.
template <class Body>
int win_guard(MPI_Win win, const char* fn, Body&& body) {
    return object_guard(fn, [win](const MpiError& e, int code) { return raise_win(win, e, code); },
                        std::forward<Body>(body));
}

}  // namespace shmpi::api
