# shellcheck shell=bash
# steady.sh: sourced by scripts/bench-compare.sh and bench/dtype_compare.sh.
# Runs each benchmark run between two link probes (bench/link_probe.c: one
# cache line handed between two CPUs) and repeats a run that a slow stretch
# of the machine hit.
#
# Some virtual machines switch between speeds for seconds or minutes: the
# 2-CPU AMD VM of docs/BENCHMARKS.md hands a line between its CPUs in about
# 0.055 us most of the time, in 0.26 us in slow stretches (every MPI then
# runs several times slower) and in 0.015 us in others (its two CPUs then
# seem to share a core).  Taking turns spreads such stretches over the MPIs
# but does not keep them out of a comparison; a median over rounds hides one
# odd round, not two.
#
# The machine's usual speed is the median of every probe so far (7 at the
# start, then two per try).  Before each try the probe is repeated, twice a
# second for up to 20 s, until it is within `steady_factor` of the usual
# speed: without that wait, an evening on which the VM spent half its time
# in its slow mode had the median at the slow speed, slow runs kept and
# fast ones repeated until the last try kept whatever came, so one MPI was
# measured in one mode and the next in the other.  (The lower quartile
# instead of the median fails the other way: the VM's odd 0.015 us mode,
# in which every MPI is slow, then becomes the usual speed.)  A run is
# steady when the probes before and after it are both within
# `steady_factor` of that, either way.  An unsteady run is repeated,
# `steady_tries` tries in all; the last try is kept whatever its probes
# said and counted as kept unsteady.  steady.tsv in the output directory
# has one row per try: label, try, probe before, probe after (us), the
# usual speed then, and kept / repeated / kept-unsteady.
#
#   steady_check                       status 2 and a message when
#                                      steady_factor or steady_tries is wrong
#   steady_init DIR                    builds the probe into DIR and measures
#                                      the usual speed (steady_factor 0:
#                                      turns it all off)
#   steady_run LABEL CMD [ARGS...]     runs CMD as above; returns its status
#   steady_summary                     one line on what happened, for reports
#   link_probe_build OUT LOG           builds bench/link_probe.c into OUT

steady_factor=1.5
steady_tries=4
steady_dir=""
steady_why=""
steady_probes=()

steady_check() {
    if ! awk -v f="$steady_factor" 'BEGIN { exit !(f ~ /^[0-9]*\.?[0-9]+$/ && (f == 0 || f >= 1)) }'; then
        echo "${0##*/}: --steady '$steady_factor': expected 0 (never repeat) or a factor of 1 or more (1.5)" >&2
        return 2
    fi
    if [[ ! $steady_tries =~ ^[1-9][0-9]*$ ]]; then
        echo "${0##*/}: --steady-tries '$steady_tries' is not a positive number" >&2
        return 2
    fi
}

# Builds bench/link_probe.c into $1, the compiler's messages into $2;
# its status.  (scripts/bench-compare.sh's floor uses it as well.)
link_probe_build() {
    "${CC:-cc}" -std=c11 -O2 -o "$1" "$(dirname -- "${BASH_SOURCE[0]}")/link_probe.c" >"$2" 2>&1
}

steady_init() {
    steady_dir=$1
    : >"$steady_dir/steady.tsv"
    if awk -v f="$steady_factor" 'BEGIN { exit !(f == 0) }'; then
        steady_why="off (--steady 0)"
        return 0
    fi
    if ! link_probe_build "$steady_dir/link_probe" "$steady_dir/link_probe.log"; then
        steady_why="off: ${CC:-cc} could not build bench/link_probe.c (link_probe.log)"
        return 0
    fi
    local t
    for _ in 1 2 3 4 5 6 7; do
        if ! t=$(steady_probe); then
            steady_why="off: link_probe failed ($(tail -1 "$steady_dir/link_probe.log"))"
            return 0
        fi
        steady_probes+=("$t")
    done
}

# The probe's one-way time in us on stdout; its messages in link_probe.log.
steady_probe() {
    local line
    line=$("$steady_dir/link_probe" --iters 100000 2>>"$steady_dir/link_probe.log") || return 1
    awk '{ print $2 }' <<<"$line"
}

# The median of every probe so far.
steady_usual() {
    printf '%s\n' "${steady_probes[@]}" | sort -g |
        awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# Whether probe time $1 is within steady_factor of the usual speed $2.
steady_near() {
    awk -v a="$1" -v u="$2" -v f="$steady_factor" 'BEGIN { exit !(a <= f * u && a * f >= u) }'
}

steady_run() {
    local label=$1
    shift
    if [[ -n $steady_why ]]; then
        "$@"
        return
    fi
    local try before after status verdict usual wait
    for ((try = 1; ; try++)); do
        before=$(steady_probe) || before=nan
        usual=$(steady_usual)
        # Wait (up to 20 s) for the machine's usual speed before starting.
        for ((wait = 0; wait < 40; wait++)); do
            if [[ $before == nan ]] || steady_near "$before" "$usual"; then break; fi
            sleep 0.5
            before=$(steady_probe) || before=nan
        done
        "$@"
        status=$?
        after=$(steady_probe) || after=nan
        [[ $before != nan ]] && steady_probes+=("$before")
        [[ $after != nan ]] && steady_probes+=("$after")
        usual=$(steady_usual)
        if [[ $before != nan && $after != nan ]] && steady_near "$before" "$usual" &&
            steady_near "$after" "$usual"; then
            verdict=kept
        elif ((try >= steady_tries)); then
            verdict=kept-unsteady
        else
            verdict=repeated
        fi
        printf '%s\t%d\t%s\t%s\t%s\t%s\n' "$label" "$try" "$before" "$after" "$usual" "$verdict" \
            >>"$steady_dir/steady.tsv"
        [[ $verdict != repeated ]] && return "$status"
        echo "    (machine off its usual speed: link probe $before / $after us, usually $usual; again)" >&2
    done
}

steady_summary() {
    if [[ -n $steady_why ]]; then
        echo "steady runs: $steady_why"
        return
    fi
    awk -F'\t' -v usual="$(steady_usual)" -v f="$steady_factor" -v tries="$steady_tries" '
        $6 == "repeated" { again++ }
        $6 != "repeated" { runs++ }
        $6 == "kept-unsteady" { bad++ }
        END {
            printf "steady runs: each run between two link probes (bench/link_probe.c; usually %s us one way ", usual
            printf "here); a run with a probe more than %sx off that was repeated, up to %d tries: ", f, tries
            printf "%d repeats for %d runs, %d kept unsteady (steady.tsv)\n", again + 0, runs + 0, bad + 0
        }' "$steady_dir/steady.tsv"
}
