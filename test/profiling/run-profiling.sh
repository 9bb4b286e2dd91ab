#!/usr/bin/env bash
# run-profiling.sh: builds prof.c (a PMPI profiling library) and app.c with
# an MPI's mpicc, runs the program, and checks the counts the library prints
# at MPI_Finalize: every rank made 10 calls of MPI_Send of 25 ints (1000
# bytes) and 3 of MPI_Reduce.
#
# usage: run-profiling.sh MODE NRANKS MPICC MPIRUN [MPIRUN OPTIONS...]
#   MODE  link     the program is linked with -lprof before the MPI library
#         preload  the program is built alone; the library comes in through
#                  LD_PRELOAD at run time
# It needs only the standard profiling interface, so it passes with MPICH
# too: run-profiling.sh link 4 mpicc.mpich mpirun.mpich
set -uo pipefail

mode=${1:?usage: run-profiling.sh MODE NRANKS MPICC MPIRUN [OPTIONS...]}
nranks=${2:?missing NRANKS}
mpicc=${3:?missing MPICC}
shift 3
mpirun=("$@")
[[ ${#mpirun[@]} -gt 0 ]] || { echo "run-profiling.sh: missing MPIRUN" >&2; exit 2; }
here=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)

work=$(mktemp -d)
trap 'rm -rf -- "$work"' EXIT
fail() {
    echo "run-profiling.sh $mode np=$nranks: FAIL: $*" >&2
    [[ -s $work/out ]] && sed 's/^/    | /' "$work/out" >&2
    exit 1
}

# 1. The profiling library: position-independent, its own MPI_ symbols.
"$mpicc" -std=c11 -Wall -Wextra -Werror -fPIC -shared -o "$work/libprof.so" "$here/prof.c" \
    >"$work/out" 2>&1 || fail "$mpicc could not build libprof.so"

# 2. The program.  The wrapper puts the MPI library after the user's
#    arguments, so -lprof comes first and its MPI_Send wins.
# -Wno-stringop-overflow: GCC 12 misreads MPICH's MPI_STATUSES_IGNORE, the pointer
# value 1, as an empty array (as in test/mpi/run-with-mpich.sh).
cflags=(-std=c11 -Wall -Wextra -Werror -Wno-stringop-overflow -I"$here/../mpi")
case $mode in
    link)
        "$mpicc" "${cflags[@]}" -o "$work/app" "$here/app.c" -L"$work" -lprof \
            -Wl,-rpath,"$work" >"$work/out" 2>&1 || fail "$mpicc could not link app with -lprof"
        run_env=()
        ;;
    preload)
        "$mpicc" "${cflags[@]}" -o "$work/app" "$here/app.c" >"$work/out" 2>&1 ||
            fail "$mpicc could not build app"
        run_env=(LD_PRELOAD="$work/libprof.so${LD_PRELOAD:+:$LD_PRELOAD}")
        ;;
    *) fail "unknown mode '$mode' (link or preload)" ;;
esac

# 3. Run, then compare each rank's line with what app.c did.
env "${run_env[@]}" timeout -k 5 120 "${mpirun[@]}" -n "$nranks" "$work/app" >"$work/out" 2>&1 ||
    fail "the profiled program failed (exit status $?)"
for ((r = 0; r < nranks; ++r)); do
    want="prof: rank $r: MPI_Send 10 calls 1000 bytes, MPI_Reduce 3 calls"
    grep -qxF "$want" "$work/out" || fail "no line '$want'"
done
lines=$(grep -c '^prof: ' "$work/out")
[[ $lines -eq $nranks ]] || fail "$lines profile lines for $nranks ranks"
echo "run-profiling.sh $mode np=$nranks: PASS"
sed 's/^/    | /' "$work/out"
