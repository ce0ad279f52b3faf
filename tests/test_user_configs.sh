#!/usr/bin/env bash
# test_user_configs.sh: configs a new user wrote from the README alone, and the
# mistakes such a user makes. Each mistake the config alone shows is exit 2 naming
# the file and the JSON path, with an existing results file left as it was; one
# that only a row can show is that row's reason, saying what is wrong:
# - "//" comments in every object, the name maps (axes, defines, tune, scratch,
#   constants) included, as the README's table promises;
# - a negative tolerance (a number, or an expression of no names) is exit 2, not
#   a mismatch in every row; one that depends on the case is the row's reason;
# - a variant whose where (naming the case) is false for every case: exit 2, as a
#   top-level where that leaves no case (it ran, every row skipped, exit 0);
# - a parameter whose expression names a later parameter says so (it read as a
#   typo: "unknown name 'w'");
# - a tolerance naming a define that a variant it applies to lacks: exit 2 (each
#   of that variant's rows was a launch_error);
# - a precision that is not "float" or "double", or cannot be evaluated, is exit 2
#   (it silently became "float" before);
# - a variant's file that is a folder, an include folder that is a file: exit 2;
# - `debug --set` giving an axis twice: exit 2;
# - timing with `repeat` and another count (repeat's N silently became
#   min_samples), or max_samples under min_samples (raised silently): exit 2;
# - a variant named "" or with a newline, a define value with one, a seed of 1.5
#   (it became 1): exit 2; "defaults": {"name"} names the variant, as any key does;
# - a tuning.strategy or tuning.budget that tune would refuse: exit 2 at load;
# - run/check/profile --out naming the config or a kernel (or a file the run
#   writes beside the results, such as <out>.best.csv): exit 2, nothing written
#   (it replaced the config with results, without --force);
# - the example configs of README.md and docs/operators.md load and run (the
#   latter's pool2d config bound 9 of the kernel's 10 arguments);
# - an axis given as {"range": ...} (tune's form) says where ranges go;
# - a constant from a scratch buffer: exit 2 saying why (it was "unknown argument");
# - `tune` on a variant of several define combinations says which one it tunes,
#   and `--variant LABEL` tunes another (it refused the label before); --variant
#   twice is exit 2 (the second was ignored);
# - a define's text used as a number ("64 * 2"), a grid over 2^32, a value
#   constant into an array variable: row reasons that say so.
. "$(dirname "$0")/lib.sh"
expect_show=400
sig="$root/kernels/activation/sigmoid.cu"

# cfg FILE TOP VARIANT_EXTRA: a sigmoid config with TOP spliced into the top level
# and VARIANT_EXTRA into its variant
cfg() {
  cat >"$tmp/$1" <<JSON
{"op": "sigmoid", "axes": {"n": [5, 9]} ${2:-}, "timing": {"repeat": 1},
 "variants": [{"file": "$sig", "kernel": "sigmoid_grid_stride", "block": [32], "grid": [1],
               "args": ["x", "y", "n"] ${3:-}}]}
JSON
}

echo "== comments in every object"
cat >"$tmp/comments.json" <<JSON
{"//": "top", "op": "sigmoid", "params": {"//": "p", "n": "base"},
 "axes": {"//": "the sizes", "base": [7, 9]}, "sample": {"//": "s", "count": 1, "seed": 3},
 "check": {"//": "c", "atol": 1e-7, "y": {"//": "y", "rtol": 1e-5}}, "timing": {"//": "t", "repeat": 1},
 "emu": {"//": "e", "max_gflop": 1}, "tuning": {"//": "tu", "budget": 3}, "defaults": {"//": "d", "block": [64]},
 "variants": [{"//": "v", "file": "$sig",
   "defines": {"//": "a define", "A": 1}, "tune": {"//": "a tunable", "T": {"//": "r", "range": [1, 2, 1]}},
   "scratch": {"//": "none used", "s": 4}, "constants": {"// note": "none"},
   "launches": [{"//": "l", "kernel": "sigmoid_grid_stride", "block": [64], "grid": ["T"], "args": ["x", "y", "n"]}]}]}
JSON
expect 0 "1 cases sampled from 2 combinations" "$h" list "$tmp/comments.json"

echo "== tolerances below 0"
echo "keep" >"$tmp/keep.csv"
cfg negatol.json ', "check": {"atol": -1e-7}'
expect 2 "negatol.json: check.atol: '-1e-07' = -1e-07: a tolerance must be at least 0" \
  "$h" run "$tmp/negatol.json" --backend emu --out "$tmp/keep.csv" --force
[ "$(cat "$tmp/keep.csv")" = keep ] || fail "negatol: the results file was touched"
cfg negrtol.json ', "check": {"y": {"rtol": "1e-5 - 1e-4"}}'
expect 2 "negrtol.json: check.y.rtol: '1e-5 - 1e-4' = -9e-05: a tolerance must be at least 0" "$h" list "$tmp/negrtol.json"
cfg zerodiv_atol.json ', "check": {"atol": "1 / 0"}'
expect 2 "zerodiv_atol.json: check.atol: in '1 / 0': at column 3: division by zero" "$h" list "$tmp/zerodiv_atol.json"

echo "== a variant's where that no case passes"
cfg vwhere.json '' ', "where": "n > 1000"'
# said, not refused: a small sample may leave a variant no case, and the rest runs
expect 0 "harness: note: $tmp/vwhere.json: variants[0] ('sigmoid_grid_stride'): its where is false for every one of the 2 cases (the first: 'n > 1000' at case 0): every row of it will be skipped" \
  "$h" run "$tmp/vwhere.json" --backend emu --out "$tmp/vwhere.csv"
[ "$(grep -c ',skipped,' "$tmp/vwhere.csv")" = 2 ] || fail "vwhere: expected 2 skipped rows: $(cat "$tmp/vwhere.csv")"
cfg vwhere_some.json '' ', "where": "n > 6"'
expect 0 "2 cases x 1 variants" "$h" list "$tmp/vwhere_some.json"

echo "== a parameter naming a later one"
pool="$root/kernels/pool2d/pool2d_naive.cu"
echo "{\"op\": \"pool2d\", \"params\": {\"w\": 8, \"h\": \"w + 1\"}, \"axes\": {\"channels\": [1], \"k\": [2]},
 \"variants\": [{\"file\": \"$pool\", \"kernel\": \"pool2d_naive\", \"block\": [32], \"grid\": [1], \"args\": [\"in\"]}]}" >"$tmp/later.json"
expect 2 "params.h: in 'w + 1': unknown name 'w' (known here: channels, k, n); 'w' is a parameter of pool2d that comes after 'h' (their order: n, channels, h, w, k, mode, layout)" \
  "$h" list "$tmp/later.json"

echo "== a tolerance naming a define one variant lacks"
cat >"$tmp/toldef.json" <<JSON
{"op": "sigmoid", "axes": {"n": [7]}, "check": {"atol": "ACC == \\"double\\" ? 1e-9 : 1e-7"},
 "defaults": {"file": "$sig", "kernel": "sigmoid_grid_stride", "block": [32], "grid": [1], "args": ["x", "y", "n"]},
 "variants": [{"defines": {"ACC": ["float", "double"]}}, {"name": "plain"}]}
JSON
expect 2 "toldef.json: check.atol: 'ACC == \"double\" ? 1e-9 : 1e-7' names ACC, a define that variants[1] ('plain') does not have" \
  "$h" list "$tmp/toldef.json"

echo "== precision"
cfg prec_num.json '' ', "precision": 32'
expect 2 "prec_num.json: variants[0].precision ('32'): expected \"float\" or \"double\"" "$h" list "$tmp/prec_num.json"
cfg prec_div.json '' ', "precision": "1 / 0"'
expect 2 "prec_div.json: variants[0].precision ('1 / 0'): at column 3: division by zero" "$h" list "$tmp/prec_div.json"
cfg prec_half.json '' ', "defines": {"ACCUM_DTYPE": ["float", "half"]}, "precision": "ACCUM_DTYPE"'
expect 0 "2 cases x 2 variants" "$h" list "$tmp/prec_half.json"
cfg prec_fp8.json '' ', "defines": {"ACCUM_DTYPE": ["float", "fp8"]}, "precision": "ACCUM_DTYPE"'
expect 2 "variants[0].precision ('ACCUM_DTYPE'): expected \"float\" or \"double\" (the peak and the baselines a row is compared with), or \"half\", \"bfloat16\" or \"tf32\", got \"fp8\"" \
  "$h" list "$tmp/prec_fp8.json"
cfg prec_ok.json '' ', "defines": {"ACCUM_DTYPE": ["float", "double"]}, "precision": "ACCUM_DTYPE"'
expect 0 "2 cases x 2 variants" "$h" list "$tmp/prec_ok.json"

echo "== paths that are not what they should be"
cfg folder.json '' ', "include_dirs": ["."]'
sed -i "s|\"file\": \"$sig\"|\"file\": \"$tmp\"|" "$tmp/folder.json"
expect 2 "folder.json: variants[0].file: '$tmp' is a folder, not a kernel's source file" \
  "$h" run "$tmp/folder.json" --backend emu --out "$tmp/keep.csv" --force
[ "$(cat "$tmp/keep.csv")" = keep ] || fail "folder: the results file was touched"
cfg incfile.json '' ", \"include_dirs\": [\"$sig\"]"
expect 2 "incfile.json: variants[0].include_dirs[0]: '$sig' is not a folder" "$h" list "$tmp/incfile.json"
cfg incopt.json '' ", \"options\": [\"-I\", \"$sig\"]"
expect 2 "incopt.json: variants[0].options[1]: '$sig' is not a folder" "$h" list "$tmp/incopt.json"

echo "== timing that contradicts itself, names and values on one line, a whole seed"
cfg repeat_min.json ', "check": {"atol": 1e-7}' ''
sed -i 's/"timing": {"repeat": 1}/"timing": {"repeat": 3, "min_samples": 10}/' "$tmp/repeat_min.json"
expect 2 "repeat_min.json: timing: 'repeat' (exactly 3 samples) and 'min_samples' (10) are given together" \
  "$h" list "$tmp/repeat_min.json"
# max_noise beside repeat decides nothing: accepted, and the count stops every row
cfg repeat_noise.json ', "check": {"atol": 1e-7}' ''
sed -i 's/"timing": {"repeat": 1}/"timing": {"repeat": 3, "max_noise": 0.5, "min_time": 0}/' "$tmp/repeat_noise.json"
expect 0 "results:" "$h" run "$tmp/repeat_noise.json" --backend emu --out "$tmp/repeat_noise.csv"
s=$(python3 -c 'import csv,sys; print(sorted({(r["samples"], r["stop"]) for r in csv.DictReader(open(sys.argv[1]))}))' \
  "$tmp/repeat_noise.csv")
[ "$s" = "[('3', 'max_samples')]" ] || fail "repeat 3 with max_noise: $s"
cfg minmax.json
sed -i 's/"timing": {"repeat": 1}/"timing": {"min_samples": 10, "max_samples": 5}/' "$tmp/minmax.json"
expect 2 "minmax.json: timing.max_samples: 5 is less than min_samples (10)" "$h" list "$tmp/minmax.json"
cfg noname.json '' ', "name": ""'
expect 2 "noname.json: variants[0].name: expected the variant's name in results" "$h" list "$tmp/noname.json"
cfg dname.json ', "defaults": {"name": "mine"}'
expect 0 "  mine" "$h" list "$tmp/dname.json"
cfg newline.json '' ', "defines": {"A": ["x", "y\nz"]}'
expect 2 "newline.json: variants[0].defines.A[1]: a string with a control character" "$h" list "$tmp/newline.json"
cfg seed.json ', "sample": {"count": 1, "seed": 1.5}'
expect 2 "seed.json: sample.seed: expected a whole number, got 1.5" "$h" list "$tmp/seed.json"

echo "== tuning defaults checked at load"
cfg strat.json ', "tuning": {"strategy": "anealing"}'
expect 2 "strat.json: tuning.strategy: unknown strategy 'anealing' (known: brute_force, random, annealing" "$h" list "$tmp/strat.json"
cfg budget.json ', "tuning": {"budget": "10 evals"}'
expect 2 "budget.json: tuning.budget: '10 evals': expected a positive number of evaluations (100)" "$h" list "$tmp/budget.json"

echo "== a range where a list goes"
cfg range.json
sed -i 's/"n": \[5, 9\]/"n": {"range": [5, 9, 4]}/' "$tmp/range.json"
expect 2 "range.json: axes.n: expected a value or an array of values, got an object ({\"range\": ...} and {\"pow2\": ...} are for a variant's tunables" \
  "$h" list "$tmp/range.json"

echo "== a constant from a scratch buffer"
cfg cscratch.json '' ', "scratch": {"tmp": 16}, "constants": {"c_arr": "tmp"}'
expect 2 "cscratch.json: variants[0].constants.c_arr: 'tmp' is a scratch buffer of the variant, which holds nothing before the launches" \
  "$h" list "$tmp/cscratch.json"

echo "== --out naming the config or a kernel"
cfg self.json
cp "$tmp/self.json" "$tmp/self.orig"
expect 2 "self.json would be written over $tmp/self.json, an input of this run; give another --out" \
  "$h" run "$tmp/self.json" --backend emu --out "$tmp/self.json" --force
cmp -s "$tmp/self.json" "$tmp/self.orig" || fail "run --out CONFIG overwrote the config"
cp "$tmp/self.json" "$tmp/self.best.csv"
expect 2 "self.best.csv would be written over $tmp/self.best.csv" "$h" run "$tmp/self.best.csv" --backend emu --out "$tmp/self"
cp "$sig" "$tmp/k.cu"
sed "s|\"file\": \"$sig\"|\"file\": \"k.cu\"|" "$tmp/self.json" >"$tmp/kout.json"
expect 2 "would be written over $tmp/k.cu" "$h" check "$tmp/kout.json" --out "$tmp/k.cu"
cmp -s "$tmp/k.cu" "$sig" || fail "check --out KERNEL overwrote the kernel"

echo "== debug --set with an axis twice"
cfg ok.json
expect 2 "--set: axis 'n' is given twice" "$h" debug "$tmp/ok.json" --kernel sigmoid_grid_stride --set n=5,n=9 --out "$tmp/debug"

echo "== tune: a variant of several define combinations"
cfg tune.json '' ', "defines": {"D": [1, 2]}, "tune": {"BS": [32, 64]}'
sed -i 's/"block": \[32\]/"block": ["BS"]/' "$tmp/tune.json"
expect 0 "variants[0] has 2 define combinations; tuning the first, sigmoid_grid_stride[D=1] (--variant LABEL tunes another: sigmoid_grid_stride[D=2])" \
  "$h" tune "$tmp/tune.json" --backend emu --space-only
expect 0 "space of sigmoid_grid_stride[D=2], case 0" "$h" tune "$tmp/tune.json" --backend emu --case 0 \
  --variant 'sigmoid_grid_stride[D=2]' --budget 1 --top 0 --out "$tmp/t"
grep -q '"variant_label":.*"sigmoid_grid_stride\[D=2\]"' "$tmp/t.best.json" 2>/dev/null || fail "tune: no variant_label D=2 in t.best.json"
expect 2 "harness tune: --variant given 2 times: a tune searches one variant's space" \
  "$h" tune "$tmp/tune.json" --backend emu --variant 'sigmoid_grid_stride[D=1]' --variant 'sigmoid_grid_stride[D=2]' --space-only

echo "== the documentation's example configs"
# README's conv2d_sweep (abridged) lists; docs/operators.md's pool2d config runs
# (it bound 9 of pool2d_naive's 10 arguments, on a 2D grid the kernel does not use)
mkdir -p "$tmp/configs"
python3 - "$root" "$tmp/configs" <<'PY' || fail "could not extract the examples"
import re, sys
root, out = sys.argv[1], sys.argv[2]
for doc, start, name in (("README.md", '{\n  "name": "conv2d_sweep"', "readme.json"),
                         ("docs/operators.md", '{"name": "pool2d_sweep"', "operators.json")):
    text = open(f"{root}/{doc}").read()
    blocks = [b for b in re.findall(r"```json\n(.*?)\n```", text, re.S) if b.startswith(start)]
    assert len(blocks) == 1, (doc, len(blocks))
    open(f"{out}/{name}", "w").write(blocks[0].replace('"../kernels/', f'"{root}/kernels/'))
PY
expect 0 "50 cases sampled from 580 combinations with seed 20251129 x 2 variants" "$h" list "$tmp/configs/readme.json"
expect 0 "1 rows written" "$h" run "$tmp/configs/operators.json" --backend emu --case 0 --out "$tmp/doc_pool.csv"

echo "== what only a row can show"
cat >"$tmp/arr.cu" <<'CU'
__constant__ float c_arr[4];
__global__ void sig_arr(const float *x, float *y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = 1.0f / (1.0f + expf(-x[i])) + c_arr[0] * 0.0f;
}
CU
cat >"$tmp/rows.json" <<JSON
{"op": "sigmoid", "axes": {"n": [5]}, "timing": {"repeat": 1}, "check": {"atol": "1e-7 - n * 1e-7"},
 "defaults": {"file": "arr.cu", "kernel": "sig_arr", "block": [32], "grid": [1], "args": ["x", "y", "n"]},
 "variants": [{"name": "negtol"},
              {"name": "strdef", "defines": {"BS": "64 * 2"}, "block": ["BS"]},
              {"name": "hugegrid", "grid": [1099511627776]},
              {"name": "constarr", "constants": {"c_arr": "float: 1"}}]}
JSON
"$h" run "$tmp/rows.json" --backend emu --out "$tmp/rows.csv" >"$tmp/rows.out" 2>&1
rc=$?
[ "$rc" = 1 ] || fail "rows: exit $rc, expected 1: $(tail -5 "$tmp/rows.out")"
got=$(python3 - "$tmp/rows.csv" <<'PY'
import csv, sys
for r in csv.DictReader(open(sys.argv[1], newline="")):
    print(f"{r['variant']} {r['status']} | {r['reason']}")
PY
)
want="negtol launch_error | check.atol '1e-7 - n * 1e-7' = -4e-07: a tolerance must be at least 0
strdef launch_error | block[0] 'BS': expected an integer, got the string \"64 * 2\"
hugegrid launch_error | grid[0] '1099511627776' = 1099511627776 (must be under 2^32: a launch dimension is 32 bits)
constarr launch_error | constants.c_arr 'float: 1': the value is a 4-byte float, the variable c_arr is 16 bytes: a value fills a variable of 4 or 8 bytes; an array takes an input buffer's contents, a struct its fields ([...], as in args)"
[ "$got" = "$want" ] || fail "rows:
$got
expected:
$want"


echo "== a define whose value names an axis: a macro alias compiles, a case's value is explained"
# WIDTH -> n: the kernel's parameter n (an alias, which works), or nothing of the
# kernel's (a compile error that says a define cannot take a case's value)
for k in alias:n missing:count; do
  name=${k%%:*} param=${k#*:}
  cat >"$tmp/w_$name.cu" <<CU
__global__ void sig_w(const float *x, float *y, int $param) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < WIDTH) y[i] = 1.0f / (1.0f + expf(-x[i]));
}
CU
  cat >"$tmp/w_$name.json" <<JSON
{"op": "sigmoid", "axes": {"n": [5, 9]}, "variants": [{"file": "w_$name.cu", "kernel": "sig_w", "block": [32],
 "grid": [1], "defines": {"WIDTH": "n"}, "args": ["x", "y", "n"]}]}
JSON
  "$h" run "$tmp/w_$name.json" --backend emu --out "$tmp/w_$name.csv" >/dev/null 2>&1
done
s=$(python3 -c 'import csv,sys; print(sorted({r["status"] for r in csv.DictReader(open(sys.argv[1]))}))' "$tmp/w_alias.csv")
[ "$s" = "['ok']" ] || fail "WIDTH aliasing the parameter n: $s"
s=$(python3 -c 'import csv,sys; print(next(csv.DictReader(open(sys.argv[1])))["reason"])' "$tmp/w_missing.csv")
case "$s" in *"(the define WIDTH is 'n', the name of an axis: a define is compiled into the variant once"*'"where": "WIDTH == n"'*) ;;
  *) fail "WIDTH naming the axis n: $s" ;; esac
finish
