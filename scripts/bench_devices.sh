#!/usr/bin/env bash
# bench_devices.sh: wall time of `harness run --devices N` on the CPU emulator, the
# scale-out mechanism's figure (README, Scale-out). Two series:
#   one thread per worker   N workers of 1 emulator thread each: the speed-up that
#                           more devices give (bounded by the cores here)
#   threads shared          N workers sharing the machine's threads: what the
#                           hand-out itself costs or gains at a fixed CPU budget
# Each run starts warm (a first run fills the compile cache). Not a test: the
# figures depend on the machine and its load.
#
#   scripts/bench_devices.sh [CONFIG] [MAX_WORKERS] [harness run options...]
#   (default: configs/conv2d_sweep.json, 4 workers, --max-gflop 0.02)
set -euo pipefail
cd "$(dirname "$0")/.."
cfg=${1:-configs/conv2d_sweep.json}
max=${2:-4}
shift $(($# > 2 ? 2 : $#))
opts=("$@")
[ ${#opts[@]} -gt 0 ] || opts=(--max-gflop 0.02)
h=${HARNESS_BIN:-build/harness}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cores=$(nproc)
run() { # N THREADS
  local t0 t1
  t0=$(date +%s%N)
  "$h" run "$cfg" --backend emu --devices "$1" --emu-threads "$2" --out "$tmp/r.csv" --force --quiet "${opts[@]}" \
    >"$tmp/out" 2>&1 || [ $? = 1 ] || { cat "$tmp/out" >&2; exit 1; }
  t1=$(date +%s%N)
  awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", (b - a) / 1e9 }'
}
echo "warming the compile cache ..."
run 1 "$cores" >/dev/null
rows=$(($(wc -l <"$tmp/r.csv") - 1))
echo "harness run $cfg --backend emu ${opts[*]}: $rows rows; $cores cores, load average $(cut -d' ' -f1 /proc/loadavg)"
printf '%-8s %-22s %10s %9s\n' workers series "wall s" speed-up
base1=""
base2=""
n=1
while [ "$n" -le "$max" ]; do
  w1=$(run "$n" "$n")
  w2=$(run "$n" "$cores")
  base1=${base1:-$w1}
  base2=${base2:-$w2}
  printf '%-8s %-22s %10.2f %8.2fx\n' "$n" "one thread per worker" "$w1" "$(awk -v a="$base1" -v b="$w1" 'BEGIN { print a / b }')"
  printf '%-8s %-22s %10.2f %8.2fx\n' "$n" "threads shared ($cores)" "$w2" "$(awk -v a="$base2" -v b="$w2" 'BEGIN { print a / b }')"
  n=$((n * 2))
done
