// mpirun (also installed as mpiexec): starts an shmpi job on this machine.
//
// Steps, in order (each one is kept small so that start-up costs little):
//   1. parse the command line (launcher_args.hpp), load the topology (this
//      machine or SHMPI_TOPOLOGY) and compute the rank map (src/place/);
//      print the notes and, with --report-bindings, the report; decide
//      whether the ranks' memcpy avoids `rep movsb` (copy_probe.hpp);
//   2. make sure fds 0-2 are open, so no pipe lands on them;
//   3. ignore SIGPIPE (a closed stdout shows up as EPIPE), put SIGCHLD at its
//      default, block SIGCHLD/SIGINT/SIGTERM/SIGHUP and the SIGUSR1/SIGUSR2
//      that go on to the ranks, and read them from a signalfd; a signal
//      that arrives from here on is handled by the loop.  Of SIGINT,
//      SIGTERM and SIGHUP, one that mpirun was started with ignored (nohup,
//      a script's `cmd &`) is left ignored, as make and sort leave it;
//   4. create the segment, its name unlinked as soon as the object is open
//      (before it is sized): from then on nothing in /dev/shm can outlive
//      mpirun, whatever happens; write each rank's
//      Place into its slot and bind each rank's receiving memory to its
//      NUMA node (src/place/membind.hpp);
//   5. fork the ranks, each bound as the map says (spawn.hpp), and
//      supervise them (job.hpp); mpirun is the job's child subreaper, so a
//      job that ends early ends what its ranks started too;
//   6. remove the names of one-sided windows the job was making when it
//      ended (src/rma/window.cpp: a window's name lives from its creation
//      until every rank has mapped it, and carries mpirun's pid).
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/mman.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fmt/format.h>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "copy_probe.hpp"
#include "job.hpp"
#include "launcher_args.hpp"
#include "place/map.hpp"
#include "place/membind.hpp"
#include "place/report.hpp"
#include "place/topology.hpp"
#include "shm/segment.hpp"
#include "spawn.hpp"

#ifndef SHMPI_VERSION
#error "SHMPI_VERSION must be defined by the build (meson.project_version())"
#endif

namespace {

using namespace shmpi;
using namespace shmpi::launcher;

/// Opens /dev/null on any of fds 0-2 that is closed, so that no file mpirun
/// opens lands there.  A closed standard output is opened read-only: writing
/// the job's output to it fails (EBADF) and ends the job with the error, as
/// any program's output to a closed stdout does, instead of vanishing.
void open_standard_fds() {
    for (int fd = 0; fd <= 2; ++fd) {
        if (fcntl(fd, F_GETFD) < 0 && errno == EBADF) {
            const int n = open("/dev/null", fd == 2 ? O_WRONLY : O_RDONLY);
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
    const rlim_t need = descriptors_for(nranks);
    if (lim.rlim_cur != RLIM_INFINITY && lim.rlim_cur < need) {
        lim.rlim_cur = lim.rlim_max == RLIM_INFINITY || lim.rlim_max > need ? need : lim.rlim_max;
        setrlimit(RLIMIT_NOFILE, &lim);
    }
}

/// Step 1's placement: the map of `args` on the topology, or a PlaceError.
place::RankMap map_ranks(const LaunchArgs& args, const place::Topology& topology) {
    place::MapRequest req;
    req.nranks = args.nranks;
    req.map_by = args.map_by;
    req.bind = args.bind_to;
    req.cpu_list = args.cpu_list;
    req.oversubscribe = args.oversubscribe;
    place::RankMap map = place::compute_map(topology.pus(), req);
    // The report carries the notes; without it they are printed alone.
    if (args.report_bindings) {
        std::fputs(place::format_report(topology, req, map).c_str(), stderr);
    } else {
        for (const std::string& n : map.notes) fmt::print(stderr, "shmpi: note: {}\n", n);
    }
    std::fflush(stderr);
    return map;
}

/// The CPUs each rank binds itself to: none when the topology is not this
/// machine's.  An unbound rank may run on every usable PU: the --cpu-list
/// CPUs when one was given (as Open MPI's --cpu-set confines unbound
/// ranks), else wherever mpirun may run (no binding at all).
std::vector<std::vector<int>> bindings_of(const place::RankMap& map, const place::Topology& topology,
                                          const LaunchArgs& args) {
    std::vector<std::vector<int>> out;
    if (!topology.is_this_system()) return out;
    if (!map.bound()) {
        if (args.cpu_list.empty()) return out;
        std::vector<int> usable;
        for (const place::Pu& p : map.usable) usable.push_back(p.os);
        std::sort(usable.begin(), usable.end());
        out.assign(map.ranks.size(), usable);
        return out;
    }
    for (const place::RankPlacement& r : map.ranks) out.push_back(r.cpus);
    return out;
}

/// How many CPUs the ranks may run on: the usable PUs of the map (the
/// --cpu-list ones when given), or where mpirun may run when the topology
/// is not this machine's (a synthetic one places nothing).  0 when unknown.
std::uint32_t cpus_for_ranks(const place::RankMap& map, const place::Topology& topology) {
    if (topology.is_this_system()) return static_cast<std::uint32_t>(map.usable.size());
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) != 0) return 0;
    return static_cast<std::uint32_t>(CPU_COUNT(&set));
}

/// The names by which --host and --hostfile may mean this machine.
std::vector<std::string> local_host_names() {
    std::vector<std::string> names{"localhost", "localhost.localdomain", "127.0.0.1", "::1"};
    char buf[256] = {};
    if (gethostname(buf, sizeof buf - 1) == 0 && buf[0] != '\0') {
        const std::string full(buf);
        names.push_back(full);
        if (const std::size_t dot = full.find('.'); dot != std::string::npos && dot > 0) {
            names.push_back(full.substr(0, dot));
        }
    }
    return names;
}

/// Reads --hostfile and checks its hosts (apply_hosts()); "" when fine,
/// else the message.
std::string apply_hostfile(LaunchArgs& args, const std::vector<std::string>& local_names) {
    // (A directory opens as a stream that reads nothing, an endless file
    // such as /dev/zero would be read without end: neither is a host file.)
    std::error_code ec;
    if (std::filesystem::is_directory(args.hostfile, ec)) {
        return usage_error(
            fmt::format("{} '{}': is a directory, not a host file", args.hostfile_option, args.hostfile));
    }
    std::ifstream in(args.hostfile, std::ios::binary);
    if (!in) {
        return usage_error(fmt::format("{} '{}': cannot read it ({})", args.hostfile_option, args.hostfile,
                                       std::strerror(errno)));
    }
    constexpr std::size_t kMaxBytes = 1 << 20;
    std::string text(kMaxBytes + 1, '\0');
    in.read(text.data(), static_cast<std::streamsize>(text.size()));
    if (in.bad()) {
        return usage_error(fmt::format("{} '{}': cannot read it ({})", args.hostfile_option, args.hostfile,
                                       std::strerror(errno)));
    }
    text.resize(static_cast<std::size_t>(in.gcount()));
    if (text.size() > kMaxBytes) {
        return usage_error(
            fmt::format("{} '{}': longer than 1 MiB, not a host file", args.hostfile_option, args.hostfile));
    }
    std::string problem;
    const auto hosts = parse_hostfile(text, problem);
    if (!hosts) {
        return usage_error(fmt::format("{} '{}': {}", args.hostfile_option, args.hostfile, problem));
    }
    return apply_hosts(args, *hosts, fmt::format("{} '{}'", args.hostfile_option, args.hostfile),
                       local_names);
}

/// The environment setting `name` that mpirun reads (the copy settings of
/// copy_probe.hpp, SHMPI_OUTPUT_WAIT) as `parse` reads it; when it reads
/// nothing, prints which values `name` takes and returns nullopt.
template <class Parse>
auto env_setting(const char* name, Parse parse, std::string_view values) {
    const char* value = std::getenv(name);
    auto mode = parse(value);
    if (!mode) fmt::print(stderr, "shmpi: mpirun: {}='{}': expected {}\n", name, value, values);
    return mode;
}

/// Step 6: removes /dev/shm/shmpi-UID-PID-win-*, the names of the windows
/// this mpirun's ranks were making (a job that ends, say through mpirun's
/// deadlock check, while its ranks create a window).
void remove_window_names() {
    const std::string prefix = fmt::format("shmpi-{}-{}-win-", getuid(), getpid());
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator("/dev/shm", ec)) {
        const std::string name = e.path().filename().string();
        if (name.starts_with(prefix)) shm_unlink(("/" + name).c_str());
    }
}

}  // namespace

int main(int argc, char** argv) {
    // 1.
    const std::vector<std::string> local_names = local_host_names();
    ParsedCommandLine cl =
        parse_launcher_args(std::vector<std::string>(argv, argv + argc), SHMPI_VERSION, local_names);
    if (cl.action == ParsedCommandLine::Action::kRun && !cl.args.ignored_mca.empty()) {
        fmt::print(stderr,
                   "shmpi: mpirun: note: Open MPI's MCA parameters mean nothing to shmpi; ignored: {}\n",
                   fmt::join(cl.args.ignored_mca, "; "));
    }
    if (cl.action == ParsedCommandLine::Action::kRun && !cl.args.hostfile.empty()) {
        if (std::string m = apply_hostfile(cl.args, local_names); !m.empty()) {
            fmt::print(stderr, "{}\n", m);
            return kUsageError;
        }
    }
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
    apply_launcher_settings(args);  // -x/-genv of the settings read below
    if (!args.wdir.empty()) {
        // Checked here, so that a bad directory is a usage error rather
        // than every rank failing to start.
        std::error_code ec;
        if (!std::filesystem::is_directory(args.wdir, ec)) {
            fmt::print(stderr, "{}\n",
                       usage_error(fmt::format("{} '{}': {}", args.wdir_option, args.wdir,
                                               ec ? ec.message() : std::string("not a directory"))));
            return kUsageError;
        }
    }
    const std::optional<RepMovsb> rep_movsb = env_setting("SHMPI_REP_MOVSB", parse_rep_movsb, "auto, keep or avoid");
    const std::optional<KernelCopies> kernel_copies =
        env_setting("SHMPI_KERNEL_COPIES", parse_kernel_copies, "auto, fast or slow");
    const std::optional<double> output_wait =
        env_setting("SHMPI_OUTPUT_WAIT", parse_output_wait, "a number of seconds from 0 to 1000000000 (such as 10 or 2.5)");
    const std::optional<double> mpiexec_timeout =
        env_setting("MPIEXEC_TIMEOUT", parse_mpiexec_timeout, "a number of seconds from 0 (no limit) to 1e9");
    if (!rep_movsb || !kernel_copies || !output_wait || !mpiexec_timeout) return kUsageError;
    if (cl.args.timeout_s <= 0 && *mpiexec_timeout > 0) {
        // MPICH's spelling of --timeout; the command line wins.
        cl.args.timeout_s = *mpiexec_timeout;
        cl.args.timeout_from = "MPIEXEC_TIMEOUT=";
    }
    const bool avoid_rep_movsb =
        *rep_movsb == RepMovsb::Avoid || (*rep_movsb == RepMovsb::Auto && short_distance_copies_slow());
    // (One rank has no one to copy to: its launch skips the race, 3-4 ms.
    // Others take the verdict a launch of the last minute left, if any.)
    const bool slow_kernel_copies =
        *kernel_copies == KernelCopies::Slow ||
        (*kernel_copies == KernelCopies::Auto && args.nranks >= 2 && cells_beat_kernel_copies_kept());
    std::optional<place::Topology> topology;
    place::RankMap map;
    try {
        topology.emplace(place::Topology::from_environment());
        map = map_ranks(args, *topology);
    } catch (const place::PlaceError& e) {
        fmt::print(stderr, "shmpi: mpirun: {}\n", e.what());
        return kUsageError;
    }

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
    // Under `ulimit -f`, sizing the segment past the limit must fail with
    // EFBIG (a message), not kill mpirun silently.
    sigaction(SIGXFSZ, &ignore, &inherited.sigxfsz);
    sigaction(SIGCHLD, &dfl, &inherited.sigchld);
    sigset_t handled;
    sigemptyset(&handled);
    for (int sig : {SIGCHLD, SIGUSR1, SIGUSR2}) sigaddset(&handled, sig);
    LaunchStop stop;
    sigemptyset(&stop.signals);
    for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
        // Blocked, an ignored signal would still reach the signalfd.
        struct sigaction now {};
        const bool ignored = sigaction(sig, nullptr, &now) == 0 && (now.sa_flags & SA_SIGINFO) == 0 &&
                             now.sa_handler == SIG_IGN;
        if (!ignored) {
            sigaddset(&handled, sig);
            sigaddset(&stop.signals, sig);
        }
    }
    sigprocmask(SIG_BLOCK, &handled, nullptr);
    const int signal_fd = signalfd(-1, &handled, SFD_CLOEXEC | SFD_NONBLOCK);
    if (signal_fd < 0) {
        const int e = errno;
        fmt::print(stderr, "shmpi: mpirun: signalfd: {}{}\n", std::strerror(e), open_files_hint(e, args.nranks));
        return 1;
    }
    // Processes the ranks leave behind come to mpirun rather than to init,
    // so a job that ends early can end them too (Job::end_leftovers()).
    prctl(PR_SET_CHILD_SUBREAPER, 1);

    try {
        // 4.  (--timeout counts from here: sizing the segment and starting
        // the ranks are part of the job's time.)
        const auto began = std::chrono::steady_clock::now();
        if (args.timeout_s > 0) {
            stop.deadline = began + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                        std::chrono::duration<double>(args.timeout_s));
        }
        const shm::Geometry wanted = shm::Geometry::for_ranks(args.nranks, cpus_for_ranks(map, *topology));
        // Reserving a segment of hundreds of ranks takes seconds: a signal
        // or the deadline ends it too.
        shm::Segment seg = shm::Segment::create(wanted, getpid(), shm::Segment::Name::Drop,
                                                [&stop] { return told_to_stop(stop); });
        if (const std::uint32_t wide = seg.layout().geometry.wide_cell_bytes; wide < wanted.wide_cell_bytes) {
            fmt::print(stderr,
                       "shmpi: mpirun: note: /dev/shm or memory has no room for {} MiB of wide collective cells "
                       "a rank ({:.1f} MiB more in all), so there are {}: large Bcasts and Gathers on "
                       "MPI_COMM_WORLD are slower (make room: docker run --shm-size=1g, or mount -o "
                       "remount,size=1G /dev/shm)\n",
                       wanted.wide_cell_bytes >> 20,
                       static_cast<double>(wanted.total_bytes() - seg.layout().size) / 1048576.0,
                       wide == 0 ? std::string("none") : fmt::format("{} MiB a rank", wide >> 20));
        }
        place::write_places(seg, map.places());
        seg.header().kernel_copies_slow = slow_kernel_copies ? 1 : 0;  // (copy_probe.hpp)
        // Which program each rank runs (MPI_APPNUM); fork publishes it.
        for (std::uint32_t r = 0; r < args.nranks; ++r) seg.slot(r).appnum = args.appnum_of(r);
        const place::MembindResult mem = place::bind_memory(*topology, seg, map.places());
        if (!mem.problem.empty()) fmt::print(stderr, "shmpi: mpirun: note: {}\n", mem.problem);

        // 5.
        StartedRanks started =
            start_ranks(args, seg, inherited, bindings_of(map, *topology, args), avoid_rep_movsb, stop);
        if (started.cut_short) {
            fmt::print(stderr, "shmpi: mpirun: stopped starting ranks after {} of {}\n", started.ranks.size(),
                       args.nranks);
        }
        Job job(args, seg, std::move(started), signal_fd, *output_wait, began);
        const int status = job.run();
        remove_window_names();
        return status;
    } catch (const shm::SegmentError& e) {
        fmt::print(stderr, "{}\n", e.what());
        return 1;
    } catch (const shm::SegmentStopped&) {
        return end_before_start(args, signal_fd, stop);
    } catch (const LaunchError& e) {
        fmt::print(stderr, "{}\n", e.what());
        return 1;
    }
}
