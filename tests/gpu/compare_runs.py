#!/usr/bin/env python3
"""compare_runs.py A.csv B.csv: how much the medians of two runs of one sweep differ.

Pairs rows by (case, variant); prints every pair's relative difference of
time_median_ms, then a summary over rows whose kernel takes more than 100 us
(the repeatability target is under 2 % for those). Standard library only.
"""
import csv
import sys


def load(path):
    with open(path, newline="") as f:
        return {(r["case"], r["variant"]): r for r in csv.DictReader(f)}


def main():
    a, b = load(sys.argv[1]), load(sys.argv[2])
    rows = []
    for key in a:
        if key not in b:
            continue
        try:
            ta, tb = float(a[key]["time_median_ms"]), float(b[key]["time_median_ms"])
        except ValueError:
            continue
        if ta <= 0 or tb <= 0:
            continue
        rows.append((abs(ta - tb) / min(ta, tb) * 100.0, ta, tb, key))
    print(f"{'case':>5} {'variant':<52} {'run1 ms':>10} {'run2 ms':>10} {'diff %':>7}")
    for d, ta, tb, (case, variant) in sorted(rows, key=lambda r: (int(r[3][0]), r[3][1])):
        print(f"{case:>5} {variant:<52} {ta:10.4f} {tb:10.4f} {d:7.2f}")
    long = [r for r in rows if min(r[1], r[2]) > 0.1]
    short = [r for r in rows if min(r[1], r[2]) <= 0.1]
    print()
    for name, group in (("kernels > 100 us", long), ("kernels <= 100 us", short)):
        if not group:
            print(f"{name}: none")
            continue
        diffs = sorted(r[0] for r in group)
        under = sum(1 for d in diffs if d < 2.0)
        print(f"{name}: {len(group)} rows, median diff {diffs[len(diffs) // 2]:.2f} %, "
              f"max {diffs[-1]:.2f} %, {under} of {len(group)} under 2 %")


if __name__ == "__main__":
    main()
