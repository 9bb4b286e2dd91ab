#!/usr/bin/env bash
# bench-bundle.sh: packs shmpi, Debian's Open MPI and MPICH, and the
# collective and ping-pong benchmarks built with each, into one tarball that
# runs on another x86-64 Linux machine without those packages (a lent
# many-core machine, a cluster node with another distribution).  The
# "16 cores" sections of docs/BENCHMARKS.md were measured this way.
#
# What it does:
#   1. Copies shmpi's mpirun, libshmpi and bench/coll_bench and bench/pingpong
#      from a release build (--shmpi-build DIR, default ./build), and builds
#      bench/coll_bench.c and bench/pingpong.c with mpicc.openmpi and
#      mpicc.mpich (-O2).
#   2. Copies Open MPI's launcher, components and help files (relocated with
#      OPAL_PREFIX), PMIx's plugins, UCX's modules, MPICH's Hydra launcher
#      and proxy, and every shared library any of them loads, Debian's loader
#      and libc included.
#   3. Points every program at the bundled loader and every program and
#      library at the bundled libraries (patchelf: interpreter and run path),
#      so nothing of the other machine's own libraries is loaded; its tools
#      (grep, date, ...) keep theirs, since nothing sets LD_LIBRARY_PATH.
#   4. Adds env.sh (the variables Open MPI, PMIx, UCX and hwloc need there,
#      and Debian's openmpi-mca-params.conf as OMPI_MCA_* variables), run.sh
#      and bench-summary.py, then writes the tarball.
#
# The bundle must be unpacked at the --prefix it was made for (the loader's
# path is absolute):
#   tar -C "$(dirname PREFIX)" -xzf shmpi-bench.tar.gz
#   PREFIX/run.sh [--ranks "16 8 4"] [--rounds 2] [--out DIR] [coll_bench options]
# run.sh takes turns between the MPIs within each round, each with its own
# launcher and placement, and prints bench-compare.sh's tables: every MPI's
# time per call and shmpi's over the faster of the other two.
#
# usage: scripts/bench-bundle.sh [--shmpi-build DIR] [--prefix /tmp/sb] [--out FILE]
# Needs: patchelf, openmpi-bin, mpich, libopenmpi-dev, libmpich-dev
# (apt-get install patchelf openmpi-bin mpich).
# Exit status: 0 when the tarball was written.
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
build=$here/build
prefix=/tmp/sb
out=$PWD/shmpi-bench.tar.gz
while [[ $# -gt 0 ]]; do
    case $1 in
        --shmpi-build) build=$(cd "$2" && pwd); shift 2 ;;
        --prefix) prefix=$2; shift 2 ;;
        --out) out=$(realpath -m "$2"); shift 2 ;;
        -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        *) echo "bench-bundle.sh: unknown argument '$1' (--help lists them)" >&2; exit 1 ;;
    esac
done
case $prefix in
    /*) ;;
    *) echo "bench-bundle.sh: --prefix must be an absolute path, not '$prefix'" >&2; exit 1 ;;
esac
for tool in patchelf mpicc.openmpi mpicc.mpich orterun mpiexec.hydra hydra_pmi_proxy; do
    command -v "$tool" > /dev/null || {
        echo "bench-bundle.sh: '$tool' not found (apt-get install patchelf openmpi-bin mpich)" >&2
        exit 1
    }
done
for f in tools/launcher/mpirun src/libshmpi.so.0 bench/coll_bench bench/pingpong; do
    [[ -e $build/$f ]] || { echo "bench-bundle.sh: $build/$f is missing (build shmpi first)" >&2; exit 1; }
done

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
root=$stage/$(basename "$prefix")
ml=/usr/lib/x86_64-linux-gnu
mkdir -p "$root"/{lib,shmpi,ompi-bin,mpich-bin,hwloc-plugins}

# 1. The programs.
cp "$build/tools/launcher/mpirun" "$build/bench/coll_bench" "$build/bench/pingpong" "$root/shmpi/"
cp "$build/src/libshmpi.so.0" "$root/lib/"
for p in coll_bench pingpong; do
    mpicc.openmpi -O2 -I "$here/bench" -o "$root/ompi-bin/$p" "$here/bench/$p.c"
    mpicc.mpich -O2 -I "$here/bench" -o "$root/mpich-bin/$p" "$here/bench/$p.c"
done

# 2. The MPIs' own trees: Open MPI under OPAL_PREFIX=$prefix/ompi (its
# libdir is prefix/lib/x86_64-linux-gnu/openmpi/lib there), PMIx and UCX
# plugins, Hydra.
o=$root/ompi
mkdir -p "$o/bin" "$o/lib/x86_64-linux-gnu/openmpi/lib" "$o/share"
cp /usr/bin/orterun "$o/bin/mpirun"
cp -a "$ml/openmpi/lib/openmpi3" "$o/lib/x86_64-linux-gnu/openmpi/lib/"
cp -a /usr/share/openmpi "$o/share/"
cp -a "$ml/pmix2" "$root/pmix2"
cp -a "$ml/ucx" "$root/ucx"
rm -f "$root"/ucx/*.a
cp /usr/bin/mpiexec.hydra /usr/bin/hydra_pmi_proxy "$root/mpich-bin/"

# Every ELF file of the bundle (programs and plugins), by its first four
# bytes, read without a process per file (there are about 190, and two
# processes each were a quarter of the script's time).
elves() {
    local f magic
    find "$root" -type f \( -name '*.so*' -o -perm -u+x \) -print0 |
        while IFS= read -r -d '' f; do
            magic=  # a file that cannot be read keeps no earlier file's bytes
            LC_ALL=C IFS= read -r -d '' -n 4 magic < "$f" || true
            [[ $magic == $'\x7fELF' ]] && printf '%s\n' "$f"
        done
}
# The libraries they load, Debian's loader too: one ldd for them all.
mapfile -t elf_files < <(elves)
{ ldd "${elf_files[@]}" 2> /dev/null || true; } | awk '/=> \//{print $3}' | sort -u |
    while read -r l; do
        [[ -e $root/lib/$(basename "$l") ]] || cp -L "$l" "$root/lib/"
    done
cp -L /lib64/ld-linux-x86-64.so.2 "$root/lib/"

# 3. Bundled loader and libraries for everything (found again: the
# libraries just copied too).
mapfile -t elf_files < <(elves)
chmod u+w "${elf_files[@]}"
for e in "${elf_files[@]}"; do
    [[ $e == */ld-linux-x86-64.so.2 ]] && continue
    if patchelf --print-interpreter "$e" > /dev/null 2>&1; then
        patchelf --set-interpreter "$prefix/lib/ld-linux-x86-64.so.2" --set-rpath "$prefix/lib" "$e"
    else
        patchelf --set-rpath "$prefix/lib" "$e"
    fi
done

# 4. env.sh and run.sh.
{
    echo "# Sourced by run.sh: what the bundled MPIs need on the other machine."
    echo "export OPAL_PREFIX=$prefix/ompi"
    echo "export PMIX_PREFIX=$prefix/pmix2"
    echo "export UCX_MODULE_DIR=$prefix/ucx"
    echo "# hwloc's plugins stay behind (they load X and OpenCL libraries)."
    echo "export HWLOC_PLUGINS_PATH=$prefix/hwloc-plugins"
    echo "# Debian's /etc/openmpi/openmpi-mca-params.conf"
    grep -v '^#' /etc/openmpi/openmpi-mca-params.conf | sed -n 's/^ *\([a-z_]*\) *= *\(.*[^ ]\) *$/export OMPI_MCA_\1='"'"'\2'"'"'/p'
    echo "export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1"
} > "$root/env.sh"
cp "$here/scripts/bench-bundle-run.sh" "$root/run.sh"
cp "$here/scripts/bench-summary.py" "$root/"
chmod +x "$root/run.sh"

tar -C "$stage" -czf "$out" "$(basename "$prefix")"
echo "bench-bundle.sh: wrote $out ($(du -h "$out" | cut -f1)); unpack with: tar -C $(dirname "$prefix") -xzf $(basename "$out")"
