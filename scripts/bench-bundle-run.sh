#!/usr/bin/env bash
# run.sh of a bundle made by scripts/bench-bundle.sh: bench/coll_bench with
# shmpi, Open MPI and MPICH, taking turns within each round, each MPI with
# its own launcher and placement (shmpi binds a rank per core, Open MPI
# binds to the package, Hydra does not bind).  Prints, for every collective,
# size and rank count, shmpi's time over the faster of the other two (each
# the median over rounds of coll_bench's mean over ranks), and keeps every
# run's output in the output directory.
#
# usage: run.sh [--ranks "16 8 4"] [--rounds 2] [--out DIR] [-- coll_bench options]
# Exit status: 0 when every run succeeded, 1 otherwise (the table still comes).
# The coll_bench options default to
#   --sizes 8,64k,256k,1m,4m --ops barrier,bcast,reduce,allreduce,gather,scatter,allgather,alltoall
#   --time 0.08 --reps 5
set -uo pipefail

b=$(cd "$(dirname "$0")" && pwd)
ranks="16 8 4"
rounds=2
out=$PWD/bench-bundle-out
# shellcheck disable=SC2054 # (commas inside coll_bench arguments)
args=(--sizes 8,64k,256k,1m,4m --ops barrier,bcast,reduce,allreduce,gather,scatter,allgather,alltoall
    --time 0.08 --reps 5)
while [[ $# -gt 0 ]]; do
    case $1 in
        --ranks) ranks=$2; shift 2 ;;
        --rounds) rounds=$2; shift 2 ;;
        --out) out=$2; shift 2 ;;
        --) shift; args=("$@"); break ;;
        -h | --help) sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        *) echo "run.sh: unknown argument '$1' (--help lists them)" >&2; exit 1 ;;
    esac
done
# shellcheck source=/dev/null
source "$b/env.sh"
mkdir -p "$out"

one() { # MPI RANKS: one coll_bench run (at most 10 minutes), CSV on stdout
    case $1 in
        shmpi) timeout 600 "$b/shmpi/mpirun" -n "$2" "$b/shmpi/coll_bench" --csv "${args[@]}" ;;
        openmpi)
            # (Open MPI refuses more ranks than cores unless told.)
            local over=()
            (($2 > $(nproc))) && over=(--oversubscribe)
            timeout 600 "$b/ompi/bin/mpirun" "${over[@]}" -n "$2" "$b/ompi-bin/coll_bench" --csv "${args[@]}"
            ;;
        mpich) timeout 600 "$b/mpich-bin/mpiexec.hydra" -n "$2" "$b/mpich-bin/coll_bench" --csv "${args[@]}" ;;
    esac
}
failed=0
for round in $(seq 1 "$rounds"); do
    for n in $ranks; do
        for mpi in shmpi openmpi mpich; do
            f=$out/$mpi.n$n.r$round.csv
            if ! one $mpi "$n" > "$f" 2> "$f.err"; then
                echo "run.sh: $mpi with $n ranks, round $round failed (see $f.err)" >&2
                failed=1
            fi
        done
    done
done

python3 - "$out" <<'EOF'
import glob, os, re, statistics, sys
out = sys.argv[1]
t = {}
for f in glob.glob(os.path.join(out, '*.csv')):
    mpi, n, _ = os.path.basename(f).split('.')[:3]
    for line in open(f):
        m = re.match(r'^([a-z]+),(\d+),\d+,\d+,([\d.]+),', line)
        if m:
            t.setdefault((m.group(1), int(m.group(2)), int(n[1:]), mpi), []).append(float(m.group(3)))
ns = sorted({k[2] for k in t})
print('| collective | size (B) | ' + ' | '.join('%d ranks' % n for n in ns) + ' |')
print('|---|---|' + '---|' * len(ns))
for op, size in sorted({(k[0], k[1]) for k in t}, key=lambda k: (k[0], k[1])):
    cells = []
    for n in ns:
        sh = t.get((op, size, n, 'shmpi'))
        peers = [statistics.median(t[(op, size, n, p)]) for p in ('openmpi', 'mpich') if (op, size, n, p) in t]
        cells.append('%.2f' % (statistics.median(sh) / min(peers)) if sh and peers else 'n/a')
    print('| %s | %d | %s |' % (op, size, ' | '.join(cells)))
EOF
exit $failed
