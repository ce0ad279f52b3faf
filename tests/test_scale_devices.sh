#!/usr/bin/env bash
# test_scale_devices.sh: `harness run --devices N` on the emulator (N workers):
#   - the same rows (case, variant, status, check results) as one worker, in
#     plan order, with device_index naming the worker that ran each, and more
#     than one worker used;
#   - a crash in one worker's row costs that row only (fault) and its worker is
#     restarted; a launch that never returns is killed by that worker's watchdog;
#   - SIGINT stops every worker after its row (exit 130), --resume with the same
#     devices completes the file without a row twice; SIGTERM stops at once;
#   - progress lines name the device; bad --devices text is exit 2;
#   - harness tune --devices 2 evaluates the same configurations as one worker.
. "$(dirname "$0")/lib.sh"
. "$root/tests/scale_lib.sh"
cfg="$root/tests/configs/scale_small.json"
hostile="$root/tests/configs/hostile.json"

echo "== the same rows on 1 and on 2 workers"
"$h" run "$cfg" --backend emu --out "$tmp/one.csv" >"$tmp/one.out" 2>&1
rc1=$?
"$h" run "$cfg" --backend emu --devices 2 --out "$tmp/two.csv" >"$tmp/two.out" 2>"$tmp/two.err"
rc2=$?
[ "$rc1" = 1 ] && [ "$rc2" = 1 ] || fail "exit $rc1 and $rc2, expected 1 and 1 (the planted mismatches)"
d=$(same_rows "$tmp/one.csv" "$tmp/two.csv")
[ -z "$d" ] || fail "1 vs 2 workers: $d"
[ "$(wc -l <"$tmp/two.csv")" = 25 ] || fail "2 workers: $(($(wc -l <"$tmp/two.csv") - 1)) rows, expected 24"
o=$(in_plan_order "$tmp/two.csv")
[ -z "$o" ] || fail "2 workers: $o"
[ "$(column "$tmp/two.csv" device_index)" = "0 1" ] || fail "2 workers: device_index $(column "$tmp/two.csv" device_index)"
[ "$(column "$tmp/one.csv" device_index)" = "0" ] || fail "1 worker: device_index $(column "$tmp/one.csv" device_index)"
grep -q "devices: 2 emulator workers of 1 thread" "$tmp/two.out" || fail "no devices line: $(head -3 "$tmp/two.out")"
grep -q '^\[[0-9]*/8\] case [0-9]* .* \[device [01]' "$tmp/two.err" || fail "progress: $(head -3 "$tmp/two.err")"
[ -s "$tmp/two.best.csv" ] || fail "no best.csv"

echo "== a crash in one worker's row"
"$h" run "$hostile" --backend emu --variant abort_worker --variant conv_ok --devices 2 --out "$tmp/abort.csv" \
  >"$tmp/abort.out" 2>&1
rc=$?
[ "$rc" = 1 ] || fail "abort: exit $rc: $(tail -3 "$tmp/abort.out")"
got=$(statuses "$tmp/abort.csv")
want="0 abort_worker fault;0 conv_ok ok;1 abort_worker fault;1 conv_ok ok;2 abort_worker fault;2 conv_ok ok"
[ "$got" = "$want" ] || fail "abort rows: $got"
grep -q "the worker process (device [01]) died of Aborted" "$tmp/abort.csv" || fail "abort: no reason"

echo "== a launch that never returns: that worker's watchdog"
"$h" run "$hostile" --backend emu --variant sleep_forever --variant conv_ok --kernel-timeout 1 --devices 2 \
  --out "$tmp/hang.csv" >"$tmp/hang.out" 2>&1
got=$(statuses "$tmp/hang.csv")
case "$got" in
  "0 sleep_forever timeout;0 conv_ok ok;1 sleep_forever "*";1 conv_ok ok;2 sleep_forever "*";2 conv_ok ok") ;;
  *) fail "hang rows: $got" ;;
esac
grep -q "never returned; the worker process (device [01]) was killed" "$tmp/hang.csv" || fail "hang: no reason"
[ "$(wc -l <"$tmp/hang.csv")" = 7 ] || fail "hang: $(cat "$tmp/hang.csv" | wc -l) lines"

echo "== SIGINT, then --resume"
out="$tmp/int.csv"
"$h" run "$hostile" --backend emu --variant slow_conv --variant conv_ok --devices 2 --out "$out" >"$tmp/int.out" 2>&1 &
pid=$!
sleep 1.2
kill -INT "$pid"
wait "$pid"
rc=$?
[ "$rc" = 130 ] || fail "SIGINT: exit $rc, expected 130: $(tail -3 "$tmp/int.out")"
[ -e "$out.unfinished" ] || fail "SIGINT: no unfinished marker"
"$h" run "$hostile" --backend emu --variant slow_conv --variant conv_ok --devices 2 --out "$out" --resume \
  >"$tmp/int2.out" 2>&1 || fail "--resume failed: $(tail -3 "$tmp/int2.out")"
got=$(statuses "$out" sorted)
want="0 conv_ok ok;0 slow_conv ok;1 conv_ok ok;1 slow_conv ok;2 conv_ok ok;2 slow_conv ok"
[ "$got" = "$want" ] || fail "after resume: $got"
[ -e "$out.unfinished" ] && fail "the marker survived"

echo "== SIGTERM stops at once"
"$h" run "$hostile" --backend emu --variant slow_conv --devices 2 --out "$tmp/term.csv" >/dev/null 2>&1 &
pid=$!
sleep 0.6
kill -TERM "$pid"
wait "$pid"
rc=$?
[ "$rc" = 143 ] || fail "SIGTERM: exit $rc, expected 143"
sleep 0.3
pgrep -f "term.csv" >/dev/null && fail "a worker outlived SIGTERM"

echo "== bad --devices"
for bad in "0,0" "x" "1," "0"; do
  o=$("$h" run "$cfg" --backend emu --devices "$bad" --out "$tmp/bad.csv" 2>&1)
  rc=$?
  [ "$rc" = 2 ] || fail "--devices '$bad': exit $rc: $o"
done

echo "== harness tune --devices 2: the same configurations"
tcfg="$root/tests/configs/tune_small.json"
"$h" tune "$tcfg" --backend emu --out "$tmp/t1" >"$tmp/t1.out" 2>&1 || fail "tune 1: $(tail -3 "$tmp/t1.out")"
"$h" tune "$tcfg" --backend emu --devices 2 --out "$tmp/t2" >"$tmp/t2.out" 2>&1 || fail "tune 2: $(tail -3 "$tmp/t2.out")"
grep -q "devices: 2 emulator workers" "$tmp/t2.out" || fail "tune: no devices line"
d=$(python3 - "$tmp/t1.journal" "$tmp/t2.journal" <<'PY'
import json, sys
def search(p):
    return sorted((e["config"], e["case"]) for e in map(json.loads, open(p)) if e["phase"] == "search")
a, b = search(sys.argv[1]), search(sys.argv[2])
if a != b or len(a) != 12: print(len(a), len(b), set(a) ^ set(b))
PY
)
[ -z "$d" ] || fail "tune: the searches differ: $d"

finish
