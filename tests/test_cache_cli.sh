#!/usr/bin/env bash
# test_cache_cli.sh: the compile cache from the command line, in a folder of its
# own (never the user's): `harness compile` says "cached" only for entries that
# verify (a truncated .cubin is recompiled, and said so); a run on the emulator
# over a module damaged each way (truncated keeping its ELF header, emptied,
# garbage, its checksum record removed, a byte flipped) recompiles it with a
# warning naming the file and every row is ok (no SIGBUS, no launch_error); a
# damaged shim header is written again; `harness cache info` counts entries by
# kind and names the one that fails verification; `harness cache clean` removes
# the harness's files and stale temporaries and leaves the user's files and a
# temporary still being written; processes compiling the same keys at once
# leave good entries; usage errors.
. "$(dirname "$0")/lib.sh"
export HARNESS_CACHE_DIR="$tmp/cache"
cache=$HARNESS_CACHE_DIR

# hrun ARGS...: runs the harness; $rc, $out (stdout), $err (stderr)
hrun() {
  out=$("$h" "$@" 2>"$tmp/stderr")
  rc=$?
  err=$(cat "$tmp/stderr")
}
has() { case "$1" in *"$2"*) return 0 ;; esac; return 1; }
count() { printf '%s\n' "$1" | grep -c -- "$2"; }

cat >"$tmp/two.json" <<JSON
{"name": "two", "op": "conv2d", "params": {"h": "img_size", "w": "img_size", "pad": 0},
 "axes": {"in_ch": [1], "out_ch": [2], "filter_size": [3], "img_size": [16]},
 "defaults": {"defines": {"TILE_SIZE": 8}, "block": ["TILE_SIZE", "TILE_SIZE", 1],
   "args": ["in", "out", "filter", "h", "w", "in_ch", "out_ch", "filter_size", "pad"]},
 "variants": [
  {"file": "$root/kernels/conv2d/conv2d_pad.cu", "kernel": "conv2d_pad",
   "grid": ["ceil_div(w, TILE_SIZE)", "ceil_div(h, TILE_SIZE)", 1]},
  {"file": "$root/kernels/conv2d/conv2d_pad_z_out.cu", "kernel": "conv2d_pad_z_out",
   "grid": ["ceil_div(w, TILE_SIZE)", "ceil_div(h, TILE_SIZE)", "out_ch"]}]}
JSON

# --- a fresh cache fills, then serves --------------------------------------------
hrun compile "$tmp/two.json" --backend emu
[ "$rc" = 0 ] || fail "emu compile exited $rc: $out $err"
[ "$(count "$out" '(cached)')" = 0 ] || fail "a fresh cache served entries: $out"
hrun compile "$tmp/two.json" --backend emu
[ "$(count "$out" '(cached)')" = 2 ] || fail "second emu compile not cached: $out"
hrun compile "$tmp/two.json" --arch sm_90
[ "$rc" = 0 ] || fail "cuda compile exited $rc: $out $err"
hrun compile "$tmp/two.json" --arch sm_90
[ "$(count "$out" '(cached)')" = 2 ] || fail "second cuda compile not cached: $out"

hrun cache info
[ "$rc" = 0 ] || fail "cache info exited $rc: $err"
has "$out" "cache folder $cache" || fail "cache info does not name HARNESS_CACHE_DIR: $out"
for kind in 'emu modules (.so) *2 ' 'cuda images (.cubin) *2 ' 'cuda metadata (.meta) *2 ' \
            'emu generated sources (.cc) *2 ' 'emu shim folders *1 ' 'total *9 '; do
  printf '%s\n' "$out" | grep -q -- "^  $kind" || fail "cache info: no line '$kind': $out"
done
has "$out" "6 entries checked (size and checksum), 0 failed" || fail "cache info verification: $out"
hrun cache info --cache-dir "$tmp/elsewhere"
has "$out" "cache folder $tmp/elsewhere (does not exist yet)" || fail "--cache-dir not honoured: $out"
printf '%s\n' "$out" | grep -q '^  total *0 ' || fail "an absent folder holds files: $out"

# --- harness compile: a truncated cubin is recompiled, not "cached" --------------
cubin=$(ls "$cache"/cuda-*.cubin | head -n 1)
truncate -s $(( $(stat -c %s "$cubin") / 2 )) "$cubin"
hrun cache info
has "$out" "6 entries checked (size and checksum), 1 failed" || fail "cache info missed the truncated cubin: $out"
has "$out" "$(basename "$cubin"): no checksum record" || fail "cache info does not name the bad entry: $out"
hrun compile "$tmp/two.json" --arch sm_90
[ "$rc" = 0 ] || fail "cuda compile over a truncated cubin exited $rc: $err"
[ "$(count "$out" '(recompiled: bad cache entry)')" = 1 ] || fail "truncated cubin not listed as recompiled: $out"
[ "$(count "$out" '(cached)')" = 1 ] || fail "the good cubin not listed as cached: $out"
[ "$(count "$err" 'harness: cache: ')" = 1 ] || fail "expected one warning: $err"
has "$err" "$cubin" || fail "the warning does not name $cubin: $err"
hrun cache info --quiet
[ "$out" = "$cache: 9 files, $(printf '%s' "$out" | sed 's/.*files, \(.*\), .*/\1/'), 0 failing verification" ] ||
  fail "cache info --quiet after the repair: $out"

# --- harness run on the emulator over a damaged module -------------------------
flip_middle() { # xor one byte in the middle of $1 with 0x10
  local f=$1 size off byte
  size=$(stat -c %s "$f")
  off=$((size / 2))
  byte=$(od -An -tu1 -j "$off" -N1 "$f" | tr -d ' ')
  printf "\\$(printf '%03o' $((byte ^ 16)))" | dd of="$f" bs=1 seek="$off" conv=notrunc status=none
}
for damage in cut_keep_elf empty garbage no_record flip; do
  so=$(ls "$cache"/emu-*.so | head -n 1)
  size=$(stat -c %s "$so")
  case $damage in
    cut_keep_elf) truncate -s $((size / 2)) "$so"
                  [ "$(head -c 4 "$so" | od -An -c | tr -d ' ')" = '177ELF' ] || fail "the ELF header did not survive" ;;
    empty) : >"$so" ;;
    garbage) head -c "$size" /dev/urandom >"$so" ;;
    no_record) truncate -s $((size - 72)) "$so" ;;  # as a harness before records wrote it
    flip) flip_middle "$so" ;;
  esac
  hrun run "$tmp/two.json" --backend emu --out "$tmp/run.csv" --force --quiet
  [ "$rc" = 0 ] || fail "$damage: the run exited $rc: $err"
  has "$err" "harness: cache: $so: " || fail "$damage: no warning naming $so: $err"
  [ "$(count "$err" 'harness: cache: ')" = 1 ] || fail "$damage: expected one warning: $err"
  has "$err" "Bus error" && fail "$damage: SIGBUS: $err"
  ok=$(grep -c ',ok,' "$tmp/run.csv")
  [ "$ok" = 2 ] || fail "$damage: $ok of 2 rows ok: $(cat "$tmp/run.csv")"
  grep -q 'launch_error\|fault' "$tmp/run.csv" && fail "$damage: a row failed: $(cat "$tmp/run.csv")"
  hrun compile "$tmp/two.json" --backend emu
  [ "$(count "$out" '(cached)')" = 2 ] || fail "$damage: not repaired: $out $err"
done

# --- a damaged shim header is written again --------------------------------------
shim_h=$(ls "$cache"/emu-shim-*/hn_emu.h)
: >"$shim_h"
rm -f "$cache"/emu-*.so
hrun compile "$tmp/two.json" --backend emu
[ "$rc" = 0 ] || fail "compile over a damaged shim exited $rc: $out $err"
has "$err" "$shim_h: differs from the harness's copy" || fail "no warning for the damaged shim: $err"
[ -s "$shim_h" ] || fail "the shim header was not written again"

# --- clean: the harness's files only ---------------------------------------------
echo "my notes" >"$cache/notes.txt"
echo "mine" >"$cache/emu-mine.so"
mkdir -p "$cache/results" && echo "a,b" >"$cache/results/r.csv"
stale="$cache/emu-0123456789abcdef0123456789abcdef.so.tmp.999999999.1"
live="$cache/cuda-0123456789abcdef0123456789abcdef.cubin.tmp.$$.1"
echo x >"$stale" && touch -d '2 hours ago' "$stale"
echo x >"$live"
hrun cache clean
[ "$rc" = 0 ] || fail "cache clean exited $rc: $err"
has "$out" "freeing" || fail "cache clean does not say what it freed: $out"
has "$out" "kept 1 temporary file" || fail "cache clean: $out"
left=$(cd "$cache" && ls -A | sort | tr '\n' ' ')
[ "$left" = "$(basename "$live") emu-mine.so notes.txt results " ] || fail "after clean: $left"
[ "$(cat "$cache/notes.txt")" = "my notes" ] && [ -f "$cache/results/r.csv" ] || fail "clean touched the user's files"
hrun cache info
printf '%s\n' "$out" | grep -q '^  total *1 ' || fail "after clean: $out"
hrun cache clean --cache-dir "$tmp/elsewhere"
[ "$rc" = 0 ] || fail "cleaning an absent folder exited $rc: $err"

# --- processes compiling the same keys at once -------------------------------------
race="$tmp/race"
pids=""
for i in 1 2 3; do
  "$h" compile "$tmp/two.json" --backend emu --cache-dir "$race" >"$tmp/race-emu-$i.log" 2>&1 &
  pids="$pids $!"
  "$h" compile "$tmp/two.json" --arch sm_90 --cache-dir "$race" >"$tmp/race-cuda-$i.log" 2>&1 &
  pids="$pids $!"
done
for p in $pids; do wait "$p" || fail "a concurrent compile failed: $(cat "$tmp"/race-*.log)"; done
hrun cache info --cache-dir "$race"
has "$out" "6 entries checked (size and checksum), 0 failed" || fail "concurrent compiles left bad entries: $out"
printf '%s\n' "$out" | grep -q '^  temporary files *0 ' || fail "concurrent compiles left temporaries: $out"
hrun compile "$tmp/two.json" --backend emu --cache-dir "$race"
[ "$(count "$out" '(cached)')" = 2 ] || fail "after the race, emu not cached: $out"
hrun compile "$tmp/two.json" --arch sm_90 --cache-dir "$race"
[ "$(count "$out" '(cached)')" = 2 ] || fail "after the race, cuda not cached: $out"

# --- usage -------------------------------------------------------------------------
hrun cache
[ "$rc" = 2 ] && has "$err" "missing the action" || fail "no action: exit $rc: $err"
hrun cache frob
[ "$rc" = 2 ] && has "$err" "unknown action 'frob' (expected info or clean)" || fail "unknown action: exit $rc: $err"
hrun cache info --arch sm_90
[ "$rc" = 2 ] && has "$err" "--arch is not an option of cache" || fail "--arch accepted: exit $rc: $err"
hrun cache --help
for o in --cache-dir --quiet --verbose; do has "$out" "$o" || fail "cache --help lacks $o: $out"; done
has "$out" "usage: harness cache info|clean" || fail "cache --help: $out"

finish
