#!/usr/bin/env bash
# test_gemm.sh: the gemm operator (harness/ops/gemm, docs/ops/gemm.md) end to end on
# the emulator:
#   - configs/gemm_sweep.json's kernels on a small sample of its shapes (every
#     transpose, beta 0 and not), configs/gemm_mixed.json's (float16 and bfloat16
#     inputs, naive and wmma kernels; a float kernel given float16 inputs fails),
#     and configs/gemm_tune.json tuned in a few evaluations;
#   - c, the in-out buffer: every launch starts from its generated input (a kernel
#     doing c += alpha op(a) op(b) passes at beta 1 over repeated samples, --hot
#     too), debug prints that input, and "zero" refuses it;
#   - planted bugs fail where they should and only there: beta ignored (beta != 0
#     rows), trans_b ignored (T rows), a tail guard one row too far (a fault);
#   - harness check finds nothing in the correct kernels;
#   - bad parameters are exit 2 naming the config's JSON path.
. "$(dirname "$0")/lib.sh"

# statuses CSV: "variant case-kind status" counted (skipped rows left out), kinds
# from beta and the transposes
statuses() {
  python3 - "$1" <<'PY'
import csv, sys
from collections import Counter
rows = list(csv.DictReader(open(sys.argv[1], newline="")))
def kind(r):
    return ("beta" if float(r["beta"]) != 0 else "nobeta") + "/" + r["trans_a"] + r["trans_b"]
for (v, k, s), n in sorted(Counter((r["variant"], kind(r), r["status"]) for r in rows if r["status"] != "skipped").items()):
    print(v, k, s, n)
PY
}

echo "== the sweep's kernels on a sample of its shapes"
sample_sweep gemm_sweep 12 12 4
got=$(python3 -c "
import csv
ran = [r for r in csv.DictReader(open('$tmp/gemm_sweep.csv')) if r['status'] != 'skipped']
print(len({r['beta'] for r in ran}), len({r['trans_a'] + r['trans_b'] for r in ran}))")
read -r n_beta n_trans <<<"$got"
[ "$n_beta" = 2 ] && [ "$n_trans" -ge 3 ] || fail "gemm_sweep's sample lacks beta or transposes: $n_beta beta values, $n_trans transpose pairs"

echo "== float16 and bfloat16 inputs (configs/gemm_mixed.json): naive and wmma kernels"
sample_sweep gemm_mixed 8 8 4
got=$(python3 -c "
import csv
rows = [r for r in csv.DictReader(open('$tmp/gemm_mixed.csv')) if r['status'] != 'skipped']
print(sorted({r['dtype'] for r in rows}), sorted({r['variant'].split('<')[0] for r in rows}))")
case "$got" in *"['bfloat16', 'float16'] ['gemm_naive_t', 'gemm_wmma']"*) ;; *) fail "gemm_mixed's sample: $got" ;; esac
# a float kernel given float16 inputs reads pairs of halves as floats, and past the
# end of the (half as large) buffers: a fault on the emulator (a mismatch where the
# reads stay inside)
cat >"$tmp/wrongtype.json" <<JSON
{"name": "wrongtype", "op": "gemm", "axes": {"m": [5], "n": [7], "k": [9], "dtype": ["float32", "float16"]},
 "check": {"atol": "1e-4 * sqrt(k)", "rtol": 1e-4, "min_match": 1.0},
 "defaults": {"args": ["a", "b", "c", "m", "n", "k", "alpha", "beta", "int: trans_a == \"T\"", "int: trans_b == \"T\""]},
 "variants": [{"file": "$root/kernels/gemm/gemm_naive.cu", "kernel": "gemm_naive", "block": [16, 16],
               "grid": ["ceil_div(n, 16)", "ceil_div(m, 16)"]}]}
JSON
"$h" run "$tmp/wrongtype.json" --backend emu --quiet --out "$tmp/wrongtype.csv" >/dev/null 2>&1
got=$(python3 -c "
import csv
print(' '.join(r['dtype'] + '=' + r['status'] for r in csv.DictReader(open('$tmp/wrongtype.csv'))))")
case "$got" in "float32=ok float16=fault" | "float32=ok float16=mismatch") ;; *) fail "a float kernel on float16 inputs: $got" ;; esac

echo "== tune"
cp "$root/configs/gemm_tune.json" "$tmp/tune.json"
sed -i "s|\"\.\./kernels/|\"$root/kernels/|; s|\"budget\": 24|\"budget\": 4|; s|\"count\": 4|\"count\": 1|" "$tmp/tune.json"
expect_show=tail
expect 0 "best configurations" "$h" tune "$tmp/tune.json" --backend emu --quick --out "$tmp/tune.csv"
case "$out" in *"(0 failed)"*) ;; *) fail "a tuned configuration failed: $(printf '%s\n' "$out" | tail -4)" ;; esac

# config FILE VARIANTS [AXES]: a gemm sweep of the bug kernels, 1 warm-up, 3 samples
all_axes='{"m": [7], "n": [5], "k": [3], "trans_a": ["N", "T"], "trans_b": ["N", "T"], "beta": [0, 1]}'
config() {
  cat >"$1" <<JSON
{"name": "gemm_bugs", "op": "gemm",
 "axes": ${3:-$all_axes},
 "check": {"atol": "1e-4 * (abs(alpha) * sqrt(k) + abs(beta))", "rtol": 1e-4, "min_match": 1.0},
 "timing": {"warmup": 1, "repeat": 3},
 "defaults": {"file": "$root/tests/kernels/gemm/gemm_bugs.cu", "block": [8, 8], "grid": ["ceil_div(n, 8)", "ceil_div(m, 8)"],
              "args": ["a", "b", "c", "m", "n", "k", "alpha", "beta", "int: trans_a == \"T\"", "int: trans_b == \"T\""]},
 "variants": [$2]}
JSON
}

echo "== c += alpha op(a) op(b): every launch from c's input"
config "$tmp/acc.json" '{"kernel": "gemm_accumulate", "where": "beta == 1"}'
for hot in "" --hot; do
  "$h" run "$tmp/acc.json" --backend emu --quiet $hot --out "$tmp/acc.csv" >"$tmp/acc.log" 2>&1 ||
    fail "gemm_accumulate $hot exited $?: $(tail -3 "$tmp/acc.log")"
  got=$(statuses "$tmp/acc.csv")
  want="gemm_accumulate beta/NN ok 1
gemm_accumulate beta/NT ok 1
gemm_accumulate beta/TN ok 1
gemm_accumulate beta/TT ok 1"
  [ "$got" = "$want" ] || fail "gemm_accumulate $hot (c must be restored before every launch):
$got"
done

echo "== planted bugs fail where they should"
config "$tmp/bugs.json" '{"kernel": "gemm_ignores_beta"}, {"kernel": "gemm_ignores_trans"}'
"$h" run "$tmp/bugs.json" --backend emu --quiet --out "$tmp/bugs.csv" >"$tmp/bugs.log" 2>&1
[ $? = 1 ] || fail "the planted bugs' run should exit 1 (rows failed): $(tail -3 "$tmp/bugs.log")"
got=$(statuses "$tmp/bugs.csv")
want="gemm_ignores_beta beta/NN mismatch 1
gemm_ignores_beta beta/NT mismatch 1
gemm_ignores_beta beta/TN mismatch 1
gemm_ignores_beta beta/TT mismatch 1
gemm_ignores_beta nobeta/NN ok 1
gemm_ignores_beta nobeta/NT ok 1
gemm_ignores_beta nobeta/TN ok 1
gemm_ignores_beta nobeta/TT ok 1
gemm_ignores_trans beta/NN ok 1
gemm_ignores_trans beta/NT mismatch 1
gemm_ignores_trans beta/TN ok 1
gemm_ignores_trans beta/TT mismatch 1
gemm_ignores_trans nobeta/NN ok 1
gemm_ignores_trans nobeta/NT mismatch 1
gemm_ignores_trans nobeta/TN ok 1
gemm_ignores_trans nobeta/TT mismatch 1"
[ "$got" = "$want" ] || fail "planted bugs, statuses:
$got"

echo "== a tail guard one row too far"
config "$tmp/tail.json" '{"kernel": "gemm_tail_overrun"}' '{"m": [7], "n": [5], "k": [3]}'
"$h" run "$tmp/tail.json" --backend emu --quiet --out "$tmp/tail.csv" >"$tmp/tail.log" 2>&1
python3 - "$tmp/tail.csv" <<'PY' || fail "gemm_tail_overrun was not caught: $(cut -c1-300 "$tmp/tail.csv")"
import csv, sys
r = list(csv.DictReader(open(sys.argv[1])))[0]
print("  tail overrun:", r["status"], "-", r["reason"][:160])
sys.exit(r["status"] == "ok")
PY
expect_cmd=("$h")
expect 1 "gemm_bugs.cu:" check "$tmp/tail.json" --out "$tmp/check.csv"

echo "== harness check: the correct kernels are clean"
expect_cmd=("$h")
for v in gemm_naive 'gemm_tiled[TILE=16]' gemm_regblock; do
  expect 0 "" check "$tmp/gemm_sweep.json" --out "$tmp/check.csv" --variant "$v" --case 1
done
expect 0 "" check "$tmp/gemm_mixed.json" --out "$tmp/check.csv" --variant "gemm_wmma<__half>"

echo "== debug shows c's input"
expect_cmd=("$h")
expect 0 "c (input) (m, n) = (3, 4)" debug "$tmp/gemm_sweep.json" --kernel gemm_naive \
  --set m=3,n=4,k=2,beta=0.5,alpha=1,trans_a=T,trans_b=N
case "$out" in *"verdict: output matches the reference"*) ;; *) fail "debug's verdict: $(printf '%s\n' "$out" | tail -3)" ;; esac

echo "== bad input: exit 2 naming the JSON path"
config "$tmp/zero.json" '{"kernel": "gemm_accumulate", "zero": ["c"]}'
expect 2 "'c' is an input and output of gemm" run "$tmp/zero.json" --backend emu --out "$tmp/z.csv"
case "$out" in *"variants[0].zero[0]"*) ;; *) fail "zero: no JSON path in: $out" ;; esac
config "$tmp/m0.json" '{"kernel": "gemm_accumulate"}' '{"m": [0], "n": [5], "k": [3]}'
expect 2 "gemm: m = 0 must be a whole number between 1 and 2^30" run "$tmp/m0.json" --backend emu --out "$tmp/z.csv"
config "$tmp/tx.json" '{"kernel": "gemm_accumulate"}' '{"m": [2], "n": [5], "k": [3], "trans_a": ["X"]}'
expect 2 "N, T" run "$tmp/tx.json" --backend emu --out "$tmp/z.csv"
config "$tmp/big.json" '{"kernel": "gemm_accumulate"}' '{"m": [2], "n": [5], "k": [3], "alpha": [1e39]}'
expect 2 "params.alpha ('alpha') = 1e+39 is out of float range" run "$tmp/big.json" --backend emu --out "$tmp/z.csv"
config "$tmp/huge.json" '{"kernel": "gemm_accumulate"}' '{"m": [65536], "n": [65536], "k": [3]}'
expect 2 "gemm: c would have m * n = 65536 * 65536" run "$tmp/huge.json" --backend emu --out "$tmp/z.csv"

finish
