#!/usr/bin/env bash
# test_conv2d_igemm.sh: the register-tiled implicit-GEMM conv2d
# (kernels/conv2d/conv2d_igemm.cu) and its tune space (configs/conv2d_tune.json):
#   1. the space has at least 10^4 valid configurations;
#   2. a random tune of that space on odd shapes (the table below: a batch, same,
#      valid and explicit padding, a pad value, bias, even and 9x9 filters,
#      1-sized dimensions, M, N and K off every tile) on the emulator: every
#      evaluation in the journal is "ok", i.e. every sampled configuration
#      matched the fp64 reference on every shape;
#   3. the corners of the space (largest and smallest tiles, 1024 threads, shared
#      memory at the limit, VEC=4 where K % 4 != 0, a double accumulator) run on
#      the emulator on the same shapes, all rows ok; each is checked to satisfy
#      the config's restrictions;
#   4. the corners and a few sampled configurations compile with NVRTC for sm_90.
# The tune's budget is 24 evaluations (8 under AddressSanitizer, where the
# harness is slower) with the config's seed: HN_IGEMM_BUDGET and HN_IGEMM_SEED
# override them (another seed samples other configurations).
. "$(dirname "$0")/lib.sh"
tune_cfg="$root/configs/conv2d_tune.json"
budget=${HN_IGEMM_BUDGET:-24}
[ -n "${ASAN_OPTIONS:-}" ] && [ -z "${HN_IGEMM_BUDGET:-}" ] && budget=8
seed=()
[ -n "${HN_IGEMM_SEED:-}" ] && seed=(--seed "$HN_IGEMM_SEED")

# $tmp/odd.json: conv2d_tune.json's variant (its space as it is) over odd shapes,
# one case per value of the axis `shape`, the tuning across all of them.
odd_cfg="$tmp/odd.json"
python3 - "$tune_cfg" "$odd_cfg" <<'PY' || { echo "FAIL: could not write the odd shapes' config"; exit 1; }
import json, os, sys
src, dst = sys.argv[1], sys.argv[2]
shapes = [
    # n, in_ch, out_ch, h, w, fs, padding, pad, use_bias: what it covers
    (2, 3, 5, 7, 9, 3, -1, 0, 1, "same, a batch, a bias; K = 27 and M = 5 off every tile"),
    (1, 3, 5, 9, 7, 5, 0, 0, 0, "valid, no bias"),
    (3, 5, 3, 4, 6, 1, 0, 0, 1, "1x1, no padding, oh*ow = 24: the vector paths of B_VEC and the stores"),
    (2, 7, 5, 7, 7, 1, -1, 0, 0, "1x1 with oh*ow = 49: their scalar fallbacks"),
    (1, 1, 1, 1, 1, 1, -1, 0, 1, "every dimension 1"),
    (2, 2, 33, 5, 11, 2, -1, 0.5, 1, "an even filter, same, pad 0.5, M = 33, K = 8 (VEC=4 vector loads)"),
    (1, 3, 5, 6, 5, 3, 2, -1.25, 1, "explicit padding 2 (output 8x7), pad -1.25"),
    (2, 9, 17, 11, 13, 3, -1, 0, 1, "K = 81, N = 286: several K steps and column tiles"),
    (1, 2, 3, 5, 4, 9, -1, 0.25, 0, "a 9x9 filter over a 5x4 image"),
]
names = ["n", "in_ch", "out_ch", "h", "w", "filter_size", "padding", "pad", "use_bias"]
def by_shape(i):
    e = repr(shapes[-1][i])
    for k in range(len(shapes) - 2, -1, -1):
        e = f"shape == {k} ? {shapes[k][i]!r} : {e}"
    return e
cfg = json.load(open(src))
for key in ("where", "sample"):
    cfg.pop(key, None)
cfg["name"] = "conv2d_igemm_odd"
cfg["description"] = "; ".join(f"{k}: {s[-1]}" for k, s in enumerate(shapes))
cfg["params"] = {name: by_shape(i) for i, name in enumerate(names)}
cfg["axes"] = {"shape": list(range(len(shapes)))}
cfg["tuning"] = {"strategy": "random", "top": 0, "across": True}
cfg["timing"] = {"warmup": 0, "repeat": 1}  # correctness is the point here, not the times
v = cfg["variants"][0]
v["file"] = os.path.normpath(os.path.join(os.path.dirname(src), v["file"]))
json.dump(cfg, open(dst, "w"), indent=1)
PY

echo "== 1. the space"
out=$("$h" tune "$tune_cfg" --backend emu --space-only --case 0 2>&1)
[ $? = 0 ] || fail "--space-only failed: $out"
echo "$out"
valid=$(printf '%s\n' "$out" | sed -n 's/.* raw configurations, \([0-9]*\) valid.*/\1/p')
[ -n "$valid" ] && [ "$valid" -ge 10000 ] || fail "expected at least 10^4 valid configurations, got '$valid'"

echo "== 2. a random tune of $budget configurations on odd shapes ${seed[*]}"
out=$("$h" tune "$odd_cfg" --backend emu --strategy random --budget "$budget" --top 0 "${seed[@]}" --out "$tmp/t" 2>&1)
rc=$?
[ "$rc" = 0 ] || fail "tune exited $rc: $out"
printf '%s\n' "$out" | tail -4
python3 - "$tmp/t.journal" "$budget" "$odd_cfg" <<'PY' || fail "the journal has failed evaluations (a wrong configuration) or is short"
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
budget, shapes = int(sys.argv[2]), len(json.load(open(sys.argv[3]))["axes"]["shape"])
bad = [r for r in rows if r["status"] != "ok"]
for r in bad[:10]:
    print(f"  {r['status']}: {r['config']} on {r['label']}: {r['reason']}")
configs = {r["config"] for r in rows}
print(f"{len(rows)} evaluations of {len(configs)} configurations on {shapes} shapes, {len(bad)} not ok")
assert not bad and len(configs) == budget and len(rows) == budget * shapes
PY

echo "== 3. the corners of the space, on the emulator"
# Writes $tmp/fixed.json: the odd shapes with one fixed variant per configuration
# (the tune variant without "tune"/"restrict"), after checking each against the
# tune config's restrictions (device limits as on an H200 and the emulator).
fixed() {
  python3 - "$tune_cfg" "$odd_cfg" "$tmp/fixed.json" "$@" <<'PY'
import json, os, re, sys
tune, odd, dst, configs = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
space = json.load(open(tune))["variants"][0]
cfg = json.load(open(odd))
base = cfg["variants"][0]
base.pop("tune"), base.pop("restrict")
limits = {"max_threads_per_block": 1024, "max_shared_per_block": 49152}
def holds(expr, env):
    py = re.sub(r"(?<![=!<>])/", "//", expr).replace("&&", " and ").replace("||", " or ")
    return eval(py, {}, env)
variants = []
for i, text in enumerate(configs):
    d = {k: int(v) for k, v in (kv.split("=") for kv in text.split(","))}
    env = {k: v for k, v in d.items() if k in space["tune"]}
    assert set(env) == set(space["tune"]), f"{text}: expected values for {sorted(space['tune'])}"
    broken = [r for r in space["restrict"] if not holds(r, {**env, **limits})]
    assert not broken, f"{text} is not in the space: {broken}"
    variants.append({**base, "name": f"igemm_{i}", "defines": {**base.get("defines", {}), **d}})
cfg["variants"] = variants
cfg.pop("tuning", None)
json.dump(cfg, open(dst, "w"), indent=1)
PY
}
corners=(
  # largest block tiles, 16x8 and 8x16 thread tiles; the second at exactly 48 KB of shared memory
  "BM=256,TM=16,BN=128,TN=8,BK=8,UNROLL_K=8,DOUBLE_BUFFER=1,A_ORDER=0,A_PAD=4,VEC=4,B_VEC=4,STRIDED=1,MIN_BLOCKS=1,RASTER=1"
  "BM=128,TM=8,BN=256,TN=16,BK=16,UNROLL_K=4,DOUBLE_BUFFER=1,A_ORDER=1,A_PAD=0,VEC=2,B_VEC=1,STRIDED=1,MIN_BLOCKS=1,RASTER=0"
  # smallest: one output channel per block, one element per thread, 32 threads
  "BM=1,TM=1,BN=32,TN=1,BK=4,UNROLL_K=1,DOUBLE_BUFFER=0,A_ORDER=0,A_PAD=0,VEC=4,B_VEC=1,STRIDED=0,MIN_BLOCKS=1,RASTER=1"
  "BM=16,TM=1,BN=16,TN=1,BK=4,UNROLL_K=2,DOUBLE_BUFFER=1,A_ORDER=1,A_PAD=0,VEC=2,B_VEC=2,STRIDED=0,MIN_BLOCKS=2,RASTER=0"
  # 1024 threads, BK=32 fully unrolled
  "BM=32,TM=1,BN=32,TN=1,BK=32,UNROLL_K=32,DOUBLE_BUFFER=1,A_ORDER=0,A_PAD=4,VEC=4,B_VEC=4,STRIDED=0,MIN_BLOCKS=1,RASTER=1"
  # the usual GEMM shape, contiguous and strided thread tiles; VEC=4 meets K = 27, 5, 81 (scalar fallback) and 8
  "BM=128,TM=8,BN=128,TN=8,BK=8,UNROLL_K=8,DOUBLE_BUFFER=1,A_ORDER=0,A_PAD=4,VEC=4,B_VEC=1,STRIDED=1,MIN_BLOCKS=1,RASTER=0"
  "BM=64,TM=8,BN=64,TN=8,BK=32,UNROLL_K=16,DOUBLE_BUFFER=1,A_ORDER=0,A_PAD=0,VEC=4,B_VEC=4,STRIDED=0,MIN_BLOCKS=2,RASTER=1"
  # 2-wide vectors in the inner loop (BM=2), 4x16 strided
  "BM=2,TM=2,BN=128,TN=4,BK=8,UNROLL_K=4,DOUBLE_BUFFER=0,A_ORDER=0,A_PAD=4,VEC=1,B_VEC=2,STRIDED=0,MIN_BLOCKS=1,RASTER=0"
  "BM=32,TM=4,BN=256,TN=16,BK=4,UNROLL_K=4,DOUBLE_BUFFER=1,A_ORDER=1,A_PAD=0,VEC=4,B_VEC=4,STRIDED=1,MIN_BLOCKS=1,RASTER=1"
)
fixed "${corners[@]}" || fail "a corner is not a valid configuration"
python3 - "$tmp/fixed.json" <<'PY'
import json, sys
cfg = json.load(open(sys.argv[1]))
v = dict(cfg["variants"][5], name="igemm_double")
v["defines"] = dict(v["defines"], ACCUM_DTYPE="double")
cfg["variants"].append(v)
json.dump(cfg, open(sys.argv[1], "w"), indent=1)
PY
out=$("$h" run "$tmp/fixed.json" --backend emu --out "$tmp/corners.csv" --quiet 2>&1)
rc=$?
[ "$rc" = 0 ] || fail "the corners exited $rc: $(printf '%s\n' "$out" | grep -v '^  case' | head -40)"
python3 - "$tmp/corners.csv" "${#corners[@]}" <<'PY' || fail "a corner failed"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
bad = [r for r in rows if r["status"] != "ok"]
for r in bad[:10]:
    print(f"  {r['variant']} on {r['label']}: {r['status']} {r['reason']}")
print(f"{len(rows)} rows, {len(bad)} not ok")
assert not bad and len(rows) == 9 * (int(sys.argv[2]) + 1)
PY

echo "== 4. NVRTC for sm_90: the corners and configurations the tune sampled"
mapfile -t sampled < <(python3 - "$tmp/t.journal" <<'PY'
import json, sys
seen = []
for l in open(sys.argv[1]):
    c = json.loads(l)["config"]
    if c not in seen: seen.append(c)
print("\n".join(seen[:4]))
PY
)
fixed "${corners[@]}" "${sampled[@]}" || fail "a sampled configuration is not valid"
out=$("$h" compile "$tmp/fixed.json" --arch sm_90 2>&1)
rc=$?
printf '%s\n' "$out"
[ "$rc" = 0 ] || fail "NVRTC compile exited $rc"

finish
