#!/usr/bin/env bash
# test_opkernels.sh: kernels written from the docs alone, one or more per operator of
# the catalogue, each in a style kernels/<op>/ does not use (tests/kernels/opkernels/,
# configs in tests/configs/opkernels/): float4 loads with a scalar tail, a template
# parameter picked by a define, 2D and 3D grids, a warp per row, two-launch pipelines
# through scratch buffers, atomics into zeroed outputs, dynamic shared memory sized by
# an expression, block-stride loops.
#   - run: every row of the correct variants ok; every planted bug fails where it
#     should (relu's dropped tail, softmax's missing 1/batch, conv2d's padding off by
#     one, pool2d's ties given to the last maximum: the generator plants ties) and
#     passes where the bug cannot show (n % 4 == 0, batch 1, avg pooling, k = 1);
#   - check: no finding on correct kernels (atomics, shuffles, dynamic shared memory,
#     launches); the planted shared-memory race is a `race` row naming its line;
#   - debug on a pipeline and on a planted bug; tune on a tunable template;
#     --save-tensors replayed by tests/numpy_crosscheck.py;
#   - a tunable also given in the variant's defines is exit 2 saying what to do;
#   - conv2d's and im2col's case labels name a non-zero pad value;
#   - a block over the kernel's __launch_bounds__ is a launch_error on the emulator too;
#   - progress lines say their counts are so far (printed as a case starts).
. "$(dirname "$0")/lib.sh"

cfg=$root/tests/configs/opkernels
py=/usr/bin/python3
export HARNESS_CACHE_DIR=${HARNESS_CACHE_DIR:-$tmp/cache}

# rows CSV: "variant status" per row, counted
rows() {
  "$py" - "$1" <<'PY'
import csv, sys
from collections import Counter
rows = list(csv.DictReader(open(sys.argv[1], newline="")))
for (v, s), n in sorted(Counter((r["variant"], r["status"]) for r in rows).items()):
    print(v, s, n)
PY
}
# expect_rows CSV LINE...: the counted rows are exactly these lines
expect_rows() {
  local csv=$1 got want
  shift
  got=$(rows "$csv")
  want=$(printf '%s\n' "$@" | sort)
  [ "$got" = "$want" ] || fail "$(basename "$csv"): rows are
$got
expected
$want"
}

echo "== run: correct variants ok, planted bugs mismatch"
run_cfg() { "$h" run "$cfg/$1.json" --backend emu --quick --quiet --out "$tmp/$1.csv" "${@:2}" >"$tmp/$1.log" 2>&1; }
for c in relu_backward sigmoid sigmoid_backward linear linear_backward conv2d_backward_data conv2d_backward_filter im2col pool2d_backward; do
  run_cfg "$c" || fail "$c: exit $? $(tail -3 "$tmp/$c.log")"
  "$py" - "$tmp/$c.csv" <<'PY' || fail "$c: a row is not ok"
import csv, sys
bad = [(r["variant"], r["case"], r["status"], r["reason"]) for r in csv.DictReader(open(sys.argv[1])) if r["status"] != "ok"]
print(*bad, sep="\n")
sys.exit(1 if bad else 0)
PY
done
run_cfg relu --save-tensors "$tmp/relu_t"
expect_rows "$tmp/relu.csv" "relu_vec4 ok 6" "planted_relu_no_tail ok 1" "planted_relu_no_tail mismatch 5"
grep -q "never written" "$tmp/relu.csv" || fail "relu: the dropped tail's reason does not say the outputs were never written"
run_cfg softmax_cross_entropy --save-tensors "$tmp/sm_t"
expect_rows "$tmp/softmax_cross_entropy.csv" "xent_warp_rows ok 12" "xent_cg_rows ok 12" \
  "planted_xent_no_mean_grad ok 6" "planted_xent_no_mean_grad mismatch 6"
run_cfg conv2d
expect_rows "$tmp/conv2d.csv" "conv2d_smem_filter ok 16" "planted_conv2d_pad_off_by_one mismatch 16"
run_cfg pool2d --save-tensors "$tmp/pool_t"
expect_rows "$tmp/pool2d.csv" "pool2d_plane_blocks ok 14" "planted_pool2d_last_tie ok 9" "planted_pool2d_last_tie mismatch 5"
"$py" - "$tmp/pool2d.csv" <<'PY' || fail "pool2d: the planted tie rule's rows are not argmax mismatches in max mode"
import csv, sys
rows = [r for r in csv.DictReader(open(sys.argv[1])) if r["variant"] == "planted_pool2d_last_tie"]
bad = [r for r in rows if (r["status"] == "mismatch") != (r["mode"] == "max" and r["k"] != "1")
       or r["status"] == "mismatch" and r["worst_output"] != "argmax"]
print(*[(r["case"], r["mode"], r["k"], r["status"], r["worst_output"]) for r in bad], sep="\n")
sys.exit(1 if bad else 0)
PY
run_cfg conv2d_backward_bias
# the race's result on the emulator depends on how its fibers interleave: run
# only says the correct variant is ok; check (below) must find the race
case "$(rows "$tmp/conv2d_backward_bias.csv")" in "bwd_bias_two_pass ok 8"*) ;; *) fail "bias: $(rows "$tmp/conv2d_backward_bias.csv")" ;; esac

echo "== numpy replays the saved tensors"
for t in relu sm pool; do
  c=$([ $t = sm ] && echo softmax_cross_entropy || { [ $t = pool ] && echo pool2d || echo relu; })
  expect 0 "0 failure(s)" "$py" "$root/tests/numpy_crosscheck.py" "$tmp/${t}_t" "$tmp/$c.csv"
done

echo "== check: no finding on correct kernels, the planted race found"
expect_cmd=("$h")
for c in softmax_cross_entropy linear_backward conv2d_backward_filter; do
  expect 0 "0 rows with findings" check "$cfg/$c.json" --case 0-2 --out "$tmp/$c.check.csv"
done
expect 1 "write after read hazard" check "$cfg/conv2d_backward_bias.json" --case 0-1 --out "$tmp/bias.check.csv"
case "$out" in *"conv2d_bwd_styles.cu:72"*) ;; *) fail "the race does not name the tree's line: $out" ;; esac
expect_rows "$tmp/bias.check.csv" "bwd_bias_two_pass ok 2" "planted_bias_race race 2"

echo "== debug, tune"
expect 0 "verdict: output matches the reference" debug "$cfg/linear_backward.json" --kernel linear_bwd_three_launches \
  --set batch=5,in_f=13,out_f=6 --out "$tmp/dbg"
case "$out" in *"dweight: 78 of 78"*"dbias: 6 of 6"*) ;; *) fail "debug of the three launches: $out" ;; esac
expect 1 "verdict: output does NOT match the reference" debug "$cfg/pool2d.json" --kernel planted_pool2d_last_tie \
  --set n=2,channels=3,h=8,w=7,k=2,mode=max,layout=CHWN --out "$tmp/dbg"
case "$out" in *"argmax: 48 of 72 elements match"*) ;; *) fail "debug of the planted tie rule: $out" ;; esac
expect 0 "block (0,0,6): image 1, output channel 2" debug "$cfg/conv2d.json" --kernel conv2d_smem_filter \
  --set n=2,in_ch=1,out_ch=4,filter_size=2,h=5,w=6,padding=0,pad=0,use_bias=0 --block 0,0,6 --out "$tmp/dbg"
case "$out" in *"filter in shared memory (2 x 2)"*"verdict: output matches the reference"*) ;; *) fail "debug --block: $out" ;; esac
expect 0 "best configurations" tune "$cfg/sigmoid.json" --backend emu --quick --budget 3 --case 0-1 --out "$tmp/tune"

echo "== labels tell cases apart by the pad value (conv2d and im2col left it out)"
expect 0 "1x6x1 -> 1, f:2x2, p:1, pad:0.5" list "$cfg/conv2d.json"
expect 0 "1x7x3, f:2x2, p:-1, pad:1.5" list "$cfg/im2col.json"

echo "== a block larger than the kernel's __launch_bounds__ is a launch_error, as on a GPU"
cat >"$tmp/bounds.json" <<JSON
{"name": "bounds", "op": "relu", "axes": {"n": [5, 1000]}, "check": {"atol": 0, "rtol": 0, "min_match": 1.0},
 "defaults": {"file": "$root/tests/kernels/opkernels/activation/eltwise_vec4.cu", "kernel": "relu_vec4",
              "args": ["x", "y", "n"], "grid": [1]},
 "variants": [{"name": "at_bound", "block": [256]}, {"name": "over_bound", "block": [512]}]}
JSON
expect 1 "" run "$tmp/bounds.json" --backend emu --quick --out "$tmp/bounds.csv"
expect_rows "$tmp/bounds.csv" "at_bound ok 2" "over_bound launch_error 2"
# progress is printed as a case starts: its counts are the cases before it
case "$out" in *"[1/2] case 0 n:5: 0 rows ok, 0 failed so far"*) ;; *) fail "progress: $out" ;; esac
grep -q "exceeds this kernel's __launch_bounds__ of 256 threads" "$tmp/bounds.csv" || fail "bounds: $(cat "$tmp/bounds.csv")"

echo "== a tunable that is also a define of the variant"
sed 's/"tune": {/"defines": {"UNROLL": 2}, "tune": {/' "$cfg/sigmoid.json" >"$tmp/both.json"
sed -i "s|\"\.\./\.\./kernels/|\"$root/tests/kernels/|" "$tmp/both.json"
expect 2 "drop it from this variant's defines" run "$tmp/both.json" --backend emu --out "$tmp/both.csv"
case "$out" in *"variants[0].tune.UNROLL"*) ;; *) fail "the message names no JSON path: $out" ;; esac

finish
