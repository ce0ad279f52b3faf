#!/usr/bin/env python3
"""check_baselines.py [--require VARIANT]... RESULTS.csv...: the vendor baselines' rows of GPU runs.

Prints, per baseline (variant cublas_* or cudnn_*), how many rows have each
status, the algorithms the cuDNN rows chose (the `kernel` column names them),
and every reason a row was skipped. Exits 1 when a baseline row is neither
`ok` nor `skipped`, or when no cuDNN row is `ok` although cuDNN was loaded
(a skip reason other than "cuDNN not found" / "needs cuDNN 9").

Each --require VARIANT (e.g. cudnn_conv_bwd_data) must have rows in the files
and, where cuDNN is loaded, every one `ok` but those skipped because cuDNN
cannot pose the case (NOT_EXPRESSIBLE: asymmetric padding, a CHWN convolution, a
non-zero pad value), and at least one `ok`: a required baseline skipped for any
other reason (no algorithm found, a cuDNN error) fails. Standard library only.
"""
import collections
import csv
import sys

NOT_INSTALLED = ("cuDNN not found", "the harness needs cuDNN 9")
NOT_EXPRESSIBLE = (
    "cuDNN pads symmetrically",
    "cuDNN pads with zeros",
    "cuDNN convolution takes the NCHW and NHWC layouts",
)


def parse_args(argv):
    required, paths = [], []
    i = 0
    while i < len(argv):
        if argv[i] == "--require" and i + 1 < len(argv):
            required.append(argv[i + 1])
            i += 2
        elif argv[i].startswith("--require="):
            required.append(argv[i].split("=", 1)[1])
            i += 1
        else:
            paths.append(argv[i])
            i += 1
    return required, paths


def main():
    required, paths = parse_args(sys.argv[1:])
    status = collections.defaultdict(collections.Counter)
    kernels = collections.defaultdict(collections.Counter)
    reasons = collections.defaultdict(collections.Counter)
    bad = []
    for path in paths:
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
    for v in required:
        if not status[v]:
            bad.append(f"{v}: no rows in these files")
            continue
        if not installed:
            continue
        for why, n in reasons[v].items():
            if not why.startswith(NOT_EXPRESSIBLE):
                bad.append(f"{v}: {n} row(s) skipped: {why}")
        if not status[v]["ok"]:
            bad.append(f"{v}: no row is ok")
    for b in bad:
        print("FAILED:", b)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
