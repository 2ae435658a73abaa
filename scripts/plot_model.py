#!/usr/bin/python3
"""Plot the cost model's predictions for many processes.

Runs `kcoll-info --explain <collective> <p> <bytes> --machine <m>` (no MPI
job: the model only) for paper 003's Table IV machines (knl, broadwell,
power8), p = 64, 128, 256, the 14 MPI collectives kcoll implements and the
sizes 1 KiB to 16 MiB by factors of 4 (MPI_Barrier: 0 bytes only), in the
bytes kcoll-info takes: the block for the blocked collectives (v-variants
priced as uniform blocks), the vector for Reduce and Allreduce, the whole
message for Bcast. From each listing it keeps kcoll's best candidate (the
first that is not "host MPI"), its parameters and predicted time, the
runner-up kcoll candidate, and the host MPI's predicted time, in a CSV
(columns machine,collective,p,bytes,best,best_us,host_us,second,second_us)
that later runs reuse unless --recompute is given.

It draws one PNG per machine (<outdir>/<machine>.png): one panel per
collective, x = message size (log), y = predicted time of kcoll's best
algorithm (log), one line per p. The marker at each point names the
winning algorithm (legend in the panel), the small text beside it its
parameters (k=7, j=1, chunk=128 KiB as c128). MPI_Barrier has one size, so
its panel has p on the x axis. The host MPI's time stays in the CSV only:
the Table IV presets keep this machine's host latency and rate, so it is
not a competitor on those machines.

--markdown prints, instead of drawing, one Markdown table per machine: the
winner per (collective, size) at each p.

The explain calls run at most --jobs (default 2) at a time; the slowest
point (MPI_Reduce_scatter at p = 256) takes a few seconds.

    scripts/plot_model.py                      # compute what is missing, draw
    scripts/plot_model.py --markdown           # the tables, from the CSV
    scripts/plot_model.py --recompute          # price every point again
"""

import argparse
import csv
import os
import re
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor, as_completed

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (after choosing the backend)
from matplotlib.lines import Line2D  # noqa: E402
from matplotlib.ticker import FuncFormatter, NullLocator  # noqa: E402
from plot_bench import size_label  # noqa: E402  (the benchmark plots' axis labels)

MACHINES = ("knl", "broadwell", "power8")
PROCS = (64, 128, 256)
SIZES = tuple(1024 * 4**i for i in range(8))  # 1 KiB .. 16 MiB
COLLECTIVES = (
    "MPI_Bcast",
    "MPI_Scatter",
    "MPI_Scatterv",
    "MPI_Gather",
    "MPI_Gatherv",
    "MPI_Allgather",
    "MPI_Allgatherv",
    "MPI_Alltoall",
    "MPI_Alltoallv",
    "MPI_Barrier",
    "MPI_Reduce",
    "MPI_Allreduce",
    "MPI_Reduce_scatter",
    "MPI_Reduce_scatter_block",
)
FIELDS = ("machine", "collective", "p", "bytes", "best", "best_us", "host_us", "second", "second_us")
HOST = "host MPI"
P_COLORS = {64: "tab:blue", 128: "tab:orange", 256: "tab:green"}
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*", "<", ">", "h", "p")
# kcoll-info's candidate lines: "best name   123.45    1.00x" or "     name ..."
CANDIDATE = re.compile(r"^(best |     )(\S.*?)\s+([0-9.]+(?:[eE][+-]?[0-9]+)?)\s+([0-9.]+)x\s*$")


def sizes_for(collective):
    return (0,) if collective == "MPI_Barrier" else SIZES


def explain(tool, machine, collective, p, size, timeout):
    """One kcoll-info --explain call; returns the CSV row (a dict)."""
    cmd = [tool, "--explain", collective, str(p), str(size), "--machine", machine]
    out = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, timeout=timeout)
    if out.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)}: exit {out.returncode}: {out.stderr.strip()}")
    candidates = []
    in_list = False
    for line in out.stdout.splitlines():
        if line.strip().startswith("candidate") and "predicted us" in line:
            in_list = True
            continue
        if not in_list:
            continue
        m = CANDIDATE.match(line)
        if not m:
            break  # the winner's terms, or the hand-off to the host MPI
        candidates.append((m.group(2).strip(), float(m.group(3))))
    kcoll = [c for c in candidates if c[0] != HOST]
    host = [c for c in candidates if c[0] == HOST]
    if not kcoll:
        raise RuntimeError(f"{' '.join(cmd)}: no kcoll candidate in the output")
    row = dict(machine=machine, collective=collective, p=p, bytes=size, best=kcoll[0][0], best_us=kcoll[0][1])
    row["host_us"] = host[0][1] if host else ""
    row["second"], row["second_us"] = kcoll[1] if len(kcoll) > 1 else ("", "")
    return row


def load_csv(path):
    rows = {}
    if not os.path.exists(path):
        return rows
    with open(path, newline="") as f:
        reader = csv.DictReader(f)
        missing = [c for c in FIELDS if c not in (reader.fieldnames or [])]
        if missing:
            sys.exit(f"{path}: not a plot_model.py CSV file (missing {', '.join(missing)})")
        for line, row in enumerate(reader, start=2):
            try:
                row["p"], row["bytes"] = int(row["p"]), int(row["bytes"])
                row["best_us"] = float(row["best_us"])
                row["host_us"] = float(row["host_us"]) if row["host_us"] else ""
                row["second_us"] = float(row["second_us"]) if row["second_us"] else ""
            except (TypeError, ValueError):
                print(f"{path}:{line}: skipping malformed row", file=sys.stderr)
                continue
            rows[(row["machine"], row["collective"], row["p"], row["bytes"])] = row
    return rows


def write_csv(path, rows):
    order = {c: i for i, c in enumerate(COLLECTIVES)}
    mach = {m: i for i, m in enumerate(MACHINES)}
    keys = sorted(rows, key=lambda k: (mach.get(k[0], 99), k[0], order.get(k[1], 99), k[1], k[2], k[3]))
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    tmp = path + ".tmp"
    with open(tmp, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=FIELDS)
        writer.writeheader()
        for k in keys:
            writer.writerow({c: rows[k][c] for c in FIELDS})
    os.replace(tmp, path)


def compute(args, rows, points):
    """Prices the points missing from rows, at most args.jobs at a time;
    saves the CSV as it goes."""
    todo = [pt for pt in points if args.recompute or pt not in rows]
    if not todo:
        return
    print(f"pricing {len(todo)} points, {args.jobs} at a time", file=sys.stderr)
    lock = threading.Lock()
    done = [0]
    started = time.time()

    def run(pt):
        t0 = time.time()
        row = explain(args.kcoll_info, *pt, timeout=args.timeout)
        with lock:
            rows[pt] = row
            done[0] += 1
            print(f"[{done[0]}/{len(todo)}] {pt[0]} {pt[1]} p={pt[2]} {pt[3]} B: {row['best']} "
                  f"{row['best_us']:.2f} us ({time.time() - t0:.1f} s)", file=sys.stderr)
            if done[0] % 20 == 0:
                write_csv(args.csv, rows)

    def stamp():
        st = os.stat(args.kcoll_info)
        return (st.st_mtime_ns, st.st_size)

    before = stamp()
    failures = []
    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        futures = {pool.submit(run, pt): pt for pt in todo}
        for fut in as_completed(futures):
            try:
                fut.result()
            except (RuntimeError, OSError, subprocess.TimeoutExpired) as e:
                failures.append(futures[fut])
                print(f"failed: {e}", file=sys.stderr)
    write_csv(args.csv, rows)
    if stamp() != before:
        print(f"warning: {args.kcoll_info} changed during the run: its points may disagree; "
              "run again with --recompute", file=sys.stderr)
    print(f"priced {len(todo) - len(failures)} points in {time.time() - started:.0f} s", file=sys.stderr)
    if failures:
        print(f"{len(failures)} points failed; run again to retry them", file=sys.stderr)


def split_name(name):
    """'throttled_read:k=7' -> ('throttled_read', 'k=7')."""
    algo, _, params = name.partition(":")
    return algo, params


def short_params(params):
    """The parameters as a short label: k=7, j=1, chunk=128 -> c128."""
    out = []
    for item in filter(None, params.split(",")):
        key, _, value = item.partition("=")
        out.append(f"c{value}" if key == "chunk" else item)
    return ",".join(out)


def plot_machine(ax_list, machine, rows, collectives, procs, legend_ax):
    for ax, coll in zip(ax_list, collectives):
        pts = {p: sorted((r["bytes"], r) for k, r in rows.items() if k[0] == machine and k[1] == coll and k[2] == p)
               for p in procs}
        algos = sorted({split_name(r["best"])[0] for lst in pts.values() for _, r in lst})
        marker = {a: MARKERS[i % len(MARKERS)] for i, a in enumerate(algos)}
        barrier = coll == "MPI_Barrier"
        xs_all = []
        for i, p in enumerate(procs):
            lst = pts[p]
            if not lst:
                continue
            xs = [p if barrier else b for b, _ in lst]
            ys = [r["best_us"] for _, r in lst]
            xs_all.extend(xs)
            if not barrier:
                ax.plot(xs, ys, color=P_COLORS.get(p, "gray"), linewidth=1.0, alpha=0.8, zorder=1)
            for x, y, (_, r) in zip(xs, ys, lst):
                algo, params = split_name(r["best"])
                ax.scatter([x], [y], marker=marker[algo], s=26, color=P_COLORS.get(p, "gray"),
                           edgecolors="black", linewidths=0.4, zorder=3)
                label = short_params(params)
                if label:
                    # p = 64 below the point, 128 right, 256 above: three lines
                    # close together keep readable labels
                    dy = (-9, 0, 7)[i % 3]
                    ax.annotate(label, (x, y), textcoords="offset points", xytext=(4, dy), fontsize=5.5,
                                color=P_COLORS.get(p, "gray"), va="center", ha="left")
        ax.set_title(coll, fontsize=9)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.grid(True, which="both", alpha=0.25, linewidth=0.5)
        ax.tick_params(labelsize=6.5)
        ax.set_ylabel("predicted us", fontsize=7)
        if barrier:
            ax.set_xticks(list(procs))
            ax.xaxis.set_minor_locator(NullLocator())
            ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _p: f"p={int(round(v))}"))
            ax.set_xlim(min(procs) / 1.5, max(procs) * 1.5)
            ax.set_xlabel("processes (0 bytes)", fontsize=7)
        else:
            sizes = sorted(set(xs_all))
            if sizes:
                ax.set_xticks(sizes)
                ax.xaxis.set_minor_locator(NullLocator())
                ax.set_xlim(sizes[0] / 1.5, sizes[-1] * 2.2)
            ax.xaxis.set_major_formatter(FuncFormatter(size_label))
            ax.set_xlabel("message size (bytes)", fontsize=7)
        handles = [Line2D([], [], linestyle="none", marker=marker[a], markerfacecolor="white",
                          markeredgecolor="black", markersize=5, label=a) for a in algos]
        if handles:
            ax.legend(handles=handles, fontsize=5.5, loc="upper left", framealpha=0.7, handletextpad=0.3,
                      borderpad=0.3, labelspacing=0.25)
    # the spare panel: which colour is which p, and how to read the labels
    legend_ax.axis("off")
    handles = [Line2D([], [], color=P_COLORS.get(p, "gray"), marker="o", markeredgecolor="black",
                      markeredgewidth=0.4, label=f"p = {p}") for p in procs]
    legend_ax.legend(handles=handles, loc="upper left", fontsize=9, title="processes", title_fontsize=9)
    legend_ax.text(0.0, 0.45,
                   "marker: kcoll's best algorithm\n(legend in each panel)\n"
                   "text: its parameters\n(k = throttle / tree radix, j = ring stride,\n"
                   " c128 = reduction chunk 128 KiB)\n"
                   "sizes: block (blocked collectives),\nvector (Reduce, Allreduce),\n"
                   "message (Bcast); v-variants\npriced as uniform blocks",
                   transform=legend_ax.transAxes, fontsize=8, va="top")


def draw(args, rows, collectives, procs):
    machines = [m for m in args.machines if any(k[0] == m for k in rows)]
    os.makedirs(args.outdir, exist_ok=True)
    for machine in machines:
        n = len(collectives) + 1  # one spare panel for the legend
        cols = 4
        nrows = (n + cols - 1) // cols
        fig, axes = plt.subplots(nrows, cols, figsize=(5.2 * cols, 3.9 * nrows), squeeze=False)
        flat = [ax for row in axes for ax in row]
        plot_machine(flat[: len(collectives)], machine, rows, collectives, procs, flat[len(collectives)])
        for ax in flat[len(collectives) + 1:]:
            ax.axis("off")
        fig.suptitle(f"kcoll cost model: predicted time of kcoll's best algorithm, paper 003 Table IV "
                     f"machine '{machine}' (kcoll-info --explain)", fontsize=12)
        fig.tight_layout(rect=(0, 0, 1, 0.98))
        path = os.path.join(args.outdir, f"{machine}.png")
        fig.savefig(path, dpi=args.dpi)
        plt.close(fig)
        print(f"wrote {path}")


def cell(names):
    """The winners at the process counts as one table cell: the algorithm
    once when it is the same at all, its parameters joined by '/'."""
    if not names or any(n is None for n in names):
        return " / ".join(n or "-" for n in names)
    split = [split_name(n) for n in names]
    algos = {a for a, _ in split}
    if len(algos) == 1:
        params = [short_params(p) for _, p in split]
        algo = split[0][0]
        if len(set(params)) == 1:
            return f"{algo} {params[0]}".strip()
        return f"{algo} {'/'.join(params)}"
    return " / ".join(f"{a} {short_params(p)}".strip() for a, p in split)


def markdown(args, rows, collectives, procs):
    for machine in args.machines:
        if not any(k[0] == machine for k in rows):
            continue
        sizes = sorted({k[3] for k in rows if k[0] == machine and k[3] > 0})
        print(f"#### {machine}: kcoll's best at p = {' / '.join(str(p) for p in procs)}\n")
        print("| collective | " + " | ".join(size_label(s) for s in sizes) + " |")
        print("|---|" + "---|" * len(sizes))
        for coll in collectives:
            if coll == "MPI_Barrier":
                names = [rows.get((machine, coll, p, 0), {}).get("best") for p in procs]
                print(f"| {coll} (0 B) | {cell(names)} |" + " |" * (len(sizes) - 1))
                continue
            cells = [cell([rows.get((machine, coll, p, s), {}).get("best") for p in procs]) for s in sizes]
            print(f"| {coll} | " + " | ".join(cells) + " |")
        print()


def main():
    parser = argparse.ArgumentParser(description="Plot the cost model's predictions (kcoll-info --explain) "
                                     "for paper 003's Table IV machines at p = 64-256.")
    parser.add_argument("--kcoll-info", default="build/openmpi/kcoll-info",
                        help="the kcoll-info binary (default %(default)s)")
    parser.add_argument("--csv", default="docs/img/model/predictions.csv",
                        help="cache of the predictions (default %(default)s)")
    parser.add_argument("--outdir", default="docs/img/model", help="where the PNGs go (default %(default)s)")
    parser.add_argument("--recompute", action="store_true", help="price every point again, ignoring the CSV")
    parser.add_argument("--markdown", action="store_true",
                        help="print the winner tables (Markdown) instead of drawing")
    parser.add_argument("--machines", default=",".join(MACHINES), help="comma-separated (default %(default)s)")
    parser.add_argument("--procs", default=",".join(map(str, PROCS)), help="comma-separated (default %(default)s)")
    parser.add_argument("--collectives", default=",".join(COLLECTIVES),
                        help="comma-separated (default: all 14)")
    parser.add_argument("--jobs", type=int, default=2, help="explain calls at a time (default %(default)s)")
    parser.add_argument("--timeout", type=float, default=300, help="seconds per call (default %(default)s)")
    parser.add_argument("--dpi", type=int, default=110, help="resolution (default %(default)s)")
    args = parser.parse_args()

    args.machines = [m for m in args.machines.split(",") if m]
    procs = [int(p) for p in args.procs.split(",") if p]
    collectives = [c if c.startswith("MPI_") else "MPI_" + c for c in args.collectives.split(",") if c]
    args.jobs = max(1, args.jobs)

    rows = load_csv(args.csv)
    points = [(m, c, p, s) for m in args.machines for c in collectives for p in procs for s in sizes_for(c)]
    missing = [pt for pt in points if pt not in rows]
    if args.recompute or missing:
        if not os.access(args.kcoll_info, os.X_OK):
            sys.exit(f"plot_model.py: {args.kcoll_info} is not an executable (--kcoll-info)")
        compute(args, rows, points)
    wanted = set(points)
    rows = {k: v for k, v in rows.items() if k in wanted}
    if not rows:
        sys.exit("no predictions to show")
    if args.markdown:
        markdown(args, rows, collectives, procs)
    else:
        draw(args, rows, collectives, procs)


if __name__ == "__main__":
    main()
