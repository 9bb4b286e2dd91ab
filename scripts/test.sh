#!/usr/bin/env bash
# test.sh: the test command.  Installs missing dependencies, configures the
# build directory if needed, builds, runs every meson test suite, then runs
# the multi-rank tests under MPICH (test/mpi/run-with-mpich.sh) to check that
# they are portable MPI, then suites under sanitizers (scripts/sanitizers.sh;
# which ones, and why, below).  Exits nonzero when anything failed; the last
# line says what passed and what failed.
#
# usage: scripts/test.sh [MESON TEST ARGS...]
#   With arguments, runs only `meson test` with them (e.g. --suite wrappers)
#   and skips the MPICH and sanitizer runs.
# environment:
#   SHMPI_BUILD_DIR   build directory, relative to the repository (default: build)
#   SHMPI_JOBS        parallel build jobs (default: ninja's choice)
#   SHMPI_CI_SANITIZERS  sanitizer builds to run after the MPICH run, for
#                     scripts/sanitizers.sh: 'asan tsan' (default), 'asan',
#                     'tsan', or 'none'
#   SHMPI_CI_MPICH_MAX_RANKS  largest rank count of the MPICH run (default 4;
#                     0 runs every count of the tables)
#   SHMPI_CI_MPICH_SLOW_MAX_RANKS  the same for the rows marked 'mpich_slow'
#                     (default 4; 0: as the others)
#   SHMPI_CI_ASAN_SUITES, SHMPI_CI_TSAN_SUITES
#                     their suites (default: 'unit mpi comm coll_nbc' and
#                     'unit'; see below)
#   SHMPI_CI_SAN_MAX_RANKS  largest rank count of the sanitizer runs
#                     (default 4; 0: every test of the suites)
set -uo pipefail

repo=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd)
cd -- "$repo" || exit 1
build=${SHMPI_BUILD_DIR:-build}
started=$SECONDS

# Each step says when it starts (seconds since this script began), so a log
# shows where CI's time goes.
step() { printf '\n==> [%ds] %s\n' $((SECONDS - started)) "$*"; }
summary() {
    printf '\ntest.sh: %s (%s) in %ds\n' "$1" "$2" $((SECONDS - started))
}

step "Dependencies"
if ! bash scripts/install-deps.sh; then
    summary FAILED "dependencies could not be installed"
    exit 1
fi

if [[ ! -f $build/meson-private/coredata.dat ]]; then
    step "Configure $build"
    if ! meson setup "$build"; then
        summary FAILED "meson setup $build failed"
        exit 1
    fi
fi

step "Build $build"
if ! ninja -C "$build" ${SHMPI_JOBS:+-j "$SHMPI_JOBS"}; then
    summary FAILED "the build failed"
    exit 1
fi

step "meson test -C $build --print-errorlogs $*"
meson_result=passed
meson test -C "$build" --print-errorlogs "$@" || meson_result=FAILED

mpich_result="not run"
if [[ $# -gt 0 ]]; then
    mpich_result="skipped: meson test arguments given"
elif [[ -f test/mpi/run-with-mpich.sh ]]; then
    # It builds the multi-rank test programs itself with mpicc.mpich; it
    # needs nothing from the build directory.
    # MPICH's ranks busy-poll, so on a 2-core machine every run of more
    # ranks than cores is slow: CI stops at 4 ranks (1 to 4: odd and even
    # teams, roots other than 0, trees of more than one level), and
    # `bash test/mpi/run-with-mpich.sh` runs every count of the tables.
    # On the 2-CPU AMD VM in its slow state (2026-11-28) the run took
    # 490 s up to 8 ranks; its 5- to 8-rank runs were 210 s of that.
    mpich_max=${SHMPI_CI_MPICH_MAX_RANKS:-4}
    mpich_slow_max=${SHMPI_CI_MPICH_SLOW_MAX_RANKS:-4}
    step "MPICH portability run: MAX_RANKS=$mpich_max SLOW_MAX_RANKS=$mpich_slow_max test/mpi/run-with-mpich.sh"
    MAX_RANKS=$mpich_max SLOW_MAX_RANKS=$mpich_slow_max bash test/mpi/run-with-mpich.sh
    case $? in
        0) mpich_result=passed ;;
        77) mpich_result=skipped ;;
        *) mpich_result=FAILED ;;
    esac
else
    mpich_result="skipped: test/mpi/run-with-mpich.sh does not exist yet"
fi

# Sanitizers (scripts/sanitizers.sh, own build directories build-asan and
# build-tsan, at -Og).  CI has 30 minutes on a 2-core machine and the steps
# above take about 15 of them, so CI runs a subset, building just the
# targets its tests need.  Measured here:
#   ASan+UBSan, suites unit and mpi: build 643 CPU-seconds (1272 at -O2),
#     about 3.5 minutes on 2 cores; 211 tests in about 2 minutes; suites
#     comm (59 tests: communicator life cycles, MPI_Comm_idup) and coll_nbc
#     (20: the nonblocking collectives) add 30 s of build and 25 s of tests;
#   TSan, suite unit: build 2.5 CPU-minutes at -O2 (about 1.5 minutes), 13
#     tests in about 25 seconds.  TSan sees the threads of one process (the
#     ring and flag stress tests); the ranks share memory between
#     processes, which it cannot see, so multi-rank suites gain little
#     under it.
# The rank-heavy suites (coll, topo, soak, limits: 8- to 64-rank programs,
# 3 to 15 times slower under ASan) run with
#   scripts/sanitizers.sh            (every suite, both sanitizers)
# or here with SHMPI_CI_ASAN_SUITES / SHMPI_CI_TSAN_SUITES.  Within the
# suites CI runs, it stops at 4 ranks (SHMPI_CI_SAN_MAX_RANKS): the tests of
# 5 to 16 ranks were 149 of the 759 seconds of ASan test time, and
# repeated paths that 2 to 4 ranks already take.
san_kinds=${SHMPI_CI_SANITIZERS:-asan tsan}
san_result="not run"
if [[ $# -gt 0 ]]; then
    san_result="skipped: meson test arguments given"
elif [[ $san_kinds == none ]]; then
    san_result="skipped: SHMPI_CI_SANITIZERS=none"
else
    asan_suites=${SHMPI_CI_ASAN_SUITES:-unit mpi comm coll_nbc}
    tsan_suites=${SHMPI_CI_TSAN_SUITES:-unit}
    step "Sanitizers: scripts/sanitizers.sh $san_kinds (ASan: $asan_suites; TSan: $tsan_suites; up to ${SHMPI_CI_SAN_MAX_RANKS:-4} ranks)"
    # shellcheck disable=SC2086  # a list of sanitizer names
    if SHMPI_SAN_ASAN_SUITES=$asan_suites SHMPI_SAN_TSAN_SUITES=$tsan_suites \
        SHMPI_SAN_MAX_RANKS=${SHMPI_CI_SAN_MAX_RANKS:-4} bash scripts/sanitizers.sh $san_kinds; then
        san_result=passed
    else
        san_result=FAILED
    fi
fi

details="meson test: $meson_result; MPICH run: $mpich_result; sanitizers ($san_kinds): $san_result"
if [[ $meson_result == FAILED || $mpich_result == FAILED || $san_result == FAILED ]]; then
    summary FAILED "$details"
    exit 1
fi
summary PASSED "$details"
