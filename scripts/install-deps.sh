#!/usr/bin/env bash
# install-deps.sh: install the Debian packages that shmpi's build, tests and
# benchmarks need, and nothing else.
#
# Runs `apt-get update` and `apt-get install` only when a package is missing,
# without questions (CI has no stdin).  As root it calls apt-get directly;
# otherwise through sudo when sudo exists.  Exits 0 when everything is
# installed, 1 when something is missing and cannot be installed.
#
# usage: scripts/install-deps.sh [--check] [--external]
#   --check     only report what is missing
#   --external  also the packages of scripts/external-checks.sh (MPICH's test
#               suite and the applications it builds: curl, xz-utils, make,
#               perl, a BLAS for HPCC, flex and bison for PT-Scotch, the
#               autotools for p4est's bootstrap, CMake for SUNDIALS)
set -euo pipefail

packages=(
    # build
    meson ninja-build g++ pkg-config
    libboost-dev      # Boost.Interprocess (header-only): the shared segment
    libfmt-dev        # message formatting
    libcli11-dev      # mpirun's command line
    libhwloc-dev      # placement
    # lstopo and hwloc-bind; either package will do.  hwloc-nox is what mpich
    # pulls in, and it needs no X libraries.  (a|b: any of them, install a)
    'hwloc-nox|hwloc'
    # tests and benchmarks
    libgtest-dev libgmock-dev libbenchmark-dev python3
    mpich libmpich-dev          # the portability run and side-by-side benchmarks
    openmpi-bin libopenmpi-dev  # side-by-side benchmarks
    hyperfine                   # start-up time benchmarks
    patchelf                    # scripts/bench-bundle.sh (benchmarks on machines without these packages)
    clang libclang-rt-14-dev    # libFuzzer for the datatype fuzz target (fuzz/)
    cmake                       # the FindMPI discovery test (test/discovery/)
)

check_only=no
for arg in "$@"; do
    case $arg in
        --check) check_only=yes ;;
        --external) packages+=(curl xz-utils make perl libblas-dev flex bison autoconf automake libtool cmake) ;;
        *) echo "install-deps.sh: unknown argument '$arg' (usage: install-deps.sh [--check] [--external])" >&2; exit 2 ;;
    esac
done

if ! command -v dpkg-query >/dev/null 2>&1 || ! command -v apt-get >/dev/null 2>&1; then
    echo "install-deps.sh: this is not a Debian-like system (no dpkg-query/apt-get)." >&2
    echo "install-deps.sh: install the equivalents of: ${packages[*]}" >&2
    echo "install-deps.sh: carrying on; meson will say what it cannot find." >&2
    exit 0
fi

installed() {
    [[ "$(dpkg-query -W -f='${db:Status-Abbrev}' "$1" 2>/dev/null)" == ii* ]]
}

missing=()
for entry in "${packages[@]}"; do
    IFS='|' read -r -a choices <<<"$entry"
    found=no
    for p in "${choices[@]}"; do
        if installed "$p"; then
            found=yes
            break
        fi
    done
    if [[ $found == no ]]; then
        missing+=("${choices[0]}")
    fi
done

if [[ ${#missing[@]} -eq 0 ]]; then
    echo "install-deps.sh: all ${#packages[@]} packages are installed"
    exit 0
fi
echo "install-deps.sh: missing: ${missing[*]}"
if [[ $check_only == yes ]]; then
    exit 1
fi

if [[ $(id -u) -eq 0 ]]; then
    as_root=()
elif command -v sudo >/dev/null 2>&1; then
    as_root=(sudo)
else
    echo "install-deps.sh: not root and no sudo; as root, run:" >&2
    echo "  apt-get update && apt-get install ${missing[*]}" >&2
    exit 1
fi

"${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update
"${as_root[@]}" env DEBIAN_FRONTEND=noninteractive \
    apt-get install -y --no-install-recommends "${missing[@]}"
echo "install-deps.sh: installed ${missing[*]}"
