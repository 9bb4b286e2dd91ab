// mpirun's command line: what the user asked for, parsed without side effects.
//
// The grammar is `mpirun [OPTIONS] PROGRAM [ARGS...]`.  Parsing stops at the
// first word that is not an option (or after `--`): that word is the program
// and everything after it belongs to the program, so `mpirun -n 2 ./app -n 5`
// runs `./app -n 5`.  MPICH and Open MPI spell long options with one dash
// (`-np 4`, `-prepend-rank`); those spellings are accepted too.
//
// A lone `:` starts another program of the same job (MPMD, as in MPICH and
// Open MPI): `mpirun -n 1 ./master : -n 4 ./worker` runs five ranks, the
// worker as ranks 1 to 4, whose MPI_APPNUM is 1.  After a `:` only `-n N`
// (or -np, -c, --np) may come before the program; the options before the
// first program apply to the whole job.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "place/policy.hpp"

namespace shmpi::launcher {

/// The most ranks one job may have; far above what one machine can run, it
/// only keeps the arithmetic on rank numbers in range.
inline constexpr std::uint32_t kMaxRanks = 1u << 20;

/// The rank numbers Open MPI's and MPICH's launchers give each process and
/// job scripts read (`./app > out.$OMPI_COMM_WORLD_RANK`, `$PMI_RANK`):
/// mpirun sets them too, beside its own SHMPI_RANK and SHMPI_SIZE.  The
/// machine is the one node, so a rank's local and node rank are its rank.
/// Programs of those MPIs ignore them when their own launcher is missing
/// (they run as singletons, as before).
inline constexpr const char* kPortableRankVariables[] = {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_LOCAL_RANK",
                                                         "OMPI_COMM_WORLD_NODE_RANK", "PMI_RANK", "MPI_LOCALRANKID"};
/// Their job-size partners: every one is the number of ranks.
inline constexpr const char* kPortableSizeVariables[] = {"OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_SIZE",
                                                         "OMPI_UNIVERSE_SIZE", "PMI_SIZE", "MPI_LOCALNRANKS"};

/// Whether mpirun sets the variable `name` for each rank itself:
/// SHMPI_RANK, SHMPI_SIZE, SHMPI_SEGMENT_FD and the portable rank numbers.
/// A -x or -genv of one is an error: a SHMPI_ one would come first in the
/// environment and win (every rank would claim the same rank and the job
/// hang), a portable one would be replaced without a word.  The ranks get
/// none left over from an enclosing job (spawn.cpp).
bool is_job_variable(std::string_view name);

/// The settings mpirun reads itself, from the environment the ranks get,
/// besides the segment's geometry (shm::kGeometrySettings): the topology,
/// the copy settings (copy_probe.hpp), SHMPI_OUTPUT_WAIT and
/// SHMPI_RING_SUMMARY (shm::Geometry::ring_summary).
inline constexpr const char* kLauncherSettings[] = {"SHMPI_TOPOLOGY", "SHMPI_KERNEL_COPIES", "SHMPI_REP_MOVSB",
                                                    "SHMPI_OUTPUT_WAIT", "SHMPI_RING_SUMMARY"};

/// One `-x` option: either forward VAR as mpirun sees it (`value` unset) or
/// set VAR to a value for the ranks.
struct EnvSetting {
    std::string name;
    std::string value;
    bool has_value = false;

    bool operator==(const EnvSetting&) const = default;
};

/// One host named by --host or by a line of a --hostfile, with the slots
/// given for it (0: no count given).
struct HostSlots {
    std::string name;
    std::uint32_t slots = 0;

    bool operator==(const HostSlots&) const = default;
};

/// Where ranks may run (--bind-to; src/place/policy.hpp).  kAuto binds to
/// cores when the ranks fit the cores mpirun may use, and leaves an
/// oversubscribed job unbound.
using BindTo = place::Bind;

/// One program after a `:` (MPMD): `nranks` ranks run `command`.
struct AppContext {
    std::uint32_t nranks = 1;          ///< its -n; 1 when not given
    std::vector<std::string> command;  ///< the program, then its arguments; never empty

    bool operator==(const AppContext&) const = default;
};

/// --deadlock-after when not given, in seconds.
inline constexpr double kDefaultDeadlockAfter_s = 3;

/// SHMPI_OUTPUT_WAIT when not set: how many seconds mpirun goes on relaying
/// after the last rank has exited, while processes the ranks started still
/// hold their stdout or stderr (job.hpp).
inline constexpr double kDefaultOutputWait_s = 10;

/// SHMPI_OUTPUT_WAIT's `value` in seconds (nullptr or "", not set: the default): a
/// number from 0 (no wait) to 1e9, written as digits with an optional
/// fraction ("10", "2.5"); nullopt when it is not one.
std::optional<double> parse_output_wait(const char* value);

/// MPICH's MPIEXEC_TIMEOUT, read when the command line has no --timeout:
/// `value` (nullptr or "", not set; "0", no limit) in seconds, at most
/// 1e9; nullopt when it is not such a number.
std::optional<double> parse_mpiexec_timeout(const char* value);

/// A job to run, as the command line describes it.
struct LaunchArgs {
    std::uint32_t nranks = 1;               ///< every rank of the job: the first program's -n/-np/-c/--np
                                            ///< (1 when not given) plus those of `more_apps`
    std::vector<std::string> command;       ///< the first program, then its arguments; never empty
    std::vector<AppContext> more_apps;      ///< the programs after `:`, in order (MPMD); usually none
    std::vector<EnvSetting> env;            ///< -x options in command-line order, then -genv/-env ones
    double timeout_s = 0;                   ///< --timeout; 0 means no limit
    /// Where timeout_s came from, as the timeout message names it:
    /// "--timeout " or "MPIEXEC_TIMEOUT=" (apply_mpiexec_timeout()).
    std::string timeout_from = "--timeout ";
    /// --deadlock-after: end the job once every rank has waited this long in
    /// MPI with nothing moving in the segment (job.cpp); 0 turns it off.
    double deadlock_after_s = kDefaultDeadlockAfter_s;
    bool tag_output = false;                ///< --tag-output/--prepend-rank/-l
    BindTo bind_to = BindTo::kAuto;         ///< --bind-to
    place::MapBy map_by;                    ///< --map-by; core:compact when not given
    std::vector<int> cpu_list;              ///< --cpu-list, sorted OS indexes; empty: every usable PU
    std::string wdir;                       ///< --wdir/--wd/-wdir: the ranks' directory; empty: mpirun's
    std::string wdir_option;                ///< how the user spelled it, for messages
    bool report_bindings = false;           ///< --report-bindings
    bool oversubscribe = false;             ///< --oversubscribe: bound ranks may share cores
    bool nranks_given = false;              ///< -n or a synonym was given
    std::vector<HostSlots> hosts;           ///< --host/-H/-hosts entries, in order
    std::string hostfile;                   ///< --hostfile/--machinefile/-f; empty: none
    std::string hostfile_option;            ///< how the user spelled that option, for messages
    /// Open MPI's `--mca KEY VALUE` settings, as "KEY VALUE": they mean
    /// nothing to shmpi, which says so once (main.cpp) and runs the job.
    std::vector<std::string> ignored_mca;

    /// Which program rank `rank` runs: 0 for `command`, k for more_apps[k - 1]
    /// (its MPI_APPNUM).  The programs take consecutive ranks, in order.
    std::uint32_t appnum_of(std::uint32_t rank) const;
    /// The program and arguments of rank `rank`.
    const std::vector<std::string>& command_of(std::uint32_t rank) const;
};

/// Sets in mpirun's own environment each of shm::kGeometrySettings and
/// kLauncherSettings that `args`
/// sets with -x or -genv (the last one given wins, as for the ranks), so
/// that mpirun reads, checks and applies the value the ranks get.
void apply_launcher_settings(const LaunchArgs& args);

/// What parse_launcher_args() decided.
struct ParsedCommandLine {
    enum class Action {
        kRun,      ///< `args` holds a job to run
        kHelp,     ///< print `message` (the help text) on stdout, exit 0
        kVersion,  ///< print `message` (one line) on stdout, exit 0
        kError,    ///< print `message` on stderr, exit kUsageError
    };
    Action action = Action::kError;
    LaunchArgs args;
    std::string message;  ///< help text, version line, or an error that names the option and value
};

/// mpirun's exit status for a command line it cannot use.
inline constexpr int kUsageError = 2;

/// Parses mpirun's argv (argv[0] is the launcher's own name).  Never throws
/// for bad input and never touches the process: every problem comes back as
/// Action::kError with a one-line message that starts with "shmpi: mpirun: "
/// and names the option and the value as the user typed them.  `version` is
/// the text after "shmpi mpirun " in the --version line.  `local_names` are
/// the names of this machine that --host may use (apply_hosts()); the
/// hostfile is only named in the result, for the caller to read.
ParsedCommandLine parse_launcher_args(const std::vector<std::string>& argv, const std::string& version,
                                      const std::vector<std::string>& local_names = {"localhost"});

/// `text` as one line of mpirun's usage errors: "shmpi: mpirun: " first,
/// control characters shown as \n, \t or \xNN.
std::string usage_error(std::string text);

/// A --host value: a comma list of HOST or HOST:SLOTS (Open MPI and MPICH
/// spell it alike), or nothing if it is not one.
std::optional<std::vector<HostSlots>> parse_host_list(const std::string& text);

/// The hosts of a hostfile's `text`: one per line, as Open MPI writes them
/// (`host`, `host slots=4`, `host slots=4 max_slots=8`) or MPICH does
/// (`host:4`); `#` starts a comment.  On a line it cannot read, returns
/// nothing and sets `problem` to "line N: ...".
std::optional<std::vector<HostSlots>> parse_hostfile(const std::string& text, std::string& problem);

/// shmpi runs every rank on this machine, so the hosts a script names
/// (--host, --hostfile) must all be this machine: one of `local_names`
/// (compared without case).  When they are, and -n was not given, the job
/// gets as many ranks as the hosts have slots, a host without a count
/// counting one (Open MPI's rule for --host).  Returns "" when fine, else
/// a one-line message that starts with "shmpi: mpirun: " and names the
/// option (`option`, as the user spelled it) and the host.
std::string apply_hosts(LaunchArgs& args, const std::vector<HostSlots>& hosts, const std::string& option,
                        const std::vector<std::string>& local_names);

}  // namespace shmpi::launcher
