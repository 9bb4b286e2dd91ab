#!/usr/bin/env bash
# run-with-mpich.sh: builds every program of the tables in meson.build (next to
# this script) and ../coll/meson.build with another MPI, by default Debian's
# MPICH, and runs each at the table's rank counts.  This shows the programs
# encode the MPI standard rather than shmpi's behaviour.  Rows marked
# 'shmpi_only' are skipped.
#
# Usage: run-with-mpich.sh [NAME...]     (no names: every program)
# Environment:
#   MPICC    compiler wrapper     (default mpicc.mpich)
#   MPIRUN   launcher and options (default mpirun.mpich), e.g. for Open MPI:
#            MPICC=mpicc.openmpi MPIRUN="mpirun.openmpi --oversubscribe --allow-run-as-root"
#   TIMEOUT  seconds per run      (default 120; a run that times out fails)
#   MAX_RANKS  skip rank counts above this (default: none skipped).  MPICH's
#            ranks busy-poll, so a 16- or 24-rank run on a 2-core machine
#            takes tens of seconds; CI caps them to stay within its budget.
#   SLOW_MAX_RANKS  for rows marked 'mpich_slow' (15-50 s under MPICH at 8
#            ranks on a 2-core machine), skip rank counts above this
#            (default: none skipped); CI sets 4.
#
# A program passes at a rank count when its job exits 0, or, for a row marked
# 'should_fail', when it exits nonzero without timing out.  A row marked
# 'np1_shmpi_only' is skipped at 1 rank: MPICH 4.0.2 is wrong there (see the
# row's comment).  Prints one line
# per run and a final "N passed, N failed" line; exits 1 on any failure.
set -u

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
tables=("$here/meson.build")
if [[ -f "$here/../coll/meson.build" ]]; then
    tables+=("$(cd "$here/../coll" && pwd)/meson.build")
fi
if [[ -f "$here/../comm/meson.build" ]]; then
    tables+=("$(cd "$here/../comm" && pwd)/meson.build")
fi
if [[ -f "$here/../topo/meson.build" ]]; then
    tables+=("$(cd "$here/../topo" && pwd)/meson.build")
fi
if [[ -f "$here/../rma/meson.build" ]]; then
    tables+=("$(cd "$here/../rma" && pwd)/meson.build")
fi
if [[ -f "$here/../io/meson.build" ]]; then
    tables+=("$(cd "$here/../io" && pwd)/meson.build")
fi
for extra in soak limits; do  # the message storm; 64 ranks on few cores
    if [[ -f "$here/../$extra/meson.build" ]]; then
        tables+=("$(cd "$here/../$extra" && pwd)/meson.build")
    fi
done
mpicc=${MPICC:-mpicc.mpich}
read -r -a mpirun <<<"${MPIRUN:-mpirun.mpich}"
timeout_s=${TIMEOUT:-120}
max_ranks=${MAX_RANKS:-0}
slow_max_ranks=${SLOW_MAX_RANKS:-0}
skipped=0
skipped_slow=0
skipped_np1=0

for tool in "$mpicc" "${mpirun[0]}" timeout; do
    if ! command -v "$tool" >/dev/null; then
        echo "run-with-mpich.sh: '$tool' not found; install it or set MPICC/MPIRUN" >&2
        exit 77
    fi
done

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

passed=0
failed=0
failures=()

fail() {
    failed=$((failed + 1))
    failures+=("$1")
    echo "FAIL $1: $2"
    if [[ -s "$work/out" ]]; then
        tail -n 15 "$work/out" | sed 's/^/    | /'
    fi
}

# Rows of the table look like:  ['name', ['a.c', 'b.c'], [1, 2, 4]],
# optionally with , 'should_fail', 'shmpi_only' and/or 'np1_shmpi_only'
# before the closing bracket.  Other lists in the same files (rows without C sources) are not
# programs.  Each row read is one line of $work/rows: its table's directory,
# a tab, the row.
: >"$work/rows"
for table in "${tables[@]}"; do
    dir=$(dirname "$table")
    rows=$(grep -E "^[[:space:]]*\['[a-z0-9_]+',[[:space:]]*\[[^]]*\.c'" "$table")
    if [[ -z "$rows" ]]; then
        echo "run-with-mpich.sh: no table rows found in $table" >&2
        exit 1
    fi
    while IFS= read -r row; do
        printf '%s\t%s\n' "$dir" "$row" >>"$work/rows"
    done <<<"$rows"
done

# read_row LINE: sets dir, row, name, sources and the row's marks; fails for
# a row this run leaves out (not named on the command line, or shmpi_only).
read_row() {
    dir=${1%%$'\t'*}
    row=${1#*$'\t'}
    name=$(sed -E "s/^[[:space:]]*\['([a-z0-9_]+)'.*/\1/" <<<"$row")
    if [[ $# -gt 1 ]] && [[ " ${*:2} " != *" $name "* ]]; then
        return 1
    fi
    if grep -q "'shmpi_only'" <<<"$row"; then
        return 1
    fi
    sources=$(grep -oE "'[A-Za-z0-9_./-]+\.c'" <<<"$row" | tr -d "'")
    ranks=$(sed -E "s/.*\],[[:space:]]*\[([0-9, ]+)\].*/\1/" <<<"$row" | tr ',' ' ')
    should_fail=0 np1_shmpi_only=0 mpich_slow=0
    grep -q "'should_fail'" <<<"$row" && should_fail=1
    grep -q "'np1_shmpi_only'" <<<"$row" && np1_shmpi_only=1
    grep -q "'mpich_slow'" <<<"$row" && mpich_slow=1
    return 0
}

# Every program is compiled first, as many at once as there are CPUs (CI's
# run compiled about 100 programs one by one for 55 of its 180 s); each
# leaves its messages in NAME.cc and, when it compiled, NAME.ok.
compile_one() {
    local srcs=() s
    for s in $sources; do
        srcs+=("$dir/$s")
    done
    # -Wno-stringop-overflow: GCC 12 misreads MPICH's MPI_STATUSES_IGNORE,
    # the pointer value 1, as an empty array.
    if "$mpicc" -std=c11 -pthread -Wall -Wextra -Werror -Wno-stringop-overflow -O2 -I"$here" -I"$dir" \
        -o "$work/$name" "${srcs[@]}" >"$work/$name.cc" 2>&1; then
        : >"$work/$name.ok"
    fi
}
cpus=$(nproc 2>/dev/null || echo 2)
while IFS= read -r line; do
    read_row "$line" "$@" || continue
    while [[ $(jobs -rp | wc -l) -ge $cpus ]]; do
        wait -n
    done
    compile_one &
done <"$work/rows"
wait

while IFS= read -r line; do
    read_row "$line" "$@" || continue
    if [[ ! -f $work/$name.ok ]]; then
        cp "$work/$name.cc" "$work/out"
        fail "$name" "does not compile with $mpicc"
        continue
    fi

    for n in $ranks; do
        label="$name np=$n"
        if [[ $max_ranks -gt 0 && $n -gt $max_ranks ]]; then
            skipped=$((skipped + 1))
            continue
        fi
        if [[ $mpich_slow -eq 1 && $slow_max_ranks -gt 0 && $n -gt $slow_max_ranks ]]; then
            skipped_slow=$((skipped_slow + 1))
            echo "SKIP $label (mpich_slow, SLOW_MAX_RANKS=$slow_max_ranks)"
            continue
        fi
        if [[ $np1_shmpi_only -eq 1 && $n -eq 1 ]]; then
            skipped_np1=$((skipped_np1 + 1))
            echo "SKIP $label (np1_shmpi_only)"
            continue
        fi
        start=$(date +%s.%N)
        timeout -k 10 "$timeout_s" "${mpirun[@]}" -n "$n" "$work/$name" </dev/null >"$work/out" 2>&1
        rc=$?
        secs=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
        if [[ $rc -eq 124 || $rc -eq 137 ]]; then
            fail "$label" "timed out after $timeout_s s"
        elif [[ $should_fail -eq 0 && $rc -ne 0 ]]; then
            fail "$label" "exit status $rc (${secs} s)"
        elif [[ $should_fail -eq 1 && $rc -eq 0 ]]; then
            fail "$label" "should fail, but the job exited 0 (${secs} s)"
        else
            passed=$((passed + 1))
            echo "PASS $label (${secs} s)"
        fi
    done
done <"$work/rows"

summary="$passed passed, $failed failed"
if [[ $skipped -gt 0 ]]; then
    summary+=", $skipped skipped (more than MAX_RANKS=$max_ranks ranks)"
fi
if [[ $skipped_slow -gt 0 ]]; then
    summary+=", $skipped_slow skipped (mpich_slow rows above SLOW_MAX_RANKS=$slow_max_ranks ranks)"
fi
if [[ $skipped_np1 -gt 0 ]]; then
    summary+=", $skipped_np1 skipped at 1 rank (np1_shmpi_only)"
fi
echo "$summary"
if [[ $failed -gt 0 ]]; then
    printf '  failed: %s\n' "${failures[@]}"
    exit 1
fi
exit 0
