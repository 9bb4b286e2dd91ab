#!/usr/bin/env python3
"""diff_compare.py: the verdict of scripts/external-checks.sh's `diff` check.

    diff_compare.py dtype SHMPI_OUT PEER_OUT...
    diff_compare.py comm SHMPI_PREFIX NRANKS PEER_PREFIX...
    diff_compare.py lines SHMPI_PREFIX NRANKS PEER_PREFIX...
    diff_compare.py err EXPECTED SHMPI_PREFIX NRANKS PEER_PREFIX...

dtype compares dtype_diff.c's lines, comm compares the files of comm_diff.c
or coll_diff.c (PREFIX.RANK, one block a round), lines those of p2p_diff.c
(the same, but each line of a block is judged alone where the three blocks
have as many lines: its rounds hold answers the peers differ on), err those
of err_diff.c (one block a case), where the answers EXPECTED lists (CASE
ANSWER REASON lines) are reported and allowed to differ.  An entry fails when
every peer MPI gives the same answer and shmpi another: two independent
implementations that agree are taken to read the standard alike.  Where the
peers disagree among themselves nothing is judged (they differ on what MPI
leaves open, and each has bugs of its own).  Prints the failures (at most 20
of them) and one summary line; exits 1 when any entry failed, 2 on bad
input.
"""
import os
import re
import sys

FIELDS = ("size", "lb", "ext", "tlb", "text", "packed", "hash")


def verdict(ours, theirs):
    """The rule of the check: None where the peers' answers differ among
    themselves (nothing is judged), else whether shmpi's is theirs."""
    answers = set(theirs)
    if len(answers) != 1:
        return None
    return ours == next(iter(answers))


def dtype_lines(path):
    """{index: (description, {field: value}, flags)} of a dtype_diff output."""
    entries = {}
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            m = re.match(r"(\d+) (.*) \| (.*)$", line.rstrip("\n"))
            if not m:
                continue
            values = dict(re.findall(r"(\w+) (\S+)", m.group(3)))
            entries[int(m.group(1))] = (m.group(2), values, values.get("flags", "-"))
    return entries


def dtype_key(entry):
    """What must agree: the description (failed constructors are marked in
    it) and the fields; the hash only where no long double padding is
    copied."""
    desc, values, flags = entry
    fields = [f for f in FIELDS if f != "hash" or "l" not in flags]
    return (desc,) + tuple(values.get(f) for f in fields)


def compare_dtype(shmpi_path, peer_paths):
    ours = dtype_lines(shmpi_path)
    peers = [dtype_lines(p) for p in peer_paths]
    compared = agreed = 0
    failures = []
    for i, entry in sorted(ours.items()):
        if any(i not in p for p in peers):
            continue  # a peer skipped it (it crashed there)
        desc, values, flags = entry
        # Empty types and types with empty parts: MPI leaves their bounds
        # open (dtype_diff.c, flag z).
        if values.get("size") == "0" or "z" in flags:
            continue
        compared += 1
        same = verdict(dtype_key(entry), [dtype_key(p[i]) for p in peers])
        if same is None:
            continue
        agreed += 1
        if not same:
            failures.append((i, entry, [p[i] for p in peers]))
    for i, entry, others in failures[:20]:
        print(f"type {i}: {entry[0]}")
        print(f"   shmpi: {' '.join(f'{f} {entry[1].get(f)}' for f in FIELDS)}")
        for path, other in zip(peer_paths, others):
            print(f"   {path}: {' '.join(f'{f} {other[1].get(f)}' for f in FIELDS)}"
                  + ("" if other[0] == entry[0] else f" ({other[0]})"))
    print(f"{os.path.basename(shmpi_path)}: {len(ours)} types, {compared} compared, the peers agree on {agreed}, "
          f"shmpi differs from them on {len(failures)}")
    return not failures


def comm_blocks(prefix, rank):
    """{round: [lines]} of one rank's comm_diff output, less the rounds that
    printed nothing: a crash or a hang cut them short (every round prints)."""
    blocks, current = {}, None
    with open(f"{prefix}.{rank}", encoding="utf-8", errors="replace") as f:
        for line in f:
            line = line.rstrip("\n")
            if line.startswith("== "):
                current = int(line[3:])
                blocks[current] = []
            elif current is not None:
                blocks[current].append(line)
    return {r: lines for r, lines in blocks.items() if lines}


def expected_cases(path):
    """{"CASE ANSWER": reason} of an err_diff expected file, whose lines are
    "CASE ANSWER REASON": the answer shmpi gives, where it differs from the
    peers on purpose."""
    cases = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            words = line.split("#", 1)[0].split(None, 2)
            if len(words) == 3:
                cases[f"{words[0]} {words[1]}"] = words[2].strip()
            elif words:
                raise SystemExit(f"{path}: not CASE ANSWER REASON: {line.strip()}")
    return cases


def units(lines, others, per_line):
    """What is judged of one round, as (line number or None, shmpi's lines,
    each peer's lines): the whole block, or each line alone (per_line,
    where every block has as many lines)."""
    if per_line and all(len(o) == len(lines) for o in others):
        return [(i, (line,), [(o[i],) for o in others]) for i, line in enumerate(lines)]
    return [(None, tuple(lines), [tuple(o) for o in others])]


def compare_comm(shmpi_prefix, nranks, peer_prefixes, expected=None, per_line=False):
    compared = agreed = 0
    failures = []
    allowed = set()
    for rank in range(nranks):
        ours = comm_blocks(shmpi_prefix, rank)
        peers = [comm_blocks(p, rank) for p in peer_prefixes]
        for r, block in sorted(ours.items()):
            if any(r not in p for p in peers):
                continue
            for where, lines, others in units(block, [p[r] for p in peers], per_line):
                compared += 1
                same = verdict(lines, others)
                if same is None:
                    continue
                agreed += 1
                if not same and expected and lines[-1] in expected:
                    allowed.add(lines[-1])
                elif not same:
                    other = others[0]
                    diff = [(a, b) for a, b in zip(lines, other) if a != b]
                    if len(lines) != len(other):
                        diff.append((f"({len(lines)} lines)", f"({len(other)} lines)"))
                    failures.append((rank, r if where is None else f"{r}, line {where + 1}", diff))
    for rank, r, diff in failures[:20]:
        print(f"rank {rank} of {nranks}, round {r}:")
        for a, b in diff[:4]:
            print(f"   shmpi: {a}\n   peers: {b}")
    for name in sorted(allowed):
        print(f"expected: {name}: {expected[name]}")
    what = "lines of a round of a rank" if per_line else "rounds of a rank"
    print(f"{os.path.basename(shmpi_prefix)} ({nranks} ranks): {compared} {what} compared, the peers agree on {agreed}, "
          f"shmpi differs from them on {len(failures)}" + (f" (and on the {len(allowed)} expected)" if allowed else ""))
    return not failures


def main(argv):
    if len(argv) >= 3 and argv[0] == "dtype":
        return 0 if compare_dtype(argv[1], argv[2:]) else 1
    if len(argv) >= 4 and argv[0] == "comm" and argv[2].isdigit():
        return 0 if compare_comm(argv[1], int(argv[2]), argv[3:]) else 1
    if len(argv) >= 4 and argv[0] == "lines" and argv[2].isdigit():
        return 0 if compare_comm(argv[1], int(argv[2]), argv[3:], per_line=True) else 1
    if len(argv) >= 5 and argv[0] == "err" and argv[3].isdigit():
        return 0 if compare_comm(argv[2], int(argv[3]), argv[4:], expected_cases(argv[1])) else 1
    print(__doc__.split("\n\n")[1], file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
