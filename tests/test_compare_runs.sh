#!/usr/bin/env bash
# test_compare_runs.sh: tests/gpu/compare_runs.py (the GPU check's repeatability
# step) judges, not only prints: exit 0 when enough rows over 100 us agree within
# 2 %, 1 when too few do or none is long enough, 2 on bad input; the thresholds
# are options.
. "$(dirname "$0")/lib.sh"
cr="$root/tests/gpu/compare_runs.py"

# csv FILE "case:variant:ms" ...
csv() {
  local f=$1
  shift
  echo "case,variant,status,time_median_ms" >"$f"
  for r in "$@"; do IFS=: read -r c v ms <<<"$r"; echo "$c,$v,ok,$ms" >>"$f"; done
}
# expect CODE NEEDLE ARGS...: compare_runs.py ARGS exits CODE with NEEDLE in its output
expect_cmd=(python3 "$cr")
expect_name="compare_runs "

# 20 long rows; run b differs by 1 % on all but k of them (10 % there).
rows_a=() rows_b=()
for i in $(seq 0 19); do
  rows_a+=("$i:v:1.0")
  rows_b+=("$i:v:1.01")
done
rows_a+=("20:v:0.01") rows_b+=("20:v:0.05") # a short row: 400 %, never judged
csv "$tmp/a.csv" "${rows_a[@]}"
csv "$tmp/same.csv" "${rows_b[@]}"
expect 0 "ok: 100.0 % of the rows over 100 us within 2 %" "$tmp/a.csv" "$tmp/same.csv"

one=("${rows_b[@]}"); one[3]="3:v:1.1"   # 19 of 20 = 95 %: passes
csv "$tmp/one.csv" "${one[@]}"
expect 0 "ok: 95.0 %" "$tmp/a.csv" "$tmp/one.csv"
two=("${one[@]}"); two[7]="7:v:0.9"     # 18 of 20 = 90 %: fails
csv "$tmp/two.csv" "${two[@]}"
expect 1 "FAIL: 90.0 % of the rows over 100 us within 2 % (need 95 %)" "$tmp/a.csv" "$tmp/two.csv"
# The thresholds are options.
expect 0 "ok: 90.0 %" "$tmp/a.csv" "$tmp/two.csv" --min-fraction 0.9
expect 1 "FAIL: 0.0 %" "$tmp/a.csv" "$tmp/same.csv" --max-diff 0.5
expect 0 "ok: 100.0 % of the rows over 5 us" "$tmp/a.csv" "$tmp/same.csv" --min-ms 0.005 --max-diff 500
# Nothing long enough: nothing to judge is a failure, not a pass.
expect 1 "nothing to judge" "$tmp/a.csv" "$tmp/same.csv" --min-ms 5
# Bad input.
expect 2 "No such file" "$tmp/a.csv" "$tmp/missing.csv"
echo "case,variant" >"$tmp/bad.csv"
expect 2 "time_median_ms" "$tmp/a.csv" "$tmp/bad.csv"

finish
