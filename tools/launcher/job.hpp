// Supervising a started job: relaying output, reaping ranks, ending the job
// on the first fault, and choosing mpirun's exit status.
//
// One thread and one poll() loop watch everything: a signalfd (SIGCHLD, the
// signals that end the job and the two it forwards), a timerfd for
// --timeout, a timerfd for the grace period of an ending job, the exec-error
// pipe, and each rank's stdout and stderr pipe.  Ranks are reaped with
// waitpid(WNOHANG) after each SIGCHLD.  SIGUSR1 and SIGUSR2 to mpirun go on
// to every live rank, as Open MPI's mpirun does (MPICH's forwards SIGUSR1):
// a rank that does not handle one dies of it, which ends the job like any
// killed rank.
//
// When every rank has exited with nothing wrong, mpirun goes on relaying
// until every rank's stdout and stderr pipe is closed, as MPICH's and Open
// MPI's do: a process that a rank started in the background and that still
// holds the rank's output (`sh -c 'late_job & ...'`) keeps its output.  It
// waits at most SHMPI_OUTPUT_WAIT seconds for that (Job::Job()), then stops
// relaying, names the pipes still open in a note and exits 0, leaving those
// processes alone; --timeout and the signals that end a job still end the
// wait at once, and end those processes too (end_leftovers()).
//
// The job ends early on the first of these causes:
//   - a rank is killed by a signal, exits with a nonzero code, or exits with
//     code 0 while its slot still says kAttached (MPI_Init without
//     MPI_Finalize; a rank still kNotStarted may exit 0: `mpirun hostname`);
//   - a rank calls MPI_Abort or stops on a fatal MPI error (header.abort_state
//     turned kAborting by a rank; abort_rank/code/kind say who and why);
//   - exec of the program fails;
//   - mpirun gets SIGINT, SIGTERM or SIGHUP (unless it was started with that
//     signal ignored: then it is not in the signalfd's set, main.cpp);
//   - --timeout expires (also while mpirun waits for output after the ranks);
//   - every rank waits in MPI and nothing has moved for --deadlock-after
//     seconds (check_deadlock());
//   - mpirun's stdout is closed by its reader (EPIPE; silently, like SIGPIPE).
// Ending the job takes these steps:
//   1. compare-exchange header.abort_state kRunning -> kAborting (a rank's
//      MPI_Abort may have done it already);
//   2. bump every rank's doorbell and FUTEX_WAKE it, so ranks asleep in an
//      MPI wait see the abort and leave;
//   3. SIGTERM every rank still alive (after a short delay when a rank's
//      MPI_Abort is in progress, so that it can finish recording its code);
//   4. SIGKILL whatever is left 300 ms later.
// Ranks that die because the job ends are not causes.  mpirun prints one
// line for the cause after the ranks' last output and exits with:
//   0 when no cause; the rank's code; 128+signal for a killed rank or a
//   signal to mpirun; the MPI_Abort code (mod 256); 127 for exec failure;
//   124 for --timeout; 1 for a missing MPI_Finalize or a deadlock; 141 for a
//   closed stdout.
#pragma once

#include <sys/types.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "launcher_args.hpp"
#include "line_relay.hpp"
#include "shm/segment.hpp"
#include "spawn.hpp"
#include "unique_fd.hpp"

namespace shmpi::launcher {

/// Why the job ended early.  The first cause found is the one reported.
struct EndCause {
    enum class Kind {
        kNone,
        kRankSignaled,  ///< value: the signal
        kRankExited,    ///< value: the nonzero exit code
        kNoFinalize,    ///< exited 0 in state kAttached
        kNoInit,        ///< exited 0 before MPI_Init while rank `value` called it
        kExecFailed,    ///< value: errno of exec
        kMpiAbort,      ///< rank and code are read from the header at the end
        kSignal,        ///< value: the signal mpirun received
        kTimeout,
        kDeadlock,  ///< the ranks' calls are in Job::deadlock_calls_
        kOutputClosed,  ///< value: errno of the failed write to stdout
    };
    Kind kind = Kind::kNone;
    std::uint32_t rank = 0;
    pid_t pid = -1;
    int value = 0;
};

/// For a job that ends before its first rank starts: a stop signal or
/// --timeout came while mpirun sized the segment (shm::SegmentStopped).
/// Takes the first of stop.signals from `signal_fd` (none there: the
/// timeout), prints the cause line Job::run() prints for it, and returns
/// the same exit status.
int end_before_start(const LaunchArgs& args, int signal_fd, const LaunchStop& stop);

class Job {
public:
    /// Takes over the started ranks.  `signal_fd` is a signalfd for SIGCHLD,
    /// SIGINT, SIGTERM, SIGHUP, SIGUSR1 and SIGUSR2 (blocked in mpirun since
    /// before the fork; less those of the three first that mpirun was
    /// started with ignored).  `output_wait_s`: how long run() relays output after
    /// the last rank has exited, while processes the ranks started still
    /// hold their pipes (SHMPI_OUTPUT_WAIT; 0: not at all).  `began`: when
    /// mpirun began the job, from which --timeout counts.
    Job(const LaunchArgs& args, shm::Segment& seg, StartedRanks started, int signal_fd,
        double output_wait_s, std::chrono::steady_clock::time_point began);

    /// Runs the loop until every rank has been reaped and its output relayed
    /// (until its pipes close, or for at most `output_wait_s` after the last
    /// rank when the job did not end early), prints the cause line if the
    /// job ended early, and returns mpirun's exit status.
    int run();

private:
    struct Rank {
        pid_t pid;
        bool alive = true;
        int exec_error = 0;  ///< errno from an ExecFailure record, or 0
        UniqueFd out, err;
        LineRelay out_relay, err_relay;
    };
    enum class Grace { kIdle, kTermPending, kKillPending };

    void handle_signals();
    /// The grace timer fired: SIGTERM or SIGKILL to the live ranks.
    void on_grace();
    /// Called by an output sink that waits for its reader while one of
    /// mpirun's signal or timer descriptors is readable: handles them as
    /// run() would, and says whether the job is ending.
    bool serve_while_output_waits();
    /// A rank exited 0 before MPI_Init (early_exit_): if another rank has
    /// called MPI_Init the job cannot go on (that rank waits for the one
    /// that left), so it ends; else it looks again in kCheckEvery_s.
    void check_early_exit();
    /// The deadlock timer fired: looks at the segment once.  Every rank
    /// that has not finalized must be asleep in an MPI wait, with no wake-up
    /// pending and not overdue for its next look (a rank the scheduler keeps
    /// from running is not stuck), and Segment::activity() must be what it
    /// was at the previous look; when that has held for --deadlock-after
    /// seconds, the ranks can only wait for one another, and the job ends.
    void check_deadlock();
    /// How often check_deadlock() looks: a tenth of --deadlock-after,
    /// within 10 to 200 ms.
    double deadlock_period() const;
    void reap();
    void on_rank_exit(std::uint32_t rank, int status);
    void read_exec_errors();
    /// Reads once from a rank's pipe into its relay; closes the pipe at EOF.
    /// Returns false when nothing more can be read now.
    bool relay(UniqueFd& fd, LineRelay& relay);
    void begin_end(EndCause cause);
    void signal_live_ranks(int sig);
    /// Whether run() goes on after the last rank has exited: the job did not
    /// end early, a rank's pipe is still open, and `output_wait_s_` has not
    /// run out (output_wait_over_).
    bool waits_for_output() const;
    /// After the output wait ran out: one note naming the pipes still open.
    void note_open_pipes();
    /// After a job that ended early: kills what the ranks left behind (a
    /// shell's pipeline, a sleep it started), which mpirun, the job's child
    /// subreaper (main.cpp), has adopted; children mpirun had before the
    /// job (inherited_) are left alone.
    void end_leftovers();
    void arm(const UniqueFd& timer, double seconds);
    /// Prints the cause line, if any, and returns mpirun's exit status.
    int report();

    const LaunchArgs& args_;
    shm::Segment& seg_;
    OutputSink stdout_sink_{1};
    OutputSink stderr_sink_{2};
    std::vector<Rank> ranks_;
    UniqueFd exec_errors_;
    int signal_fd_;
    UniqueFd timeout_timer_;
    UniqueFd grace_timer_;
    UniqueFd check_timer_;
    UniqueFd deadlock_timer_;
    /// The output wait (waits_for_output()): its length, its timer (armed
    /// when the last rank has been reaped), and whether it has run out.
    double output_wait_s_;
    UniqueFd output_wait_timer_;
    bool output_wait_armed_ = false;
    bool output_wait_over_ = false;
    /// check_deadlock(): whether the last look found every rank stuck, the
    /// segment's digest then, and since when (CLOCK_MONOTONIC, ns) the looks
    /// have found that same digest.
    bool stuck_ = false;
    std::uint64_t stuck_activity_ = 0;
    std::int64_t stuck_since_ns_ = 0;
    /// What each rank does, for the deadlock report: "rank 1 in MPI_Recv".
    std::string deadlock_calls_;
    /// The first rank that exited 0 before MPI_Init, or -1.
    int early_exit_ = -1;
    Grace grace_ = Grace::kIdle;
    std::uint32_t live_ = 0;
    /// mpirun's children before the ranks were forked (StartedRanks).
    std::vector<pid_t> inherited_;
    bool ending_ = false;
    EndCause cause_;
    std::array<char, 65536> buffer_{};
};

}  // namespace shmpi::launcher
