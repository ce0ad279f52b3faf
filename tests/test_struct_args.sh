#!/usr/bin/env bash
# test_struct_args.sh: a struct passed by value, bound in args as an array of its
# fields (tests/kernels/args/relu_struct.cu):
#   - an empty struct ([], struct Tag {}) is a 1-byte argument, alone or nested;
#   - flat ({n, floor}) and nested ({{x, y}, {n, floor}, scale, tail}, with C's
#     alignment and tail padding) structs, in run, --hot, check and debug, and a
#     __constant__ struct filled by "constants" (pointers included);
#   - a struct whose layout is not the kernel's is a launch_error giving both
#     sizes; so is a constant struct of another size;
#   - bad structs are exit 2 naming the JSON path: debug_counter as a
#     field, nested too deep, too big, an unknown field.
. "$(dirname "$0")/lib.sh"

# config FILE VARIANTS: a relu sweep of those variants
config() {
  cat >"$1" <<JSON
{"name": "structs", "op": "relu", "axes": {"n": [1, 7, 1000]},
 "check": {"atol": 0, "rtol": 0, "min_match": 1.0},
 "defaults": {"file": "$root/tests/kernels/args/relu_struct.cu", "block": [128, 1, 1], "grid": ["ceil_div(n, 128)", 1, 1]},
 "variants": [$2]}
JSON
}
# statuses CSV: "variant status" per row, sorted and counted, then each reason once
statuses() {
  python3 - "$1" <<'PY'
import csv, sys
from collections import Counter
rows = list(csv.DictReader(open(sys.argv[1], newline="")))
for (v, s), n in sorted(Counter((r["variant"], r["status"]) for r in rows).items()):
    print(v, s, n)
for reason in sorted({r["reason"] for r in rows if r["status"] != "ok"}):
    print("reason:", reason)
PY
}

# the committed example: flat, nested and constant structs
cp "$root/tests/configs/struct_args.json" "$tmp/good.json"
sed -i "s|\"\.\./kernels/|\"$root/tests/kernels/|" "$tmp/good.json"

echo "== run, --hot, check"
expect_cmd=("$h")
expect 0 "results:" run "$tmp/good.json" --backend emu --out "$tmp/good.csv"
s=$(statuses "$tmp/good.csv")
for v in flat nested const; do
  case "$s" in *"$v ok 3"*) ;; *) fail "$v: $s" ;; esac
done
expect 0 "results:" run "$tmp/good.json" --backend emu --hot --out "$tmp/hot.csv"
case "$(statuses "$tmp/hot.csv")" in *"flat ok 3"*"nested ok 3"*) ;; *) fail "--hot: $(statuses "$tmp/hot.csv")" ;; esac
expect 0 "0 rows with findings" check "$tmp/good.json" --out "$tmp/check.csv"

echo "== debug, and NVRTC compiles the same bindings"
expect 0 "verdict: output matches the reference" debug "$tmp/good.json" --kernel nested --out "$tmp/dbg" --set n=7
expect 0 "nested" compile "$tmp/good.json" --cache-dir "$tmp/cache"
expect 0 "c_job = [[x, y], [n, float: 0], double: 1, int: 0]" list "$tmp/good.json"

echo "== an empty struct: [] is a 1-byte argument, as C++ sizes struct Tag {}"
config "$tmp/tag.json" '{"name": "tag", "kernel": "relu_tag", "args": ["x", "y", "n", []]},
  {"name": "tag_in_tag", "kernel": "relu_tag", "args": ["x", "y", "n", [[]]]}'
"$h" run "$tmp/tag.json" --backend emu --out "$tmp/tag.csv" >"$tmp/tag.out" 2>&1 || fail "tag run: $(tail -5 "$tmp/tag.out")"
s=$(statuses "$tmp/tag.csv")
for want in "tag ok 3" "tag_in_tag ok 3"; do
  case "$s" in *"$want"*) ;; *) fail "expected '$want' in: $s" ;; esac
done

echo "== a layout that is not the kernel's"
config "$tmp/bad.json" '{"name": "wide", "kernel": "relu_shape", "args": ["x", "y", ["n", "double: 0"]]},
  {"name": "short", "kernel": "relu_const_job", "args": [], "constants": {"c_job": [["x", "y"], ["n", "float: 0"]]}}'
"$h" run "$tmp/bad.json" --backend emu --out "$tmp/bad.csv" >/dev/null 2>&1
s=$(statuses "$tmp/bad.csv")
for want in "wide launch_error 3" "short launch_error 3" \
  "reason: argument 2 ('[n, double: 0]') is a 16-byte struct but parameter 2 of relu_shape is an 8-byte struct" \
  "reason: constants.c_job: the struct [[x, y], [n, float: 0]] takes 24 bytes (its fields laid out as C does), the variable c_job is 40 bytes"; do
  case "$s" in *"$want"*) ;; *) fail "expected '$want' in: $s" ;; esac
done

echo "== bad structs: exit 2 naming the JSON path"
expect_cmd=("$h" list)
config "$tmp/e.json" '{"kernel": "relu_shape", "args": ["x", "y", ["n", "debug_counter"]]}'
expect 2 "variants[0].args[2][1]: debug_counter is a kernel parameter of its own, not a struct field" "$tmp/e.json"
config "$tmp/e.json" '{"kernel": "relu_shape", "args": ["x", "y", [[[[["n"]]]]]]}'
expect 2 "variants[0].args[2][0][0][0][0]: a struct nested more than 4 deep" "$tmp/e.json"
big=$(python3 -c 'print(", ".join(["\"double: 1\""] * 33))')
config "$tmp/e.json" "{\"kernel\": \"relu_shape\", \"args\": [\"x\", \"y\", [$big]]}"
expect 2 "variants[0].args[2]: a struct of 264 bytes (at most 256)" "$tmp/e.json"
config "$tmp/e.json" '{"kernel": "relu_shape", "args": ["x", "y", ["n", "flor"]]}'
expect 2 "variants[0].args[2][1]: unknown argument 'flor'" "$tmp/e.json"

finish
