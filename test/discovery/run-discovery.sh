#!/usr/bin/env bash
# run-discovery.sh: shows that users' build systems find shmpi.
#
# usage: run-discovery.sh MODE BUILD_DIR
#   MODE is one of
#     cmake-compiler  CMake's FindMPI with -DMPI_C_COMPILER=<prefix>/bin/mpicc
#                     (and -DMPIEXEC_EXECUTABLE=<prefix>/bin/mpiexec: FindMPI
#                     looks for mpiexec on PATH, not next to the compiler,
#                     so without it the system's mpiexec would start ours)
#     cmake-home      CMake's FindMPI with -DMPI_HOME=<prefix>
#     cmake-path      CMake's FindMPI with <prefix>/bin first on PATH
#     meson           meson's dependency('mpi') with <prefix>/bin first on
#                     PATH: once with method 'config-tool', and once with the
#                     default method where shmpi is the only MPI pkg-config
#                     can see (see below)
#     pkg-config      `pkg-config --cflags --libs shmpi` from the installed
#                     shmpi.pc
#   BUILD_DIR is a configured and built shmpi build directory.
#
# Each mode installs BUILD_DIR into a scratch directory (meson install
# --destdir), so it tests what users get: the installed wrappers, mpirun,
# mpiexec, mpi.h, libshmpi and shmpi.pc.  It then builds project/ (hello.c,
# which refuses to compile against any mpi.h but shmpi's) with that build
# system and runs it on 2 ranks through the launcher the build system found,
# and checks that the compiler and launcher found are the installed shmpi
# ones.  Exits 0 on success, 77 when the build system is not installed, 1
# otherwise, naming what went wrong.
#
# Why meson needs help on some machines: meson's dependency('mpi') tries Open
# MPI's pkg-config file (ompi-c) before any mpicc on PATH, so on a machine
# with libopenmpi-dev installed the default method finds Open MPI whatever
# PATH says.  Users there write dependency('mpi', method : 'config-tool')
# (or hide ompi-c.pc from pkg-config); both ways are tested here.
set -uo pipefail

mode=${1:?usage: run-discovery.sh MODE BUILD_DIR}
build=$(cd -- "${2:?usage: run-discovery.sh MODE BUILD_DIR}" && pwd) || exit 1
here=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)

fail() {
    echo "run-discovery.sh $mode: FAIL: $*" >&2
    exit 1
}
skip() {
    echo "run-discovery.sh $mode: SKIP: $*"
    exit 77
}
need() {
    command -v "$1" >/dev/null 2>&1 || skip "'$1' is not installed"
}

case $mode in
    cmake-compiler | cmake-home | cmake-path) need cmake; need ctest ;;
    meson) need meson; need ninja ;;
    pkg-config) need pkg-config; need cc ;;
    *) fail "unknown mode (cmake-compiler, cmake-home, cmake-path, meson, pkg-config)" ;;
esac

work=$(mktemp -d)
trap 'rm -rf -- "$work"' EXIT
# Keep the users' builds away from any MPI settings of the caller.
unset MPICC MPICXX MPI_HOME MPI_ROOT

# 1. Install into a scratch root, as a user would install a release: one
#    whose path has a space and a comma, which the wrappers must quote and
#    keep out of -Wl,.  pkg-config's flags, read by a shell, take no
#    space, and CMake takes no comma (it adds -Wl,-rpath,DIR of its own).
case $mode in
    pkg-config) root=$work/ro,ot ;;
    cmake-*) root="$work/ro ot" ;;
    *) root="$work/ro ot,1" ;;
esac
if ! meson install -C "$build" --destdir "$root" --no-rebuild --quiet >"$work/install.log" 2>&1; then
    cat "$work/install.log" >&2
    fail "meson install --destdir failed"
fi
mpicc=$(find "$root" -path '*/bin/mpicc' -print -quit)
[[ -n $mpicc ]] || fail "no bin/mpicc under the scratch install"
bin=$(dirname -- "$mpicc")
prefix=$(dirname -- "$bin")
for tool in mpicc mpirun mpiexec; do
    [[ -x $bin/$tool ]] || fail "the install has no executable bin/$tool"
done
pcfile=$(find "$root" -name shmpi.pc -print -quit)
echo "installed shmpi under $prefix"

# Checks that a path the build system chose lies in the scratch install.
ours() {  # what, path
    case $2 in
        "$prefix"/*) echo "  $1: $2 (shmpi)" ;;
        *) fail "$1 is '$2', not shmpi's under $prefix" ;;
    esac
}
cache_value() {  # cache file, variable
    sed -n "s/^$2:[A-Z]*=//p" "$1" | head -n 1
}

case $mode in
cmake-compiler | cmake-home | cmake-path)
    src=$here/project
    cmake_env=()
    cmake_args=()
    case $mode in
        cmake-compiler) cmake_args=(-DMPI_C_COMPILER="$bin/mpicc" -DMPIEXEC_EXECUTABLE="$bin/mpiexec") ;;
        cmake-home) cmake_args=(-DMPI_HOME="$prefix") ;;
        cmake-path) cmake_env=(PATH="$bin:$PATH") ;;
    esac
    if ! env "${cmake_env[@]}" cmake -S "$src" -B "$work/b" "${cmake_args[@]}" >"$work/cmake.log" 2>&1; then
        cat "$work/cmake.log" >&2
        fail "cmake could not configure the project (FindMPI)"
    fi
    grep 'discovery:' "$work/cmake.log"
    ours MPI_C_COMPILER "$(cache_value "$work/b/CMakeCache.txt" MPI_C_COMPILER)"
    ours MPIEXEC_EXECUTABLE "$(cache_value "$work/b/CMakeCache.txt" MPIEXEC_EXECUTABLE)"
    env "${cmake_env[@]}" cmake --build "$work/b" >"$work/build.log" 2>&1 ||
        { cat "$work/build.log" >&2; fail "cmake --build failed"; }
    env "${cmake_env[@]}" ctest --test-dir "$work/b" --output-on-failure --timeout 120 ||
        fail "ctest failed: the program did not run on 2 ranks with the mpiexec FindMPI found"
    ;;
meson)
    # config-tool: the system pkg-config files stay visible, as on a
    # machine with Open MPI installed.  auto: shmpi is the only MPI that
    # pkg-config sees (PKG_CONFIG_LIBDIR is shmpi's directory only).
    for method in config-tool auto; do
        menv=(PATH="$bin:$PATH")
        if [[ $method == auto ]]; then
            menv+=(PKG_CONFIG_LIBDIR="$(dirname -- "$pcfile")" PKG_CONFIG_PATH=)
        fi
        b=$work/m-$method
        if ! env "${menv[@]}" meson setup "$b" "$here/project" -Dmpi_method=$method \
            >"$work/meson.log" 2>&1; then
            cat "$work/meson.log" >&2
            fail "meson setup with dependency('mpi', method : '$method') failed"
        fi
        found=$(grep -E "Run-time dependency mpi found|Found CMake|mpicc" "$work/meson.log" | head -n 3)
        echo "  method $method: $found"
        env "${menv[@]}" ninja -C "$b" >"$work/ninja.log" 2>&1 ||
            { cat "$work/ninja.log" >&2; fail "ninja failed (method $method)"; }
        ours "mpirun found by meson" "$(env "${menv[@]}" sh -c 'command -v mpirun')"
        env "${menv[@]}" meson test -C "$b" --print-errorlogs >"$work/mtest.log" 2>&1 ||
            { cat "$work/mtest.log" >&2; fail "meson test failed (method $method)"; }
        echo "  method $method: built and ran on 2 ranks"
    done
    ;;
pkg-config)
    [[ -n $pcfile ]] || fail "the install has no shmpi.pc"
    ours "shmpi.pc" "$pcfile"
    export PKG_CONFIG_PATH PKG_CONFIG_SYSROOT_DIR
    PKG_CONFIG_PATH=$(dirname -- "$pcfile")
    PKG_CONFIG_SYSROOT_DIR=$root
    version=$(pkg-config --modversion shmpi) || fail "pkg-config does not know shmpi"
    cflags=$(pkg-config --cflags shmpi) || fail "pkg-config --cflags shmpi failed"
    libs=$(pkg-config --libs shmpi) || fail "pkg-config --libs shmpi failed"
    echo "  shmpi $version: cflags '$cflags' libs '$libs'"
    rpath=""
    for l in $(pkg-config --libs-only-L shmpi); do rpath+=" -Xlinker -rpath=${l#-L}"; done
    # shellcheck disable=SC2086  # pkg-config output is a list of words
    cc -std=c11 -Wall -Werror $cflags -o "$work/hello" "$here/project/hello.c" $libs $rpath ||
        fail "cc with pkg-config's flags could not build hello.c"
    timeout -k 5 120 "$bin/mpirun" -n 2 "$work/hello" 2 || fail "the program did not run on 2 ranks"
    ;;
esac
echo "run-discovery.sh $mode: PASS"
