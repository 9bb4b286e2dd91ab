# shellcheck shell=bash disable=SC2154,SC2034  # mpis, rounds, build: the caller's; launch_cmd: for it
# compare_lib.sh: the tables of bench/scotch_compare.sh,
# bench/sundials_compare.sh and bench/netpipe_compare.sh (sourced, not
# run).  They time one program with several MPIs in rounds and keep, for
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
