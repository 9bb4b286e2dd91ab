#include "job.hpp"

#include <poll.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cmath>
#include <algorithm>
#include <cstring>
#include <iterator>
#include <fmt/format.h>

#include "place/policy.hpp"
#include "shm/futex.hpp"

namespace shmpi::launcher {
namespace {

/// Ranks get this long to leave after SIGTERM before they get SIGKILL.
constexpr double kKillGrace_s = 0.3;
/// While a rank's MPI_Abort is in progress, the other ranks get this long to
/// leave on their own before SIGTERM, so the aborting rank is not killed
/// before it has recorded its rank and code.
constexpr double kAbortGrace_s = 0.05;
/// While a rank that exited before MPI_Init waits to be found out, mpirun
/// looks at the other ranks' states this often (check_early_exit()).
constexpr double kCheckEvery_s = 0.1;
/// A rank asleep in an MPI wait for this long past the end of its sleep has
/// been kept from running by the scheduler: it may still have something to
/// do, so it does not count as stuck (check_deadlock()).
constexpr std::int64_t kOverdue_ns = 100'000'000;
/// The final drain after the last rank is reaped reads at most this much per
/// pipe: a rank's own child may still hold the pipe open and keep writing.
constexpr std::size_t kFinalDrainBytes = std::size_t{64} << 20;

UniqueFd make_timer() {
    return UniqueFd(timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK));
}

/// Why a rank's program could not start.  A bare name is looked up on PATH
/// only (as a shell does), which surprises users whose program is in the
/// current directory: say so.
std::string exec_failure(const std::string& program, int err, const std::string& wdir) {
    std::string text = fmt::format("cannot run '{}': {}", program, std::strerror(err));
    if (err != ENOENT || program.find('/') != std::string::npos) return text;
    const std::string local = wdir.empty() ? program : wdir + "/" + program;
    if (access(local.c_str(), X_OK) == 0) {
        return text + fmt::format(" (a name without '/' is looked up on PATH; to run the one in {}, write ./{})",
                                  wdir.empty() ? std::string{"this directory"} : fmt::format("'{}'", wdir),
                                  program);
    }
    return text + " (not found on PATH)";
}

/// "rank 3", "ranks 0-2", "ranks 1,4-6": sorted rank numbers, runs joined.
std::string rank_list(const std::vector<int>& ranks) {
    return (ranks.size() == 1 ? "rank " : "ranks ") + place::format_list(ranks);
}

/// The call a parked rank named in its slot (RankSlot::parked_in).
std::string parked_call(const shm::RankSlot& slot) {
    char name[sizeof slot.parked_in + 1] = {};
    for (std::size_t w = 0; w < std::size(slot.parked_in); ++w) {
        const std::uint64_t word = slot.parked_in[w].load(std::memory_order_relaxed);
        std::memcpy(name + 8 * w, &word, 8);
    }
    std::string call(name);
    const bool printable = !call.empty() && std::all_of(call.begin(), call.end(), [](char c) {
        return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
    });
    return printable ? call : "an MPI call";
}

/// The cause lines for a signal to mpirun and for --timeout.
std::string signal_cause(int sig) {
    return fmt::format("received signal {} ({}); ending the job", sig, strsignal(sig));
}
std::string timeout_cause(const LaunchArgs& args) {
    return fmt::format("the job ran longer than {}{} s; ending the job", args.timeout_from, args.timeout_s);
}

}  // namespace

int end_before_start(const LaunchArgs& args, int signal_fd, const LaunchStop& stop) {
    signalfd_siginfo info;
    while (read(signal_fd, &info, sizeof info) == static_cast<ssize_t>(sizeof info)) {
        const int sig = static_cast<int>(info.ssi_signo);
        if (sigismember(&stop.signals, sig) == 1) {
            fmt::print(stderr, "shmpi: mpirun: {}\n", signal_cause(sig));
            return 128 + sig;
        }
    }
    fmt::print(stderr, "shmpi: mpirun: {}\n", timeout_cause(args));
    return 124;
}

Job::Job(const LaunchArgs& args, shm::Segment& seg, StartedRanks started, int signal_fd,
         double output_wait_s, std::chrono::steady_clock::time_point began)
    : args_(args),
      seg_(seg),
      exec_errors_(std::move(started.exec_errors)),
      signal_fd_(signal_fd),
      timeout_timer_(make_timer()),
      grace_timer_(make_timer()),
      check_timer_(make_timer()),
      deadlock_timer_(make_timer()),
      output_wait_s_(output_wait_s),
      output_wait_timer_(make_timer()) {
    ranks_.reserve(started.ranks.size());
    for (std::uint32_t r = 0; r < started.ranks.size(); ++r) {
        RankProcess& p = started.ranks[r];
        const std::string prefix = args.tag_output ? fmt::format("[{}] ", r) : std::string{};
        ranks_.push_back(Rank{p.pid, true, 0, std::move(p.out), std::move(p.err),
                              LineRelay(stdout_sink_, prefix), LineRelay(stderr_sink_, prefix)});
    }
    live_ = static_cast<std::uint32_t>(ranks_.size());
    inherited_ = std::move(started.inherited_children);
    if (args.timeout_s > 0) {
        // What is left of it after the launch (arm() makes 0 a nanosecond).
        const double used = std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
        arm(timeout_timer_, std::max(0.0, args.timeout_s - used));
    }
    if (args.deadlock_after_s > 0) arm(deadlock_timer_, deadlock_period());
    // A reader that stops reading must not keep the job from ending.
    for (OutputSink* sink : {&stdout_sink_, &stderr_sink_}) {
        sink->watch({signal_fd_, timeout_timer_.get(), grace_timer_.get()},
                    [this] { return serve_while_output_waits(); });
    }
}

void Job::arm(const UniqueFd& timer, double seconds) {
    itimerspec spec{};
    const double whole = std::floor(seconds);
    spec.it_value.tv_sec = static_cast<time_t>(whole);
    spec.it_value.tv_nsec = static_cast<long>((seconds - whole) * 1e9);
    if (spec.it_value.tv_sec == 0 && spec.it_value.tv_nsec == 0) spec.it_value.tv_nsec = 1;
    timerfd_settime(timer.get(), 0, &spec, nullptr);
}

int Job::run() {
    // Fixed slots in the poll set; a closed descriptor stays as -1, which
    // poll() skips.
    enum : std::size_t { kSignals, kExecErrors, kTimeout, kGrace, kCheck, kDeadlock, kOutputWait, kFirstPipe };
    std::vector<pollfd> fds(kFirstPipe + 2 * ranks_.size());
    for (pollfd& p : fds) p.events = POLLIN;

    while (live_ > 0 || waits_for_output()) {
        if (live_ == 0 && !output_wait_armed_) {
            arm(output_wait_timer_, output_wait_s_);
            output_wait_armed_ = true;
        }
        fds[kSignals].fd = signal_fd_;
        fds[kExecErrors].fd = exec_errors_.get();
        fds[kTimeout].fd = args_.timeout_s > 0 && !ending_ ? timeout_timer_.get() : -1;
        fds[kGrace].fd = grace_ != Grace::kIdle ? grace_timer_.get() : -1;
        fds[kCheck].fd = early_exit_ >= 0 && !ending_ ? check_timer_.get() : -1;
        fds[kDeadlock].fd = args_.deadlock_after_s > 0 && !ending_ ? deadlock_timer_.get() : -1;
        fds[kOutputWait].fd = output_wait_armed_ ? output_wait_timer_.get() : -1;
        for (std::size_t r = 0; r < ranks_.size(); ++r) {
            fds[kFirstPipe + 2 * r].fd = ranks_[r].out.get();
            fds[kFirstPipe + 2 * r + 1].fd = ranks_[r].err.get();
        }
        // Unfinished lines held for their rest are written once they have
        // waited LineRelay::kHold: poll() wakes up for the first of them.
        int wait_ms = -1;
        const auto before = LineRelay::Clock::now();
        for (const Rank& r : ranks_) {
            for (const LineRelay* relay_to : {&r.out_relay, &r.err_relay}) {
                const int due = relay_to->due_in(before);
                if (due >= 0 && (wait_ms < 0 || due < wait_ms)) wait_ms = due;
            }
        }
        if (poll(fds.data(), fds.size(), wait_ms) < 0) {
            if (errno == EINTR) continue;
            // Cannot happen with valid descriptors; leave no rank behind
            // all the same.
            fmt::print(stderr, "shmpi: mpirun: poll: {}; killing the job\n", std::strerror(errno));
            signal_live_ranks(SIGKILL);
            while (waitpid(-1, nullptr, 0) > 0 || errno == EINTR) {
            }
            return 1;
        }
        // Signals first: a SIGINT that arrives together with the ranks'
        // deaths (Ctrl-C reaches the whole process group) is the cause, not
        // the deaths.
        if (fds[kSignals].revents != 0) handle_signals();
        // Output before exits, so a rank's last lines come before the cause.
        // A held line goes out only from a pipe that had nothing more.
        const auto now = wait_ms >= 0 ? LineRelay::Clock::now() : before;
        auto serve = [&](const pollfd& p, UniqueFd& fd, LineRelay& to) {
            if (p.revents != 0) {
                relay(fd, to);
            } else if (wait_ms >= 0) {
                to.flush_if_due(now);
            }
        };
        for (std::size_t r = 0; r < ranks_.size(); ++r) {
            serve(fds[kFirstPipe + 2 * r], ranks_[r].out, ranks_[r].out_relay);
            serve(fds[kFirstPipe + 2 * r + 1], ranks_[r].err, ranks_[r].err_relay);
        }
        if (stdout_sink_.broken()) {
            begin_end({EndCause::Kind::kOutputClosed, 0, -1, stdout_sink_.error()});
        }
        if (fds[kExecErrors].revents != 0) read_exec_errors();
        if (fds[kTimeout].revents != 0) begin_end({EndCause::Kind::kTimeout});
        if (fds[kGrace].revents != 0) on_grace();
        if (fds[kCheck].revents != 0) {
            std::uint64_t expirations;
            [[maybe_unused]] ssize_t n = read(check_timer_.get(), &expirations, sizeof expirations);
            check_early_exit();
        }
        if (fds[kDeadlock].revents != 0) {
            std::uint64_t expirations;
            [[maybe_unused]] ssize_t n = read(deadlock_timer_.get(), &expirations, sizeof expirations);
            check_deadlock();
        }
        if (fds[kOutputWait].revents != 0) output_wait_over_ = true;
    }

    if (ending_) end_leftovers();
    // Every rank is gone: what is in the pipes is all they wrote, unless
    // the output wait ran out.
    for (Rank& r : ranks_) {
        for (auto [fd, relay_to] : {std::pair{&r.out, &r.out_relay}, std::pair{&r.err, &r.err_relay}}) {
            std::size_t drained = 0;
            while (*fd && drained < kFinalDrainBytes && relay(*fd, *relay_to)) {
                drained += buffer_.size();
            }
            relay_to->finish();
        }
    }
    // A write error in that last output fails the job too.
    if (cause_.kind == EndCause::Kind::kNone && stdout_sink_.broken()) {
        cause_ = {EndCause::Kind::kOutputClosed, 0, -1, stdout_sink_.error()};
    }
    if (output_wait_over_ && !ending_) note_open_pipes();
    return report();
}

bool Job::waits_for_output() const {
    if (ending_ || output_wait_s_ <= 0 || output_wait_over_) return false;
    return std::any_of(ranks_.begin(), ranks_.end(), [](const Rank& r) { return r.out || r.err; });
}

void Job::note_open_pipes() {
    // "the stdout of ranks 0-2, the stderr of rank 5": by which pipes are open.
    std::vector<int> out_only, err_only, both;
    for (std::uint32_t r = 0; r < ranks_.size(); ++r) {
        const auto rank = static_cast<int>(r);
        if (ranks_[r].out && ranks_[r].err) {
            both.push_back(rank);
        } else if (ranks_[r].out) {
            out_only.push_back(rank);
        } else if (ranks_[r].err) {
            err_only.push_back(rank);
        }
    }
    std::string held;
    for (const auto& [which, ranks] : {std::pair{"stdout and stderr", &both}, std::pair{"stdout", &out_only},
                                       std::pair{"stderr", &err_only}}) {
        if (!ranks->empty()) {
            held += (held.empty() ? "the " : ", the ") + std::string(which) + " of " + rank_list(*ranks);
        }
    }
    if (held.empty()) return;  // closed during the last drain after all
    stderr_sink_.write_line(
        fmt::format("shmpi: mpirun: note: every rank has exited, but processes they started have held {} open "
                    "for {:g} s more; mpirun stops relaying here, and what those processes write from now on "
                    "is lost (SHMPI_OUTPUT_WAIT sets the wait)\n",
                    held, output_wait_s_));
}

void Job::on_grace() {
    std::uint64_t expirations;
    [[maybe_unused]] ssize_t n = read(grace_timer_.get(), &expirations, sizeof expirations);
    if (grace_ == Grace::kTermPending) {
        signal_live_ranks(SIGTERM);
        grace_ = Grace::kKillPending;
        arm(grace_timer_, kKillGrace_s);
    } else if (grace_ == Grace::kKillPending) {
        signal_live_ranks(SIGKILL);
        grace_ = Grace::kIdle;
    }
}

bool Job::serve_while_output_waits() {
    // What run()'s loop would do with these descriptors, minus the pipes.
    pollfd p[3] = {{signal_fd_, POLLIN, 0},
                   {args_.timeout_s > 0 && !ending_ ? timeout_timer_.get() : -1, POLLIN, 0},
                   {grace_ != Grace::kIdle ? grace_timer_.get() : -1, POLLIN, 0}};
    if (poll(p, 3, 0) > 0) {
        if (p[0].revents != 0) handle_signals();
        if (p[1].revents != 0) begin_end({EndCause::Kind::kTimeout});
        if (p[2].revents != 0) on_grace();
    }
    return ending_;
}

void Job::handle_signals() {
    signalfd_siginfo info;
    bool child_exited = false;
    while (read(signal_fd_, &info, sizeof info) == static_cast<ssize_t>(sizeof info)) {
        const int sig = static_cast<int>(info.ssi_signo);
        if (sig == SIGCHLD) {
            child_exited = true;
        } else if (sig == SIGUSR1 || sig == SIGUSR2) {
            // For the ranks, not for mpirun; an ending job has no use for them.
            if (!ending_) signal_live_ranks(sig);
        } else if (!ending_) {
            begin_end({EndCause::Kind::kSignal, 0, -1, sig});
        } else {
            // A second signal while the job ends: do not wait for the grace.
            signal_live_ranks(SIGKILL);
            grace_ = Grace::kIdle;
        }
    }
    if (child_exited) reap();
}

void Job::reap() {
    int status = 0;
    pid_t pid;
    while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
        for (std::uint32_t r = 0; r < ranks_.size(); ++r) {
            if (ranks_[r].pid == pid && ranks_[r].alive) {
                on_rank_exit(r, status);
                break;
            }
        }
        // Any other child was inherited from whoever exec'd mpirun; reaping it is all.
    }
}

void Job::on_rank_exit(std::uint32_t rank, int status) {
    Rank& r = ranks_[rank];
    r.alive = false;
    --live_;
    if (ending_) return;  // a consequence of the ending, not a cause

    // A rank's MPI_Abort explains whatever exit we see, including other
    // ranks leaving because they noticed it.  Acquire pairs with the
    // aborting rank's acq_rel compare-exchange.
    const shm::SegmentHeader& h = seg_.header();
    if (h.abort_state.load(std::memory_order_acquire) == shm::kAborting) {
        begin_end({EndCause::Kind::kMpiAbort, rank, r.pid, 0});
        return;
    }
    if (WIFSIGNALED(status)) {
        begin_end({EndCause::Kind::kRankSignaled, rank, r.pid, WTERMSIG(status)});
        return;
    }
    const int code = WEXITSTATUS(status);
    if (code == 127) {
        // The child wrote its record before exiting, so it is readable now.
        read_exec_errors();
        if (r.exec_error != 0) {
            begin_end({EndCause::Kind::kExecFailed, rank, r.pid, r.exec_error});
            return;
        }
    }
    if (code != 0) {
        begin_end({EndCause::Kind::kRankExited, rank, r.pid, code});
        return;
    }
    // Acquire pairs with the rank's release store of its state, so a
    // kFinalized seen here means MPI_Finalize finished.
    const std::uint32_t state = seg_.slot(rank).state.load(std::memory_order_acquire);
    if (state == shm::kAttached) {
        begin_end({EndCause::Kind::kNoFinalize, rank, r.pid, 0});
    } else if (state == shm::kNotStarted && early_exit_ < 0) {
        // Fine on its own (`mpirun -n 4 hostname`), not beside MPI ranks.
        early_exit_ = static_cast<int>(rank);
        check_early_exit();
    }
}

void Job::check_early_exit() {
    if (early_exit_ < 0 || ending_ || live_ == 0) return;
    for (std::uint32_t q = 0; q < ranks_.size(); ++q) {
        // Relaxed: only whether the rank got as far as MPI_Init matters.
        if (seg_.slot(q).state.load(std::memory_order_relaxed) != shm::kNotStarted) {
            const auto r = static_cast<std::uint32_t>(early_exit_);
            begin_end({EndCause::Kind::kNoInit, r, ranks_[r].pid, static_cast<int>(q)});
            return;
        }
    }
    arm(check_timer_, kCheckEvery_s);
}

double Job::deadlock_period() const { return std::clamp(args_.deadlock_after_s / 10, 0.01, 0.2); }

void Job::check_deadlock() {
    if (ending_ || live_ == 0) return;
    // Relaxed loads throughout: one look proves nothing, only the same
    // values look after look for the whole --deadlock-after do (see the
    // park line in shm/layout.hpp).
    const std::int64_t now = shm::monotonic_ns();
    bool all_stuck = true;
    bool any_waits = false;
    for (std::uint32_t r = 0; r < ranks_.size() && all_stuck; ++r) {
        if (!ranks_[r].alive) continue;
        const shm::RankSlot& slot = seg_.slot(r);
        const std::uint32_t state = slot.state.load(std::memory_order_relaxed);
        // A finalized rank sends nothing more: nobody can wait for it.
        if (state == shm::kFinalized) continue;
        all_stuck =
            state == shm::kAttached && slot.open_grequests.load(std::memory_order_relaxed) == 0 &&
            slot.parked.load(std::memory_order_relaxed) != 0 &&
            slot.doorbell.load(std::memory_order_relaxed) == slot.parked_on.load(std::memory_order_relaxed) &&
            now <= slot.parked_until.load(std::memory_order_relaxed) + kOverdue_ns;
        any_waits = true;
    }
    if (!all_stuck || !any_waits) {
        stuck_ = false;
    } else if (const std::uint64_t activity = seg_.activity(); !stuck_ || activity != stuck_activity_) {
        stuck_ = true;
        stuck_activity_ = activity;
        stuck_since_ns_ = now;
    } else if (static_cast<double>(now - stuck_since_ns_) >= args_.deadlock_after_s * 1e9) {
        // Who does what, grouped by call in the order of their first rank.
        std::vector<std::pair<std::string, std::vector<int>>> groups;
        for (std::uint32_t r = 0; r < ranks_.size(); ++r) {
            const shm::RankSlot& slot = seg_.slot(r);
            std::string what = slot.state.load(std::memory_order_relaxed) == shm::kFinalized
                                   ? (ranks_[r].alive ? "past MPI_Finalize" : "exited after MPI_Finalize")
                                   : "in " + parked_call(slot);
            auto g =
                std::find_if(groups.begin(), groups.end(), [&](const auto& e) { return e.first == what; });
            if (g == groups.end()) g = groups.insert(groups.end(), {what, {}});
            g->second.push_back(static_cast<int>(r));
        }
        deadlock_calls_.clear();
        for (const auto& [what, ranks] : groups) {
            deadlock_calls_ += (deadlock_calls_.empty() ? "" : "; ") + rank_list(ranks) + " " + what;
        }
        begin_end({EndCause::Kind::kDeadlock});
        return;
    }
    arm(deadlock_timer_, deadlock_period());
}

void Job::read_exec_errors() {
    if (!exec_errors_) return;
    ExecFailure rec;
    ssize_t n;
    while ((n = read(exec_errors_.get(), &rec, sizeof rec)) == static_cast<ssize_t>(sizeof rec)) {
        if (rec.rank < ranks_.size()) ranks_[rec.rank].exec_error = rec.error;
    }
    if (n == 0) exec_errors_.reset();  // every child has exec'd or exited
}

bool Job::relay(UniqueFd& fd, LineRelay& to) {
    const ssize_t n = read(fd.get(), buffer_.data(), buffer_.size());
    if (n > 0) {
        to.feed({buffer_.data(), static_cast<std::size_t>(n)});
        return true;
    }
    if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
        // The stream has ended: its unfinished line is its last.
        to.finish();
        fd.reset();
    }
    return false;
}

void Job::begin_end(EndCause cause) {
    if (ending_) return;
    ending_ = true;
    cause_ = cause;
    shm::SegmentHeader& h = seg_.header();

    // 1. Job-wide abort flag.  acq_rel: release publishes nothing of ours
    //    beyond the flag itself, but keeps the doorbell bumps below after it;
    //    acquire makes a rank's abort_rank/abort_code visible if a rank won.
    std::uint32_t expected = shm::kRunning;
    h.abort_state.compare_exchange_strong(expected, shm::kAborting, std::memory_order_acq_rel,
                                          std::memory_order_acquire);

    // 2. Wake every rank that sleeps in a wait.  release: a rank that sees
    //    the new doorbell value (acquire) also sees kAborting.
    for (std::uint32_t r = 0; r < ranks_.size(); ++r) {
        shm::RankSlot& slot = seg_.slot(r);
        slot.doorbell.fetch_add(1, std::memory_order_release);
        shm::futex_wake(slot.doorbell, INT_MAX);
    }

    // 3./4. SIGTERM now and SIGKILL after the grace; when a rank's MPI_Abort
    //    has not yet recorded its rank (relaxed: ordered by the acquire above
    //    or in on_rank_exit), let it finish first.
    if (cause.kind == EndCause::Kind::kMpiAbort &&
        h.abort_rank.load(std::memory_order_relaxed) < 0) {
        grace_ = Grace::kTermPending;
        arm(grace_timer_, kAbortGrace_s);
        return;
    }
    signal_live_ranks(SIGTERM);
    grace_ = Grace::kKillPending;
    arm(grace_timer_, kKillGrace_s);
}

void Job::end_leftovers() {
    // Killing one may hand us its own children: a few rounds, until none
    // is left (each round waits for those it killed).
    for (int round = 0; round < 16; ++round) {
        std::vector<pid_t> left;
        for (const pid_t pid : children_of_self()) {
            if (std::find(inherited_.begin(), inherited_.end(), pid) == inherited_.end()) left.push_back(pid);
        }
        if (left.empty()) return;
        for (const pid_t pid : left) kill(pid, SIGKILL);
        for (const pid_t pid : left) {
            while (waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
            }
        }
    }
}

void Job::signal_live_ranks(int sig) {
    // Only unreaped pids: a reaped pid may already belong to someone else.
    for (const Rank& r : ranks_) {
        if (r.alive) kill(r.pid, sig);
    }
}

int Job::report() {
    // Through the sink, like the ranks' lines: a stderr nobody reads holds
    // mpirun up only until the next signal, not for ever.
    auto say = [this](const std::string& text) { stderr_sink_.write_line("shmpi: mpirun: " + text + "\n"); };
    const EndCause& c = cause_;
    switch (c.kind) {
        case EndCause::Kind::kNone:
            return 0;
        case EndCause::Kind::kRankSignaled:
            say(fmt::format("rank {} (pid {}) was killed by signal {} ({}); ending the job", c.rank,
                            c.pid, c.value, strsignal(c.value)));
            return 128 + c.value;
        case EndCause::Kind::kRankExited:
            say(fmt::format("rank {} exited with code {}; ending the job", c.rank, c.value));
            return c.value;
        case EndCause::Kind::kNoFinalize:
            say(fmt::format("rank {} exited without calling MPI_Finalize; ending the job", c.rank));
            return 1;
        case EndCause::Kind::kNoInit:
            say(
                fmt::format("rank {} exited without calling MPI_Init while rank {} called it (the ranks of "
                            "a job all use MPI or none does); ending the job",
                            c.rank, c.value));
            return 1;
        case EndCause::Kind::kExecFailed:
            say(exec_failure(args_.command_of(c.rank)[0], c.value, args_.wdir));
            return 127;
        case EndCause::Kind::kMpiAbort: {
            // Every rank is gone and reaped, so the aborting rank's relaxed
            // stores of rank, code and kind are complete and visible (its exit
            // and our waitpid order them); the acquire load pairs with its
            // compare-exchange all the same.
            const shm::SegmentHeader& h = seg_.header();
            h.abort_state.load(std::memory_order_acquire);
            const int rank = h.abort_rank.load(std::memory_order_relaxed);
            const int code = h.abort_code.load(std::memory_order_relaxed);
            const auto kind = h.abort_kind.load(std::memory_order_relaxed);
            if (rank >= 0 && kind == shm::kAbortFatal) {
                // The rank has printed the error itself; `code` is its class.
                say(fmt::format("rank {} stopped on a fatal MPI error (error class {}); ending the job", rank,
                                code));
                return 1;
            }
            if (rank >= 0) {
                say(fmt::format("rank {} called MPI_Abort with error code {}; ending the job", rank,
                                code));
                return code & 255;
            }
            say("a rank called MPI_Abort but was ended before it recorded its error code; "
                "ending the job");
            return 1;
        }
        case EndCause::Kind::kSignal: say(signal_cause(c.value)); return 128 + c.value;
        case EndCause::Kind::kTimeout: say(timeout_cause(args_)); return 124;
        case EndCause::Kind::kDeadlock:
            say(
                fmt::format("deadlock: every rank waits in MPI for another, and nothing has moved for {} s "
                            "({}); ending the job (--deadlock-after 0 turns this check off)",
                            args_.deadlock_after_s, deadlock_calls_));
            return 1;
        case EndCause::Kind::kOutputClosed:
            // The reader went away (mpirun ... | head): quietly, as a
            // program killed by SIGPIPE would.
            if (c.value == EPIPE) return 128 + SIGPIPE;
            say(fmt::format("cannot write to standard output: {}; the rest of the job's output is lost, "
                            "and the job ends",
                            std::strerror(c.value)));
            return 1;
    }
    return 1;  // unreachable: every kind is handled above
}

}  // namespace shmpi::launcher
