#!/usr/bin/env bash
# dtype_compare.sh: derived-datatype messages (bench/dtype_sendrecv.c), or
# collectives on derived types (--program dtype_coll: bench/dtype_coll.c),
# with shmpi, MPICH and Open MPI on this machine, side by side.
#
# What it does:
#   1. Builds the program with each MPI's mpicc (-O2): shmpi's
#      build-tree mpicc (--shmpi-build DIR, default ./build), mpicc.mpich and
#      mpicc.openmpi.  An MPI that is missing or fails to build is n/a.
#   2. Runs `mpirun -n RANKS` of each, in rounds; within a round the MPIs take
#      turns, so slow drifts of a shared machine hit all alike.  Each rank
#      pins itself (rank r to the r-th CPU it may use) and prints where.
#   3. Prints the machine and placements, then a Markdown table: for every
#      layout the median over rounds of each MPI's GB/s (data bytes), and
#      shmpi over the faster of the other two.  With --times, microseconds
#      instead of GB/s, and the ratio is shmpi's time over the faster
#      other's (below 1: shmpi is faster).
#
# Each run sits between two link probes and is repeated when the machine
# was off its usual speed (bench/steady.sh; --steady F, default 1.5, 0 never;
# --steady-tries N, default 4).
#
# usage: bench/dtype_compare.sh [--shmpi-build DIR] [--program dtype_sendrecv|dtype_coll]
#                               [--ranks N] [--rounds N] [--bytes N] [--times] [--out DIR]
#                               [--steady F] [--steady-tries N] [--layouts a,b,...]
# --layouts (dtype_sendrecv only) runs only the layouts named, e.g.
# vector/128,vector/4096.
# Exit status: 0 when shmpi produced numbers, 1 otherwise.
set -uo pipefail

repo=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=bench/steady.sh
source "$repo/bench/steady.sh"
build="$repo/build"
rounds=3
bytes=1048576
out=""
program=dtype_sendrecv
ranks=2
times=0
layouts=""
while [[ $# -gt 0 ]]; do
    case $1 in
        --shmpi-build) build=${2:?}; shift 2 ;;
        --rounds) rounds=${2:?}; shift 2 ;;
        --bytes) bytes=${2:?}; shift 2 ;;
        --program) program=${2:?}; shift 2 ;;
        --ranks) ranks=${2:?}; shift 2 ;;
        --times) times=1; shift ;;
        --layouts) layouts=${2:?}; shift 2 ;;
        --out) out=${2:?}; shift 2 ;;
        --steady) steady_factor=${2:?}; shift 2 ;;
        --steady-tries) steady_tries=${2:?}; shift 2 ;;
        -h|--help) sed -n '2,/^set -uo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        *) echo "dtype_compare.sh: unknown argument '$1' (try --help)" >&2; exit 2 ;;
    esac
done
steady_check || exit 2
build=$(cd -- "$build" 2>/dev/null && pwd) || { echo "dtype_compare.sh: no build directory $build" >&2; exit 1; }
[[ -n $out ]] || out=$(mktemp -d "${TMPDIR:-/tmp}/shmpi-dtype-bench.XXXXXX")
mkdir -p "$out"
case $program in
    dtype_sendrecv|dtype_coll) ;;
    *) echo "dtype_compare.sh: --program must be dtype_sendrecv or dtype_coll" >&2; exit 2 ;;
esac
prog_args=(--bytes "$bytes")
if [[ -n $layouts ]]; then
    [[ $program == dtype_sendrecv ]] || { echo "dtype_compare.sh: --layouts is for dtype_sendrecv only" >&2; exit 2; }
    prog_args+=(--layouts "$layouts")
fi

root_args=()
[[ $(id -u) -eq 0 ]] && root_args=(--allow-run-as-root)
declare -A run=(
    [shmpi]="$build/tools/launcher/mpirun -n $ranks"
    [mpich]="mpirun.mpich -n $ranks"
    [openmpi]="mpirun.openmpi --oversubscribe ${root_args[*]} -n $ranks"
)
# shellcheck source=bench/compare_lib.sh
source "$repo/bench/compare_lib.sh"
mpi_list=shmpi,mpich,openmpi
build_each dtype_compare.sh "$program" || exit 1

# One run of MPI $1 in round $2.
run_one() {
    # shellcheck disable=SC2086
    timeout 600 ${run[$1]} "$out/$program.$1" "${prog_args[@]}" >"$out/run.$1.$2" 2>"$out/err.$1.$2"
}

steady_init "$out"
for ((r = 1; r <= rounds; ++r)); do
    for m in "${mpis[@]}"; do
        steady_run "$m/$r" run_one "$m" "$r" ||
            echo "dtype_compare.sh: $m round $r failed (see $out/err.$m.$r)" >&2
    done
done

python3 - "$out" "$rounds" "$times" "$(steady_summary)" "${mpis[@]}" <<'EOF'
import os, statistics, sys
out, rounds, times, steady, mpis = sys.argv[1], int(sys.argv[2]), sys.argv[3] == "1", sys.argv[4], sys.argv[5:]
names = {"shmpi": "shmpi", "mpich": "MPICH", "openmpi": "Open MPI"}
rates, sizes, order, heads = {}, {}, [], {}
for m in mpis:
    for r in range(1, rounds + 1):
        path = os.path.join(out, f"run.{m}.{r}")
        if not os.path.exists(path):
            continue
        for line in open(path):
            if line.startswith("#"):
                heads.setdefault(m, []).append(line.strip("# \n"))
                continue
            f = line.split()
            if len(f) != 4 or f[0] == "layout":
                continue
            if f[0] not in order:
                order.append(f[0])
            sizes[f[0]] = f[1]
            rates.setdefault((m, f[0]), []).append(float(f[2] if times else f[3]))
with open("/proc/cpuinfo") as c:
    model = next((l.split(":", 1)[1].strip() for l in c if l.startswith("model name")), "?")
print(f"Machine: {model}, {os.cpu_count()} CPUs; 1-minute load {os.getloadavg()[0]:.1f} at the end.")
print(steady[0].upper() + steady[1:] + ".")
for m in mpis:
    seen = []
    for h in heads.get(m, []):
        if h not in seen and not h.startswith("layout"):
            seen.append(h)
    print(f"- {names[m]}: " + "; ".join(seen[:3]))
print()
unit = " us" if times else " GB/s"
cols = [names[m] + unit for m in mpis]
print("| layout | bytes | " + " | ".join(cols) + " | shmpi / best other |")
print("|---|---:|" + "---:|" * len(cols) + "---:|")
for lay in order:
    med = {m: statistics.median(rates[(m, lay)]) for m in mpis if (m, lay) in rates}
    others = [v for k, v in med.items() if k != "shmpi"]
    best = (min if times else max)(others) if others else None
    ratio = f"{med['shmpi'] / best:.2f}" if "shmpi" in med and others and best > 0 else "n/a"
    cells = [f"{med[m]:.2f}" if m in med else "n/a" for m in mpis]
    print(f"| {lay} | {sizes[lay]} | " + " | ".join(cells) + f" | {ratio} |")
sys.exit(0 if any(k[0] == "shmpi" for k in rates) else 1)
EOF
