#!/usr/bin/env bash
# sanitizers.sh: builds shmpi with AddressSanitizer + UndefinedBehaviorSanitizer
# and with ThreadSanitizer, each in its own build directory, and runs the test
# suites in each (issue 7, point 1).  Exits nonzero when a build or a test
# failed; the last line says what passed and what failed.
#
# usage: scripts/sanitizers.sh [asan] [tsan]     (default: both)
# environment:
#   SHMPI_SAN_SUITES   meson test suites to run, space-separated (default:
#                      every suite whose programs are built by meson itself:
#                      unit mpi coll coll_shm dtype comm topo place faults
#                      limits soak).  Not meaningful under a sanitizer:
#                      wrappers, discovery and profiling compile programs with
#                      the plain mpicc against the instrumented libshmpi
#                      (the sanitizer runtime would have to come first), fuzz
#                      (its own sanitizers), bench (timings).
#   SHMPI_SAN_ASAN_SUITES, SHMPI_SAN_TSAN_SUITES
#                      the suites for one sanitizer (default: SHMPI_SAN_SUITES)
#   SHMPI_SAN_ASAN_DIR, SHMPI_SAN_TSAN_DIR
#                      build directories, relative to the repository (default:
#                      build-asan, build-tsan)
#   SHMPI_SAN_MAX_RANKS
#                      skip the tests whose name says they run more ranks
#                      than this ('..._np8', '..._np16_linear'; default 0:
#                      none skipped).  A sanitized rank runs 2 to 15 times
#                      slower, and the larger teams mostly repeat, slower
#                      still, what 2 to 4 ranks already reached.
#   SHMPI_SAN_SKIP     skip the tests whose name matches this Python regular
#                      expression (default: none)
#   SHMPI_SAN_BUILD    'needed' (default): build only the targets the chosen
#                      suites' tests depend on (read from meson introspect),
#                      which saves most of the build time when few suites
#                      run; 'all': build everything
#   SHMPI_JOBS         parallel build jobs (default: ninja's choice)
#   SHMPI_SAN_TIMEOUT_MULTIPLIER
#                      meson test --timeout-multiplier (default 3: sanitized
#                      code runs 2 to 15 times slower)
#
# Options the tests run under, and why:
#   ASAN_OPTIONS  detect_leaks=1 (a leak fails the test), abort_on_error=1,
#                 handle_segv=0 is NOT set here: test/faults sets it itself
#                 for the programs that must die of SIGSEGV.
#   UBSAN_OPTIONS halt_on_error=1, print_stacktrace=1: undefined behaviour
#                 fails the test instead of printing and going on.
#   TSAN_OPTIONS  halt_on_error=1.  ThreadSanitizer sees the threads of one
#                 process (the ring stress tests, the launcher's threads); the
#                 ranks' sharing through the segment is between processes,
#                 which it cannot see, so the ranks run as plain programs.
#                 handle_segv=0, as for ASan, comes from test/faults.
set -uo pipefail

repo=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd)
cd -- "$repo" || exit 1
started=$SECONDS

kinds=("$@")
[[ ${#kinds[@]} -gt 0 ]] || kinds=(asan tsan)
suites=${SHMPI_SAN_SUITES:-unit mpi coll coll_shm dtype comm topo place faults limits soak}
multiplier=${SHMPI_SAN_TIMEOUT_MULTIPLIER:-3}

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
export TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=1}

results=()
failed=0

step() { printf '\n==> %s\n' "$*"; }

# needed_targets DIR SUITE...: the files (relative to DIR) of every target
# a test in one of the suites depends on; ninja builds what they link.
needed_targets() {
    python3 - "$@" <<'PY'
import json, os, subprocess, sys
build, suites = sys.argv[1], set(sys.argv[2:])
def introspect(what):
    return json.loads(subprocess.check_output(['meson', 'introspect', build, what]))
targets = {t['id']: t for t in introspect('--targets')}
files = set()
for test in introspect('--tests'):
    # Suites are reported as 'project:suite'.
    if suites & {s.split(':', 1)[-1] for s in test['suite']}:
        for dep in test['depends']:
            for f in targets.get(dep, {}).get('filename', []):
                files.add(os.path.relpath(f, build))
print('\n'.join(sorted(files)))
PY
}

# chosen_tests DIR MAX SKIP SUITE...: the names of the tests of the suites
# that run at most MAX ranks (the number after '_np' in the name; a test
# without one is kept; 0: any number) and whose name SKIP (a regular
# expression; empty: none) does not match.
chosen_tests() {
    python3 - "$@" <<'PY'
import json, re, subprocess, sys
build, most, skip, suites = sys.argv[1], int(sys.argv[2]), sys.argv[3], set(sys.argv[4:])
for test in json.loads(subprocess.check_output(['meson', 'introspect', build, '--tests'])):
    if suites & {s.split(':', 1)[-1] for s in test['suite']}:
        ranks = re.search(r'_np(\d+)(_|$)', test['name'])
        if most > 0 and ranks is not None and int(ranks.group(1)) > most:
            continue
        if skip and re.search(skip, test['name']):
            continue
        print(test['name'])
PY
}

# run KIND DIR SANITIZE SUITES: configure (once), build, test.
run() {
    local kind=$1 dir=$2 sanitize=$3 suites=$4 t0=$SECONDS
    local suite_list
    read -r -a suite_list <<<"$suites"  # space-separated names, one word each
    if [[ ! -f $dir/meson-private/coredata.dat ]]; then
        step "Configure $dir (-Db_sanitize=$sanitize)"
        # b_lundef=false: a sanitized shared library leaves the runtime's
        # symbols to the executable.  No fuzz targets or benchmarks: the
        # fuzz targets have their own sanitizers, benchmarks need no check.
        # -Og: compiling under a sanitizer at -O2 is what makes these builds
        # slow (CI's ASan build: 1272 CPU-seconds at -O2, 643 at -Og, for
        # the 60 targets of suites unit and mpi; the CLI11 parser alone 72 s
        # against 28 s).  The tests take longer (252 against 146 s of test
        # time, on a machine busy with other builds), far less than the
        # build saves, and -Og keeps the code close to the source lines the
        # reports name.
        # -g1 (after meson's -g, so it wins): line tables and function
        # names, no descriptions of local variables.  A report's stack
        # traces keep every frame with its file and line, and the variable
        # a stack overflow hits is named by the sanitizer's own frame
        # records, not by the debug information.  Full -g made each file's
        # compile take 25 to 35% longer (launcher_args.cpp 32.6 against
        # 24.5 s, p2p.cpp 9.4 against 6.7 s; 2026-12-05).
        if ! meson setup "$dir" -Db_sanitize="$sanitize" -Db_lundef=false \
            -Dbuildtype=debug -Doptimization=g -Dc_args=-g1 -Dcpp_args=-g1 \
            -Dfuzz=disabled -Dbenchmarks=disabled; then
            results+=("$kind: configure FAILED")
            failed=1
            return
        fi
    fi
    local targets=()
    if [[ ${SHMPI_SAN_BUILD:-needed} == needed ]]; then
        # Regenerate first, so introspection sees the current meson.build files.
        ninja -C "$dir" build.ninja >/dev/null || true
        mapfile -t targets < <(needed_targets "$dir" "${suite_list[@]}")
        if [[ ${#targets[@]} -eq 0 ]]; then
            results+=("$kind: no tests in suites '$suites'")
            failed=1
            return
        fi
    fi
    step "Build $dir (${#targets[@]} targets${targets[*]:+ the suites need})"
    if ! ninja -C "$dir" ${SHMPI_JOBS:+-j "$SHMPI_JOBS"} "${targets[@]}"; then
        results+=("$kind: build FAILED")
        failed=1
        return
    fi
    local args=() shown
    for s in "${suite_list[@]}"; do args+=(--suite "$s"); done
    shown="${args[*]}"
    if [[ ${SHMPI_SAN_MAX_RANKS:-0} -gt 0 || -n ${SHMPI_SAN_SKIP:-} ]]; then
        # By name: the suites' tests of at most that many ranks, less those
        # SHMPI_SAN_SKIP matches.
        mapfile -t args < <(chosen_tests "$dir" "${SHMPI_SAN_MAX_RANKS:-0}" "${SHMPI_SAN_SKIP:-}" "${suite_list[@]}")
        shown="$shown: ${#args[@]} tests (at most ${SHMPI_SAN_MAX_RANKS:-any} ranks; skipping '${SHMPI_SAN_SKIP:-}')"
        if [[ ${#args[@]} -eq 0 ]]; then
            results+=("$kind: no tests left in suites '$suites'")
            failed=1
            return
        fi
    fi
    step "meson test -C $dir $shown"
    if meson test -C "$dir" --no-rebuild --print-errorlogs \
        --timeout-multiplier "$multiplier" "${args[@]}"; then
        results+=("$kind: passed ($((SECONDS - t0)) s)")
    else
        results+=("$kind: FAILED ($((SECONDS - t0)) s; logs in $dir/meson-logs/testlog.txt)")
        failed=1
    fi
}

for kind in "${kinds[@]}"; do
    case $kind in
        asan) run asan "${SHMPI_SAN_ASAN_DIR:-build-asan}" address,undefined \
                  "${SHMPI_SAN_ASAN_SUITES:-$suites}" ;;
        tsan) run tsan "${SHMPI_SAN_TSAN_DIR:-build-tsan}" thread "${SHMPI_SAN_TSAN_SUITES:-$suites}" ;;
        *)
            echo "sanitizers.sh: unknown sanitizer '$kind' (asan or tsan)" >&2
            exit 2
            ;;
    esac
done

summary=$(printf '%s; ' "${results[@]}")
if [[ $failed -ne 0 ]]; then
    printf '\nsanitizers.sh: FAILED (%s) in %ds\n' "${summary%; }" $((SECONDS - started))
    exit 1
fi
printf '\nsanitizers.sh: PASSED (%s) in %ds\n' "${summary%; }" $((SECONDS - started))
