#!/usr/bin/env bash
# run-small-devshm.sh: a /dev/shm too small for the job's segment must make
# mpirun fail at once with a clear message: the size needed, the size free,
# and the fix (issue 7, point 3), never a rank dying of SIGBUS later.
#
# usage: run-small-devshm.sh MPIRUN PROGRAM
# It mounts a 1 MiB tmpfs on /dev/shm in a private mount namespace (unshare
# -m), so the machine's /dev/shm is untouched, and runs PROGRAM on 8 ranks
# (a segment of about 26 MiB even without its wide cells), then in a
# /dev/shm with room for the segment only once mpirun shrinks its optional
# wide cells.  Needs root (or CAP_SYS_ADMIN) for the namespace and the
# mount: exits 77 (skip) without them.
set -uo pipefail

mpirun=${1:?usage: run-small-devshm.sh MPIRUN PROGRAM}
prog=${2:?usage: run-small-devshm.sh MPIRUN PROGRAM}

if ! command -v unshare >/dev/null 2>&1; then
    echo "run-small-devshm.sh: SKIP: no unshare(1)"
    exit 77
fi
if ! unshare -m --propagation private true 2>/dev/null; then
    echo "run-small-devshm.sh: SKIP: cannot make a mount namespace (needs root or CAP_SYS_ADMIN)"
    exit 77
fi

out=$(mktemp)
trap 'rm -f -- "$out"' EXIT
# run_in_devshm SIZE COMMAND...: COMMAND in a private mount namespace whose
# /dev/shm is a tmpfs of SIZE, its output in $out (and shown), its exit
# status in $rc.  A mount failure is status 77 from inside.
run_in_devshm() {
    local size=$1
    shift
    unshare -m --propagation private sh -c '
        mount -t tmpfs -o size="$0",mode=1777 tmpfs /dev/shm || exit 77
        exec timeout -k 5 60 "$@"' "$size" "$@" >"$out" 2>&1
    rc=$?
    sed 's/^/    | /' "$out"
}

# A tiny /dev/shm: a mount failure is a skip, not a failure of shmpi.
run_in_devshm 1m "$mpirun" -n 8 "$prog"
if [[ $rc -eq 77 ]]; then
    echo "run-small-devshm.sh: SKIP: cannot mount a tmpfs on /dev/shm here"
    exit 77
fi

fail() {
    echo "run-small-devshm.sh: FAIL: $*"
    exit 1
}
[[ $rc -ne 0 ]] || fail "the job ran although its segment cannot fit in a 1 MiB /dev/shm"
[[ $rc -ne 124 && $rc -ne 137 ]] || fail "mpirun hung instead of failing"
[[ $rc -lt 128 ]] || fail "mpirun died of signal $((rc - 128)) instead of reporting the problem"
grep -q 'needs [0-9.]* MiB' "$out" || fail "the message does not say how much the segment needs"
grep -q '/dev/shm has [0-9.]* MiB free' "$out" || fail "the message does not say how much is free"
grep -q 'shm-size\|remount' "$out" || fail "the message does not say how to enlarge /dev/shm"
[[ $(grep -c . "$out") -le 2 ]] || fail "more than the one message (did ranks start?)"
echo "run-small-devshm.sh: too small: PASS (exit status $rc)"

# The size the message suggests holds the segment: a 2 GiB segment (8192
# cells a ring) wants size=3G, not the 1G once written for every job.
run_in_devshm 1m env SHMPI_RING_CELLS=8192 "$mpirun" -n 8 "$prog"
[[ $rc -ne 0 && $rc -lt 124 ]] || fail "a 2 GiB segment in a 1 MiB /dev/shm: exit status $rc"
need=$(sed -n 's/.* needs \([0-9]*\)\.[0-9]* MiB.*/\1/p' "$out")
suggested=$(sed -n 's/.*remount,size=\([0-9]*\)G .*/\1/p' "$out")
[[ -n $need && -n $suggested ]] || fail "no size needed or suggested in the message"
((suggested * 1024 >= need)) || fail "the message suggests ${suggested}G for a segment of $need MiB"
echo "run-small-devshm.sh: suggested size: PASS (${suggested}G for $need MiB)"

# Room for the segment only without most of its wide cells: 4 ranks on one
# CPU get 4 MiB of them a rank by default (a segment of about 27 MiB; 15
# MiB with 1 MiB a rank), so in 20 MiB mpirun shrinks them to 1 MiB, says
# so, and the job runs.  Wide cells the user asked for are not shrunk.
cpu=$(sed -n 's/^Cpus_allowed_list:[[:space:]]*\([0-9]*\).*/\1/p' /proc/self/status)
run_in_devshm 20m "$mpirun" -n 4 --cpu-list "$cpu" "$prog"
[[ $rc -eq 0 ]] || fail "the job did not run with its wide cells shrunk (exit status $rc)"
grep -q 'no room for 4 MiB of wide collective cells a rank.*so there are 1 MiB a rank' "$out" ||
    fail "mpirun did not say that the wide cells shrank to 1 MiB a rank"
grep -q 'many_ranks: 4 ranks' "$out" || fail "the program did not finish"
echo "run-small-devshm.sh: shrunk wide cells: PASS"

run_in_devshm 20m env SHMPI_COLL_WIDE_BYTES=4194304 "$mpirun" -n 4 --cpu-list "$cpu" "$prog"
[[ $rc -ne 0 && $rc -lt 124 ]] || fail "SHMPI_COLL_WIDE_BYTES=4194304 in 20 MiB: exit status $rc, not a failure"
grep -q '/dev/shm has [0-9.]* MiB free' "$out" || fail "SHMPI_COLL_WIDE_BYTES=4194304 in 20 MiB: no message"
! grep -q 'wide collective cells' "$out" || fail "mpirun shrank the wide cells the user set"
echo "run-small-devshm.sh: PASS"
