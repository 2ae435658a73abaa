#!/usr/bin/python3
"""Summarize kcoll-bench CSV files as Markdown tables.

For every collective: one row per message size, with the host MPI's median
time, kcoll's (variant, default "kcoll:auto") and the speedup host/kcoll,
for each MPI found in the files. The speedup is taken within one run (the
host row just before the kcoll row, as kcoll-bench writes them); with
several runs of the same size the medians of times and speedups are shown.

    scripts/bench_table.py results.csv [more.csv ...] [--variant kcoll:auto]
    scripts/bench_table.py --summary results.csv [more.csv ...] [--hot hot.csv ...]

--summary prints instead one row per collective: per MPI the speed-up at
1 MiB, its range over all sizes and the smallest size from which every
size is at least 0.95x (the README's table), then per MPI and cache state
how many cells (collective, size) are at least 0.95x and the lowest
three. With --hot, the
files before it are off-cache runs (kcoll-bench --cache cold, the default)
and the files after it on-cache runs (--cache hot, as OSU measures): each
MPI then has both cache states side by side.
"""

import argparse
import csv
import statistics
from collections import defaultdict


def size_label(n):
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if n >= 1 << shift and n % (1 << shift) == 0:
            return f"{n >> shift} {unit}"
    return f"{n} B"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("csv", nargs="+")
    ap.add_argument("--variant", default="kcoll:auto")
    ap.add_argument("--summary", action="store_true")
    ap.add_argument("--hot", nargs="+", default=[],
                    help="on-cache files (kcoll-bench --cache hot), beside the others in --summary")
    args = ap.parse_args()

    host, kcoll, ratio, mpis, colls = read(args.csv, args.variant)
    if args.summary:
        states = [("", ratio)]
        if args.hot:
            _, _, hot, hot_mpis, hot_colls = read(args.hot, args.variant)
            states = [("off-cache ", ratio), ("on-cache ", hot)]
            mpis += [m for m in hot_mpis if m not in mpis]
            colls += [c for c in hot_colls if c not in colls]
        summary(states, mpis, colls)
        return
    tables(host, kcoll, ratio, mpis, colls, args.variant)


def read(paths, variant):
    """host and kcoll times and host/kcoll ratios per (coll, np, mpi, bytes)."""
    host = defaultdict(list)    # (coll, np, mpi, bytes) -> [us]
    kcoll = defaultdict(list)
    ratio = defaultdict(list)
    mpis, colls = [], []
    for path in paths:
        with open(path, newline="") as f:
            last = None
            for row in csv.DictReader(f):
                key = (row["collective"], int(row["np"]), row["mpi"], int(row["bytes"]))
                us = float(row["median_us"])
                if row["mpi"] not in mpis:
                    mpis.append(row["mpi"])
                if key[:2] not in colls:
                    colls.append(key[:2])
                if row["variant"] == "host":
                    host[key].append(us)
                    last = (key, us)
                elif row["variant"] == variant:
                    kcoll[key].append(us)
                    if last and last[0] == key and us > 0:
                        ratio[key].append(last[1] / us)
    return host, kcoll, ratio, mpis, colls


def summary(states, mpis, colls):
    """One row per collective; per MPI and cache state the speed-up at 1 MiB,
    its range over the sizes, and the smallest size from which kcoll is at
    least 0.95x at every size ("-": not even at the largest)."""
    sizes = sorted({k[3] for _, ratio in states for k in ratio})
    lo, hi = size_label(sizes[0]), size_label(sizes[-1])
    print("| collective |" + "".join(f" {m}: {st}at 1 MiB | {lo}-{hi} | >= 0.95x from |"
                                     for m in mpis for st, _ in states))
    print("|---|" + "---:|---:|---:|" * len(mpis) * len(states))
    for coll, np in colls:
        line = f"| `MPI_{coll[:1].upper()}{coll[1:]}` |"
        for m in mpis:
            for _, ratio in states:
                med = {k[3]: statistics.median(v) for k, v in ratio.items()
                       if k[:3] == (coll, np, m) and v}
                one = f"{med[1 << 20]:.2f}x" if (1 << 20) in med else "-"
                rng = f"{min(med.values()):.2f}x-{max(med.values()):.2f}x" if med else "-"
                # the smallest size from which every size is at least 0.95x
                start = "-"
                for n in sorted(med, reverse=True):
                    if med[n] < 0.95:
                        break
                    start = size_label(n)
                line += f" {one} | {rng} | {start} |"
        print(line)
    counts(states, mpis, colls)


def counts(states, mpis, colls):
    """How many cells (collective, size) are at least 0.95x, per MPI and
    cache state, and the lowest three of each."""
    print()
    print("| cells >= 0.95x |" + "".join(f" {(st or 'all sizes').strip()} |" for st, _ in states)
          + " lowest |")
    print("|---|" + "---:|" * len(states) + "---|")
    total = [0, 0]
    for m in mpis:
        line, low = f"| {m} |", []
        for st, ratio in states:
            med = [(statistics.median(v), coll, k[3]) for k, v in ratio.items()
                   for coll, np in colls if k[:3] == (coll, np, m) and v]
            good = sum(r >= 0.95 for r, _, _ in med)
            total[0] += good
            total[1] += len(med)
            line += f" {good} of {len(med)} |"
            low += [(r, f"{r:.2f}x {c} {size_label(b)} {st.strip() or ''}".rstrip())
                    for r, c, b in med]
        low.sort()
        print(line + " " + ", ".join(t for _, t in low[:3]) + " |")
    print(f"\nAll: {total[0]} of {total[1]} cells at least 0.95x (medians over the runs).")


def tables(host, kcoll, ratio, mpis, colls, variant):
    """One table per collective: per size and MPI host, kcoll, speed-up."""
    for coll, np in colls:
        print(f"\n**{coll}**, {np} ranks ({variant}; median us, max over ranks)\n")
        head = "| size |"
        rule = "|---:|"
        for m in mpis:
            head += f" {m} | kcoll | speed-up |"
            rule += "---:|---:|---:|"
        print(head)
        print(rule)
        sizes = sorted({k[3] for k in host if k[:2] == (coll, np)})
        for b in sizes:
            line = f"| {size_label(b)} |"
            for m in mpis:
                k = (coll, np, m, b)
                h = f"{statistics.median(host[k]):.2f}" if host[k] else "-"
                c = f"{statistics.median(kcoll[k]):.2f}" if kcoll[k] else "-"
                r = f"{statistics.median(ratio[k]):.2f}x" if ratio[k] else "-"
                line += f" {h} | {c} | {r} |"
            print(line)


if __name__ == "__main__":
    main()
