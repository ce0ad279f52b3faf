#!/usr/bin/env bash
# test_exercises.sh: the configs that answer PMPP chapter 16's exercises run on the
# emulator and give checked, comparable rows:
#   exercise 2 (configs/conv2d_layouts.json): the same convolution in NCHW, NHWC
#   and CHWN, every row ok, and `compare --by layout` pairs the three;
#   exercise 4 (configs/im2col_unroll.json): the unroll kernels (the chapter's
#   mapping, one thread per element, conv2d's baseline im2col) all correct, with
#   a time and an effective bandwidth.
. "$(dirname "$0")/lib.sh"

echo "== exercise 2: layouts"
# cases 0, 8 and 16 are the same shape (32x32x3 -> 32, n 1) in NCHW, NHWC and CHWN
for c in 0 8 16; do
  "$h" run "$root/configs/conv2d_layouts.json" --backend emu --case $c --quick --out "$tmp/lay$c.csv" >/dev/null 2>&1 ||
    fail "layouts case $c did not run ok"
done
{ cat "$tmp/lay0.csv"; tail -n +2 "$tmp/lay8.csv"; tail -n +2 "$tmp/lay16.csv"; } >"$tmp/lay.csv"
got=$(python3 - "$tmp/lay.csv" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1], newline="")))
print(" ".join(f"{r['layout']}:{r['status']}:{r['label']}" for r in rows))
PY
)
want="NCHW:ok:32x32x3 -> 32, f:3x3, p:0, bias NHWC:ok:32x32x3 -> 32, f:3x3, p:0, bias, NHWC CHWN:ok:32x32x3 -> 32, f:3x3, p:0, bias, CHWN"
[ "$got" = "$want" ] || fail "layout rows: $got"
out=$("$h" compare "$tmp/lay.csv" --by layout --out "$tmp/lay.png" 2>&1)
case "$out" in *"verdict: NHWC: "*" than NCHW (geometric mean over 1 group"*) ;; *) fail "compare --by layout: $out" ;; esac
case "$out" in *"verdict: CHWN: "*" than NCHW"*) ;; *) fail "compare --by layout (CHWN): $out" ;; esac

echo "== exercise 4: the unroll kernel"
"$h" run "$root/configs/im2col_unroll.json" --backend emu --case 4 --quick --out "$tmp/unroll.csv" >"$tmp/unroll.out" 2>&1 ||
  fail "im2col_unroll case 4 failed: $(tail -5 "$tmp/unroll.out")"
got=$(python3 - "$tmp/unroll.csv" <<'PY'
import csv, sys
for r in csv.DictReader(open(sys.argv[1], newline="")):
    ok = r["status"] == "ok" and float(r["gbps"]) > 0 and float(r["time_median_ms"]) > 0 and r["checked"] == "full"
    print(r["variant"], "ok" if ok else r["status"] + ":" + r["reason"])
PY
)
want="unroll_chapter ok
unroll_per_element ok
conv2d_im2col ok"
[ "$got" = "$want" ] || fail "unroll rows: $got"

finish
