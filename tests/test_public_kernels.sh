#!/usr/bin/env bash
# test_public_kernels.sh: kernels from public repositories, retyped as their authors
# wrote them (tests/kernels/public/, each naming its source), bound to the catalogue's
# operators by configs (tests/configs/public/) and run on the emulator on small sizes:
#   - karpathy/llm.c matmul_forward 1 and 4 (linear): kernel 4's float4 store on a
#     misaligned row is a fault that says "misaligned vector access", not "(nil)";
#     harness check reports each misaligned access of its inlined ld_vec once;
#   - llm.c matmul_backward_bias 1, 2, 4 and 8 (linear_backward's dbias): ok with "zero"
#     (kernel 8's std::bool_constant<Atomic> argument bound as "bool: 1"); one without
#     zero is a mismatch whose reason says to give it;
#   - siboehm's SGEMM (uint indices) on the gemm operator, at beta 0 and 3 (c read and
#     written): NVRTC compiles it, every row ok;
#   - Caffe's MaxPoolForward (caffe::MaxPoolForward<float>, top_mask NULL through a
#     0-byte scratch): ok, and harness debug runs it;
#   - cuda-samples reduce6 on reduce_sum, two launches: ok with 32 threads in the second; with 8
#     (as the sample's host code picks for 8 partial sums) the warp shuffle names lanes
#     that do not exist: a fault here, and the reason says a GPU would run on with
#     undefined values from them (it said only "they will never arrive");
#   - llm.c's softmax / crossentropy kernels in five launches: ok, and clean under check;
#   - LeetCUDA's relu_f32x4_kernel: ok for n % 4 == 0, a fault past the end otherwise;
#   - Kernel Tuner's matmul example (WIDTH fixed in the kernel): harness tune with
#     WIDTH tuned and "where": "WIDTH == n" searches each case's own WIDTH (the where
#     was not part of the space: the other WIDTH's rows were skipped, spending the
#     budget, and a case could end with nothing correct); WIDTH as a define list is
#     refused, as tune searched its first value alone;
#   - Caffe's MaxPoolBackward, im2col_gpu_kernel, SigmoidForward, ReLUBackward and
#     SigmoidBackward (which takes the forward's output: SigmoidForward into a scratch
#     first, two launches), PMPP's basic conv2d: every row ok.
. "$(dirname "$0")/lib.sh"
cfgs="$root/tests/configs/public"

# rows CSV: "case<TAB>variant<TAB>status" per row, one a line
rows() {
  python3 - "$1" <<'PY'
import csv, sys
for r in csv.DictReader(open(sys.argv[1], newline="")):
    print(r["case"], r["variant"], r["status"], sep="\t")
PY
}

# reason CSV CASE VARIANT: that row's reason
reason() {
  python3 - "$@" <<'PY'
import csv, sys
for r in csv.DictReader(open(sys.argv[1], newline="")):
    if r["case"] == sys.argv[2] and r["variant"] == sys.argv[3]:
        print(r["reason"])
PY
}

# statuses CSV VARIANT: the sorted set of that variant's statuses
statuses() {
  rows "$1" | awk -F'\t' -v v="$2" '$2 == v { print $3 }' | sort -u | tr '\n' ' '
}

echo "== llm.c matmul_forward: kernel 1 everywhere, kernel 4 where its sizes hold"
"$h" run "$cfgs/llmc_linear.json" --backend emu --out "$tmp/lin.csv" >"$tmp/lin.out" 2>&1
[ $? = 1 ] || fail "llmc_linear should exit 1 (kernel 4 faults off its sizes): $(tail -5 "$tmp/lin.out")"
[ "$(statuses "$tmp/lin.csv" matmul_forward_kernel1)" = "ok " ] || fail "kernel1: $(rows "$tmp/lin.csv")"
got=$(rows "$tmp/lin.csv" | awk -F'\t' '$2 == "matmul_forward_kernel4" { printf "%s=%s ", $1, $3 }')
[ "$got" = "0=ok 1=fault 2=fault 3=fault 4=fault 5=fault 6=fault 7=fault " ] || fail "kernel4 rows: $got"
r=$(reason "$tmp/lin.csv" 1 matmul_forward_kernel4)
case "$r" in *"misaligned vector access"*"harness check names the access"*) ;;
  *) fail "b:8, 4 -> 33 (rows of 33 floats: a float4 store off 16 bytes): $r" ;; esac
case "$r" in *"(nil)"*) fail "the reason names address (nil): $r" ;; esac

out=$("$h" check "$cfgs/llmc_linear.json" --case 2 --variant matmul_forward_kernel4 --out "$tmp/linc.csv" 2>&1)
n=$(printf '%s\n' "$out" | grep -c "^memcheck: .*misaligned read at .*'weight' + 68")
[ "$n" = 1 ] || fail "check: the misaligned read of weight + 68 should be reported once, got $n: $out"

echo "== llm.c matmul_backward_bias: zero, or a reason that asks for it"
"$h" run "$cfgs/llmc_bias.json" --backend emu --out "$tmp/bias.csv" >"$tmp/bias.out" 2>&1
[ $? = 1 ] || fail "llmc_bias should exit 1 (one variant is not zeroed)"
for v in matmul_backward_bias_kernel1 matmul_backward_bias_kernel2 matmul_backward_bias_kernel4 \
         "matmul_backward_bias_kernel8<float, true>"; do
  [ "$(statuses "$tmp/bias.csv" "$v")" = "ok " ] || fail "$v: $(rows "$tmp/bias.csv")"
done
[ "$(statuses "$tmp/bias.csv" kernel1_not_zeroed)" = "mismatch " ] || fail "not zeroed: $(rows "$tmp/bias.csv")"
r=$(reason "$tmp/bias.csv" 0 kernel1_not_zeroed)
case "$r" in *'give the variant "zero": ["dbias"]'*) ;; *) fail "not zeroed, reason: $r" ;; esac

echo "== siboehm's SGEMM on gemm: NVRTC compiles uint, every row ok, beta 3 included"
expect_show=tail
expect 0 "sgemm2DBlocktiling<64, 64, 8, 8, 8>" "$h" compile "$cfgs/sgemm_siboehm.json" --arch sm_90
case "$out" in *"uint"*) fail "NVRTC should take uint: $out" ;; esac
"$h" run "$cfgs/sgemm_siboehm.json" --backend emu --out "$tmp/sgemm.csv" >"$tmp/sgemm.out" 2>&1
for v in "sgemm_global_mem_coalesce<32>" "sgemm2DBlocktiling<64, 64, 8, 8, 8>"; do
  [ "$(statuses "$tmp/sgemm.csv" "$v")" = "ok " ] || fail "$v: $(rows "$tmp/sgemm.csv")"
done
n_beta=$(python3 -c "import csv; print(sum(r['beta'] == '3' and r['status'] == 'ok' for r in csv.DictReader(open('$tmp/sgemm.csv'))))")
[ "$n_beta" = 8 ] || fail "siboehm at beta 3 (c read, restored before each launch): $n_beta of 8 rows ok"
r=$(reason "$tmp/sgemm.csv" 0 "sgemm2DBlocktiling<64, 64, 8, 8, 8>")
[ -z "$r" ] || fail "an ok row with a reason (NVRTC?): $r"

echo "== Caffe's MaxPoolForward: a namespaced template, run and debug"
expect 0 "fastest correct variant" "$h" run "$cfgs/caffe_pool2d.json" --backend emu --out "$tmp/pool.csv"
[ "$(statuses "$tmp/pool.csv" "caffe::MaxPoolForward<float>")" = "ok " ] || fail "pool: $(rows "$tmp/pool.csv")"
expect 0 "verdict: output matches the reference" "$h" debug "$cfgs/caffe_pool2d.json" --backend emu \
  --kernel "caffe::MaxPoolForward<float>" --set img_size=9,k=3 --out "$tmp/dbg"

echo "== cuda-samples reduce6 in two launches"
"$h" run "$cfgs/reduce6.json" --backend emu --out "$tmp/red.csv" >"$tmp/red.out" 2>&1
[ "$(statuses "$tmp/red.csv" reduce6_two_pass)" = "ok " ] || fail "two pass: $(rows "$tmp/red.csv")"
[ "$(statuses "$tmp/red.csv" reduce6_second_pass_8)" = "fault " ] || fail "8 threads: $(rows "$tmp/red.csv")"
r=$(reason "$tmp/red.csv" 0 reduce6_second_pass_8)
case "$r" in *"launch 2 of 2"*"names lanes 8-31 of warp 0, which do not exist (the block has 8 threads)"*"a GPU runs on, and what a shuffle or vote takes from them is undefined"*) ;;
  *) fail "8 threads, reason: $r" ;; esac

echo "== llm.c softmax + crossentropy in five launches: run and check"
expect 0 "fastest correct variant" "$h" run "$cfgs/llmc_crossentropy.json" --backend emu --out "$tmp/xent.csv"
[ "$(statuses "$tmp/xent.csv" llmc_softmax_xent)" = "ok " ] || fail "xent: $(rows "$tmp/xent.csv")"
expect 0 "0 rows with findings" "$h" check "$cfgs/llmc_crossentropy.json" --out "$tmp/xentc.csv"

echo "== LeetCUDA relu_f32x4_kernel: whole float4s"
"$h" run "$cfgs/leetcuda_relu.json" --backend emu --hot --out "$tmp/relu.csv" >"$tmp/relu.out" 2>&1
got=$(rows "$tmp/relu.csv" | awk -F'\t' '{ printf "%s:%s=%s ", $1, $2, $3 }')
[ "$got" = "0:relu_f32_kernel=ok 0:relu_f32x4_kernel=ok 1:relu_f32_kernel=ok 1:relu_f32x4_kernel=fault " ] ||
  fail "relu rows: $got"
r=$(reason "$tmp/relu.csv" 1 relu_f32x4_kernel)
case "$r" in *"past the end of device buffer 'y'"*) ;; *) fail "relu x4 at n = 1027: $r" ;; esac

echo "== Kernel Tuner's matmul: tuned per case, WIDTH kept to the case by where"
expect_show=all
expect 0 "case 1: 576 raw configurations, 32 valid" "$h" tune "$cfgs/kerneltuner_matmul.json" --space-only
case "$out" in *"case 0: 576 raw configurations, 22 valid"*) ;;
  *) fail "the where (WIDTH == n) should cut each case's space to its own WIDTH: $out" ;; esac
expect 0 "best configurations" "$h" tune "$cfgs/kerneltuner_matmul.json" --backend emu --budget 3 --out "$tmp/kt"
for want in "case 0 .* WIDTH=64," "case 1 .* WIDTH=128,"; do
  printf '%s\n' "$out" | grep -q "^$want" || fail "tune: no unit line '$want': $out"
done
case "$out" in *"no configuration ran correctly"*) fail "a unit found nothing that runs: $out" ;; esac
python3 - "$cfgs/kerneltuner_matmul.json" "$tmp/kt_list.json" <<'PY'
import json, os, sys
c = json.load(open(sys.argv[1]))
v = c["variants"][0]
v["file"] = os.path.join(os.path.dirname(sys.argv[1]), v["file"])
v["defines"] = {"WIDTH": v["tune"].pop("WIDTH")}
json.dump(c, open(sys.argv[2], "w"))
PY
# WIDTH as a define of two values: tune searches around the first and says so
# (--variant LABEL tunes the other); the case only WIDTH=128 serves finds nothing
expect 1 "has 2 define combinations; tuning the first, matmul_kernel[WIDTH=64] (--variant LABEL tunes another: matmul_kernel[WIDTH=128])" \
  "$h" tune "$tmp/kt_list.json" --backend emu --budget 3 --out "$tmp/kt_list"

echo "== Caffe's MaxPoolBackward, im2col_gpu_kernel, SigmoidForward, ReLUBackward, SigmoidBackward; PMPP's conv2d"
for c in caffe_pool2d_backward caffe_im2col caffe_sigmoid caffe_relu_backward caffe_sigmoid_backward pmpp_conv2d; do
  "$h" run "$cfgs/$c.json" --backend emu --out "$tmp/$c.csv" >"$tmp/$c.out" 2>&1 || fail "$c: $(tail -5 "$tmp/$c.out")"
  bad=$(rows "$tmp/$c.csv" | awk -F'\t' '$3 != "ok"')
  [ -z "$bad" ] || fail "$c rows not ok: $bad"
done

finish
