#!/usr/bin/env bash
# test_zero_outputs.sh: a variant's "zero" (tests/configs/zero_outputs.json, a
# conv2d bias gradient accumulated with atomicAdd, tests/kernels/zero/):
#   - with "zero": ["dbias"], every row is ok on the emulator, cold and --hot (each
#     launch starts from 0, the check after timing too), `harness check` finds
#     nothing (the 0 counts as written), `harness debug` matches;
#   - without it, every row is a mismatch whose reason says the output is all
#     NaN and names the fix, and `harness check` reports the read of the poison;
#   - an input, an unknown name and a non-string are exit 2 naming the JSON path;
#     a single string is a list of one;
#   - scratch buffers (tests/configs/scratch_softmax.json: softmax whose loss the
#     last block reduces, from partial sums in one scratch buffer and a counter
#     in another that "zero" names): ok cold and --hot, check finds nothing,
#     debug matches; the counter not zeroed is an initcheck, partials too small a
#     fault in run and a memcheck in check, each naming the buffer; a name taken by a buffer, a parameter
#     or a define, a size that does not evaluate or is negative, a duplicate, an
#     array: each an error naming the JSON path.
. "$(dirname "$0")/lib.sh"
cfg="$root/tests/configs/zero_outputs.json"
# statuses CSV: "status count" lines, and every reason that is not empty
statuses() {
  python3 - "$1" <<'PY'
import csv, collections, sys
rows = list(csv.DictReader(open(sys.argv[1], newline="")))
print(" ".join(f"{k}:{v}" for k, v in sorted(collections.Counter(r["status"] for r in rows).items())))
for r in rows[:1]:
    print(r["reason"])
PY
}
# variant_cfg NAME ZERO_JSON: the config with the variant's "zero" replaced (empty: removed)
variant_cfg() {
  local z=$2
  if [ -n "$z" ]; then
    sed "s|\"zero\": \\[\"dbias\"\\],|\"zero\": $z,|" "$cfg" >"$tmp/$1.json"
  else
    sed '/"zero": \["dbias"\],/d' "$cfg" >"$tmp/$1.json"
  fi
  mkdir -p "$tmp/kernels/zero" "$tmp/configs"
  cp "$root/tests/kernels/zero/bias_atomic.cu" "$tmp/kernels/zero/"
  mv "$tmp/$1.json" "$tmp/configs/$1.json"
}

echo "== with zero: ok, cold and hot; check and debug"
"$h" run "$cfg" --backend emu --quiet --out "$tmp/cold.csv" >"$tmp/log" 2>&1 || fail "run exited $?: $(tail -n 5 "$tmp/log")"
s=$(statuses "$tmp/cold.csv")
[ "$(head -n 1 <<<"$s")" = "ok:48" ] || fail "cold: $s"
"$h" run "$cfg" --backend emu --quiet --hot --out "$tmp/hot.csv" >"$tmp/log" 2>&1 || fail "run --hot exited $?: $(tail -n 5 "$tmp/log")"
s=$(statuses "$tmp/hot.csv")
[ "$(head -n 1 <<<"$s")" = "ok:48" ] || fail "hot: $s"
out=$("$h" check "$cfg" --out "$tmp/check.csv" 2>&1) || fail "check exited $?: $out"
case "$out" in *"0 rows with findings"*) ;; *) fail "check: $out" ;; esac
out=$("$h" debug "$cfg" --kernel bias_atomic --case 5 --out "$tmp/dbg" 2>&1) || fail "debug exited $?: $out"
case "$out" in *"verdict: output matches the reference"*) ;; *) fail "debug: $out" ;; esac

echo "== without zero: mismatch naming the fix; check reports the poison read"
variant_cfg none ""
"$h" run "$tmp/configs/none.json" --backend emu --quiet --out "$tmp/none.csv" >"$tmp/log" 2>&1
s=$(statuses "$tmp/none.csv")
[ "$(head -n 1 <<<"$s")" = "mismatch:48" ] || fail "without zero: $s"
case "$s" in *'every element is NaN/Inf'*'"zero": ["dbias"]'*) ;; *) fail "without zero, the reason: $s" ;; esac
out=$("$h" check "$tmp/configs/none.json" --case 0 --out "$tmp/check2.csv" 2>&1)
case "$out" in *"initcheck: kernel 'bias_atomic'"*"(device buffer 'dbias' + "*"never written"*) ;; *) fail "check without zero: $out" ;; esac
# one finding, the compare-and-swap's: float atomicAdd's first read is not a second
n=$(grep -c "^initcheck: kernel 'bias_atomic'" <<<"$out")
[ "$n" = 1 ] || fail "float atomicAdd on poison: $n initcheck lines, expected 1: $out"

echo "== bad values"
# expect CODE NEEDLE CONFIG
expect() {
  local o rc
  o=$("$h" run "$3" --backend emu --quiet --out "$tmp/bad.csv" 2>&1)
  rc=$?
  [ "$rc" = "$1" ] || fail "$3 exited $rc, expected $1: $o"
  case "$o" in *"$2"*) ;; *) fail "$3: expected \"$2\" in: $o" ;; esac
}
variant_cfg input '["dout"]'
expect 2 "input.json: variants[0].zero[0]: 'dout' is an input of conv2d_backward_bias: only outputs are set to 0 (dbias)" \
  "$tmp/configs/input.json"
variant_cfg unknown '["dbias", "db"]'
expect 2 "unknown.json: variants[0].zero[1]: 'db' is not a buffer of conv2d_backward_bias (its outputs: dbias)" \
  "$tmp/configs/unknown.json"
variant_cfg number '3'
expect 2 "number.json: variants[0].zero: expected an array of the output buffers" "$tmp/configs/number.json"
variant_cfg one '"dbias"'
"$h" run "$tmp/configs/one.json" --backend emu --quiet --case 0-3 --out "$tmp/one.csv" >"$tmp/log" 2>&1 ||
  fail "a single string: $(tail -n 3 "$tmp/log")"
s=$(statuses "$tmp/one.csv")
[ "$(head -n 1 <<<"$s")" = "ok:4" ] || fail "a single string: $s"

echo "== scratch buffers"
sc="$root/tests/configs/scratch_softmax.json"
"$h" run "$sc" --backend emu --quiet --out "$tmp/sc.csv" >"$tmp/log" 2>&1 || fail "scratch run exited $?: $(tail -n 5 "$tmp/log")"
s=$(statuses "$tmp/sc.csv")
[ "$(head -n 1 <<<"$s")" = "ok:32" ] || fail "scratch: $s"
"$h" run "$sc" --backend emu --quiet --hot --out "$tmp/sch.csv" >"$tmp/log" 2>&1 || fail "scratch --hot exited $?"
s=$(statuses "$tmp/sch.csv")
[ "$(head -n 1 <<<"$s")" = "ok:32" ] || fail "scratch --hot: $s"
out=$("$h" check "$sc" --out "$tmp/scc.csv" 2>&1) || fail "scratch check exited $?: $out"
case "$out" in *"0 rows with findings"*) ;; *) fail "scratch check: $out" ;; esac
out=$("$h" debug "$sc" --kernel 'softmax_lastblock[WARPS=4]' --case 9 --out "$tmp/dbg2" 2>&1) || fail "scratch debug exited $?: $out"
case "$out" in *"verdict: output matches the reference"*) ;; *) fail "scratch debug: $out" ;; esac
cp "$root/tests/kernels/zero/softmax_lastblock.cu" "$tmp/kernels/zero/"
# sc_cfg NAME SED: the scratch config edited
sc_cfg() { sed "$2" "$sc" >"$tmp/configs/$1.json"; }
sc_cfg nozero '/"zero": \["done"\],/d'
out=$("$h" check "$tmp/configs/nozero.json" --case 9 --out "$tmp/nz.csv" 2>&1)
case "$out" in *"initcheck: kernel 'softmax_lastblock'"*"atomic"*"device buffer 'done (scratch)'"*"never written"*) ;; *) fail "counter not zeroed: $out" ;; esac
sc_cfg small 's/"partials": "4 \* ceil_div(batch, WARPS)"/"partials": "4"/'
"$h" run "$tmp/configs/small.json" --backend emu --quiet --case 9 --out "$tmp/small.csv" >"$tmp/log" 2>&1
s=$(statuses "$tmp/small.csv")
case "$s" in "fault:2"*"invalid write"*"past the end of device buffer 'partials (scratch)'"*) ;; *) fail "partials too small, run: $s" ;; esac
out=$("$h" check "$tmp/configs/small.json" --case 9 --out "$tmp/small2.csv" 2>&1)
case "$out" in *"memcheck: kernel 'softmax_lastblock'"*"past the end of device buffer 'partials (scratch)'"*) ;; *) fail "partials too small, check: $out" ;; esac
sc_cfg clash1 's/"scratch": {"partials"/"scratch": {"loss"/'
expect 2 "clash1.json: variants[0].scratch.loss: 'loss' is already a buffer of softmax_cross_entropy" "$tmp/configs/clash1.json"
sc_cfg clash2 's/"scratch": {"partials"/"scratch": {"batch"/'
expect 2 "clash2.json: variants[0].scratch.batch: 'batch' is already a parameter of softmax_cross_entropy" \
  "$tmp/configs/clash2.json"
sc_cfg clash3 's/"scratch": {"partials"/"scratch": {"WARPS"/'
expect 2 "clash3.json: variants[0].scratch.WARPS: 'WARPS' is already a define" "$tmp/configs/clash3.json"
sc_cfg array 's/"scratch": {"partials": "4 \* ceil_div(batch, WARPS)", "done": 4}/"scratch": ["partials"]/'
expect 2 "array.json: variants[0].scratch: expected an object of scratch buffers" "$tmp/configs/array.json"
sc_cfg unknown2 's/"done": 4}/"done": "nope * 4"}/'
expect 2 "unknown2.json: variants[0].scratch.done: in 'nope * 4': unknown name 'nope'" "$tmp/configs/unknown2.json"
sc_cfg twice 's/"done": 4}/"done": 4, "done": 8}/'
expect 2 "twice.json: variants[0].scratch.done: 'done' is given twice" "$tmp/configs/twice.json"
sc_cfg negative 's/"done": 4}/"done": "4 - batch * 8"}/'
"$h" run "$tmp/configs/negative.json" --backend emu --quiet --case 5 --out "$tmp/neg.csv" >"$tmp/log" 2>&1
s=$(statuses "$tmp/neg.csv")
case "$s" in "launch_error:2"*"scratch.done '4 - batch * 8' = -52 bytes (must be at least 0)"*) ;; *) fail "negative size: $s" ;; esac

echo "== hints: check's initcheck of an atomic names \"zero\"; a counter in scratch not zeroed; scratch over the budget"
variant_cfg hint ""
"$h" check "$tmp/configs/hint.json" --case 5 --out "$tmp/hint.csv" >"$tmp/log" 2>&1
s=$(statuses "$tmp/hint.csv")
case "$s" in "initcheck:"*"device buffer 'dbias'"*"give the variant \"zero\": [\"dbias\"]"*) ;; *) fail "initcheck hint: $s" ;; esac
# the softmax's counter not zeroed: the loss is never written; the reason names the scratch buffers
"$h" run "$tmp/configs/nozero.json" --backend emu --quiet --case 9 --out "$tmp/nz2.csv" >"$tmp/log" 2>&1
s=$(statuses "$tmp/nz2.csv")
case "$s" in "mismatch:2"*"scratch 'partials', 'done' starts as 0xFF bytes unless \"zero\" names it"*) ;;
  *) fail "counter not zeroed, run: $s" ;; esac
out=$("$h" check "$tmp/configs/nozero.json" --case 9 --out "$tmp/nz3.csv" 2>&1)
s=$(statuses "$tmp/nz3.csv")
case "$s" in *"give the variant \"zero\": [\"done\"]"*) ;; *) fail "counter not zeroed, check: $s" ;; esac
# 64 GiB of scratch: over the emulator's budget a skipped row; with --all, more
# than the machine holds a launch_error (it was a worker killed for memory)
sc_cfg huge 's/"done": 4}/"done": "4 * 1024 * 1024 * 1024 * 16"}/'
"$h" run "$tmp/configs/huge.json" --backend emu --quiet --case 9 --out "$tmp/huge.csv" >"$tmp/log" 2>&1
s=$(statuses "$tmp/huge.csv")
case "$s" in "skipped:2"*"MB of scratch buffers and"*"over the emulator budget of 256 MB"*) ;; *) fail "huge scratch: $s" ;; esac
sc_cfg huger 's/"done": 4}/"done": "pow(2, 62)"}/'
"$h" run "$tmp/configs/huger.json" --backend emu --quiet --all --case 9 --out "$tmp/huger.csv" >"$tmp/log" 2>&1
s=$(statuses "$tmp/huger.csv")
case "$s" in "launch_error:2"*"scratch buffers of"*"GB in all are more than the device's"*) ;; *) fail "huger scratch, --all: $s" ;; esac

echo "== list shows the scratch buffers and what zero sets to 0"
out=$("$h" list "$sc" 2>&1)
case "$out" in *"scratch: partials = 4 * ceil_div(batch, WARPS) bytes, done = 4 bytes"*"zero (set to 0 before every launch): done"*) ;;
  *) fail "list of scratch and zero: $out" ;; esac
out=$("$h" list "$cfg" 2>&1)
case "$out" in *"zero (set to 0 before every launch): dbias"*) ;; *) fail "list of zero: $out" ;; esac

[ "$fails" = 0 ] && echo "test_zero_outputs: all passed"
exit $((fails > 0))
