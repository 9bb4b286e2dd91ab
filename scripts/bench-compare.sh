#!/usr/bin/env bash
# bench-compare.sh: shmpi against Open MPI and MPICH on this machine, side by
# side, from the same benchmark sources (bench/pingpong.c, bench/hello.c,
# bench/coll_bench.c).
#
# What it does:
#   1. Finds the MPIs: shmpi (its mpicc and mpirun, from --shmpi-build,
#      --shmpi-mpicc or SHMPI_MPICC), mpicc.openmpi/mpirun.openmpi and
#      mpicc.mpich/mpirun.mpich.  One that is missing, fails to compile the
#      benchmarks or fails a smoke run is reported as n/a; the others go on.
#   2. Builds bench/pingpong.c and bench/hello.c with each MPI's mpicc (-O2).
#   3. Runs every case in rounds; within a round the MPIs take turns
#      (shmpi, openmpi, mpich), so slow drifts of the machine hit all alike:
#        pp2     pingpong 8 B, 2 ranks
#        pp4     pingpong 8 B, 4 ranks (2 of them idle in MPI_Recv); on a
#                machine with fewer than 4 CPUs this is oversubscribed
#        sweep   pingpong 8 B .. 4 MiB, 2 ranks
#        launch  wall time of `mpirun -n 4 ./hello` (hyperfine -N)
#        collN   bench/coll_bench with N ranks for each N of --coll-ranks
#                (default 2,4,8: 4 and 8 are oversubscribed on a 2-CPU
#                machine): --coll-ops at --coll-sizes bytes per rank, OSU
#                style (input rewritten, barrier, one timed call); the time
#                is the mean over ranks, median over coll_bench's reps
#   4. Prints the machine, each MPI's placement, and a table of absolute
#      numbers (median over rounds of each run's median; best in brackets)
#      with the ratio shmpi / best of the others.
#
# Placement: every MPI runs with its own default binding (Open MPI binds
# ranks to cores unless oversubscribed; MPICH's Hydra does not bind); the
# table header shows what each one did.  Ranks beyond the CPU count get
# Open MPI's --oversubscribe; as root Open MPI also gets --allow-run-as-root.
#
# usage: scripts/bench-compare.sh [options]
#   --shmpi-build DIR    shmpi build directory (uses DIR/tools/wrappers/mpicc
#                        and DIR/tools/launcher/mpirun)
#   --shmpi-mpicc PATH   shmpi's mpicc (build-tree or installed); env SHMPI_MPICC
#   --shmpi-mpirun PATH  shmpi's mpirun; env SHMPI_MPIRUN (default: next to
#                        mpicc, or ../launcher/mpirun in a build tree)
#   --only LIST          comma list of MPIs to run (default shmpi,openmpi,mpich)
#   --coll-ranks LIST    rank counts of the collective cases (default 2,4,8;
#                        an empty list skips them)
#   --coll-ops LIST      collectives measured (default barrier,bcast,reduce,
#                        allreduce,gather; see coll_bench --help)
#   --coll-sizes LIST    bytes per rank (default 8,64k,1m)
#   --rounds N           rounds of alternation (default 3)
#   --out DIR            where builds, logs and raw results go (default: a new
#                        temporary directory)
#   --quick              1 round, short budgets: checks that everything runs
# Exit status: 0 when at least one MPI produced numbers, 1 otherwise.
set -uo pipefail

repo=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd)
orig_args=("$@")

shmpi_build=""
shmpi_mpicc=${SHMPI_MPICC:-}
shmpi_mpirun=${SHMPI_MPIRUN:-}
only="shmpi,openmpi,mpich"
coll_ranks="2,4,8"
coll_ops="barrier,bcast,reduce,allreduce,gather"
coll_sizes="8,64k,1m"
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
        --rounds) rounds=${2:?}; shift 2 ;;
        --out) out=${2:?}; shift 2 ;;
        --quick) quick=1; rounds=1; shift ;;
        -h|--help) sed -n '2,/^set -uo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        *) die "unknown argument '$1' (try --help)" ;;
    esac
done
[[ $rounds =~ ^[1-9][0-9]*$ ]] || die "--rounds '$rounds' is not a positive number"
command -v python3 >/dev/null || die "python3 is needed to summarise the results"
have_hyperfine=1
command -v hyperfine >/dev/null || have_hyperfine=0

if [[ -z $out ]]; then
    out=$(mktemp -d "${TMPDIR:-/tmp}/shmpi-bench.XXXXXX") || die "cannot make a temporary directory"
fi
mkdir -p "$out"/build "$out"/logs "$out"/raw || die "cannot create $out"
out=$(cd -- "$out" && pwd)
: >"$out/results.tsv"
: >"$out/notes.txt"
note() { echo "$*" | tee -a "$out/notes.txt"; }

ncpu=$(nproc)
if [[ $quick == 1 ]]; then
    pp_args=(--reps 5 --time 0.3)
    sweep_args=(--sizes 8:4m --reps 3 --time 0.1)
    coll_args=(--reps 3 --time 0.1)
    hf_runs=3
else
    pp_args=(--reps 11 --time 1.0)
    sweep_args=(--sizes 8:4m --reps 7 --time 0.5)
    coll_args=(--reps 5 --time 0.3)
    hf_runs=10
fi
pp_timeout=60
sweep_timeout=180
launch_timeout=300
coll_timeout=900

# ---- 1. the MPIs ----
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

declare -A cc run why
mpis=()
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
            if command -v "mpicc.$m" >/dev/null && command -v "mpirun.$m" >/dev/null; then
                cc[$m]=mpicc.$m
                run[$m]=mpirun.$m
            else
                why[$m]="mpicc.$m or mpirun.$m not installed"
            fi ;;
        *) die "--only: unknown MPI '$m' (shmpi, openmpi, mpich)" ;;
    esac
    mpis+=("$m")
done

# The mpirun command line for `ranks` ranks of one MPI, as an array in `cmd`.
mpirun_cmd() {
    local m=$1 ranks=$2
    cmd=("${run[$m]}")
    if [[ $m == openmpi ]]; then
        [[ $(id -u) == 0 ]] && cmd+=(--allow-run-as-root)
        ((ranks > ncpu)) && cmd+=(--oversubscribe)
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
    echo "+ ${cmd[*]} $*" >"$log"
    (cd "$out/build/$m" && timeout -k 5 "$limit" "${cmd[@]}" "$@") >>"$log" 2>&1
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
            if run_mpi "$m" "$ranks" "$limit" "$log" ./pingpong --csv "$@"; then
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
            if run_mpi "$m" "$ranks" "$coll_timeout" "$log" ./coll_bench --csv --ops "$coll_ops" \
                --sizes "$coll_sizes" "${coll_args[@]}"; then
                grep -v '^#' "$log" | grep -E '^[a-z_]+,[0-9]+,' |
                    awk -F, -v c="$case" -v m="$m" -v r="$r" \
                        'BEGIN{OFS="\t"} {print c, m, r, $1, $2, $5, $6, $7}' >>"$out/coll.tsv"
            else
                note "n/a: $m $case round $r failed with status $? (raw/$case-$m-$r.txt)"
            fi
        done
    done
}

echo "bench-compare.sh: results in $out" >&2
pingpong_case pp2 2 "$pp_timeout" --sizes 8 "${pp_args[@]}"
pingpong_case pp4 4 "$pp_timeout" --sizes 8 "${pp_args[@]}"
pingpong_case sweep 2 "$sweep_timeout" "${sweep_args[@]}"
: >"$out/coll.tsv"
IFS=, read -r -a coll_rank_list <<<"$coll_ranks"
for n in "${coll_rank_list[@]}"; do
    [[ $n =~ ^[1-9][0-9]*$ ]] || die "--coll-ranks: '$n' is not a rank count"
    coll_case "$n"
done

if [[ $have_hyperfine == 1 ]]; then
    for ((r = 1; r <= rounds; r++)); do
        for m in "${active[@]}"; do
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
    echo "placement: each MPI's default (no binding options given); where ranks 0 and 1 could run:"
    for m in "${mpis[@]}"; do
        if [[ -n ${why[$m]:-} ]]; then
            echo "$m: n/a (${why[$m]})"
            continue
        fi
        lib=$(sed -n 's/^# MPI library: //p' "$out/raw/pp2-$m-1.txt" 2>/dev/null | head -1 | tr -s '\t' ' ')
        echo "$m: ${lib:-unknown library}; ${run[$m]}"
        for case in pp2 pp4 "${coll_rank_list[@]/#/coll}"; do
            f=$out/raw/$case-$m-1.txt
            [[ -f $f ]] || continue
            echo "    $case placement: $(sed -n 's/^# rank \([01]\): /rank \1 /p' "$f" | sed 's/$/;/' | paste -sd ' ' - | sed 's/;$//')"
        done
    done
    [[ -s $out/notes.txt ]] && sed 's/^/    /' "$out/notes.txt"
} >"$out/header.txt"

python3 - "$out" "${mpis[@]}" <<'PY' | tee "$out/table.txt"
import csv, json, os, statistics, sys

out, mpis = sys.argv[1], sys.argv[2:]
print(open(os.path.join(out, "header.txt")).read().rstrip())

# (case, mpi, size) -> list of (lat_median, lat_min, bw_median, bw_max), one per round
runs = {}
with open(os.path.join(out, "results.tsv")) as f:
    for row in csv.reader(f, delimiter="\t"):
        if len(row) < 8:
            continue
        key = (row[0], row[1], int(row[3]))
        runs.setdefault(key, []).append(tuple(float(x) for x in row[4:8]))

def launch_times(m):
    times = []
    for name in sorted(os.listdir(os.path.join(out, "raw"))):
        if name.startswith(f"launch-{m}-") and name.endswith(".json"):
            with open(os.path.join(out, "raw", name)) as f:
                for res in json.load(f)["results"]:
                    times += res["times"]
    return times

def cell(vals):
    """median over rounds [best], or n/a"""
    return "n/a" if vals is None else f"{vals[0]:.3f} [{vals[1]:.3f}]"

def ratio(m_vals, others, lower_is_better=True):
    if m_vals is None or not others:
        return "n/a"
    best = min(others) if lower_is_better else max(others)
    return f"{m_vals / best:.2f}" if best > 0 else "n/a"

peers = [m for m in mpis if m != "shmpi"]
cols = mpis + (["shmpi/best"] if "shmpi" in mpis and peers else [])

def row(label, per_mpi, lower_is_better=True):
    """per_mpi: mpi -> (median, best) or None"""
    cells = [cell(per_mpi.get(m)) for m in mpis]
    if "shmpi/best" in cols:
        s = per_mpi.get("shmpi")
        others = [per_mpi[m][0] for m in peers if per_mpi.get(m) is not None]
        cells.append(ratio(s[0] if s else None, others, lower_is_better))
    print(f"| {label} | " + " | ".join(cells) + " |")

def head(title):
    print()
    print(f"| {title} | " + " | ".join(cols) + " |")
    print("|---" * (len(cols) + 1) + "|")

def lat(case, m, size):
    v = runs.get((case, m, size))
    if not v:
        return None
    return (statistics.median(x[0] for x in v), min(x[1] for x in v))

def bw(case, m, size):
    v = runs.get((case, m, size))
    if not v:
        return None
    return (statistics.median(x[2] for x in v), max(x[3] for x in v))

print("\nCells: median over rounds [best round]; ratio = shmpi / best other MPI "
      "(latency and time: < 1 means shmpi is faster; bandwidth: > 1 means shmpi is faster).")
head("8 B half round trip (us)")
row("2 ranks", {m: lat("pp2", m, 8) for m in mpis})
row("4 ranks (2 idle in MPI_Recv)", {m: lat("pp4", m, 8) for m in mpis})

sizes = sorted({k[2] for k in runs if k[0] == "sweep"})
if sizes:
    head("size sweep, 2 ranks: latency (us)")
    for s in sizes:
        row(f"{s} B", {m: lat("sweep", m, s) for m in mpis})
    head("size sweep, 2 ranks: bandwidth (MB/s)")
    for s in sizes:
        if s >= 1024:
            row(f"{s} B", {m: bw("sweep", m, s) for m in mpis}, lower_is_better=False)

# Collectives: (case, mpi, collective, size) -> list of (avg, best), one per round.
coll = {}
coll_path = os.path.join(out, "coll.tsv")
if os.path.exists(coll_path):
    with open(coll_path) as f:
        for rec in csv.reader(f, delimiter="\t"):
            if len(rec) < 8:
                continue
            coll.setdefault((rec[0], rec[1], rec[3], int(rec[4])), []).append((float(rec[5]), float(rec[7])))
for case in sorted({k[0] for k in coll}, key=lambda c: int(c[4:])):
    head(f"collectives, {case[4:]} ranks: time per call (us)")
    order = []
    for k in coll:
        if k[0] == case and (k[2], k[3]) not in order:
            order.append((k[2], k[3]))
    for op, size in order:
        per = {}
        for m in mpis:
            v = coll.get((case, m, op, size))
            per[m] = (statistics.median(x[0] for x in v), min(x[1] for x in v)) if v else None
        row(f"{op} {size} B" if op != "barrier" else "barrier", per)

head("launch: mpirun -n 4 ./hello (ms)")
per = {}
for m in mpis:
    t = launch_times(m)
    per[m] = (statistics.median(t) * 1e3, min(t) * 1e3) if t else None
row("wall time", per)
PY

have_numbers=$(cut -f2 "$out/results.tsv" "$out/coll.tsv" | sort -u | wc -l)
echo "bench-compare.sh: raw outputs and logs in $out" >&2
((have_numbers > 0))
