#!/usr/bin/env bash
# test_authors.sh: well-known public kernels retyped as their authors wrote them
# (tests/kernels/authors/, each file naming its source), bound to the catalogue's
# operators by configs alone (tests/configs/authors/), run on the emulator:
#   - every row of every config is ok, with no reason (an ok row whose reason says
#     NVRTC rejects the kernel would not build for a GPU);
#   - NVRTC compiles every variant for sm_90 (no GPU needed);
# what the kernels needed of the harness, each once refused:
#   - template names as written: relu_kernel<float>, sigmoid_kernel<> (defaults),
#     relu_indexed<float, unsigned int>, <float, std::ptrdiff_t>, reduce4<float, 128>;
#   - an operator parameter (n) bound to an int64_t, size_t, long long, uint64_t ...
#     parameter goes at that width (it was a launch_error asking for "long: n");
#   - a pointer into a buffer in args ("y + n / 2"), as a host loop over chunks
#     passes one; out of the buffer, the row is a launch_error naming the file and
#     the JSON path; an unknown name in the offset is exit 2;
#   - llm.c's -INFINITY with only <stdio.h>, <stdlib.h>, <float.h> and
#     <cuda_runtime.h> included, std::size_t with only <cstdint>, as nvcc allows.
. "$(dirname "$0")/lib.sh"
cfgs="$root/tests/configs/authors"

# not_ok CSV...: the rows that are not ok, or ok with a reason, one a line
not_ok() {
  python3 - "$@" <<'PY'
import csv, os, sys
for f in sys.argv[1:]:
    for r in csv.DictReader(open(f, newline="")):
        if r["status"] != "ok" or r["reason"]:
            print(os.path.basename(f), r["case"], r["variant"], r["status"], r["reason"][:300], sep=" | ")
PY
}

echo "== every config on the emulator: every row ok"
n=0
for cfg in "$cfgs"/*.json; do
  b=$(basename "$cfg" .json)
  "$h" run "$cfg" --backend emu --out "$tmp/$b.csv" >"$tmp/$b.out" 2>&1 || fail "$b exited $?: $(tail -5 "$tmp/$b.out")"
  [ -f "$tmp/$b.csv" ] || { fail "$b wrote no CSV"; continue; }
  bad=$(not_ok "$tmp/$b.csv")
  [ -z "$bad" ] || fail "$b: $bad"
  n=$((n + 1))
done
[ "$n" -ge 9 ] || fail "expected at least 9 configs in $cfgs, ran $n"

echo "== every variant compiles under NVRTC"
for cfg in "$cfgs"/*.json; do
  b=$(basename "$cfg" .json)
  out=$("$h" compile "$cfg" --arch sm_90 2>&1) || fail "compile $b exited $?: $(printf '%s\n' "$out" | tail -5)"
done

echo "== the names and widths the configs rely on"
rows=$(python3 -c "
import csv
for r in csv.DictReader(open('$tmp/pytorch_relu.csv')): print(r['variant'])" | sort -u | tr '\n' ';')
for v in "relu_kernel<float>" "relu_indexed<float, unsigned int>" "relu_indexed<float, std::ptrdiff_t>" \
         "relu_indexed<float, unsigned long long>"; do
  case "$rows" in *"$v;"*) ;; *) fail "no rows of $v: $rows" ;; esac
done
grep -q '^0,.*sigmoid_kernel<>' "$tmp/pytorch_sigmoid.csv" || fail "no row of sigmoid_kernel<>"

grep -q '^[0-9],.*relu_kernel_halves.*,ok,' "$tmp/pytorch_relu.csv" || fail "no ok row of relu_kernel_halves"

echo "== a pointer into a buffer: checked against its size at each row, named by file and JSON path"
python3 - "$cfgs/pytorch_relu.json" "$tmp/off.json" "$root" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
c["defaults"]["file"] = sys.argv[3] + "/tests/kernels/authors/pytorch_elementwise.cu"
v = [v for v in c["variants"] if v.get("name") == "relu_kernel_halves"][0]
v["launches"][1]["args"][1] = "y + n / 2 + n"
c["variants"] = [v]
json.dump(c, open(sys.argv[2], "w"))
PY
"$h" run "$tmp/off.json" --backend emu --out "$tmp/off.csv" >"$tmp/off.out" 2>&1
[ $? = 1 ] || fail "an offset past the end should fail its rows: $(tail -3 "$tmp/off.out")"
r=$(python3 -c "
import csv
for r in csv.DictReader(open('$tmp/off.csv')):
    if r['case'] == '1': print(r['status'], r['reason'])")
case "$r" in "launch_error "*"off.json: variants[0].launches[1].args[1]: 'y + n / 2 + n': offset 1500 is outside buffer 'y' (1000 elements: 0 to 1000)"*) ;;
  *) fail "offset past the end, case 1: $r" ;; esac
sed 's#"y + n / 2 + n"#"y + m"#' "$tmp/off.json" >"$tmp/off2.json"
expect 2 "off2.json: variants[0].launches[1].args[1]: in ' m': unknown name 'm'" "$h" list "$tmp/off2.json"

sed -e 's#"F": "filter"#"F": "filter + 1"#' -e "s#\"../../kernels/#\"$root/tests/kernels/#" \
  "$cfgs/pmpp_conv2d_const.json" >"$tmp/off3.json"
expect 2 "off3.json: variants[0].constants.F: 'filter + 1': a constant gets a whole buffer's contents" "$h" list "$tmp/off3.json"

echo "== bad template names are still exit 2 naming the JSON path"
sed 's/"sigmoid_kernel<>"/"sigmoid_kernel<float,>"/' "$cfgs/pytorch_sigmoid.json" >"$tmp/bad.json"
sed -i "s#\"../../kernels/#\"$root/tests/kernels/#" "$tmp/bad.json"
expect 2 "bad.json: variants[0].kernel: 'sigmoid_kernel<float,>' is not a kernel's C++ name" "$h" list "$tmp/bad.json"

finish
