#!/usr/bin/env bash
# test_new_user.sh: the mistakes a kernel author makes in a first hour with the
# harness, each refused before anything runs (exit 2, a message naming the option
# or the config path and what is wrong) and none of them touching an earlier
# results file; and the natural spellings the harness takes instead of refusing.
. "$(dirname "$0")/lib.sh"
export HARNESS_CACHE_DIR="$tmp/cache"

# A kernel author's own relu: one correct variant, one that forgets the max.
cat >"$tmp/myrelu.cu" <<'CU'
__global__ void my_relu(const float *x, float *y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] > 0 ? x[i] : 0.0f;
}
__global__ void my_relu_copy(const float *x, float *y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i];
}
CU
cat >"$tmp/relu.json" <<'JSON'
{"name": "myrelu", "op": "relu", "axes": {"n": [1000]},
 "defaults": {"block": [256], "grid": ["ceil_div(n, 256)"], "args": ["x", "y", "n"]},
 "variants": [{"file": "myrelu.cu", "kernel": "my_relu"}, {"file": "myrelu.cu", "kernel": "my_relu_copy"}]}
JSON
cfg="$tmp/relu.json"
res="$tmp/r.csv"

expect_cmd=("$h")
expect_name="harness "

echo "== a first run, kept as the results every refusal below must leave alone"
expect 1 "results: $res (2 rows written by this run: 1 ok, 1 failed (1 mismatch))" run "$cfg" --backend emu --quick --out "$res"
case "$out" in *"why rows failed (the first of each status"*"mismatch       my_relu_copy, case 0: first check:"*) ;;
  *) fail "the run does not say why its row failed: $out" ;; esac
cp "$res" "$tmp/r.keep"
untouched() { cmp -s "$res" "$tmp/r.keep" || fail "$1 changed or removed $res"; [ ! -e "$res.unfinished" ] || fail "$1 left $res.unfinished"; }

echo "== options that make no sense, alone or together"
expect 2 "harness run: --backend: 'gpu' is not a backend (cuda, emu or auto)" run "$cfg" --backend gpu --out "$res"
untouched "--backend gpu"
expect 2 "harness run: --min-samples: 0 samples measure nothing; give at least 1" run "$cfg" --min-samples 0 --out "$res"
untouched "--min-samples 0"
expect 2 "harness tune: --max-samples: 0 samples measure nothing" tune "$cfg" --max-samples 0
expect 2 "harness run: --max-samples 2 is under --min-samples 5" run "$cfg" --min-samples 5 --max-samples 2 --out "$res"
expect 2 "harness run: --jobs 0: must be at least 1 (leave it out for the default)" run "$cfg" --jobs 0 --out "$res"
expect 2 "harness debug: --emu-threads 0: must be at least 1" debug "$cfg" --kernel my_relu --emu-threads 0
expect 2 "harness debug: --set n=abc: params.n ('n'): expected an integer" debug "$cfg" --kernel my_relu --set n=abc
expect 2 "harness run: --timeout: must be > 0 (got 0)" run "$cfg" --timeout 0 --out "$res"
expect 2 "harness run: --resume and --force: --resume keeps the rows --out holds, --force starts it over; give one" \
  run "$cfg" --resume --force --out "$res"
untouched "--resume --force"
expect 2 "harness check: --resume and --force" check "$cfg" --resume --force --out "$res"
mkdir -p "$tmp/afolder"
expect 2 "harness run: --out $tmp/afolder is a folder; give a file path (such as results/x.csv)" run "$cfg" --out "$tmp/afolder"
expect 2 "harness profile: --out $tmp/afolder is a folder" profile "$cfg" --out "$tmp/afolder"
expect 2 "harness train: --out $tmp/afolder is a folder" train xor --out "$tmp/afolder"
expect 2 "harness debug: --out $res is a file, not a folder" debug "$cfg" --kernel my_relu --out "$res"
untouched "debug --out FILE"
expect 2 "harness compile: --arch sm_80 and --backend emu: the emulator compiles for the host CPU, not an architecture" \
  compile "$cfg" --backend emu --arch sm_80
expect 2 "harness cache: --quiet and --verbose: give one" cache info --quiet --verbose
expect 2 "harness run: --profile-blocks needs --profile (or harness profile)" run "$cfg" --profile-blocks 4 --out "$res"
expect 2 "harness run: --save-samples and --sanitize: a sanitized run times nothing" \
  run "$cfg" --sanitize all --save-samples --out "$res"
untouched "the refusals above"

echo "== --backend cuda without a GPU: said before anything runs, with what to do"
if [ ! -e /dev/nvidia0 ]; then
  for c in run debug tune; do
    args=("$cfg")
    [ "$c" = debug ] && args+=(--kernel my_relu)
    [ "$c" = run ] && args+=(--out "$res")
    expect 2 "harness $c: --backend cuda: no usable GPU here (" "$c" "${args[@]}" --backend cuda
    case "$out" in *"--backend emu (or auto, the default) runs the kernels on the CPU emulator"*) ;;
      *) fail "$c --backend cuda: no advice: $out" ;; esac
  done
  untouched "--backend cuda without a GPU"
fi

echo "== a run that fails before its first row gives the earlier results back"
expect 2 "--emu-threads 100000: at most" run "$cfg" --backend emu --emu-threads 100000 --out "$res"
untouched "a run whose worker could not start"
[ ! -e "$res.previous" ] || fail "the earlier results were left in $res.previous"
# ... and one that ran replaces them, leaving nothing aside
expect 1 "results: $res (1 rows written by this run: 0 ok, 1 failed (1 mismatch))" run "$cfg" --backend emu --quick --variant my_relu_copy --out "$res"
[ ! -e "$res.previous" ] || fail "a finished run left $res.previous"
cp "$res" "$tmp/r.keep"

echo "== --out a symbolic link: the link stays, the file it names is what is set aside and put back"
mkdir -p "$tmp/linked"
cp "$res" "$tmp/linked/target.csv"
ln -sf "$tmp/linked/target.csv" "$tmp/link.csv"
expect 2 "--emu-threads 100000: at most" run "$cfg" --backend emu --emu-threads 100000 --out "$tmp/link.csv"
[ -L "$tmp/link.csv" ] || fail "a failed run replaced the link $tmp/link.csv"
cmp -s "$res" "$tmp/linked/target.csv" || fail "a failed run through a link lost the file it names"
[ ! -e "$tmp/linked/target.csv.previous" ] && [ ! -e "$tmp/link.csv.previous" ] || fail "a failed run left a .previous"
expect 0 "results: $tmp/link.csv (1 rows written by this run)" run "$cfg" --backend emu --quick --variant my_relu \
  --out "$tmp/link.csv"
[ -L "$tmp/link.csv" ] || fail "a run replaced the link $tmp/link.csv with a file"
grep -q ",my_relu,.*,ok," "$tmp/linked/target.csv" || fail "the run's row is not in the file the link names: $(cat "$tmp/linked/target.csv")"
[ ! -e "$tmp/linked/target.csv.previous" ] || fail "a finished run through a link left target.csv.previous"
# ... and a device (--out /dev/null) is written through and never removed: a
# stand-in for /dev/null where this user may make one (root)
if mknod "$tmp/null" c 1 3 2>/dev/null; then
  expect 2 "--emu-threads 100000: at most" run "$cfg" --backend emu --emu-threads 100000 --out "$tmp/null"
  [ -c "$tmp/null" ] || fail "a failed run with --out a device removed the device"
fi

echo "== precision as a word: the natural spellings, or the accepted ones listed"
for word in double fp64 float64; do
  sed "s/\"kernel\": \"my_relu\"}/\"kernel\": \"my_relu\", \"precision\": \"$word\"}/" "$cfg" >"$tmp/p.json"
  expect 0 "1 cases x 2 variants = 2 rows" list "$tmp/p.json"
done
sed 's/"kernel": "my_relu"}/"kernel": "my_relu", "precision": "fp8"}/' "$cfg" >"$tmp/p.json"
expect 2 "variants[0].precision: 'fp8' is not a precision: give float, double, half, bfloat16 or tf32" list "$tmp/p.json"

echo "== plot --all draws results, not the CSVs of check and profile"
mkdir -p "$tmp/proj/results"
cp "$tmp/r.keep" "$tmp/proj/results/myrelu.csv"
expect 1 "rows written by this run" check "$cfg" --out "$tmp/proj/results/myrelu.check.csv"
expect 1 "results: $tmp/proj/results/myrelu.profile.csv" profile "$cfg" --out "$tmp/proj/results/myrelu.profile.csv"
out=$(cd "$tmp/proj" && "$h" plot --all 2>&1)
rc=$?
[ "$rc" = 0 ] || fail "plot --all: exit $rc: $out"
case "$out" in *"3 CSVs of harness check, profile or tune passed over"*) ;; *) fail "plot --all: no note of the passed-over files: $out" ;; esac
case "$out" in *"myrelu.check"* | *"myrelu.profile"*) fail "plot --all drew a check or profile CSV: $out" ;; esac
[ -e "$tmp/proj/plots/myrelu.png" ] || fail "plot --all: no plots/myrelu.png: $out"

echo "== a config given to plot or compare, which read results"
expect 2 "harness plot: $cfg is a config, not a results CSV: harness run $cfg writes its results" plot "$cfg"
expect 2 "harness compare: $cfg is a config, not a results CSV" compare "$cfg"
expect 2 "harness compare: $tmp/nothere.csv: no such file" compare "$res" "$tmp/nothere.csv"

echo "== --help says what each command's options do there, and offers only what it uses"
expect 0 "--out PATH                   the results CSV (default results/<name>.csv" help run
expect 0 "--out PATH                   folder for the mismatch map" debug --help
expect 0 "--out PATH                   the prefix of the tune's files" tune --help
expect 0 "--all                        every results CSV under results/ into plots/" plot --help
expect 0 "\`ops\` (every" bench --help
expect 0 "--quiet                      no verdict table" merge --help
expect 2 "harness info: --verbose is not an option of info" info --verbose
expect 2 "harness run: --verbose is not an option of run" run "$cfg" --verbose --out "$res"
expect 2 "harness list: --quiet is not an option of list" list "$cfg" --quiet
expect 2 "harness bench ops: --quick: ops has no quick form" bench ops --quick
untouched "the help and option checks"

finish
