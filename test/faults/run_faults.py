#!/usr/bin/env python3
"""Fault and I/O tests for mpirun: a rank dies, mpirun is signalled, output,
input, environment, exit statuses.

usage: run_faults.py [--jobs N] MPIRUN PROGRAM_DIR [CASE...]

MPIRUN is the launcher under test; PROGRAM_DIR holds the MPI test programs of
this directory (victim, exit_code, read_stdin, many_lines, print_env, appnum,
deadlock, unflushed, coll_data).  With no CASE it runs every case.  --jobs N
runs N cases at a time, each in a python process of its own (this script
again, with that one case), and prints each case's output when it ends; the
suite's test (meson.build) runs them so.  Cases named sh_* need
only a shell and python3 and test the launcher alone; cases named mpi_* need
the MPI programs and a working MPI library (missing programs: exit 77, skip).

After every case it checks that nothing is left behind:
  - no /dev/shm entry of that mpirun (the segment is named after mpirun's pid);
  - no process that carries the case's tag in its environment (mpirun
    forwards its whole environment, so every rank carries it) is still alive.
"""

import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid

SKIP = 77
GONE_WITHIN_S = 1.0  # every rank must be gone this soon after the fault
ORPHAN_GONE_WITHIN_S = 3.0  # a rank mpirun did not start itself, after mpirun's death
TAG_VAR = "SHMPI_FAULT_TEST_TAG"
JOB_ENDING_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


class CaseFailed(Exception):
    pass


class CaseSkipped(Exception):
    """The case needs something this machine lacks (the message says what)."""


class TooSlow(CaseFailed):
    """A time bound missed where everything else held.  This VM stalls now
    and then for a second or more (CI, 2026-11-27: a 0.5 s deadlock check
    that takes 0.58 s here ended the job after 2.8 s), so main() runs such a
    case again, TRIES times in all; a wrong verdict fails at once, and a
    hang still fails by Launch.wait's limit."""


TRIES = 3


def check(cond, what):
    if not cond:
        raise CaseFailed(what)


def check_soon(cond, what):
    """check() for a time bound."""
    if not cond:
        raise TooSlow(what)


# ---- processes -------------------------------------------------------------

def tagged_live_pids(tag):
    """Pids of processes (not zombies) whose environment holds `tag`."""
    needle = f"{TAG_VAR}={tag}".encode()
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/environ", "rb") as f:
                env = f.read()
            if needle not in env.split(b"\0"):
                continue
            with open(f"/proc/{entry}/stat", "rb") as f:
                state = f.read().rsplit(b")", 1)[1].split()[0]
            if state not in (b"Z", b"X"):
                found.append(int(entry))
        except OSError:
            continue  # gone meanwhile, or not ours to read
    return found


def shm_entries_of(pid):
    """/dev/shm entries named after launcher `pid` (shmpi-UID-PID-RANDOM)."""
    try:
        names = os.listdir("/dev/shm")
    except OSError:
        return []
    return [n for n in names if n.startswith("shmpi-") and n.split("-")[2:3] == [str(pid)]]


class Launch:
    """One mpirun run: its output lines with arrival times, its stderr, its
    exit status.  Output is read as it comes, so a case can wait for a line
    before it acts."""

    def __init__(self, mpirun, args, stdin_data=None, env_extra=None, env_remove=(), stdout_to=None,
                 ignored=()):
        self.tag = uuid.uuid4().hex
        env = dict(os.environ)
        for k in env_remove:
            env.pop(k, None)
        env.update(env_extra or {})
        env[TAG_VAR] = self.tag
        # Under AddressSanitizer a SIGSEGV would become exit status 1, under
        # ThreadSanitizer 66; these cases test how mpirun reports the
        # signal itself.
        for var in ("ASAN_OPTIONS", "TSAN_OPTIONS"):
            env[var] = (env[var] + ":" if env.get(var) else "") + "handle_segv=0"
        self.argv = [mpirun] + list(args)
        self.started = time.monotonic()

        # mpirun leaves a job-ending signal it was started with ignored
        # alone: these start at their defaults, whatever this harness
        # inherited (`nohup`, a script's `&`), but for those in `ignored`.
        def dispositions():
            for sig in JOB_ENDING_SIGNALS:
                signal.signal(sig, signal.SIG_IGN if sig in ignored else signal.SIG_DFL)

        self.proc = subprocess.Popen(
            self.argv, env=env, preexec_fn=dispositions,
            stdin=subprocess.PIPE if stdin_data is not None else subprocess.DEVNULL,
            stdout=stdout_to if stdout_to is not None else subprocess.PIPE, stderr=subprocess.PIPE)
        self.lines = []  # (time, bytes) per stdout line
        self.cond = threading.Condition()
        self.stderr = b""
        self.ended = None
        self._threads = [threading.Thread(target=self._read_stderr, daemon=True)]
        if stdout_to is None:
            self._threads.insert(0, threading.Thread(target=self._read_stdout, daemon=True))
        for t in self._threads:
            t.start()
        if stdin_data is not None:
            threading.Thread(target=self._feed, args=(stdin_data,), daemon=True).start()

    def _feed(self, data):
        try:
            self.proc.stdin.write(data)
            self.proc.stdin.close()
        except OSError:
            pass

    def _read_stdout(self):
        for line in self.proc.stdout:
            with self.cond:
                self.lines.append((time.monotonic(), line))
                self.cond.notify_all()
        with self.cond:
            self.cond.notify_all()

    def _read_stderr(self):
        self.stderr = self.proc.stderr.read()

    def wait_for_lines(self, predicate, count, timeout=20.0):
        """Waits until `count` stdout lines satisfy `predicate`; returns the
        time the last of them arrived."""
        deadline = time.monotonic() + timeout
        with self.cond:
            while True:
                hits = [t for t, l in self.lines if predicate(l)]
                if len(hits) >= count:
                    return hits[count - 1]
                left = deadline - time.monotonic()
                ended = self.proc.poll() is not None
                if ended and left > 0 and self._threads[0].is_alive():
                    # mpirun has ended, but its last lines may still be in
                    # the pipe on their way to _read_stdout(), which
                    # notifies at each line and at the end: wait for them
                    # rather than fail (a victim's "dying" line once came
                    # after mpirun had already ended the job).
                    self.cond.wait(min(left, 0.1))
                    continue
                check(left > 0 and not ended,
                      f"waited for {count} matching lines; got {len(hits)}; output so far:\n"
                      + b"".join(l for _, l in self.lines).decode(errors="replace")
                      + self.stderr_text())
                self.cond.wait(min(left, 0.1))

    def wait(self, timeout=30.0):
        try:
            rc = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            raise CaseFailed(f"mpirun did not end within {timeout} s")
        self.ended = time.monotonic()
        for t in self._threads:
            t.join(5)
        return rc

    def output(self):
        return b"".join(l for _, l in self.lines)

    def stderr_text(self):
        return "\nstderr:\n" + self.stderr.decode(errors="replace")

    def check_nothing_left(self, since=None):
        """No rank alive (waiting at most GONE_WITHIN_S after `since`) and no
        /dev/shm entry of this mpirun."""
        deadline = (since if since is not None else time.monotonic()) + GONE_WITHIN_S
        while True:
            alive = tagged_live_pids(self.tag)
            if not alive or time.monotonic() > deadline:
                break
            time.sleep(0.01)
        check_soon(not alive, f"processes still alive {GONE_WITHIN_S} s after the fault: {alive}")
        check(not shm_entries_of(self.proc.pid),
              f"/dev/shm entries left behind: {shm_entries_of(self.proc.pid)}")


def expect(launch, rc, expected_rc, stderr_has=(), stderr_lines=None):
    check(rc == expected_rc,
          f"{' '.join(launch.argv)}: exit status {rc}, expected {expected_rc}" + launch.stderr_text())
    text = launch.stderr.decode(errors="replace")
    for s in stderr_has:
        check(s in text, f"stderr lacks {s!r}" + launch.stderr_text())
    if stderr_lines is not None:
        mine = [l for l in text.splitlines() if l.startswith("shmpi: mpirun:")]
        check(len(mine) == stderr_lines,
              f"expected {stderr_lines} mpirun message line(s), got {len(mine)}" + launch.stderr_text())


# ---- checks shared by the shell and MPI variants ----------------------------

def ready_pids(launch):
    """{rank: pid} from "ready R PID" lines."""
    pids = {}
    for _, line in launch.lines:
        words = line.split()
        if len(words) == 3 and words[0] == b"ready":
            pids[int(words[1])] = int(words[2])
    return pids


def is_ready(line):
    return line.startswith(b"ready ")


def is_dying(line):
    return line.startswith(b"dying ")


def run_victim(mpirun, nranks, argv, expected_rc, message, victim):
    """A rank fails while the others wait: mpirun must end the job with
    `expected_rc`, print exactly one line containing `message` (where {pid}
    stands for the victim's pid), and leave nothing behind within 1 s."""
    launch = Launch(mpirun, ["-n", str(nranks)] + argv)
    launch.wait_for_lines(is_ready, nranks)
    died = launch.wait_for_lines(is_dying, 1)
    rc = launch.wait()
    pid = ready_pids(launch).get(victim)
    expect(launch, rc, expected_rc, [message.format(pid=pid)], stderr_lines=1)
    check_soon(launch.ended - died < GONE_WITHIN_S, f"mpirun ended {launch.ended - died:.3f} s after the fault")
    launch.check_nothing_left(since=died)


def run_signal_to_mpirun(mpirun, nranks, argv, sig):
    """mpirun gets `sig` while every rank waits: exit 128+sig, one message
    naming the signal, every rank gone within 1 s."""
    launch = Launch(mpirun, ["-n", str(nranks)] + argv)
    launch.wait_for_lines(is_ready, nranks)
    sent = time.monotonic()
    os.kill(launch.proc.pid, sig)
    rc = launch.wait()
    if sig == signal.SIGKILL:
        check(rc == -signal.SIGKILL, f"mpirun exit status {rc} after SIGKILL")
        launch.check_nothing_left(since=sent)
        return
    expect(launch, rc, 128 + sig, [f"received signal {int(sig)} ({signal.strsignal(sig)})"],
           stderr_lines=1)
    check_soon(launch.ended - sent < GONE_WITHIN_S, f"mpirun ended {launch.ended - sent:.3f} s after {sig!r}")
    launch.check_nothing_left(since=sent)


def run_timeout(mpirun, nranks, argv, via_env=False):
    """A job of `argv` that --timeout 0.5 (or, `via_env`, MPICH's
    MPIEXEC_TIMEOUT=0.5) ends with status 124 in time, leaving nothing."""
    limit = "MPIEXEC_TIMEOUT=0.5" if via_env else "--timeout 0.5"
    launch = Launch(mpirun, ["-n", str(nranks)] + ([] if via_env else ["--timeout", "0.5"]) + argv,
                    env_extra={"MPIEXEC_TIMEOUT": "0.5"} if via_env else None)
    rc = launch.wait()
    expect(launch, rc, 124, [limit], stderr_lines=1)
    elapsed = launch.ended - launch.started
    check(0.5 <= elapsed, f"{limit} ended the job after {elapsed:.3f} s")
    check_soon(elapsed < 0.5 + GONE_WITHIN_S + 0.5, f"{limit} ended the job after {elapsed:.3f} s")
    launch.check_nothing_left()


def check_lines(output, nranks, nlines, tagged=True):
    """Every line of many_lines (or its shell twin) arrived whole, in order
    within each rank, and the unterminated last line arrived too."""
    seen = {r: 0 for r in range(nranks)}
    ended = set()
    for raw in output.split(b"\n")[:-1]:
        line = raw.decode()
        if tagged:
            check(line.startswith("["), f"untagged line {line[:80]!r}")
            tag, _, line = line.partition("] ")
        words = line.split(" ")
        rank = int(words[0])
        if tagged:
            check(tag == f"[{rank}", f"line of rank {rank} tagged {tag}]")
        if words[1] == "end":
            check(len(words) == 2 and rank not in ended, f"bad end line {line!r}")
            ended.add(rank)
            continue
        i, length = int(words[1]), int(words[2])
        check(i == seen[rank], f"rank {rank}: line {i} where line {seen[rank]} was due")
        payload = "".join(chr(ord("a") + (i + k + rank) % 26) for k in range(length))
        check(len(words) == 4 and words[3] == payload,
              f"rank {rank} line {i} damaged: {line[:120]!r}")
        seen[rank] += 1
    check(output.endswith(b"\n"), "output does not end with a newline")
    for r in range(nranks):
        check(seen[r] == nlines, f"rank {r}: {seen[r]} of {nlines} lines arrived")
        check(r in ended, f"rank {r}: its last line (no newline) was lost")


# ---- shell cases: the launcher alone ----------------------------------------

SH_WAIT = 'echo ready $SHMPI_RANK $$; exec sleep 30'

# A shell twin of many_lines.c: the same lines, written with os.write in
# chunks that cut through lines.
PY_LINES = r'''
import os, random, sys
r = int(os.environ["SHMPI_RANK"]); n = int(sys.argv[1])
rnd = random.Random(r); buf = bytearray()
for i in range(n):
    ln = (i * 7 + r * 13) % 300
    buf += ("%d %d %d %s\n" % (r, i, ln, "".join(chr(97 + (i + k + r) % 26) for k in range(ln)))).encode()
    if len(buf) > 8192:
        cut = len(buf) - rnd.randrange(200) - 1
        os.write(1, bytes(buf[:cut])); del buf[:cut]
os.write(1, bytes(buf)); os.write(1, b"%d end" % r)
'''


def sh_ok(m, _):
    launch = Launch(m, ["-n", "3", "true"])
    expect(launch, launch.wait(), 0, stderr_lines=0)
    launch.check_nothing_left()


def sh_window_names_removed(m, _):
    """What a job leaves of a one-sided window's name (shmpi-UID-PID-win-*,
    made while its ranks create a window) mpirun removes when the job ends;
    names of another mpirun's windows stay.  The ranks make such names
    themselves: a rank's parent is mpirun."""
    other = f"/dev/shm/shmpi-{os.getuid()}-1-win-not-this-job"
    with open(other, "w"):
        pass
    try:
        launch = Launch(m, ["-n", "2", "sh", "-c", 'touch "/dev/shm/shmpi-$(id -u)-$PPID-win-rank$SHMPI_RANK"'])
        expect(launch, launch.wait(), 0, stderr_lines=0)
        launch.check_nothing_left()
        check(os.path.exists(other), "mpirun removed another job's window name")
    finally:
        os.unlink(other)


def sh_exit_code(m, _):
    run_victim(m, 3, ["sh", "-c", SH_WAIT.replace("exec", '[ $SHMPI_RANK = 1 ] && { sleep 0.3; echo dying 1; exit 3; }; exec')],
               3, "shmpi: mpirun: rank 1 exited with code 3; ending the job", 1)


def sh_kill9(m, _):
    run_victim(m, 3, ["sh", "-c", SH_WAIT.replace("exec", '[ $SHMPI_RANK = 2 ] && { sleep 0.3; echo dying 2; kill -9 $$; }; exec')],
               137, "shmpi: mpirun: rank 2 (pid {pid}) was killed by signal 9 (Killed); ending the job", 2)


def sh_segv(m, _):
    run_victim(m, 3, ["sh", "-c", SH_WAIT.replace("exec", '[ $SHMPI_RANK = 0 ] && { sleep 0.3; echo dying 0; kill -SEGV $$; }; exec')],
               139, "shmpi: mpirun: rank 0 (pid {pid}) was killed by signal 11 (Segmentation fault); ending the job", 0)


def sh_sigint(m, _):
    run_signal_to_mpirun(m, 3, ["sh", "-c", SH_WAIT], signal.SIGINT)


def sh_sigterm(m, _):
    run_signal_to_mpirun(m, 3, ["sh", "-c", SH_WAIT], signal.SIGTERM)


def sh_sighup(m, _):
    run_signal_to_mpirun(m, 3, ["sh", "-c", SH_WAIT], signal.SIGHUP)


def sh_ignored_signals_kept(m, _):
    """A job-ending signal that mpirun was started with ignored (nohup's
    SIGHUP, the SIGINT of a script's `cmd &`) stays ignored: the job runs
    on and ends well.  The ranks inherit it ignored, as the shell would
    give it to any command."""
    for sigs in ((signal.SIGHUP,), JOB_ENDING_SIGNALS):
        names = "+".join(s.name for s in sigs)
        launch = Launch(m, ["-n", "2", "sh", "-c", "echo ready $SHMPI_RANK $$; sleep 1; kill -s HUP $$; echo done"],
                        ignored=sigs)
        launch.wait_for_lines(is_ready, 2)
        for sig in sigs:
            os.kill(launch.proc.pid, sig)
        rc = launch.wait()
        expect(launch, rc, 0, stderr_lines=0)
        done = [l for _, l in launch.lines if l.startswith(b"done")]
        check(len(done) == 2, f"{names} ignored: the ranks did not finish; stdout {launch.output()!r}")
        launch.check_nothing_left()


def sh_sigterm_ignored(m, _):
    """Ranks that ignore SIGTERM get SIGKILL after the grace."""
    run_signal_to_mpirun(m, 3, ["sh", "-c", "trap '' TERM; " + SH_WAIT], signal.SIGTERM)


def sh_sigkill(m, _):
    """mpirun killed outright: the ranks die with it (PR_SET_PDEATHSIG)."""
    run_signal_to_mpirun(m, 3, ["sh", "-c", SH_WAIT], signal.SIGKILL)


# Ranks that take SIGUSR1 and SIGUSR2 from sigwait() and say so.
PY_SIGWAIT = r'''
import os, signal
r = os.environ["SHMPI_RANK"]; sigs = {signal.SIGUSR1, signal.SIGUSR2}
signal.pthread_sigmask(signal.SIG_BLOCK, sigs)
print("ready", r, os.getpid(), flush=True)
for _ in range(2):
    print("got", r, signal.Signals(signal.sigwait(sigs)).name, flush=True)
'''


def sh_sigusr_forwarded(m, _):
    """SIGUSR1 and SIGUSR2 to mpirun go on to every rank, as Open MPI's
    mpirun does, and the job goes on; a rank that does not handle one dies
    of it, which ends the job like any killed rank."""
    launch = Launch(m, ["-n", "3", sys.executable, "-c", PY_SIGWAIT])
    launch.wait_for_lines(is_ready, 3)
    for sig in (signal.SIGUSR1, signal.SIGUSR2):
        os.kill(launch.proc.pid, sig)
        launch.wait_for_lines(lambda l, name=sig.name.encode(): l.startswith(b"got ") and l.split()[2] == name, 3)
    expect(launch, launch.wait(), 0, stderr_lines=0)
    got = {r: [l.split()[2].decode() for _, l in launch.lines if l.startswith(b"got %d " % r)] for r in range(3)}
    check(all(names == ["SIGUSR1", "SIGUSR2"] for names in got.values()), f"signals each rank got: {got}")
    launch.check_nothing_left()

    launch = Launch(m, ["-n", "2", "sh", "-c", SH_WAIT])
    launch.wait_for_lines(is_ready, 2)
    sent = time.monotonic()
    os.kill(launch.proc.pid, signal.SIGUSR1)
    rc = launch.wait()
    expect(launch, rc, 128 + signal.SIGUSR1, ["was killed by signal 10 (User defined signal 1); ending the job"],
           stderr_lines=1)
    check_soon(launch.ended - sent < GONE_WITHIN_S, f"mpirun ended {launch.ended - sent:.3f} s after SIGUSR1")
    launch.check_nothing_left(since=sent)


def sh_timeout(m, _):
    run_timeout(m, 2, ["sh", "-c", SH_WAIT])


def sh_mpiexec_timeout(m, _):
    """MPICH's MPIEXEC_TIMEOUT is --timeout when the command line has none;
    --timeout wins over it; a bad value is a usage error."""
    run_timeout(m, 2, ["sh", "-c", SH_WAIT], via_env=True)
    launch = Launch(m, ["-n", "2", "--timeout", "0.5", "sh", "-c", SH_WAIT], env_extra={"MPIEXEC_TIMEOUT": "100"})
    rc = launch.wait()
    expect(launch, rc, 124, ["the job ran longer than --timeout 0.5 s"], stderr_lines=1)
    launch.check_nothing_left()
    for value in ("0", ""):
        launch = Launch(m, ["-n", "1", "true"], env_extra={"MPIEXEC_TIMEOUT": value})
        expect(launch, launch.wait(), 0, stderr_lines=0)
    launch = Launch(m, ["-n", "1", "true"], env_extra={"MPIEXEC_TIMEOUT": "10s"})
    expect(launch, launch.wait(), 2, ["MPIEXEC_TIMEOUT='10s': expected a number of seconds"], stderr_lines=1)


# Ranks that are shells with children of their own: mpirun (their child
# subreaper) must end those too when the job ends early.
SH_FAMILY = 'echo ready $SHMPI_RANK $$; sleep 30 & sleep 30 | cat; wait'


def expect_cut(launch, rc, how, limit):
    """The status and cause line of a launch ended by --timeout `limit`
    (`how` "timeout") or by SIGTERM."""
    if how == "timeout":
        expect(launch, rc, 124, [f"the job ran longer than --timeout {limit} s"])
    else:
        expect(launch, rc, 128 + signal.SIGTERM, [f"received signal {int(signal.SIGTERM)}"])


def sh_launch_cut_short(m, _):
    """--timeout and SIGTERM end a job whose launch is still going: 400
    ranks that busy-loop at once take the CPUs from mpirun, so on a
    machine of few CPUs starting the last of them takes seconds.  mpirun
    stops starting ranks, ends those it started, and says how many."""
    busy = "while :; do :; done"
    for how in ("timeout", "sigterm"):
        args = ["-n", "400"] + (["--timeout", "0.5"] if how == "timeout" else []) + ["sh", "-c", busy]
        launch = Launch(m, args)
        if how == "sigterm":
            # (No "ready" line to wait for: mpirun relays output once every
            # rank has started.)
            time.sleep(0.5)
            sent = time.monotonic()
            os.kill(launch.proc.pid, signal.SIGTERM)
        else:
            sent = launch.started + 0.5
        rc = launch.wait()
        expect_cut(launch, rc, how, "0.5")
        text = launch.stderr.decode(errors="replace")
        cut = re.search(r"stopped starting ranks after (\d+) of 400", text)
        check(cut is None or 0 < int(cut.group(1)) < 400, f"{how}: the cut names a wrong count" + launch.stderr_text())
        # mpirun looks between forks, and while it sizes the segment
        # (sh_sizing_cut_short) only between steps of it; the machine is
        # saturated by the ranks started.  (The launch as a whole took
        # minutes there before the cut.)
        check_soon(launch.ended - sent < GONE_WITHIN_S + 4.0,
                   f"{how}: mpirun ended {launch.ended - sent:.3f} s after the job should have ended"
                   + launch.stderr_text())
        launch.check_nothing_left()


def segment_open(pid):
    """Whether mpirun `pid` holds a shmpi segment open: it is sizing it or
    running the job (the name is gone by then, the descriptor is not)."""
    try:
        fds = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        return False
    for fd in fds:
        try:
            if os.readlink(f"/proc/{pid}/fd/{fd}").startswith("/dev/shm/shmpi-"):
                return True
        except OSError:
            continue
    return False


def sh_sizing_cut_short(m, _):
    """SIGTERM and --timeout end a launch while mpirun still reserves the
    pages of a large segment (800 ranks: 5.9 GB, about 2.5 s of fallocate
    on the 2-CPU VM, during which mpirun heard nothing before): it reserves
    them a step at a time and looks between steps, so the job ends at once,
    with the usual cause line and status and nothing left in /dev/shm."""
    for how in ("sigterm", "timeout"):
        args = ["-n", "800"] + (["--timeout", "0.2"] if how == "timeout" else []) + ["true"]
        launch = Launch(m, args)
        if how == "sigterm":
            deadline = time.monotonic() + 20
            while not segment_open(launch.proc.pid) and launch.proc.poll() is None:
                check(time.monotonic() < deadline, "mpirun opened no segment within 20 s")
                time.sleep(0.002)
            sent = time.monotonic()
            os.kill(launch.proc.pid, signal.SIGTERM)
        else:
            sent = launch.started + 0.2
        rc = launch.wait()
        text = launch.stderr.decode(errors="replace")
        if rc == 1 and ("/dev/shm has" in text or "needs" in text and "of memory" in text):
            raise CaseSkipped("no room for an 800-rank segment here: " + text.strip())
        expect_cut(launch, rc, how, "0.2")
        check_soon(launch.ended - sent < GONE_WITHIN_S,
                   f"{how}: mpirun ended {launch.ended - sent:.3f} s after the job should have ended"
                   + launch.stderr_text())
        launch.check_nothing_left()


def sh_timeout_leftovers(m, _):
    run_timeout(m, 2, ["sh", "-c", SH_FAMILY])


def sh_sigterm_leftovers(m, _):
    run_signal_to_mpirun(m, 2, ["sh", "-c", SH_FAMILY], signal.SIGTERM)


def sh_inherited_child_kept(m, _):
    """A child mpirun had before the job (its parent's, inherited through
    exec) is not the job's: it outlives a job that ends early."""
    marker = "30.%d" % os.getpid()  # a sleep only this case starts
    launch = Launch("sh", ["-c", f'env -u {TAG_VAR} sleep {marker} >/dev/null 2>&1 & exec "$0" -n 2 --timeout 0.5 sh -c "$1"',
                           m, SH_FAMILY])
    rc = launch.wait()
    check(rc == 124, f"exit status {rc}, expected 124" + launch.stderr_text())
    launch.check_nothing_left()
    survivors = [p for p in os.listdir("/proc") if p.isdigit() and _cmdline(p) == ["sleep", marker]]
    check(len(survivors) == 1, f"mpirun's own child 'sleep {marker}' did not survive the job: {survivors}")
    for p in survivors:
        os.kill(int(p), signal.SIGKILL)


def sh_quick_rank_leftovers(m, _):
    """A rank that exits at once, leaving a process behind, while mpirun
    still forks the other ranks: that process is the job's, not one mpirun
    inherited, and a job that then fails ends it too (mpirun took it for an
    inherited child, 16 times in 20 runs, before it looked at its children
    ahead of the first fork)."""
    prog = '[ $SHMPI_RANK = 0 ] && { sleep 30 & exit 0; }; sleep 0.3; exit 3'
    for _ in range(3):
        launch = Launch(m, ["-n", "16", "sh", "-c", prog])
        rc = launch.wait()
        expect(launch, rc, 3, ["exited with code 3"], stderr_lines=1)
        launch.check_nothing_left()


def _cmdline(pid):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return [w.decode(errors="replace") for w in f.read().split(b"\0")[:-1]]
    except OSError:
        return []


def sh_stalled_reader(m, _):
    """Ranks print without end into an mpirun whose reader reads nothing:
    --timeout and SIGTERM still end the job at once, exit 124 and 143."""
    for how in ("timeout", "sigterm"):
        tag = uuid.uuid4().hex
        env = dict(os.environ, **{TAG_VAR: tag})
        args = [m, "-n", "2"] + (["--timeout", "0.5"] if how == "timeout" else []) + ["yes"]
        started = time.monotonic()
        proc = subprocess.Popen(args, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.DEVNULL)
        try:
            if how == "sigterm":
                time.sleep(0.5)  # the pipe to us is full long before
                proc.send_signal(signal.SIGTERM)
            try:
                rc = proc.wait(0.5 + GONE_WITHIN_S + 2)
            except subprocess.TimeoutExpired:
                raise CaseFailed(f"{how}: mpirun did not end while its reader stalled")
            elapsed = time.monotonic() - started
            want = 124 if how == "timeout" else 128 + signal.SIGTERM
            check(rc == want, f"{how}: exit status {rc}, expected {want}")
            check_soon(elapsed < 0.5 + GONE_WITHIN_S + 0.5, f"{how}: mpirun took {elapsed:.3f} s")
            deadline = time.monotonic() + GONE_WITHIN_S
            while tagged_live_pids(tag) and time.monotonic() < deadline:
                time.sleep(0.01)
            check(not tagged_live_pids(tag), f"{how}: ranks left: {tagged_live_pids(tag)}")
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
            proc.stdout.close()


def sh_open_files_limit(m, _):
    """A descriptor limit too low for the job's pipes (`ulimit -n 16`, soft
    and hard, so mpirun cannot raise it) fails the start with one message
    that names the limit and what to raise it to."""
    launch = Launch("sh", ["-c", 'ulimit -S -n 16 && ulimit -H -n 16 && exec "$0" -n 8 true', m])
    rc = launch.wait()
    expect(launch, rc, 1, ["shmpi: mpirun: cannot create the ", " pipe for rank ",
                           ": Too many open files (the limit on open files is 16; a job of 8 ranks needs up to "
                           "80: raise it, `ulimit -n 80`)\n"], stderr_lines=1)
    launch.check_nothing_left()


def sh_exec_failure(m, _):
    launch = Launch(m, ["-n", "2", "./nope-does-not-exist"])
    rc = launch.wait()
    expect(launch, rc, 127)
    check(launch.stderr == b"shmpi: mpirun: cannot run './nope-does-not-exist': No such file or directory\n",
          "exec failure message" + launch.stderr_text())
    launch.check_nothing_left()
    # A bare name is looked up on PATH only; the message says so, and how
    # to run the program of that name in the ranks' directory.
    with tempfile.TemporaryDirectory() as d:
        prog = os.path.join(d, "shmpi-local-prog")
        with open(prog, "w") as f:
            f.write("#!/bin/sh\nexit 0\n")
        os.chmod(prog, 0o755)
        # The ranks' PATH (-x, -genv) is the one searched, as with MPICH and
        # Open MPI, not mpirun's.
        for words in (["-x", f"PATH={d}:/usr/bin:/bin"], ["-genv", "PATH", f"{d}:/usr/bin:/bin"]):
            launch = Launch(m, ["-n", "2"] + words + ["shmpi-local-prog"])
            expect(launch, launch.wait(), 0, stderr_lines=0)
            launch.check_nothing_left()
        for name, hint in (("shmpi-local-prog", f"to run the one in '{d}', write ./shmpi-local-prog)"),
                           ("shmpi-nowhere-prog", "(not found on PATH)")):
            launch = Launch(m, ["-n", "2", "--wdir", d, name])
            rc = launch.wait()
            expect(launch, rc, 127)
            check(launch.stderr.decode().endswith(hint + "\n"), "exec failure hint" + launch.stderr_text())
            launch.check_nothing_left()


def sh_stdin(m, _):
    data = bytes(range(256)) * 1000
    launch = Launch(m, ["-n", "3", "--tag-output", "sh", "-c", "wc -c"], stdin_data=data)
    rc = launch.wait()
    expect(launch, rc, 0, stderr_lines=0)
    lines = sorted(launch.output().decode().split("\n")[:-1])
    check([l.split() for l in lines] == [["[0]", str(len(data))], ["[1]", "0"], ["[2]", "0"]],
          f"stdin went elsewhere than rank 0: {lines}")
    launch.check_nothing_left()


def sh_lines(m, _):
    nranks, nlines = 4, 20000  # about 3 MB per rank
    launch = Launch(m, ["-n", str(nranks), "--tag-output", sys.executable, "-c", PY_LINES, str(nlines)])
    rc = launch.wait(60)
    expect(launch, rc, 0, stderr_lines=0)
    check_lines(launch.output(), nranks, nlines)
    launch.check_nothing_left()


def sh_untagged_last_line(m, _):
    # Untagged output is passed on byte for byte: no newline is added.
    launch = Launch(m, ["-n", "1", "printf", "no newline"])
    expect(launch, launch.wait(), 0, stderr_lines=0)
    check(launch.output() == b"no newline", f"got {launch.output()!r}")
    launch.check_nothing_left()
    # Tagged, the last line gets one, so that the next rank's tag starts a line.
    launch = Launch(m, ["-n", "2", "--tag-output", "printf", "a\\nno newline"])
    expect(launch, launch.wait(), 0, stderr_lines=0)
    got = sorted(launch.output().split(b"\n"))
    check(got == [b"", b"[0] a", b"[0] no newline", b"[1] a", b"[1] no newline"], f"got {launch.output()!r}")
    launch.check_nothing_left()


def sh_binary_output(m, _):
    # 9 MB with newlines only in its first few KB: more than the 8 MiB an
    # unfinished line may grow to before mpirun writes it, which must not
    # add or change a byte.
    data = bytearray(os.urandom(9_000_000))
    for i in range(4096, len(data)):
        if data[i] == 0x0A:
            data[i] = 0x0B
    with tempfile.NamedTemporaryFile(prefix="shmpi-bin-") as f:
        f.write(data)
        f.flush()
        launch = Launch(m, ["-n", "1", "cat", f.name])
        expect(launch, launch.wait(60), 0, stderr_lines=0)
    out = launch.output()
    check(out == bytes(data), f"{len(data)} bytes in, {len(out)} out, first difference at "
          f"{next((i for i, (a, b) in enumerate(zip(out, data)) if a != b), min(len(out), len(data)))}")
    launch.check_nothing_left()


def first_output(m, args, within):
    """Runs mpirun with `args`; returns (seconds to its first stdout bytes,
    those bytes, all of stdout, exit status)."""
    start = time.monotonic()
    proc = subprocess.Popen([m] + args, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=dict(os.environ, **{TAG_VAR: uuid.uuid4().hex}))
    first = os.read(proc.stdout.fileno(), 4096)
    took = time.monotonic() - start
    rest, err = proc.communicate(timeout=within)
    check(proc.returncode == 0, f"exit status {proc.returncode}: {err.decode(errors='replace')}")
    return took, first, first + rest


def sh_partial_line(m, _):
    # A prompt without a newline shows while the rank waits (mpirun holds
    # an unfinished line 0.2 s for its rest, then writes it as it is).
    prog = 'printf "prompt: "; sleep 3; echo done'
    took, first, out = first_output(m, ["-n", "1", "sh", "-c", prog], 30)
    check(first == b"prompt: " and out == b"prompt: done\n", f"got {first!r}, then {out!r}")
    if took > 2.0:
        raise TooSlow(f"the prompt came after {took:.2f} s, with the rest of its line")
    # Tagged: the tag comes once, before the first part.
    took, first, out = first_output(m, ["-n", "1", "--tag-output", "sh", "-c", prog], 30)
    check(first == b"[0] prompt: " and out == b"[0] prompt: done\n", f"got {first!r}, then {out!r}")
    if took > 2.0:
        raise TooSlow(f"the tagged prompt came after {took:.2f} s, with the rest of its line")
    # Tagged, with another rank's line between the parts: every tag starts
    # a line.  The prompt's line is ended before the other rank's line, and
    # its rest comes on a line of its own, tagged again.
    prog = ('if [ "$SHMPI_RANK" = 0 ]; then printf "prompt: "; sleep 3; echo done; '
            'else sleep 1.5; echo other; fi')
    took, first, out = first_output(m, ["-n", "2", "--tag-output", "sh", "-c", prog], 30)
    if took > 1.4:
        raise TooSlow(f"the tagged prompt came after {took:.2f} s, not before the other rank's line")
    check(out == b"[0] prompt: \n[1] other\n[0] done\n", f"got {out!r}")


def sh_stdout_write_error(m, _):
    # A standard output that fails (a full disk) ends the job, and says why.
    with open("/dev/full", "wb") as full:
        launch = Launch(m, ["-n", "2", "sh", "-c", "echo hello; sleep 5"], stdout_to=full)
        rc = launch.wait()
    expect(launch, rc, 1, stderr_has=["cannot write to standard output: No space left on device"],
           stderr_lines=1)
    check(launch.ended - launch.started < 4, "the job ran on after its output failed")
    launch.check_nothing_left()


def sh_stdout_closed(m, _):
    # mpirun started with its standard output closed: the job's output
    # cannot go anywhere, which ends the job with the error (as `cat >&-`
    # fails), not with status 0 and the output silently dropped.
    started = time.monotonic()
    done = subprocess.run(["sh", "-c", 'exec "$0" -n 2 sh -c "echo hello; sleep 5" >&-', m],
                          stdin=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=30)
    err = done.stderr.decode(errors="replace")
    check(done.returncode == 1, f"exit status {done.returncode}, expected 1; stderr:\n{err}")
    check("cannot write to standard output: Bad file descriptor" in err, f"stderr:\n{err}")
    check(time.monotonic() - started < 4, "the job ran on after its output failed")
    # With no output at all, a closed stdout is no error.
    done = subprocess.run(["sh", "-c", 'exec "$0" -n 2 true >&-', m], stdin=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, timeout=30)
    check(done.returncode == 0, f"exit status {done.returncode} with no output; stderr:\n{done.stderr!r}")


# A rank that leaves a process behind which holds its stdout and stderr and
# writes to them after the rank has exited.
SH_LATE = '(sleep {delay}; echo late $SHMPI_RANK; echo late-err $SHMPI_RANK >&2) & echo early $SHMPI_RANK'


def sh_background_output(m, _):
    """After ranks that all exit 0, mpirun relays until their pipes close,
    as MPICH's and Open MPI's do: what a process the rank left running
    writes later is not lost, and that process does not outlive mpirun."""
    launch = Launch(m, ["-n", "2", "--tag-output", "sh", "-c", SH_LATE.format(delay=1)])
    rc = launch.wait()
    expect(launch, rc, 0, stderr_has=["[0] late-err 0", "[1] late-err 1"], stderr_lines=0)
    lines = sorted(launch.output().decode().split("\n")[:-1])
    check(lines == ["[0] early 0", "[0] late 0", "[1] early 1", "[1] late 1"], f"got {lines}")
    launch.check_nothing_left()


def sh_background_output_wait(m, _):
    """The wait for those pipes lasts SHMPI_OUTPUT_WAIT seconds at most:
    then mpirun says which pipes are still open and exits 0, leaving those
    processes alone; with 0 it does not wait (nor say anything)."""
    for wait, note in (("0.5", True), ("0", False)):
        launch = Launch(m, ["-n", "2", "sh", "-c", "[ $SHMPI_RANK = 0 ] && exec >/dev/null; " + SH_LATE.format(delay=30)],
                        env_extra={"SHMPI_OUTPUT_WAIT": wait})
        rc = launch.wait()
        try:
            want = ["every rank has exited, but processes they started have held the stdout and stderr of "
                    "rank 1, the stderr of rank 0 open for 0.5 s more"]
            expect(launch, rc, 0, stderr_has=want if note else [], stderr_lines=1 if note else 0)
            lines = sorted(launch.output().decode().split("\n")[:-1])
            check(lines == ["early 1"], f"got {lines}")
            took = launch.ended - launch.started
            check(took >= float(wait), f"SHMPI_OUTPUT_WAIT={wait}: mpirun ended after {took:.3f} s")
            check_soon(took < float(wait) + GONE_WITHIN_S, f"SHMPI_OUTPUT_WAIT={wait}: mpirun ended after {took:.3f} s")
            check(tagged_live_pids(launch.tag), f"SHMPI_OUTPUT_WAIT={wait}: the ranks' background processes were ended")
        finally:
            for pid in tagged_live_pids(launch.tag):
                os.kill(pid, signal.SIGKILL)
    launch = Launch(m, ["-n", "1", "true"], env_extra={"SHMPI_OUTPUT_WAIT": "-1"})
    expect(launch, launch.wait(), 2, ["SHMPI_OUTPUT_WAIT='-1': expected a number of seconds"], stderr_lines=1)


def sh_background_output_ended(m, _):
    """While mpirun waits for the pipes of ranks that have exited, SIGINT
    and --timeout end the wait at once, and the processes that hold them;
    a rank that fails while another's background process holds its pipes
    ends the job at once too."""
    for how in ("sigint", "timeout", "rank fails"):
        args = ["-n", "2", "sh", "-c", SH_LATE.format(delay=30)]
        if how == "timeout":
            args = ["--timeout", "1"] + args
        if how == "rank fails":
            args[-1] = "[ $SHMPI_RANK = 1 ] && { sleep 0.5; echo dying 1; exit 3; }; " + args[-1]
        launch = Launch(m, args)
        launch.wait_for_lines(lambda l: l.startswith(b"early "), 1 if how == "rank fails" else 2)
        if how == "sigint":
            time.sleep(0.2)  # both ranks have exited by now, or nearly
            sent = time.monotonic()
            os.kill(launch.proc.pid, signal.SIGINT)
            expect(launch, launch.wait(), 128 + signal.SIGINT, ["received signal 2 (Interrupt)"], stderr_lines=1)
        elif how == "timeout":
            expect(launch, launch.wait(), 124, ["--timeout 1 s"], stderr_lines=1)
            sent = launch.started + 1
        else:
            sent = launch.wait_for_lines(is_dying, 1)
            expect(launch, launch.wait(), 3, ["rank 1 exited with code 3"], stderr_lines=1)
        check_soon(launch.ended - sent < GONE_WITHIN_S, f"{how}: mpirun ended {launch.ended - sent:.3f} s after it")
        try:
            launch.check_nothing_left(since=sent)
        except CaseFailed as e:
            raise type(e)(f"{how}: {e}")


def sh_env(m, _):
    launch = Launch(m, ["-n", "2", "-x", "FWD_A=1", "-x", "FWD_B", "-x", "FWD_C=x=y", "--tag-output",
                        "sh", "-c", 'echo "A=$FWD_A B=$FWD_B C=$FWD_C D=$FWD_D R=$SHMPI_RANK S=$SHMPI_SIZE"'],
                    env_extra={"FWD_B": "bee", "FWD_C": "old", "FWD_D": "whole env"})
    expect(launch, launch.wait(), 0, stderr_lines=0)
    lines = sorted(launch.output().decode().split("\n")[:-1])
    check(lines == [f"[{r}] A=1 B=bee C=x=y D=whole env R={r} S=2" for r in range(2)], f"got {lines}")
    launch.check_nothing_left()


def sh_env_rep_movsb(m, _):
    """SHMPI_REP_MOVSB (tools/launcher/copy_probe.hpp): `avoid` appends glibc's
    rep-movsb threshold to the ranks' GLIBC_TUNABLES, -x settings included,
    unless they set it already; `keep` leaves them alone; another value is a
    usage error.  (`auto`, the default, depends on the CPU: not checked.)"""
    setting = "glibc.cpu.x86_rep_movsb_threshold=2147483647"
    for mode, args, tunables, want in (
            ("avoid", [], "glibc.malloc.arena_max=2", f"glibc.malloc.arena_max=2:{setting}"),
            ("avoid", [], None, setting),
            ("avoid", ["-x", "GLIBC_TUNABLES=glibc.malloc.arena_max=3"], "glibc.malloc.arena_max=2",
             f"glibc.malloc.arena_max=3:{setting}"),
            ("avoid", [], "glibc.cpu.x86_rep_movsb_threshold=9000", "glibc.cpu.x86_rep_movsb_threshold=9000"),
            ("keep", [], "glibc.malloc.arena_max=2", "glibc.malloc.arena_max=2"),
            ("keep", [], None, "")):
        env = {"SHMPI_REP_MOVSB": mode}
        if tunables is not None:
            env["GLIBC_TUNABLES"] = tunables
        launch = Launch(m, args + ["-n", "2", "sh", "-c", 'echo "T=$GLIBC_TUNABLES"'], env_extra=env,
                        env_remove=("GLIBC_TUNABLES",))
        expect(launch, launch.wait(), 0, stderr_lines=0)
        lines = launch.output().decode().split("\n")[:-1]
        check(lines == [f"T={want}"] * 2, f"{mode} {args} {tunables}: got {lines}, expected T={want}")
        launch.check_nothing_left()
    launch = Launch(m, ["-n", "1", "true"], env_extra={"SHMPI_REP_MOVSB": "never"})
    expect(launch, launch.wait(), 2, ["SHMPI_REP_MOVSB='never'"], stderr_lines=1)


def sh_env_kernel_copies(m, _):
    """SHMPI_KERNEL_COPIES (tools/launcher/copy_probe.hpp) is read by mpirun,
    which records its verdict in the segment: `fast`, `slow` and `auto` start
    the job, another value is a usage error that names the setting and its
    value.  (Which verdict `auto` reaches depends on the machine, and the
    collectives' choice is not visible from outside: test/coll runs the
    programs under both verdicts.)"""
    for mode in ("fast", "slow", "auto", ""):  # empty: unset, as for every setting
        launch = Launch(m, ["-n", "2", "sh", "-c", "echo started"], env_extra={"SHMPI_KERNEL_COPIES": mode})
        expect(launch, launch.wait(), 0, stderr_lines=0)
        lines = launch.output().decode().split("\n")[:-1]
        check(lines == ["started"] * 2, f"{mode}: got {lines}")
        launch.check_nothing_left()
    for bad in ("never", "Slow"):
        launch = Launch(m, ["-n", "1", "true"], env_extra={"SHMPI_KERNEL_COPIES": bad})
        expect(launch, launch.wait(), 2, [f"SHMPI_KERNEL_COPIES='{bad}'", "expected auto, fast or slow"],
               stderr_lines=1)
    # `auto` keeps its verdict for the next minute's launches: a private
    # file of this user's, in the format copy_probe.hpp gives.
    kept = f"/dev/shm/shmpi-{os.getuid()}-copies"
    if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK):
        st = os.lstat(kept) if os.path.lexists(kept) else None
        check(st is not None, f"no {kept} after an `auto` launch of 2 ranks")
        check(st.st_uid == os.getuid() and st.st_mode & 0o777 == 0o600 and (st.st_mode & 0o170000) == 0o100000,
              f"{kept}: mode {st.st_mode:o}, owner {st.st_uid}")
        with open(kept, "rb") as f:
            text = f.read()
        check(re.fullmatch(rb"shmpi-copies 1 [^ /]+/[0-9,-]+ [0-9]+ [01]\n", text), f"{kept}: {text!r}")


def sh_env_launcher_settings(m, _):
    """The settings mpirun reads itself take their values from -x and -genv
    too, as the ranks do: checked and applied like the same in the
    environment."""
    quiet = {"SHMPI_RING_CELLS", "SHMPI_KERNEL_COPIES", "SHMPI_TOPOLOGY"}
    launch = Launch(m, ["-x", "SHMPI_RING_CELLS=3", "-n", "2", "true"], env_remove=quiet)
    expect(launch, launch.wait(), 1, ["SHMPI_RING_CELLS=3 must be a power of two"])
    launch = Launch(m, ["--genv", "SHMPI_KERNEL_COPIES", "bogus", "-n", "2", "true"], env_remove=quiet)
    expect(launch, launch.wait(), 2, ["SHMPI_KERNEL_COPIES='bogus'"], stderr_lines=1)
    launch = Launch(m, ["-x", "SHMPI_TOPOLOGY=package:2 core:4 pu:1", "--report-bindings", "-n", "2", "true"],
                    env_remove=quiet)
    expect(launch, launch.wait(), 0, ["synthetic topology 'package:2 core:4 pu:1'"])
    launch.check_nothing_left()


# The rank numbers Open MPI's and MPICH's launchers give, which job scripts
# read: each rank gets its own, over any left from an enclosing job (an MPMD
# job's second program included).
PORTABLE = ("OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK",
            "OMPI_COMM_WORLD_LOCAL_SIZE", "OMPI_COMM_WORLD_NODE_RANK", "OMPI_UNIVERSE_SIZE",
            "PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID", "MPI_LOCALNRANKS")


def sh_env_portable_ranks(m, _):
    show = 'echo "$0 ' + " ".join(f"{v}=${v}" for v in PORTABLE) + '"'
    launch = Launch(m, ["-n", "2", "sh", "-c", show, "first", ":", "-n", "1", "sh", "-c", show, "second"],
                    env_extra={"PMI_RANK": "9", "OMPI_COMM_WORLD_SIZE": "77", "MPI_LOCALNRANKS": "5"})
    expect(launch, launch.wait(), 0, stderr_lines=0)
    lines = sorted(launch.output().decode().split("\n")[:-1])

    def want(prog, r):
        values = {v: (r if v.endswith(("RANK", "RANKID")) else 3) for v in PORTABLE}
        return f"{prog} " + " ".join(f"{v}={values[v]}" for v in PORTABLE)
    check(lines == [want("first", 0), want("first", 1), want("second", 2)], f"got {lines}")
    launch.check_nothing_left()


def sh_program_args(m, _):
    launch = Launch(m, ["-np", "2", "sh", "-c", 'printf "%s\\n" "$*"', "sh", "-n", "5", "--foo"])
    expect(launch, launch.wait(), 0, stderr_lines=0)
    check(launch.output() == b"-n 5 --foo\n-n 5 --foo\n", f"got {launch.output()!r}")
    launch.check_nothing_left()


def sh_usage(m, _):
    for args, needle in ((["-n", "0", "true"], "-n '0'"), (["-n", "abc", "true"], "-n 'abc'"),
                         (["--bogus", "true"], "'--bogus'"), (["-n", "2"], "no program"),
                         (["--deadlock-after", "-1", "true"], "--deadlock-after '-1'")):
        launch = Launch(m, args)
        expect(launch, launch.wait(), 2, [needle], stderr_lines=1)
    launch = Launch(m, ["--version"])
    expect(launch, launch.wait(), 0)
    check(launch.output().startswith(b"shmpi mpirun "), f"--version printed {launch.output()!r}")


def sh_segment_failure(m, _):
    launch = Launch(m, ["-n", "64", "true"],
                    env_extra={"SHMPI_RING_CELLS": "1048576", "SHMPI_CELL_BYTES": "1048576"})
    expect(launch, launch.wait(), 1, ["/dev/shm", "SHMPI_RING_CELLS=1048576, SHMPI_CELL_BYTES=1048576 set "
                                                  "the segment's size: a likely cause"])
    launch.check_nothing_left()


def sh_file_size_limit(m, _):
    """Under `ulimit -f`, a segment larger than the limit cannot be sized:
    mpirun says so and exits 1 (SIGXFSZ used to kill it silently)."""
    p = subprocess.run(["sh", "-c", 'ulimit -f 1000 && exec "$0" -n 4 true', m], capture_output=True,
                       timeout=30)
    err = p.stderr.decode()
    check(p.returncode == 1 and "File too large" in err and len(err.splitlines()) == 1,
          f"rc {p.returncode}, stderr {err!r}")
    # The ranks get the signal's disposition back: a rank that writes past
    # the limit dies of SIGXFSZ, as it would without mpirun.
    with tempfile.TemporaryDirectory() as d:
        p = subprocess.run([m, "-n", "1", "sh", "-c", 'ulimit -f 1 && head -c 100000 /dev/zero > "$0"/big',
                            d], capture_output=True, timeout=30)
    check(p.returncode == 128 + signal.SIGXFSZ, f"a rank past the limit: rc {p.returncode}, {p.stderr!r}")


# ---- MPI cases: the launcher with the library -------------------------------

def prog(d, name):
    return os.path.join(d, name)


# For the cases whose ranks wait for ever on purpose until mpirun is
# signalled: a loaded machine must not let the deadlock check end them first.
NO_DEADLOCK_CHECK = ["--deadlock-after", "0"]


def mpi_exit_before_init(m, d):
    """Rank 0 exits 0 without MPI while the others call MPI_Init and wait
    for it: mpirun ends the job (exit 1, one line naming both ranks) instead
    of leaving them waiting; with rank 0 late, once the others attach."""
    for delay in ("0", "0.3"):
        script = f'[ $SHMPI_RANK = 0 ] && exit 0; sleep {delay}; exec "$0" -1 kill'
        launch = Launch(m, ["-n", "3", "sh", "-c", script, prog(d, "victim")])
        rc = launch.wait(10)
        expect(launch, rc, 1, ["rank 0 exited without calling MPI_Init while rank"], stderr_lines=1)
        launch.check_nothing_left()
    # Ranks that all leave without MPI are fine.
    launch = Launch(m, ["-n", "3", "sh", "-c", '[ $SHMPI_RANK = 0 ] || sleep 0.3'])
    expect(launch, launch.wait(), 0, stderr_lines=0)


def mpi_kill9(m, d):
    run_victim(m, 4, [prog(d, "victim"), "2", "kill"], 137,
               "shmpi: mpirun: rank 2 (pid {pid}) was killed by signal 9 (Killed); ending the job", 2)


def mpi_segv(m, d):
    run_victim(m, 4, [prog(d, "victim"), "1", "segv"], 139,
               "shmpi: mpirun: rank 1 (pid {pid}) was killed by signal 11 (Segmentation fault); ending the job", 1)


def mpi_exit_nonzero(m, d):
    run_victim(m, 3, [prog(d, "victim"), "1", "exit3"], 3,
               "shmpi: mpirun: rank 1 exited with code 3; ending the job", 1)


def mpi_no_finalize(m, d):
    run_victim(m, 3, [prog(d, "victim"), "0", "return"], 1,
               "shmpi: mpirun: rank 0 exited without calling MPI_Finalize; ending the job", 0)


def mpi_abort(m, d):
    run_victim(m, 4, [prog(d, "victim"), "1", "abort7"], 7,
               "shmpi: mpirun: rank 1 called MPI_Abort with error code 7; ending the job", 1)
    run_singleton(d, ["victim", "0", "abort7"], 7, "shmpi: MPI_Abort called with error code 7\n")


def mpi_unknown_coll_setting(m, d):
    """A SHMPI_COLL_* variable shmpi does not read (a typo) is noted once,
    by rank 0; known ones are not, nor "auto" where that is the default."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("SHMPI_")}
    for extra, want in (({"SHMPI_COLL_ALLREDUSE": "linear", "SHMPI_COLL_SHM_FLAT": "4"},
                         "shmpi: note: SHMPI_COLL_ALLREDUSE is not a setting of shmpi's collectives, and has no "
                         "effect (docs/COLLECTIVES.md lists SHMPI_COLL_<COLLECTIVE>, README.md the others)\n"),
                        ({"SHMPI_COLL_ALLREDUCE": "linear", "SHMPI_COLL_REGIONS": "2",
                          "SHMPI_COLL_SHM_ALLTOALL": "0"}, ""),
                        # "auto", the default the README gives, is a value too.
                        ({"SHMPI_COLL_SHM_ALLTOALL": "auto", "SHMPI_COLL_SHM_STREAM": "auto",
                          "SHMPI_STAGED_PIECES": "auto", "SHMPI_ALIGNED_STORES": "auto",
                          "SHMPI_STREAMED_PACKS": "auto", "SHMPI_WIDE_COPIES": "256"}, "")):
        p = subprocess.run([m, "-n", "3", prog(d, "print_env"), "X_UNSET"], env={**env, **extra},
                           capture_output=True, timeout=60)
        check(p.returncode == 0 and p.stderr.decode() == want, f"{extra}: rc {p.returncode}, stderr {p.stderr!r}")
        check(sorted(p.stdout.decode().splitlines()) == [f"rank {r} X_UNSET unset" for r in range(3)],
              f"{extra}: stdout {p.stdout!r}")


def mpi_bad_setting(m, d):
    """A bad SHMPI_* setting fails MPI_Init in every rank alike; the job
    prints the message once, not once per rank, and exits 1."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("SHMPI_")}
    for var, value, message in (
            ("SHMPI_EAGER_LIMIT", "abc", "SHMPI_EAGER_LIMIT='abc' is not a number in 0..1073741824"),
            ("SHMPI_STAGED_PIECES", "yes", "SHMPI_STAGED_PIECES='yes' is not 0, 1 or auto"),
            ("SHMPI_SPIN_US", "-1", "SHMPI_SPIN_US='-1' is not a number in 0..10000000"),
            ("SHMPI_COLL_SHM_BAND", "0", "SHMPI_COLL_SHM_BAND='0' is not a number in 1..30"),
            ("SHMPI_COLL_SHM_ALLTOALL", "-2", "SHMPI_COLL_SHM_ALLTOALL='-2' is not auto or a number in -1..1099511627776"),
            ("SHMPI_COLL_SHM_STREAM", "always", "SHMPI_COLL_SHM_STREAM='always' is not auto or a number in -1..1"),
            ("SHMPI_WIDE_COPIES", "off", "SHMPI_WIDE_COPIES='off' is not 0, 1, 256 or 512"),
            ("SHMPI_ALIGNED_STORES", "2", "SHMPI_ALIGNED_STORES='2' is not 0, 1 or auto"),
            ("SHMPI_STREAMED_PACKS", "yes", "SHMPI_STREAMED_PACKS='yes' is not 0, 1 or auto"),
            ("SHMPI_COLL", "fastest", "SHMPI_COLL=fastest names no collective algorithm")):
        for n in ("4", "8"):
            p = subprocess.run([m, "-n", n, prog(d, "print_env"), "X_UNSET"], env={**env, var: value},
                               capture_output=True, timeout=60)
            err = p.stderr.decode()
            lines = err.splitlines()
            check(p.returncode == 1 and p.stdout == b"", f"{var}={value} -n {n}: rc {p.returncode}, {err!r}")
            check(sum(message in line for line in lines) == 1 and len(lines) == 2 and
                  re.fullmatch(r"shmpi: mpirun: rank \d exited with code 1; ending the job", lines[1]),
                  f"{var}={value} -n {n}: want the message once, then mpirun's line: {err!r}")


def mpi_singleton_bad_setting(m, d):
    """A singleton (no mpirun) fails MPI_Init on a bad setting as a job's ranks
    do, the SHMPI_COLL_SHM_* ones too, though it builds no shared-memory team."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("SHMPI_")}
    for var, value in (("SHMPI_COLL_SHM_FLAT", "abc"), ("SHMPI_COLL_SHM_DIRECT", "abc"),
                       ("SHMPI_COLL_SHM_ALLTOALL", "abc"), ("SHMPI_COLL_SHM_MEMBARRIER", "2"),
                       ("SHMPI_EAGER_LIMIT", "abc")):
        p = subprocess.run([prog(d, "print_env"), "X_UNSET"], env={**env, var: value}, capture_output=True,
                           timeout=60)
        err = p.stderr.decode()
        check(p.returncode != 0 and p.stdout == b"" and f"MPI_Init: {var}=" in err and "is not" in err,
              f"singleton {var}={value}: rc {p.returncode}, stdout {p.stdout!r}, stderr {err!r}")


def mpi_fatal_error(m, d):
    """An erroneous call under MPI_ERRORS_ARE_FATAL: the rank prints the
    error, mpirun names its class (MPI_ERR_RANK, 6) and exits 1; so for a
    class the program added (16384, 0 mod 256).  A singleton exits 1 too.
    The message names the code when it has no text."""
    run_victim(m, 3, [prog(d, "victim"), "2", "badrank"], 1,
               "shmpi: mpirun: rank 2 stopped on a fatal MPI error (error class 6); ending the job", 2)
    run_victim(m, 2, [prog(d, "victim"), "1", "userclass"], 1,
               "shmpi: mpirun: rank 1 stopped on a fatal MPI error (error class 16384); ending the job", 1)
    run_singleton(d, ["victim", "0", "badrank"], 1, "shmpi: MPI_Send: ")
    run_singleton(d, ["victim", "0", "userclass"], 1, "shmpi: MPI_Comm_call_errhandler: victim's own error\n")
    # A code without text still gets a message that says what it is.
    run_singleton(d, ["victim", "0", "nostring"], 1,
                  "shmpi: MPI_Comm_call_errhandler: error code 16385 of class 16384 (no text set)\n")
    run_singleton(d, ["victim", "0", "badcode"], 1,
                  "shmpi: MPI_Comm_call_errhandler: error code 12345678 (not a valid error code)\n")


def mpi_output_kept(m, d):
    """A rank that the library ends for an erroneous call (here a second
    MPI_Init, under MPI_COMM_WORLD's default MPI_ERRORS_ARE_FATAL) keeps
    what it printed: its stdout is flushed first."""
    launch = Launch(m, ["-n", "3", prog(d, "victim"), "1", "init2"])
    launch.wait_for_lines(is_ready, 3)
    rc = launch.wait()
    expect(launch, rc, 1, ["shmpi: MPI_Init: MPI is already initialized",
                           "shmpi: mpirun: rank 1 stopped on a fatal MPI error (error class 16); ending the job"],
           stderr_lines=1)
    printed = [line.strip() for _, line in launch.lines]
    check(b"unflushed 1" in printed, f"the rank's last line is lost; stdout lines: {printed}")
    launch.check_nothing_left()


def mpi_unflushed_output(m, d):
    """Complete lines that ranks print without fflush are not lost however
    the job ends early (under mpirun a rank's stdout is line-buffered)."""
    want = sorted(b"line %d %s" % (r, x) for r in range(3) for x in (b"a", b"b"))
    for how, option, rc, message in (
            ("exit", NO_DEADLOCK_CHECK, 2, "rank 0 exited with code 2"),
            ("segv", NO_DEADLOCK_CHECK, 139, "rank 0 (pid "),
            ("abort", NO_DEADLOCK_CHECK, 4, "rank 0 called MPI_Abort with error code 4"),
            ("deadlock", ["--deadlock-after", "0.5"], 1, "deadlock: every rank waits"),
            # (5 s: the ranks must print before the limit.  Three
            # AddressSanitizer ranks on a busy 2-CPU machine took over 1 s.)
            ("sleep", ["--timeout", "5"], 124, "the job ran longer than --timeout 5 s")):
        launch = Launch(m, ["-n", "3"] + option + [prog(d, "unflushed"), how])
        expect(launch, launch.wait(), rc, [message], stderr_lines=1)
        printed = sorted(line.strip() for _, line in launch.lines)
        check(printed == want, f"{how}: stdout lines {printed}, expected {want}")
        launch.check_nothing_left()


def mpi_valgrind(m, d):
    """Ranks under valgrind's memcheck: what large collectives deliver is
    defined for memcheck (the library turns single copies off under
    valgrind, as SHMPI_CMA=0 does: a peer's process_vm_writev into a rank's
    buffer is invisible to the rank's memcheck).  Skipped without valgrind."""
    valgrind = shutil.which("valgrind")
    if valgrind is None:
        raise CaseSkipped("valgrind is not installed")
    env = {k: v for k, v in os.environ.items() if k != "SHMPI_CMA"}
    # One --error-exitcode for memcheck's reports, apart from the program's.
    p = subprocess.run([m, "-n", "2", "--timeout", "100", valgrind, "-q", "--error-exitcode=99",
                        prog(d, "coll_data")], env=env, capture_output=True, timeout=110)
    err = p.stderr.decode(errors="replace")
    check(p.returncode == 0 and "==" not in err, f"rc {p.returncode}; stderr:\n{err}")
    check(sorted(p.stdout.split()) == sorted(b"ok 0 ok 1".split()), f"stdout {p.stdout!r}")


def run_expecting_lines(m, argv, want):
    """mpirun with `argv` exits 0 without a message of its own, its ranks
    print exactly the lines `want` (in any order), and nothing is left."""
    launch = Launch(m, argv)
    rc = launch.wait()
    expect(launch, rc, 0, stderr_lines=0)
    printed = sorted(line.strip() for _, line in launch.lines)
    check(printed == sorted(want), f"stdout: {printed}, expected {sorted(want)}")
    launch.check_nothing_left()


def mpi_mpmd(m, d):
    """Two programs in one job (`:`): one world of 3 ranks, MPI_APPNUM 0 for
    the first program's rank and 1 for the second's two; MPI_INFO_ENV's
    "maxprocs" is the number of ranks of the rank's own program, as its
    "command" and "argv" are its own."""
    app = prog(d, "appnum")
    run_expecting_lines(m, ["-n", "1", app, "0", "3", ":", "-n", "2", app, "1", "3"],
                        [b"app 0 0 1", b"app 1 1 2", b"app 2 1 2"])
    run_expecting_lines(m, ["-n", "2", app, "0", "5", ":", "-n", "3", app, "1", "5"],
                        [b"app 0 0 2", b"app 1 0 2", b"app 2 1 3", b"app 3 1 3", b"app 4 1 3"])


def sh_wdir(m, _):
    """-wdir DIR starts every rank in DIR; a directory that is not there is
    a usage error naming the option as typed."""
    where = os.path.realpath("/tmp")
    run_expecting_lines(m, ["-n", "2", "-wdir", where, "pwd"], [where.encode()] * 2)
    launch = Launch(m, ["-n", "2", "--wd", "/nonexistent-shmpi-dir", "pwd"])
    rc = launch.wait()
    expect(launch, rc, 2, ["shmpi: mpirun: --wd '/nonexistent-shmpi-dir': No such file or directory"])
    check(not launch.lines, "a rank ran although the directory is missing")
    launch.check_nothing_left()


def sh_mpmd(m, _):
    """Each program of an MPMD job gets its own arguments; ranks follow on."""
    run_expecting_lines(m, ["-n", "2", "sh", "-c", 'echo "first $SHMPI_RANK $0"', "x", ":",
                            "-n", "1", "sh", "-c", 'echo "second $SHMPI_RANK $0"', "y"],
                        [b"first 0 x", b"first 1 x", b"second 2 y"])


def mpi_sigint(m, d):
    run_signal_to_mpirun(m, 3, NO_DEADLOCK_CHECK + [prog(d, "victim"), "-1", "kill"], signal.SIGINT)


def mpi_sigterm(m, d):
    run_signal_to_mpirun(m, 3, NO_DEADLOCK_CHECK + [prog(d, "victim"), "-1", "kill"], signal.SIGTERM)


def mpi_sigkill(m, d):
    run_signal_to_mpirun(m, 3, NO_DEADLOCK_CHECK + [prog(d, "victim"), "-1", "kill"], signal.SIGKILL)


def mpi_sigkill_through_script(m, d):
    """mpirun killed outright while its ranks run through a shell script:
    PR_SET_PDEATHSIG ends the scripts, not the MPI programs they started,
    which must notice that mpirun has gone and end themselves."""
    launch = Launch(m, ["-n", "3"] + NO_DEADLOCK_CHECK +
                    ["sh", "-c", f"{prog(d, 'victim')} -1 kill; echo after $?"])
    launch.wait_for_lines(is_ready, 3)
    ranks = set(ready_pids(launch).values())
    sent = time.monotonic()
    os.kill(launch.proc.pid, signal.SIGKILL)
    rc = launch.wait()
    check(rc == -signal.SIGKILL, f"mpirun exit status {rc} after SIGKILL")
    # A sleeping rank looks at mpirun once per nap (800 ms at most).
    deadline = sent + ORPHAN_GONE_WITHIN_S
    while ranks & set(tagged_live_pids(launch.tag)) and time.monotonic() < deadline:
        time.sleep(0.02)
    left = ranks & set(tagged_live_pids(launch.tag))
    check_soon(not left, f"ranks still alive {ORPHAN_GONE_WITHIN_S} s after mpirun was killed: {sorted(left)}")
    check(not shm_entries_of(launch.proc.pid),
          f"/dev/shm entries left behind: {shm_entries_of(launch.proc.pid)}")


def mpi_timeout(m, d):
    run_timeout(m, 3, [prog(d, "victim"), "-1", "kill"])


def mpi_exit_codes(m, d):
    launch = Launch(m, ["-n", "4", prog(d, "exit_code"), "-1", "0"])
    expect(launch, launch.wait(), 0, stderr_lines=0)
    launch.check_nothing_left()
    launch = Launch(m, ["-n", "4", prog(d, "exit_code"), "2", "3"])
    expect(launch, launch.wait(), 3, ["shmpi: mpirun: rank 2 exited with code 3"], stderr_lines=1)
    launch.check_nothing_left()


def mpi_stdin(m, d):
    data = bytes(range(256)) * 1000
    launch = Launch(m, ["-n", "3", prog(d, "read_stdin")], stdin_data=data)
    expect(launch, launch.wait(), 0, stderr_lines=0)
    lines = sorted(launch.output().decode().split("\n")[:-1])
    check(lines == [f"rank 0 bytes {len(data)} sum {sum(data)}", "rank 1 bytes 0 sum 0",
                    "rank 2 bytes 0 sum 0"], f"got {lines}")
    launch.check_nothing_left()


def mpi_lines(m, d):
    nranks, nlines = 4, 20000
    launch = Launch(m, ["-n", str(nranks), "--tag-output", prog(d, "many_lines"), str(nlines)])
    expect(launch, launch.wait(60), 0, stderr_lines=0)
    check_lines(launch.output(), nranks, nlines)
    launch.check_nothing_left()


def mpi_env(m, d):
    launch = Launch(m, ["-n", "2", "-x", "FWD_A=1", "-x", "FWD_B", prog(d, "print_env"), "FWD_A", "FWD_B",
                        "FWD_NONE"], env_extra={"FWD_B": "bee"}, env_remove=("FWD_NONE",))
    expect(launch, launch.wait(), 0, stderr_lines=0)
    lines = sorted(launch.output().decode().split("\n")[:-1])
    want = sorted(f"rank {r} {t}" for r in range(2) for t in ("FWD_A=1", "FWD_B=bee", "FWD_NONE unset"))
    check(lines == want, f"got {lines}")
    launch.check_nothing_left()


def singleton_env():
    """The environment without mpirun's variables, nor another launcher's."""
    return {k: v for k, v in os.environ.items() if not k.startswith("SHMPI_") and
            k not in ("PMI_SIZE", "OMPI_COMM_WORLD_SIZE")}


def run_singleton(d, argv, expected_rc, stderr_has):
    """Program argv[0] of `d` run without mpirun (a singleton): it exits
    with `expected_rc`, and its stderr contains `stderr_has`."""
    p = subprocess.run([prog(d, argv[0])] + argv[1:], env=singleton_env(), capture_output=True, timeout=30)
    check(p.returncode == expected_rc and stderr_has in p.stderr.decode(errors="replace"),
          f"singleton {' '.join(argv)}: exit status {p.returncode}, expected {expected_rc}; stderr "
          f"{p.stderr!r} should contain {stderr_has!r}")


def mpi_foreign_launcher(m, d):
    """A program started by another MPI's launcher (its variables say a
    job of 2) runs alone and says so once on stderr; a job of 1, or no such
    variable, says nothing."""
    env = singleton_env()
    for var, size, warned in (("PMI_SIZE", "2", True), ("OMPI_COMM_WORLD_SIZE", "4", True),
                              ("PMI_SIZE", "1", False), (None, None, False)):
        run_env = dict(env)
        if var is not None:
            run_env[var] = size
        p = subprocess.run([prog(d, "print_env"), "X_UNSET"], env=run_env, capture_output=True, timeout=30)
        check(p.returncode == 0 and p.stdout == b"rank 0 X_UNSET unset\n", f"{var}={size}: rc {p.returncode}, "
              f"stdout {p.stdout!r}")
        want = (f"shmpi: MPI_Init: {var}={size}: this process was started by another MPI's launcher, not by "
                "shmpi's mpirun, so it runs alone (rank 0 of 1); start shmpi programs with shmpi's mpirun\n"
                ).encode() if warned else b""
        check(p.stderr == want, f"{var}={size}: stderr {p.stderr!r}")
    # A singleton that a rank of shmpi's own job starts (system()) inherits
    # mpirun's PMI_SIZE and OMPI_COMM_WORLD_SIZE: no warning for those.
    launch = Launch(m, ["-n", "2", prog(d, "print_env"), "--child", "X_UNSET"])
    expect(launch, launch.wait(), 0, stderr_lines=0)
    want = [b"", b"rank 0 X_UNSET unset", b"rank 0 X_UNSET unset", b"rank 1 X_UNSET unset"]
    check(sorted(launch.output().split(b"\n")) == want, f"output {launch.output()!r}")
    check(b"another MPI's launcher" not in launch.stderr, "the child was warned" + launch.stderr_text())
    launch.check_nothing_left()


def run_deadlock(m, d, nranks, how, calls, after, slack=1.0):
    """Ranks that can only wait for one another: mpirun ends the job `after`
    seconds (None: the default, 3) after the last of them blocked, with exit
    status 1 and one line that names what each rank waits in; at most
    `slack` seconds later than that."""
    option = ["--deadlock-after", str(after)] if after is not None else []
    launch = Launch(m, ["-n", str(nranks)] + option + [prog(d, "deadlock"), how])
    ready = launch.wait_for_lines(is_ready, nranks)
    rc = launch.wait()
    after_s = after if after is not None else 3
    expect(launch, rc, 1, [f"shmpi: mpirun: deadlock: every rank waits in MPI for another, and nothing has moved "
                           f"for {after_s} s ({calls}); ending the job"], stderr_lines=1)
    launch.check_nothing_left()
    elapsed = launch.ended - ready
    check(after_s - 0.05 <= elapsed, f"the deadlock ended the job {elapsed:.3f} s after the ranks were ready, "
          f"before --deadlock-after {after_s}")
    check_soon(elapsed < after_s + slack, f"the deadlock ended the job {elapsed:.3f} s after the ranks were ready, "
               f"with --deadlock-after {after_s}")


def mpi_deadlock_recv(m, d):
    run_deadlock(m, d, 3, "recv", "ranks 0-2 in MPI_Recv", 0.5)


def mpi_deadlock_finalize(m, d):
    """A rank that finalizes while the others wait for its message."""
    run_deadlock(m, d, 3, "finalize", "rank 0 in MPI_Finalize; ranks 1-2 in MPI_Recv", 0.5)


def mpi_deadlock_mixed(m, d):
    """A collective (on a communicator of the region pool) against receives."""
    run_deadlock(m, d, 4, "mixed", "rank 0 in MPI_Barrier; ranks 1-3 in MPI_Recv", 0.5)


def mpi_deadlock_oversubscribed(m, d):
    # Twelve ranks on two CPUs: each must be scheduled to park before the
    # count starts; 0.6-0.8 s here.
    run_deadlock(m, d, 12, "recv", "ranks 0-11 in MPI_Recv", 0.5, slack=2.0)


def mpi_deadlock_default(m, d):
    run_deadlock(m, d, 2, "recv", "ranks 0-1 in MPI_Recv", None)


def mpi_deadlock_off(m, d):
    """--deadlock-after 0: the job waits until --timeout."""
    launch = Launch(m, ["-n", "2", "--deadlock-after", "0", "--timeout", "1.5", prog(d, "deadlock"), "recv"])
    expect(launch, launch.wait(), 124, ["--timeout 1.5"], stderr_lines=1)
    launch.check_nothing_left()


def run_not_deadlocked(m, d, nranks, how, after):
    """Ranks that wait a long time, for a rank that works or for a large
    exchange, are not deadlocked: the job ends well, whatever the check's
    period."""
    launch = Launch(m, ["-n", str(nranks), "--deadlock-after", str(after), prog(d, "deadlock"), how])
    expect(launch, launch.wait(60), 0, stderr_lines=0)
    lines = sorted(launch.output().decode().split("\n")[:-1])
    want = sorted([f"ok {r}" for r in range(nranks)] + [f"ready {r}" for r in range(nranks)])
    check(lines == want, f"got {lines}")
    launch.check_nothing_left()


def mpi_deadlock_not_slow(m, d):
    run_not_deadlocked(m, d, 2, "slow", 0.2)
    run_not_deadlocked(m, d, 6, "slow", 0.2)


def mpi_deadlock_not_threads(m, d):
    """MPI_THREAD_MULTIPLE: every rank sleeps in MPI_Recv while a thread of
    rank 0 sleeps outside MPI before it sends; the check cannot see that
    thread, so it leaves such ranks alone."""
    run_not_deadlocked(m, d, 2, "threads", 0.2)
    run_not_deadlocked(m, d, 3, "threads", 0.2)


def mpi_deadlock_not_stream(m, d):
    run_not_deadlocked(m, d, 3, "stream", 0.1)


CASES = {name: fn for name, fn in globals().items()
         if callable(fn) and (name.startswith("sh_") or name.startswith("mpi_"))}
MPI_PROGRAMS = ("victim", "exit_code", "read_stdin", "many_lines", "print_env", "appnum", "deadlock", "unflushed",
                "coll_data")


def run_one(mpirun, progdir, n, failed, skipped):
    """Runs case `n` here, TRIES times where it is only too slow; adds its
    name to `failed` or `skipped`."""
    for attempt in range(1, TRIES + 1):
        t0 = time.monotonic()
        try:
            CASES[n](mpirun, progdir)
            print(f"ok   {n} ({time.monotonic() - t0:.2f} s)", flush=True)
            return
        except CaseSkipped as e:
            skipped.append(n)
            print(f"skip {n}: {e}", flush=True)
            return
        except TooSlow as e:
            if attempt < TRIES:
                print(f"slow {n}: {e} (try {attempt} of {TRIES}; again)", flush=True)
                continue
            failed.append(n)
            print(f"FAIL {n}: {e} (try {attempt} of {TRIES})", flush=True)
        except CaseFailed as e:
            failed.append(n)
            print(f"FAIL {n}: {e}", flush=True)
            return


# The cases of several seconds (most take about one): a parallel run starts
# them first, so that the short ones fill in around them.
LONG_CASES = ("mpi_deadlock_not_slow", "mpi_deadlock_not_threads", "sh_partial_line", "mpi_deadlock_default", "mpi_deadlock_not_stream",
              "sh_lines", "mpi_unflushed_output", "sh_ignored_signals_kept", "mpi_fatal_error",
              "sh_background_output_ended", "mpi_bad_setting", "mpi_deadlock_off")
CASE_LIMIT_S = 300  # a case (TRIES tries of it) that runs longer has hung


def run_parallel(mpirun, progdir, names, jobs, failed, skipped):
    """Runs the cases `jobs` at a time, each in a process of its own, which
    has everything to itself: its launches carry their own tags, and the
    leftover checks look for those tags and for the segment of its own
    mpirun.  On this 2-CPU machine the 73 cases take 90 s one after
    another, mostly waiting (for timeouts, signals and output), and meson
    runs nothing else meanwhile (the suite's time checks want the machine
    to themselves); three at a time they take about a third of that."""
    order = [n for n in LONG_CASES if n in names] + [n for n in names if n not in LONG_CASES]
    running = {}  # Popen -> (name, start time, file of its output)
    while order or running:
        while order and len(running) < jobs:
            n = order.pop(0)
            # A file, not a pipe: a process a case leaves behind for a while
            # (and checks for) may hold it open after the case has ended.
            out = tempfile.TemporaryFile()
            # A session of its own, so that a hung case goes with its launches.
            proc = subprocess.Popen([sys.executable, os.path.abspath(__file__), mpirun, progdir, n],
                                    stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                                    start_new_session=True)
            running[proc] = (n, time.monotonic(), out)
        time.sleep(0.05)
        for proc, (n, t0, out) in list(running.items()):
            rc = proc.poll()
            if rc is None and time.monotonic() - t0 > CASE_LIMIT_S:
                try:
                    os.killpg(proc.pid, signal.SIGKILL)
                except OSError:
                    pass
                rc = proc.wait()
                print(f"FAIL {n}: still running after {CASE_LIMIT_S} s; killed", flush=True)
            if rc is None:
                continue
            del running[proc]
            out.seek(0)
            sys.stdout.write(out.read().decode(errors="replace"))
            sys.stdout.flush()
            out.close()
            if rc == SKIP:
                skipped.append(n)
            elif rc != 0:
                failed.append(n)


def main(argv):
    jobs = 1
    if len(argv) > 2 and argv[1] == "--jobs":
        jobs = int(argv[2])
        argv = argv[:1] + argv[3:]
    if len(argv) < 3 or jobs < 1:
        print(__doc__, file=sys.stderr)
        return 2
    mpirun, progdir, names = os.path.abspath(argv[1]), argv[2], argv[3:] or list(CASES)
    for n in names:
        if n not in CASES:
            print(f"run_faults.py: unknown case {n!r}; cases: {' '.join(CASES)}", file=sys.stderr)
            return 2
    if not os.access(mpirun, os.X_OK):
        print(f"run_faults.py: mpirun {mpirun!r} is not executable", file=sys.stderr)
        return 2
    missing = [p for p in MPI_PROGRAMS if not os.access(prog(progdir, p), os.X_OK)]
    if any(n.startswith("mpi_") for n in names) and missing:
        if all(n.startswith("mpi_") for n in names):
            print(f"SKIP: MPI test programs not built in {progdir}: {missing}")
            return SKIP
        names = [n for n in names if not n.startswith("mpi_")]
    failed = []
    skipped = []
    if jobs > 1 and len(names) > 1:
        run_parallel(mpirun, progdir, names, jobs, failed, skipped)
    else:
        for n in names:
            run_one(mpirun, progdir, n, failed, skipped)
    if failed:
        print(f"{len(failed)} of {len(names)} cases failed: {' '.join(failed)}")
        return 1
    if len(names) > 1:
        print(f"{len(names) - len(skipped)} of {len(names)} cases passed"
              + (f", {len(skipped)} skipped" if skipped else ""))
    return SKIP if len(skipped) == len(names) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
