#!/usr/bin/env python3
"""Placement through the real launcher: --bind-to, --map-by, --cpu-list,
--report-bindings, SHMPI_TOPOLOGY, memory binding, and shmpi-topo.

usage: run_place.py MPIRUN SHMPI_TOPO PROBE CASE

PROBE is place_probe (this directory): a rank that prints the Place mpirun
wrote into its slot and its CPU affinity, or checks where its pages are.
Exit 77 (skip) when the machine cannot show what a case needs.
"""

import os
import re
import subprocess
import sys

SKIP = 77
BIG = "pack:2 numa:2 l3:2 core:4 pu:1"


class CaseFailed(Exception):
    pass


class Skip(Exception):
    pass


def check(cond, what):
    if not cond:
        raise CaseFailed(what)


def run(cmd, env_extra=None, timeout=120):
    env = dict(os.environ)
    env.pop("SHMPI_TOPOLOGY", None)
    env.update(env_extra or {})
    p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout)
    return p.returncode, p.stdout, p.stderr


def fmt_list(cpus):
    """[0,1,2,5] -> "0-2,5" (as the probe and the report print them)."""
    cpus = sorted(cpus)
    out, i = [], 0
    while i < len(cpus):
        j = i
        while j + 1 < len(cpus) and cpus[j + 1] == cpus[j] + 1:
            j += 1
        out.append(str(cpus[i]) if i == j else f"{cpus[i]}-{cpus[j]}")
        i = j + 1
    return ",".join(out)


def rank_lines(text):
    """{rank: rest of line} from "shmpi: rank R ..." report lines."""
    found = {}
    for line in text.splitlines():
        m = re.match(r"shmpi: rank (\d+) (.*)$", line)
        if m:
            found[int(m.group(1))] = m.group(2)
    return found


def probe_lines(text):
    """{rank: (place, cpus)} from the probe's "rank R: PLACE | cpus LIST"."""
    found = {}
    for line in text.splitlines():
        m = re.match(r"rank (\d+): (.*) \| cpus (.*)$", line)
        if m:
            found[int(m.group(1))] = (m.group(2), m.group(3))
    return found


def machine_cores(topo):
    rc, out, err = run([topo])
    check(rc == 0, f"shmpi-topo failed: {err}")
    m = re.search(r"(\d+) cores?", out.splitlines()[0])
    check(m is not None, f"no core count in {out.splitlines()[0]!r}")
    return int(m.group(1))


# ---- cases ------------------------------------------------------------------

def report_this_machine(mpirun, topo, probe):
    """Default binding: one core per rank; the report says which, and each
    rank's affinity is exactly the PUs the report names."""
    n = machine_cores(topo)
    rc, out, err = run([mpirun, "--report-bindings", "-n", str(n), probe])
    check(rc == 0, f"rc {rc}: {err}")
    head = err.splitlines()[0]
    check(re.match(rf"shmpi: {n} ranks? on this machine \(.*\): map-by core:compact, "
                   r"bind-to core \(default\)$", head), f"header {head!r}")
    report, ranks = rank_lines(err), probe_lines(out)
    check(sorted(report) == list(range(n)) and sorted(ranks) == list(range(n)),
          f"report {report} / probe {ranks}")
    cores = set()
    for r in range(n):
        m = re.match(r"bound to core (\d+) \(PUs? ([0-9,-]+)\), .*NUMA node \d+", report[r])
        check(m is not None, f"rank {r} line {report[r]!r}")
        cores.add(m.group(1))
        check(ranks[r][1] == m.group(2), f"rank {r}: affinity {ranks[r][1]} but report {report[r]!r}")
        check(f"core {m.group(1)}" in ranks[r][0], f"rank {r}: slot place {ranks[r][0]!r}")
    check(len(cores) == n, f"ranks share cores: {report}")


def bind_none(mpirun, topo, probe):
    mine = fmt_list(os.sched_getaffinity(0))
    rc, out, err = run([mpirun, "--bind-to", "none", "--report-bindings", "-n", "2", probe])
    check(rc == 0, f"rc {rc}: {err}")
    check("bind-to none\n" in err, err)
    for r, (place, cpus) in probe_lines(out).items():
        check(cpus == mine, f"rank {r} unbound but affinity {cpus}, mpirun's {mine}")
        check(rank_lines(err)[r].startswith("not bound: "), err)


def oversubscribed_default(mpirun, topo, probe):
    n = machine_cores(topo) + 1
    rc, out, err = run([mpirun, "--report-bindings", "-n", str(n), probe])
    check(rc == 0, f"rc {rc}: {err}")
    check("bind-to none (default: more ranks than cores)" in err.splitlines()[0], err)
    mine = fmt_list(os.sched_getaffinity(0))
    for r, (_, cpus) in probe_lines(out).items():
        check(cpus == mine, f"rank {r}: affinity {cpus}")


def impossible_core_binding(mpirun, topo, probe):
    n = machine_cores(topo) + 1
    rc, out, err = run([mpirun, "--bind-to", "core", "-n", str(n), probe])
    check(rc == 2, f"rc {rc}")
    check(out == "", f"ranks ran: {out!r}")
    lines = err.splitlines()
    check(len(lines) == 1 and re.match(
        rf"shmpi: mpirun: --bind-to core: {n} ranks but only {n - 1} cores? \(PUs? [0-9,-]+\) to "
        r"bind them to; add --oversubscribe to let ranks share cores, or use --bind-to none$",
        lines[0]), f"stderr {err!r}")
    # The documented way out: ranks share cores.
    rc, out, err = run([mpirun, "--bind-to", "core", "--oversubscribe", "--report-bindings", "-n",
                        str(n), probe])
    check(rc == 0, f"rc {rc}: {err}")
    report = rank_lines(err)
    check(report[n - 1].split(",")[0] == report[0].split(",")[0], f"rank {n-1} does not wrap: {err}")


def cpu_list(mpirun, topo, probe):
    last = max(os.sched_getaffinity(0))
    rc, out, err = run([mpirun, "--cpu-list", str(last), "-n", "1", probe])
    check(rc == 0, f"rc {rc}: {err}")
    check(probe_lines(out)[0][1] == str(last), out)
    # Unbound ranks stay on the listed CPUs too: with --bind-to none, and
    # by default when they outnumber the cores.
    for extra in (["--bind-to", "none", "-n", "2"], ["-n", "3"]):
        rc, out, err = run([mpirun, "--cpu-list", str(last)] + extra + [probe])
        check(rc == 0, f"{extra}: rc {rc}: {err}")
        lines = probe_lines(out)
        check(len(lines) == int(extra[-1]), f"{extra}: {out}")
        for r, (_, cpus) in lines.items():
            check(cpus == str(last), f"{extra}: rank {r} may run on {cpus}, not only on CPU {last}")
    rc, out, err = run([mpirun, "--cpu-list", "100000", "-n", "1", probe])
    check(rc == 2 and "--cpu-list '100000': CPU 100000 is not one of the PUs the job may use" in err,
          f"rc {rc}: {err}")


def synthetic_places(mpirun, topo, probe):
    """SHMPI_TOPOLOGY drives the map, the report and the places the ranks
    read; nothing is really bound."""
    rc, out, err = run([mpirun, "--report-bindings", "--map-by", "numa", "-n", "8", probe],
                       {"SHMPI_TOPOLOGY": BIG})
    check(rc == 0, f"rc {rc}: {err}")
    check(err.splitlines()[0] ==
          f"shmpi: 8 ranks on synthetic topology '{BIG}' (2 packages, 4 NUMA nodes, 8 L3 caches, "
          "32 cores, 32 PUs): map-by numa:spread, bind-to core (default; not bound: the topology "
          "is not this machine's)", err)
    expect = {0: (0, 0, 0, 0), 1: (8, 2, 1, 0), 2: (16, 4, 2, 1), 3: (24, 6, 3, 1),
              4: (1, 0, 0, 0), 5: (9, 2, 1, 0), 6: (17, 4, 2, 1), 7: (25, 6, 3, 1)}
    report, ranks = rank_lines(err), probe_lines(out)
    mine = fmt_list(os.sched_getaffinity(0))
    for r, (core, l3, numa, pkg) in expect.items():
        check(report[r] == f"mapped to core {core} (PU {core}), L3 {l3}, NUMA node {numa}, package {pkg}",
              f"rank {r}: {report[r]!r}")
        check(ranks[r] == (f"PU {core}, core {core}, L3 {l3}, NUMA node {numa}, package {pkg}", mine),
              f"rank {r} read {ranks[r]}")
    # Two NUMA nodes over each package's cores (DDR and HBM, or CXL memory):
    # the report names both; a rank's place (where mpirun binds its memory)
    # is the first.
    hbm = "pack:2 [numa] [numa] core:2 pu:1"
    rc, out, err = run([mpirun, "--report-bindings", "--map-by", "numa", "-n", "2", probe],
                       {"SHMPI_TOPOLOGY": hbm})
    check(rc == 0, f"rc {rc}: {err}")
    check(err.splitlines()[0].startswith(
        f"shmpi: 2 ranks on synthetic topology '{hbm}' (2 packages, 4 NUMA nodes, 4 cores, 4 PUs)"), err)
    report, ranks = rank_lines(err), probe_lines(out)
    for r, (core, nodes, pkg) in {0: (0, "0+1", 0), 1: (2, "2+3", 1)}.items():
        check(report[r] == f"mapped to core {core} (PU {core}), NUMA nodes {nodes}, package {pkg}",
              f"rank {r}: {report[r]!r}")
        check(ranks[r][0] == f"PU {core}, core {core}, NUMA node {nodes[0]}, package {pkg}",
              f"rank {r} read {ranks[r]}")
    # hwloc's own variable makes its default topology another machine's:
    # the report must not call it this machine, and names the variable.
    rc, out, err = run([mpirun, "--report-bindings", "-n", "2", probe], {"HWLOC_SYNTHETIC": BIG})
    check(rc == 0, f"rc {rc}: {err}")
    check(err.startswith(f"shmpi: 2 ranks on synthetic topology '{BIG}' from HWLOC_SYNTHETIC (2 packages,") and
          "not bound: the topology is not this machine's" in err.splitlines()[0], err)


def topo_tool_matches_mpirun(mpirun, topo, probe):
    args = ["--map-by", "l3cache:spread", "--bind-to", "numa", "-n", "6"]
    rc, _, err = run([mpirun, "--report-bindings"] + args + ["true"], {"SHMPI_TOPOLOGY": BIG})
    check(rc == 0, f"rc {rc}: {err}")
    rc, out, terr = run([topo, "--topology", BIG] + args)
    check(rc == 0, f"shmpi-topo rc {rc}: {terr}")
    mine = [l for l in out.splitlines() if l.startswith("shmpi: ")]
    check(mine == err.splitlines(), f"shmpi-topo:\n{mine}\nmpirun:\n{err}")
    check("Collective tree for 6 members" in out, out)
    check(re.search(r"^5 edges: \d+ cross packages", out, re.M), out)
    # A rank bound wider than a core shows on each core it may run on.
    check("  NUMA node 1\n    L3 2\n      core 8 (PU 8): ranks 2 3 (bound to NUMA node 1)\n" in out, out)
    # Trees over members sorted by place cross fewer NUMA nodes.
    spread = ["--topology", BIG, "-n", "32", "--map-by", "numa"]
    _, by_rank, _ = run([topo] + spread + ["--tree-order", "rank"])
    _, by_place, _ = run([topo] + spread)  # locality order is the default
    check(by_rank.splitlines()[-1] == "31 edges: 8 cross packages, 24 cross NUMA nodes, 26 cross L3 caches",
          by_rank.splitlines()[-1])
    check(by_place.splitlines()[-1] == "31 edges: 2 cross packages, 3 cross NUMA nodes, 11 cross L3 caches",
          by_place.splitlines()[-1])
    # Each level is counted on its own: one NUMA node for two packages, and
    # two NUMA nodes in one L3.
    for spec, by, want in (("pack:2 core:2 pu:1", "package", "3 edges: 2 cross packages, 0 cross NUMA nodes"),
                           ("pack:1 l3:1 numa:2 core:2 pu:1", "numa",
                            "1 edges: 0 cross packages, 1 cross NUMA nodes, 0 cross L3 caches")):
        rc, out, terr = run([topo, "--topology", spec, "-n", "4" if by == "package" else "2", "--map-by", by])
        check(rc == 0 and out.splitlines()[-1].startswith(want), f"{spec}: rc {rc}: {out}{terr}")


def partial_levels(mpirun, topo, probe):
    """An XML topology whose package 0 has an L3 and packages 1 and 2 have
    none (one_l3_of_three.xml, 6 cores, one NUMA node over all three
    packages), through mpirun and shmpi-topo, as SHMPI_TOPOLOGY, --topology
    and hwloc's own HWLOC_XMLFILE."""
    xml = os.path.join(os.path.dirname(os.path.abspath(__file__)), "one_l3_of_three.xml")
    summary = "3 packages, 1 NUMA node, 1 L3 cache, 6 cores, 6 PUs"
    # Each L3-less core counts as an L3 of its own, as --bind-to l3cache
    # binds a rank there to its core (before, they were one L3 together:
    # rank 2 went to core 1).
    args = ["--map-by", "l3cache:spread", "-n", "6"]
    rc, _, err = run([mpirun, "--report-bindings"] + args + ["true"], {"SHMPI_TOPOLOGY": xml})
    check(rc == 0, f"rc {rc}: {err}")
    want = [f"shmpi: 6 ranks on XML file '{xml}' ({summary}): map-by l3cache:spread, bind-to core "
            "(default; not bound: the topology is not this machine's)",
            "shmpi: note: --map-by l3cache:spread: cores 2-5 (PUs 2-5) have no L3 caches; each of those "
            "cores counts as an L3 cache of its own"]
    for r, (core, pkg) in enumerate(((0, 0), (2, 1), (3, 1), (4, 2), (5, 2), (1, 0))):
        l3 = ", L3 0" if pkg == 0 else ""
        want.append(f"shmpi: rank {r} mapped to core {core} (PU {core}){l3}, NUMA node 0, package {pkg}")
    check(err.splitlines() == want, f"mpirun:\n{err}\nwanted:\n" + "\n".join(want))
    rc, out, terr = run([topo, "--topology", xml] + args)
    check(rc == 0, f"shmpi-topo rc {rc}: {terr}")
    check([l for l in out.splitlines() if l.startswith("shmpi: ")] == want, out)
    # The tree nests as hwloc does: the one NUMA node holds the packages
    # (before, each package showed a NUMA node 0 of its own).
    tree = ("NUMA node 0\n"
            "  package 0\n"
            "    L3 0\n"
            "      core 0 (PU 0): rank 0\n"
            "      core 1 (PU 1): rank 5\n"
            "  package 1\n"
            "    core 2 (PU 2): rank 1\n"
            "    core 3 (PU 3): rank 2\n"
            "  package 2\n"
            "    core 4 (PU 4): rank 3\n"
            "    core 5 (PU 5): rank 4\n")
    check(out.startswith(f"Topology: XML file '{xml}' ({summary})\n" + tree), out)
    # hwloc's HWLOC_XMLFILE: the header names the file and the variable, in
    # one parenthesis (before: "hwloc's default topology, which is not this
    # machine (HWLOC_XMLFILE, ...) (3 packages, ...)").
    rc, _, err = run([mpirun, "--report-bindings", "-n", "2", "true"], {"HWLOC_XMLFILE": xml})
    check(rc == 0, f"rc {rc}: {err}")
    check(err.splitlines()[0] ==
          f"shmpi: 2 ranks on XML file '{xml}' from HWLOC_XMLFILE ({summary}): map-by core:compact, "
          "bind-to core (default; not bound: the topology is not this machine's)", err)
    rc, out, terr = run([topo], {"HWLOC_XMLFILE": xml})
    check(rc == 0 and out.splitlines()[0] == f"Topology: XML file '{xml}' from HWLOC_XMLFILE ({summary})",
          f"rc {rc}: {out}{terr}")


def topo_tool_errors(mpirun, topo, probe):
    """shmpi-topo's mistakes exit 2, as mpirun's, in its own name; it reads
    the collectives' settings as MPI_Init does."""
    for args, env, needle in (
            (["-n", "0"], {}, "--np: Value 0 not in range"),
            (["--bind-to", "core"], {}, "--bind-to requires --np"),
            (["--cpu-list", "0"], {}, "--cpu-list requires --np"),
            (["--no-such-option"], {}, "--no-such-option"),
            (["--topology", "core:2 pu:1", "-n", "3", "--bind-to", "core"], {},
             "shmpi-topo: --bind-to core: 3 ranks but only 2 cores"),
            (["--topology", "pack:2 fish:3", "-n", "2"], {},
             "shmpi-topo: --topology='pack:2 fish:3': neither an XML file nor"),
            (["-n", "2"], {"SHMPI_TOPOLOGY": "/nonexistent/t.xml"},
             "shmpi-topo: SHMPI_TOPOLOGY='/nonexistent/t.xml': cannot read the XML file"),
            (["-n", "2"], {"SHMPI_COLL_SHM_FLAT": "abc"}, "SHMPI_COLL_SHM_FLAT='abc' is not a number in 1..1048576"),
            (["-n", "2"], {"SHMPI_COLL_SHM_BAND": "31"}, "SHMPI_COLL_SHM_BAND='31' is not a number in 1..30"),
            # What mpirun refuses, it refuses too ("As mpirun").
            (["--topology", "core:2 pu:1", "-n", "2", "--cpu-list", ""], {},
             "shmpi-topo: --cpu-list '': the value is empty"),
            (["--topology", "core:2 pu:1", "-n", "2", "--bind-to", "auto"], {},
             "shmpi-topo: --bind-to 'auto': expected none, hwthread, core"),
            (["--topology", "core:2 pu:1", "-n", "2", "--cpu-list", "0-70000"], {},
             "shmpi-topo: --cpu-list '0-70000': 70001 CPUs, but a CPU list may name at most 65536\n"),
            # Asked for, locality order needs the places of every member.
            (["--topology", "core:2 pu:1", "-n", "4", "--tree", "8", "--tree-order", "locality"], {},
             "shmpi-topo: --tree-order locality needs -n equal to the tree size (-n 4, --tree 8)\n"),
            (["--tree", "8", "--tree-order", "locality"], {},
             "shmpi-topo: --tree-order locality needs -n equal to the tree size (-n 0, --tree 8)\n")):
        rc, out, err = run([topo] + args, env)
        check(rc == 2 and needle in err and out == "", f"{args} {env}: rc {rc}: {out!r} {err!r}")


def bad_requests(mpirun, topo, probe):
    for args, env, needle in (
            (["--bind-to", "board"], {}, "--bind-to 'board': expected none, hwthread, core, l3cache, numa or package"),
            (["--map-by", "numa:wide"], {}, "--map-by 'numa:wide': expected core, l3cache, numa or package"),
            (["--cpu-list", "1-"], {}, "--cpu-list '1-': expected CPU numbers and ranges"),
            ([], {"SHMPI_TOPOLOGY": "pack:2 fish:3"}, "SHMPI_TOPOLOGY='pack:2 fish:3': neither an XML file nor"),
            ([], {"SHMPI_TOPOLOGY": "/nonexistent/t.xml"}, "SHMPI_TOPOLOGY='/nonexistent/t.xml': cannot read the XML file"),
            (["--cpu-list", "0,100000"], {}, "--cpu-list '0,100000': CPU 100000 is not one of the PUs the job may use"),
            (["--cpu-list", "0-70000"], {}, "--cpu-list '0-70000': 70001 CPUs, but a CPU list may name at most 65536")):
        rc, out, err = run([mpirun] + args + ["-n", "1", "true"], env)
        # One line, in mpirun's name.
        check(rc == 2 and err.startswith("shmpi: mpirun: ") and needle in err and len(err.splitlines()) == 1,
              f"{args} {env}: rc {rc}: {err!r}")


def memory(mpirun, topo, probe):
    rc, out, _ = run([probe, "numa"])
    nodes = int(out.strip())
    if nodes < 2:
        raise Skip(f"this machine has {nodes} NUMA node(s)")
    n = min(2 * nodes, machine_cores(topo))
    rc, out, err = run([mpirun, "--map-by", "numa", "--report-bindings", "-n", str(n), probe, "memory"])
    check(rc == 0, f"rc {rc}:\n{out}\n{err}")


CASES = {f.__name__: f for f in (report_this_machine, bind_none, oversubscribed_default,
                                 impossible_core_binding, cpu_list, synthetic_places,
                                 topo_tool_matches_mpirun, partial_levels, topo_tool_errors, bad_requests,
                                 memory)}


def main():
    mpirun, topo, probe, case = sys.argv[1:5]
    try:
        CASES[case](mpirun, topo, probe)
    except Skip as e:
        print(f"SKIP {case}: {e}")
        return SKIP
    except CaseFailed as e:
        print(f"FAIL {case}: {e}")
        return 1
    print(f"ok {case}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
