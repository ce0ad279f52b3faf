#!/usr/bin/env bash
# test_layernorm.sh: the layernorm operator (harness/ops/layernorm,
# docs/ops/layernorm.md) on the emulator:
#   - configs/layernorm_sweep.json's three kernels on a small sample of its shapes;
#   - a kernel given y alone is checked on y alone (mean and rstd not checked);
#   - planted bugs fail where they should and only there: the unbiased variance
#     (every case with more than one column), eps left out (every case: even 1e-5
#     shows beside the variance 0.25 of rows of spread 0.5; with one column the
#     variance is 0 and rstd infinite);
#   - harness check finds nothing in the warp and Welford kernels;
#   - bad parameters are exit 2.
. "$(dirname "$0")/lib.sh"

echo "== the sweep's kernels on a sample of its shapes"
sample_sweep layernorm_sweep 8 9 3

echo "== y alone, and planted bugs"
cat >"$tmp/bugs.json" <<JSON
{"name": "layernorm_bugs", "op": "layernorm", "axes": {"rows": [6], "cols": [1, 40], "eps": [1e-5, 0.1]},
 "check": {"y": {"atol": "1e-5 + 1e-7 * cols + 1e-3 / (cols * cols)", "rtol": "1e-5 + 1e-7 * cols"},
           "mean": {"atol": "1e-6 + 3e-7 * cols", "rtol": 1e-5}, "rstd": {"atol": 0, "rtol": "1e-5 + 1e-7 * cols"},
           "min_match": 1.0},
 "timing": {"warmup": 1, "repeat": 2},
 "defaults": {"file": "$root/tests/kernels/layernorm/layernorm_bugs.cu", "block": [32], "grid": [1],
              "args": ["y", "mean", "rstd", "x", "weight", "bias", "rows", "cols", "eps"]},
 "variants": [{"kernel": "layernorm_unbiased"}, {"kernel": "layernorm_no_eps"},
              {"name": "y_only", "file": "$root/tests/kernels/layernorm/layernorm_y_only.cu", "kernel": "layernorm_y_only",
               "args": ["x", "weight", "bias", "y", "rows", "cols", "eps"]}]}
JSON
"$h" run "$tmp/bugs.json" --backend emu --quiet --out "$tmp/bugs.csv" >"$tmp/bugs.log" 2>&1
[ $? = 1 ] || fail "the planted bugs' run should exit 1: $(tail -3 "$tmp/bugs.log")"
got=$(python3 -c "
import csv
print(' '.join(r['variant'] + ':' + r['cols'] + '/' + r['eps'] + '=' + r['status'] for r in csv.DictReader(open('$tmp/bugs.csv'))))")
want="layernorm_unbiased:1/1e-05=ok layernorm_no_eps:1/1e-05=mismatch y_only:1/1e-05=ok layernorm_unbiased:1/0.1=ok layernorm_no_eps:1/0.1=mismatch y_only:1/0.1=ok layernorm_unbiased:40/1e-05=mismatch layernorm_no_eps:40/1e-05=mismatch y_only:40/1e-05=ok layernorm_unbiased:40/0.1=mismatch layernorm_no_eps:40/0.1=mismatch y_only:40/0.1=ok"
[ "$got" = "$want" ] || fail "planted bugs:
 got  $got
 want $want"
# y_only's rows name y as what was checked, never mean or rstd
python3 - "$tmp/bugs.csv" <<'PY' || fail "y_only was checked on outputs it was not given"
import csv, sys
rows = [r for r in csv.DictReader(open(sys.argv[1])) if r["variant"] == "y_only"]
bad = [r for r in rows if r.get("worst_output") not in ("y", None)]
sys.exit(1 if bad or not rows else 0)
PY

echo "== harness check: clean"
expect_cmd=("$h")
for v in layernorm_warp layernorm_welford; do
  expect 0 "" check "$tmp/layernorm_sweep.json" --out "$tmp/check.csv" --variant "$v" --case 1
done

echo "== bad input"
sed 's/"eps": \[1e-5, 0.1\]/"eps": [-1]/' "$tmp/bugs.json" >"$tmp/neg.json"
expect 2 "layernorm: eps = -1 must be a finite float32 of at least 0" run "$tmp/neg.json" --backend emu --out "$tmp/z.csv"
sed 's/"rows": \[6\], "cols": \[1, 40\]/"rows": [6], "cols": [0]/' "$tmp/bugs.json" >"$tmp/zero.json"
expect 2 "layernorm: cols = 0 must be a whole number between 1 and 2^30" run "$tmp/zero.json" --backend emu --out "$tmp/z.csv"

finish
