#!/usr/bin/env bash
# test_kernels_as_written.sh: kernels written for nvcc, used as their authors wrote
# them (tests/kernels/nvcc_style, tests/configs/nvcc_style.json): C headers,
# a helpers header found through a relative -I option, ACCUM_DTYPE required, the
# SINGLE_BLOCK counter as a trailing parameter or no counter at all, a folder of
# empty stand-in headers among the include folders.
#   - NVRTC compiles every variant for sm_90 (no GPU needed);
#   - run from another folder, every row is ok on the emulator and the config's
#     timing applies there (3 samples), unless --quick or a command-line option;
#   - harness debug runs a kernel with the counter and one without, blocks in order;
#   - --save-tensors writes an output file only for rows that ran;
#   - a define that is also a name of the source: the row's reason names the line.
. "$(dirname "$0")/lib.sh"
cfg="$root/tests/configs/nvcc_style.json"

echo "== NVRTC compiles every variant"
out=$("$h" compile "$cfg" --arch sm_90 2>&1)
rc=$?
[ "$rc" = 0 ] || fail "compile exited $rc: $out"
n_ok=$(printf '%s\n' "$out" | grep -cE '^conv_(loop|halo|plain)[^ ]* +[0-9]+ ')
[ "$n_ok" = 4 ] || fail "expected 4 variants compiled with a register count, got $n_ok: $out"

# samples_of CSV: the set of distinct 'samples' values of the ok rows, or a failure
samples_of() {
  python3 - "$1" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1], newline="")))
bad = [(r["case"], r["variant"], r["status"], r["reason"]) for r in rows if r["status"] != "ok"]
if bad or len(rows) != 32:
    print(f"rows not ok ({len(rows)} rows): {bad}")
    sys.exit(1)
print(" ".join(sorted({r["samples"] for r in rows})))
PY
}

echo "== every row ok on the emulator, from another folder; the config's timing applies"
out=$(cd "$tmp" && "$h" run "$cfg" --backend emu --out "$tmp/n.csv" 2>&1)
rc=$?
[ "$rc" = 0 ] || fail "run exited $rc: $out"
s=$(samples_of "$tmp/n.csv") || fail "$s"
[ "$s" = 3 ] || fail "the config's timing.repeat 3 should give 3 samples per row on the emulator, got: $s"

out=$("$h" run "$cfg" --backend emu --quick --out "$tmp/q.csv" 2>&1) || fail "--quick run failed: $out"
s=$(samples_of "$tmp/q.csv") || fail "$s"
for n in $s; do
  [ "$n" -ge 5 ] || fail "--quick takes the quick preset (at least 5 samples) over the config's 3, got: $s"
done

out=$("$h" run "$cfg" --backend emu --min-samples 4 --out "$tmp/m.csv" 2>&1) || fail "--min-samples run failed: $out"
s=$(samples_of "$tmp/m.csv") || fail "$s"
[ "$s" = 4 ] || fail "--min-samples 4 wins over the config's repeat 3, got: $s"

echo "== debug: a kernel that takes the SINGLE_BLOCK counter, and one that takes none"
out=$("$h" debug "$cfg" --backend emu --kernel 'conv_loop[ACCUM_DTYPE=float]' \
      --set in_ch=1,out_ch=2,filter_size=3,img_size=20 --out "$tmp/dbg" 2>&1)
rc=$?
[ "$rc" = 0 ] || fail "debug conv_loop exited $rc: $out"
case "$out" in *"+ debug_counter"*) ;; *) fail "conv_loop takes the counter: $out" ;; esac
order=$(printf '%s\n' "$out" | grep -o '^block [0-9],[0-9]$' | tr '\n' ' ')
[ "$order" = "block 0,0 block 1,0 block 2,0 block 0,1 block 1,1 block 2,1 block 0,2 block 1,2 block 2,2 " ] ||
  fail "conv_loop blocks out of order: '$order'"
case "$out" in *"h: 20 w: 20 in: 1 out: 2 filter: 3"*) ;; *) fail "no shape line from DEBUG: $out" ;; esac

out=$("$h" debug "$cfg" --backend emu --kernel conv_plain \
      --set in_ch=1,out_ch=2,filter_size=3,img_size=20 --out "$tmp/dbg" 2>&1)
rc=$?
[ "$rc" = 0 ] || fail "debug conv_plain exited $rc: $out"
case "$out" in *"(the kernel takes no debug_counter)"*) ;; *) fail "conv_plain takes no counter: $out" ;; esac
case "$out" in *"blocks one at a time, in linear order"*) ;; *) fail "conv_plain's blocks should be in order: $out" ;; esac
order=$(printf '%s\n' "$out" | grep -o '^plain block ([0-9],[0-9],[0-9])' | tr '\n' ' ')
want=""
for z in 0 1; do for y in 0 1 2 3 4; do for x in 0 1; do want="${want}plain block ($x,$y,$z) "; done; done; done
[ "$order" = "$want" ] || fail "conv_plain blocks out of order: '$order'"
case "$out" in *"verdict: output matches the reference"*) ;; *) fail "conv_plain verdict: $out" ;; esac

echo "== --save-tensors: output files only for rows that ran"
st="$tmp/tensors"
mkdir -p "$st/case-0"
: > "$st/case-0/out.conv_typo.npy" # left by an earlier run: must not survive
out=$("$h" run "$root/tests/configs/saved_tensors.json" --backend emu --case 0 --out "$tmp/s.csv" \
      --save-tensors "$st" 2>&1)
rc=$?
[ "$rc" = 1 ] || fail "a compile error should make the run exit 1, got $rc: $out"
st_rows=$(python3 - "$tmp/s.csv" <<'PY'
import csv, sys
print(" ".join(f"{r['variant']}={r['status']}" for r in csv.DictReader(open(sys.argv[1], newline=""))))
PY
)
[ "$st_rows" = "conv_plain=ok plain_f5_only=skipped conv_typo=compile_error" ] || fail "rows: $st_rows"
files=$(cd "$st/case-0" && ls | tr '\n' ' ')
[ "$files" = "bias.npy case.json filter.npy in.npy out.conv_plain.npy out.reference.npy " ] || fail "saved files: $files"

echo "== a compile error inside a define's expansion: the row's reason names the user's line"
cat >"$tmp/shadowed.json" <<EOF
{"name": "shadowed", "op": "relu", "axes": {"n": [5]},
 "variants": [{"file": "$root/tests/kernels/nvcc_style/relu_shadowed.cu", "kernel": "relu_shadowed<BLOCK>",
               "defines": {"BLOCK": 64}, "block": ["BLOCK"], "grid": [1], "args": ["x", "y", "n"]}]}
EOF
out=$("$h" run "$tmp/shadowed.json" --backend emu --out "$tmp/shadowed.csv" 2>&1)
[ $? = 1 ] || fail "a compile error should make the run exit 1: $out"
reason=$(python3 -c 'import csv, sys; print(next(csv.DictReader(open(sys.argv[1])))["reason"])' "$tmp/shadowed.csv")
case "$reason" in *"relu_shadowed.cu:5:"*) ;; *) fail "the reason does not name relu_shadowed.cu:5: $reason" ;; esac
case "$reason" in *"<command-line>"*) fail "the reason names <command-line>: $reason" ;; esac

finish
