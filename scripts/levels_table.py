#!/usr/bin/env python3
"""The cost model's prices of the algorithms along the topology levels inside
one node (hier, ring_levels) against the best flat kcoll algorithm, and
what `auto` takes (the table of docs/hierarchy.md, "Levels inside a node").

    scripts/levels_table.py [--kcoll-info build/openmpi/kcoll-info]
                            [--topology "pack:2 numa:2 core:8 pu:1"] [--procs 32]
                            [--links 0,20]

Each price is `kcoll-info --explain <coll> <p> <bytes> --machine FILE` with
the synthetic topology (KCOLL_TOPO_SYNTHETIC) and the ranks placed compactly
and scattered over the packages (KCOLL_TOPO_PLACE); FILE holds the built-in
defaults with memory.link_GBps set to each of --links (0: no limit, the
defaults' own). Prints markdown.
"""
import argparse
import os
import re
import subprocess
import tempfile

COLLS = ["MPI_Bcast", "MPI_Reduce", "MPI_Allreduce", "MPI_Reduce_scatter_block", "MPI_Gather",
         "MPI_Scatter", "MPI_Allgather", "MPI_Barrier"]
SIZES = [16 << 10, 256 << 10, 4 << 20]
LEVELS = ("hier", "ring_levels")


def label(b):
    for unit, shift in (("M", 20), ("K", 10)):
        if b >= 1 << shift and b % (1 << shift) == 0:
            return "%d%s" % (b >> shift, unit)
    return str(b)


def explain(info, machine, topo, place, coll, p, size):
    env = dict(os.environ, KCOLL_TOPO_SYNTHETIC=topo, KCOLL_TOPO_PLACE=place)
    cmd = [info, "--explain", coll, str(p), str(size), "--machine", machine]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True, env=env).stdout
    cands = []  # (name, us, best?)
    for m in re.finditer(r"^(best|    ) (\S+(?: MPI)?)\s+([\d.]+)\s+[\d.]+x$", out, re.M):
        cands.append((m.group(2), float(m.group(3)), m.group(1) == "best"))
    levels = re.search(r"^levels: (.*)$", out, re.M).group(1)
    return cands, levels


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kcoll-info", default="build/openmpi/kcoll-info")
    ap.add_argument("--topology", default="pack:2 numa:2 core:8 pu:1")
    ap.add_argument("--procs", type=int, default=32)
    ap.add_argument("--links", default="0,20")
    a = ap.parse_args()
    links = a.links.split(",")
    rows, levels = [], {}
    with tempfile.TemporaryDirectory() as tmp:
        machines = {}
        for link in links:
            machines[link] = os.path.join(tmp, "link%s.json" % link)
            with open(machines[link], "w") as f:
                f.write('{"kcoll_tuning": 1, "memory": {"link_GBps": %s}}\n' % link)
        for coll in COLLS:
            for place in ("compact", "scatter"):
                cells = []
                for link in links:
                    for size in ([0] if coll == "MPI_Barrier" else SIZES):
                        cands, levels[place] = explain(a.kcoll_info, machines[link], a.topology,
                                                       place, coll, a.procs, size)
                        names = [c for c in cands if c[0] != "host MPI"]
                        flat = next((c for c in names if c[0].split(":")[0] not in LEVELS), None)
                        lev = next((c for c in names if c[0].split(":")[0] in LEVELS), None)
                        best = next(c for c in cands if c[2])
                        took = best[0].split(":")[0] in LEVELS
                        cells.append("%s%.2fx%s" % ("**" if took else "", flat[1] / lev[1],
                                                    "**" if took else "")
                                     if flat and lev else "-")
                    if coll == "MPI_Barrier":
                        cells += ["(no size)"] + [""] * (len(SIZES) - 2)
                rows.append("| %s | %s | %s |" % (coll[4:], place, " | ".join(cells)))
    print("%d ranks on `%s` (both placements: %s); machine: built-in defaults with "
          "`memory.link_GBps` as given (0: no limit). Each cell: the best flat kcoll "
          "algorithm's predicted time over the best one along the levels (above 1: the levels "
          "win), at %s; bold where `auto` takes the one along the levels (it also weighs the "
          "host MPI).\n" % (a.procs, a.topology, levels["compact"],
                            ", ".join(label(x) for x in SIZES)))
    head = "| collective | placement |"
    for link in links:
        head += "".join(" link %s: %s |" % (link, label(x)) for x in SIZES)
    print(head)
    print("|---|---|" + "---:|" * (len(links) * len(SIZES)))
    print("\n".join(rows))


if __name__ == "__main__":
    main()
