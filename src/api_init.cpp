// C boundary: environment management (MPI_Init ... MPI_Finalize, MPI_Abort,
// timers, versions).
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fmt/format.h>

#include "api_comm.hpp"
#include "api_common.hpp"
#include "shm/segment.hpp"

using namespace shmpi;
using namespace shmpi::api;

namespace {

/// Under mpirun a rank's stdout is a pipe, which stdio buffers fully: what
/// the rank printed would be lost when the job is ended before an fflush
/// (a rank's crash, MPI_Abort, --timeout, SIGTERM).  Line-buffered, as on a
/// terminal, each complete line reaches mpirun when it is printed.  Runs
/// when the library loads, so before main() prints anything.
[[gnu::constructor]] void line_buffer_rank_stdout() {
    struct stat st {};
    if (std::getenv(shm::kEnvFd) != nullptr && fstat(STDOUT_FILENO, &st) == 0 && S_ISFIFO(st.st_mode)) {
        std::setvbuf(stdout, nullptr, _IOLBF, 0);
    }
}

/// Shared by MPI_Init and MPI_Init_thread.
int init(const char* fn, int required, int* provided) {
    // A second call is erroneous (MPI-3.1 8.7); it has no communicator, so
    // MPI_COMM_WORLD's handler decides (8.3): fatal by default, returned
    // under MPI_ERRORS_RETURN (MPI_ERR_OTHER, as MPICH).  After
    // MPI_Finalize there is no handler left to ask.
    if (phase() == Phase::Running) {
        return guard(MPI_COMM_WORLD, fn, [&] {
            throw MpiError(MPI_ERR_OTHER, fmt::format("{}: MPI is already initialized (MPI_Init and "
                                                      "MPI_Init_thread may be called once)",
                                                      fn));
        });
    }
    if (phase() == Phase::After) {
        std::fprintf(stderr, "shmpi: %s: called after MPI_Finalize\n", fn);
        exit_flushed(1);
    }
    const int level = std::clamp(required, int{MPI_THREAD_SINGLE}, int{MPI_THREAD_MULTIPLE});
    // MPI_Init waits for the other ranks: named, as guard() names the others.
    const CallName call_name(fn);
    try {
        set_runtime(new Runtime(level, required));
    } catch (const shm::ReportedInitFailure&) {
        exit_flushed(1);  // printed once for the job
    } catch (const std::exception& e) {
        shm::print_init_failure(e.what());
        exit_flushed(1);
    }
    // From here on every call holds the lock of MPI_THREAD_MULTIPLE (this
    // one's guard was made before, so it leaves the lock alone).
    if (level == MPI_THREAD_MULTIPLE) shm::Gate::turn_on();
    set_phase(Phase::Running);
    if (provided != nullptr) *provided = level;
    return MPI_SUCCESS;
}

/// A NULL output argument of a call that works before MPI_Init and after
/// MPI_Finalize too: reported through MPI_COMM_WORLD's error handler while
/// MPI runs (MPI-3.1 8.3: calls without a communicator use it), else only
/// returned, since there is no handler then.
int null_argument(const char* fn, const char* what) {
    if (phase() != Phase::Running) return MPI_ERR_ARG;
    return guard(MPI_COMM_WORLD, fn, [&] {
        throw MpiError(MPI_ERR_ARG, fmt::format("{}: {} is NULL", fn, what));
    });
}

}  // namespace

extern "C" {

int PMPI_Init(int*, char***) { return init("MPI_Init", MPI_THREAD_SINGLE, nullptr); }
SHMPI_WEAK_ALIAS(Init);

int PMPI_Init_thread(int*, char***, int required, int* provided) {
    return init("MPI_Init_thread", required, provided);
}
SHMPI_WEAK_ALIAS(Init_thread);

int PMPI_Query_thread(int* provided) {
    return guard(MPI_COMM_WORLD, "MPI_Query_thread", [&] {
        Runtime& rt = running("MPI_Query_thread");
        if (provided == nullptr) throw MpiError(MPI_ERR_ARG, "MPI_Query_thread: provided is NULL");
        *provided = rt.thread_level();
    });
}
SHMPI_WEAK_ALIAS(Query_thread);

int PMPI_Is_thread_main(int* flag) {
    return guard(MPI_COMM_WORLD, "MPI_Is_thread_main", [&] {
        Runtime& rt = running("MPI_Is_thread_main");
        if (flag == nullptr) throw MpiError(MPI_ERR_ARG, "MPI_Is_thread_main: flag is NULL");
        *flag = rt.is_main_thread() ? 1 : 0;
    });
}
SHMPI_WEAK_ALIAS(Is_thread_main);

int PMPI_Finalize(void) {
    Runtime& rt = running("MPI_Finalize");
    // MPI-3.1 8.7.1: MPI_COMM_SELF's attributes are deleted first, so that
    // libraries can clean up through their delete callbacks.  A failed
    // callback is reported once MPI is finalized: the other ranks wait for
    // this one in the closing barrier, and mpirun for its finalized state.
    const int rc = guard(MPI_COMM_WORLD, "MPI_Finalize", [&] {
        const std::exception_ptr failed = finalize_attributes();
        rt.finalize();
        if (failed != nullptr) std::rethrow_exception(failed);
    });
    set_phase(Phase::After);
    // The runtime stays mapped until the process exits: requests the program
    // leaked may still point into it.
    return rc;
}
SHMPI_WEAK_ALIAS(Finalize);

int PMPI_Initialized(int* flag) {
    if (flag == nullptr) return null_argument("MPI_Initialized", "flag");
    *flag = phase() != Phase::Before ? 1 : 0;
    return MPI_SUCCESS;
}
SHMPI_WEAK_ALIAS(Initialized);

int PMPI_Finalized(int* flag) {
    if (flag == nullptr) return null_argument("MPI_Finalized", "flag");
    *flag = phase() == Phase::After ? 1 : 0;
    return MPI_SUCCESS;
}
SHMPI_WEAK_ALIAS(Finalized);

int PMPI_Abort(MPI_Comm comm, int errorcode) {
    if (phase() != Phase::Running) {
        std::fprintf(stderr, "shmpi: MPI_Abort called with error code %d\n", errorcode);
        exit_flushed(errorcode & 0xff);
    }
    (void)comm;  // the whole job ends, whatever the communicator
    Runtime& rt = runtime();
    if (rt.transport().size() == 1) {
        std::fprintf(stderr, "shmpi: MPI_Abort called with error code %d\n", errorcode);
    }
    rt.transport().abort_job(errorcode, shm::kAbortCalled);
}
SHMPI_WEAK_ALIAS(Abort);

int PMPI_Get_processor_name(char* name, int* resultlen) {
    if (name == nullptr) return null_argument("MPI_Get_processor_name", "name");
    if (resultlen == nullptr) return null_argument("MPI_Get_processor_name", "resultlen");
    char host[MPI_MAX_PROCESSOR_NAME] = {};
    if (gethostname(host, sizeof host - 1) != 0) std::strcpy(host, "localhost");
    const std::size_t n = std::strlen(host);
    std::memcpy(name, host, n + 1);
    *resultlen = static_cast<int>(n);
    return MPI_SUCCESS;
}
SHMPI_WEAK_ALIAS(Get_processor_name);

int PMPI_Get_version(int* version, int* subversion) {
    if (version == nullptr) return null_argument("MPI_Get_version", "version");
    if (subversion == nullptr) return null_argument("MPI_Get_version", "subversion");
    *version = MPI_VERSION;
    *subversion = MPI_SUBVERSION;
    return MPI_SUCCESS;
}
SHMPI_WEAK_ALIAS(Get_version);

int PMPI_Get_library_version(char* version, int* resultlen) {
    if (version == nullptr) return null_argument("MPI_Get_library_version", "version");
    if (resultlen == nullptr) return null_argument("MPI_Get_library_version", "resultlen");
    const std::string v = fmt::format("shmpi {} (MPI {}.{}, shared memory on one machine)",
                                      SHMPI_VERSION_STRING, MPI_VERSION, MPI_SUBVERSION);
    std::memcpy(version, v.c_str(), v.size() + 1);
    *resultlen = static_cast<int>(v.size());
    return MPI_SUCCESS;
}
SHMPI_WEAK_ALIAS(Get_library_version);

double PMPI_Wtime(void) {
    struct timespec ts {};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}
SHMPI_WEAK_ALIAS(Wtime);

double PMPI_Wtick(void) {
    struct timespec ts {};
    clock_getres(CLOCK_MONOTONIC, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}
SHMPI_WEAK_ALIAS(Wtick);

}  // extern "C"
