#!/usr/bin/env bash
# bundle_smoke.sh BUILDDIR WORKDIR: scripts/bench-bundle.sh end to end on this
# machine.  Makes a bundle of BUILDDIR's shmpi with Debian's Open MPI and
# MPICH, unpacks it under WORKDIR, checks that its programs use the bundled
# loader, and runs its run.sh with 2 ranks for one round at one size: every
# MPI must run, and the table must hold every MPI's time and a ratio for
# each collective.
set -euo pipefail
build=$1
work=$2
here=$(cd "$(dirname "$0")/.." && pwd)
rm -rf "$work"
mkdir -p "$work/unpack"
prefix=$work/unpack/sb
"$here/scripts/bench-bundle.sh" --shmpi-build "$build" --prefix "$prefix" --out "$work/sb.tar.gz"
tar -C "$work/unpack" -xzf "$work/sb.tar.gz"
for p in shmpi/mpirun shmpi/coll_bench ompi/bin/mpirun ompi-bin/coll_bench mpich-bin/mpiexec.hydra \
    mpich-bin/coll_bench; do
    interp=$(patchelf --print-interpreter "$prefix/$p")
    if [[ $interp != "$prefix/lib/ld-linux-x86-64.so.2" ]]; then
        echo "bundle_smoke: $p uses the loader $interp, not the bundle's" >&2
        exit 1
    fi
done
"$prefix/run.sh" --ranks 2 --rounds 1 --out "$work/out" -- --sizes 8 --ops barrier,reduce --time 0.02 --reps 1 |
    tee "$work/table.md"
for row in '| barrier | ' '| reduce 8 B | '; do
    if ! grep -qF "$row" "$work/table.md" || grep -F "$row" "$work/table.md" | grep -q 'n/a'; then
        echo "bundle_smoke: no ratio for '$row' in the table" >&2
        exit 1
    fi
done
echo "bundle_smoke: bundle made, unpacked and run with shmpi, Open MPI and MPICH"
