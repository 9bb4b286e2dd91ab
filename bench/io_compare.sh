#!/usr/bin/env bash
# io_compare.sh: parallel I/O (bench/io_bench.c: every rank writing and
# reading its own part of one file with MPI_File_write_at_all/read_at_all,
# write_all/read_all through a view interleaving the ranks' blocks,
# write_at/read_at, write_ordered/read_ordered, and doubles through an
# "external32" view) with shmpi, MPICH and Open MPI on this machine, side by
# side.
#
# What it does:
#   1. Builds bench/io_bench.c with each MPI's mpicc (-O2): shmpi's
#      build-tree mpicc (--shmpi-build DIR, default build), mpicc.mpich and
#      mpicc.openmpi.  An MPI that is missing or fails to build is left out.
#   2. Runs `io_bench --patterns P` at each rank count of --ranks for every
#      pattern (contig, strided, indep, ordered, e32), with each MPI, in rounds;
#      within a round the MPIs take turns, so slow drifts of a shared
#      machine hit all alike.  One run per rank count and pattern, so that an
#      MPI that fails at one pattern loses only that pattern's rows (n/a).
#      The ranks are not bound (each MPI's placement is its own); Open MPI
#      runs with --oversubscribe (and as root where it must), so rank counts
#      above the CPUs run with every MPI.  The file is io_bench's default
#      ($TMPDIR, else /tmp) or under --dir; the file system it names in its
#      header matters (the page cache, tmpfs or a disk).  Each run sits
#      between two link probes and is repeated when the machine was off its
#      usual speed (bench/steady.sh; --steady F, default 1.5, 0 never;
#      --steady-tries N, default 4).  A run that takes longer than --limit
#      seconds is stopped.
#   3. Prints the machine and the MPIs, then a Markdown table per pattern:
#      for every direction, size and rank count the median over rounds of
#      each MPI's median microseconds per operation (the slowest rank's),
#      and shmpi's over the faster of the others (below 1: shmpi is
#      faster).  io_bench's own tables stay in --out DIR (default a new
#      directory under $TMPDIR).
#
# usage: bench/io_compare.sh [--shmpi-build DIR] [--rounds N] [--mpis LIST] [--ranks LIST]
#                            [--patterns LIST] [--sizes LIST] [--block B] [--dir DIR] [--time S]
#                            [--limit S] [--out DIR] [--steady F] [--steady-tries N]
#   --shmpi-build  shmpi's build directory (default build; built already)
#   --rounds       rounds (default 3)
#   --mpis         a comma list of shmpi, mpich, openmpi (default all three)
#   --ranks        a comma list of rank counts (default 2)
#   --patterns     io_bench's --patterns (default contig,strided,indep,ordered,e32)
#   --sizes        io_bench's --sizes, bytes per rank (default its own: 8,512,4k,64k,1m)
#   --block        io_bench's --block, strided's block in bytes (default its own: 64)
#   --dir          io_bench's --dir, where the file goes (default its own: $TMPDIR or /tmp)
#   --time         io_bench's --time, seconds per row (default 0.25)
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
ranks=2
patterns=contig,strided,indep,ordered,e32
sizes=""
block=""
dir=""
time_per_row=0.25
limit=300
out=""
while [[ $# -gt 0 ]]; do
    case $1 in
        --shmpi-build) build=${2:?--shmpi-build needs a directory}; shift 2 ;;
        --rounds) rounds=${2:?--rounds needs a number}; shift 2 ;;
        --mpis) mpi_list=${2:?--mpis needs a list}; shift 2 ;;
        --ranks) ranks=${2:?--ranks needs a list}; shift 2 ;;
        --patterns) patterns=${2:?--patterns needs a list}; shift 2 ;;
        --sizes) sizes=${2:?--sizes needs a list}; shift 2 ;;
        --block) block=${2:?--block needs bytes}; shift 2 ;;
        --dir) dir=${2:?--dir needs a directory}; shift 2 ;;
        --time) time_per_row=${2:?--time needs seconds}; shift 2 ;;
        --limit) limit=${2:?--limit needs seconds}; shift 2 ;;
        --out) out=${2:?--out needs a directory}; shift 2 ;;
        --steady) steady_factor=${2:?--steady needs a factor}; shift 2 ;;
        --steady-tries) steady_tries=${2:?--steady-tries needs a number}; shift 2 ;;
        -h | --help) sed -n '2,/^set -uo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        *) echo "io_compare.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
    esac
done
if ! [[ $rounds =~ ^[1-9][0-9]*$ && $limit =~ ^[1-9][0-9]*$ ]]; then
    echo "io_compare.sh: --rounds and --limit take positive integers (got $rounds, $limit)" >&2
    exit 2
fi
if ! [[ $ranks =~ ^[1-9][0-9]*(,[1-9][0-9]*)*$ ]]; then
    echo "io_compare.sh: --ranks takes a comma list of positive integers (got $ranks)" >&2
    exit 2
fi
steady_check || exit 2
build=$(cd -- "$build" 2>/dev/null && pwd) || { echo "io_compare.sh: no build directory $build" >&2; exit 1; }
[[ -n $out ]] || out=$(mktemp -d "${TMPDIR:-/tmp}/shmpi-io-bench.XXXXXX")
mkdir -p "$out/raw" || exit 1
IFS=, read -r -a rank_list <<<"$ranks"
IFS=, read -r -a pattern_list <<<"$patterns"

# shellcheck source=bench/compare_lib.sh
source "$repo/bench/compare_lib.sh"

# 1. Builds.
build_each io_compare.sh io_bench || exit 1
bench_args=(--time "$time_per_row")
[[ -n $sizes ]] && bench_args+=(--sizes "$sizes")
[[ -n $block ]] && bench_args+=(--block "$block")
[[ -n $dir ]] && bench_args+=(--dir "$dir")

# run_one MPI NP PATTERN FILE: one run of io_bench, its output in FILE.
# shellcheck disable=SC2317  # called through steady_run
run_one() {
    mpirun_of "$1" "$2"
    timeout "$limit" "${launch_cmd[@]}" "$out/io_bench.$1" --patterns "$3" "${bench_args[@]}" \
        </dev/null >"$4" 2>"$4.err"
}

# 2. Rounds.  us[ROW,MPI]=" t1 t2 ..." (microseconds), ROW being
# "PATTERN: DIR SIZE B,NP"; rows lists them in the order first seen.
declare -A us=() libs=() seen=()
file_line=""
rows=()
status=0
steady_init "$out"
for ((round = 1; round <= rounds; round++)); do
    for np in "${rank_list[@]}"; do
        for pat in "${pattern_list[@]}"; do
            for mpi in "${mpis[@]}"; do
                file=$out/raw/$mpi-np$np-$pat-$round.txt
                steady_run "$mpi/np$np/$pat/$round" run_one "$mpi" "$np" "$pat" "$file"
                rc=$?
                if ((rc == 124)); then
                    echo "io_compare.sh: $mpi, $np ranks, $pat: stopped after $limit s (round $round)" >&2
                    [[ $mpi == shmpi ]] && status=1
                    continue
                elif ((rc != 0)); then
                    echo "io_compare.sh: $mpi, $np ranks, $pat: exit $rc in round $round" \
                        "($file.err: $(grep -m1 -v '^ *$' "$file.err" | cut -c1-120))" >&2
                    if [[ $mpi == shmpi ]] || grep -q 'CHECK FAILED' "$file"; then status=1; fi
                    continue
                fi
                [[ -z ${libs[$mpi]:-} ]] && libs[$mpi]=$(sed -n 's/^# MPI library: //p' "$file" | head -1)
                [[ -z $file_line ]] && file_line=$(sed -n 's/^# file: //p' "$file" | head -1)
                # pattern dir size iters us_med us_min MB/s
                while read -r fpat fdir size _ med _; do
                    [[ $fpat == "$pat" ]] || continue
                    row="$pat: $fdir $size B,$np"
                    [[ -n ${seen[$row]:-} ]] || rows+=("$row")
                    seen[$row]=1
                    us[$row,$mpi]+=" $med"
                done < <(grep -v '^#' "$file")
            done
        done
    done
    echo "io_compare.sh: round $round of $rounds done" >&2
done

# 3. The tables.
model=$(lscpu 2>/dev/null | sed -n 's/^Model name: *//p' | head -1)
echo "Machine: ${model:-unknown CPU}, $(nproc) CPUs; 1-minute load $(cut -d' ' -f1 /proc/loadavg) at the end."
summary=$(steady_summary)
echo "${summary^}."
for mpi in "${mpis[@]}"; do echo "- $mpi: ${libs[$mpi]:-no run gave a table}"; done
echo "The file (the first run's): ${file_line:-unknown}"
echo "Raw output: $out/raw"
declare -A title=(
    [contig]="contig: MPI_File_write_at_all / MPI_File_read_at_all, rank r's block at r * size"
    [strided]="strided: MPI_File_write_all / MPI_File_read_all through a view interleaving the ranks' blocks of ${block:-64} B"
    [indep]="indep: MPI_File_write_at / MPI_File_read_at, rank r's block at r * size"
    [ordered]="ordered: MPI_File_write_ordered / MPI_File_read_ordered (the MPI_File_seek_shared before each not timed)"
    [e32]="e32: MPI_File_write_at_all / MPI_File_read_at_all of doubles through a view in \"external32\" (big-endian in the file), rank r's block at r * size"
)
# One table per pattern, its rows without the "PATTERN: " prefix.
for pat in "${pattern_list[@]}"; do
    declare -A table=()
    table_rows=()
    for row in "${rows[@]}"; do
        [[ $row == "$pat: "* ]] || continue
        table_rows+=("${row#"$pat: "}")
        # shellcheck disable=SC2034  # compare_table reads it by name
        for mpi in "${mpis[@]}"; do table[${row#"$pat: "},$mpi]=${us[$row,$mpi]:-}; done
    done
    if ((${#table_rows[@]} > 0)); then
        compare_first="operation, bytes per rank" compare_unit="microseconds per operation (the slowest rank's)" \
            compare_table "${title[$pat]:-$pat}" table "${table_rows[@]}"
    fi
    unset table
done
exit "$status"
