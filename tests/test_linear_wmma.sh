#!/usr/bin/env bash
# test_linear_wmma.sh: linear's tensor-core variant (kernels/linear/linear_wmma.cu,
# nvcuda::wmma with tf32 or half inputs) on the CPU emulator, through
# tests/configs/linear_wmma.json: `harness run --backend emu` checks every case ok
# against the fp64 reference within the config's looser tolerance, the rounding is
# real (its error is above what the float variants' 1e-4 * sqrt(in_f) allows in some
# case, and far above the float tiled kernel's), and `harness check` finds nothing.
. "$(dirname "$0")/lib.sh"

cfg=$root/tests/configs/linear_wmma.json
csv=$tmp/linear_wmma.csv
out=$("$h" run "$cfg" --backend emu --out "$csv" 2>&1)
rc=$?
printf '%s\n' "$out" | tail -n 6
[ "$rc" = 0 ] || fail "harness run exited $rc"
python3 - "$csv" <<'PY' || fail "CSV check failed"
import csv, math, sys
rows = list(csv.DictReader(open(sys.argv[1], newline="")))
assert len(rows) == 36, f"{len(rows)} rows, expected 12 cases x 3 variants"
bad = [(r["case"], r["variant"], r["status"], r["reason"]) for r in rows if r["status"] != "ok"]
assert not bad, f"rows not ok: {bad}"
wmma = [r for r in rows if r["variant"].startswith("linear_wmma[HALF=")]
assert {r["variant"] for r in wmma} == {"linear_wmma[HALF=0]", "linear_wmma[HALF=1]"}
tight = [r for r in wmma if float(r["max_abs_err"]) > 1e-4 * math.sqrt(int(r["in_f"]))]
assert tight, "no wmma row would fail the float variants' tolerance: are the inputs rounded?"
tiled = {r["case"]: float(r["max_abs_err"]) for r in rows if r["variant"] == "linear_tiled"}
for r in wmma:
    if int(r["in_f"]) > 1:
        assert float(r["max_abs_err"]) > 10 * tiled[r["case"]], (r["case"], r["variant"], r["max_abs_err"])
print(f"{len(rows)} rows ok; {len(tight)} wmma rows beyond 1e-4 * sqrt(in_f)")
PY

out=$("$h" check "$cfg" --out "$tmp/linear_wmma.check.csv" 2>&1)
rc=$?
printf '%s\n' "$out" | tail -n 2
[ "$rc" = 0 ] || fail "harness check exited $rc"
case "$out" in *"sanitizer (all): 0 rows with findings"*) ;; *) fail "harness check found something" ;; esac

finish
