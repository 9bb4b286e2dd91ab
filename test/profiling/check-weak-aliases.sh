#!/usr/bin/env bash
# check-weak-aliases.sh: the profiling interface as the library exports it.
# Every PMPI_X that libshmpi exports is a global function, and MPI_X is a
# weak function at the same address; no MPI_X comes without its PMPI_X.
# (GCC's link-time optimisation once turned every alias into a strong
# symbol without any run-time test noticing: the dynamic linker treats weak
# and strong definitions alike, a static link does not.)
#
# usage: check-weak-aliases.sh LIBSHMPI.so [MIN_COUNT]
set -uo pipefail
lib=${1:?usage: check-weak-aliases.sh LIBSHMPI.so [MIN_COUNT]}
min=${2:-200}
command -v readelf >/dev/null || { echo "check-weak-aliases.sh: readelf not found (binutils)"; exit 77; }

readelf --dyn-syms -W "$lib" | awk -v min="$min" '
    # columns: Num: Value Size Type Bind Vis Ndx Name
    $8 ~ /^PMPI_/ && $7 != "UND" {
        name = substr($8, 2)
        if ($4 != "FUNC" || $5 != "GLOBAL") { printf "%s is %s %s, not a GLOBAL FUNC\n", $8, $5, $4; bad++ }
        paddr[name] = $2
    }
    $8 ~ /^MPI_/ && $7 != "UND" {
        if ($4 != "FUNC" || $5 != "WEAK") { printf "%s is %s %s, not a WEAK FUNC\n", $8, $5, $4; bad++ }
        maddr[$8] = $2
    }
    END {
        for (n in paddr) {
            np++
            if (!(n in maddr)) { printf "P%s has no %s\n", n, n; bad++ }
            else if (maddr[n] != paddr[n]) { printf "%s is at %s, P%s at %s\n", n, maddr[n], n, paddr[n]; bad++ }
        }
        for (n in maddr) if (!(n in paddr)) { printf "%s has no P%s\n", n, n; bad++ }
        if (np < min) { printf "only %d PMPI_ functions exported, expected at least %d\n", np, min; bad++ }
        if (bad) { printf "check-weak-aliases.sh: %d problems\n", bad; exit 1 }
        printf "check-weak-aliases.sh: %d PMPI_ functions, each with a weak MPI_ alias\n", np
    }'
