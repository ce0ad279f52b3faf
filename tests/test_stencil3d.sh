#!/usr/bin/env bash
# test_stencil3d.sh: the stencil3d operator (harness/ops/stencil3d,
# docs/ops/stencil3d.md) on the emulator:
#   - configs/stencil3d_sweep.json's kernels (naive, shared tile, coarsened in z,
#     register tiling) on a sample of its grids;
#   - planted bugs (tests/kernels/stencil3d/stencil3d_bugs.cu) fail only where
#     they should: the x = nx - 1 face taken for interior (grids with nz and ny
#     of 3 or more only); the z halo one plane short in the coarsened kernel (nz
#     over the planes a block walks only); the shared tile's halo off by one
#     (every grid: points never written); register tiling without the barrier
#     before a plane is overwritten (harness check names the race);
#   - harness check is silent on the sweep's kernels; harness debug runs one;
#   - bad parameters are exit 2.
. "$(dirname "$0")/lib.sh"

echo "== the sweep's kernels on a sample of its grids"
sample_sweep stencil3d_sweep 8 6 4

statuses() {
  python3 -c "
import csv, sys
print(' '.join(r['variant'] + ':' + r['nz'] + 'x' + r['ny'] + 'x' + r['nx'] + '=' + r['status'] for r in csv.DictReader(open(sys.argv[1]))))" "$1"
}
bugs_cfg() { # bugs_cfg FILE AXES VARIANTS
  cat >"$1" <<JSON
{"name": "stencil3d_bugs", "op": "stencil3d", "axes": $2,
 "check": {"atol": 1e-5, "rtol": 1e-5, "min_match": 1.0},
 "timing": {"warmup": 1, "repeat": 2},
 "defaults": {"file": "$root/tests/kernels/stencil3d/stencil3d_bugs.cu", "defines": {"IN": 8, "ZC": 4},
              "args": ["in", "out", "nz", "ny", "nx", "c0", "c1", "c2", "c3", "c4", "c5", "c6"]},
 "variants": [$3]}
JSON
}

echo "== planted bugs: the x = nx - 1 face, the shared tile's halo"
bugs_cfg "$tmp/edge.json" '{"nz": [2, 5], "ny": [2, 5], "nx": [9]}' \
  '{"kernel": "stencil_naive_edge", "block": [8, 4, 2], "grid": ["ceil_div(nx, 8)", "ceil_div(ny, 4)", "ceil_div(nz, 2)"]},
   {"kernel": "stencil_shared_halo", "block": ["IN", "IN", "IN"],
    "grid": ["ceil_div(nx, IN - 2)", "ceil_div(ny, IN - 2)", "ceil_div(nz, IN - 2)"]}'
"$h" run "$tmp/edge.json" --backend emu --quiet --out "$tmp/edge.csv" >/dev/null 2>&1
got=$(statuses "$tmp/edge.csv")
want="stencil_naive_edge:2x2x9=ok stencil_shared_halo:2x2x9=mismatch stencil_naive_edge:2x5x9=ok stencil_shared_halo:2x5x9=mismatch"
want="$want stencil_naive_edge:5x2x9=ok stencil_shared_halo:5x2x9=mismatch stencil_naive_edge:5x5x9=mismatch stencil_shared_halo:5x5x9=mismatch"
[ "$got" = "$want" ] || fail "edge bugs: got $got, want $want"
grep -q "poison" "$tmp/edge.csv" || fail "the halo bug's reason does not say the points were never written"

echo "== planted bugs: the z halo one plane short (ZC = 4), a missing barrier"
bugs_cfg "$tmp/top.json" '{"nz": [3, 4, 5, 9], "ny": [7], "nx": [7]}' \
  '{"kernel": "stencil_coarsened_top", "block": ["IN", "IN"], "grid": ["ceil_div(nx, IN - 2)", "ceil_div(ny, IN - 2)", "ceil_div(nz, ZC)"]},
   {"kernel": "stencil_register_race", "block": ["IN", "IN"], "grid": ["ceil_div(nx, IN - 2)", "ceil_div(ny, IN - 2)", "ceil_div(nz, ZC)"]}'
"$h" run "$tmp/top.json" --backend emu --quiet --out "$tmp/top.csv" >/dev/null 2>&1
got=$(statuses "$tmp/top.csv")
want="stencil_coarsened_top:3x7x7=ok stencil_register_race:3x7x7=mismatch stencil_coarsened_top:4x7x7=ok stencil_register_race:4x7x7=mismatch"
want="$want stencil_coarsened_top:5x7x7=mismatch stencil_register_race:5x7x7=mismatch stencil_coarsened_top:9x7x7=mismatch stencil_register_race:9x7x7=mismatch"
[ "$got" = "$want" ] || fail "z bugs: got $got, want $want"

echo "== harness check: the missing barrier is a race"
expect_cmd=("$h")
expect 1 "race" check "$tmp/top.json" --variant stencil_register_race --case 0 --out "$tmp/check.csv"
case "$out" in *"stencil3d_bugs.cu:"*) ;; *) fail "the race's report names no line of stencil3d_bugs.cu: $out" ;; esac

echo "== harness check: the sweep's kernels are clean"
python3 -c "
import json, sys
c = json.load(open(sys.argv[1]))
c['axes'] = {'nz': [5], 'ny': [9], 'nx': [20]}
for k in ('sample', 'where'): c.pop(k, None)
json.dump(c, open(sys.argv[2], 'w'))" "$tmp/stencil3d_sweep.json" "$tmp/clean.json"
expect 0 "0 rows with findings" check "$tmp/clean.json" --out "$tmp/check.csv"
n_ok=$(grep -c ',ok,' "$tmp/check.csv")
[ "$n_ok" = 4 ] || fail "harness check: $n_ok rows ok, 4 wanted: $(cut -c1-300 "$tmp/check.csv")"

echo "== harness debug"
expect 0 "verdict: output matches the reference" debug "$tmp/clean.json" --backend emu --kernel stencil_register \
  --set nz=5,ny=9,nx=20 --out "$tmp/debug"

echo "== bad input"
bugs_cfg "$tmp/zero.json" '{"nz": [0], "ny": [4], "nx": [4]}' '{"kernel": "stencil_naive_edge", "block": [8], "grid": [1]}'
expect 2 "stencil3d: nz = 0 must be a whole number between 1 and 2^30" run "$tmp/zero.json" --backend emu --out "$tmp/z.csv"
bugs_cfg "$tmp/huge.json" '{"nz": [2048], "ny": [2048], "nx": [1024]}' '{"kernel": "stencil_naive_edge", "block": [8], "grid": [1]}'
expect 2 "stencil3d: nz * ny * nx = 2048 * 2048 * 1024" run "$tmp/huge.json" --backend emu --out "$tmp/z.csv"

finish
