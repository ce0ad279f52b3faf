#!/usr/bin/env bash
# test_attention.sh: the attention operator (harness/ops/attention,
# docs/ops/attention.md) on the emulator:
#   - configs/attention_sweep.json's three kernels on a sample of its shapes;
#   - planted bugs fail where they should and only there: no max subtracted
#     (every case: rows carry score offsets of 96 and -120), the causal mask one
#     key too far (causal cases), the scale compiled in as 1/sqrt(d) (cases of
#     another scale), lse unwritten or without the max (every case), a tile
#     loop that runs past s in the last K tile (s not a multiple of the tile,
#     where a row sees the tail: not causal, or t > s); a kernel given out alone
#     is checked on out alone; the real flash kernel on the same tiles passes;
#   - harness debug shows both outputs and matches (and names lse when a kernel
#     leaves it unwritten); harness check finds nothing in the three kernels
#     (the flash kernel also on 8 x 8 tiles: tails, causal skipping); the tune
#     config runs; NVRTC compiles every kernel of every attention config;
#   - bad parameters are exit 2 naming the file, the case and the parameter (d
#     = 0 reaches the operator's check: scale's default is 1/sqrt(max(d, 1))).
. "$(dirname "$0")/lib.sh"
cd "$tmp" || exit 1

echo "== the sweep's kernels on a sample of its shapes"
sample_sweep attention_sweep 20 18 3

echo "== planted bugs"
cat >"$tmp/bugs.json" <<JSON
{"name": "attention_bugs", "op": "attention",
 "axes": {"t": [13, 16], "s": [13, 16], "causal": [0, 1], "sc": [0, 1]},
 "where": "sc == 0 || (t == 16 && s == 16 && causal == 0)",
 "params": {"d": 8, "scale": "sc ? 0.5 : 1.0 / sqrt(d)"},
 "check": {"out": {"atol": "4.5 * (2 * 6e-8 * sqrt(d) * (130 + abs(scale) * d) + 6e-8 * s)", "rtol": 1e-5},
           "lse": {"atol": "4 * 6e-8 * sqrt(d) * (130 + abs(scale) * d) + 6e-8 * s", "rtol": 1e-6},
           "min_match": 1.0},
 "timing": {"warmup": 1, "repeat": 2},
 "defaults": {"file": "$root/tests/kernels/attention/attention_bugs.cu", "block": [32], "grid": [1],
              "args": ["q", "k", "v", "out", "lse", "int: batch * heads", "t", "s", "d", "scale", "causal"]},
 "variants": [{"kernel": "attention_no_max"}, {"kernel": "attention_causal_plus_one"},
              {"kernel": "attention_fixed_scale"}, {"kernel": "attention_lse_unwritten"},
              {"kernel": "attention_lse_no_max"},
              {"kernel": "attention_out_only", "args": ["q", "k", "v", "out", "int: batch * heads", "t", "s", "d", "scale", "causal"]},
              {"kernel": "attention_tile_tail", "block": [8], "grid": ["ceil_div(t, 8)", "batch * heads"]},
              {"name": "flash", "file": "$root/kernels/attention/attention.cu", "kernel": "attention_flash",
               "defines": {"BQ": 8, "BK": 8, "DMAX": 32}, "block": ["BQ"], "grid": ["ceil_div(t, BQ)", "batch * heads"]}]}
JSON
"$h" run "$tmp/bugs.json" --backend emu --quiet --out "$tmp/bugs.csv" >"$tmp/bugs.log" 2>&1
[ $? = 1 ] || fail "the planted bugs' run should exit 1: $(tail -3 "$tmp/bugs.log")"
# what each variant should give, from the case: m(ismatch) or o(k)
python3 - "$tmp/bugs.csv" <<'PY' || fail "planted bugs (above)"
import csv, sys
want = {
    "attention_no_max": lambda t, s, c, sc: True,
    "attention_causal_plus_one": lambda t, s, c, sc: c == 1,
    "attention_fixed_scale": lambda t, s, c, sc: sc == 1,
    "attention_lse_unwritten": lambda t, s, c, sc: True,
    "attention_lse_no_max": lambda t, s, c, sc: True,
    "attention_out_only": lambda t, s, c, sc: False,
    "attention_tile_tail": lambda t, s, c, sc: s % 8 != 0 and (c == 0 or t > s),
    "flash": lambda t, s, c, sc: False,
}
rows = list(csv.DictReader(open(sys.argv[1])))
bad, seen = [], set()
for r in rows:
    t, s, c, sc = (int(r[k]) for k in ("t", "s", "causal", "sc"))
    expect = "mismatch" if want[r["variant"]](t, s, c, sc) else "ok"
    seen.add(r["variant"])
    if r["status"] != expect:
        bad.append(f"{r['variant']} t={t} s={s} causal={c} sc={sc}: {r['status']}, expected {expect} ({r['reason'][:120]})")
    # out alone: never checked on lse; lse unwritten: lse is what fails
    if r["variant"] == "attention_out_only" and r["worst_output"] != "out":
        bad.append(f"attention_out_only was checked on {r['worst_output']}")
    if r["variant"] == "attention_lse_unwritten" and r["worst_output"] != "lse":
        bad.append(f"attention_lse_unwritten: worst output {r['worst_output']}, expected lse")
if seen != set(want) or len(rows) != 9 * len(want):
    bad.append(f"{len(rows)} rows of {sorted(seen)}")
print("\n".join(bad))
sys.exit(1 if bad else 0)
PY

echo "== harness debug"
expect_cmd=("$h")
expect 0 "verdict: output matches the reference" debug "$tmp/attention_sweep.json" --kernel attention_flash \
  --set batch=1,heads=1,t=5,s=40,d=16,causal=1
case "$out" in *"lse (reference) (batch, heads, t) = (1, 1, 5)"*) ;; *) fail "debug did not show lse: ${out:0:400}" ;; esac
expect 1 "lse: 0 of" debug "$tmp/bugs.json" --kernel attention_lse_unwritten --set t=13,s=13,causal=0,sc=0

echo "== harness check: clean"
for v in attention_naive attention_warp attention_flash; do
  expect 0 "" check "$tmp/attention_sweep.json" --out "$tmp/check.csv" --variant "$v" --case 1
done
# the flash kernel on 8-query and 8-key tiles: two query tiles, tails, causal skipping
expect 0 "" check "$tmp/bugs.json" --out "$tmp/check_tiles.csv" --variant flash

echo "== the tune config"
sed "s|\"\.\./kernels/|\"$root/kernels/|; s|\"count\": [0-9]*|\"count\": 1|; s|\"budget\": [0-9]*|\"budget\": 3|" \
  "$root/configs/attention_tune.json" >"$tmp/tune.json"
expect 0 "" tune "$tmp/tune.json" --backend emu --quick --quiet --out "$tmp/tune.csv"

echo "== NVRTC compiles every kernel (sm_90, no GPU needed; the edge config's DMAX 16 once gave a zero-sized array)"
for c in "$tmp/attention_sweep.json" "$root/tests/configs/edge/attention.json" "$tmp/bugs.json" "$tmp/tune.json"; do
  out=$("$h" compile "$c" --arch sm_90 2>&1) || fail "compile $(basename "$c") exited $?: $(printf '%s\n' "$out" | tail -5)"
  case "$out" in *"compile error"*) fail "NVRTC, $(basename "$c"): $out" ;; esac
done

echo "== bad input"
for bad in 's/"d": 8, "scale": "sc ? 0.5 : 1.0 \/ sqrt(d)"/"d": 0/' 's/"causal": \[0, 1\]/"causal": [2]/' 's/sc ? 0.5 :/sc ? 1e39 :/' \
           's/"t": \[13, 16\]/"t": [1048576], "batch": [4096]/'; do
  sed "$bad" "$tmp/bugs.json" >"$tmp/bad.json"
  case "$bad" in
    *'"d": 0'*) want="attention: d = 0 must be a whole number between 1 and 2^30" ;;
    *causal*) want="attention: causal = 2 must be 0 (every key) or 1 (keys j <= i)" ;;
    *1e39*) want="params.scale ('sc ? 1e39 : 1.0 / sqrt(d)') = 1e+39 is out of float range" ;;
    *) want="attention: q and out would have batch * heads * t * d = 34359738368 elements" ;;
  esac
  expect 2 "$want" run "$tmp/bad.json" --backend emu --out "$tmp/z.csv"
  case "$out" in *"$tmp/bad.json"*) ;; *) fail "the message does not name the file: $out" ;; esac
done

finish
