#!/usr/bin/env python3
"""compare_runs.py A.csv B.csv: how much the medians of two runs of one sweep differ.

Pairs rows by (case, variant); prints every pair's relative difference of
time_median_ms, then a summary over rows whose kernel takes more than --min-ms
(default 0.1 ms = 100 us) in both runs. Exit status: 0 when at least
--min-fraction (default 0.95) of those rows differ by less than --max-diff
(default 2 %), 1 when fewer do or when no row is that long (nothing to judge),
2 for bad usage or unreadable files. Standard library only.
"""
import argparse
import csv
import sys


def load(path):
    with open(path, newline="") as f:
        reader = csv.DictReader(f)
        missing = [c for c in ("case", "variant", "time_median_ms") if c not in (reader.fieldnames or [])]
        if missing:
            raise ValueError(f"{path}: not a results file (no column {', '.join(missing)})")
        return {(r["case"], r["variant"]): r for r in reader}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("a")
    ap.add_argument("b")
    ap.add_argument("--min-ms", type=float, default=0.1,
                    help="rows judged: median over this in both runs (default 0.1 ms)")
    ap.add_argument("--max-diff", type=float, default=2.0,
                    help="a judged row is repeatable under this difference, in %% (default 2)")
    ap.add_argument("--min-fraction", type=float, default=0.95,
                    help="fraction of judged rows that must be repeatable (default 0.95)")
    args = ap.parse_args()
    try:
        a, b = load(args.a), load(args.b)
    except (OSError, ValueError, csv.Error) as e:
        print(f"compare_runs: {e}", file=sys.stderr)
        return 2
    rows = []
    for key in a:
        if key not in b:
            continue
        try:
            ta, tb = float(a[key]["time_median_ms"]), float(b[key]["time_median_ms"])
        except ValueError:
            continue
        if not (ta > 0 and tb > 0):
            continue
        rows.append((abs(ta - tb) / min(ta, tb) * 100.0, ta, tb, key))
    print(f"{'case':>5} {'variant':<52} {'run1 ms':>10} {'run2 ms':>10} {'diff %':>7}")
    for d, ta, tb, (case, variant) in sorted(rows, key=lambda r: (int(r[3][0]), r[3][1])):
        print(f"{case:>5} {variant:<52} {ta:10.4f} {tb:10.4f} {d:7.2f}")
    long = [r for r in rows if min(r[1], r[2]) > args.min_ms]
    short = [r for r in rows if min(r[1], r[2]) <= args.min_ms]
    print()
    for name, group in ((f"kernels > {args.min_ms * 1e3:g} us", long),
                        (f"kernels <= {args.min_ms * 1e3:g} us", short)):
        if not group:
            print(f"{name}: none")
            continue
        diffs = sorted(r[0] for r in group)
        under = sum(1 for d in diffs if d < args.max_diff)
        print(f"{name}: {len(group)} rows, median diff {diffs[len(diffs) // 2]:.2f} %, "
              f"max {diffs[-1]:.2f} %, {under} of {len(group)} under {args.max_diff:g} %")
    if not long:
        print(f"FAIL: no row over {args.min_ms:g} ms in both runs: nothing to judge")
        return 1
    under = sum(1 for r in long if r[0] < args.max_diff)
    frac = under / len(long)
    verdict = "ok" if frac >= args.min_fraction else "FAIL"
    print(f"{verdict}: {frac * 100:.1f} % of the rows over {args.min_ms * 1e3:g} us within "
          f"{args.max_diff:g} % (need {args.min_fraction * 100:g} %)")
    return 0 if verdict == "ok" else 1


if __name__ == "__main__":
    sys.exit(main())
