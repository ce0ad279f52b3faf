#!/usr/bin/env bash
# test_sanitize_memcpy.sh: harness check sees memcpy and memmove of a size the
# compiler can bound (tests/kernels/sanitize/memcpy_bounded.cu): reads of an
# output before any write, and of shared memory no thread wrote, are initcheck
# findings at the copy's line, where they were missed (GCC expanded the copies
# into moves the instrumentation does not see). And a finding's place when the
# kernel ends in an atomic (tests/kernels/sanitize/atomic_tail.cu): its line, not
# "an unknown place", which tail calls made it.
. "$(dirname "$0")/lib.sh"
cat >"$tmp/c.json" <<JSON
{"name": "peek", "op": "relu", "axes": {"n": [5]},
 "defaults": {"file": "$root/tests/kernels/sanitize/memcpy_bounded.cu", "kernel": "relu_peek",
              "block": [32, 1, 1], "grid": [1, 1, 1], "args": ["x", "y", "n"]},
 "variants": [{"name": "memcpy", "defines": {"COPY": 0}}, {"name": "memmove", "defines": {"COPY": 1}},
              {"name": "shared", "defines": {"COPY": 2}}]}
JSON
expect_cmd=("$h" check "$tmp/c.json" --out "$tmp/c.csv")
for v in memcpy memmove; do
  expect 1 "initcheck: kernel 'relu_peek' block (0,0,0) thread (0,0,0): read of 4 bytes at" --variant "$v"
  case "$out" in *"device buffer 'y' + 0"*"memcpy_bounded.cu:19"* | *"device buffer 'y' + 0"*"memcpy_bounded.cu:21"*) ;;
    *) fail "$v: the finding should name y and the copy's line: $out" ;; esac
done
expect 1 "initcheck: kernel 'relu_peek'" --variant shared
case "$out" in *"shared"*"memcpy_bounded.cu:24"*) ;; *) fail "shared: the finding should name shared memory and line 24: $out" ;; esac
cat >"$tmp/tail.json" <<JSON
{"name": "tail", "op": "relu", "axes": {"n": [5]},
 "variants": [{"file": "$root/tests/kernels/sanitize/atomic_tail.cu", "kernel": "count_tail",
               "block": [32, 1, 1], "grid": [1, 1, 1], "args": ["x", "y", "n"]}]}
JSON
expect_cmd=("$h" check "$tmp/tail.json" --out "$tmp/tail.csv")
expect 1 "initcheck: kernel 'count_tail'"
case "$out" in *"atomic_tail.cu:10 (in count_tail"*) ;; *) fail "the atomic's finding should name atomic_tail.cu:10: $out" ;; esac
case "$out" in *"unknown place"*) fail "a finding at an unknown place: $out" ;; esac
finish
