#!/usr/bin/env bash
# test_config_expr.sh: the expression language as configs use it (where, params,
# check, variant where), through `harness list` and `harness run`: float
# arithmetic and comparisons (no integer division where a float is involved),
# floor, ceil, float(), int() (truncation, and its range: out of range or NaN is
# an error naming the expression, exit 2), integral floats accepted where an
# integer is needed and fractional ones refused.
. "$(dirname "$0")/lib.sh"
kernel="$root/kernels/conv2d/conv2d_pad.cu"

# cfg WHERE PARAMS [VARIANT_EXTRA]: a config over img_size 6..9 into $tmp/c.json
cfg() {
  cat >"$tmp/c.json" <<JSON
{"op": "conv2d", "params": {$2},
 "axes": {"in_ch": [1, 2], "out_ch": [1], "filter_size": [3], "img_size": [6, 7, 8, 9]},
 "where": $1, "check": {"atol": "1e-4 * sqrt(in_ch * 9.0)", "rtol": "float(1) / 2000", "min_match": 1.0},
 "timing": {"repeat": 1},
 "variants": [{"file": "$kernel", "kernel": "conv2d_pad", "block": [8, 8],
   "grid": ["ceil_div(w, 8)", "ceil_div(h, 8)"],
   "args": ["in", "out", "filter", "h", "w", "in_ch", "out_ch", "filter_size", "pad"] ${3:-}}]}
JSON
}
# cases WHERE [PARAMS]: the labels `harness list` prints, space-separated
cases() {
  cfg "$1" "${2:-}"
  "$h" list "$tmp/c.json" 2>&1 | awk '/^cases:/ {on = 1; next} on && $1 ~ /^[0-9]+$/ {printf "%s%s ", $6, ($2 == 2 ? "c2" : "")}'
}
expect_cases() { # WHERE PARAMS EXPECTED
  local got
  got=$(cases "$1" "$2")
  [ "$got" = "$3" ] || fail "where $1, params {$2}: cases '$got', expected '$3'"
}
expect_error() { # WHERE PARAMS NEEDLE
  cfg "$1" "$2"
  local out
  out=$("$h" list "$tmp/c.json" 2>&1)
  local rc=$?
  [ "$rc" = 2 ] || fail "where $1, params {$2}: exit $rc, expected 2: $out"
  case "$out" in *"$3"*) ;; *) fail "where $1, params {$2}: expected \"$3\" in: $out" ;; esac
}

echo "== float arithmetic and comparisons"
# 6/3.0 = 2, 7/3.0 = 2.33, 8/3.0 = 2.67, 9/3.0 = 3 (integer division would keep only 9)
expect_cases '"img_size / 3.0 > 2.5 && in_ch == 1"' '' "8x8x1 9x9x1 "
expect_cases '"float(img_size) / 2 == 3.5 && in_ch == 1"' '' "7x7x1 "
expect_cases '"img_size / 2 == 3 && in_ch == 1"' '' "6x6x1 7x7x1 "   # integers: C division
expect_cases '"img_size >= 7.5 && in_ch == 1"' '' "8x8x1 9x9x1 "
expect_cases '"img_size <= 7.0 && in_ch < 1.5"' '' "6x6x1 7x7x1 "
expect_cases '"img_size != 7.0 && in_ch * 0.5 == 1"' '' "6x6x2c2 8x8x2c2 9x9x2c2 "
expect_cases '"img_size % 2.5 > 1.6 && in_ch == 1"' '' "7x7x1 "   # fmod: 1, 2, 0.5, 1.5
echo "== floor and ceil"
expect_cases '"floor(img_size / 4.0) == 2 && in_ch == 1"' '' "8x8x1 9x9x1 "
expect_cases '"ceil(img_size / 4.0) == 2 && in_ch == 1"' '' "6x6x1 7x7x1 8x8x1 "
expect_cases '"floor(-img_size / 4.0) == -2 && in_ch == 1"' '' "6x6x1 7x7x1 8x8x1 "
# As parameters: integral results are integers; h is ceil(img/4), w is floor(1.5 img).
expect_cases '"in_ch == 1"' '"h": "int(ceil(img_size / 4.0))", "w": "int(floor(img_size * 1.5))"' "2x9x1 2x10x1 2x12x1 3x13x1 "
expect_cases '"in_ch == 1"' '"h": "floor(img_size / 4.0)", "w": "ceil(img_size / 4.0)"' "1x2x1 1x2x1 2x2x1 2x3x1 "
expect_error '1' '"h": "img_size / 4.0"' "params.h ('img_size / 4.0'): expected an integer, got 1.5"
echo "== int(): truncation and range"
expect_cases '"int(2.9) == 2 && int(-2.9) == -2 && int(img_size / 4.0) == 1 && in_ch == 1"' '' "6x6x1 7x7x1 "
expect_cases '"int(9.2e18 - 1e16) > 0 && int(-9.1e18) < 0 && in_ch == 2 && img_size == 6"' '' "6x6x2c2 "
expect_error '"int(1e19) > 0"' '' "where[0] ('int(1e19) > 0'): at column 1: int() of a value out of range"
expect_error '"int(-1e19) < 0"' '' "int() of a value out of range"
expect_error '"int(sqrt(-1.0)) == 0"' '' "int() of a value out of range"   # NaN
expect_error '"in_ch > 1 || int(img_size * 2e18) > 0"' '' "int() of a value out of range"
expect_error '1' '"h": "int(img_size * 2e18)"' "params.h ('int(img_size * 2e18)')"

echo "== an unknown name lists the known ones, each once"
expect_error '"in_ch == true"' '' "where: in 'in_ch == true': unknown name 'true' (known here: in_ch, out_ch, filter_size, img_size, n, h, w, padding, pad, use_bias, layout)"

echo "== expressions in check and in a variant's where, through a run"
cfg '"img_size <= 7"' '' ', "where": "img_size / 2.0 > 3.4"'
"$h" run "$tmp/c.json" --backend emu --out "$tmp/r.csv" >"$tmp/r.out" 2>&1 || fail "run: $(tail -5 "$tmp/r.out")"
got=$(python3 - "$tmp/r.csv" <<'PY'
import csv, sys
for r in csv.DictReader(open(sys.argv[1], newline="")):
    print(r["in_ch"], r["img_size"], r["status"], r["atol"], r["rtol"], r["reason"])
PY
)
want="1 6 skipped   where 'img_size / 2.0 > 3.4' is false
1 7 ok 0.0003 0.0005 
2 6 skipped   where 'img_size / 2.0 > 3.4' is false
2 7 ok 0.000424 0.0005 "
[ "$got" = "$want" ] || fail "run rows:
$got
expected:
$want"

finish
