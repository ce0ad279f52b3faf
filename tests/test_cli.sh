#!/usr/bin/env bash
# test_cli.sh: the command line: bad input gives a message naming the file, the
# JSON path and what was expected, exit code 2, and runs nothing; usage errors;
# `--backend cuda` on a machine without a GPU says so; list and compile work
# without a GPU.
. "$(dirname "$0")/lib.sh"

kernel="$root/kernels/conv2d/conv2d_pad.cu"
good() { # a valid config with $1 spliced into the top level
  cat <<JSON
{"op": "conv2d", "axes": {"in_ch": [1], "out_ch": [1], "filter_size": [3], "img_size": [8]} $1,
 "variants": [{"file": "$kernel", "kernel": "conv2d_pad", "block": [8, 8],
   "grid": ["ceil_div(w, 8)", "ceil_div(h, 8)"],
   "args": ["in", "out", "filter", "h", "w", "in_ch", "out_ch", "filter_size", "pad"]}]}
JSON
}

expect 2 "missing.json: cannot open" "$h" run "$tmp/missing.json"
printf '{"op": "conv2d", "axes": {' >"$tmp/broken.json"
expect 2 "broken.json:1:" "$h" run "$tmp/broken.json"
good ', "sampel": {"count": 3}' >"$tmp/key.json"
expect 2 "key.json: sampel: unknown key (did you mean 'sample'?" "$h" run "$tmp/key.json"
good ', "check": {"atol": [1]}' >"$tmp/type.json"
expect 2 "type.json: check.atol: expected a number or an expression string, got an array" "$h" run "$tmp/type.json"
good ', "where": "in_ch >> 2"' >"$tmp/expr.json"
expect 2 "expr.json: where: in 'in_ch >> 2': at column" "$h" list "$tmp/expr.json"
# Nothing ran: no results file appeared.
[ ! -e results/key.csv ] || fail "a bad config wrote results"

expect 2 "unknown option '--frobnicate'" "$h" run "$tmp/key.json" --frobnicate
expect 2 "unknown command 'runn'" "$h" runn
expect 2 "missing the config file" "$h" run
expect 2 "--seed: 'abc' is not a number" "$h" run configs/conv2d_sweep.json --seed abc
expect 2 "--variant nope: no such variant" "$h" run configs/conv2d_sweep.json --variant nope --backend emu --out "$tmp/x.csv"
expect 0 "harness" "$h" --version
expect 0 "commands:" "$h" --help

good '' >"$tmp/ok.json"
expect 0 "1 cases" "$h" list "$tmp/ok.json"
expect 0 "50 cases sampled from 580 combinations" "$h" list configs/conv2d_sweep.json
expect 0 "conv2d_pad_z_out_shared_halo[ACCUM_DTYPE=double]" "$h" compile configs/conv2d_sweep.json --arch sm_90
expect 0 "registers" "$h" compile configs/conv2d_sweep.json --arch sm_80 --verbose

if ! nvidia-smi >/dev/null 2>&1; then
  expect 2 "--backend cuda: no usable GPU here" "$h" run configs/conv2d_sweep.json --backend cuda --out "$tmp/cuda.csv"
  expect 0 "cuda  no:" "$h" info
fi

# A kernel that does not compile is a row, not a crash; the sweep goes on.
cat >"$tmp/bad.cu" <<'CU'
__global__ void bad(float *out) {
    out[threadIdx.x] = not_declared;
}
CU
cat >"$tmp/mixed.json" <<JSON
{"op": "conv2d", "axes": {"in_ch": [1], "out_ch": [1], "filter_size": [3], "img_size": [8]},
 "check": {"min_match": 1.0}, "timing": {"repeat": 2},
 "variants": [
  {"file": "bad.cu", "kernel": "bad", "block": [8, 8], "grid": [1, 1], "args": ["out"]},
  {"file": "$kernel", "kernel": "conv2d_pad", "name": "too_big", "block": [64, 32], "grid": [1, 1],
   "args": ["in", "out", "filter", "h", "w", "in_ch", "out_ch", "filter_size", "pad"]},
  {"file": "$kernel", "kernel": "conv2d_pad", "name": "wrong_args", "block": [8, 8], "grid": [1, 1],
   "args": ["in", "out", "filter", "h", "w", "in_ch", "out_ch", "filter_size"]},
  {"file": "$kernel", "kernel": "conv2d_pad", "block": [8, 8], "grid": ["ceil_div(w, 8)", "ceil_div(h, 8)"],
   "args": ["in", "out", "filter", "h", "w", "in_ch", "out_ch", "filter_size", "pad"]}]}
JSON
outp=$("$h" run "$tmp/mixed.json" --backend emu --out "$tmp/mixed.csv" 2>&1)
rc=$?
[ "$rc" = 1 ] || fail "mixed sweep exited $rc, expected 1: $outp"
grep -q '^0,1,1,3,8,.*,bad,bad,.*compile_error,.*not_declared' "$tmp/mixed.csv" || fail "no compile_error row: $(cat "$tmp/mixed.csv")"
grep -q 'too_big,.*launch_error,.*2048 threads' "$tmp/mixed.csv" || fail "no launch_error row for the block: $(cat "$tmp/mixed.csv")"
grep -q 'wrong_args,.*launch_error,.*parameters' "$tmp/mixed.csv" || fail "no launch_error row for the arguments: $(cat "$tmp/mixed.csv")"
grep -q ',conv2d_pad,conv2d_pad,emu,.*,ok,' "$tmp/mixed.csv" || fail "the good variant did not run: $(cat "$tmp/mixed.csv")"

echo "== a results folder under a file; train without its task"
touch "$tmp/a_file"
expect 2 "$tmp/a_file/sub: cannot create folder: $tmp/a_file is a file, not a folder" "$h" run "$root/configs/relu_sweep.json" --backend emu \
  --out "$tmp/a_file/sub/r.csv"
expect 2 "harness train: missing the task (harness train xor|mnist|gradcheck)" "$h" train

finish
