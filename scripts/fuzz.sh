#!/usr/bin/env bash
# fuzz.sh: builds the libFuzzer targets (fuzz/, with clang, in build-fuzz/) and runs
# each for a bounded time, side by side, from the seed corpus (fuzz/corpus/<target>)
# and what earlier runs kept (build-fuzz/corpus/<target>).
#
#   scripts/fuzz.sh          60 s per target
#   scripts/fuzz.sh 3600     an hour per target
#
# Prints each target's runs and execution rate. A finding (a crash, a sanitizer
# report, a leak, a broken invariant, an input slower than 60 s) stops that target:
# its input is copied into tests/fuzz_regressions/<target>/, where
# test_fuzz_regressions replays it in every build (fix the bug, keep the file),
# and the script exits 1. Reproduce one with build-fuzz/fuzz_<target> FILE.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
[[ "$seconds" =~ ^[0-9]+$ ]] || { echo "usage: scripts/fuzz.sh [SECONDS]" >&2; exit 2; }
targets=(config expr)

cmake -S . -B build-fuzz -DCMAKE_C_COMPILER="${HN_FUZZ_CC:-clang}" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
      -DHN_FUZZ=ON >/dev/null
cmake --build build-fuzz -j "$(nproc)" --target "${targets[@]/#/fuzz_}" >/dev/null

for t in "${targets[@]}"; do
  mkdir -p "build-fuzz/corpus/$t" "build-fuzz/findings/$t"
  rm -f "build-fuzz/findings/$t"/*
  # New inputs go to the first folder; the seeds and the regressions are read.
  # -max_len lets an input pass the 4096-character limit of an expression.
  build-fuzz/fuzz_"$t" -max_total_time="$seconds" -timeout=60 -rss_limit_mb=2048 -max_len=8192 \
    -dict="fuzz/$t.dict" -artifact_prefix="build-fuzz/findings/$t/" -print_final_stats=1 \
    "build-fuzz/corpus/$t" "fuzz/corpus/$t" $(ls -d "tests/fuzz_regressions/$t" 2>/dev/null) \
    >"build-fuzz/fuzz_$t.log" 2>&1 &
  pids+=($!)
done

failed=0
for i in "${!targets[@]}"; do
  t=${targets[$i]}
  log=build-fuzz/fuzz_$t.log
  rc=0
  wait "${pids[$i]}" || rc=$?
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log")
  echo "fuzz_$t: ${runs:-?} runs in ${seconds} s, ${rate:-?} per second"
  if [ "$rc" -ne 0 ]; then
    failed=1
    echo "fuzz_$t: FOUND A PROBLEM (exit $rc); the report:"
    grep -A 30 -m 1 -E '^==[0-9]+==|runtime error|fuzz: invariant|ERROR: libFuzzer' "$log" | sed 's/^/  /'
    mkdir -p "tests/fuzz_regressions/$t"
    for f in "build-fuzz/findings/$t"/*; do
      [ -e "$f" ] || continue
      cp "$f" "tests/fuzz_regressions/$t/"
      echo "fuzz_$t: input kept as tests/fuzz_regressions/$t/$(basename "$f")"
    done
  fi
done
exit "$failed"
