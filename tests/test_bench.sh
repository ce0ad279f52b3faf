#!/usr/bin/env bash
# test_bench.sh: `harness bench --quick`: every figure it prints parses and is
# positive, the reference's three small shapes and the emulator's four conv2d
# variants are all there and agree with their checks; `reference` and `emu` select
# one sub-benchmark; an unknown one is exit 2; a bench that cannot measure (no
# kernels/conv2d, a broken host compiler) is exit 1, not a quiet 0.
. "$(dirname "$0")/lib.sh"

"$h" bench --quick >"$tmp/all.txt" 2>"$tmp/all.err"
rc=$?
cat "$tmp/all.txt"
[ "$rc" = 0 ] || fail "bench --quick exited $rc: $(cat "$tmp/all.err")"
python3 - "$tmp/all.txt" <<'PY' || fail "bench --quick figures"
import os, re, sys
text = open(sys.argv[1]).read()
bad = []
# The reference: a header, then one row per small shape, every figure a positive number.
rows = [l.split() for l in text.splitlines() if re.match(r"^\s+\d+\s+\d+\s+\d+\s+\d+\s", l)]
shapes = [tuple(map(int, r[:4])) for r in rows]
if shapes != [(3, 8, 3, 64), (1, 4, 5, 128), (8, 32, 5, 64)]:
    bad.append(f"reference shapes {shapes}")
for r in rows:
    nums = [float(x) for x in r[4:10]]  # GFLOP, own s, own GF/s, blas s, blas GF/s, naive GF/s
    if len(nums) != 6 or not all(x > 0 for x in nums) or "MISMATCH" in r:
        bad.append(f"reference row {r}")
    # GF/s is GFLOP over seconds, within what rounding them for print allows
    # (GFLOP to 3 decimals, seconds to 4).
    for gfs, sec in ((nums[2], nums[1]), (nums[4], nums[3])):
        lo = (nums[0] - 5e-4) / (sec + 5e-5)
        hi = (nums[0] + 5e-4) / (sec - 5e-5) if sec > 5e-5 else float("inf")
        if not (0.99 * lo - 0.01 <= gfs <= 1.01 * hi + 0.01):
            bad.append(f"GF/s {gfs} is not {nums[0]} GFLOP / {sec} s")
# The emulator: each figure in ns, positive. The raw fiber switch is not measured
# under AddressSanitizer (CTest sets ASAN_OPTIONS in that build), and says so.
labels = ["barrier, per thread", "thread without collectives", "thread with one barrier"]
if os.environ.get("ASAN_OPTIONS"):
    if "fiber switch:                       n/a (sanitizer build)" not in text:
        bad.append("no fiber switch line under the sanitizer")
else:
    labels.append("fiber switch")
for label in labels:
    m = re.search(re.escape(label) + r":\s+([0-9.]+) ns", text)
    if not m or not float(m.group(1)) > 0:
        bad.append(f"no positive figure for {label}")
m = re.search(r"C loop, 1 thread:\s+([0-9.]+) ms", text)
if not m or not float(m.group(1)) > 0:
    bad.append("no C loop time")
if "32 x 32" not in text:
    bad.append("--quick did not shrink the conv2d case")
variants = {}
for l in text.splitlines():
    m = re.match(r"^\s+(conv2d_\w+)\s+([0-9.]+)\s+([0-9.]+)\s+([0-9.e+-]+)\s*$", l)
    if m:
        variants[m.group(1)] = tuple(float(x) for x in m.groups()[1:])
want = {"conv2d_pad", "conv2d_pad_z_out", "conv2d_pad_z_out_shared", "conv2d_pad_z_out_shared_halo"}
if set(variants) != want:
    bad.append(f"conv2d variants {sorted(variants)}")
for v, (ms, ratio, diff) in variants.items():
    if not (ms > 0 and ratio > 0 and 0 <= diff <= 1e-3):
        bad.append(f"{v}: ms {ms}, ratio {ratio}, diff {diff}")
if bad:
    print("\n".join(bad))
    sys.exit(1)
PY

# Selecting one sub-benchmark runs only it.
out=$("$h" bench reference --quick 2>&1)
[ $? = 0 ] || fail "bench reference exited non-zero: $out"
case "$out" in *"fp64 conv2d reference"*) ;; *) fail "bench reference: no reference table: $out" ;; esac
case "$out" in *"CPU emulator"*) fail "bench reference ran the emulator: $out" ;; esac
out=$("$h" bench emu --quick 2>&1)
[ $? = 0 ] || fail "bench emu exited non-zero: $out"
case "$out" in *"fiber switch"*) ;; *) fail "bench emu: no emulator figures: $out" ;; esac
case "$out" in *"fp64 conv2d reference"*) fail "bench emu ran the reference: $out" ;; esac

out=$("$h" bench nonsense 2>&1)
[ $? = 2 ] || fail "bench nonsense: expected exit 2: $out"
case "$out" in *"unknown sub-benchmark 'nonsense'"*) ;; *) fail "bench nonsense: message: $out" ;; esac
out=$("$h" bench --help 2>&1)
case "$out" in *"--quick"*"bench: small work"*) ;; *) fail "bench --help does not offer --quick: $out" ;; esac

# A bench that cannot measure says so and fails.
mkdir -p "$tmp/emptyroot"
out=$(HARNESS_ROOT="$tmp/emptyroot" "$h" bench emu --quick 2>&1)
[ $? = 1 ] || fail "bench emu without kernels/conv2d: expected exit 1: $out"
case "$out" in *"conv2d_pad_z_out_shared_halo   failed: "*"conv2d_pad_z_out_shared_halo.cu not found"*) ;;
  *) fail "bench emu without kernels/conv2d: no failed row: $out" ;; esac
case "$out" in *"harness bench: 12 conv2d runs failed or disagree with the C loop"*) ;;
  *) fail "bench emu without kernels/conv2d: no message: $out" ;; esac
out=$(HARNESS_CXX=/bin/false "$h" bench emu --quick 2>&1)
[ $? = 1 ] || fail "bench emu with a broken compiler: expected exit 1: $out"
case "$out" in *"host C++ compiler failed"*) ;; *) fail "bench emu with a broken compiler: message: $out" ;; esac

finish
