#!/usr/bin/env bash
# test_scratch_reuse.sh: a variant's scratch buffers after another variant's
# (hn_workload_scratch reuses an allocation only where the size is the same):
#   - a later variant whose scratch is too small faults on the emulator, naming
#     its own buffer, though an earlier variant's was larger (it used to write
#     into the earlier, larger allocation and pass);
#   - a reused allocation of the same size carries the later variant's name in
#     the sanitizer's report ('counter (scratch)', not the earlier 'done').
# Kernel: tests/kernels/zero/softmax_lastblock.cu (partial sums, then a counter).
. "$(dirname "$0")/lib.sh"

# config NAME SMALL_SCRATCH SMALL_ZERO: variant "big" (one warp a block, its
# partials 4 * batch bytes), then "small" (four warps a block) with the scratch
# and zero given
config() {
  cat >"$tmp/$1.json" <<EOF
{
  "name": "$1", "op": "softmax_cross_entropy",
  "axes": {"batch": [64], "classes": [10]},
  "timing": {"warmup": 1, "repeat": 1},
  "check": {"loss": {"atol": 1e-5, "rtol": 1e-5}, "dlogits": {"atol": 1e-6, "rtol": 1e-5}},
  "defaults": {"file": "$root/tests/kernels/zero/softmax_lastblock.cu", "kernel": "softmax_lastblock",
               "block": ["32 * WARPS", 1, 1], "grid": ["ceil_div(batch, WARPS)", 1, 1]},
  "variants": [
    {"name": "big", "defines": {"WARPS": 1}, "scratch": {"partials": "4 * batch", "done": 4}, "zero": ["done"],
     "args": ["logits", "labels", "loss", "dlogits", "batch", "classes", "partials", "done"]},
    {"name": "small", "defines": {"WARPS": 4}, "scratch": $2 $3
     "args": ["logits", "labels", "loss", "dlogits", "batch", "classes", "sums", "counter"]}
  ]
}
EOF
}
# row VARIANT CSV: "status reason" of the variant's row
row() {
  python3 - "$1" "$2" <<'PY'
import csv, sys
for r in csv.DictReader(open(sys.argv[2], newline="")):
    if r["variant"] == sys.argv[1]:
        print(r["status"], r["reason"])
PY
}

echo "== a smaller scratch buffer after a larger one"
config over '{"sums": 4, "counter": 4},' '"zero": ["counter"],'
"$h" run "$tmp/over.json" --backend emu --quiet --out "$tmp/over.csv" >"$tmp/log" 2>&1
s=$(row big "$tmp/over.csv")
case "$s" in "ok"*) ;; *) fail "big: $s" ;; esac
s=$(row small "$tmp/over.csv")
case "$s" in "fault "*"past the end of device buffer 'sums (scratch)'"*) ;; *) fail "small (16 blocks in 4 bytes): $s" ;; esac

echo "== a reused allocation named for the variant that uses it"
config label '{"sums": "4 * batch", "counter": 4},' ''
out=$("$h" check "$tmp/label.json" --out "$tmp/label.csv" 2>&1)
case "$out" in *"initcheck: kernel 'softmax_lastblock'"*"device buffer 'counter (scratch)'"*"never written"*) ;;
  *) fail "counter not zeroed: $out" ;; esac
case "$out" in *"'done (scratch)'"*) fail "the earlier variant's name: $out" ;; esac

finish
