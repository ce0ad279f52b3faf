#!/usr/bin/env bash
# test_scan.sh: the scan operator (harness/ops/scan, docs/ops/scan.md) on the
# emulator:
#   - configs/scan_sweep.json's kernels (one thread a row, Kogge-Stone and
#     Brent-Kung in one block, the three-launch hierarchical scan, the
#     single-pass decoupled look-back scan), float32 and int32, on a sample of
#     its shapes; the look-back scan again on several sections with more
#     workers than cores (blocks spin on their predecessors' states);
#   - planted bugs (tests/kernels/scan/scan_bugs.cu) fail only where they
#     should: an exclusive scan shifted the wrong way (exclusive cases only);
#     Kogge-Stone with a barrier missing (every case, and harness check names
#     the race); the block sums not added to the last, partial section (cols
#     not a multiple of the section only); stores past the row (the same);
#   - harness check is silent on the sweep's kernels; harness debug runs the
#     look-back scan with blocks one at a time;
#   - bad parameters are exit 2.
. "$(dirname "$0")/lib.sh"

echo "== the sweep's kernels on a sample of its shapes"
sample_sweep scan_sweep 16 40 10

statuses() {
  python3 -c "
import csv, sys
print(' '.join(r['variant'] + ':' + r['cols'] + ':' + r['exclusive'] + '=' + r['status'] for r in csv.DictReader(open(sys.argv[1]))))" "$1"
}
# sweep_cfg FILE AXES: the sweep's variants on the given axes, every case
sweep_cfg() {
  python3 -c "
import json, sys
c = json.load(open(sys.argv[1]))
c['axes'] = json.loads(sys.argv[3])
for k in ('sample', 'where'): c.pop(k, None)
c['emu'] = {'max_gflop': 1}
json.dump(c, open(sys.argv[2], 'w'))" "$tmp/scan_sweep.json" "$1" "$2"
}

echo "== the look-back scan: several sections a row, 6 workers"
sweep_cfg "$tmp/lookback.json" '{"rows": [3], "cols": [40000], "exclusive": [0, 1], "dtype": ["float32", "int32"]}'
"$h" run "$tmp/lookback.json" --backend emu --quick --quiet --emu-threads 6 --variant 'scan_lookback<float>' \
  --variant 'scan_lookback<int>' --out "$tmp/lookback.csv" >"$tmp/lookback.log" 2>&1 ||
  fail "the look-back scan exited $?: $(tail -5 "$tmp/lookback.log")"
got=$(python3 -c "
import csv
print(sorted((r['variant'], r['status']) for r in csv.DictReader(open('$tmp/lookback.csv')) if r['status'] != 'skipped'))")
want="[('scan_lookback<float>', 'ok'), ('scan_lookback<float>', 'ok'), ('scan_lookback<int>', 'ok'), ('scan_lookback<int>', 'ok')]"
[ "$got" = "$want" ] || fail "the look-back scan: $got"

bugs_cfg() { # bugs_cfg FILE AXES VARIANTS
  cat >"$1" <<JSON
{"name": "scan_bugs", "op": "scan", "axes": $2,
 "check": {"atol": 1e-6, "rtol": "1e-6 + 2e-7 * sqrt(cols)", "min_match": 1.0},
 "timing": {"warmup": 1, "repeat": 2},
 "defaults": {"file": "$root/tests/kernels/scan/scan_bugs.cu", "defines": {"BLOCK": 64}, "block": ["BLOCK"],
              "grid": [1, "rows"], "args": ["x", "y", "cols", "exclusive"]},
 "variants": [$3]}
JSON
}

echo "== planted bugs: one block a row"
bugs_cfg "$tmp/ks.json" '{"rows": [2], "cols": [37, 64], "exclusive": [0, 1]}' \
  '{"kernel": "scan_ks_shift"}, {"kernel": "scan_ks_one_barrier"}'
"$h" run "$tmp/ks.json" --backend emu --quiet --out "$tmp/ks.csv" >/dev/null 2>&1
got=$(statuses "$tmp/ks.csv")
want="scan_ks_shift:37:0=ok scan_ks_one_barrier:37:0=mismatch scan_ks_shift:37:1=mismatch scan_ks_one_barrier:37:1=mismatch"
want="$want scan_ks_shift:64:0=ok scan_ks_one_barrier:64:0=mismatch scan_ks_shift:64:1=mismatch scan_ks_one_barrier:64:1=mismatch"
[ "$got" = "$want" ] || fail "one-block bugs: got $got, want $want"

echo "== planted bugs: sections (SECTION = 128)"
bugs_cfg "$tmp/sec.json" '{"rows": [2], "cols": [100, 128, 256, 300], "exclusive": [1]}' \
  '{"name": "scan_hier_full", "scratch": {"sums": "4 * rows * ceil_div(cols, 2 * BLOCK)"},
    "launches": [
      {"kernel": "scan_pass1", "block": ["BLOCK"], "grid": ["ceil_div(cols, 2 * BLOCK)", "rows"], "args": ["x", "y", "sums", "cols", "exclusive"]},
      {"kernel": "scan_pass2", "block": ["BLOCK"], "grid": [1, "rows"], "args": ["sums", "int: ceil_div(cols, 2 * BLOCK)"]},
      {"kernel": "scan_pass3_full", "block": ["BLOCK"], "grid": ["ceil_div(cols, 2 * BLOCK)", "rows"], "args": ["y", "sums", "cols"]}]},
   {"kernel": "scan_bk_no_guard", "where": "cols <= 2 * BLOCK"}'
"$h" run "$tmp/sec.json" --backend emu --quiet --out "$tmp/sec.csv" >/dev/null 2>&1
got=$(statuses "$tmp/sec.csv")
want="scan_hier_full:100:1=ok scan_bk_no_guard:100:1=fault scan_hier_full:128:1=ok scan_bk_no_guard:128:1=ok"
want="$want scan_hier_full:256:1=ok scan_bk_no_guard:256:1=skipped scan_hier_full:300:1=mismatch scan_bk_no_guard:300:1=skipped"
[ "$got" = "$want" ] || fail "section bugs: got $got, want $want"

echo "== harness check: the missing barrier is a race"
bugs_cfg "$tmp/racy.json" '{"rows": [1], "cols": [64], "exclusive": [0]}' '{"kernel": "scan_ks_one_barrier"}'
expect_cmd=("$h")
expect 1 "race" check "$tmp/racy.json" --out "$tmp/check.csv"
case "$out" in *"scan_bugs.cu:"*) ;; *) fail "the race's report names no line of scan_bugs.cu: $out" ;; esac

echo "== harness check: the sweep's kernels are clean"
sweep_cfg "$tmp/clean.json" '{"rows": [2], "cols": [200, 1500], "exclusive": [1], "dtype": ["float32", "int32"]}'
expect 0 "0 rows with findings" check "$tmp/clean.json" --out "$tmp/check.csv"
n_ok=$(grep -c ',ok,' "$tmp/check.csv")
[ "$n_ok" = 16 ] || fail "harness check: $n_ok rows ok, 16 wanted: $(cut -c1-300 "$tmp/check.csv")"

echo "== harness debug: the look-back scan, blocks one at a time"
expect 0 "verdict: output matches the reference" debug "$tmp/scan_sweep.json" --backend emu \
  --kernel 'scan_lookback<float>' --set rows=2,cols=1000,exclusive=1,dtype=float32 --out "$tmp/debug"
expect 1 "mismatch" debug "$tmp/ks.json" --backend emu --kernel scan_ks_shift --set rows=2,cols=37,exclusive=1 \
  --out "$tmp/debug"

echo "== bad input"
bugs_cfg "$tmp/bad.json" '{"rows": [1], "cols": [4], "exclusive": [2]}' '{"kernel": "scan_ks_shift"}'
expect 2 "scan: exclusive = 2 must be 0 (inclusive) or 1 (exclusive)" run "$tmp/bad.json" --backend emu --out "$tmp/z.csv"
bugs_cfg "$tmp/zero.json" '{"rows": [0], "cols": [4], "exclusive": [0]}' '{"kernel": "scan_ks_shift"}'
expect 2 "scan: rows = 0 must be a whole number between 1 and 2^30" run "$tmp/zero.json" --backend emu --out "$tmp/z.csv"
bugs_cfg "$tmp/dt.json" '{"rows": [1], "cols": [4], "exclusive": [0], "dtype": ["float64"]}' '{"kernel": "scan_ks_shift"}'
expect 2 "float64" run "$tmp/dt.json" --backend emu --out "$tmp/z.csv"

finish
