#!/usr/bin/env bash
# setup.sh: the one command for newcomers.  Installs the Debian packages shmpi
# needs, builds shmpi, installs it under PREFIX, then compiles the demo
# (examples/minloc.c: the global minimum with its rank and index, by
# MPI_Reduce with MPI_MINLOC) with the installed mpicc and runs it with the
# installed `mpirun -n 4`.  Safe to run again: it reuses the build directory.
#
# usage: scripts/setup.sh [PREFIX]
#   PREFIX   where to install; default /usr/local as root, else $HOME/.local
# environment:
#   SHMPI_BUILD_DIR   build directory, relative to the repository (default: build)
#   SHMPI_JOBS        parallel build jobs (default: ninja's choice)
set -euo pipefail

if [[ $(id -u) -eq 0 ]]; then
    default_prefix=/usr/local
else
    default_prefix=$HOME/.local
fi
prefix=${1:-$default_prefix}
# Meson wants an absolute prefix; a relative one is relative to where we were started.
case $prefix in
    /*) ;;
    *) prefix=$PWD/$prefix ;;
esac
prefix=${prefix%/}
[[ -n $prefix ]] || prefix=/

repo=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd)
cd -- "$repo"
build=${SHMPI_BUILD_DIR:-build}

step() { printf '\n==> %s\n' "$*"; }
die() {
    printf 'setup.sh: %s\n' "$*" >&2
    exit 1
}

# Prints "sudo" when installing into $1 needs it (not root, and the first
# existing directory on the way to $1 is not writable).
needs_sudo() {
    [[ $(id -u) -ne 0 ]] || return 1
    local dir=$1
    while [[ ! -d $dir ]]; do dir=$(dirname -- "$dir"); done
    [[ ! -w $dir ]]
}

step "1/5 Dependencies"
bash scripts/install-deps.sh || die "could not install the dependencies (see above)"

step "2/5 Configure $build with prefix $prefix"
if [[ -f $build/meson-private/coredata.dat ]]; then
    # Reuse the directory: keep its options, apply the (possibly new) prefix.
    meson setup --reconfigure "$build" --prefix="$prefix" ||
        meson setup --wipe "$build" --prefix="$prefix" ||
        die "meson could not configure $build"
else
    meson setup "$build" --prefix="$prefix" || die "meson could not configure $build"
fi

step "3/5 Build"
ninja -C "$build" ${SHMPI_JOBS:+-j "$SHMPI_JOBS"} || die "the build failed"

step "4/5 Install into $prefix"
if needs_sudo "$prefix"; then
    command -v sudo >/dev/null 2>&1 ||
        die "$prefix is not writable and there is no sudo; pass a prefix you can write, e.g. scripts/setup.sh \$HOME/.local"
    sudo meson install -C "$build" --no-rebuild || die "meson install failed"
else
    meson install -C "$build" --no-rebuild || die "meson install failed"
fi
# Programs built by mpicc find libshmpi through an rpath; refreshing the
# loader cache helps anything else that links it from a system prefix.
if [[ $(id -u) -eq 0 ]] && command -v ldconfig >/dev/null 2>&1; then
    ldconfig || true
fi

step "5/5 Demo: $prefix/bin/mpicc examples/minloc.c, then $prefix/bin/mpirun -n 4"
for tool in mpicc mpirun; do
    [[ -x $prefix/bin/$tool ]] || die "$prefix/bin/$tool was not installed"
done
demo=$build/minloc-demo
"$prefix/bin/mpicc" -o "$demo" examples/minloc.c || die "the installed mpicc could not compile examples/minloc.c"
"$prefix/bin/mpirun" -n 4 "$demo" || die "the demo failed: $prefix/bin/mpirun -n 4 $demo"

printf '\nshmpi is installed in %s and works.\n' "$prefix"
if [[ $(command -v mpicc 2>/dev/null || true) == "$prefix/bin/mpicc" &&
      $(command -v mpirun 2>/dev/null || true) == "$prefix/bin/mpirun" ]]; then
    printf '%s/bin is already first on your PATH for mpicc and mpirun.\n' "$prefix"
else
    other=$(command -v mpicc 2>/dev/null || true)
    if [[ -n $other ]]; then
        printf 'Now "mpicc" means %s (another MPI).\n' "$other"
    fi
    printf 'Put shmpi first on your PATH (add this line to ~/.bashrc or ~/.profile):\n'
    # shellcheck disable=SC2016  # $PATH is for the user's shell to expand
    printf '    export PATH="%s/bin:$PATH"\n' "$prefix"
fi
printf 'Then:\n    mpicc -o app app.c && mpirun -n 8 ./app\n'
