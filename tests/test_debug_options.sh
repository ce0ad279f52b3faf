#!/usr/bin/env bash
# test_debug_options.sh: `harness debug` beyond the happy path (test_debug.sh):
# bad usage is exit 2 with a message (unknown variant, --set naming no axis, one
# missing an axis of several values (one of a single value takes it) or a value
# that does not evaluate, --case past the plan, a malformed --block, an
# unknown backend, a config that does not load); a kernel without debug_counter
# is launched without it, blocks still in order on one worker; more workers say
# their output may interleave; a large case prints no matrices; a launch that
# times out is exit 1 with the fault; a folder the map cannot go in is said;
# --block outside the case's grid or negative is exit 2 (it used to print
# nothing, and -1 became 4294967295), one the kernel never reads is said, and a
# --kernel naming several variants says which one it debugs.
. "$(dirname "$0")/lib.sh"
planted="$root/tests/configs/planted.json"

# expect CODE NEEDLE ARGS...: harness debug ARGS exits CODE with NEEDLE in its output
expect_cmd=("$h" debug)
expect_name="debug "
expect_show=tail

echo "== bad usage: exit 2, nothing compiled"
expect 2 "no variant 'nope' in $planted (variants: conv2d_planted)" "$planted" --kernel nope
expect 2 "--set: 'nope' is not an axis of planted (axes: in_ch, out_ch, filter_size, img_size)" \
  "$planted" --kernel conv2d_planted --set nope=1
sed 's/"out_ch": \[3\]/"out_ch": [3, 4]/' "$planted" >"$tmp/two_out.json"
sed -i "s|\"../kernels/|\"$root/tests/kernels/|" "$tmp/two_out.json"
grep -q '"out_ch": \[3, 4\]' "$tmp/two_out.json" || fail "two_out.json: the sed did not apply"
expect 2 "--set: no value for axis 'out_ch' (every axis with several values must be given)" \
  "$tmp/two_out.json" --kernel conv2d_planted --set in_ch=2
expect 2 "params.in_ch ('in_ch'): expected an integer, got the string \"x\"" \
  "$planted" --kernel conv2d_planted --set in_ch=x,out_ch=1,filter_size=3,img_size=8
expect 2 "--case 5: the plan has 1 cases" "$planted" --kernel conv2d_planted --case 5
expect 2 "--case 0-1: debug runs one case; give one id" "$planted" --kernel conv2d_planted --case 0-1
expect 2 "--block 1,2: expected X,Y,Z (e.g. 0,1,0)" "$planted" --kernel conv2d_planted --block 1,2
expect 2 "--backend: 'nope' is not a backend (cuda, emu or auto)" "$planted" --kernel conv2d_planted --backend nope
expect 2 "missing.json: cannot open" "$tmp/missing.json" --kernel x
case "$out" in *"debug:"*) fail "bad usage ran something: $out" ;; esac

echo "== an axis of one value needs no --set"
expect 1 "debug: conv2d_planted on case 8x8x5 -> 3, f:3x3 [" "$planted" --kernel conv2d_planted --set in_ch=5 \
  --out "$tmp/dset"

echo "== --case picks the plan's case; the default backend says which it took"
expect 1 "debug: conv2d_planted on case 8x8x2 -> 3, f:3x3 [" "$planted" --kernel conv2d_planted --case 0 --out "$tmp/d0"
case "$out" in *"harness: backend emu (auto: "* | *"harness: backend cuda (auto)"*) ;; *) fail "auto did not say which backend: $out" ;; esac

echo "== a kernel without debug_counter; a large case; several workers"
nvcc="$root/tests/configs/nvcc_style.json"
expect 0 "verdict: output matches the reference" "$nvcc" --kernel conv_plain --backend emu \
  --set in_ch=1,out_ch=2,filter_size=3,img_size=40 --out "$tmp/big"
case "$out" in *"(the kernel takes no debug_counter)"*) ;; *) fail "conv_plain: no note on the counter: $out" ;; esac
case "$out" in *"--- kernel output (blocks one at a time, in linear order) ---"*) ;; *) fail "conv_plain: order: $out" ;; esac
order=$(printf '%s\n' "$out" | grep '^plain block' | head -4 | tr '\n' ' ')
[ "$order" = "plain block (0,0,0) plain block (1,0,0) plain block (2,0,0) plain block (0,1,0) " ] || fail "conv_plain order: $order"
[ "$(printf '%s\n' "$out" | grep -c '^  (3200 elements: too many to print; --save-tensors writes them as .npy)')" = 2 ] ||
  fail "a 40x40 case printed matrices: $(printf '%s\n' "$out" | grep -c '^ ')"
case "$out" in *"(1600 elements: too many to print"*) ;; *) fail "the input was printed" ;; esac
[ -s "$tmp/big/mismatch-conv_plain-out.png" ] || fail "no map for the large case"
expect 1 "note: 2 emulator workers run blocks side by side, so their output may interleave" \
  "$planted" --kernel conv2d_planted --backend emu --emu-threads 2 --out "$tmp/d2"
case "$out" in *"--- kernel output (blocks in any order) ---"*) ;; *) fail "--emu-threads 2: order claimed: $out" ;; esac

echo "== failures after the launch"
expect 1 "harness debug: launch failed: kernel 'spin_forever' block (0,0,0) thread (0,0,0): timed out after 0.3 s" \
  "$root/tests/configs/hostile.json" --kernel spin_forever --kernel-timeout 0.3 --backend emu
case "$out" in *"--- end of kernel output ---"*) ;; *) fail "the kernel output section was not closed: $out" ;; esac
: >"$tmp/a-file"
expect 1 "harness debug: $tmp/a-file/x: cannot create folder" "$planted" --kernel conv2d_planted --backend emu --out "$tmp/a-file/x"
case "$out" in *"verdict: output does NOT match the reference"*) ;; *) fail "no verdict without a map: $out" ;; esac

echo "== --block outside the grid, negative, or read by no code; a --kernel of several variants"
# the planted case's grid is 2x2x3 (3 output channels in z)
expect 2 "--block 0,0,3 is outside the grid 2x2x3 of this case (X 0..1, Y 0..1, Z 0..2): no block would print" \
  "$planted" --kernel conv2d_planted --backend emu --block 0,0,3 --out "$tmp/b"
expect 2 "--block -1,0,0: expected X,Y,Z (e.g. 0,1,0), block indices from 0" "$planted" --kernel conv2d_planted \
  --block -1,0,0
expect 1 "planted: block (0,0,2)" "$planted" --kernel conv2d_planted --backend emu --block 0,0,2 --out "$tmp/b"
case "$out" in *"never reads DEBUG_BLOCK"*) fail "planted reads DEBUG_BLOCK through hn_debug_leader: $out" ;; esac
expect 0 "conv_plain.cu never reads DEBUG_BLOCK_X/Y/Z" "$nvcc" --kernel conv_plain --backend emu --block 0,1,0 \
  --set in_ch=1,out_ch=2,filter_size=3,img_size=9 --out "$tmp/b"
expect 0 "note: --kernel conv_loop is 2 variants; debugging conv_loop[ACCUM_DTYPE=float] (name another: 'conv_loop[ACCUM_DTYPE=double]')" \
  "$nvcc" --kernel conv_loop --backend emu --set in_ch=1,out_ch=2,filter_size=3,img_size=9 --out "$tmp/b"
expect 0 "debug: conv_loop[ACCUM_DTYPE=double] on" "$nvcc" --kernel "conv_loop[ACCUM_DTYPE=double]" --backend emu \
  --set in_ch=1,out_ch=2,filter_size=3,img_size=9 --out "$tmp/b"
case "$out" in *"note: --kernel"*) fail "a full label got the several-variants note: $out" ;; esac

finish
