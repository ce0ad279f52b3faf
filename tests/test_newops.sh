#!/usr/bin/env bash
# test_newops.sh: gemm, softmax and layernorm used by kernel authors from their docs
# alone (docs/ops/{gemm,softmax,layernorm}.md), with kernels written as real ones
# are (tests/kernels/newops/, configs in tests/configs/newops/), on the emulator:
#   - every correct kernel ok on every case it runs: float4 double-buffered,
#     warp-tiled, split-K in two launches (c restored before each sample, --hot
#     too), column-major bound with swapped operands, typed double alpha/beta;
#     wmma from global memory with col_major fragments; a cooperative-groups
#     online softmax, a float4 one, two launches with scratch; llm.c's layernorm
#     (cg::reduce, eps as a define), y only, rstd before mean, float4 Welford;
#   - harness check finds nothing in them; --save-tensors agrees with numpy;
#     harness debug runs launches and matches;
#   - 16-bit accumulation (__hfma2) fails float tolerances and passes its own;
#   - a misaligned wmma load faults naming ldm; a kernel writing x is reported,
#     by run and by debug; a variant given no output fails;
#   - planted bugs fail where they should and only there;
#   - a tune with restrictions, its winner rerun by harness run.
. "$(dirname "$0")/lib.sh"

# cfg NAME: the committed config with its kernel paths made absolute, in $tmp
cfg() {
  sed "s|\"\.\./\.\./kernels/|\"$root/tests/kernels/|" "$root/tests/configs/newops/$1.json" >"$tmp/$1.json"
  echo "$tmp/$1.json"
}
# run NAME [OPTIONS]: harness run --quick on the emulator into $tmp/NAME.csv; exit 0
# (every row ok) or, for the planted bugs' configs (NAME *_bugs), 1
run() {
  local name=$1 want=0 rc
  shift
  case "$name" in *_bugs) want=1 ;; esac
  "$h" run "$(cfg "$name")" --backend emu --quick --quiet --out "$tmp/$name.csv" "$@" >"$tmp/$name.log" 2>&1
  rc=$?
  [ "$rc" = "$want" ] || fail "$name exited $rc, expected $want: $(tail -5 "$tmp/$name.log")"
}
# tally CSV: "variant status count" for rows that ran, sorted
tally() {
  python3 - "$1" <<'PY'
import csv, sys
from collections import Counter
rows = [r for r in csv.DictReader(open(sys.argv[1], newline="")) if r["status"] != "skipped"]
for (v, s), n in sorted(Counter((r["variant"], r["status"]) for r in rows).items()):
    print(v, s, n)
PY
}
# all_ok CSV VARIANT...: each variant ran at least one row and every row is ok
all_ok() {
  local csv=$1 t
  shift
  t=$(tally "$csv")
  for v in "$@"; do
    case "$t" in *"$v ok "*) ;; *) fail "$v ran no ok row: $t" ;; esac
  done
  case "$t" in *" mismatch "* | *" fault "* | *" launch_error "* | *" compile_error "* | *" timeout "*)
    fail "a correct kernel failed in $csv: $t" ;; esac
}
# reasons CSV VARIANT: "case-values status reason" per row of the variant that ran
reasons() {
  python3 - "$1" "$2" <<'PY'
import csv, sys
for r in csv.DictReader(open(sys.argv[1], newline="")):
    if r["variant"] == sys.argv[2] and r["status"] != "skipped":
        keys = [k for k in ("m", "n", "k", "trans_b", "beta", "rows", "cols") if k in r]
        print(" ".join(k + "=" + r[k] for k in keys), r["status"], r["reason"])
PY
}

echo "== gemm: authors' kernels, --hot, check, debug, saved tensors"
run gemm_authors --save-tensors "$tmp/st_gemm"
all_ok "$tmp/gemm_authors.csv" sgemm_vec4_db sgemm_warptile splitk sgemm_colmajor sgemm_author_args
[ "$(tally "$tmp/gemm_authors.csv" | grep -c '^splitk ok 24$')" = 1 ] || fail "split-K: $(tally "$tmp/gemm_authors.csv")"
/usr/bin/python3 "$root/tests/numpy_crosscheck.py" "$tmp/st_gemm" "$tmp/gemm_authors.csv" >"$tmp/np.log" 2>&1 ||
  fail "numpy crosscheck (gemm): $(tail -3 "$tmp/np.log")"
"$h" run "$tmp/gemm_authors.json" --backend emu --quick --quiet --hot --variant splitk --out "$tmp/hot.csv" >/dev/null 2>&1
all_ok "$tmp/hot.csv" splitk
expect_show=tail
expect 0 "0 rows with findings" "$h" check "$tmp/gemm_authors.json" --out "$tmp/check_gemm.csv"
expect 0 "verdict: output matches the reference" "$h" debug "$tmp/gemm_authors.json" --kernel splitk \
  --set m=5,n=7,k=9,trans_a=T,trans_b=N,alpha=1,beta=0.5 --out "$tmp/dbg"
case "$out" in *"launch 2 of 2 (sgemm_splitk)"*"c (input)"*) ;; *) fail "debug of split-K: $out" ;; esac
expect 0 "verdict: output matches the reference" "$h" debug "$tmp/gemm_authors.json" --kernel sgemm_colmajor \
  --set m=5,n=7,k=3,trans_a=T,trans_b=T,alpha=-2,beta=0.5 --out "$tmp/dbg"

# alpha and beta bound untyped to a kernel taking doubles: a launch_error saying how
sed 's|"double: alpha", "a", "b", "double: beta"|"alpha", "a", "b", "beta"|' "$tmp/gemm_authors.json" >"$tmp/untyped.json"
"$h" run "$tmp/untyped.json" --backend emu --quick --quiet --variant sgemm_author_args --case 0 --out "$tmp/untyped.csv" >/dev/null 2>&1
case "$(reasons "$tmp/untyped.csv" sgemm_author_args)" in
  *"launch_error argument 3 ('alpha') is a 4-byte float but parameter 3 of sgemm_author_args is an 8-byte double"*) ;;
  *) fail "untyped double alpha: $(reasons "$tmp/untyped.csv" sgemm_author_args)" ;; esac

echo "== gemm: 16-bit kernels"
run gemm_half
all_ok "$tmp/gemm_half.csv" 'wmma_direct<__half>' 'wmma_direct<__nv_bfloat16>'
expect 0 "0 rows with findings" "$h" check "$tmp/gemm_half.json" --out "$tmp/check_half.csv"
# a load from an address the wmma rules forbid: ldm 20 halves (k = 20) faults, naming it
sed 's|"m": \[16, 48\]|"m": [16]|; s|"k": \[16, 64\]|"k": [20]|' "$tmp/gemm_half.json" >"$tmp/misaligned.json"
"$h" run "$tmp/misaligned.json" --backend emu --quick --quiet --variant 'wmma_direct<__half>' --out "$tmp/mis.csv" >/dev/null 2>&1
case "$(reasons "$tmp/mis.csv" 'wmma_direct<__half>')" in
  *"fault"*"load_matrix_sync: ldm 20 is not a multiple of 8 elements"*) ;;
  *) fail "misaligned wmma: $(reasons "$tmp/mis.csv" 'wmma_direct<__half>')" ;; esac
# accumulating in half: its own tolerance passes, the float one of gemm_sweep.json fails
run gemm_half2
all_ok "$tmp/gemm_half2.csv" hgemm_half2 bgemm_bf162
python3 - "$tmp/gemm_half2.json" "$tmp/half2_float.json" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
c["check"] = {"atol": "1e-4 * (abs(alpha) * sqrt(k) + abs(beta))", "rtol": 1e-4, "min_match": 1.0}
c["axes"]["k"] = [256]
json.dump(c, open(sys.argv[2], "w"))
PY
"$h" run "$tmp/half2_float.json" --backend emu --quick --quiet --out "$tmp/half2_float.csv" >/dev/null 2>&1
case "$(tally "$tmp/half2_float.csv")" in *"hgemm_half2 mismatch 8"*"bgemm_bf162 mismatch 8"* | *"bgemm_bf162 mismatch 8"*"hgemm_half2 mismatch 8"*) ;;
  *) fail "16-bit accumulators at float tolerances: $(tally "$tmp/half2_float.csv")" ;; esac

echo "== gemm: planted bugs"
run gemm_bugs
r=$(reasons "$tmp/gemm_bugs.csv" bug_beta_ignored)
[ "$(grep -c 'beta=0 ok' <<<"$r")" = 8 ] && [ "$(grep -c 'beta=0.5 mismatch first check' <<<"$r")" = 8 ] ||
  fail "beta ignored: $r"
r=$(reasons "$tmp/gemm_bugs.csv" bug_k_tail)
[ "$(grep -c 'k=16 .* ok' <<<"$r")" = 8 ] && [ "$(grep -c "k=13 .* fault .*past the end of device buffer 'b'" <<<"$r")" = 8 ] ||
  fail "K tail: $r"
r=$(reasons "$tmp/gemm_bugs.csv" bug_trans_swapped)
[ "$(grep -c 'trans_b=N .* ok' <<<"$r")" = 16 ] && [ "$(grep -c 'trans_b=T .* mismatch' <<<"$r")" = 16 ] ||
  fail "transposed index swapped: $r"
r=$(reasons "$tmp/gemm_bugs.csv" bug_no_sync)
[ "$(grep -c ' ok ' <<<"$r")" = 0 ] && [ -n "$r" ] || fail "no __syncthreads in the double buffer passed: $r"
"$h" check "$tmp/gemm_bugs.json" --variant bug_no_sync --out "$tmp/check_bugs.csv" >"$tmp/check_bugs.log" 2>&1
grep -q "race" "$tmp/check_bugs.log" || fail "check did not report the double buffer's race: $(tail -5 "$tmp/check_bugs.log")"

echo "== gemm: tune with restrictions, the winner rerun"
expect 0 "best configurations" "$h" tune "$(cfg gemm_tune)" --backend emu --quick --out "$tmp/tune/t.csv"
case "$out" in *"(0 failed)"*) ;; *) fail "a tuned configuration failed: $(printf '%s\n' "$out" | tail -4)" ;; esac
python3 - "$tmp/tune/t.csv.best.json" "$tmp/gemm_tune.json" "$tmp/tuned.json" <<'PY'
import json, sys
best = json.load(open(sys.argv[1]))
c = json.load(open(sys.argv[2]))
v = c["variants"][0]
v["defines"] = best["results"][0]["config"]
del v["tune"], v["restrict"]
json.dump(c, open(sys.argv[3], "w"))
PY
"$h" run "$tmp/tuned.json" --backend emu --quick --quiet --out "$tmp/tuned.csv" >/dev/null 2>&1 || fail "tuned run exited $?"
all_ok "$tmp/tuned.csv" sgemm_warptile

echo "== softmax"
run softmax_authors --save-tensors "$tmp/st_softmax"
all_ok "$tmp/softmax_authors.csv" softmax_vec4 'softmax_cg_online[BLOCK=32]' 'softmax_cg_online[BLOCK=128]' two_pass
/usr/bin/python3 "$root/tests/numpy_crosscheck.py" "$tmp/st_softmax" "$tmp/softmax_authors.csv" >"$tmp/np.log" 2>&1 ||
  fail "numpy crosscheck (softmax): $(tail -3 "$tmp/np.log")"
expect 0 "0 rows with findings" "$h" check "$tmp/softmax_authors.json" --out "$tmp/check_sm.csv"
expect 0 "verdict: output matches the reference" "$h" debug "$tmp/softmax_authors.json" --kernel two_pass \
  --set rows=3,cols=100 --out "$tmp/dbg"
if grep -q 'NVRTC.*rejects' "$tmp/softmax_authors.log"; then fail "softmax kernels NVRTC rejects: $(cat "$tmp/softmax_authors.log")"; fi
run softmax_bugs
r=$(reasons "$tmp/softmax_bugs.csv" bug_no_max)
[ "$(grep -c 'mismatch .*NaN/Inf' <<<"$r")" = 2 ] || fail "softmax without max: $r"
r=$(reasons "$tmp/softmax_bugs.csv" bug_warp_mask)
[ "$(grep -c 'fault .*mask 0x0000ffff does not include the calling lane 16' <<<"$r")" = 2 ] || fail "wrong warp mask: $r"
r=$(reasons "$tmp/softmax_bugs.csv" bug_inplace)
[ "$(grep -c "mismatch wrote into its input 'x'" <<<"$r")" = 2 ] || fail "softmax writing x: $r"
# a softmax computed in place, its kernel given x alone: nothing of it would be
# checked (it passed "ok" whatever it did); the row fails, naming y
cat >"$tmp/inplace_only.json" <<JSON
{"name": "inplace_only", "op": "softmax", "axes": {"rows": [4], "cols": [8]},
 "check": {"atol": 1e-7, "rtol": 1e-5},
 "variants": [{"name": "noop", "file": "$root/tests/kernels/newops/softmax_authors.cu", "kernel": "softmax_noop",
               "block": [32], "grid": [1], "args": ["x", "rows", "cols"]}]}
JSON
"$h" run "$tmp/inplace_only.json" --backend emu --quick --quiet --out "$tmp/inplace_only.csv" >/dev/null 2>&1
r=$(reasons "$tmp/inplace_only.csv" noop)
case "$r" in *"mismatch args bind none of softmax's outputs ('y')"*) ;; *) fail "a variant given no output: $r" ;; esac
expect 1 "args bind none of softmax's outputs ('y')" "$h" debug "$tmp/inplace_only.json" --kernel noop --out "$tmp/dbg"
case "$out" in *"verdict: output does NOT match"*) ;; *) fail "debug of a variant given no output: $out" ;; esac
# debug says so too (it printed "output matches the reference" and exited 0)
expect 1 "verdict: output matches the reference; the kernel wrote into its input 'x'" "$h" debug \
  "$tmp/softmax_bugs.json" --kernel bug_inplace --set cols=8 --out "$tmp/dbg"

echo "== layernorm"
run layernorm_authors --save-tensors "$tmp/st_ln"
all_ok "$tmp/layernorm_authors.csv" layernorm_llmc_cg layernorm_y_cg layernorm_rstd_first layernorm_welford4
[ "$(tally "$tmp/layernorm_authors.csv" | grep -c '^layernorm_llmc_cg ok 15$')" = 1 ] ||
  fail "eps as a define: not every case ran: $(tally "$tmp/layernorm_authors.csv")"
/usr/bin/python3 "$root/tests/numpy_crosscheck.py" "$tmp/st_ln" "$tmp/layernorm_authors.csv" >"$tmp/np.log" 2>&1 ||
  fail "numpy crosscheck (layernorm): $(tail -3 "$tmp/np.log")"
expect 0 "0 rows with findings" "$h" check "$tmp/layernorm_authors.json" --out "$tmp/check_ln.csv"
expect 0 "verdict: output matches the reference" "$h" debug "$tmp/layernorm_authors.json" --kernel layernorm_rstd_first \
  --set rows=3,cols=40 --out "$tmp/dbg"
run layernorm_bugs
r=$(reasons "$tmp/layernorm_bugs.csv" bug_unbiased)
[ "$(grep -c "mismatch .*'rstd' match" <<<"$r")" = 2 ] || fail "unbiased variance: $r"
r=$(reasons "$tmp/layernorm_bugs.csv" bug_warp_mask)
[ "$(grep -c 'fault .*mask 0x7fffffff does not include the calling lane 31' <<<"$r")" = 2 ] || fail "layernorm warp mask: $r"

finish
