#!/usr/bin/env bash
# test_run_options.sh: the options of `harness run` on the emulator, each by an
# outcome a bug in it would change (tests/configs/run_options.json, stale.json,
# tests/kernels/run_options/run_options.cu):
#   --warmup N and --hot: the launches a row makes (conv_count prints one line per
#     launch: warm-up + samples when cold, many launches per sample when hot);
#   --min-samples, --max-samples, --max-noise, --min-time, --timeout: the samples
#     column, the stop rule, and the samples' sum;
#   --quick: the preset replaces the config's timing;
#   --save-samples: <out>.samples.csv holds each row's samples (count and median
#     match the CSV), beside the default results file too, and starts afresh;
#   --variant, --case, --seed: which variants and cases ran;
#   --max-gflop, --all and the config's emu budget: which cases ran or were skipped;
#   --emu-threads, --kernel-timeout, --jobs, --cache-dir, --no-baseline;
#   a planted bug (planted.json) is a mismatch row and exit 1; a kernel that passes
#     before timing and fails after (conv_stale) is caught by the second check.
. "$(dirname "$0")/lib.sh"
cfg="$root/tests/configs/run_options.json"
one=(--variant 'conv_count[ACCUM_DTYPE=float]' --case 0)
# run NAME ARGS...: harness run on the emulator into $tmp/NAME.csv; stdout and
# stderr in $tmp/NAME.out / .err; the exit code in $rc.
run() {
  local name=$1
  shift
  "$h" run "$cfg" --backend emu --out "$tmp/$name.csv" "$@" >"$tmp/$name.out" 2>"$tmp/$name.err"
  rc=$?
}
ok_run() { run "$@"; [ "$rc" = 0 ] || fail "run $*: exit $rc: $(tail -5 "$tmp/$1.err")"; }
# col CSV EXPR: a Python expression over the rows r (a list of dicts), printed
col() {
  python3 - "$1" "$2" <<'PY'
import csv, sys
r = list(csv.DictReader(open(sys.argv[1], newline="")))
print(eval(sys.argv[2]))
PY
}
launches() { grep -c '^conv_count: launch' "$tmp/$1.out"; }
expect_eq() { [ "$1" = "$2" ] || fail "$3: got '$1', expected '$2'"; }

echo "== --warmup, --min-samples, --max-samples: launches = warm-up + samples"
# (--max-noise 0: four quiet samples could otherwise stop on noise, not the count)
ok_run w2 "${one[@]}" --printf-all --printf-lines 1 --warmup 2 --min-samples 4 --max-samples 4 --max-noise 0
expect_eq "$(col "$tmp/w2.csv" '[(x["samples"], x["stop"]) for x in r]')" "[('4', 'max_samples')]" "w2 samples"
expect_eq "$(launches w2)" 6 "w2 launches (2 warm-up + 4 samples)"
ok_run w5 "${one[@]}" --printf-all --printf-lines 1 --warmup 5 --min-samples 7 --max-samples 7
expect_eq "$(col "$tmp/w5.csv" 'r[0]["samples"]')" 7 "w5 samples"
expect_eq "$(launches w5)" 12 "w5 launches (5 warm-up + 7 samples)"
# Without --printf-all only the row's first launch prints.
ok_run w5quiet "${one[@]}" --warmup 5 --min-samples 7 --max-samples 7
expect_eq "$(launches w5quiet)" 1 "launches shown without --printf-all"

echo "== --hot: launches batched, many per sample"
# A batch starts once one launch takes under 1 ms: among 20 samples one does, even
# on a loaded machine (a launch takes tens of microseconds).
ok_run hot "${one[@]}" --printf-all --printf-lines 1 --warmup 1 --min-samples 20 --max-samples 20 --hot
n=$(launches hot)
[ "$n" -gt 40 ] || fail "--hot made $n launches for 20 samples (cold makes 21)"
expect_eq "$(col "$tmp/hot.csv" 'r[0]["samples"]')" 20 "hot samples"

echo "== --max-noise: a loose target stops at the minimum, none stops at the maximum"
# No set of 6 samples has a relative standard deviation over sqrt(6) = 245 %.
ok_run noise_loose "${one[@]}" --min-samples 6 --max-samples 50 --max-noise 300
expect_eq "$(col "$tmp/noise_loose.csv" '[(x["samples"], x["stop"]) for x in r]')" "[('6', 'noise')]" "--max-noise 300"
ok_run noise_none "${one[@]}" --min-samples 3 --max-samples 9 --max-noise 0
expect_eq "$(col "$tmp/noise_none.csv" '[(x["samples"], x["stop"]) for x in r]')" "[('9', 'max_samples')]" "--max-noise 0"

echo "== --min-time: samples until their sum reaches it; --save-samples holds them"
# (1e6 %: no spread of under 10^8 samples reaches it, so only --min-time can hold sampling back)
ok_run mintime "${one[@]}" --min-samples 2 --max-noise 1e6 --min-time 0.02 --save-samples
python3 - "$tmp/mintime.csv" "$tmp/mintime.csv.samples.csv" <<'PY' || fail "--min-time / --save-samples"
import csv, statistics, sys
row = list(csv.DictReader(open(sys.argv[1], newline="")))[0]
t = [float(s["time_ms"]) for s in csv.DictReader(open(sys.argv[2], newline=""))]
assert row["stop"] == "noise", row["stop"]
assert len(t) == int(row["samples"]), (len(t), row["samples"])
# stopped at the first sample past 20 ms, or at the second (--min-samples 2) when
# the first alone took that long (a loaded machine)
assert sum(t) >= 20.0 and (len(t) == 2 or sum(t[:-1]) < 20.0), (sum(t), t)
# (the CSV holds 6 significant digits)
assert abs(statistics.median(t) - float(row["time_median_ms"])) <= 1e-5 * float(row["time_median_ms"])
assert abs(min(t) - float(row["time_min_ms"])) <= 1e-5 * min(t)
PY

echo "== --timeout: sampling stops at the time limit"
# (The emulator's preset stops at 2 s: the samples must add up to no more than 0.3 s.)
ok_run timeout "${one[@]}" --min-samples 100000000 --max-noise 0 --timeout 0.3 --save-samples
expect_eq "$(col "$tmp/timeout.csv" 'r[0]["stop"]')" timeout "--timeout stop"
python3 - "$tmp/timeout.csv" "$tmp/timeout.csv.samples.csv" <<'PY' || fail "--timeout 0.3"
import csv, sys
row = list(csv.DictReader(open(sys.argv[1], newline="")))[0]
t = [float(s["time_ms"]) for s in csv.DictReader(open(sys.argv[2], newline=""))]
assert len(t) == int(row["samples"]) > 1, (len(t), row["samples"])
assert sum(t) - max(t) < 300.0, sum(t)
PY

echo "== --quick replaces the config's timing; without it the config's timing holds"
stale="$root/tests/configs/stale.json"           # timing: repeat 5
sed 's/"conv_stale"/"conv_plain"/; s/"GOOD_LAUNCHES": 3/"GOOD_LAUNCHES": 1/' "$stale" |
  sed "s|\"\\.\\./kernels/|\"$root/tests/kernels/|" >"$tmp/repeat.json"
"$h" run "$tmp/repeat.json" --backend emu --out "$tmp/repeat.csv" >/dev/null 2>&1 || fail "repeat.json run failed"
expect_eq "$(col "$tmp/repeat.csv" '[(x["samples"], x["stop"]) for x in r]')" "[('5', 'max_samples')]" "config repeat 5"
"$h" run "$tmp/repeat.json" --backend emu --quick --out "$tmp/quick.csv" >/dev/null 2>&1 || fail "--quick run failed"
q=$(col "$tmp/quick.csv" '(int(r[0]["samples"]) >= 5, r[0]["stop"])')
case "$q" in "(True, 'noise')" | "(True, 'settled')" | "(True, 'timeout')") ;; *) fail "--quick: $q (expected the preset's rules, not repeat 5)" ;; esac

echo "== --save-samples beside the default results file, fresh on every run"
mkdir -p "$tmp/cwd"
(cd "$tmp/cwd" && "$h" run "$cfg" --backend emu --variant conv_plain --case 0 --max-samples 3 --min-samples 3 --save-samples >/dev/null 2>&1) ||
  fail "--save-samples without --out failed"
s="$tmp/cwd/results/run_options.csv.samples.csv"
[ -f "$s" ] || fail "--save-samples without --out wrote no samples file: $(ls -R "$tmp/cwd")"
(cd "$tmp/cwd" && "$h" run "$cfg" --backend emu --variant conv_plain --case 0 --max-samples 3 --min-samples 3 --save-samples >/dev/null 2>&1)
[ "$(grep -c '^"case 0 conv_plain",' "$s" 2>/dev/null)" = 3 ] || fail "a second run appended to the old samples: $(cat "$s")"

echo "== --variant, --case: which rows ran"
ok_run sel --variant conv_count --case 3 --all
expect_eq "$(col "$tmp/sel.csv" '[(x["case"], x["in_ch"], x["out_ch"], x["img_size"], x["variant"], x["status"]) for x in r]')" \
  "[('3', '1', '2', '16', 'conv_count[ACCUM_DTYPE=float]', 'ok'), ('3', '1', '2', '16', 'conv_count[ACCUM_DTYPE=double]', 'ok')]" \
  "--variant conv_count (both defines) --case 3"
ok_run sel2 --variant conv_plain --variant 'conv_count[ACCUM_DTYPE=double]' --case 6 --all
expect_eq "$(col "$tmp/sel2.csv" 'sorted(x["variant"] for x in r)')" "['conv_count[ACCUM_DTYPE=double]', 'conv_plain']" "two --variant"
expect_eq "$(col "$tmp/sel2.csv" 'sorted(set(x["case"] for x in r))')" "['6']" "--case 6"
ok_run sel3 --variant conv_plain --case 6,0-2,1 --all
expect_eq "$(col "$tmp/sel3.csv" 'sorted(int(x["case"]) for x in r)')" "[0, 1, 2, 6]" "--case 6,0-2,1: each listed case once"
for bad in "1,,2" "3-1" "2-" "x"; do
  run selbad --case "$bad"
  expect_eq "$rc" 2 "--case $bad exit"
  grep -q "is not a case id or a range A-B" "$tmp/selbad.err" || fail "--case $bad: $(cat "$tmp/selbad.err")"
done
run selbad --case 0,5-99
expect_eq "$rc" 2 "--case past the plan exit"
grep -q -- "--case 5-99: the plan has 8 cases (0 to 7)" "$tmp/selbad.err" || fail "--case past the plan: $(cat "$tmp/selbad.err")"

echo "== the emulator's budget: the config's, --max-gflop, --all"
ok_run budget_cfg --variant conv_plain
expect_eq "$(col "$tmp/budget_cfg.csv" '[x["case"] for x in r if x["status"] == "ok"]')" "['0']" "config emu.max_gflop 2e-6"
expect_eq "$(col "$tmp/budget_cfg.csv" 'all("over the emulator budget of 2e-06 GFLOP" in x["reason"] for x in r if x["status"] != "ok")')" True "budget reason"
ok_run budget_cli --variant conv_plain --max-gflop 1e-5
expect_eq "$(col "$tmp/budget_cli.csv" '[(x["case"], x["status"]) for x in r if x["status"] != "ok"]')" "[('7', 'skipped')]" "--max-gflop 1e-5"
ok_run budget_all --variant conv_plain --max-gflop 1e-9 --all
expect_eq "$(col "$tmp/budget_all.csv" '[x["status"] for x in r]')" "$(python3 -c 'print(["ok"] * 8)')" "--all"

echo "== --seed picks the sampled cases"
sed 's/"check":/"sample": {"count": 3, "seed": 1}, "check":/' "$cfg" |
  sed "s|\"\\.\\./kernels/|\"$root/tests/kernels/|" >"$tmp/sampled.json"
ids() { "$h" list "$tmp/sampled.json" "$@" | awk '/^cases:/ {on = 1; next} on && $1 ~ /^[0-9]+$/ {printf "%s/%s/%s ", $2, $3, $5}'; }
a=$(ids) b=$(ids --seed 5)
[ -n "$a" ] && [ "$a" != "$b" ] || fail "--seed 5 lists the same cases as seed 1: '$a' '$b'"
"$h" run "$tmp/sampled.json" --backend emu --variant conv_plain --seed 5 --all --out "$tmp/seed.csv" >/dev/null 2>&1 || fail "--seed run failed"
expect_eq "$(col "$tmp/seed.csv" '" ".join(x["in_ch"] + "/" + x["out_ch"] + "/" + x["img_size"] for x in r) + " "')" "$b" "--seed 5 ran the listed cases"

echo "== --emu-threads, --jobs, --cache-dir, --no-baseline"
mkdir -p "$tmp/cache" "$tmp/envcache"
HARNESS_CACHE_DIR="$tmp/envcache" ok_run misc --case 0 --emu-threads 3 --jobs 1 --cache-dir "$tmp/cache" --no-baseline
expect_eq "$(col "$tmp/misc.csv" 'sorted(set((x["sms"], x["status"]) for x in r))')" "[('3', 'ok')]" "--emu-threads 3"
case "$(col "$tmp/misc.csv" 'r[0]["device"]')" in *"3 threads"*) ;; *) fail "--emu-threads 3: device $(col "$tmp/misc.csv" 'r[0]["device"]')" ;; esac
grep -q 'compiler work in 1 thread)' "$tmp/misc.out" || fail "--jobs 1: $(grep '^time:' "$tmp/misc.out")"
[ "$(ls "$tmp/cache" | grep -c '^emu-.*\.so$')" = 3 ] || fail "--cache-dir: $(ls "$tmp/cache")"
[ -z "$(ls -A "$tmp/envcache")" ] || fail "--cache-dir: HARNESS_CACHE_DIR was used too: $(ls "$tmp/envcache")"
ok_run jobs2 --case 0 --jobs 2 --cache-dir "$tmp/cache"
grep -q 'compiler work in 2 threads)' "$tmp/jobs2.out" || fail "--jobs 2: $(grep '^time:' "$tmp/jobs2.out")"
expect_eq "$(col "$tmp/jobs2.csv" 'sorted(x["compile_key"] for x in r) == sorted(x["compile_key"] for x in __import__("csv").DictReader(open(sys.argv[1].replace("jobs2", "misc"))))')" True "the cache's keys"
expect_eq "$(col "$tmp/jobs2.csv" 'len(r)')" 3 "--no-baseline: no extra rows on the emulator"

echo "== --kernel-timeout"
t0=$(date +%s)
"$h" run "$root/tests/configs/hostile.json" --backend emu --variant spin_forever --case 0 --kernel-timeout 0.3 \
  --out "$tmp/kt.csv" >/dev/null 2>&1
rc=$?
expect_eq "$rc" 1 "--kernel-timeout exit"
expect_eq "$(col "$tmp/kt.csv" 'r[0]["status"]')" timeout "--kernel-timeout 0.3 status"
case "$(col "$tmp/kt.csv" 'r[0]["reason"]')" in *"timed out after 0.3 s"*) ;; *) fail "--kernel-timeout reason: $(col "$tmp/kt.csv" 'r[0]["reason"]')" ;; esac
[ $(($(date +%s) - t0)) -lt 45 ] || fail "--kernel-timeout 0.3 took $(($(date +%s) - t0)) s (the default is 60)"

echo "== a planted bug: a mismatch row, exit 1"
"$h" run "$root/tests/configs/planted.json" --backend emu --out "$tmp/planted.csv" >"$tmp/planted.out" 2>&1
rc=$?
expect_eq "$rc" 1 "planted exit"
expect_eq "$(col "$tmp/planted.csv" '[(x["variant"], x["status"], x["match_fraction"]) for x in r]')" \
  "[('conv2d_planted', 'mismatch', '0.994792')]" "planted row"
case "$(col "$tmp/planted.csv" 'r[0]["reason"]')" in "first check: "*"191 of 192"*|"first check: "*) ;; *) fail "planted reason: $(col "$tmp/planted.csv" 'r[0]["reason"]')" ;; esac
grep -q 'conv2d_planted  *0  *1 ' "$tmp/planted.out" || fail "planted summary: $(cat "$tmp/planted.out")"

echo "== passed before timing, failed after (and --warmup moves the failure)"
sruns() { "$h" run "$stale" --backend emu --out "$tmp/$1.csv" "${@:2}" >/dev/null 2>&1; }
sruns stale1 --warmup 1
expect_eq "$?" 1 "stale exit"
expect_eq "$(col "$tmp/stale1.csv" 'r[0]["status"]')" mismatch "stale status"
case "$(col "$tmp/stale1.csv" 'r[0]["reason"]')" in "passed before timing, failed after: 0.0000% of 64 elements match"*) ;;
  *) fail "stale reason: $(col "$tmp/stale1.csv" 'r[0]["reason"]')" ;; esac
expect_eq "$(col "$tmp/stale1.csv" 'float(r[0]["match_fraction"])')" 0.0 "stale: the after-timing check's columns"
sruns stale3 --warmup 3         # launch 3 is the last correct one: still passes first
case "$(col "$tmp/stale3.csv" 'r[0]["reason"]')" in "passed before timing, failed after"*) ;; *) fail "--warmup 3: $(col "$tmp/stale3.csv" 'r[0]["reason"]')" ;; esac
sruns stale4 --warmup 4         # launch 4 is wrong, but the first check is of launch 1
case "$(col "$tmp/stale4.csv" 'r[0]["reason"]')" in "passed before timing, failed after"*) ;; *) fail "--warmup 4: $(col "$tmp/stale4.csv" 'r[0]["reason"]')" ;; esac

finish
