#!/usr/bin/env bash
# bench-compare.sh: shmpi against Open MPI and MPICH on this machine, side by
# side, from the same benchmark sources (bench/pingpong.c, bench/hello.c,
# bench/coll_bench.c), with ratios, CSV/JSON results and plots.
#
# What it does:
#   1. Finds the MPIs:
#        shmpi    --shmpi-build DIR, --shmpi-mpicc PATH or SHMPI_MPICC; else
#                 ./build of this repository if built; else an `mpicc` on
#                 PATH whose -show links -lshmpi
#        openmpi  mpicc.openmpi / mpirun.openmpi (Debian's names), or
#                 OPENMPI_MPICC / OPENMPI_MPIRUN
#        mpich    mpicc.mpich / mpirun.mpich, or MPICH_MPICC / MPICH_MPIRUN
#      One that is missing, fails to compile the benchmarks or fails a smoke
#      run is reported as n/a; the others go on.  --shmpi-coll adds columns
#      "shmpi-ALGO": the same shmpi with SHMPI_COLL=ALGO (one algorithm forced,
#      docs/COLLECTIVES.md); --shmpi-env adds "shmpi-NAME=VALUE", the same
#      shmpi with one SHMPI_* setting (README, "Environment variables").
#   2. Builds bench/pingpong.c, bench/hello.c and bench/coll_bench.c with
#      each MPI's mpicc (-O2).
#   3. Runs every case in rounds; within a round the MPIs take turns
#      (shmpi, openmpi, mpich), so slow drifts of the machine hit all alike:
#        pp2     pingpong 8 B, 2 ranks
#        pp4     pingpong 8 B, 4 ranks (2 of them idle in MPI_Recv); on a
#                machine with fewer than 4 CPUs this is oversubscribed
#        sweep   pingpong over --sweep-sizes (default 8 B .. 4 MiB), 2 ranks
#        launch  wall time of `mpirun -n 4 ./hello` (hyperfine -N)
#        collN   bench/coll_bench with N ranks for each N of --coll-ranks
#                (default 2,4,8: 4 and 8 are oversubscribed on a 2-CPU
#                machine): --coll-ops at --coll-sizes bytes per rank, OSU
#                style (input rewritten, barrier, one timed call); the time
#                is the mean over ranks, median over coll_bench's reps
#   4. Prints the machine, each MPI's placement (every rank's allowed CPUs
#      and the CPU it ran on), and tables of absolute numbers (median over
#      rounds of each run's median; best round in brackets) with the ratio
#      shmpi / best of the others, then the collective goals of issue 4
#      (8 B: at most 0.5x; 1 MiB Reduce/Allreduce: at most 1.0x) as met/not.
#      After the 2-rank collective rounds, bench/link_probe.c --osu times
#      the same pattern with plain flags and no MPI (three runs, floor.tsv):
#      the report gives that floor, and the goal rows of the 2-rank 8 B
#      Bcast, Reduce and Gather the floor over the faster peer, the least
#      ratio this machine allows any library.
#   5. Writes, in the output directory: table.txt (what was printed),
#      results.csv and results.json (one row per case, rank count, MPI,
#      operation and size), plots/*.svg (time against size, one line per MPI,
#      for every case measured at two sizes or more: scripts/bench-plot.py),
#      raw/ (every run's own output) and logs/.
#
# Placement: by default every MPI runs with its own default binding (Open MPI
# and shmpi bind ranks to cores unless oversubscribed; MPICH's Hydra does
# not bind); --bind-to makes them all do the same.  The report shows, for
# every case, where each rank was allowed to run and where it ran.  Ranks
# beyond the CPU count get Open MPI's --oversubscribe; as root Open MPI also
# gets --allow-run-as-root.
#
# usage: scripts/bench-compare.sh [options]
#   --shmpi-build DIR    shmpi build directory (uses DIR/tools/wrappers/mpicc
#                        and DIR/tools/launcher/mpirun)
#   --shmpi-mpicc PATH   shmpi's mpicc (build-tree or installed); env SHMPI_MPICC
#   --shmpi-mpirun PATH  shmpi's mpirun; env SHMPI_MPIRUN (default: next to
#                        mpicc, or ../launcher/mpirun in a build tree)
#   --shmpi-mpirun-args ARGS
#                        extra arguments for shmpi's mpirun, split at spaces
#                        (e.g. "--bind-to numa --map-by numa:spread")
#   --shmpi-coll LIST    also run shmpi with SHMPI_COLL=ALGO for each ALGO of
#                        the comma list (e.g. linear,tree,rsag)
#   --shmpi-env NAME=VALUE
#                        also run shmpi with that one SHMPI_* setting, as the
#                        column shmpi-NAME=VALUE (SHMPI_ left off); may be
#                        given again for more columns, e.g.
#                        --shmpi-env SHMPI_COLL_CELL_BYTES=1048576
#   --only LIST          comma list of MPIs to run (default shmpi,openmpi,mpich)
#   --bind-to WHAT       default: each MPI's own default; core: every MPI binds
#                        each rank to a core when the ranks fit the CPUs (and
#                        keeps its default when they do not); none: no MPI binds
#   --sweep-sizes LIST   sizes of the pingpong sweep (default 8:4m; see
#                        pingpong --help)
#   --coll-ranks LIST    rank counts of the collective cases (default 2,4,8;
#                        an empty list skips them)
#   --coll-ops LIST      collectives measured (default barrier,bcast,reduce,
#                        allreduce,gather; `all` for every one coll_bench
#                        knows; see coll_bench --help)
#   --coll-sizes LIST    bytes per rank (default 8,64k,1m; 8:4m for the
#                        full sweep of issue 4)
#   --coll-time S        coll_bench's time budget per collective and size
#                        (default 0.3 s; 0.1 with --quick)
#   --coll-only          run only the collective cases
#   --no-launch          skip the launch-time case
#   --rounds N           rounds of alternation (default 3)
#   --out DIR            where builds, logs and results go (default: a new
#                        temporary directory)
#   --quick              1 round, short budgets: checks that everything runs
#   --steady F           repeat a run when the link probe before or after it
#                        (bench/link_probe.c) took more than F times the best
#                        probe: the machine was in a slow stretch (default
#                        1.5; 0: never; bench/steady.sh)
#   --steady-tries N     tries per run before an unsteady one is kept (default 4)
# Exit status: 0 when at least one MPI produced numbers and the tables, CSV,
# JSON and plots were written; 1 otherwise.
set -uo pipefail

repo=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd)
orig_args=("$@")
# shellcheck source=bench/steady.sh
source "$repo/bench/steady.sh"

shmpi_build=""
shmpi_mpicc=${SHMPI_MPICC:-}
shmpi_mpirun=${SHMPI_MPIRUN:-}
only="shmpi,openmpi,mpich"
coll_ranks="2,4,8"
coll_ops="barrier,bcast,reduce,allreduce,gather"
coll_sizes="8,64k,1m"
coll_only=0
no_launch=0
shmpi_coll=""
shmpi_envs=()
shmpi_mpirun_args=""
sweep_sizes="8:4m"
coll_time=""
bind_to=default
rounds=3
out=""
quick=0

die() { echo "bench-compare.sh: $*" >&2; exit 1; }
while [[ $# -gt 0 ]]; do
    case $1 in
        --shmpi-build) shmpi_build=${2:?}; shift 2 ;;
        --shmpi-mpicc) shmpi_mpicc=${2:?}; shift 2 ;;
        --shmpi-mpirun) shmpi_mpirun=${2:?}; shift 2 ;;
        --only) only=${2:?}; shift 2 ;;
        --coll-ranks) coll_ranks=${2?}; shift 2 ;;
        --coll-ops) coll_ops=${2:?}; shift 2 ;;
        --coll-sizes) coll_sizes=${2:?}; shift 2 ;;
        --coll-only) coll_only=1; shift ;;
        --coll-time) coll_time=${2:?}; shift 2 ;;
        --no-launch) no_launch=1; shift ;;
        --shmpi-coll) shmpi_coll=${2:?}; shift 2 ;;
        --shmpi-env) shmpi_envs+=("${2:?}"); shift 2 ;;
        --shmpi-mpirun-args) shmpi_mpirun_args=${2?}; shift 2 ;;
        --sweep-sizes) sweep_sizes=${2:?}; shift 2 ;;
        --bind-to) bind_to=${2:?}; shift 2 ;;
        --rounds) rounds=${2:?}; shift 2 ;;
        --out) out=${2:?}; shift 2 ;;
        --quick) quick=1; rounds=1; shift ;;
        --steady) steady_factor=${2:?}; shift 2 ;;
        --steady-tries) steady_tries=${2:?}; shift 2 ;;
        -h|--help) sed -n '2,/^set -uo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        *) die "unknown argument '$1' (try --help)" ;;
    esac
done
[[ $rounds =~ ^[1-9][0-9]*$ ]] || die "--rounds '$rounds' is not a positive number"
steady_check || exit 2
[[ $bind_to =~ ^(default|core|none)$ ]] || die "--bind-to '$bind_to' is not default, core or none"
[[ $coll_ops == all ]] &&
    coll_ops="barrier,bcast,reduce,allreduce,gather,gatherv,scatter,scatterv,allgather,allgatherv,alltoall,alltoallv,reduce_scatter,reduce_scatter_block,scan,exscan"
command -v python3 >/dev/null || die "python3 is needed to summarise the results"
have_hyperfine=1
command -v hyperfine >/dev/null || have_hyperfine=0

if [[ -z $out ]]; then
    out=$(mktemp -d "${TMPDIR:-/tmp}/shmpi-bench.XXXXXX") || die "cannot make a temporary directory"
fi
# Results of an earlier run in the same directory must not mix with these.
rm -rf "$out/raw" "$out/plots"
mkdir -p "$out"/build "$out"/logs "$out"/raw || die "cannot create $out"
out=$(cd -- "$out" && pwd)
: >"$out/results.tsv"
: >"$out/notes.txt"
note() { echo "$*" | tee -a "$out/notes.txt"; }

ncpu=$(nproc)
if [[ $quick == 1 ]]; then
    pp_args=(--reps 5 --time 0.3)
    sweep_args=(--sizes "$sweep_sizes" --reps 3 --time 0.1)
    coll_args=(--reps 3 --time "${coll_time:-0.1}")
    hf_runs=3
else
    pp_args=(--reps 11 --time 1.0)
    sweep_args=(--sizes "$sweep_sizes" --reps 7 --time 0.5)
    coll_args=(--reps 5 --time "${coll_time:-0.3}")
    hf_runs=10
fi
pp_timeout=60
sweep_timeout=180
launch_timeout=300
coll_timeout=900

# ---- 1. the MPIs ----
if [[ -z $shmpi_build && -z $shmpi_mpicc ]]; then
    # Not given: this repository's ./build, else an mpicc on PATH that is
    # shmpi's (its -show links -lshmpi).
    if [[ -x $repo/build/tools/wrappers/mpicc && -x $repo/build/tools/launcher/mpirun ]]; then
        shmpi_build=$repo/build
    elif command -v mpicc >/dev/null && mpicc -show 2>/dev/null | grep -q -- '-lshmpi'; then
        shmpi_mpicc=$(command -v mpicc)
    fi
fi
if [[ -n $shmpi_build ]]; then
    [[ -z $shmpi_mpicc ]] && shmpi_mpicc=$shmpi_build/tools/wrappers/mpicc
    [[ -z $shmpi_mpirun ]] && shmpi_mpirun=$shmpi_build/tools/launcher/mpirun
fi
if [[ -n $shmpi_mpicc && -z $shmpi_mpirun ]]; then
    dir=$(dirname -- "$shmpi_mpicc")
    if [[ -x $dir/mpirun ]]; then
        shmpi_mpirun=$dir/mpirun
    elif [[ -x $dir/../launcher/mpirun ]]; then
        shmpi_mpirun=$dir/../launcher/mpirun
    fi
fi

# Absolute paths: the runs happen inside the output directory.
[[ -n $shmpi_mpicc && -e $shmpi_mpicc ]] && shmpi_mpicc=$(realpath -- "$shmpi_mpicc")
[[ -n $shmpi_mpirun && -e $shmpi_mpirun ]] && shmpi_mpirun=$(realpath -- "$shmpi_mpirun")

declare -A cc run why envs
mpis=()
# Adds column $1: shmpi run with the environment setting $2.
shmpi_variant() {
    mpis+=("$1")
    envs[$1]=$2
    if [[ -n ${why[shmpi]:-} ]]; then
        why[$1]=${why[shmpi]}
    else
        cc[$1]=${cc[shmpi]}
        run[$1]=${run[shmpi]}
    fi
}
IFS=, read -r -a wanted <<<"$only"
for m in "${wanted[@]}"; do
    case $m in
        shmpi)
            if [[ -z $shmpi_mpicc ]]; then
                why[shmpi]="not given (--shmpi-build, --shmpi-mpicc or SHMPI_MPICC)"
            elif [[ ! -x $shmpi_mpicc ]]; then
                why[shmpi]="mpicc '$shmpi_mpicc' is not executable"
            elif [[ -z $shmpi_mpirun || ! -x $shmpi_mpirun ]]; then
                why[shmpi]="no mpirun found beside '$shmpi_mpicc' (give --shmpi-mpirun)"
            else
                cc[shmpi]=$shmpi_mpicc
                run[shmpi]=$shmpi_mpirun
            fi ;;
        openmpi|mpich)
            if [[ $m == openmpi ]]; then
                c=${OPENMPI_MPICC:-mpicc.openmpi} x=${OPENMPI_MPIRUN:-mpirun.openmpi}
            else
                c=${MPICH_MPICC:-mpicc.mpich} x=${MPICH_MPIRUN:-mpirun.mpich}
            fi
            if command -v "$c" >/dev/null && command -v "$x" >/dev/null; then
                cc[$m]=$c
                run[$m]=$x
            else
                why[$m]="$c or $x not installed"
            fi ;;
        *) die "--only: unknown MPI '$m' (shmpi, openmpi, mpich)" ;;
    esac
    mpis+=("$m")
    [[ $m == shmpi ]] || continue
    # shmpi with one collective algorithm forced, right after shmpi.
    if [[ -n $shmpi_coll ]]; then
        IFS=, read -r -a algos <<<"$shmpi_coll"
        for a in "${algos[@]}"; do
            [[ $a =~ ^[a-z_]+$ ]] || die "--shmpi-coll: '$a' is not an algorithm name"
            shmpi_variant "shmpi-$a" "SHMPI_COLL=$a"
        done
    fi
    # shmpi with one setting of the environment, after those.  (One word,
    # no blanks: run_mpi() splits envs at spaces.)
    for e in "${shmpi_envs[@]}"; do
        [[ $e =~ ^SHMPI_[A-Z0-9_]+=[A-Za-z0-9_.,:+-]*$ ]] ||
            die "--shmpi-env: '$e' is not SHMPI_NAME=VALUE (letters, digits and _.,:+- in the value)"
        shmpi_variant "shmpi-${e#SHMPI_}" "$e"
    done
done

# The mpirun command line for `ranks` ranks of one MPI, as an array in `cmd`.
mpirun_cmd() {
    local m=$1 ranks=$2 bind=$bind_to
    cmd=("${run[$m]}")
    if [[ $m == openmpi ]]; then
        [[ $(id -u) == 0 ]] && cmd+=(--allow-run-as-root)
        ((ranks > ncpu)) && cmd+=(--oversubscribe)
    fi
    # Binding to cores needs a core per rank; beyond that each MPI decides.
    [[ $bind == core ]] && ((ranks > ncpu)) && bind=default
    if [[ $bind != default ]]; then
        case $m in
            mpich) cmd+=(-bind-to "$bind") ;;
            *) cmd+=(--bind-to "$bind") ;;  # Open MPI and shmpi
        esac
    fi
    if [[ $m == shmpi* && -n $shmpi_mpirun_args ]]; then
        local extra
        read -r -a extra <<<"$shmpi_mpirun_args"
        cmd+=("${extra[@]}")
    fi
    cmd+=(-n "$ranks")
}

# ---- 2. build ----
for m in "${mpis[@]}"; do
    [[ -n ${why[$m]:-} ]] && continue
    mkdir -p "$out/build/$m"
    for prog in pingpong hello coll_bench; do
        if ! "${cc[$m]}" -O2 -o "$out/build/$m/$prog" "$repo/bench/$prog.c" \
            >"$out/logs/$m-build-$prog.log" 2>&1; then
            why[$m]="${cc[$m]} failed on bench/$prog.c (logs/$m-build-$prog.log)"
            break
        fi
    done
done

# Runs `timeout` seconds of: MPI m, `ranks` ranks, program and arguments.
# Output goes to the file named by `log`; returns the command's status.
run_mpi() {
    local m=$1 ranks=$2 limit=$3 log=$4
    shift 4
    local cmd
    mpirun_cmd "$m" "$ranks"
    echo "+ ${envs[$m]:-} ${cmd[*]} $*" >"$log"
    (cd "$out/build/$m" && timeout -k 5 "$limit" env ${envs[$m]:-} "${cmd[@]}" "$@") >>"$log" 2>&1
}

# Smoke runs: a launch and a 4 MiB exchange (Open MPI's single-copy path
# fails in some containers; then, and only then, turn it off).
for m in "${mpis[@]}"; do
    [[ -n ${why[$m]:-} ]] && continue
    if ! run_mpi "$m" 2 60 "$out/logs/$m-smoke-hello.log" ./hello; then
        why[$m]="smoke run of hello failed (logs/$m-smoke-hello.log)"
        continue
    fi
    smoke=(./pingpong --sizes "8,4m" --iters 4 --warmup 2 --reps 1 --time 0.05)
    if ! run_mpi "$m" 2 60 "$out/logs/$m-smoke-pingpong.log" "${smoke[@]}"; then
        if [[ $m == openmpi && -z ${OMPI_MCA_btl_vader_single_copy_mechanism:-} ]]; then
            export OMPI_MCA_btl_vader_single_copy_mechanism=none
            if run_mpi "$m" 2 60 "$out/logs/$m-smoke-pingpong.log" "${smoke[@]}"; then
                note "note: Open MPI needed OMPI_MCA_btl_vader_single_copy_mechanism=none here"
                continue
            fi
            unset OMPI_MCA_btl_vader_single_copy_mechanism
        fi
        why[$m]="smoke run of pingpong failed (logs/$m-smoke-pingpong.log)"
    fi
done

active=()
for m in "${mpis[@]}"; do
    [[ -z ${why[$m]:-} ]] && active+=("$m")
done

# ---- 3. the cases, in alternating rounds ----
# results.tsv rows: case mpi round size lat_median_us lat_min_us bw_median_MBps bw_max_MBps
record_pingpong() {
    local case=$1 m=$2 r=$3 log=$4
    grep -v '^#' "$log" | grep -E '^[0-9]+,' |
        awk -F, -v c="$case" -v m="$m" -v r="$r" 'BEGIN{OFS="\t"} {print c, m, r, $1, $4, $5, $6, $7}' \
            >>"$out/results.tsv"
}

pingpong_case() {
    local case=$1 ranks=$2 limit=$3
    shift 3
    local r m log
    for ((r = 1; r <= rounds; r++)); do
        for m in "${active[@]}"; do
            log=$out/raw/$case-$m-$r.txt
            echo "  $case round $r: $m" >&2
            if steady_run "$case/$m/$r" run_mpi "$m" "$ranks" "$limit" "$log" ./pingpong --csv "$@"; then
                record_pingpong "$case" "$m" "$r" "$log"
            else
                note "n/a: $m $case round $r failed with status $? (raw/$case-$m-$r.txt)"
            fi
        done
    done
}

# coll.tsv rows: case mpi round collective size avg_median_us max_median_us avg_best_us
coll_case() {
    local ranks=$1 case=coll$1
    local r m log
    for ((r = 1; r <= rounds; r++)); do
        for m in "${active[@]}"; do
            log=$out/raw/$case-$m-$r.txt
            echo "  $case round $r: $m" >&2
            if steady_run "$case/$m/$r" run_mpi "$m" "$ranks" "$coll_timeout" "$log" ./coll_bench --csv \
                --ops "$coll_ops" --sizes "$coll_sizes" "${coll_args[@]}"; then
                grep -v '^#' "$log" | grep -E '^[a-z_]+,[0-9]+,' |
                    awk -F, -v c="$case" -v m="$m" -v r="$r" \
                        'BEGIN{OFS="\t"} {print c, m, r, $1, $2, $5, $6, $7}' >>"$out/coll.tsv"
            else
                note "n/a: $m $case round $r failed with status $? (raw/$case-$m-$r.txt)"
            fi
        done
    done
}

# The floor under the 2-rank 8 B rows: bench/link_probe.c --osu times
# coll_bench's pattern (a barrier, then 8 bytes handed one way) with plain
# flags and no MPI library, three times, after the 2-rank rounds (in the
# same minutes).  floor.tsv rows: run sender_us receiver_us mean_us timer_us.
floor_probe() {
    local probe=$out/link_probe i line
    : >"$out/floor.tsv"
    if [[ ! -x $probe ]] && ! link_probe_build "$probe" "$out/logs/link_probe-build.log"; then
        note "n/a: floor: ${CC:-cc} could not build bench/link_probe.c (logs/link_probe-build.log)"
        return
    fi
    for i in 1 2 3; do
        # "link_probe --osu: sender S us, receiver R us, mean M us (timer T us), CPU A <-> CPU B"
        if ! line=$("$probe" --osu 2>>"$out/logs/link_probe-osu.log"); then
            note "n/a: floor: link_probe --osu failed (logs/link_probe-osu.log)"
            return
        fi
        awk -v i="$i" 'BEGIN{OFS="\t"} {print i, $4, $7, $10, $13}' <<<"$line" >>"$out/floor.tsv"
    done
}

steady_init "$out"
echo "bench-compare.sh: results in $out" >&2
if [[ $coll_only == 0 ]]; then
    pingpong_case pp2 2 "$pp_timeout" --sizes 8 "${pp_args[@]}"
    pingpong_case pp4 4 "$pp_timeout" --sizes 8 "${pp_args[@]}"
    pingpong_case sweep 2 "$sweep_timeout" "${sweep_args[@]}"
fi
: >"$out/coll.tsv"
IFS=, read -r -a coll_rank_list <<<"$coll_ranks"
for n in "${coll_rank_list[@]}"; do
    [[ $n =~ ^[1-9][0-9]*$ ]] || die "--coll-ranks: '$n' is not a rank count"
    coll_case "$n"
    [[ $n == 2 ]] && floor_probe
done

if [[ $coll_only == 1 || $no_launch == 1 ]]; then
    :
elif [[ $have_hyperfine == 1 ]]; then
    for ((r = 1; r <= rounds; r++)); do
        for m in "${active[@]}"; do
            [[ ${envs[$m]:-} == SHMPI_COLL=* ]] && continue  # an algorithm choice does not change a launch
            echo "  launch round $r: $m" >&2
            mpirun_cmd "$m" 4
            json=$out/raw/launch-$m-$r.json
            if ! (cd "$out/build/$m" && timeout -k 5 "$launch_timeout" hyperfine -N --warmup 3 \
                --runs "$hf_runs" --export-json "$json" "${cmd[*]} ./hello") \
                >"$out/raw/launch-$m-$r.txt" 2>&1; then
                note "n/a: $m launch round $r failed (raw/launch-$m-$r.txt)"
                rm -f "$json"
            fi
        done
    done
else
    note "n/a: launch time: hyperfine is not installed"
fi

# ---- 4. the report ----
{
    echo "# shmpi benchmark comparison"
    echo "command: scripts/bench-compare.sh ${orig_args[*]}"
    echo "machine: $ncpu CPUs, $(lscpu | sed -n 's/^Model name:[[:space:]]*//p' | head -1), Linux $(uname -r)"
    echo "rounds: $rounds (MPIs alternate within each round)"
    steady_summary
    case $bind_to in
        default) echo "placement: each MPI's default (no binding options given); where each rank could run (and ran):" ;;
        core) echo "placement: --bind-to core where the ranks fit the $ncpu CPUs, else each MPI's default; where each rank could run (and ran):" ;;
        none) echo "placement: --bind-to none for every MPI; where each rank could run (and ran):" ;;
    esac
    for m in "${mpis[@]}"; do
        if [[ -n ${why[$m]:-} ]]; then
            echo "$m: n/a (${why[$m]})"
            continue
        fi
        lib=$(sed -n 's/^# MPI library: //p' "$out/raw/pp2-$m-1.txt" "$out"/raw/coll*-"$m"-1.txt \
            2>/dev/null | head -1 | tr -s '\t' ' ')
        extra=""
        [[ $m == shmpi* ]] && extra=$shmpi_mpirun_args
        echo "$m: ${lib:-unknown library}; ${envs[$m]:+${envs[$m]} }${run[$m]}${extra:+ $extra}"
        for case in pp2 pp4 "${coll_rank_list[@]/#/coll}"; do
            f=$out/raw/$case-$m-1.txt
            [[ -f $f ]] || continue
            echo "    $case placement: $(sed -n 's/^# rank \([0-9]*\): /rank \1 /p' "$f" | sed 's/$/;/' | paste -sd ' ' - | sed 's/;$//')"
        done
    done
    [[ -s $out/notes.txt ]] && sed 's/^/    /' "$out/notes.txt"
} >"$out/header.txt"

# Tables, ratios and goals on stdout (and table.txt); results.csv and
# results.json; then the plots.
reported=1
python3 "$repo/scripts/bench-summary.py" "$out" "${mpis[@]}" | tee "$out/table.txt" || {
    echo "bench-compare.sh: scripts/bench-summary.py failed" >&2
    reported=0
}
echo
if python3 "$repo/scripts/bench-plot.py" "$out/results.csv" "$out/plots" >"$out/plots.txt" 2>&1; then
    echo "plots: $(grep -c '\.svg$' "$out/plots.txt") SVG files in $out/plots"
else
    echo "bench-compare.sh: scripts/bench-plot.py failed (plots.txt)" >&2
    reported=0
fi
echo "results: $out/results.csv, $out/results.json"

have_numbers=$(cut -f2 "$out/results.tsv" "$out/coll.tsv" | sort -u | wc -l)
echo "bench-compare.sh: raw outputs and logs in $out" >&2
((have_numbers > 0 && reported == 1))
