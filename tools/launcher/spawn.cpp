#include "spawn.hpp"

#include <fcntl.h>
#include <linux/close_range.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <optional>
#include <string>
#include <string_view>

#include "copy_probe.hpp"

extern char** environ;

namespace shmpi::launcher {
namespace {

/// Whether `entry` (NAME=VALUE) sets the variable `name`.
bool sets(std::string_view entry, std::string_view name) {
    return entry.size() > name.size() && entry.substr(0, name.size()) == name && entry[name.size()] == '=';
}

/// Every rank's environment: mpirun's own, without the job variables left
/// over from an enclosing job (SHMPI_*, and the portable rank numbers of
/// launcher_args.hpp, which another MPI's launcher may have set), with the -x
/// settings applied, and with this job's SHMPI_SEGMENT_FD, SHMPI_SIZE and
/// SHMPI_RANK and portable rank numbers.  Only the rank entries differ between
/// ranks: set_rank() rewrites them in place before each fork, and the child's
/// copy of memory keeps the values they had at fork.
class RankEnvironment {
public:
    RankEnvironment(const LaunchArgs& args, int segment_fd, bool avoid_rep_movsb) {
        for (char** e = environ; *e != nullptr; ++e) {
            const std::string_view entry{*e};
            if (!is_job_variable(entry.substr(0, entry.find('=')))) entries_.emplace_back(entry);
        }
        for (const EnvSetting& x : args.env) {
            if (!x.has_value) continue;  // forwarded already with the whole environment
            put(x.name, x.value);
        }
        if (avoid_rep_movsb) {
            // (copy_probe.hpp)
            if (std::optional<std::string> v = tunables_avoiding_rep_movsb(value_of("GLIBC_TUNABLES"))) {
                put("GLIBC_TUNABLES", *v);
            }
        }
        entries_.push_back(fmt::format("{}={}", shm::kEnvFd, segment_fd));
        entries_.push_back(fmt::format("{}={}", shm::kEnvSize, args.nranks));
        for (const char* name : kPortableSizeVariables) entries_.push_back(fmt::format("{}={}", name, args.nranks));
        // The rank entries come last, SHMPI_RANK first: set_rank() rewrites
        // entries_[rank_entries_ ...] in this order.
        rank_entries_ = entries_.size();
        entries_.push_back(fmt::format("{}=0", shm::kEnvRank));
        for (const char* name : kPortableRankVariables) entries_.push_back(fmt::format("{}=0", name));
        for (std::string& e : entries_) pointers_.push_back(e.data());
        pointers_.push_back(nullptr);
    }

    void set_rank(std::uint32_t rank) {
        std::size_t i = rank_entries_;
        auto rewrite = [&](const char* name) {
            entries_[i] = fmt::format("{}={}", name, rank);
            pointers_[i] = entries_[i].data();
            ++i;
        };
        rewrite(shm::kEnvRank);
        for (const char* name : kPortableRankVariables) rewrite(name);
    }

    char* const* envp() const { return pointers_.data(); }

private:
    /// Sets `name` to `value`: every entry that sets it, or a new one.
    void put(std::string_view name, std::string_view value) {
        const std::string entry = fmt::format("{}={}", name, value);
        bool replaced = false;
        for (std::string& e : entries_) {
            if (sets(e, name)) {
                e = entry;
                replaced = true;
            }
        }
        if (!replaced) entries_.push_back(entry);
    }

    /// The value of `name`'s first entry (the one getenv() finds), if any.
    std::optional<std::string_view> value_of(std::string_view name) const {
        for (const std::string& e : entries_) {
            if (sets(e, name)) return std::string_view(e).substr(name.size() + 1);
        }
        return std::nullopt;
    }

    std::vector<std::string> entries_;
    std::vector<char*> pointers_;
    std::size_t rank_entries_ = 0;  ///< where SHMPI_RANK and the portable rank numbers start
};

/// A pipe whose two ends are close-on-exec.
struct Pipe {
    UniqueFd read;
    UniqueFd write;
};

Pipe make_pipe(const char* what, std::uint32_t rank, std::uint32_t nranks) {
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) {
        const int e = errno;
        throw LaunchError(fmt::format("shmpi: mpirun: cannot create the {} pipe for rank {}: {}{}", what, rank,
                                      std::strerror(e), open_files_hint(e, nranks)));
    }
    return {UniqueFd(fds[0]), UniqueFd(fds[1])};
}

/// The highest descriptor number step 3 must reach when close_range() is
/// missing (kernels before 5.11).
rlim_t fd_limit() {
    rlimit lim{};
    if (getrlimit(RLIMIT_NOFILE, &lim) != 0 || lim.rlim_cur == RLIM_INFINITY) return 65536;
    return lim.rlim_cur < 65536 ? lim.rlim_cur : 65536;
}

void set_nonblocking(int fd) { fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK); }

/// Everything a child needs between fork and exec, prepared before the fork so
/// the child only makes system calls.
struct ChildPlan {
    const char* file;
    const char* wdir;  ///< nullptr: stay in mpirun's directory
    char* const* argv;
    char* const* envp;
    pid_t launcher;
    int segment_fd;
    int dev_null;
    int exec_error_write;
    rlim_t fd_limit;  ///< where the fallback of step 3 stops
    const InheritedState* inherited;
    /// Rank r binds itself to cpusets[r] when `bound[r]`; prepared before the
    /// fork so the child only calls sched_setaffinity.
    const std::vector<cpu_set_t>* cpusets;
    const std::vector<char>* bound;
};

/// The bindings as cpu_set_t, one per rank, and whether each one applies.
/// CPUs beyond CPU_SETSIZE cannot be named in a cpu_set_t and are left out.
void make_cpusets(const std::vector<std::vector<int>>& bindings, std::uint32_t nranks,
                  std::vector<cpu_set_t>& sets, std::vector<char>& bound) {
    sets.resize(nranks);
    bound.assign(nranks, 0);
    for (std::uint32_t r = 0; r < nranks; ++r) {
        CPU_ZERO(&sets[r]);
        if (r >= bindings.size()) continue;
        for (int c : bindings[r]) {
            if (c >= 0 && c < CPU_SETSIZE) {
                CPU_SET(c, &sets[r]);
                bound[r] = 1;
            }
        }
    }
}

/// The child's side of steps 1-5 in spawn.hpp.  Never returns.
[[noreturn]] void become_rank(const ChildPlan& plan, std::uint32_t rank, int out_write,
                              int err_write) {
    // 1. Die with mpirun.  The check after the prctl closes the window in
    //    which mpirun died before the request was made.
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != plan.launcher) _exit(127);

    // 2. Standard streams.  dup2 leaves the new descriptors without
    //    FD_CLOEXEC, so they survive exec.
    if (dup2(out_write, STDOUT_FILENO) < 0 || dup2(err_write, STDERR_FILENO) < 0 ||
        (rank != 0 && dup2(plan.dev_null, STDIN_FILENO) < 0)) {
        _exit(127);
    }

    // 3. Fds 0-2 and the segment descriptor are all the rank keeps: mpirun's
    //    own descriptors are close-on-exec already, and so become those
    //    mpirun inherited from whoever started it (as Open MPI and MPICH do).
    if (close_range(3, ~0u, CLOSE_RANGE_CLOEXEC) != 0) {
        for (int fd = 3; fd < static_cast<int>(plan.fd_limit); ++fd) fcntl(fd, F_SETFD, FD_CLOEXEC);
    }
    fcntl(plan.segment_fd, F_SETFD, 0);

    // 4. Signals and limits as mpirun found them.
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    sigaction(SIGPIPE, &plan.inherited->sigpipe, nullptr);
    sigaction(SIGXFSZ, &plan.inherited->sigxfsz, nullptr);
    sigaction(SIGCHLD, &plan.inherited->sigchld, nullptr);
    setrlimit(RLIMIT_NOFILE, &plan.inherited->nofile);
    if ((*plan.bound)[rank] != 0) sched_setaffinity(0, sizeof(cpu_set_t), &(*plan.cpusets)[rank]);

    // 5. Run the program in its directory, or report why not.  A bare name
    //    is looked up on the rank's PATH (-x PATH=...), as MPICH and Open
    //    MPI do, not mpirun's: execvpe searches the PATH that getenv finds,
    //    so the rank's environment becomes this process's first (a store to
    //    a variable, which is all a child of a forked process should do).
    if (plan.wdir == nullptr || chdir(plan.wdir) == 0) {
        environ = const_cast<char**>(plan.envp);
        execvpe(plan.file, plan.argv, plan.envp);
    }
    const ExecFailure record{rank, errno};
    [[maybe_unused]] ssize_t n = write(plan.exec_error_write, &record, sizeof record);
    _exit(127);
}

/// Kills and reaps the ranks started so far; used when the start fails.
void kill_started(const std::vector<RankProcess>& ranks) {
    for (const RankProcess& r : ranks) kill(r.pid, SIGKILL);
    for (const RankProcess& r : ranks) {
        while (waitpid(r.pid, nullptr, 0) < 0 && errno == EINTR) {
        }
    }
}

}  // namespace

bool told_to_stop(const LaunchStop& stop) {
    sigset_t pending, both;
    sigemptyset(&pending);
    if (sigpending(&pending) == 0 && sigandset(&both, &pending, &stop.signals) == 0 && sigisemptyset(&both) == 0) {
        return true;
    }
    return stop.deadline && std::chrono::steady_clock::now() >= *stop.deadline;
}

rlim_t descriptors_for(std::uint32_t nranks) { return 2 * rlim_t{nranks} + 64; }

std::string open_files_hint(int err, std::uint32_t nranks) {
    rlimit lim{};
    if (err != EMFILE || getrlimit(RLIMIT_NOFILE, &lim) != 0) return {};
    const rlim_t need = descriptors_for(nranks);
    return fmt::format(" (the limit on open files is {}; a job of {} rank{} needs up to {}: raise it, `ulimit -n {}`)",
                       lim.rlim_cur, nranks, nranks == 1 ? "" : "s", need, need);
}

std::vector<pid_t> children_of_self() {
    std::vector<pid_t> out;
    std::error_code ec;
    for (const auto& task : std::filesystem::directory_iterator("/proc/self/task", ec)) {
        std::ifstream in(task.path() / "children");
        for (pid_t pid = 0; in >> pid;) out.push_back(pid);
    }
    return out;
}

StartedRanks start_ranks(const LaunchArgs& args, shm::Segment& seg, const InheritedState& inherited,
                         const std::vector<std::vector<int>>& bindings, bool avoid_rep_movsb,
                         const LaunchStop& stop) {
    RankEnvironment env(args, seg.fd(), avoid_rep_movsb);
    // One argv per program (more than one: MPMD, launcher_args.hpp).
    std::vector<std::vector<char*>> argvs(1 + args.more_apps.size());
    for (std::size_t k = 0; k < argvs.size(); ++k) {
        const std::vector<std::string>& command = k == 0 ? args.command : args.more_apps[k - 1].command;
        for (const std::string& a : command) argvs[k].push_back(const_cast<char*>(a.c_str()));
        argvs[k].push_back(nullptr);
    }

    UniqueFd dev_null(open("/dev/null", O_RDONLY | O_CLOEXEC));
    if (!dev_null) {
        const int e = errno;
        throw LaunchError(fmt::format("shmpi: mpirun: cannot open /dev/null: {}{}", std::strerror(e),
                                      open_files_hint(e, args.nranks)));
    }
    Pipe exec_errors = make_pipe("exec-error", 0, args.nranks);

    std::vector<cpu_set_t> cpusets;
    std::vector<char> bound;
    make_cpusets(bindings, args.nranks, cpusets, bound);
    ChildPlan plan{args.command[0].c_str(),
                   args.wdir.empty() ? nullptr : args.wdir.c_str(),
                   argvs[0].data(),
                   env.envp(),
                   getpid(),
                   seg.fd(),
                   dev_null.get(),
                   exec_errors.write.get(),
                   fd_limit(),
                   &inherited,
                   &cpusets,
                   &bound};

    StartedRanks started;
    started.inherited_children = children_of_self();
    started.ranks.reserve(args.nranks);
    for (std::uint32_t r = 0; r < args.nranks; ++r) {
        // (At least one rank runs: a job of none would end as a success.)
        if (r > 0 && told_to_stop(stop)) {
            started.cut_short = true;
            break;
        }
        Pipe out, err;
        try {
            out = make_pipe("stdout", r, args.nranks);
            err = make_pipe("stderr", r, args.nranks);
        } catch (...) {
            kill_started(started.ranks);
            throw;
        }
        env.set_rank(r);
        const std::uint32_t app = args.appnum_of(r);
        plan.file = argvs[app][0];
        plan.argv = argvs[app].data();
        const pid_t pid = fork();
        if (pid < 0) {
            const int e = errno;
            kill_started(started.ranks);
            throw LaunchError(fmt::format("shmpi: mpirun: cannot start rank {}: fork: {}", r,
                                          std::strerror(e)));
        }
        if (pid == 0) become_rank(plan, r, out.write.get(), err.write.get());

        set_nonblocking(out.read.get());
        set_nonblocking(err.read.get());
        started.ranks.push_back(RankProcess{pid, std::move(out.read), std::move(err.read)});
        // out.write and err.write close here: the rank holds the only write
        // ends, so mpirun reads EOF when the rank (and its children) are gone.
    }
    set_nonblocking(exec_errors.read.get());
    started.exec_errors = std::move(exec_errors.read);
    return started;
}

}  // namespace shmpi::launcher
