#!/usr/bin/env python3
"""summary_floor_check.py: scripts/bench-summary.py's floor column, from made-up results.

usage: bench/summary_floor_check.py SUMMARY_SCRIPT WORKDIR

Writes a small output directory (the 2-rank collective rows of three MPIs
and three link_probe --osu runs in floor.tsv) and checks what the summary
makes of it: the floor line with the medians of the runs, the goal table's
"floor / faster peer" column for the 2-rank 8 B Bcast, Reduce and Gather
(and for no other row), and results.json's "floor".  Then the same
directory without floor.tsv: no floor line, no column.  Exit status 0 when
every check holds, 1 otherwise (each failure printed).
"""
import json
import os
import shutil
import subprocess
import sys

# coll.tsv rows: case mpi round collective size avg_median_us max_median_us avg_best_us
COLL = [
    ("shmpi", "bcast", 8, 0.140), ("openmpi", "bcast", 8, 0.400), ("mpich", "bcast", 8, 0.250),
    ("shmpi", "reduce", 8, 0.130), ("openmpi", "reduce", 8, 0.325), ("mpich", "reduce", 8, 0.500),
    ("shmpi", "gather", 8, 0.120), ("openmpi", "gather", 8, 0.300), ("mpich", "gather", 8, 0.480),
    ("shmpi", "barrier", 0, 0.170), ("openmpi", "barrier", 0, 0.380), ("mpich", "barrier", 0, 0.850),
]
# floor.tsv rows: run sender_us receiver_us mean_us timer_us (medians: 0.020 0.220 0.120 0.019)
FLOOR = [(1, 0.019, 0.230, 0.125, 0.019), (2, 0.020, 0.220, 0.120, 0.019), (3, 0.021, 0.210, 0.115, 0.020)]


def run(summary, out):
    r = subprocess.run([sys.executable, summary, out, "shmpi", "openmpi", "mpich"],
                       capture_output=True, text=True)
    return r.returncode, r.stdout + r.stderr


def main(argv):
    if len(argv) != 3:
        print(__doc__.strip())
        return 1
    summary, out = argv[1], argv[2]
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    with open(os.path.join(out, "coll.tsv"), "w") as f:
        for rnd in (1, 2, 3):
            for m, op, size, t in COLL:
                f.write(f"coll2\t{m}\t{rnd}\t{op}\t{size}\t{t}\t{t * 1.5}\t{t * 0.9}\n")
    with open(os.path.join(out, "floor.tsv"), "w") as f:
        for row in FLOOR:
            f.write("\t".join(str(x) for x in row) + "\n")

    failures = []

    def check(cond, what):
        if not cond:
            failures.append(what)

    status, text = run(summary, out)
    check(status == 0, f"bench-summary.py exited with {status}")
    check("floor: bench/link_probe.c --osu" in text and "sender 0.020 us, receiver 0.220, mean 0.120" in text,
          "no floor line with the medians of the three runs")
    goal_rows = {line.split("|")[1].strip(): line for line in text.splitlines()
                 if line.startswith("| ") and "| 2 | 0.5 |" in line}
    # floor / faster peer: 0.120 over MPICH's 0.250 (Bcast), Open MPI's 0.325 (Reduce) and 0.300 (Gather).
    for op, want in (("bcast 8 B", "0.48"), ("reduce 8 B", "0.37"), ("gather 8 B", "0.40")):
        row = goal_rows.get(op, "")
        check(row.rstrip().endswith(f"| {want} |"), f"goal row '{op}': expected floor ratio {want}, got '{row}'")
    check(goal_rows.get("barrier", "").rstrip().endswith("| |"), "the barrier's goal row has a floor ratio")
    check("floor / faster peer" in text, "no 'floor / faster peer' column")
    with open(os.path.join(out, "results.json")) as f:
        res = json.load(f)
    check(res.get("floor", {}).get("mean_us") == 0.12 and res["floor"].get("runs") == 3,
          f"results.json floor: {res.get('floor')}")
    check(any(g.get("floor_ratio") == 0.48 for g in res.get("goals", []) if g["op"] == "bcast"),
          "results.json: no floor_ratio 0.48 for the Bcast goal")

    os.remove(os.path.join(out, "floor.tsv"))
    status, text = run(summary, out)
    check(status == 0, f"bench-summary.py without floor.tsv exited with {status}")
    check("floor" not in text, "a floor line or column without floor.tsv")

    for f in failures:
        print(f"summary_floor_check: {f}")
    if not failures:
        print("summary_floor_check: floor line, column and JSON as expected, and absent without floor.tsv")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
