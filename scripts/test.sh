#!/usr/bin/env bash
# test.sh: the test command.  Installs missing dependencies, configures the
# build directory if needed, builds, runs every meson test suite, then runs
# the multi-rank tests under MPICH (test/mpi/run-with-mpich.sh) to check that
# they are portable MPI.  Exits nonzero when anything failed; the last line
# says what passed and what failed.
#
# usage: scripts/test.sh [MESON TEST ARGS...]
#   With arguments, runs only `meson test` with them (e.g. --suite wrappers)
#   and skips the MPICH run.
# environment:
#   SHMPI_BUILD_DIR   build directory, relative to the repository (default: build)
#   SHMPI_JOBS        parallel build jobs (default: ninja's choice)
set -uo pipefail

repo=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd)
cd -- "$repo" || exit 1
build=${SHMPI_BUILD_DIR:-build}
started=$SECONDS

step() { printf '\n==> %s\n' "$*"; }
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
    step "MPICH portability run: test/mpi/run-with-mpich.sh"
    bash test/mpi/run-with-mpich.sh
    case $? in
        0) mpich_result=passed ;;
        77) mpich_result=skipped ;;
        *) mpich_result=FAILED ;;
    esac
else
    mpich_result="skipped: test/mpi/run-with-mpich.sh does not exist yet"
fi

details="meson test: $meson_result; MPICH run: $mpich_result"
if [[ $meson_result == FAILED || $mpich_result == FAILED ]]; then
    summary FAILED "$details"
    exit 1
fi
summary PASSED "$details"
