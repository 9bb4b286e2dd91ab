# shellcheck shell=bash disable=SC2154,SC2034  # mpis, rounds, build, out, repo, mpi_list: the caller's; launch_cmd: for it
# compare_lib.sh: the builds and tables of bench/scotch_compare.sh,
# bench/sundials_compare.sh, bench/netpipe_compare.sh, bench/rma_compare.sh
# and bench/io_compare.sh, and the builds of bench/dtype_compare.sh (sourced, not run).  They time one program with several MPIs in rounds and keep, for
# each row ("label,ranks") and MPI, the times of all rounds in one string:
# times[ROW,MPI]=" t1 t2 ...".
# The caller sets mpis (shmpi first), rounds and build; over[ROW,MPI]=SECONDS says
# that MPI's runs of ROW were stopped at that limit.
declare -A over=()

# mpirun_of MPI NP: MPI's (shmpi, mpich or openmpi) command line for NP
# ranks, into the array launch_cmd; shmpi's is under $build.
mpirun_of() {
    case $1 in
        shmpi) launch_cmd=("$build/tools/launcher/mpirun" -n "$2") ;;
        mpich) launch_cmd=(mpirun.mpich -n "$2") ;;
        openmpi) launch_cmd=(env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 mpirun.openmpi --oversubscribe -n "$2") ;;
    esac
}

# build_each SCRIPT PROGRAM: builds bench/PROGRAM.c with the mpicc of each
# MPI in mpi_list (a comma list of shmpi, mpich, openmpi) at -O2, into
# $out/PROGRAM.MPI (its log $out/build.MPI.log), and sets mpis to those that
# built, shmpi first.  A missing or failing MPI is left out with a note
# naming SCRIPT; without shmpi it returns 1.
build_each() {
    local script=$1 program=$2 m
    local -A cc=([shmpi]="$build/tools/wrappers/mpicc" [mpich]=mpicc.mpich [openmpi]=mpicc.openmpi)
    local -A run=([shmpi]="$build/tools/launcher/mpirun" [mpich]=mpirun.mpich [openmpi]=mpirun.openmpi)
    local -a wanted
    mpis=()
    IFS=, read -r -a wanted <<<"$mpi_list"
    for m in shmpi mpich openmpi; do
        [[ " ${wanted[*]} " == *" $m "* ]] || continue
        if ! command -v "${cc[$m]}" >/dev/null 2>&1 || ! command -v "${run[$m]}" >/dev/null 2>&1; then
            echo "$script: $m: ${cc[$m]} or ${run[$m]} not found; left out" >&2
            continue
        fi
        if ! "${cc[$m]}" -O2 -o "$out/$program.$m" "$repo/bench/$program.c" >"$out/build.$m.log" 2>&1; then
            echo "$script: $m: the build failed ($out/build.$m.log); left out" >&2
            continue
        fi
        mpis+=("$m")
    done
    [[ ${mpis[0]:-} == shmpi ]] || { echo "$script: no shmpi build to compare" >&2; return 1; }
}

# median "T1 T2 ...": the middle value (the lower of the two middle ones).
median() { tr ' ' '\n' <<<"$1" | grep . | sort -g | awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)] }'; }

# compare_table TITLE ARRAY ROW...: a Markdown table, one line per ROW, of
# the median time of each MPI and shmpi's over the faster of the others
# (below 1: shmpi is faster).  A run stopped at its limit shows as
# "> limit"; shmpi's ratio to such a run is "< ratio".  compare_unit (default
# seconds) and compare_first (default program) name the times' unit and the
# first column.
compare_table() {
    local title=$1 row mpi m best bound
    local -n times=$2
    shift 2
    printf '\n%s, %s (median of %d rounds)\n\n| %s | ranks |' "$title" "${compare_unit:-seconds}" "$rounds" "${compare_first:-program}"
    for mpi in "${mpis[@]}"; do printf ' %s |' "$mpi"; done
    printf ' shmpi / faster other |\n|---|---|'
    for _ in "${mpis[@]}"; do printf -- '---|'; done
    printf -- '---|\n'
    for row in "$@"; do
        local line="| ${row%,*} | ${row##*,} |"
        best='' bound=''
        for mpi in "${mpis[@]}"; do
            if [[ -n ${over[$row,$mpi]:-} ]]; then
                line+=" > ${over[$row,$mpi]} |"
                [[ $mpi != shmpi && -z $bound ]] && bound=${over[$row,$mpi]}
                continue
            fi
            m=$(median "${times[$row,$mpi]:-}")
            if [[ -n $m ]]; then line+=" $(printf '%.3f' "$m") |"; else line+=" n/a |"; fi
            if [[ $mpi != shmpi && -n $m ]]; then
                if [[ -z $best ]] || (($(echo "$m < $best" | bc))); then best=$m; fi
            fi
        done
        m=$(median "${times[$row,shmpi]:-}")
        if [[ -n $m && -n $best ]]; then
            line+=" $(printf '%.2f' "$(echo "scale=4; $m / $best" | bc)") |"
        elif [[ -n $m && -n $bound ]]; then
            line+=" < $(printf '%.3f' "$(echo "scale=5; $m / $bound" | bc)") |"
        else
            line+=" n/a |"
        fi
        echo "$line"
    done
}
