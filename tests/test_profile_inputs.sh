#!/usr/bin/env bash
# test_profile_inputs.sh: `harness profile` on a kernel that faults: the row
# is a fault as in a run, and the profile says it has none and why, on stdout
# and in <out>.txt (it used to be silently missing: only the status table's
# "fault 1" hinted at it); the kernel of another operator than conv2d (relu)
# beside it is profiled as usual.
. "$(dirname "$0")/lib.sh"

cat >"$tmp/relu_bad.cu" <<'EOF'
extern "C" __global__ void relu_ok(const float *x, float *y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] > 0 ? x[i] : 0;
}
extern "C" __global__ void relu_fault(const float *x, float *y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i == 3) y[i + (1 << 28)] = 1.0f;
    if (i < n) y[i] = x[i] > 0 ? x[i] : 0;
}
EOF
cat >"$tmp/relu_bad.json" <<'EOF'
{
  "name": "relu_bad", "op": "relu",
  "axes": {"n": [100]},
  "check": {"atol": 0, "rtol": 0, "min_match": 1.0},
  "variants": [
    {"file": "relu_bad.cu", "kernel": "relu_ok", "block": [32,1,1], "grid": ["ceil_div(n, 32)",1,1], "args": ["x","y","n"]},
    {"file": "relu_bad.cu", "kernel": "relu_fault", "block": [32,1,1], "grid": ["ceil_div(n, 32)",1,1], "args": ["x","y","n"]}
  ]
}
EOF
out=$("$h" profile "$tmp/relu_bad.json" --out "$tmp/p.csv" --emu-threads 1 2>&1)
rc=$?
[ "$rc" = 1 ] || fail "a faulting variant: exit $rc, expected 1: $out"
case "$out" in *"profile of variant relu_ok, case 0 (n:100): kernel 'relu_ok', 1 launch, every block (4) profiled"*) ;;
  *) fail "relu_ok not profiled: $out" ;; esac
case "$out" in *"profile of variant relu_fault, case 0 (n:100): none, the launch failed (fault: "*"relu_bad.cu:7"*) ;;
  *) fail "the faulting row's missing profile not said: $out" ;; esac
grep -q "relu_fault, case 0 (n:100): none, the launch failed (fault: " "$tmp/p.txt" ||
  fail "p.txt does not say relu_fault has no profile: $(cat "$tmp/p.txt")"
grep -q ",relu_fault,relu_fault,.*,fault," "$tmp/p.csv" || fail "no fault row: $(cat "$tmp/p.csv")"
out=$("$h" profile "$tmp/relu_bad.json" --out "$tmp/q.csv" --quiet --variant relu_fault 2>&1)
case "$out" in *"none, the launch failed"*) fail "--quiet printed the profile line: $out" ;; esac
grep -q "none, the launch failed" "$tmp/q.txt" || fail "--quiet: q.txt lacks the line"

finish
