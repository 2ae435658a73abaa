#!/usr/bin/python3
"""Plot kcoll-bench results.

Reads one or more CSV files written by `kcoll-bench --csv FILE` (columns
mpi,collective,np,bytes,variant,median_us,min_us,p90_us,iterations) and draws,
for every (mpi, collective, np), two panels: the median latency of the host
MPI and of each kcoll variant against the message size (log-log), and the
speedup host_us / variant_us with a dashed line at 1.0. All groups go into
one PNG, one row of panels per group.

The speedup is computed inside one run, as kcoll-bench measures it: for
each size, kcoll-bench writes the host row first and then one row per kcoll
variant, all from the same alternating loop, so each kcoll row is divided
into the host row just before it. When the same (mpi, collective, np, bytes,
variant) appears more than once (several runs appended to one file, or
several files), the median of the latencies and the median of the per-run
speedups are plotted.

    scripts/plot_bench.py results.csv [more.csv ...] -o bench.png
"""

import argparse
import csv
import statistics
import sys
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (after choosing the backend)
from matplotlib.ticker import FuncFormatter, NullLocator  # noqa: E402

REQUIRED = ("mpi", "collective", "np", "bytes", "variant", "median_us")


def read_rows(paths):
    """Returns (latency, speedup), both
    {(mpi, collective, np): {variant: {bytes: [value, ...]}}}."""

    def table():
        return defaultdict(lambda: defaultdict(lambda: defaultdict(list)))

    latency, speedup = table(), table()
    for path in paths:
        with open(path, newline="") as f:
            reader = csv.DictReader(f)
            missing = [c for c in REQUIRED if c not in (reader.fieldnames or [])]
            if missing:
                sys.exit(f"{path}: not a kcoll-bench CSV file (missing {', '.join(missing)})")
            last_host = None  # (key, bytes, median_us) of the latest host row in this file
            for line, row in enumerate(reader, start=2):
                try:
                    key = (row["mpi"], row["collective"], int(row["np"]))
                    size = int(row["bytes"])
                    median = float(row["median_us"])
                    variant = row["variant"]
                except (TypeError, ValueError):
                    print(f"{path}:{line}: skipping malformed row", file=sys.stderr)
                    continue
                latency[key][variant][size].append(median)
                if variant == "host":
                    last_host = (key, size, median)
                elif last_host and last_host[:2] == (key, size) and median > 0:
                    speedup[key][variant][size].append(last_host[2] / median)
    return latency, speedup
def size_label(value, _pos=None):
    value = int(round(value))
    for unit, shift in (("G", 30), ("M", 20), ("K", 10)):
        if value >= 1 << shift and value % (1 << shift) == 0:
            return f"{value >> shift}{unit}"
    return str(value)


def variant_order(variants):
    """host first, then the kcoll variants in the order of their names."""
    return sorted(variants, key=lambda v: (v != "host", v))


def plot_group(ax_lat, ax_speed, key, latency, speedup):
    mpi, collective, nranks = key
    all_sizes = sorted({b for per_size in latency.values() for b in per_size})
    all_ratios = []

    for variant in variant_order(latency):
        per_size = latency[variant]
        sizes = sorted(b for b in per_size if b > 0)  # log axis: 0 bytes cannot be drawn
        times = [statistics.median(per_size[b]) for b in sizes]
        style = dict(color="black", linestyle="--", marker="s") if variant == "host" else dict(marker="o")
        ax_lat.plot(sizes, times, label=variant, **style)
        if variant == "host":
            continue
        ratios = speedup.get(variant, {})
        common = sorted(b for b in ratios if b > 0)
        values = [statistics.median(ratios[b]) for b in common]
        all_ratios.extend(values)
        ax_speed.plot(common, values, marker="o", label=f"host / {variant}")

    title = f"{collective}, {nranks} ranks, {mpi}"
    ax_lat.set_title(f"Latency: {title}")
    ax_lat.set_xscale("log", base=2)
    ax_lat.set_yscale("log")
    ax_lat.set_xlabel("message size (bytes)")
    ax_lat.set_ylabel("median time, max over ranks (us)")
    ax_lat.grid(True, which="both", alpha=0.3)
    ax_lat.legend(fontsize="small")

    ax_speed.axhline(1.0, color="black", linestyle="--", linewidth=1, label="1.0 (no change)")
    ax_speed.set_title(f"Speedup: {title}")
    ax_speed.set_xscale("log", base=2)
    if all_ratios and max(all_ratios + [1.0]) / min(all_ratios + [1.0]) > 8:
        ax_speed.set_yscale("log")  # a wide range: keep 0.5x and 2x equally far from 1.0
    ax_speed.set_xlabel("message size (bytes)")
    ax_speed.set_ylabel("speedup (host_us / kcoll_us)")
    ax_speed.grid(True, which="both", alpha=0.3)
    ax_speed.legend(fontsize="small")
    if not speedup:
        ax_speed.text(0.5, 0.5, "no host rows to compare with", transform=ax_speed.transAxes, ha="center")

    positive = [b for b in all_sizes if b > 0]
    if positive:
        for ax in (ax_lat, ax_speed):
            ax.set_xlim(positive[0] / 1.3, positive[-1] * 1.3)
            if len(positive) <= 16:
                ax.set_xticks(positive)
                ax.xaxis.set_minor_locator(NullLocator())
            ax.xaxis.set_major_formatter(FuncFormatter(size_label))


def main():
    parser = argparse.ArgumentParser(description="Plot kcoll-bench CSV results (latency and speedup).")
    parser.add_argument("csv", nargs="+", help="CSV files written by kcoll-bench --csv")
    parser.add_argument("-o", "--output", default="kcoll-bench.png", help="PNG file to write (default %(default)s)")
    parser.add_argument("--dpi", type=int, default=120, help="resolution (default %(default)s)")
    args = parser.parse_args()

    try:
        latency, speedup = read_rows(args.csv)
    except OSError as e:
        sys.exit(f"plot_bench.py: {e}")
    if not latency:
        sys.exit("no rows to plot")

    keys = sorted(latency)
    fig, axes = plt.subplots(len(keys), 2, figsize=(13, 4.8 * len(keys)), squeeze=False)
    for row, key in enumerate(keys):
        plot_group(axes[row][0], axes[row][1], key, latency[key], speedup.get(key, {}))
    fig.suptitle("kcoll-bench: host MPI vs kcoll")
    fig.tight_layout()
    fig.savefig(args.output, dpi=args.dpi)
    print(f"wrote {args.output} ({len(keys)} group{'s' if len(keys) != 1 else ''})")


if __name__ == "__main__":
    main()
