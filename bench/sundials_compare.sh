#!/usr/bin/env bash
# sundials_compare.sh: an application whose every step ends in reductions.
# SUNDIALS 6.4.1's parallel examples (time integrators and nonlinear
# solvers on distributed vectors: a dot product or norm is an
# MPI_Allreduce of one double, halos go by MPI_Isend/MPI_Irecv), built with
# shmpi's, Open MPI's and MPICH's mpicc, timed at the rank counts SUNDIALS
# runs them with, and the heat equations again at 2 ranks.
#
# What it does:
#   1. Runs `scripts/external-checks.sh sundials` in --work DIR, which
#      downloads SUNDIALS, builds it with shmpi and with Open MPI and checks
#      that every MPI example prints the same with both; with
#      SUNDIALS_MPICH=1 it also builds the MPICH twin there (mpicc.mpich)
#      if MPICH is installed.
#   2. Runs each example with each MPI in rounds; within a round the MPIs
#      take turns, so slow drifts of a shared machine hit all alike.  The
#      ranks are not bound (each MPI's placement is its own).  A run that
#      takes longer than --limit seconds is stopped, and that MPI does not
#      run that example again.
#   3. Prints two Markdown tables: for every example the median over
#      rounds of each MPI's time, and shmpi's over the faster of the others
#      (below 1: shmpi is faster).  The first has the examples that time
#      their own solve (--timing: the integration or nonlinear solve alone,
#      the slowest rank, without the launch and setup); the second times
#      the whole mpirun command.
#
# usage: bench/sundials_compare.sh [--shmpi-build DIR] [--work DIR] [--rounds N] [--limit S]
#   --shmpi-build  shmpi's build directory (default build; built already)
#   --work         external-checks.sh's work directory (default build-external)
#   --rounds       rounds (default 3)
#   --limit        seconds one run may take (default 60)
# Exit status: 0 when every run gave a time or reached the limit, 1 otherwise.
set -uo pipefail

repo=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd)
build=$repo/build
work=$repo/build-external
rounds=3
limit=60
while [[ $# -gt 0 ]]; do
    case $1 in
        --shmpi-build) build=${2:?--shmpi-build needs a directory}; shift 2 ;;
        --work) work=${2:?--work needs a directory}; shift 2 ;;
        --rounds) rounds=${2:?--rounds needs a number}; shift 2 ;;
        --limit) limit=${2:?--limit needs seconds}; shift 2 ;;
        -h | --help) sed -n '2,/^set -uo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        *) echo "sundials_compare.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
    esac
done
build=$(realpath -m "$build")
work=$(realpath -m "$work")

mpis=(shmpi)
mpich=0
if command -v mpicc.mpich >/dev/null && command -v mpirun.mpich >/dev/null; then
    mpich=1
    mpis+=(mpich)
fi
mpis+=(openmpi) # the sundials check needs Open MPI
SUNDIALS_MPICH=$mpich "$repo/scripts/external-checks.sh" --build "$build" --work "$work" sundials || {
    echo "sundials_compare.sh: the sundials check failed; no timings" >&2
    exit 1
}

# label|ranks|program under the build directory|arguments|the line of its
# --timing report that times the solve (the slowest rank), if it has one
cases=(
    "ark_heat2D_p|4|examples/arkode/CXX_parallel/ark_heat2D_p|--np 2 2|Evolve time"
    "cv_heat2D_p|4|examples/cvode/CXX_parallel/cv_heat2D_p|--np 2 2|Evolve time"
    "kin_heat2D_nonlin_p|4|examples/kinsol/CXX_parallel/kin_heat2D_nonlin_p|--np 2 2|Total time"
    "idaHeat2D_kry_p|4|examples/ida/parallel/idaHeat2D_kry_p||"
    "cvDiurnal_kry_p|4|examples/cvode/parallel/cvDiurnal_kry_p||"
    "ark_heat2D_p|2|examples/arkode/CXX_parallel/ark_heat2D_p|--np 2 1|Evolve time"
    "cv_heat2D_p|2|examples/cvode/CXX_parallel/cv_heat2D_p|--np 2 1|Evolve time"
    "cvAdvDiff_non_p|2|examples/cvode/parallel/cvAdvDiff_non_p||"
    "kin_em_p|2|examples/kinsol/CXX_parallel/kin_em_p||Total time"
)

# shellcheck source=bench/compare_lib.sh
source "$repo/bench/compare_lib.sh"
# launch MPI NP PROGRAM TIMING ARGS...: one run from the program's
# directory (with --timing when TIMING names its line); prints "SOLVE WALL"
# in seconds, SOLVE being - without TIMING.  Exit 124 at the limit.
launch() {
    local mpi=$1 np=$2 prog=$work/sundials-$1/$3 timing=$4 start end text
    shift 4
    [[ -n $timing ]] && set -- "$@" --timing
    mpirun_of "$mpi" "$np"
    start=$(date +%s.%N)
    text=$(cd "$(dirname "$prog")" && timeout "$limit" "${launch_cmd[@]}" "$prog" "$@" </dev/null 2>&1) || return
    end=$(date +%s.%N)
    # "  Evolve time   = 1.007607e+00 sec"
    awk -v wall="$(echo "$end - $start" | bc)" -v key="$timing" '
        key != "" && index($0, "  " key " ") == 1 { solve = $(NF - 1) }
        END { if (key != "" && solve == "") exit 1; printf "%s %s\n", (key == "" ? "-" : solve + 0), wall }' <<<"$text"
}

declare -A solve_s wall_s
status=0
rows=() solve_rows=()
for c in "${cases[@]}"; do
    IFS='|' read -r label np _ _ timing <<<"$c"
    rows+=("$label,$np")
    [[ -n $timing ]] && solve_rows+=("$label,$np")
done
for ((round = 1; round <= rounds; round++)); do
    for c in "${cases[@]}"; do
        IFS='|' read -r label np prog args timing <<<"$c"
        read -r -a argv <<<"$args"
        for mpi in "${mpis[@]}"; do
            [[ -n ${over[$label,$np,$mpi]:-} ]] && continue
            t=$(launch "$mpi" "$np" "$prog" "$timing" "${argv[@]}")
            rc=$?
            if ((rc == 124)); then
                over[$label,$np,$mpi]=$limit
            elif ((rc != 0)); then
                echo "sundials_compare.sh: $label with $mpi at $np ranks failed (exit $rc)" >&2
                status=1
            else
                [[ ${t% *} != - ]] && solve_s[$label,$np,$mpi]+=" ${t% *}"
                wall_s[$label,$np,$mpi]+=" ${t#* }"
            fi
        done
    done
    echo "sundials_compare.sh: round $round of $rounds done"
done

compare_table "The example's own time for the solve (its --timing report, the slowest rank)" solve_s "${solve_rows[@]}"
compare_table "The whole mpirun command" wall_s "${rows[@]}"
exit "$status"
