#!/usr/bin/env bash
# check.sh OUTDIR [smoke]: everything that needs a GPU, as one prepared script.
#
# On a lent GPU machine (the `device` tool: about 15 minutes of device time for a
# whole session, 10 minutes a command, at most 8 files back from $OUT), run it as
#   HARNESS_CHECK_BUDGET=540 tests/gpu/check.sh "$OUT"      (timeout_s 600, carry .deps)
# The steps run in the order of what is still unmeasured, so whatever the budget
# cuts is the least needed; a second call can skip what the first did with
# HARNESS_CHECK_SKIP="build-step-names ..." (shell patterns; the build is redone
# incrementally where build-gpu/ survives, on a machine still warm).
#
# On a machine with an NVIDIA GPU and the CUDA toolkit but no package access:
#   1. unpacks the .deb files carried in .deps/ (tests/gpu/fetch-deps.sh) into
#      .deps/prefix when the machine lacks cJSON,
#   2. builds the binary and the GPU-only test (./build-gpu) and runs that test,
#   3. runs the variants whose host code no GPU has run yet, a minute or two: zero,
#      scratch and launches (tests/configs/zero_outputs.json, scratch_softmax.json,
#      launches.json, device_vars.json (launches sharing a __device__ variable: one
#      module per compiled file), struct_args.json ...: every row ok) and constants
#      (tests/configs/constants.json: each row's status as on the emulator),
#   4. trains XOR and the chapter's CNN on Fashion-MNIST with harness train, and the
#      same CNN with PyTorch (tests/gpu/train_torch.py) for the comparison (issue 12),
#      and checks the saved layers against torch autograd,
#      then runs every operator's sweep with its cuBLAS / cuDNN rows and checks every
#      baseline row (ok, or skipped with a reason; the cuDNN rows of conv2d's
#      gradients must be ok but where cuDNN cannot pose the case:
#      tests/gpu/check_baselines.py --require), then compares every operator's
#      outputs with PyTorch (tests/torch_crosscheck.py) (issue 10),
#   5. records a brute-force tune journal of tests/configs/conv2d_igemm_space.json,
#      compares the strategies on it, and tunes configs/conv2d_tune.json and
#      configs/gemm_tune.json (issue 11),
#   6. runs `harness run configs/conv2d_sweep.json` twice and reports, per row, how
#      much the two medians differ (the step fails when fewer than 95 % of the rows
#      over 100 us are within 2 %: tests/gpu/compare_runs.py's exit code), the
#      float/double accumulator sweep and a single-block debug run (measured on an
#      H200 on 2026-11-29: results/h200/2026-11-29),
#   7. builds everything and runs the whole test suite, GPU-only tests included.
# Each step is logged on its own and a failing step does not stop the next (the
# summary at the end says what failed). Extra options for both conv2d sweeps can be
# given in HARNESS_SWEEP_OPTS. HARNESS_CHECK_BUDGET (seconds, default 540: the lent
# machine's 600 s command limit less time for the summary and the archives, which
# are what comes back; a run killed at the limit would return neither) bounds the
# whole script: each step gets at most what is left, and a step that would start
# with under 10 s left is skipped. Give more on a machine of one's own.
# OUTDIR ends with three files: summary.txt (what ran, what failed, the figures
# worth reading at once), results.tar.gz (every CSV, journal, chart and report) and
# logs.tar.gz (one log per step); unpack the first under results/<gpu>/<date>/.
#
# `smoke` builds only the binary and the GPU test, runs that test, two cases of the
# sweep and a debug run: a quick look that the CUDA path works before a full run.
set -uo pipefail
out=${1:?usage: tests/gpu/check.sh OUTDIR [smoke]}
mode=${2:-full}
mkdir -p "$out/logs"
out=$(cd "$out" && pwd)
logs=$out/logs
deadline=$(($(date +%s) + ${HARNESS_CHECK_BUDGET:-540}))
cd "$(dirname "$0")/../.."
root=$(pwd)
jobs=$(nproc)
failed=()
step() { # step NAME SECONDS COMMAND...: runs with a time limit, logs to OUTDIR/logs/NAME.log
  local name=$1 limit=$2
  shift 2
  local t0=$(date +%s)
  local left=$((deadline - t0)) pat
  for pat in ${HARNESS_CHECK_SKIP:-}; do
    # shellcheck disable=SC2254
    case $name in $pat)
      echo "== $name: skipped (HARNESS_CHECK_SKIP)"
      return ;;
    esac
  done
  if [ "$left" -lt 10 ]; then
    echo "== $name: skipped, no time left"
    failed+=("$name(skipped)")
    return
  fi
  [ "$limit" -gt "$left" ] && limit=$left
  echo "== $name ($(date -u +%H:%M:%S), limit ${limit} s)"
  if timeout "$limit" "$@" >"$logs/$name.log" 2>&1; then
    echo "   ok in $(($(date +%s) - t0)) s"
  else
    local rc=$?
    echo "   FAILED (exit $rc) in $(($(date +%s) - t0)) s; last lines:"
    tail -n 15 "$logs/$name.log" | sed 's/^/   | /'
    failed+=("$name")
  fi
}
finish() {
  {
    echo "summary: ${#failed[@]} failed step(s): ${failed[*]:-none}"
    [ -f "$logs/repeatability.log" ] && tail -n 4 "$logs/repeatability.log"
    for f in "$logs"/train_mnist.log "$logs"/train_torch.log; do
      [ -f "$f" ] && { echo "-- $(basename "$f"):"; grep -iE "accuracy|per epoch|epoch time" "$f" | tail -n 8; }
    done
    [ -f "$logs/baselines.log" ] && { echo "-- baselines:"; tail -n 5 "$logs/baselines.log"; }
  } | tee "$out/summary.txt"
  # at most 8 files come back from a lent machine: everything but the summary in two archives
  tar -C "$out" -czf "$out/logs.tar.gz" logs && rm -rf "$logs"
  (cd "$out" && find . -mindepth 1 -maxdepth 1 ! -name summary.txt ! -name logs.tar.gz ! -name results.tar.gz \
     -printf '%P\n' | tar -czf results.tar.gz --exclude='*.npy' --exclude='*tensors*' -T - &&
   find . -mindepth 1 -maxdepth 1 ! -name summary.txt ! -name logs.tar.gz ! -name results.tar.gz -exec rm -rf {} +)
  exit ${#failed[@]}
}

export PATH="/usr/local/cuda/bin:$PATH"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,power.draw \
  --format=csv >"$logs/nvidia-smi.csv" 2>&1 || true

cmake_extra=()
if [ ! -f /usr/include/cjson/cJSON.h ] && ls .deps/*.deb >/dev/null 2>&1; then
  mkdir -p .deps/prefix
  for f in .deps/*.deb; do dpkg -x "$f" .deps/prefix; done
  cmake_extra+=("-DCMAKE_PREFIX_PATH=$root/.deps/prefix/usr"
                "-DCJSON_INCLUDE_DIR=$root/.deps/prefix/usr/include"
                "-DCJSON_LIBRARY=$root/.deps/prefix/usr/lib/x86_64-linux-gnu/libcjson.so.1")
  export LD_LIBRARY_PATH="$root/.deps/prefix/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}"
fi
export HARNESS_CACHE_DIR="$root/build-gpu/kernel-cache"

if [ "$mode" = smoke ]; then
  step build 300 bash -c "cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release ${cmake_extra[*]} && cmake --build build-gpu -j $jobs --target harness test_cuda_backend test_nvrtc"
  h=build-gpu/harness
  step info 60 $h info
  step test_cuda_backend 120 bash -c "cd build-gpu && HARNESS_ROOT=$root ./test_cuda_backend"
  step sweep_case6 120 $h run configs/conv2d_sweep.json --backend cuda --case 6 --out "$out/smoke_case6.csv"
  step sweep_case33 120 $h run configs/conv2d_sweep.json --backend cuda --case 33 --out "$out/smoke_case33.csv"
  step baselines 30 bash -c "python3 tests/gpu/check_baselines.py $out/smoke_case*.csv"
  step debug 120 $h debug configs/conv2d_sweep.json --backend cuda --kernel conv2d_pad_z_out_shared_halo \
    --set in_ch=2,out_ch=1,filter_size=3,img_size=20 --out "$logs/debug"
  finish
fi

step build 300 bash -c "cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release ${cmake_extra[*]} && cmake --build build-gpu -j $jobs --target harness test_cuda_backend"
h=build-gpu/harness
step info 60 $h info
step test_cuda_backend 120 bash -c "cd build-gpu && HARNESS_ROOT=$root ./test_cuda_backend"

# First, as they take a minute or two and run host code no GPU has run yet (module
# variables, struct and bool arguments, launches sharing a module): what a variant's
# host code used to do, on a GPU: "zero" (an output accumulated with
# atomics), "scratch" (a last-block reduction) and "launches" (unroll, then GEMM):
# every row must be ok (rows_ok fails the step otherwise)
for cfg in zero_outputs scratch_softmax launches device_vars struct_args linear_wmma public/sgemm_siboehm; do
  step "variant_${cfg#public/}" 60 bash -c "$h run tests/configs/$cfg.json --backend cuda --quick --out $out/${cfg#public/}.csv && \
    python3 -c \"import csv,sys; r=list(csv.DictReader(open('$out/${cfg#public/}.csv'))); \
bad=[x for x in r if x['status']!='ok']; print(len(r)-len(bad), 'of', len(r), 'rows ok'); sys.exit(1 if bad or not r else 0)\""
done
# "constants" (cudaMemcpyToSymbol's job: cuModuleGetGlobal on a GPU): the filter in
# __constant__ memory, scalars, a namespaced variable; a variable too small for the
# filter fails its row, a variant without the filter mismatches
step variant_constants 60 bash -c "$h run tests/configs/constants.json --backend cuda --quick --out $out/constants.csv; \
  python3 -c \"import csv,sys; r=list(csv.DictReader(open('$out/constants.csv'))); \
fits=lambda x: int(x['in_ch'])*int(x['out_ch'])*int(x['filter_size'])**2 <= 16; \
want={'const': lambda x: 'ok', 'no_filter': lambda x: 'mismatch', 'const_small': lambda x: 'ok' if fits(x) else 'launch_error'}; \
bad=[(x['variant'], x['status'], x['reason']) for x in r if x['status'] != want[x['variant']](x)]; \
print(len(r)-len(bad), 'of', len(r), 'rows as expected', bad[:3]); sys.exit(1 if bad or not r else 0)\""

# harness train on the GPU beside PyTorch eager on the same model, recipe and data
# (issue 12): accuracy within a point, time per epoch at most PyTorch's.
data=${HARNESS_FASHION_MNIST:-/usr/share/datasets/fashion-mnist}
if [ ! -d "$data" ] && ls .deps/dataset-fashion-mnist*.deb >/dev/null 2>&1; then
  mkdir -p .deps/prefix
  dpkg -x .deps/dataset-fashion-mnist*.deb .deps/prefix
  data=$root/.deps/prefix/usr/share/datasets/fashion-mnist
fi
step train_xor 60 $h train xor --backend cuda --out "$out/train_xor.csv"
step train_mnist 240 $h train mnist --data "$data" --backend cuda --epochs 3 --out "$out/train_mnist.csv" \
  --save-tensors "$out/train_tensors"
step train_torch 240 python3 tests/gpu/train_torch.py "$data" --epochs 3
step train_tensors 120 python3 tests/train_torch_crosscheck.py "$out/train_tensors"

# Every operator's sweep with its cuBLAS / cuDNN rows (issue 10): conv2d's gradients'
# cudnn_conv_bwd_data, _filter (pad values 0 and -0.75) and _bias are required ok but
# where cuDNN cannot pose the case; then NHWC/CHWN convolution and pooling in every
# layout.
for cfg in configs/*_sweep.json; do
  name=$(basename "$cfg" .json)
  case $name in conv2d_sweep) continue ;; esac
  step "op_$name" 120 $h run "$cfg" --backend cuda --quick --out "$out/$name.csv"
done
step cudnn_layouts 120 $h run configs/conv2d_layouts.json --backend cuda --quick --out "$out/conv2d_layouts.csv"
step cudnn_pool 120 $h run configs/pool2d_layouts.json --backend cuda --quick --out "$out/pool2d_layouts.csv"
step gemm_mixed 120 $h run configs/gemm_mixed.json --backend cuda --quick --out "$out/gemm_mixed.csv"
step baselines 30 bash -c "python3 tests/gpu/check_baselines.py --require cudnn_conv_bwd_data \
  --require cudnn_conv_bwd_filter --require cudnn_conv_bwd_bias $out/*.csv"
# every operator's GPU outputs (variants, cuBLAS, cuDNN) and references against PyTorch
step torch_crosscheck 300 env CROSSCHECK_BACKEND=cuda python3 tests/torch_crosscheck.py $h "$out/crosscheck"

# harness tune (issue 11): a brute-force journal of the committed space (for
# results/<gpu>/<date>/ and the strategy comparison), then a tune of the
# implicit-GEMM family.
step tune_record 300 $h tune tests/configs/conv2d_igemm_space.json --backend cuda --strategy brute_force \
  --budget 100% --top 0 --journal "$out/conv2d_igemm_space.journal" --out "$out/conv2d_igemm_space"
step tune_compare 120 $h tune tests/configs/conv2d_igemm_space.json --replay "$out/conv2d_igemm_space.journal" \
  --compare-strategies --out "$out/conv2d_igemm_space"
step tune_conv2d 300 $h tune configs/conv2d_tune.json --backend cuda --budget 100 --out "$out/conv2d_tune"
step tune_gemm 120 $h tune configs/gemm_tune.json --backend cuda --budget 40 --out "$out/gemm_tune"

# The first seed's sweep, twice, for the timing's repeatability (measured before).
sweep_opts=${HARNESS_SWEEP_OPTS:-}
step sweep1 180 $h run configs/conv2d_sweep.json --backend cuda --out "$out/conv2d_sweep.csv" $sweep_opts
step sweep2 180 $h run configs/conv2d_sweep.json --backend cuda --out "$out/conv2d_sweep.run2.csv" $sweep_opts
if [ -f "$out/conv2d_sweep.csv" ] && [ -f "$out/conv2d_sweep.run2.csv" ]; then
  step repeatability 60 python3 tests/gpu/compare_runs.py "$out/conv2d_sweep.csv" "$out/conv2d_sweep.run2.csv"
  cp "$logs/repeatability.log" "$out/repeatability.txt" 2>/dev/null
fi
step debug 120 $h debug configs/conv2d_sweep.json --backend cuda --kernel conv2d_pad_z_out_shared_halo \
  --set in_ch=2,out_ch=1,filter_size=3,img_size=20 --out "$out/debug"
step accum 90 $h run configs/conv2d_accum.json --backend cuda --quick --out "$out/conv2d_accum.csv"
# The whole suite last, with what time is left.
step tests 600 bash -c "cmake --build build-gpu -j $jobs && cd build-gpu && ctest --output-on-failure -j $jobs"
finish
