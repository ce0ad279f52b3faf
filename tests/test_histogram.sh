#!/usr/bin/env bash
# test_histogram.sh: the histogram operator (harness/ops/histogram,
# docs/ops/histogram.md) on the emulator:
#   - configs/histogram_sweep.json's kernels on a sample of its shapes, exactly;
#   - without "zero" the atomics add into the poison (-1 for int32): a mismatch
#     whose reason says every count is one short and asks for zero;
#   - planted bugs: aggregation without its last run (a mismatch), a private
#     histogram used before its barrier (harness check names the race);
#   - bad parameters are exit 2.
. "$(dirname "$0")/lib.sh"

echo "== the sweep's kernels on a sample of its shapes"
sample_sweep histogram_sweep 8 12 3

cfg() { # cfg FILE AXES VARIANTS
  cat >"$1" <<JSON
{"name": "histogram_bugs", "op": "histogram", "axes": $2,
 "check": {"atol": 0, "rtol": 0, "min_match": 1.0},
 "timing": {"warmup": 1, "repeat": 2},
 "defaults": {"file": "$root/tests/kernels/histogram/histogram_bugs.cu", "block": [64], "grid": [2], "zero": ["hist"],
              "shared_bytes": "4 * bins", "args": ["x", "hist", "n", "bins"]},
 "variants": [$3]}
JSON
}

echo "== without zero"
cfg "$tmp/nozero.json" '{"n": [500], "bins": [16]}' \
  "{\"file\": \"$root/kernels/histogram/histogram.cu\", \"kernel\": \"histogram_global\", \"zero\": [], \"args\": [\"x\", \"hist\", \"n\"]}"
"$h" run "$tmp/nozero.json" --backend emu --quiet --out "$tmp/nozero.csv" >/dev/null 2>&1
python3 - "$tmp/nozero.csv" <<'PY' || fail "histogram_global without zero: $(cut -c1-300 "$tmp/nozero.csv")"
import csv, sys
r = list(csv.DictReader(open(sys.argv[1])))[0]
sys.exit(0 if r["status"] == "mismatch" and "one less than its reference" in r["reason"]
         and '"zero": ["hist"]' in r["reason"] else 1)
PY

echo "== planted bugs"
cfg "$tmp/flush.json" '{"n": [500], "bins": [16]}' '{"kernel": "histogram_no_flush"}'
"$h" run "$tmp/flush.json" --backend emu --quiet --out "$tmp/flush.csv" >/dev/null 2>&1
[ "$(python3 -c "import csv; print(list(csv.DictReader(open('$tmp/flush.csv')))[0]['status'])")" = mismatch ] ||
  fail "aggregation without its last run: $(cut -c1-300 "$tmp/flush.csv")"
expect_cmd=("$h")
cfg "$tmp/noinit.json" '{"n": [500], "bins": [16]}' '{"kernel": "histogram_no_init"}'
expect 1 "race" check "$tmp/noinit.json" --out "$tmp/check.csv"
case "$out" in *"histogram_bugs.cu:"*) ;; *) fail "the race's report names no line: $out" ;; esac

echo "== harness check: the sweep's kernels are clean"
for v in histogram_private histogram_aggregate; do
  expect 0 "" check "$tmp/histogram_sweep.json" --out "$tmp/check.csv" --variant "$v" --case 5
done

echo "== bad input"
cfg "$tmp/bins.json" '{"n": [5], "bins": [0]}' '{"kernel": "histogram_no_flush"}'
expect 2 "histogram: bins = 0 must be a whole number between 1 and 2^24" run "$tmp/bins.json" --backend emu --out "$tmp/z.csv"

finish
