#!/usr/bin/env bash
# scotch_compare.sh: an application beside the microbenchmarks.  PT-Scotch
# 7.0.3's parallel ordering (dgord, a 40 x 40 x 40 mesh) and partitioning
# (dgpart, 13 parts of a 14-dimensional hypercube), built with shmpi's,
# MPICH's and Open MPI's mpicc, timed at several rank counts.
#
# What it does:
#   1. Runs `scripts/external-checks.sh scotch` in --work DIR, which
#      downloads PT-Scotch, builds it with shmpi and with MPICH, makes the
#      graphs and checks the results; with SCOTCH_OPENMPI=1 it also builds
#      the Open MPI twin there (mpicc.openmpi) if Open MPI is installed.
#   2. Runs each program with each MPI in rounds; within a round the MPIs
#      take turns, so slow drifts of a shared machine hit all alike.  The
#      ranks are not bound (each MPI's placement is its own).
#   3. Prints a Markdown table: for every program and rank count the median
#      over rounds of each MPI's time, as Scotch reports it with -vt (its
#      "Order" or "Mapping" line, the slowest rank: the work alone, without
#      reading the graph or starting the job), and shmpi's over the faster
#      of the other two (below 1: shmpi is faster); then the same for the
#      whole mpirun command, launch and file reading included.
#
# usage: bench/scotch_compare.sh [--shmpi-build DIR] [--work DIR] [--ranks 2,4,8] [--rounds N]
#   --shmpi-build  shmpi's build directory (default build; built already)
#   --work         external-checks.sh's work directory (default build-external)
# Exit status: 0 when every run gave a time, 1 otherwise.
set -uo pipefail

repo=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd)
build=$repo/build
work=$repo/build-external
ranks_list=2,4,8
rounds=3
while [[ $# -gt 0 ]]; do
    case $1 in
        --shmpi-build) build=${2:?--shmpi-build needs a directory}; shift 2 ;;
        --work) work=${2:?--work needs a directory}; shift 2 ;;
        --ranks) ranks_list=${2:?--ranks needs a list}; shift 2 ;;
        --rounds) rounds=${2:?--rounds needs a number}; shift 2 ;;
        -h | --help) sed -n '2,/^set -uo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        *) echo "scotch_compare.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
    esac
done
build=$(realpath -m "$build")
work=$(realpath -m "$work")

mpis=(shmpi mpich)
openmpi=0
if command -v mpicc.openmpi >/dev/null && command -v mpirun.openmpi >/dev/null; then
    openmpi=1
    mpis+=(openmpi)
fi
SCOTCH_OPENMPI=$openmpi "$repo/scripts/external-checks.sh" --build "$build" --work "$work" scotch || {
    echo "scotch_compare.sh: the scotch check failed; no timings" >&2
    exit 1
}

# shellcheck source=bench/compare_lib.sh
source "$repo/bench/compare_lib.sh"
g=$work/scotch-runs
# launch MPI NP PROGRAM ARGS...: one run; prints "WORK WALL" in seconds.
launch() {
    local mpi=$1 np=$2 prog=$3
    shift 3
    local bin=$work/scotch-$mpi/scotch-7.0.3/bin start end text
    mpirun_of "$mpi" "$np"
    start=$(date +%s.%N)
    text=$(timeout 600 "${launch_cmd[@]}" "$bin/$prog" "$@" -Cd -vt 2>&1) || return 1
    end=$(date +%s.%N)
    # "T<tab>Order<tab>min=0.28<tab>max=0.31<tab>avg=0.29": the slowest rank
    awk -v wall="$(echo "$end - $start" | bc)" -F'\t' '$1 == "T" && ($2 == "Order" || $2 == "Mapping") {
        sub(/max=/, "", $4); print $4, wall; found = 1 } END { exit !found }' <<<"$text"
}

declare -A work_s wall_s
status=0
IFS=, read -r -a ranks <<<"$ranks_list"
for ((round = 1; round <= rounds; round++)); do
    for np in "${ranks[@]}"; do
        for prog in dgord dgpart; do
            for mpi in "${mpis[@]}"; do
                if [[ $prog == dgord ]]; then
                    t=$(launch "$mpi" "$np" dgord "$g/m3.grf" /dev/null)
                else
                    t=$(launch "$mpi" "$np" dgpart 13 "$g/hy.grf" /dev/null)
                fi || { echo "scotch_compare.sh: $prog with $mpi at $np ranks failed" >&2; status=1; continue; }
                work_s[$prog,$np,$mpi]+=" ${t% *}"
                wall_s[$prog,$np,$mpi]+=" ${t#* }"
            done
        done
    done
    echo "scotch_compare.sh: round $round of $rounds done"
done

rows=()
for prog in dgord dgpart; do
    for np in "${ranks[@]}"; do rows+=("$prog,$np"); done
done
compare_table "Scotch's own time for the work (slowest rank)" work_s "${rows[@]}"
compare_table "The whole mpirun command" wall_s "${rows[@]}"
exit "$status"
