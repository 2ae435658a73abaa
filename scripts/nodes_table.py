#!/usr/bin/env python3
"""The cost model's prices of communicators that span nodes: kcoll's
composition (on-node kcoll phases, the host MPI between the nodes' leaders)
against the host MPI alone, for 4 x 16, 8 x 8 and 2 x 32 ranks, and what
KCOLL_HIER=auto does with each call (the table of docs/hierarchy.md, "What
to expect").

    scripts/nodes_table.py [--kcoll-info build/openmpi/kcoll-info] [--machine FILE]

Each price is `kcoll-info --explain <coll> <p> <bytes> --nodes <N>`
(model/nodes.c): the on-node phases as the model prices a one-node call
(the machine: built-in defaults, or --machine), the network a described
100 Gb/s link (net.alpha_us, net.GBps of the tuning). Prints markdown.
"""
import argparse
import re
import subprocess

LAYOUTS = [(4, 16), (8, 8), (2, 32)]
COLLS = ["MPI_Bcast", "MPI_Reduce", "MPI_Allreduce", "MPI_Gather", "MPI_Scatter",
         "MPI_Allgather", "MPI_Reduce_scatter_block", "MPI_Barrier", "MPI_Alltoall"]
SIZES = [1 << 10, 64 << 10, 1 << 20, 16 << 20]


def label(b):
    for unit, shift in (("M", 20), ("K", 10)):
        if b >= 1 << shift and b % (1 << shift) == 0:
            return "%d%s" % (b >> shift, unit)
    return str(b)


def price(info, machine, coll, nodes, ppn, size):
    cmd = [info, "--explain", coll, str(nodes * ppn), str(size), "--nodes", str(nodes)]
    if machine:
        cmd += ["--machine", machine]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    flat = float(re.search(r"host MPI alone \(flat\)\s+([\d.]+) us", out).group(1))
    m = re.search(r"^kcoll\S*.*?\s([\d.]+) us", out, re.M)
    hier = float(m.group(1))
    composed = "not composed" not in out
    auto = composed and "KCOLL_HIER=auto: composed" in out
    src = re.search(r"^machine: (.*)$", out, re.M).group(1)
    net = re.search(r"^network between nodes: (.*)$", out, re.M).group(1)
    return flat, hier, composed, auto, src, net


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kcoll-info", default="build/openmpi/kcoll-info")
    ap.add_argument("--machine", default=None)
    a = ap.parse_args()
    head = "| collective | bytes |" + "".join(
        " %d x %d: host | kcoll | host / kcoll |" % l for l in LAYOUTS)
    rows, src, net = [], None, None
    for coll in COLLS:
        for size in ([0] if coll == "MPI_Barrier" else SIZES):
            cells = []
            for nodes, ppn in LAYOUTS:
                flat, hier, composed, auto, src, net = price(a.kcoll_info, a.machine, coll,
                                                             nodes, ppn, size)
                ratio = "%.2fx" % (flat / hier) if composed else "(host)"
                if composed and not auto:
                    ratio += " (auto: host)"
                cells.append(" %.1f | %.1f | %s |" % (flat, hier, ratio))
            rows.append("| %s | %s |%s" % (coll[4:], label(size), "".join(cells)))
    print("Machine: %s; network: %s. Times in us; bytes as kcoll sizes a call "
          "(per block for the blocked collectives, the vector for reductions); "
          "\"(auto: host)\": KCOLL_HIER=auto hands the call to the host MPI whole.\n"
          % (src, net))
    print(head)
    print("|---|---:|" + "---:|---:|---:|" * len(LAYOUTS))
    print("\n".join(rows))


if __name__ == "__main__":
    main()
