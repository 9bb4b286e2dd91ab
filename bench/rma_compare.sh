#!/usr/bin/env bash
# rma_compare.sh: one-sided communication (bench/rma_bench.c: put, get,
# accumulate, fetch-and-op, compare-and-swap with MPI_Win_flush in a
# lock_all epoch; fence and post/start/complete/wait epochs of one put) with
# shmpi, MPICH and Open MPI on this machine, side by side, at 2 ranks.
#
# What it does:
#   1. Builds bench/rma_bench.c with each MPI's mpicc (-O2): shmpi's
#      build-tree mpicc (--shmpi-build DIR, default build), mpicc.mpich and
#      mpicc.openmpi.  An MPI that is missing or fails to build is left out.
#   2. Runs `rma_bench --windows W --ops OP` at 2 ranks for every window
#      (allocate: MPI_Win_allocate; create: MPI_Win_create over malloc'd
#      memory) and operation, with each MPI, in rounds; within a round the
#      MPIs take turns, so slow drifts of a shared machine hit all alike.
#      One run per window and operation, so that an MPI that fails at one
#      operation loses only that operation's rows (n/a).  The ranks are not
#      bound (each MPI's placement is its own).  Each run sits between two
#      link probes and is repeated when the machine was off its usual speed
#      (bench/steady.sh; --steady F, default 1.5, 0 never; --steady-tries N,
#      default 4).  A run that takes longer than --limit seconds is stopped.
#   3. Prints the machine and the MPIs, then a Markdown table per window: for
#      every operation and size the median over rounds of each MPI's median
#      microseconds per operation (per epoch for fence and pscw), and
#      shmpi's over the faster of the others (below 1: shmpi is faster).
#      rma_bench's own tables stay in --out DIR (default a new directory
#      under $TMPDIR).
#
# usage: bench/rma_compare.sh [--shmpi-build DIR] [--rounds N] [--mpis LIST] [--windows LIST]
#                             [--ops LIST] [--sizes LIST] [--time S] [--limit S] [--out DIR]
#                             [--steady F] [--steady-tries N]
#   --shmpi-build  shmpi's build directory (default build; built already)
#   --rounds       rounds (default 3)
#   --mpis         a comma list of shmpi, mpich, openmpi (default all three)
#   --windows      rma_bench's --windows (default allocate,create)
#   --ops          rma_bench's --ops (default put,get,acc,fetch_op,cas,fence,pscw)
#   --sizes        rma_bench's --sizes (default its own: 8,64,512,4k,32k,256k,1m)
#   --time         rma_bench's --time, seconds per row (default 0.25)
#   --limit        seconds one run may take (default 300)
# Exit status: 0 when every shmpi run gave its rows and no run of any MPI
# reported wrong data; 1 otherwise (another MPI's failed run is reported and
# its rows are n/a).
set -uo pipefail

repo=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=bench/steady.sh
source "$repo/bench/steady.sh"
build=$repo/build
rounds=3
mpi_list=shmpi,mpich,openmpi
windows=allocate,create
ops=put,get,acc,fetch_op,cas,fence,pscw
sizes=""
time_per_row=0.25
limit=300
out=""
while [[ $# -gt 0 ]]; do
    case $1 in
        --shmpi-build) build=${2:?--shmpi-build needs a directory}; shift 2 ;;
        --rounds) rounds=${2:?--rounds needs a number}; shift 2 ;;
        --mpis) mpi_list=${2:?--mpis needs a list}; shift 2 ;;
        --windows) windows=${2:?--windows needs a list}; shift 2 ;;
        --ops) ops=${2:?--ops needs a list}; shift 2 ;;
        --sizes) sizes=${2:?--sizes needs a list}; shift 2 ;;
        --time) time_per_row=${2:?--time needs seconds}; shift 2 ;;
        --limit) limit=${2:?--limit needs seconds}; shift 2 ;;
        --out) out=${2:?--out needs a directory}; shift 2 ;;
        --steady) steady_factor=${2:?--steady needs a factor}; shift 2 ;;
        --steady-tries) steady_tries=${2:?--steady-tries needs a number}; shift 2 ;;
        -h | --help) sed -n '2,/^set -uo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        *) echo "rma_compare.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
    esac
done
if ! [[ $rounds =~ ^[1-9][0-9]*$ && $limit =~ ^[1-9][0-9]*$ ]]; then
    echo "rma_compare.sh: --rounds and --limit take positive integers (got $rounds, $limit)" >&2
    exit 2
fi
steady_check || exit 2
build=$(cd -- "$build" 2>/dev/null && pwd) || { echo "rma_compare.sh: no build directory $build" >&2; exit 1; }
[[ -n $out ]] || out=$(mktemp -d "${TMPDIR:-/tmp}/shmpi-rma-bench.XXXXXX")
mkdir -p "$out/raw" || exit 1
IFS=, read -r -a window_list <<<"$windows"
IFS=, read -r -a op_list <<<"$ops"

# shellcheck source=bench/compare_lib.sh
source "$repo/bench/compare_lib.sh"

# 1. Builds.
build_each rma_compare.sh rma_bench || exit 1
bench_args=(--time "$time_per_row")
[[ -n $sizes ]] && bench_args+=(--sizes "$sizes")

# run_one MPI WINDOW OP FILE: one run of rma_bench, its output in FILE.
# shellcheck disable=SC2317  # called through steady_run
run_one() {
    mpirun_of "$1" 2
    timeout "$limit" "${launch_cmd[@]}" "$out/rma_bench.$1" --windows "$2" --ops "$3" "${bench_args[@]}" \
        </dev/null >"$4" 2>"$4.err"
}

# 2. Rounds.  us[ROW,MPI]=" t1 t2 ..." (microseconds), ROW being
# "WINDOW: OP SIZE B,2"; rows lists them in the order first seen.
declare -A us=() libs=() seen=()
rows=()
status=0
steady_init "$out"
for ((round = 1; round <= rounds; round++)); do
    for w in "${window_list[@]}"; do
        for op in "${op_list[@]}"; do
            for mpi in "${mpis[@]}"; do
                file=$out/raw/$mpi-$w-$op-$round.txt
                steady_run "$mpi/$w/$op/$round" run_one "$mpi" "$w" "$op" "$file"
                rc=$?
                if ((rc == 124)); then
                    echo "rma_compare.sh: $mpi, $w window, $op: stopped after $limit s (round $round)" >&2
                    [[ $mpi == shmpi ]] && status=1
                    continue
                elif ((rc != 0)); then
                    echo "rma_compare.sh: $mpi, $w window, $op: exit $rc in round $round" \
                        "($file.err: $(grep -m1 -v '^ *$' "$file.err" | cut -c1-120))" >&2
                    if [[ $mpi == shmpi ]] || grep -q 'CHECK FAILED' "$file"; then status=1; fi
                    continue
                fi
                [[ -z ${libs[$mpi]:-} ]] && libs[$mpi]=$(sed -n 's/^# MPI library: //p' "$file" | head -1)
                # window op size iters us_med us_min MB/s
                while read -r fw fop size _ med _; do
                    [[ $fw == "$w" && $fop == "$op" ]] || continue
                    row="$w: $op $size B,2"
                    [[ -n ${seen[$row]:-} ]] || rows+=("$row")
                    seen[$row]=1
                    us[$row,$mpi]+=" $med"
                done < <(grep -v '^#' "$file")
            done
        done
    done
    echo "rma_compare.sh: round $round of $rounds done" >&2
done

# 3. The tables.
model=$(lscpu 2>/dev/null | sed -n 's/^Model name: *//p' | head -1)
echo "Machine: ${model:-unknown CPU}, $(nproc) CPUs; 1-minute load $(cut -d' ' -f1 /proc/loadavg) at the end."
summary=$(steady_summary)
echo "${summary^}."
for mpi in "${mpis[@]}"; do echo "- $mpi: ${libs[$mpi]:-no run gave a table}"; done
echo "Raw output: $out/raw"
declare -A title=(
    [allocate]="MPI_Win_allocate window, rank 0 to rank 1"
    [create]="MPI_Win_create window (malloc'd memory), rank 0 to rank 1"
)
# One table per window, its rows without the "WINDOW: " prefix.
for w in "${window_list[@]}"; do
    declare -A table=()
    table_rows=()
    for row in "${rows[@]}"; do
        [[ $row == "$w: "* ]] || continue
        table_rows+=("${row#"$w: "}")
        # shellcheck disable=SC2034  # compare_table reads it by name
        for mpi in "${mpis[@]}"; do table[${row#"$w: "},$mpi]=${us[$row,$mpi]:-}; done
    done
    if ((${#table_rows[@]} > 0)); then
        compare_first=operation compare_unit="microseconds per operation or epoch" \
            compare_table "${title[$w]:-$w window}" table "${table_rows[@]}"
    fi
    unset table
done
exit "$status"
