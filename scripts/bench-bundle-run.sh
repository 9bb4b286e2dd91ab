#!/usr/bin/env bash
# run.sh of a bundle made by scripts/bench-bundle.sh: bench/coll_bench with
# shmpi, Open MPI and MPICH, taking turns within each round, each MPI with
# its own launcher and placement (shmpi binds a rank per core, Open MPI
# binds to the package, Hydra does not bind).  Prints the tables of
# scripts/bench-compare.sh (bench-summary.py): for every rank count, each
# MPI's time per call (median over rounds of coll_bench's mean over ranks)
# and shmpi's over the faster of the other two.  Keeps every run's output
# (raw/), coll.tsv, results.csv and results.json in the output directory.
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
mkdir -p "$out/raw"
: > "$out/coll.tsv"

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
            f=$out/raw/coll$n-$mpi-$round.txt
            if one $mpi "$n" > "$f" 2> "$f.err"; then
                # coll.tsv as bench-compare.sh writes it: case mpi round
                # collective size avg_median_us max_median_us avg_best_us
                grep -E '^[a-z_]+,[0-9]+,' "$f" |
                    awk -F, -v c="coll$n" -v m="$mpi" -v r="$round" \
                        'BEGIN{OFS="\t"} {print c, m, r, $1, $2, $5, $6, $7}' >> "$out/coll.tsv"
            else
                echo "run.sh: $mpi with $n ranks, round $round failed (see $f.err)" >&2
                failed=1
            fi
        done
    done
done

# The tables of scripts/bench-compare.sh (bench-summary.py, bundled): times
# per rank count with shmpi over the faster peer, issue 4's goals, and
# results.csv/results.json in the output directory.
python3 "$b/bench-summary.py" "$out" shmpi openmpi mpich
exit $failed
