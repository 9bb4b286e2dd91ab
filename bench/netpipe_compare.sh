#!/usr/bin/env bash
# netpipe_compare.sh: the classic third-party ping-pong.  NetPIPE 3.7.2's
# MPI module (MPI_Send and MPI_Recv of MPI_BYTE between rank 0 and rank 1),
# built from one source with shmpi's, MPICH's and Open MPI's mpicc, run
# side by side at 2 ranks.
#
# What it does:
#   1. Runs `scripts/external-checks.sh netpipe` in --work DIR, which
#      downloads NetPIPE, builds it with shmpi and runs its integrity checks;
#      then builds the same NPmpi with mpicc.mpich and mpicc.openmpi, where
#      they are installed, in DIR/netpipe-compare.
#   2. Runs NPmpi with each MPI in rounds; within a round the MPIs take
#      turns, so slow drifts of a shared machine hit all alike.  Each run is
#      `NPmpi -p 0 -u UPPER` plus the NetPIPE options after `--` (-a: the
#      receive posted before the send; -I: fresh buffers for every size;
#      see NPmpi -h): sizes of 1 B, 2 B, 3 B and then powers of two and 1.5
#      times them, each timed by NetPIPE as the best of three loops of
#      ping-pongs it sizes to last about 0.1 s, halved (one way).  The same
#      buffer is sent again and again, so its cache lines stay warm unless
#      -I.  The ranks are not bound (each MPI's placement is its own).  A
#      run that takes longer than --limit seconds is stopped, and that MPI
#      runs no more (its rounds so far count).
#   3. Prints a Markdown table: for sizes 1 B to UPPER, the median over
#      rounds of each MPI's one-way time in microseconds, and shmpi's over
#      the faster of the others (below 1: shmpi is faster).  NetPIPE's own
#      tables (bytes, Mbps, seconds) stay in DIR/netpipe-compare.
#
# usage: bench/netpipe_compare.sh [--shmpi-build DIR] [--work DIR] [--rounds N] [--upper BYTES] [--limit S] [-- NETPIPE OPTION...]
#   --shmpi-build  shmpi's build directory (default build; built already)
#   --work         external-checks.sh's work directory (default build-external)
#   --rounds       rounds (default 3)
#   --upper        the largest message, bytes (default 4194304)
#   --limit        seconds one run may take (default 300)
# Exit status: 0 when every run gave a table or reached the limit, 1 otherwise.
set -uo pipefail

repo=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd)
build=$repo/build
work=$repo/build-external
rounds=3
upper=4194304
limit=300
np_opts=()
while [[ $# -gt 0 ]]; do
    case $1 in
        --shmpi-build) build=${2:?--shmpi-build needs a directory}; shift 2 ;;
        --work) work=${2:?--work needs a directory}; shift 2 ;;
        --rounds) rounds=${2:?--rounds needs a number}; shift 2 ;;
        --upper) upper=${2:?--upper needs bytes}; shift 2 ;;
        --limit) limit=${2:?--limit needs seconds}; shift 2 ;;
        --) shift; np_opts=("$@"); break ;;
        -h | --help) sed -n '2,/^set -uo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        *) echo "netpipe_compare.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
    esac
done
if ! [[ $rounds =~ ^[1-9][0-9]*$ && $upper =~ ^[1-9][0-9]*$ && $limit =~ ^[1-9][0-9]*$ ]]; then
    echo "netpipe_compare.sh: --rounds, --upper and --limit take positive integers (got $rounds, $upper, $limit)" >&2
    exit 2
fi
build=$(realpath -m "$build")
work=$(realpath -m "$work")

"$repo/scripts/external-checks.sh" --build "$build" --work "$work" netpipe || {
    echo "netpipe_compare.sh: the netpipe check failed; no timings" >&2
    exit 1
}
src=$work/NetPIPE-3.7.2
out=$work/netpipe-compare
mkdir -p "$out" || exit 1
cp "$src/NPmpi" "$out/NPmpi-shmpi" || exit 1
mpis=(shmpi)
for mpi in mpich openmpi; do
    if ! command -v "mpicc.$mpi" >/dev/null || ! command -v "mpirun.$mpi" >/dev/null; then continue; fi
    "mpicc.$mpi" -O2 -DMPI -I"$src/src" "$src/src/netpipe.c" "$src/src/mpi.c" -o "$out/NPmpi-$mpi" \
        >"$out/build-$mpi.log" 2>&1 || {
        echo "netpipe_compare.sh: mpicc.$mpi cannot build NetPIPE: $out/build-$mpi.log" >&2
        exit 1
    }
    mpis+=("$mpi")
done

# shellcheck source=bench/compare_lib.sh
source "$repo/bench/compare_lib.sh"
declare -A us=() stopped=()
# The table's sizes: powers of 8, and where shmpi's protocols change (4 KiB
# fills one ring cell, 8 KiB goes through the stream buffer, 16 and 32 KiB
# are the eager limits), 64 KiB, 1 MiB and 4 MiB.
rows=()
for ((size = 1; size <= upper; size *= 8)); do rows+=("$size,2"); done
for size in 4096 8192 16384 32768 65536 1048576 4194304; do
    ((size <= upper)) && [[ " ${rows[*]} " != *" $size,2 "* ]] && rows+=("$size,2")
done
mapfile -t rows < <(printf '%s\n' "${rows[@]}" | sort -t, -k1,1n)
status=0
for ((round = 1; round <= rounds; round++)); do
    for mpi in "${mpis[@]}"; do
        [[ -n ${stopped[$mpi]:-} ]] && continue
        table=$out/$mpi-$round.out
        mpirun_of "$mpi" 2
        (cd "$out" && timeout "$limit" "${launch_cmd[@]}" "./NPmpi-$mpi" -p 0 -u "$upper" "${np_opts[@]}" -o "$table") \
            </dev/null >"$out/$mpi-$round.log" 2>&1
        rc=$?
        if ((rc == 124)); then
            echo "netpipe_compare.sh: NetPIPE with $mpi took longer than $limit s; $mpi runs no more" >&2
            stopped[$mpi]=1
        elif ((rc != 0)); then
            echo "netpipe_compare.sh: NetPIPE with $mpi failed (exit $rc): $out/$mpi-$round.log" >&2
            status=1
        else
            # np.out: bytes, Mbps, seconds one way
            while read -r bytes _ seconds; do
                [[ " ${rows[*]} " == *" $bytes,2 "* ]] && us[$bytes,2,$mpi]+=" $(echo "$seconds * 1000000" | bc -l)"
            done <"$table"
        fi
    done
    echo "netpipe_compare.sh: round $round of $rounds done"
done
compare_first=bytes compare_unit=microseconds \
    compare_table "NetPIPE's one-way time (NPmpi -p 0 -u $upper${np_opts[*]:+ ${np_opts[*]}})" us "${rows[@]}"
exit "$status"
