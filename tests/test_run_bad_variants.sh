#!/usr/bin/env bash
# test_run_bad_variants.sh: a variant whose launch cannot be set up is a
# launch_error row saying why, and the sweep goes on (exit 1, the good variant ok):
# a block or grid under 1, negative shared memory, typed arguments that do not fit
# (int, unsigned, long, a string), debug_counter outside a debug run, arguments
# whose kind or count differs from the kernel's parameters (naming the typed
# argument that would fit: "long: n" for a size_t, "bool: 1" for a bool or an empty
# tag such as std::bool_constant<B>, which had no way to be bound; an explicit "int:"
# for a long: an operator parameter named alone takes the kernel's integer width,
# test_authors.sh); typed expressions
# that do fit bind like the operator's own parameters. Also --backend names.
. "$(dirname "$0")/lib.sh"

cat >"$tmp/odd.cu" <<'CU'
// Kernels with parameters conv2d_pad lacks: a long, a trailing debug counter.
__global__ void k_long(float *out, long n) {
    if (threadIdx.x == 0 && n == 12345) out[0] = 0.0f;
}
__global__ void k_counter(float *out, int *debug_counter) {
    if (threadIdx.x == 0 && debug_counter) out[0] = 0.0f;
}
CU
K="$root/kernels/conv2d/conv2d_pad.cu"
A='"in", "out", "filter", "h", "w", "in_ch", "out_ch"'
cat >"$tmp/bad.json" <<JSON
{"op": "conv2d", "axes": {"in_ch": [1], "out_ch": [1], "filter_size": [3], "img_size": [8]},
 "timing": {"repeat": 1},
 "defaults": {"file": "$K", "kernel": "conv2d_pad", "block": [8, 8], "grid": [1, 1],
              "defines": {"ACCUM_DTYPE": "float", "BIG": 3000000000, "NAME": "x"},
              "args": [$A, "filter_size", "pad"]},
 "variants": [
  {"name": "block0", "block": ["in_ch - 1", 8]},
  {"name": "gridneg", "grid": ["w - 100", 1]},
  {"name": "sharedneg", "shared_bytes": "-4"},
  {"name": "bigint", "args": [$A, "int: BIG", "pad"]},
  {"name": "negunsigned", "args": [$A, "unsigned: -1", "pad"]},
  {"name": "stringarg", "args": [$A, "int: NAME", "pad"]},
  {"name": "doublepad", "args": [$A, "filter_size", "double: 0.5"]},
  {"name": "ptrpad", "args": [$A, "filter_size", "in"]},
  {"name": "toomany", "args": [$A, "filter_size", "pad", "int: 1"]},
  {"name": "fraclong", "file": "odd.cu", "kernel": "k_long", "args": ["out", "long: 2.5"]},
  {"name": "intlong", "file": "odd.cu", "kernel": "k_long", "args": ["out", "int: filter_size"]},
  {"name": "counter", "file": "odd.cu", "kernel": "k_counter", "args": ["out", "debug_counter"]},
  {"name": "typedok", "args": ["in", "out", "filter", "int: h", "unsigned: w", "int: in_ch", "int: out_ch",
                               "int: filter_size", "float: 0"]}
 ]}
JSON
"$h" run "$tmp/bad.json" --backend emu --out "$tmp/bad.csv" >"$tmp/bad.out" 2>&1
rc=$?
[ "$rc" = 1 ] || fail "exit $rc, expected 1: $(tail -5 "$tmp/bad.out")"
got=$(python3 - "$tmp/bad.csv" <<'PY'
import csv, sys
for r in csv.DictReader(open(sys.argv[1], newline="")):
    print(f"{r['variant']} {r['status']} | {r['reason']}")
PY
)
want="block0 launch_error | block[0] 'in_ch - 1' = 0 (must be at least 1)
gridneg launch_error | grid[0] 'w - 100' = -92 (must be at least 1)
sharedneg launch_error | shared_bytes '-4' = -4 is negative
bigint launch_error | args[7] 'int: BIG': = 3e+09 does not fit an int
negunsigned launch_error | args[7] 'unsigned: -1': = -1 does not fit an unsigned int
stringarg launch_error | args[7] 'int: NAME': is the string \"x\", not a number
doublepad launch_error | argument 8 ('double: 0.5') is an 8-byte double but parameter 8 of conv2d_pad is a 4-byte float (write \"float: 0.5\" in args to pass it as one)
ptrpad launch_error | argument 8 ('in') is an 8-byte pointer but parameter 8 of conv2d_pad is a 4-byte float
toomany launch_error | kernel conv2d_pad takes 9 parameters but the config binds 10 arguments
fraclong launch_error | args[1] 'long: 2.5': = 2.5 is not an integer
intlong launch_error | argument 1 ('int: filter_size') is a 4-byte signed integer but parameter 1 of k_long is an 8-byte signed integer (write \"long: filter_size\" in args to pass it as one)
counter launch_error | args[1] binds debug_counter, which exists only in debug runs (SINGLE_BLOCK)
typedok ok | "
[ "$got" = "$want" ] || fail "rows:
$got
expected:
$want"

# bool: a bool parameter, or an empty tag (llm.c's std::bool_constant<Atomic>), is one
# byte: "bool: 0|1" binds it, the byte arrives, and an int given for it names the fix;
# in a struct a bool is one byte at any offset, as C lays it out.
cat >"$tmp/flag.cu" <<'CU'
#include <type_traits>
template <bool Tag>
__global__ void relu_flag(const float *x, float *y, int n, bool on, std::bool_constant<Tag>) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = on && Tag ? (x[i] > 0.0f ? x[i] : 0.0f) : x[i];
}
struct Flags { int n; bool on, tag; float scale; }; // n at 0, on at 4, tag at 5, scale at 8: 12 bytes
__global__ void relu_flags(const float *x, float *y, Flags f) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < f.n) y[i] = f.on && f.tag ? f.scale * (x[i] > 0.0f ? x[i] : 0.0f) : x[i];
}
CU
cat >"$tmp/flag.json" <<JSON
{"op": "relu", "axes": {"n": [100]}, "timing": {"repeat": 1},
 "defaults": {"file": "$tmp/flag.cu", "kernel": "relu_flag<true>", "block": [128], "grid": [1]},
 "variants": [
  {"name": "on", "args": ["x", "y", "n", "bool: n > 0", "bool: 1"]},
  {"name": "off", "args": ["x", "y", "n", "bool: 0", "bool: 1"]},
  {"name": "int_for_bool", "args": ["x", "y", "n", "int: 1", "bool: 1"]},
  {"name": "int_for_tag", "args": ["x", "y", "n", "bool: 1", "int: 0"]},
  {"name": "two", "args": ["x", "y", "n", "bool: 2", "bool: 1"]},
  {"name": "in_struct", "kernel": "relu_flags", "args": ["x", "y", ["n", "bool: 1", "bool: 1", "float: 1"]]}
 ]}
JSON
"$h" run "$tmp/flag.json" --backend emu --out "$tmp/flag.csv" >"$tmp/flag.out" 2>&1
[ $? = 1 ] || fail "flag: exit 1 expected: $(tail -5 "$tmp/flag.out")"
got=$(python3 - "$tmp/flag.csv" <<'PY'
import csv, sys
for r in csv.DictReader(open(sys.argv[1], newline="")):
    print(f"{r['variant']} {r['status']} | {r['reason'][:70] if r['status'] == 'mismatch' else r['reason']}")
PY
)
want="on ok | 
off mismatch | first check: 63.0000% of 100 elements match (need 90%), 0 NaN/Inf, max
int_for_bool launch_error | argument 3 ('int: 1') is a 4-byte signed integer but parameter 3 of relu_flag<true> is a 1-byte unsigned integer (write \"bool: 1\" in args to pass it as one)
int_for_tag launch_error | argument 4 ('int: 0') is a 4-byte signed integer but parameter 4 of relu_flag<true> is a 1-byte struct (write \"bool: 0\" in args to pass it as one)
two launch_error | args[3] 'bool: 2': = 2 is not a bool (0 or 1)
in_struct ok | "
[ "$got" = "$want" ] || fail "flag rows:
$got
expected:
$want"

# --backend: a name that is neither is bad usage; auto picks one and says which.
out=$("$h" run "$tmp/bad.json" --backend nope --variant typedok --out "$tmp/nope.csv" 2>&1)
rc=$?
[ "$rc" = 2 ] || fail "--backend nope: exit $rc, expected 2: $out"
case "$out" in *"--backend: 'nope' is not a backend (cuda, emu or auto)"*) ;; *) fail "--backend nope: $out" ;; esac
out=$("$h" run "$tmp/bad.json" --variant typedok --out "$tmp/auto.csv" 2>&1)
rc=$?
[ "$rc" = 0 ] || fail "--backend auto: exit $rc: $out"
be=$(python3 -c 'import csv, sys; print(next(csv.DictReader(open(sys.argv[1])))["backend"])' "$tmp/auto.csv")
case "$out" in
  *"harness: backend emu (auto: "*) [ "$be" = emu ] || fail "auto said emu, rows say $be" ;;
  *"harness: backend cuda (auto)"*) [ "$be" = cuda ] || fail "auto said cuda, rows say $be" ;;
  *) fail "--backend auto did not say which: $out" ;;
esac
if [ ! -e /dev/nvidia0 ]; then
  [ "$be" = emu ] || fail "auto without a GPU ran on $be"
fi

echo "== a variant that does not compile, beside one that writes 16 KiB past its output in every case"
# (each fault restarts the worker, which compiled the broken variant again and
# printed its error again; the write skipped the one guard page after the buffer)
cat >"$tmp/broken.cu" <<'CU'
__global__ void no_semicolon(const float *x, float *y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x
    if (i < n) y[i] = x[i] > 0 ? x[i] : 0.0f;
}
CU
cat >"$tmp/faults.cu" <<'CU'
extern "C" __global__ void writes_past(const float *x, float *y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i == 3) y[i + n + 4096] = 1.0f;
    if (i < n) y[i] = x[i] > 0 ? x[i] : 0.0f;
}
CU
cat >"$tmp/broken.json" <<'JSON'
{"op": "relu", "axes": {"n": [10, 20, 30, 40]},
 "defaults": {"file": "broken.cu", "block": [32], "grid": ["ceil_div(n, 32)"], "args": ["x", "y", "n"]},
 "variants": [{"kernel": "no_semicolon"}, {"file": "faults.cu", "kernel": "writes_past"}]}
JSON
out=$("$h" run "$tmp/broken.json" --backend emu --quick --out "$tmp/broken.csv" 2>&1)
[ $? = 1 ] || fail "broken: exit $?: $out"
# compiled (and its error printed) once, not once per worker
[ "$(printf '%s\n' "$out" | grep -c "compile error in $tmp/broken.cu")" = 1 ] || fail "the compile error, not once: $out"
python3 - "$tmp/broken.csv" <<'PY' || fail "broken.csv"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1], newline="")))
got = sorted((r["case"], r["variant"], r["status"]) for r in rows)
want = sorted((str(c), v, s) for c in range(4) for v, s in (("no_semicolon", "compile_error"), ("writes_past", "fault")))
assert got == want, got
why = {r["reason"] for r in rows if r["status"] == "compile_error"}
assert len(why) == 1 and "broken.cu:3" in why.pop(), [r["reason"] for r in rows]
# 16 KiB past its output, past the guard page: still a fault naming the output
# (it had landed in the input's slack, then in the worker's own state)
for r in rows:
    if r["variant"] == "writes_past":
        assert "bytes past the end of device buffer 'y'" in r["reason"], r["reason"]
        # an extern "C" kernel's line (it was "emu-<key>.so+0x...")
        assert " at faults.cu:3" in r["reason"], r["reason"]
keys = {r["compile_key"] for r in rows if r["variant"] == "no_semicolon"}
assert len(keys) == 1 and keys != {""}, keys
PY

finish
