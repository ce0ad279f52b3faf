#!/usr/bin/env bash
# test_cli_usage.sh: the command line's own errors (exit 2, a message naming the
# option, nothing run) and help, and `harness compile` without a GPU: it says
# which architecture it compiles for, reports registers for NVRTC and dashes for
# the emulator, and a variant that does not compile is a line and exit 1.
. "$(dirname "$0")/lib.sh"
cfg="$root/tests/configs/run_options.json"

# expect CODE NEEDLE ARGS...: harness ARGS exits CODE with NEEDLE in stdout+stderr
expect_cmd=("$h")
expect_name="harness "

echo "== usage errors"
expect 2 "usage: harness COMMAND [ARGS] [OPTIONS]" # no command at all
expect 2 "harness run: unexpected argument 'extra.json'" run "$cfg" extra.json
expect 2 "harness run: --quick takes no value" run "$cfg" --quick=1
expect 2 "harness run: --seed needs a value (N)" run "$cfg" --seed
expect 2 "harness run: --jobs: '1.5' is not a whole number >= 0" run "$cfg" --jobs 1.5
expect 2 "harness run: --jobs: '-1' is not a whole number >= 0" run "$cfg" --jobs -1
expect 2 "harness run: --emu-threads: '3000000000' is not a whole number >= 0" run "$cfg" --emu-threads 3000000000
expect 2 "--kernel-timeout: must be > 0 (got 0); 0 would mean no limit, which is not offered" run "$cfg" --kernel-timeout 0
expect 2 "harness run: --max-gflop: must be >= 0 (got -1)" run "$cfg" --max-gflop -1
expect 2 "--max-noise: 'nan' is not a number" run "$cfg" --max-noise nan
expect 2 "--min-time: '1s' is not a number" run "$cfg" --min-time 1s
expect 2 "harness list: --backend is not an option of list (harness list --help lists them)" list "$cfg" --backend emu
expect 2 "harness info: --quick is not an option of info" info --quick
many=()
for i in $(seq 33); do many+=(--variant "v$i"); done
expect 2 "harness run: too many --variant options" run "$cfg" "${many[@]}"
[ ! -e results/run_options.csv ] || fail "a usage error wrote results"

echo "== --opt=value and help"
expect 0 "8 cases x 3 variants" list "$cfg" --seed=5
expect 0 "usage: harness run CONFIG [OPTIONS]" help run
case "$out" in *"--min-samples N"*"--help"*) ;; *) fail "help run lists no options: $out" ;; esac
expect 0 "bench    [reference|ops|emu|tune]  print the harness's own benchmark figures" help
expect 0 "usage: harness list CONFIG [OPTIONS]" list -h
expect 0 "harness " --version

echo "== harness compile"
if [ ! -e /dev/nvidia0 ]; then
  expect 0 "compiling for sm_90 (--arch to choose)" compile "$cfg"
  case "$out" in *"run_options: 3 variants for sm_90"*) ;; *) fail "compile: $out" ;; esac
fi
expect 0 "run_options: 3 variants for sm_80" compile "$cfg" --arch sm_80
line=$(printf '%s\n' "$out" | grep '^conv_plain ')
set -- $line
[ "$#" -ge 7 ] && [ "$2" -gt 0 ] 2>/dev/null || fail "compile --arch sm_80: no register count for conv_plain: '$line'"
expect 0 "run_options: 3 variants for the CPU emulator" compile "$cfg" --backend emu
printf '%s\n' "$out" | grep -q '^conv_plain  *-  *-  *-  *-  *-  *[0-9.]*' || fail "compile --backend emu: $out"
# A variant that does not compile: a line saying so, its error on stderr, exit 1.
cat >"$tmp/typo.cu" <<'CU'
__global__ void typo(float *out) { out[threadIdx.x] = not_declared; }
CU
cat >"$tmp/typo.json" <<JSON
{"op": "conv2d", "axes": {"in_ch": [1], "out_ch": [1], "filter_size": [3], "img_size": [8]},
 "variants": [{"file": "typo.cu", "kernel": "typo", "block": [8, 8], "grid": [1, 1], "args": ["out"]},
              {"file": "$root/kernels/conv2d/conv2d_pad.cu", "kernel": "conv2d_pad", "block": [8, 8], "grid": [1, 1],
               "defines": {"ACCUM_DTYPE": "float"},
               "args": ["in", "out", "filter", "h", "w", "in_ch", "out_ch", "filter_size", "pad"]}]}
JSON
for be in cuda emu; do
  arch=(--arch sm_90)
  [ "$be" = emu ] && arch=()
  expect 1 "typo                                             compile error" compile "$tmp/typo.json" --backend $be "${arch[@]}" --cache-dir "$tmp/cache"
  case "$out" in *not_declared*) ;; *) fail "compile --backend $be: the error is not shown: $out" ;; esac
  printf '%s\n' "$out" | grep -q '^conv2d_pad ' || fail "compile --backend $be stopped at the broken variant: $out"
done 2>/dev/null
# (--arch applies to cuda only; with --backend emu it is refused: test_new_user.)

finish
