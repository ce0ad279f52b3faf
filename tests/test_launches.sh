#!/usr/bin/env bash
# test_launches.sh: a variant of several launches ("launches";
# tests/configs/launches.json: PMPP chapter 16's unroll into a scratch buffer,
# then a tiled GEMM, tests/kernels/launches/unroll_gemm.cu):
#   - every row ok on the emulator, cold and --hot; the kernel, grid, block and
#     shared_bytes columns list each launch (';'); check finds nothing; debug runs
#     both launches in order and matches; profile covers both kernels' lines;
#     NVRTC compiles both for sm_90 (a row each); list shows each launch;
#   - a kernel launched twice; a tunable used only by the second launch's geometry;
#   - a fault in a launch names it (scratch too small);
#   - config errors name the JSON path: launches beside the variant's own kernel,
#     an empty list, an unknown key of a launch, a bad kernel name; an argument
#     count that does not match, or a geometry that does not evaluate, is the row's
#     launch_error naming the launch.
. "$(dirname "$0")/lib.sh"
mkdir -p "$tmp/configs" "$tmp/kernels/launches"
cfg="$root/tests/configs/launches.json"
cp "$root/tests/kernels/launches/unroll_gemm.cu" "$tmp/kernels/launches/"
# summary CSV: "status:count ..." then the first row's kernel, grid, block, shared_bytes, reason
summary() {
  python3 - "$1" <<'PY'
import csv, collections, sys
rows = list(csv.DictReader(open(sys.argv[1], newline="")))
print(" ".join(f"{k}:{v}" for k, v in sorted(collections.Counter(r["status"] for r in rows).items())))
for r in rows[-1:]:
    print(r["kernel"], r["grid"], r["block"], r["shared_bytes"])
    print(r["reason"])
PY
}
# edited NAME PYTHON: the config with `v` (its variant) edited by PYTHON
edited() {
  python3 - "$cfg" "$tmp/configs/$1.json" "$2" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
v = d["variants"][0]
exec(sys.argv[3])
json.dump(d, open(sys.argv[2], "w"))
PY
}
# run_case CONFIG CSV [OPTIONS]
run_case() {
  local c=$1 o=$2
  shift 2
  "$h" run "$c" --backend emu --quiet --out "$o" "$@" >"$tmp/log" 2>&1
}

echo "== two launches: run, hot, check, debug, profile, compile, list"
run_case "$cfg" "$tmp/cold.csv" || fail "run exited $?: $(tail -n 5 "$tmp/log")"
s=$(summary "$tmp/cold.csv")
[ "$(head -n 1 <<<"$s")" = "ok:96" ] || fail "cold: $s"
# the last case: n 2, out_ch 17, 12 x 19, 3 x 3: unroll grid ceil(3*10*17/128) x 2, GEMM 11 x 2 x 2
[ "$(sed -n 2p <<<"$s")" = "unroll_chapter;gemm_tiled 4x2x1;11x2x2 128x1x1;16x16x1 0;0" ] || fail "columns: $s"
run_case "$cfg" "$tmp/hot.csv" --hot || fail "run --hot exited $?"
[ "$(summary "$tmp/hot.csv" | head -n 1)" = "ok:96" ] || fail "hot: $(summary "$tmp/hot.csv")"
out=$("$h" check "$cfg" --out "$tmp/check.csv" 2>&1) || fail "check exited $?: $out"
case "$out" in *"0 rows with findings"*) ;; *) fail "check: $out" ;; esac
out=$("$h" debug "$cfg" --kernel unroll_chapter+gemm_tiled --case 95 --out "$tmp/dbg" 2>&1) || fail "debug exited $?: $out"
case "$out" in
  *"launch 1 of 2 (unroll_chapter): grid 4x2x1"*"launch 2 of 2 (gemm_tiled): grid 11x2x2"*"--- launch 1 of 2: unroll_chapter ---"*"--- launch 2 of 2: gemm_tiled ---"*"verdict: output matches the reference"*) ;;
  *) fail "debug: $out" ;;
esac
out=$("$h" profile "$cfg" --case 5 --out "$tmp/prof.csv" 2>&1) || fail "profile exited $?: $out"
case "$out" in *"2 launches"*"unroll_gemm.cu:23 global store"*"unroll_gemm.cu:36 shared load"*) ;; *) fail "profile: $out" ;; esac
out=$("$h" compile "$cfg" --arch sm_90 --cache-dir "$tmp/cache" 2>&1) || fail "compile exited $?: $out"
case "$out" in *"unroll_chapter+gemm_tiled 1: unroll_chapter "*"unroll_chapter+gemm_tiled 2: gemm_tiled "*) ;; *) fail "compile: $out" ;; esac
out=$("$h" list "$cfg" 2>&1)
case "$out" in *"launch 1: unroll_chapter"*"args: in cols"*"launch 2: gemm_tiled"*"args: filter cols bias out"*) ;; *) fail "list: $out" ;; esac

echo "== a kernel twice; a tunable of the second launch only; a fault names its launch"
edited twice 'v["launches"].insert(1, dict(v["launches"][0]))'
run_case "$tmp/configs/twice.json" "$tmp/twice.csv" || fail "twice exited $?: $(tail -n 5 "$tmp/log")"
s=$(summary "$tmp/twice.csv")
[ "$(head -n 1 <<<"$s")" = "ok:96" ] || fail "a kernel twice: $s"
edited tune 'v["launches"].insert(1, dict(v["launches"][0], block=["UB", 1, 1], grid=["ceil_div(in_ch * (h - filter_size + 1) * (w - filter_size + 1), UB)", "n", 1])); v["tune"] = {"UB": [32, 64]}'
out=$("$h" tune "$tmp/configs/tune.json" --backend emu --case 0-1 --out "$tmp/tune" 2>&1) || fail "tune exited $?: $out"
case "$out" in *"(0 failed)"*) ;; *) fail "tune: $out" ;; esac
edited small 'v["scratch"]["cols"] = "4"'
run_case "$tmp/configs/small.json" "$tmp/small.csv" --case 95
s=$(summary "$tmp/small.csv")
case "$s" in "fault:1"*"launch 1 of 2 (unroll_chapter)"*"past the end of device buffer"*) ;; *) fail "a fault: $s" ;; esac

echo "== config errors"
# expect CODE NEEDLE CONFIG
expect() {
  local o rc
  o=$("$h" run "$3" --backend emu --quiet --case 5 --out "$tmp/bad.csv" 2>&1)
  rc=$?
  [ "$rc" = "$1" ] || fail "$3 exited $rc, expected $1: $o"
  case "$o" in *"$2"*) ;; *) fail "$3: expected \"$2\" in: $o" ;; esac
}
edited both 'v["kernel"] = "gemm_tiled"'
expect 2 "both.json: variants[0].launches: the variant gives 'kernel' and launches" "$tmp/configs/both.json"
edited empty 'v["launches"] = []'
expect 2 "empty.json: variants[0].launches: expected an array of 1 to 8 launches" "$tmp/configs/empty.json"
edited key 'v["launches"][1]["blocks"] = v["launches"][1].pop("block")'
expect 2 "key.json: variants[0].launches[1].blocks: unknown key (did you mean 'block'?" "$tmp/configs/key.json"
edited name 'v["launches"][1]["kernel"] = "gemm tiled"'
expect 2 "name.json: variants[0].launches[1].kernel: 'gemm tiled' is not a kernel's C++ name" "$tmp/configs/name.json"
edited args 'v["launches"][1]["args"].pop()'
run_case "$tmp/configs/args.json" "$tmp/args.csv" --case 5
s=$(summary "$tmp/args.csv")
case "$s" in "launch_error:1"*"launches[1] (gemm_tiled): kernel gemm_tiled takes 7 parameters but the config binds 6"*) ;; *) fail "argument count: $s" ;; esac
edited grid 'v["launches"][1]["grid"][0] = "ceil_div(out_ch, 0)"'
run_case "$tmp/configs/grid.json" "$tmp/grid.csv" --case 5
s=$(summary "$tmp/grid.csv")
case "$s" in "launch_error:1"*"launches[1].grid[0] 'ceil_div(out_ch, 0)'"*) ;; *) fail "a bad grid: $s" ;; esac

echo "== three and four launches sharing scratch (softmax): ok; a finding names the launch it came from"
# tests/configs/launches_softmax.json: row_stats<BLOCK>, normalize, reduce<BLOCK> (and reduce twice)
sm="$root/tests/configs/launches_softmax.json"
mkdir -p "$tmp/kernels/sm"
cp "$root/tests/kernels/launches/softmax_pipeline.cu" "$tmp/kernels/sm/"
run_case "$sm" "$tmp/sm.csv" || fail "softmax launches exited $?: $(tail -n 5 "$tmp/log")"
s=$(summary "$tmp/sm.csv")
[ "$(head -n 1 <<<"$s")" = "ok:27" ] || fail "softmax launches: $s"
[ "$(sed -n 2p <<<"$s")" = "row_stats<BLOCK>;normalize;reduce<BLOCK>;reduce<BLOCK> 129x1x1;504x1x1;1x1x1;1x1x1 64x1x1;256x1x1;64x1x1;64x1x1 0;0;0;0" ] ||
  fail "softmax columns: $s"
"$h" check "$sm" --out "$tmp/smc.csv" >"$tmp/log" 2>&1 || fail "check of the softmax launches exited $?: $(tail -n 5 "$tmp/log")"
# row_stats forgets the sum: normalize, the second launch, reads it; the finding
# names normalize (it named the row's last launch, reduce<BLOCK>)
sed 's/stats\[2 \* blockIdx.x + 1\] = s\[0\];//' "$root/tests/kernels/launches/softmax_pipeline.cu" >"$tmp/kernels/sm/bug.cu"
grep -q 'stats\[2 \* blockIdx.x + 1\]' "$tmp/kernels/sm/bug.cu" && fail "the bug was not made"
python3 - "$sm" "$tmp/configs/smbug.json" "$tmp/kernels/sm/bug.cu" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["variants"] = d["variants"][1:]
d["variants"][0]["file"] = sys.argv[3]
json.dump(d, open(sys.argv[2], "w"))
PY
out=$("$h" check "$tmp/configs/smbug.json" --case 4 --out "$tmp/smbug.csv" 2>&1)
case "$out" in *"initcheck: kernel 'normalize' block"*"device buffer 'stats (scratch)' + 4"*"(in normalize)"*) ;;
  *) fail "a read of scratch never written names its launch: $out" ;; esac
case "$out" in *"kernel 'reduce<BLOCK>'"*"(in normalize)"*) fail "a finding named the wrong launch: $out" ;; esac

echo "== defaults and launches"
# defaults.launches applies to a variant that gives no kernel of its own (it
# said "variants[0].kernel: ... it is missing"); one that gives a kernel is a
# single launch; a variant's launches take none of the defaults' launch keys
python3 - "$cfg" "$tmp/configs/dl.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
v = d["variants"][0]
d["defaults"] = {"launches": v.pop("launches"), "file": v.pop("file"), "scratch": v.pop("scratch"),
                 "kernel": "gemm_tiled", "args": ["in"]}
v["name"] = "from_defaults"
d["variants"].append({"name": "own", "launches": d["defaults"]["launches"]})
json.dump(d, open(sys.argv[2], "w"))
PY
run_case "$tmp/configs/dl.json" "$tmp/dl.csv" --case 5 || fail "defaults.launches exited $?: $(tail -n 5 "$tmp/log")"
s=$(summary "$tmp/dl.csv")
case "$s" in "ok:2"*"unroll_chapter;gemm_tiled"*) ;; *) fail "defaults.launches: $s" ;; esac
python3 - "$tmp/configs/dl.json" "$tmp/configs/dlbad.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["defaults"]["launches"][1]["blocks"] = d["defaults"]["launches"][1].pop("block")
d["variants"] = d["variants"][:1]
json.dump(d, open(sys.argv[2], "w"))
PY
expect 2 "dlbad.json: defaults.launches[1].blocks: unknown key (did you mean 'block'?" "$tmp/configs/dlbad.json"

echo "== profile of several launches: the kernel column lists each (it named the last)"
"$h" profile "$sm" --case 4 --out "$tmp/smprof" >"$tmp/log" 2>&1 || fail "profile of the softmax launches exited $?: $(tail -n 5 "$tmp/log")"
k=$(python3 -c 'import csv, sys; print(sorted({r["kernel"] for r in csv.DictReader(open(sys.argv[1])) if r["variant"] == "softmax_reduce_twice"}))' "$tmp/smprof.lines.csv")
[ "$k" = "['row_stats<BLOCK>;normalize;reduce<BLOCK>;reduce<BLOCK>']" ] || fail "profile kernel column: $k"
grep -q "kernel 'row_stats<BLOCK>;normalize;reduce<BLOCK>', 3 launches" "$tmp/log" || fail "profile header: $(grep '^profile of' "$tmp/log")"

echo "== debug_counter bound by name in one launch: left out of plain runs, passed by debug"
dbgc="$root/tests/configs/launches_debug.json"
run_case "$dbgc" "$tmp/dbgc.csv" || fail "debug_counter in args, run exited $?: $(tail -n 5 "$tmp/log")"
s=$(summary "$tmp/dbgc.csv")
# it was "kernel partial_sums takes 5 parameters but the config binds 6 arguments"
[ "$(head -n 1 <<<"$s")" = "ok:8" ] || fail "debug_counter in args, run: $s"
out=$(cd "$tmp" && "$h" debug "$dbgc" --kernel partial_sums+finish 2>&1)
case "$out" in *"launch 1 of 2 (partial_sums)"*"+ debug_counter"*"(the kernel takes no debug_counter)"*"partial o=0 chunk=2"*"verdict: output matches"*) ;;
  *) fail "debug_counter in args, debug: $out" ;; esac
sed 's/ HN_SINGLE_BLOCK_PARAM) {/, int *debug_counter) {/; s/HN_SINGLE_BLOCK_ENTER();//; s/HN_SINGLE_BLOCK_LEAVE();//' \
  "$root/tests/kernels/launches/bias_two_pass.cu" >"$tmp/kernels/sm/always.cu"
python3 - "$dbgc" "$tmp/configs/always.json" "$tmp/kernels/sm/always.cu" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["variants"][0]["file"] = sys.argv[3]
json.dump(d, open(sys.argv[2], "w"))
PY
run_case "$tmp/configs/always.json" "$tmp/always.csv" --case 0
s=$(summary "$tmp/always.csv")
case "$s" in "launch_error:1"*"launches[0] (partial_sums): args[5] binds debug_counter, which exists only in debug runs (SINGLE_BLOCK)"*) ;;
  *) fail "a kernel that always takes the counter: $s" ;; esac

echo "== an unknown argument lists the variant's scratch buffers too"
edited argname 'v["launches"][1]["args"][1] = "col"'
expect 2 "argname.json: variants[0].launches[1].args[1]: unknown argument 'col' (conv2d buffers: in, filter, bias, out; parameters: " "$tmp/configs/argname.json"
expect 2 "; the variant's scratch buffers: cols; or debug_counter;" "$tmp/configs/argname.json"

[ "$fails" = 0 ] && echo "test_launches: all passed"
exit $((fails > 0))
