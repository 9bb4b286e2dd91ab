#!/usr/bin/env bash
# The placement experiment of docs/PLACEMENT.md: the same collectives under
# --bind-to core, numa and none, compact against spread mapping, and an
# oversubscribed job bound (sharing cores) against unbound.
#
# usage: tools/topo/placement_experiment.sh BUILD_DIR [ROUNDS] > results.csv
#        tools/topo/placement_experiment.sh --summarize results.csv
#
# N is the number of cores shmpi-topo reports for this machine.  Each round
# runs every configuration once, in turn, so that slow drifts of the machine
# (other jobs) spread over all configurations instead of biasing one; the
# summary is the median over rounds of coll_bench's avg column (itself the
# median over its repetitions of the mean over ranks).
set -euo pipefail

if [[ ${1:-} == --summarize ]]; then
    python3 - "$2" <<'PY'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
configs, cells = [], {}
for r in rows:
    cfg = f"-n {r['ranks']} {r['options']}"
    if cfg not in configs:
        configs.append(cfg)
    key = (r["collective"], int(r["size_bytes"]))
    cells.setdefault(key, {}).setdefault(cfg, []).append(float(r["avg_median_us"]))
print("| collective | bytes | " + " | ".join(f"`{c}`" for c in configs) + " |")
print("|---|---:|" + "---:|" * len(configs))
for (op, size) in sorted(cells, key=lambda k: (k[0], k[1])):
    vals = []
    for c in configs:
        v = cells[(op, size)].get(c)
        vals.append(f"{statistics.median(v):.2f}" if v else "")
    print(f"| {op} | {size} | " + " | ".join(vals) + " |")
PY
    exit 0
fi

build=${1:?usage: $0 BUILD_DIR [ROUNDS]}
rounds=${2:-3}
mpirun=$build/tools/launcher/mpirun
bench=$build/bench/coll_bench
topo=$build/tools/topo/shmpi-topo
cores=$("$topo" | head -1 | sed -n 's/.* \([0-9][0-9]*\) cores\{0,1\},.*/\1/p')
[[ -n $cores ]] || { echo "cannot read the core count from shmpi-topo" >&2; exit 1; }
over=$((2 * cores))

configs=(
    "$cores|--bind-to core --map-by core:compact"
    "$cores|--bind-to core --map-by package:spread"
    "$cores|--bind-to numa"
    "$cores|--bind-to none"
    "$over|--bind-to core --oversubscribe"
    "$over|--bind-to none"
)
ops=barrier,bcast,allreduce,allgather,alltoall
sizes=8,65536,1048576

echo "round,ranks,options,collective,size_bytes,avg_median_us,max_median_us"
for ((round = 1; round <= rounds; ++round)); do
    for c in "${configs[@]}"; do
        n=${c%%|*}
        opts=${c#*|}
        # shellcheck disable=SC2086  # opts is a list of options
        "$mpirun" -n "$n" $opts "$bench" --csv --ops "$ops" --sizes "$sizes" --reps 3 --time 0.2 |
            grep -v '^#' | tail -n +2 |
            awk -F, -v r="$round" -v n="$n" -v o="$opts" '{ print r "," n "," o "," $1 "," $2 "," $5 "," $6 }'
    done
done
