#!/usr/bin/env bash
# test_softmax_op.sh: the softmax operator (harness/ops/softmax, docs/ops/softmax.md)
# on the emulator:
#   - configs/softmax_sweep.json's four kernels on a small sample of its shapes;
#   - planted bugs fail where they should and only there: no max subtracted (every
#     case: rows carry offsets of +-96), a warp reading only 32 columns (rows longer
#     than 32 only);
#   - harness check finds nothing in the warp and online kernels;
#   - bad parameters are exit 2 naming the case.
. "$(dirname "$0")/lib.sh"

echo "== the sweep's kernels on a sample of its shapes"
sample_sweep softmax_sweep 8 10 5

echo "== planted bugs"
cat >"$tmp/bugs.json" <<JSON
{"name": "softmax_bugs", "op": "softmax", "axes": {"rows": [4], "cols": [1, 32, 33, 200]},
 "check": {"atol": 1e-7, "rtol": "1e-5 + 6e-8 * cols", "min_match": 1.0},
 "timing": {"warmup": 1, "repeat": 2},
 "defaults": {"file": "$root/tests/kernels/softmax/softmax_bugs.cu", "args": ["x", "y", "rows", "cols"]},
 "variants": [{"kernel": "softmax_unstable", "block": [32], "grid": [1]},
              {"kernel": "softmax_one_pass", "block": [32], "grid": ["rows"]}]}
JSON
"$h" run "$tmp/bugs.json" --backend emu --quiet --out "$tmp/bugs.csv" >"$tmp/bugs.log" 2>&1
[ $? = 1 ] || fail "the planted bugs' run should exit 1: $(tail -3 "$tmp/bugs.log")"
got=$(python3 -c "
import csv
print(' '.join(r['variant'] + ':' + r['cols'] + '=' + r['status'] for r in csv.DictReader(open('$tmp/bugs.csv'))))")
want="softmax_unstable:1=mismatch softmax_one_pass:1=ok softmax_unstable:32=mismatch softmax_one_pass:32=ok softmax_unstable:33=mismatch softmax_one_pass:33=mismatch softmax_unstable:200=mismatch softmax_one_pass:200=mismatch"
[ "$got" = "$want" ] || fail "planted bugs:
 got  $got
 want $want"

echo "== harness check: clean"
expect_cmd=("$h")
for v in softmax_warp_row softmax_online 'softmax_block_row[BLOCK=128]'; do
  expect 0 "" check "$tmp/softmax_sweep.json" --out "$tmp/check.csv" --variant "$v" --case 1
done

echo "== bad input"
sed 's/"cols": \[1, 32, 33, 200\]/"cols": [0]/' "$tmp/bugs.json" >"$tmp/zero.json"
expect 2 "softmax: cols = 0 must be a whole number between 1 and 2^30" run "$tmp/zero.json" --backend emu --out "$tmp/z.csv"
sed 's/"rows": \[4\], "cols": \[1, 32, 33, 200\]/"rows": [65536], "cols": [65536]/' "$tmp/bugs.json" >"$tmp/huge.json"
expect 2 "softmax: rows * cols = 65536 * 65536" run "$tmp/huge.json" --backend emu --out "$tmp/z.csv"

finish
