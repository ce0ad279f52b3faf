#!/usr/bin/env bash
# test_reduce_sum.sh: the reduce_sum operator (harness/ops/reduce_sum,
# docs/ops/reduce_sum.md) on the emulator:
#   - configs/reduce_sum_sweep.json's kernels (atomics, warp shuffles, a two-launch
#     tree through scratch) on a sample of its shapes;
#   - an atomic kernel without "zero" accumulates into the poison: a mismatch whose
#     reason asks for zero;
#   - planted bugs: the grid-stride tail left out (rows not a multiple of the block
#     only), a tree without barriers (harness check names the race); one thread
#     adding a row in float is correct;
#   - bad parameters are exit 2.
. "$(dirname "$0")/lib.sh"

echo "== the sweep's kernels on a sample of its shapes"
sample_sweep reduce_sum_sweep 8 12 3

cfg() { # cfg FILE AXES VARIANTS
  cat >"$1" <<JSON
{"name": "reduce_bugs", "op": "reduce_sum", "axes": $2,
 "check": {"atol": 1e-6, "rtol": "1e-6 + 2e-7 * sqrt(cols)", "min_match": 1.0},
 "timing": {"warmup": 1, "repeat": 2},
 "defaults": {"file": "$root/tests/kernels/reduce/reduce_bugs.cu", "block": [64], "grid": [2, "rows"],
              "args": ["x", "y", "cols"]},
 "variants": [$3]}
JSON
}
statuses() {
  python3 -c "
import csv, sys
print(' '.join(r['variant'] + ':' + r['cols'] + '=' + r['status'] for r in csv.DictReader(open(sys.argv[1]))))" "$1"
}

echo "== an atomic kernel without zero"
cfg "$tmp/nozero.json" '{"rows": [2], "cols": [100]}' \
  "{\"file\": \"$root/kernels/reduce/reduce.cu\", \"kernel\": \"reduce_atomic\", \"defines\": {\"BLOCK\": 64}}"
"$h" run "$tmp/nozero.json" --backend emu --quiet --out "$tmp/nozero.csv" >/dev/null 2>&1
[ "$(statuses "$tmp/nozero.csv")" = "reduce_atomic:100=mismatch" ] || fail "reduce_atomic without zero: $(statuses "$tmp/nozero.csv")"
grep -q 'zero' "$tmp/nozero.csv" || fail "the mismatch's reason does not mention zero: $(cut -c1-400 "$tmp/nozero.csv")"

echo "== planted bugs"
cfg "$tmp/bugs.json" '{"rows": [3], "cols": [128, 200]}' \
  '{"kernel": "reduce_no_tail", "zero": ["y"]}, {"kernel": "reduce_sequential", "grid": [1, "rows"], "block": [1]}'
"$h" run "$tmp/bugs.json" --backend emu --quiet --out "$tmp/bugs.csv" >/dev/null 2>&1
got=$(statuses "$tmp/bugs.csv")
want="reduce_no_tail:128=ok reduce_sequential:128=ok reduce_no_tail:200=mismatch reduce_sequential:200=ok"
[ "$got" = "$want" ] || fail "planted bugs: got $got, want $want"
cfg "$tmp/racy.json" '{"rows": [1], "cols": [300]}' '{"kernel": "reduce_tree_racy", "grid": [1, 1]}'
expect_cmd=("$h")
expect 1 "race" check "$tmp/racy.json" --out "$tmp/check.csv"
case "$out" in *"reduce_bugs.cu:"*) ;; *) fail "the race's report names no line of reduce_bugs.cu: $out" ;; esac

echo "== harness check: the sweep's kernels are clean"
for v in reduce_warp reduce_tree; do
  expect 0 "" check "$tmp/reduce_sum_sweep.json" --out "$tmp/check.csv" --variant "$v" --case 2
done

echo "== bad input"
cfg "$tmp/zero.json" '{"rows": [0], "cols": [4]}' '{"kernel": "reduce_sequential"}'
expect 2 "reduce_sum: rows = 0 must be a whole number between 1 and 2^31-1" run "$tmp/zero.json" --backend emu --out "$tmp/z.csv"
cfg "$tmp/huge.json" '{"rows": [65536], "cols": [65536]}' '{"kernel": "reduce_sequential"}'
expect 2 "reduce_sum: rows * cols = 65536 * 65536" run "$tmp/huge.json" --backend emu --out "$tmp/z.csv"

finish
