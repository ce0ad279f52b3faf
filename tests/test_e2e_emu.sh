#!/usr/bin/env bash
# test_e2e_emu.sh: the README's main command end to end on the CPU emulator:
# `harness run configs/conv2d_sweep.json` writes a CSV whose every row that ran is
# ok (the others skipped as over the emulator's budget, with that reason), with
# the statistics columns filled; then one case with --save-tensors, read back by
# numpy, whose reference and outputs agree.
. "$(dirname "$0")/lib.sh"

csv="$tmp/conv2d_sweep.csv"
out=$("$h" run configs/conv2d_sweep.json --backend emu --out "$csv" 2>&1)
rc=$?
printf '%s\n' "$out" | tail -n 12
[ "$rc" = 0 ] || fail "the sweep exited $rc"
python_check=$(cat <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1], newline="")))
bad = [r for r in rows if r["status"] not in ("ok", "skipped")]
skipped = [r for r in rows if r["status"] == "skipped"]
ok = [r for r in rows if r["status"] == "ok"]
assert len(rows) == 250, f"{len(rows)} rows, expected 50 cases x 5 variants"
assert not bad, f"rows not ok: {[(r['case'], r['variant'], r['status'], r['reason']) for r in bad]}"
assert all("budget" in r["reason"] for r in skipped), "a skip that is not the emulator budget"
assert len(ok) >= 50, f"only {len(ok)} rows ran"  # 16 cases x 5 under the default budget
for r in ok:
    assert r["timing"] == "emu-wall" and r["backend"] == "emu"
    assert float(r["match_fraction"]) == 1.0 and r["checked"] == "full"
    n = int(r["samples"]); assert n >= 1
    med, lo, hi = float(r["time_median_ms"]), float(r["time_min_ms"]), float(r["time_max_ms"])
    assert 0 < lo <= med <= hi, (lo, med, hi)
    assert float(r["time_q1_ms"]) <= med <= float(r["time_q3_ms"])
    assert float(r["gflops"]) > 0 and float(r["flop"]) > 0
print(f"{len(ok)} ok, {len(skipped)} skipped")
PY
)
# A Python with numpy: Debian's (python3-numpy, installed by scripts/setup.sh), or
# whichever python3 is first on PATH.
py=""
for p in /usr/bin/python3 python3; do
  if "$p" -c 'import numpy' 2>/dev/null; then py=$p; break; fi
done
py_plain=${py:-python3}
"$py_plain" -c "$python_check" "$csv" || fail "CSV check failed"
case "$out" in *"fastest correct variant per case"*) ;; *) fail "no verdict in the summary" ;; esac
# The verdict as data: one row per case that ran, naming a variant that ran ok there.
best_check=$(cat <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1], newline="")))
best = list(csv.DictReader(open(sys.argv[2], newline="")))
ran = {r["case"] for r in rows if r["status"] == "ok"}
assert {b["case"] for b in best} == ran, (len(best), len(ran))
for b in best:
    mine = [r for r in rows if r["case"] == b["case"] and r["status"] == "ok"]
    fastest = min(mine, key=lambda r: float(r["time_median_ms"]))
    assert b["best_variant"] == fastest["variant"], (b["case"], b["best_variant"], fastest["variant"])
    assert float(b["margin"]) >= 1.0
print(f"{len(best)} best rows")
PY
)
"$py_plain" -c "$best_check" "$csv" "$tmp/conv2d_sweep.best.csv" || fail "best.csv check failed"

# One case, every tensor saved.
"$h" run configs/conv2d_sweep.json --backend emu --case 1 --out "$tmp/one.csv" --save-tensors "$tmp/t" >/dev/null 2>&1 ||
  fail "--case 1 --save-tensors failed"
npy_check=$(cat <<'PY'
import numpy as np, glob, sys
d = sys.argv[1] + "/case-1"
ref = np.load(d + "/out.reference.npy")
x = np.load(d + "/in.npy"); f = np.load(d + "/filter.npy")
assert x.dtype == np.float32 and f.dtype == np.float32 and ref.dtype == np.float64
outs = sorted(glob.glob(d + "/out.conv2d*.npy"))
assert len(outs) == 5, outs
for o in outs:
    y = np.load(o)
    assert y.shape == ref.shape and np.allclose(y, ref, atol=1e-3, rtol=1e-4), o
# The reference is a real convolution: recompute one pixel (case 1: 64x64x1 -> 1, f:5x5).
img = x.reshape(1, 64, 64); w = f.reshape(1, 1, 5, 5); r = ref.reshape(1, 64, 64)
pad = np.pad(img[0].astype(np.float64), 2)
assert abs((pad[10:15, 20:25] * w[0, 0]).sum() - r[0, 10, 20]) < 1e-9
# The manifest: the operator, every parameter resolved, each buffer's dtype and shape.
import json
m = json.load(open(d + "/case.json"))
assert m["op"] == "conv2d" and m["case"] == 1, m
p = m["params"]
assert (p["n"], p["in_ch"], p["out_ch"], p["filter_size"], p["h"], p["w"], p["padding"], p["pad"], p["layout"]) == \
    (1, 1, 1, 5, 64, 64, -1, 0, "NCHW"), p
for name, arr in (("in", x), ("filter", f), ("out", ref)):
    b = m["buffers"][name]
    assert tuple(b["shape"]) == arr.shape and b["role"] == ("out" if name == "out" else "in"), (name, b)
assert m["buffers"]["in"]["dtype"] == "<f4"
print("tensors ok:", len(outs), "outputs")
PY
)
if [ -n "$py" ]; then
  "$py" -c "$npy_check" "$tmp/t" || fail "saved tensors check failed"
else
  fail "numpy not found: the saved tensors cannot be read back (install python3-numpy)"
fi

finish
