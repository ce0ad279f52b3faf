#!/usr/bin/env bash
# test_transpose.sh: the transpose operator (harness/ops/transpose,
# docs/ops/transpose.md) on the emulator:
#   - configs/transpose_sweep.json's kernels on a sample of its shapes, exactly;
#   - planted bugs: a copy instead of a transpose (wrong unless x is one row or one
#     column), the tile without its barrier (harness check names the race);
#   - harness profile counts the unpadded tile's bank conflicts, and none with PAD 1;
#   - bad parameters are exit 2.
. "$(dirname "$0")/lib.sh"

echo "== the sweep's kernels on a sample of its shapes"
sample_sweep transpose_sweep 8 12 3

cfg() { # cfg FILE AXES VARIANTS
  cat >"$1" <<JSON
{"name": "transpose_bugs", "op": "transpose", "axes": $2,
 "check": {"atol": 0, "rtol": 0, "min_match": 1.0},
 "timing": {"warmup": 1, "repeat": 2},
 "defaults": {"file": "$root/tests/kernels/transpose/transpose_bugs.cu", "block": [16, 4],
              "grid": ["ceil_div(cols, 16)", "ceil_div(rows, 16)"], "args": ["x", "y", "rows", "cols"]},
 "variants": [$3]}
JSON
}

echo "== planted bugs"
cfg "$tmp/bugs.json" '{"rows": [1, 20], "cols": [1, 37]}' '{"kernel": "transpose_copy"}'
"$h" run "$tmp/bugs.json" --backend emu --quiet --out "$tmp/bugs.csv" >/dev/null 2>&1
got=$(python3 -c "
import csv, sys
print(' '.join(r['rows'] + 'x' + r['cols'] + '=' + r['status'] for r in csv.DictReader(open(sys.argv[1]))))" "$tmp/bugs.csv")
[ "$got" = "1x1=ok 1x37=ok 20x1=ok 20x37=mismatch" ] || fail "a copy for a transpose: $got"
cfg "$tmp/racy.json" '{"rows": [20], "cols": [37]}' '{"kernel": "transpose_no_sync"}'
expect_cmd=("$h")
expect 1 "race" check "$tmp/racy.json" --out "$tmp/check.csv"
case "$out" in *"transpose_bugs.cu:"*) ;; *) fail "the race's report names no line: $out" ;; esac

echo "== harness profile: the unpadded tile's bank conflicts"
cat >"$tmp/prof.json" <<JSON
{"name": "prof", "op": "transpose", "axes": {"rows": [64], "cols": [64]},
 "check": {"atol": 0, "rtol": 0, "min_match": 1.0},
 "defaults": {"file": "$root/kernels/transpose/transpose.cu", "args": ["x", "y", "rows", "cols"],
              "block": ["TILE", "ROWS_PER"], "grid": ["ceil_div(cols, TILE)", "ceil_div(rows, TILE)"]},
 "variants": [{"kernel": "transpose_tiled", "defines": {"TILE": 32, "ROWS_PER": 8, "PAD": [0, 1]}}]}
JSON
for pad in 0 1; do
  "$h" profile "$tmp/prof.json" --variant "transpose_tiled[PAD=$pad]" --out "$tmp/prof$pad.csv" >"$tmp/prof$pad.txt" 2>&1 ||
    fail "profile PAD=$pad exited $?: $(tail -3 "$tmp/prof$pad.txt")"
done
# the shared load of the transposed read: 31 extra wavefronts a request without the
# padding column (a warp reads one bank 32 times), none with it
c0=$(awk '/shared load/ {print $(NF-2); exit}' "$tmp/prof0.txt")
c1=$(awk '/shared load/ {print $(NF-2); exit}' "$tmp/prof1.txt")
[ "$c0" = "31.00" ] && [ "$c1" = "0.00" ] || fail "shared-load conflicts a request: PAD=0 $c0 (want 31.00), PAD=1 $c1 (want 0.00)"

echo "== bad input"
cfg "$tmp/zero.json" '{"rows": [0], "cols": [4]}' '{"kernel": "transpose_copy"}'
expect 2 "transpose: rows = 0 must be a whole number between 1 and 2^30" run "$tmp/zero.json" --backend emu --out "$tmp/z.csv"

finish
