#!/usr/bin/env bash
# test_zero_outputs.sh: a variant's "zero" (tests/configs/zero_outputs.json, a
# conv2d bias gradient accumulated with atomicAdd, tests/kernels/zero/):
#   - with "zero": ["dbias"], every row is ok on the emulator, cold and --hot (each
#     launch starts from 0, the check after timing too), `harness check` finds
#     nothing (the 0 counts as written), `harness debug` matches;
#   - without it, every row is a mismatch whose reason says the output is all
#     NaN and names the fix, and `harness check` reports the read of the poison;
#   - an input, an unknown name and a non-string are exit 2 naming the JSON path;
#     a single string is a list of one.
set -u
h=${HARNESS_BIN:?}
root=${HARNESS_ROOT:?}
tmp=${HARNESS_TMP:-/tmp}/zero_outputs.$$
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
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
case "$out" in *"initcheck: kernel 'bias_atomic'"*"never written"*) ;; *) fail "check without zero: $out" ;; esac

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

[ "$fails" = 0 ] && echo "test_zero_outputs: all passed"
exit $((fails > 0))
