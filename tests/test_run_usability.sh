#!/usr/bin/env bash
# test_run_usability.sh: three small defects, each as a user met it.
#   - A single-value option given twice (--out a --out b, --seed 1 --seed=2,
#     --backend emu --backend cuda) silently kept the last: now exit 2, "--out
#     given twice"; the repeatable ones (--variant, --tuned) stay repeatable.
#   - A row whose grid came to 0 blocks (or a block under 1) left the grid and
#     block columns empty: they now show what the geometry evaluated to ("0x1x1"),
#     with the launch_error and its reason.
#   - A where comparing a float parameter with a number saw the float32-rounded
#     value, so "alpha == 0.1" never held for alpha: 0.1 (and "alpha > 0.3" held
#     for alpha: 0.3): such comparisons are now made in float32, the parameter's
#     precision, while the kernels still get the float value.
. "$(dirname "$0")/lib.sh"

cat >"$tmp/g.json" <<JSON
{"name": "g", "op": "relu", "axes": {"n": [7, 1000]},
 "check": {"atol": 0, "rtol": 0, "min_match": 1.0},
 "variants": [{"name": "div", "file": "$root/kernels/activation/relu.cu", "kernel": "relu_grid_stride",
   "block": [256, 1, 1], "grid": ["n / 256", 1, 1], "args": ["x", "y", "n"]},
   {"name": "blk", "file": "$root/kernels/activation/relu.cu", "kernel": "relu_grid_stride",
   "block": ["n / 256 * 32", 1, 1], "grid": [4, 1, 1], "args": ["x", "y", "n"]}]}
JSON

echo "== an option given twice"
expect 2 "--out given twice ('$tmp/a.csv' and '$tmp/b.csv')" "$h" run "$tmp/g.json" --backend emu \
  --out "$tmp/a.csv" --out "$tmp/b.csv"
expect 2 "--seed given twice ('1' and '2')" "$h" list "$tmp/g.json" --seed 1 --seed=2
expect 2 "--backend given twice ('emu' and 'cuda')" "$h" run "$tmp/g.json" --backend emu --backend cuda --out "$tmp/a.csv"
expect 2 "--case given twice" "$h" run "$tmp/g.json" --case 0 --case 1 --backend emu --out "$tmp/a.csv"
[ ! -e "$tmp/a.csv" ] && [ ! -e "$tmp/b.csv" ] || fail "a refused command wrote a results file"
expect 1 "x 2 variants = 4 rows" "$h" run "$tmp/g.json" --backend emu --quick --variant div --variant blk \
  --out "$tmp/g.csv"

echo "== a grid of 0 blocks"
python3 - "$tmp/g.csv" <<'PY' || fail "grid/block columns of rows that cannot launch"
import csv, sys
got = [(r["variant"], r["n"], r["status"], r["grid"], r["block"], r["reason"]) for r in csv.DictReader(open(sys.argv[1], newline=""))]
want = [("div", "7", "launch_error", "0x1x1", "256x1x1", "grid[0] 'n / 256' = 0 (must be at least 1)"),
        ("blk", "7", "launch_error", "4x1x1", "0x1x1", "block[0] 'n / 256 * 32' = 0 (must be at least 1)"),
        ("div", "1000", "ok", "3x1x1", "256x1x1", ""),
        ("blk", "1000", "ok", "4x1x1", "96x1x1", "")]
if sorted(got) != sorted(want):
    print("got:", *sorted(got), "want:", *sorted(want), sep="\n  ")
    sys.exit(1)
PY

echo "== where with a float parameter"
cat >"$tmp/f.json" <<JSON
{"name": "f", "op": "gemm", "axes": {"m": [4], "n": [5], "k": [3], "alpha": [1, 0.1, 0.3, 0.7]},
 "where": "alpha == 0.1 || alpha > 0.3 && alpha != 0.7 || -alpha == -1",
 "check": {"atol": 1e-5, "rtol": 1e-5, "min_match": 1.0},
 "defaults": {"file": "$root/kernels/gemm/gemm_naive.cu", "kernel": "gemm_naive", "block": [16, 16],
   "grid": ["ceil_div(n, 16)", "ceil_div(m, 16)"],
   "args": ["a", "b", "c", "m", "n", "k", "alpha", "beta", "int: trans_a == \"T\"", "int: trans_b == \"T\""]},
 "variants": [{"name": "all"}, {"name": "not_tenth", "where": "alpha != 0.1 && alpha <= 0.1 * 10"}]}
JSON
expect 0 "2 cases x 2 variants = 4 rows" "$h" list "$tmp/f.json"
expect 0 "results:" "$h" run "$tmp/f.json" --backend emu --quick --out "$tmp/f.csv"
python3 - "$tmp/f.csv" <<'PY' || fail "where with a float parameter"
import csv, sys
got = sorted((r["variant"], r["alpha"], r["status"], r["reason"]) for r in csv.DictReader(open(sys.argv[1], newline="")))
want = sorted([("all", "1", "ok", ""), ("all", "0.1", "ok", ""), ("not_tenth", "1", "ok", ""),
               ("not_tenth", "0.1", "skipped", "where 'alpha != 0.1 && alpha <= 0.1 * 10' is false")])
if got != want:
    print("got:", *got, "want:", *want, sep="\n  ")
    sys.exit(1)
PY

finish
