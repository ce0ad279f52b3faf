#!/usr/bin/env bash
# test_info.sh: `harness info` reports what works and fails when a part a run
# needs is broken: exit 0 here (NVRTC compiles the probe, the emulator compiles
# and runs it, the cache is writable; no GPU is not a failure), and exit 1, naming
# the part on stderr, when the environment breaks one: a host C++ compiler that
# fails (HARNESS_CXX=/bin/false), one that does not exist, NVRTC without the
# toolkit's headers (HARNESS_CUDA_INCLUDE), an unwritable kernel cache.
. "$(dirname "$0")/lib.sh"

# info_with CODE "ENV=..." : runs info under that environment; stdout in $out, stderr in $err
info_with() {
  local code=$1
  shift
  env "$@" "$h" info >"$tmp/out" 2>"$tmp/err"
  local rc=$?
  out=$(cat "$tmp/out")
  err=$(cat "$tmp/err")
  [ "$rc" = "$code" ] || fail "info with $*: exit $rc, expected $code; stderr: $err; stdout: $out"
}
has() { case "$1" in *"$2"*) ;; *) fail "expected \"$2\" in: $1" ;; esac; }
lacks() { case "$1" in *"$2"*) fail "did not expect \"$2\" in: $1" ;; esac; }

# Everything works (the suite's own cache folder is writable).
info_with 0 "X=1"
has "$out" "NVRTC     ok: compiled the probe kernel for sm_"
has "$out" "emulator  ok: compiled and ran the probe kernel"
has "$out" "cache     ok: "
lacks "$out" "BROKEN"
[ -z "$err" ] || fail "a healthy info wrote to stderr: $err"
if [ ! -e /dev/nvidia0 ]; then
  has "$out" "cuda  no: "                    # reported, not a failure
  has "$out" "default backend (auto): emu"
fi

# A host compiler that fails: the emulator is broken, the rest is not.
info_with 1 HARNESS_CXX=/bin/false
has "$out" "host C++ compiler (emulator) /bin/false"
has "$out" "emulator  BROKEN: cannot compile the probe kernel"
has "$out" "NVRTC     ok"
has "$err" "harness info: emulator: cannot compile the probe kernel"
has "$err" "host C++ compiler failed"
has "$err" "harness info: 1 problem"

info_with 1 HARNESS_CXX="$tmp/no-such-compiler"
has "$out" "emulator  BROKEN"

# NVRTC without the toolkit's headers cannot compile what kernels include.
info_with 1 HARNESS_CUDA_INCLUDE="$tmp/no-such-toolkit"
has "$out" "NVRTC     BROKEN: cannot compile the probe kernel"
has "$err" "cannot open source file"
has "$out" "emulator  ok"

# A kernel cache that cannot be created.
: >"$tmp/a-file"
info_with 1 HARNESS_CACHE_DIR="$tmp/a-file/cache"
has "$out" "cache     BROKEN: "
has "$err" "harness info: cache: $tmp/a-file/cache"
# ... or written.
mkdir -p "$tmp/ro"
chmod 555 "$tmp/ro"
if [ "$(id -u)" != 0 ]; then
  info_with 1 HARNESS_CACHE_DIR="$tmp/ro"
  has "$err" "cannot write"
fi
chmod 755 "$tmp/ro"

# Where the cache is when HARNESS_CACHE_DIR is not set: $XDG_CACHE_HOME/harness,
# else $HOME/.cache/harness (created by the check).
info_with 0 -u HARNESS_CACHE_DIR XDG_CACHE_HOME="$tmp/xdg"
has "$out" "kernel cache $tmp/xdg/harness"
[ -d "$tmp/xdg/harness" ] || fail "the cache check did not create $tmp/xdg/harness"
info_with 0 -u HARNESS_CACHE_DIR -u XDG_CACHE_HOME HOME="$tmp/home"
has "$out" "kernel cache $tmp/home/.cache/harness"

# Two broken parts: both named, both counted.
info_with 1 HARNESS_CXX=/bin/false HARNESS_CUDA_INCLUDE="$tmp/no-such-toolkit"
has "$err" "harness info: 2 problems"

# No scratch folder is left behind by the probes.
mkdir -p "$tmp/scratch"
info_with 0 TMPDIR="$tmp/scratch"
[ -z "$(ls -A "$tmp/scratch")" ] || fail "info left files in TMPDIR: $(ls -A "$tmp/scratch")"

# The help says what broken means.
out=$("$h" info --help)
has "$out" "Exit code 0 when all pass; 1 when one is broken"

finish
