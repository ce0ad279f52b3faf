#!/usr/bin/env bash
# test_debug.sh: `harness debug` on the emulator: blocks print one at a time in
# linear order, --block limits printing to one block, a planted mismatch is found
# at its coordinates, and the mismatch map is written as a PNG of the right size.
. "$(dirname "$0")/lib.sh"

# 20x20 image, TILE_SIZE 16, filter 3: output tiles of 14, so a 2x2 grid.
out=$("$h" debug configs/conv2d_sweep.json --backend emu --kernel conv2d_pad_z_out_shared_halo \
      --set in_ch=1,out_ch=1,filter_size=3,img_size=20 --out "$tmp" 2>&1)
rc=$?
[ "$rc" = 0 ] || fail "debug exited $rc: $out"
order=$(printf '%s\n' "$out" | grep -o '^block ([0-9],[0-9],[0-9]) of' | tr '\n' ' ')
[ "$order" = "block (0,0,0) of block (1,0,0) of block (0,1,0) of block (1,1,0) of " ] ||
  fail "blocks out of order: '$order'"
case "$out" in *"verdict: output matches the reference"*) ;; *) fail "no verdict: $out" ;; esac
[ -s "$tmp/mismatch-conv2d_pad_z_out_shared_halo_ACCUM_DTYPE_float_-out.png" ] || fail "no mismatch map in $tmp: $(ls "$tmp")"

out=$("$h" debug configs/conv2d_sweep.json --backend emu --kernel conv2d_pad_z_out_shared_halo \
      --set in_ch=1,out_ch=1,filter_size=3,img_size=20 --block 1,0,0 --out "$tmp" 2>&1)
order=$(printf '%s\n' "$out" | grep -o '^block ([0-9],[0-9],[0-9]) of' | tr '\n' ' ')
[ "$order" = "block (1,0,0) of " ] || fail "--block 1,0,0 printed '$order'"
case "$out" in *"-DDEBUG_BLOCK_X=1"*) ;; *) fail "no DEBUG_BLOCK_X define: $out" ;; esac

# The planted bug: channel 1, y 3, x 5.
out=$("$h" debug tests/configs/planted.json --backend emu --kernel conv2d_planted --out "$tmp" 2>&1)
rc=$?
[ "$rc" = 1 ] || fail "planted: exit $rc, expected 1: $out"
printf '%s\n' "$out" | grep -q 'first mismatches of out (0, 1, 3, 5): kernel' || fail "planted mismatch not at (0, 1, 3, 5): $out"
# One planted element: the mismatch list (the first line and its continuations)
# holds exactly one entry, and the verdict says so.
n_listed=$(printf '%s\n' "$out" | grep -c '^first mismatches of out (\|^ \{19\} out (')
[ "$n_listed" = 1 ] || fail "planted: $n_listed mismatches listed, expected 1: $out"
case "$out" in *"verdict: output does NOT match the reference"*) ;; *) fail "planted: no failing verdict: $out" ;; esac
printf '%s\n' "$out" | grep -q 'out: 191 of 192 elements match' || fail "expected exactly one mismatch: $out"
order=$(printf '%s\n' "$out" | grep -o '^planted: block ([0-9],[0-9],[0-9])' | head -3 | tr '\n' ' ')
[ "$order" = "planted: block (0,0,0) planted: block (1,0,0) planted: block (0,1,0) " ] || fail "planted order '$order'"
png="$tmp/mismatch-conv2d_planted-out.png"
if [ -s "$png" ]; then
  # 3 channels of 8x8 at scale 16 with 4-pixel gaps: 3*128 + 2*4 = 392 x 128.
  size=$(od -An -tu1 -j16 -N8 "$png" | awk '{print ($1*16777216+$2*65536+$3*256+$4) "x" ($5*16777216+$6*65536+$7*256+$8)}')
  [ "$size" = "392x128" ] || fail "mismatch map is $size, expected 392x128"
else
  fail "no planted mismatch map"
fi
out=$("$h" debug tests/configs/planted.json --backend emu 2>&1)
[ $? = 2 ] || fail "debug without --kernel should exit 2"
case "$out" in *"--kernel NAME is required"*) ;; *) fail "no usage message: $out" ;; esac

finish
