// mpirun (also installed as mpiexec): starts an shmpi job on this machine.
//
// Steps, in order (each one is kept small so that start-up costs little):
//   1. parse the command line (launcher_args.hpp);
//   2. make sure fds 0-2 are open, so no pipe lands on them;
//   3. ignore SIGPIPE (a closed stdout shows up as EPIPE), put SIGCHLD at its
//      default, block SIGCHLD/SIGINT/SIGTERM/SIGHUP and read them from a
//      signalfd; a signal that arrives from here on is handled by the loop;
//   4. create the segment and unlink its name at once: from then on nothing
//      in /dev/shm can outlive mpirun, whatever happens;
//   5. fork the ranks (spawn.hpp) and supervise them (job.hpp).
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fmt/format.h>
#include <string>
#include <vector>

#include "job.hpp"
#include "launcher_args.hpp"
#include "shm/segment.hpp"
#include "spawn.hpp"

#ifndef SHMPI_VERSION
#error "SHMPI_VERSION must be defined by the build (meson.project_version())"
#endif

namespace {

using namespace shmpi;
using namespace shmpi::launcher;

/// Opens /dev/null on any of fds 0-2 that is closed.
void open_standard_fds() {
    for (int fd = 0; fd <= 2; ++fd) {
        if (fcntl(fd, F_GETFD) < 0 && errno == EBADF) {
            const int n = open("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY);
            if (n >= 0 && n != fd) {
                dup2(n, fd);
                close(n);
            }
        }
    }
}

/// Raises the soft descriptor limit if the job's pipes (two kept per rank)
/// would not fit.  The ranks get the original limit back.
void make_room_for_pipes(std::uint32_t nranks) {
    rlimit lim{};
    if (getrlimit(RLIMIT_NOFILE, &lim) != 0) return;
    const rlim_t need = 2 * rlim_t{nranks} + 64;
    if (lim.rlim_cur != RLIM_INFINITY && lim.rlim_cur < need) {
        lim.rlim_cur = lim.rlim_max == RLIM_INFINITY || lim.rlim_max > need ? need : lim.rlim_max;
        setrlimit(RLIMIT_NOFILE, &lim);
    }
}

}  // namespace

int main(int argc, char** argv) {
    // 1.
    const ParsedCommandLine cl =
        parse_launcher_args(std::vector<std::string>(argv, argv + argc), SHMPI_VERSION);
    switch (cl.action) {
        case ParsedCommandLine::Action::kHelp:
        case ParsedCommandLine::Action::kVersion:
            fmt::print("{}\n", cl.message);
            return 0;
        case ParsedCommandLine::Action::kError:
            fmt::print(stderr, "{}\n", cl.message);
            return kUsageError;
        case ParsedCommandLine::Action::kRun:
            break;
    }
    const LaunchArgs& args = cl.args;

    // 2.
    open_standard_fds();

    // 3.
    InheritedState inherited;
    getrlimit(RLIMIT_NOFILE, &inherited.nofile);
    make_room_for_pipes(args.nranks);
    struct sigaction ignore {};
    ignore.sa_handler = SIG_IGN;
    struct sigaction dfl {};
    dfl.sa_handler = SIG_DFL;
    sigaction(SIGPIPE, &ignore, &inherited.sigpipe);
    sigaction(SIGCHLD, &dfl, &inherited.sigchld);
    sigset_t handled;
    sigemptyset(&handled);
    for (int sig : {SIGCHLD, SIGINT, SIGTERM, SIGHUP}) sigaddset(&handled, sig);
    sigprocmask(SIG_BLOCK, &handled, nullptr);
    const int signal_fd = signalfd(-1, &handled, SFD_CLOEXEC | SFD_NONBLOCK);
    if (signal_fd < 0) {
        fmt::print(stderr, "shmpi: mpirun: signalfd: {}\n", std::strerror(errno));
        return 1;
    }

    try {
        // 4.
        shm::Segment seg = shm::Segment::create(shm::Geometry::for_ranks(args.nranks), getpid());
        seg.unlink();

        // 5.
        Job job(args, seg, start_ranks(args, seg, inherited), signal_fd);
        return job.run();
    } catch (const shm::SegmentError& e) {
        fmt::print(stderr, "{}\n", e.what());
        return 1;
    } catch (const LaunchError& e) {
        fmt::print(stderr, "{}\n", e.what());
        return 1;
    }
}
