// Starting the ranks: one fork per rank, no daemons, no remote shells.
//
// Each rank is a child of mpirun.  Between fork and exec the child:
//   1. asks for SIGKILL when mpirun dies (PR_SET_PDEATHSIG) and then checks
//      that mpirun is still its parent, so that no rank outlives mpirun, even
//      when mpirun is killed with SIGKILL;
//   2. puts its output pipes on fds 1 and 2 and, for ranks other than 0,
//      /dev/null on fd 0 (rank 0 keeps mpirun's stdin);
//   3. marks every descriptor above 2 close-on-exec (mpirun's own are so
//      already; those mpirun inherited become so, as with Open MPI and
//      MPICH) and then clears FD_CLOEXEC on the segment descriptor;
//   4. gets back the signal mask (empty), the dispositions and the
//      descriptor limit that mpirun changed for itself, and binds itself to
//      its CPUs when the job is bound (--bind-to; the map is computed by
//      main.cpp with src/place/map.hpp);
//   5. execs the program with the environment built here (mpirun's, plus -x
//      settings, plus SHMPI_SEGMENT_FD, SHMPI_RANK, SHMPI_SIZE and the rank
//      numbers Open MPI's and MPICH's launchers give, launcher_args.hpp;
//      GLIBC_TUNABLES may gain a setting, copy_probe.hpp).  If exec
//      fails it writes an ExecFailure record to the exec-error pipe and exits
//      with 127; mpirun turns the record into one message.
#pragma once

#include <signal.h>
#include <sys/resource.h>
#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "launcher_args.hpp"
#include "shm/segment.hpp"
#include "unique_fd.hpp"

namespace shmpi::launcher {

/// Raised when mpirun cannot start the job (pipe, fork); the message is
/// complete and names the call and the rank.
class LaunchError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

/// What mpirun changed in its own process at start-up and the ranks must get
/// back as mpirun found it.
struct InheritedState {
    struct sigaction sigpipe {};  ///< mpirun ignores SIGPIPE to see EPIPE instead
    struct sigaction sigxfsz {};  ///< and SIGXFSZ, to see EFBIG when sizing the segment
    struct sigaction sigchld {};  ///< mpirun needs SIGCHLD at its default to reap
    struct rlimit nofile {};      ///< mpirun may raise its descriptor limit
};

/// The record a child writes to the exec-error pipe when exec fails.  Smaller
/// than PIPE_BUF, so records from different ranks never mix.
struct ExecFailure {
    std::uint32_t rank;
    std::int32_t error;  ///< errno of the failed exec
};

/// A started rank, as mpirun sees it.
struct RankProcess {
    pid_t pid = -1;
    UniqueFd out;  ///< read end of the rank's stdout pipe, non-blocking
    UniqueFd err;  ///< read end of the rank's stderr pipe, non-blocking
};

/// All ranks of a started job.
struct StartedRanks {
    std::vector<RankProcess> ranks;  ///< indexed by rank
    UniqueFd exec_errors;            ///< read end of the exec-error pipe, non-blocking
    /// mpirun's children before the first fork: those it inherited through
    /// exec, which the job leaves alone (Job::end_leftovers()).  Read before
    /// any rank exists, because a rank that exits at once hands the children
    /// it leaves to mpirun, the job's subreaper, before the job can look.
    std::vector<pid_t> inherited_children;
    /// Fewer ranks than the job's were started: a stop signal or the
    /// deadline came first (LaunchStop).  The job then ends at once for that
    /// cause, as it would have with every rank running.
    bool cut_short = false;
};

/// What ends a launch before every rank runs.  Forking a large job where
/// ranks outnumber the CPUs many times over can take long (each new rank
/// takes CPU time from mpirun), and an interrupt or a --timeout must not
/// wait for the last fork.
struct LaunchStop {
    sigset_t signals{};  ///< blocked in mpirun (read by its signalfd): one pending stops the launch
    std::optional<std::chrono::steady_clock::time_point> deadline;  ///< --timeout, from mpirun's start of the job
};

/// Whether one of stop.signals is pending or stop.deadline has passed.
bool told_to_stop(const LaunchStop& stop);

/// The descriptor limit mpirun wants for a job of `nranks`: two pipes kept
/// per rank, and room for its own.
rlim_t descriptors_for(std::uint32_t nranks);

/// For `err`, the error of a call that opens a descriptor: when it is EMFILE,
/// " (...)" naming the limit and what to raise it to; else "".
std::string open_files_hint(int err, std::uint32_t nranks);

/// This process's children, from /proc/self/task/*/children (empty where
/// the kernel has no such file).
std::vector<pid_t> children_of_self();

/// Forks args.nranks ranks that run args.command.  Rank r binds itself to
/// `bindings[r]` (OS CPU indexes) before exec; an empty `bindings`, or an
/// empty entry, leaves ranks unbound.  (Each rank writes its own
/// RankSlot::pid when it attaches; mpirun keeps the pids in RankProcess.)
/// With `avoid_rep_movsb`, the ranks' GLIBC_TUNABLES turn off glibc's
/// `rep movsb` copies (copy_probe.hpp).  On failure it kills and reaps the
/// ranks it had started and throws LaunchError.  Before each fork after
/// the first it looks at `stop`, and when that says stop it returns the
/// ranks started so far, with `cut_short` set.
StartedRanks start_ranks(const LaunchArgs& args, shm::Segment& seg, const InheritedState& inherited,
                         const std::vector<std::vector<int>>& bindings, bool avoid_rep_movsb,
                         const LaunchStop& stop);

}  // namespace shmpi::launcher
