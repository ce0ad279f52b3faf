#!/usr/bin/env bash
# test_constants.sh: a variant's "constants", the module variables the harness
# writes before a row's launches (the author's cudaMemcpyToSymbol):
#   - PMPP chapter 7's constant-memory convolution (tests/configs/constants.json):
#     the filter (an input buffer), the image sizes (parameters) and the padding
#     value (a namespaced variable) reach the kernel, cold, --hot and in debug;
#   - a variable smaller than its buffer is a launch_error naming both sizes, and
#     a smaller case after it is ok (the rest of the variable is zeroed);
#   - a variant that leaves the filter out reads zeros and mismatches;
#   - two launches share the module's variables: the first writes a __device__
#     count the second reads, beside a __constant__ the constants write;
#   - a scalar of another size, a name the file does not declare, and bad
#     bindings (an output, an unknown name, not a C++ name, not an object,
#     debug_counter) are named.
. "$(dirname "$0")/lib.sh"
cfg=$root/tests/configs/constants.json

# rows CSV: "variant status" per row, then the reasons of launch errors
rows() {
  python3 - "$1" <<'PY'
import csv, sys
from collections import Counter
rows = list(csv.DictReader(open(sys.argv[1], newline="")))
for (v, s), n in sorted(Counter((r["variant"], r["status"]) for r in rows).items()):
    print(v, s, n)
small_ok = all((r["status"] == "ok") == (int(r["in_ch"]) * int(r["out_ch"]) * int(r["filter_size"]) ** 2 <= 16)
               for r in rows if r["variant"] == "const_small")
print("const_small ok exactly where the filter fits:", small_ok)
for r in rows:
    if r["status"] == "launch_error":
        print("reason:", r["reason"])
        break
PY
}

echo "== run, on the emulator"
"$h" run "$cfg" --backend emu --quiet --out "$tmp/cold.csv" >"$tmp/log" 2>&1
rc=$?
[ $rc = 1 ] || fail "run exited $rc, expected 1 (no_filter mismatches): $(tail -5 "$tmp/log")"
s=$(rows "$tmp/cold.csv")
for want in "const ok 36" "no_filter mismatch 36" "const_small launch_error 21" "const_small ok 15" \
  "const_small ok exactly where the filter fits: True" \
  "reason: constants.F_c: the buffer filter is 100 bytes (25 float32), more than the 64 bytes of the variable F_c"; do
  case "$s" in *"$want"*) ;; *) fail "expected '$want' in: $s" ;; esac
done

echo "== --hot"
"$h" run "$cfg" --backend emu --hot --quiet --out "$tmp/hot.csv" >"$tmp/log" 2>&1
rc=$?
[ $rc = 1 ] || fail "run --hot exited $rc, expected 1"
s=$(rows "$tmp/hot.csv")
case "$s" in *"const ok 36"*) ;; *) fail "--hot: $s" ;; esac

echo "== debug"
expect 0 "verdict: output matches the reference" "$h" debug "$cfg" --kernel const --out "$tmp/dbg" \
  --set in_ch=3,out_ch=4,filter_size=5,hw=7

echo "== NVRTC finds every variable (a namespaced one by its lowered name)"
expect 0 "const_small" "$h" compile "$cfg" --cache-dir "$tmp/cache"

echo "== launches share the module's variables (tests/configs/device_vars.json)"
"$h" run "$root/tests/configs/device_vars.json" --backend emu --quiet --out "$tmp/dv.csv" >"$tmp/log" 2>&1 ||
  fail "device_vars exited $?: $(tail -5 "$tmp/log")"
s=$(rows "$tmp/dv.csv")
case "$s" in *"shared_state ok 4"*) ;; *) fail "device_vars: $s" ;; esac

# variant JSON: a one-variant config of the convolution with that variant
variant() {
  cat >"$tmp/v.json" <<JSON
{"name": "v", "op": "conv2d", "params": {"h": 5, "w": 6, "pad": 0},
 "axes": {"in_ch": [1], "out_ch": [2], "filter_size": [3]},
 "defaults": {"file": "$root/tests/kernels/constants/conv2d_const.cu", "kernel": "conv2d_const",
              "block": [8, 8, 1], "grid": [1, 1, "out_ch"], "args": ["in", "out", "in_ch", "out_ch", "filter_size"]},
 "variants": [$1]}
JSON
}
# status_of: the status and reason of the one row of $tmp/v.csv
status_of() {
  python3 -c 'import csv,sys; r=next(csv.DictReader(open(sys.argv[1]))); print(r["status"], r["reason"])' "$tmp/v.csv"
}

echo "== a scalar of another size"
variant '{"constants": {"F_c": "filter", "c_h": "long: h", "c_w": "w"}}'
"$h" run "$tmp/v.json" --backend emu --quiet --out "$tmp/v.csv" >"$tmp/log" 2>&1
s=$(status_of)
case "$s" in "launch_error constants.c_h 'long: h': the value is a 8-byte long, the variable c_h is 4 bytes"*) ;;
  *) fail "long into an int: $s" ;; esac

echo "== a variable the file does not declare"
variant '{"constants": {"G_c": "filter"}}'
"$h" run "$tmp/v.json" --backend emu --quiet --out "$tmp/v.csv" >"$tmp/log" 2>&1
s=$(status_of)
case "$s" in "compile_error"*"G_c"*) ;; *) fail "undeclared G_c: $s" ;; esac

echo "== bad bindings: exit 2 naming the JSON path"
expect_cmd=("$h" list)
variant '{"constants": {"F_c": "out"}}'
expect 2 "variants[0].constants.F_c: 'out' is an output of conv2d" "$tmp/v.json"
variant '{"constants": {"F_c": "filtre"}}'
expect 2 "variants[0].constants.F_c: unknown argument 'filtre'" "$tmp/v.json"
variant '{"constants": {"F c": "filter"}}'
expect 2 "'F c' is not the C++ name of a variable" "$tmp/v.json"
variant '{"constants": ["F_c"]}'
expect 2 "variants[0].constants: expected an object of module variables" "$tmp/v.json"
variant '{"constants": {"F_c": "debug_counter"}}'
expect 2 "debug_counter is a kernel argument of debug runs, not a constant" "$tmp/v.json"

finish
