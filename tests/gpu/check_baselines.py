#!/usr/bin/env python3
"""check_baselines.py RESULTS.csv...: the vendor baselines' rows of GPU runs.

Prints, per baseline (variant cublas_* or cudnn_*), how many rows have each
status, the algorithms the cuDNN rows chose (the `kernel` column names them),
and every reason a row was skipped. Exits 1 when a baseline row is neither
`ok` nor `skipped`, or when no cuDNN row is `ok` although cuDNN was loaded
(a skip reason other than "cuDNN not found" / "needs cuDNN 9"). Standard library
only.
"""
import collections
import csv
import sys

NOT_INSTALLED = ("cuDNN not found", "the harness needs cuDNN 9")


def main():
    status = collections.defaultdict(collections.Counter)
    kernels = collections.defaultdict(collections.Counter)
    reasons = collections.defaultdict(collections.Counter)
    bad = []
    for path in sys.argv[1:]:
        with open(path, newline="") as f:
            for r in csv.DictReader(f):
                v = r["variant"]
                if not (v.startswith("cublas_") or v.startswith("cudnn_")):
                    continue
                status[v][r["status"]] += 1
                if r["status"] == "ok" and v.startswith("cudnn_"):
                    kernels[v][r["kernel"]] += 1
                if r["status"] == "skipped":
                    reasons[v][r["reason"]] += 1
                elif r["status"] != "ok":
                    bad.append(f"{path}: case {r['case']} {v}: {r['status']}: {r['reason']}")
    for v in sorted(status):
        print(f"{v}: " + ", ".join(f"{n} {s}" for s, n in sorted(status[v].items())))
        for k, n in kernels[v].most_common():
            print(f"    {n:4d} x {k}")
        for why, n in reasons[v].most_common():
            print(f"    {n:4d} skipped: {why}")
    cudnn = [v for v in status if v.startswith("cudnn_")]
    installed = not any(w.startswith(NOT_INSTALLED) for v in cudnn for w in reasons[v])
    if cudnn and installed and not any(status[v]["ok"] for v in cudnn):
        bad.append("cuDNN is installed but no cuDNN row is ok")
    if not cudnn:
        bad.append("no cuDNN rows in these files")
    for b in bad:
        print("FAILED:", b)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
