#!/usr/bin/env python3
"""bench-plot.py: latency-against-size plots from bench-compare.sh's results.

usage: scripts/bench-plot.py RESULTS_CSV OUT_DIR [--title-prefix TEXT]

RESULTS_CSV is the results.csv that scripts/bench-compare.sh writes (one row
per case, rank count, MPI, operation and size: the median over rounds and the
best round).  For every (case, operation) measured at two sizes or more, this
writes OUT_DIR/<case>[-<operation>].svg: time against message size on
logarithmic axes, one solid line per MPI (the median over rounds) and a
dotted one of the same colour (the best round).  It prints the files it wrote.

The SVG is written by this script itself, with the standard library only:
Debian's python3-matplotlib is not needed (and not used when installed), so
the plots look the same everywhere.  Exit status 0, or 1 when the CSV cannot
be read; no plottable series is not an error (it says so).
"""
import csv
import math
import os
import sys
from xml.sax.saxutils import escape

# Fixed colours, so an MPI keeps its colour from one plot to the next.
COLOURS = {"shmpi": "#d62728", "openmpi": "#1f77b4", "mpich": "#2ca02c"}
EXTRA_COLOURS = ["#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf", "#7f7f7f", "#bcbd22"]

WIDTH, HEIGHT = 760, 460
LEFT, RIGHT, TOP, BOTTOM = 78, 150, 44, 58


def colour_of(mpi, order):
    if mpi in COLOURS:
        return COLOURS[mpi]
    extras = [m for m in order if m not in COLOURS]
    return EXTRA_COLOURS[extras.index(mpi) % len(EXTRA_COLOURS)]


def size_label(b):
    b = int(b)
    for unit, scale in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if b >= scale and b % scale == 0:
            return f"{b // scale} {unit}"
    return f"{b} B"


def time_label(v):
    if v >= 1000:
        return f"{v / 1000:g} ms"
    return f"{v:g} us"


def log_ticks(lo, hi):
    """Ticks for a log10 axis from lo to hi: 1-2-5 steps when the range is
    short, decades otherwise."""
    ticks = []
    first = math.floor(math.log10(lo))
    last = math.ceil(math.log10(hi))
    steps = (1, 2, 5) if last - first <= 3 else (1,)
    for e in range(first, last + 1):
        for s in steps:
            v = s * 10.0**e
            if lo <= v <= hi:
                ticks.append(v)
    return ticks


def plot(path, title, ylabel, series, order):
    """series: mpi -> list of (size, median, best), sorted by size."""
    xs = [p[0] for pts in series.values() for p in pts]
    ys = [v for pts in series.values() for p in pts for v in (p[1], p[2]) if v > 0]
    if not xs or not ys:
        return False
    x_lo, x_hi = math.log2(min(xs)), math.log2(max(xs))
    if x_hi == x_lo:
        x_lo, x_hi = x_lo - 1, x_hi + 1
    y_lo, y_hi = math.log10(min(ys)), math.log10(max(ys))
    pad = max(0.05, (y_hi - y_lo) * 0.06)
    y_lo, y_hi = y_lo - pad, y_hi + pad
    pw, ph = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM

    def px(size):
        return LEFT + (math.log2(size) - x_lo) / (x_hi - x_lo) * pw

    def py(v):
        return TOP + ph - (math.log10(v) - y_lo) / (y_hi - y_lo) * ph

    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" '
        f'viewBox="0 0 {WIDTH} {HEIGHT}" font-family="sans-serif" font-size="12">',
        f'<rect width="{WIDTH}" height="{HEIGHT}" fill="white"/>',
        f'<text x="{LEFT + pw / 2:.1f}" y="24" text-anchor="middle" font-size="15">{escape(title)}</text>',
    ]
    # Grid and ticks: x at every size measured (thinned to at most 12 labels).
    sizes = sorted(set(xs))
    step = max(1, math.ceil(len(sizes) / 12))
    for i, s in enumerate(sizes):
        x = px(s)
        out.append(f'<line x1="{x:.1f}" y1="{TOP}" x2="{x:.1f}" y2="{TOP + ph}" stroke="#e5e5e5"/>')
        if (len(sizes) - 1 - i) % step == 0:  # evenly spaced, the largest size always
            out.append(f'<text x="{x:.1f}" y="{TOP + ph + 18}" text-anchor="middle" font-size="11">'
                       f'{escape(size_label(s))}</text>')
    for v in log_ticks(10**y_lo, 10**y_hi):
        y = py(v)
        out.append(f'<line x1="{LEFT}" y1="{y:.1f}" x2="{LEFT + pw}" y2="{y:.1f}" stroke="#e5e5e5"/>')
        out.append(f'<text x="{LEFT - 6}" y="{y + 4:.1f}" text-anchor="end" font-size="11">'
                   f'{escape(time_label(v))}</text>')
    out.append(f'<rect x="{LEFT}" y="{TOP}" width="{pw}" height="{ph}" fill="none" stroke="#444"/>')
    out.append(f'<text x="{LEFT + pw / 2:.1f}" y="{HEIGHT - 14}" text-anchor="middle">message size '
               f'(log scale)</text>')
    out.append(f'<text transform="translate(18 {TOP + ph / 2:.1f}) rotate(-90)" text-anchor="middle">'
               f'{escape(ylabel)} (log scale)</text>')
    # Lines: best dotted under the median.
    for mpi in [m for m in order if m in series]:
        pts = series[mpi]
        c = colour_of(mpi, order)
        best = " ".join(f"{px(s):.1f},{py(b):.1f}" for s, _, b in pts if b > 0)
        med = " ".join(f"{px(s):.1f},{py(m):.1f}" for s, m, _ in pts if m > 0)
        out.append(f'<polyline points="{best}" fill="none" stroke="{c}" stroke-width="1.2" '
                   f'stroke-dasharray="2 3"/>')
        out.append(f'<polyline points="{med}" fill="none" stroke="{c}" stroke-width="2"/>')
        for s, m, _ in pts:
            if m > 0:
                out.append(f'<circle cx="{px(s):.1f}" cy="{py(m):.1f}" r="2.8" fill="{c}">'
                           f'<title>{escape(mpi)} {escape(size_label(s))}: {m:g} us</title></circle>')
    # Legend.
    ly = TOP + 8
    for mpi in [m for m in order if m in series]:
        c = colour_of(mpi, order)
        lx = LEFT + pw + 14
        out.append(f'<line x1="{lx}" y1="{ly}" x2="{lx + 22}" y2="{ly}" stroke="{c}" stroke-width="2"/>')
        out.append(f'<text x="{lx + 28}" y="{ly + 4}">{escape(mpi)}</text>')
        ly += 20
    lx = LEFT + pw + 14
    out.append(f'<text x="{lx}" y="{ly + 10}" font-size="10" fill="#555">solid: median of rounds</text>')
    out.append(f'<text x="{lx}" y="{ly + 24}" font-size="10" fill="#555">dotted: best round</text>')
    out.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")
    return True


def main(argv):
    args = argv[1:]
    prefix = ""
    if "--title-prefix" in args:
        i = args.index("--title-prefix")
        if i + 1 >= len(args):
            print("bench-plot.py: --title-prefix needs a value", file=sys.stderr)
            return 1
        prefix = args[i + 1] + ": "
        del args[i:i + 2]
    if len(args) != 2 or args[0] in ("-h", "--help"):
        print(__doc__.strip())
        return 0 if args and args[0] in ("-h", "--help") else 1
    results, out_dir = args
    try:
        with open(results, newline="") as f:
            rows = list(csv.DictReader(f))
    except OSError as e:
        print(f"bench-plot.py: cannot read '{results}': {e.strerror}", file=sys.stderr)
        return 1
    # (case, op, metric, ranks) -> mpi -> [(size, median, best)]
    groups, order = {}, []
    for r in rows:
        if r.get("metric") not in ("latency_us", "time_us"):
            continue
        try:
            size, med, best = int(r["size_bytes"]), float(r["median"]), float(r["best"])
        except (KeyError, ValueError):
            continue
        if size <= 0:
            continue
        key = (r["case"], r["op"], r["metric"], r["ranks"])
        groups.setdefault(key, {}).setdefault(r["mpi"], []).append((size, med, best))
        if r["mpi"] not in order:
            order.append(r["mpi"])
    os.makedirs(out_dir, exist_ok=True)
    wrote = 0
    for (case, op, metric, ranks), series in sorted(groups.items()):
        if max(len(set(p[0] for p in pts)) for pts in series.values()) < 2:
            continue
        for pts in series.values():
            pts.sort()
        what = "half round trip" if metric == "latency_us" else "time per call"
        name = case if op in ("", case) else f"{case}-{op}"
        title = f"{prefix}{op or case}, {ranks} ranks: {what}"
        path = os.path.join(out_dir, name + ".svg")
        if plot(path, title, what + " (us)", series, order):
            print(path)
            wrote += 1
    if wrote == 0:
        print("bench-plot.py: no case was measured at two sizes or more: no plot", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
