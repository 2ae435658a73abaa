#!/usr/bin/python3
"""The cost model against kcoll-bench's measurements, as Markdown.

Reads CSV files written by `kcoll-bench -a auto,all --csv FILE` (with the
predicted_us and model_choice columns; scripts/validate_model.sh makes
them) and prints, per MPI:

1. Predictions: for every collective and size from --from (default
   64 KiB) up, the error of the model's prediction of every algorithm,
   (predicted - measured) / measured, and how many points lie within 25%
   and within 15%.
2. Picks: for every collective and size, the measured fastest of the host
   MPI and kcoll's algorithms, the model's pick (what 'auto' ran) and that
   variant's measured time, whether it is within 5% of the fastest, and
   what the automatic path adds to it (auto's time / the pick's).

    scripts/model_validation.py bench-results/validation/*.csv [--from 64K]
"""

import argparse
import csv
import statistics
from collections import defaultdict


def size_label(n):
    for unit, shift in (("MiB", 20), ("KiB", 10)):
        if n >= 1 << shift and n % (1 << shift) == 0:
            return f"{n >> shift}{unit[0]}"
    return f"{n}"


def parse_size(text):
    mult = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    if text[-1].upper() in mult:
        return int(text[:-1]) * mult[text[-1].upper()]
    return int(text)


def pct(x):
    return f"{100 * x:+.0f}%"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("csv", nargs="+")
    ap.add_argument("--from", dest="start", default="64K")
    args = ap.parse_args()
    start = parse_size(args.start)

    # (mpi, coll, np, bytes) -> variant -> (median_us list, predicted, choice)
    rows = defaultdict(lambda: defaultdict(lambda: [[], None, None]))
    for path in args.csv:
        with open(path, newline="") as f:
            for r in csv.DictReader(f):
                if not r.get("predicted_us"):
                    continue
                key = (r["mpi"], r["collective"], int(r["np"]), int(r["bytes"]))
                cell = rows[key][r["variant"]]
                cell[0].append(float(r["median_us"]))
                cell[1] = float(r["predicted_us"])
                cell[2] = r["model_choice"]

    for mpi in sorted({k[0] for k in rows}):
        keys = sorted(k for k in rows if k[0] == mpi)
        colls = []
        for k in keys:
            if k[1] not in colls:
                colls.append(k[1])
        print(f"## {mpi}\n")

        # 1. predictions
        within25 = within15 = total = 0
        worst = []
        per = defaultdict(lambda: [0, 0, 0, 0])  # coll -> predictions, within 25%, picks, good
        print("### Predictions (error of the model, per algorithm)\n")
        for coll in colls:
            # a barrier has no size: its one row is a point of the picks
            ck = [k for k in keys if k[1] == coll and k[3] >= start and coll != "barrier"]
            if not ck:
                continue
            variants = [v for v in rows[ck[0]] if v != "kcoll:auto"]
            names = [v.split(":", 1)[1] if ":" in v else v for v in variants]
            print(f"**{coll}** (np {ck[0][2]})\n")
            print("| bytes | " + " | ".join(names) + " |")
            print("|---|" + "---:|" * len(names))
            for k in ck:
                cells = []
                for v in variants:
                    c = rows[k].get(v)
                    if not c or c[1] is None or not c[0]:
                        cells.append("")
                        continue
                    meas = statistics.median(c[0])
                    err = c[1] / meas - 1
                    if v != "host":
                        total += 1
                        within25 += abs(err) <= 0.25
                        within15 += abs(err) <= 0.15
                        per[coll][0] += 1
                        per[coll][1] += abs(err) <= 0.25
                        worst.append((abs(err), coll, k[3], v, meas, c[1]))
                    cells.append(pct(err))
                print(f"| {size_label(k[3])} | " + " | ".join(cells) + " |")
            print()
        if total:
            print(f"kcoll's algorithms, {size_label(start)} and up: {within25} of {total} "
                  f"predictions ({100 * within25 / total:.0f}%) within 25% of the measurement, "
                  f"{within15} ({100 * within15 / total:.0f}%) within 15%.\n")
            worst.sort(reverse=True)
            print("Largest errors: " + "; ".join(
                f"{c} {size_label(b)} {v.split(':', 1)[1]}: {m:.1f} us measured, "
                f"{p:.1f} predicted" for _, c, b, v, m, p in worst[:5]) + ".\n")

        # 2. picks
        print("### Picks (the model's choice against the measured fastest)\n")
        print("The model picks a variant; 'pick / fastest' compares that variant's own "
              "measured time (forced by name) with the fastest variant's, so it judges the "
              "choice alone. 'auto / pick' is what the automatic path adds to that variant: "
              "interception, the cached decision, and noise.\n")
        print("| collective | bytes | fastest | us | model's pick | us | pick / fastest | auto / pick |")
        print("|---|---:|---|---:|---|---:|---:|---:|")
        good = npts = big_good = big_n = 0
        over = []
        for k in keys:
            r = rows[k]
            auto = r.get("kcoll:auto")
            if not auto or not auto[0]:
                continue
            cands = {v: statistics.median(c[0]) for v, c in r.items()
                     if v != "kcoll:auto" and c[0]}
            best = min(cands, key=cands.get)
            pick = auto[2]
            pick_v = "host" if pick == "host" else "kcoll:" + pick
            if pick_v not in cands:  # a parametrized pick: its algorithm's column
                pick_v = "kcoll:" + pick.split(":", 1)[0]
            if pick_v not in cands:
                continue
            ratio = cands[pick_v] / cands[best]
            auto_us = statistics.median(auto[0])
            over.append(auto_us / cands[pick_v])
            npts += 1
            good += ratio <= 1.05
            per[k[1]][2] += 1
            per[k[1]][3] += ratio <= 1.05
            if k[3] >= start:
                big_n += 1
                big_good += ratio <= 1.05
            mark = "" if ratio <= 1.05 else " **"
            print(f"| {k[1]} | {size_label(k[3])} | {best.split(':', 1)[-1]} | "
                  f"{cands[best]:.1f} | {pick} | {cands[pick_v]:.1f} | {ratio:.2f}{mark} | "
                  f"{auto_us / cands[pick_v]:.2f} |")
        if npts:
            print(f"\nThe pick is within 5% of the fastest at {good} of {npts} points "
                  f"({100 * good / npts:.0f}%); from {size_label(start)} up at {big_good} of "
                  f"{big_n} ({100 * big_good / max(big_n, 1):.0f}%); ** marks the others. "
                  f"auto / pick: median {statistics.median(over):.2f}.\n")
            print("### Per collective\n")
            print(f"| collective | predictions within 25% ({size_label(start)} up) | "
                  "picks within 5% of the fastest |")
            print("|---|---:|---:|")
            for coll in colls:
                n, w, q, g = per[coll]
                pred = f"{w} of {n}" if n else "-"
                print(f"| {coll} | {pred} | {g} of {q} |")
            print()


if __name__ == "__main__":
    main()
