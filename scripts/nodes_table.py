#!/usr/bin/env python3
"""The cost model's prices of communicators that span nodes, every layout:
the host MPI alone, kcoll's leaders' layout (on-node kcoll phases, the
host MPI between one leader per node) and lanes (every local rank carries a
share between nodes; run for Allreduce, Reduce, Bcast, Allgather(v),
Reduce_scatter(_block) and Alltoall(v), priced only for the others), for
4 x 16, 8 x 8, 2 x 32, 16 x 128 and 3 nodes of 16, 16 and 12 ranks, the
cheapest layout, and what KCOLL_HIER=auto runs (the tables of
docs/hierarchy.md, "What to expect").

    scripts/nodes_table.py [--kcoll-info build/openmpi/kcoll-info] [--machine FILE]

Each price is `kcoll-info --explain <coll> <p> <bytes> --nodes <N>
[--ppn a,b,c]` (model/nodes.c): the on-node phases as the model prices a
one-node call (the machine: built-in defaults, or --machine), the network a
described 100 Gb/s link (net.alpha_us, net.GBps of the tuning). Prints
markdown: the prices, then the host's price over the lanes' where lanes
are a candidate.
"""
import argparse
import re
import subprocess

SHAPES = [[16] * 4, [8] * 8, [32] * 2, [128] * 16, [16, 16, 12]]
COLLS = ["MPI_Bcast", "MPI_Reduce", "MPI_Allreduce", "MPI_Gather", "MPI_Gatherv",
         "MPI_Scatter", "MPI_Scatterv", "MPI_Allgather", "MPI_Reduce_scatter_block",
         "MPI_Barrier", "MPI_Alltoall", "MPI_Alltoallv"]
SIZES = [1 << 10, 64 << 10, 1 << 20, 16 << 20]
# Alltoall's lanes pay where message latencies do: its small blocks too
SMALL = {"MPI_Alltoall": [64], "MPI_Alltoallv": [64]}


def label(b):
    for unit, shift in (("M", 20), ("K", 10)):
        if b >= 1 << shift and b % (1 << shift) == 0:
            return "%d%s" % (b >> shift, unit)
    return str(b)


def shape_name(ppn):
    if len(set(ppn)) == 1:
        return "%d x %d" % (len(ppn), ppn[0])
    return "+".join(str(q) for q in ppn)


def us(t):
    if t is None:
        return "-"
    return "%.2f" % t if t < 10 else "%.1f" % t if t < 1000 else "%.0f" % t


def price(info, machine, coll, ppn, size):
    """{host, leaders, lanes: us or None}, the pick, the runtime's pick,
    the machine and the network as kcoll-info names them."""
    cmd = [info, "--explain", coll, str(sum(ppn)), str(size), "--nodes", str(len(ppn))]
    if len(set(ppn)) > 1:
        cmd += ["--ppn", ",".join(str(q) for q in ppn)]
    if machine:
        cmd += ["--machine", machine]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    t = {}
    for name, pat in (("host", r"^host MPI alone \(flat\)"), ("leaders", r"^leaders: "),
                      ("lanes", r"^lanes: ")):
        line = re.search(pat + r".*$", out, re.M).group(0)
        m = re.search(r"\s([\d.]+) us", line)
        t[name] = float(m.group(1)) if m else None
    pick = re.search(r"^pick: (\w+)", out, re.M).group(1)
    m = re.search(r"^KCOLL_HIER=auto: (leaders|lanes)", out, re.M)
    run = m.group(1) if m else "host"
    src = re.search(r"^machine: (.*)$", out, re.M).group(1)
    net = re.search(r"^network between nodes: (.*)$", out, re.M).group(1)
    mem = re.search(r"^node memory: (.*)$", out, re.M).group(1)
    return t, pick, run, src, net, mem


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kcoll-info", default="build/openmpi/kcoll-info")
    ap.add_argument("--machine", default=None)
    a = ap.parse_args()
    rows, ratios, src, net, mem = [], [], None, None, None
    for coll in COLLS:
        for size in ([0] if coll == "MPI_Barrier" else SMALL.get(coll, []) + SIZES):
            cells, rcells = [], []
            for ppn in SHAPES:
                t, pick, run, src, net, mem = price(a.kcoll_info, a.machine, coll, ppn, size)
                cell = "%s / %s / %s **%s**" % (us(t["host"]), us(t["leaders"]), us(t["lanes"]),
                                                pick)
                if run != pick:
                    cell += " (runs %s)" % run
                cells.append(" %s |" % cell)
                rcells.append(" %.2fx |" % (t["host"] / t["lanes"]) if t["lanes"] else " - |")
            rows.append("| %s | %s |%s" % (coll[4:], label(size), "".join(cells)))
            if any(c != " - |" for c in rcells):
                ratios.append("| %s | %s |%s" % (coll[4:], label(size), "".join(rcells)))
    heads = "".join(" %s |" % shape_name(ppn) for ppn in SHAPES)
    print("Machine: %s; network: %s; node memory: %s. Each cell: host / leaders / lanes in "
          "us, then the cheapest layout; \"(runs leaders)\": what KCOLL_HIER=auto runs where "
          "that differs (lanes run for Allreduce, Reduce, Bcast, Allgather(v), "
          "Reduce_scatter(_block) and Alltoall(v); elsewhere it chooses between host and "
          "leaders). "
          "Bytes as kcoll sizes a call (per block for the blocked collectives, the vector for "
          "reductions, the message for Bcast); \"-\": not a candidate.\n" % (src, net, mem))
    print("| collective | bytes |" + heads)
    print("|---|---:|" + "---:|" * len(SHAPES))
    print("\n".join(rows))
    print("\nThe host MPI alone over lanes (above 1: lanes priced faster):\n")
    print("| collective | bytes |" + heads)
    print("|---|---:|" + "---:|" * len(SHAPES))
    print("\n".join(ratios))


if __name__ == "__main__":
    main()
