#!/usr/bin/env bash
# test_tune_inputs.sh: configs an outside user (a Kernel Tuner user who read
# only docs/tuning.md) wrote for harness tune, with kernels of their own
# (tests/kernels/tune/tune_inputs.cu), on the emulator, and what went wrong:
#   - a kernel that times out for some tunables: the worker reports the
#     time-out and restarts, and the configuration handed to it meanwhile was
#     journaled as failed ("the worker process exited with code 3") though it
#     never ran, so a correct configuration (maybe the best) was lost for good;
#   - --seed, which docs/tuning.md gives the search, also resampled a sampled
#     config's cases: two seeds tuned different problem sizes;
#   - a tune resumed after its CSV was deleted (or another --out sharing a
#     --journal) wrote a CSV holding only the header (or only the evaluations
#     it measured), though docs/tuning.md says <out>.csv has every evaluation;
#   - the header left axes that are not integers (pool2d's mode=max|avg) out
#     of a case's #if, so cases differing only there shared one condition and
#     every one after the first was unreachable (avg got max's configuration);
#   - --with-best given this tune's own best.json (or a file twice) put the
#     device in the header twice, the second an #elif no target reaches;
#   - a kernel that faults for some tunables killed harness tune with SIGPIPE
#     (exit 141, no summary, no outputs): the worker exits after the fault
#     for a fresh process, and the next request written to it raised SIGPIPE;
#   - --compare-strategies on a space of one configuration printed every
#     strategy's score as nan;
#   - a tunable also given in the config's "defaults" defines was refused as
#     "'ITEMS' is also in defines" at variants[0].tune.ITEMS, of a variant with
#     no defines: the message now names the defaults;
#   - a restriction that divides by zero for some configurations ended the
#     tune (it now excludes them, with one notice; failing for all is exit 2);
#   - a journal of an older version kept its false failures ("exited with
#     code 3") for good: a resume now measures a worker's end again, and a
#     merge of shards takes a journal's latest entry of a key;
#   - --top 1 printed its missing runner-up as inf;
# and what must hold: a tunable that makes the kernel wrong is never chosen,
# an all-failing space writes no winner, an empty space is exit 2.
. "$(dirname "$0")/lib.sh"
k=$root/tests/kernels/tune/tune_inputs.cu

# cfg NAME KERNEL TUNE_JSON [EXTRA_VARIANT_JSON] [EXTRA_TOP_JSON]: a relu config
cfg() {
  cat >"$tmp/$1.json" <<J
{"name": "$1", "op": "relu", "axes": {"n": [999, 3000]},
 "check": {"atol": 0, "rtol": 0, "min_match": 1.0} ${5:+, $5},
 "variants": [{"file": "$k", "kernel": "$2", "tune": $3,
   "block": ["BLOCK"], "grid": ["ceil_div(n, BLOCK * ITEMS)"], "args": ["x", "y", "n"] ${4:+, $4}}]}
J
}
tune() { timeout 120 "$h" tune "$@" --backend emu --quick 2>&1; }

# 1. time-outs for some tunables: every other configuration is measured
cfg hang relu_hang '{"BLOCK": [64, 128], "ITEMS": [1, 4]}' '' '"axes": {"n": [1000]}'
sed -i 's/"axes": {"n": \[999, 3000\]},//' "$tmp/hang.json"
out=$(tune "$tmp/hang.json" --kernel-timeout 1 --strategy brute_force --out "$tmp/hang")
rc=$?
[ $rc = 0 ] || fail "hang: exit $rc: ${out:0:600}"
n_ok=$(grep '"phase":"search"' "$tmp/hang.journal" | grep -c '"status":"ok"')
n_to=$(grep '"phase":"search"' "$tmp/hang.journal" | grep -c '"status":"timeout"')
[ "$n_ok" = 2 ] && [ "$n_to" = 2 ] || fail "hang: expected 2 ok and 2 timeout search evaluations, got $n_ok ok, $n_to timeout: $(cut -c1-300 "$tmp/hang.journal")"
grep -q 'exited with code' "$tmp/hang.journal" && fail "hang: a configuration was blamed for the worker's restart: $(grep 'exited with code' "$tmp/hang.journal" | cut -c1-300)"

# 1b. faults for some tunables, across cases: no SIGPIPE, every other
# configuration measured, a winner without ITEMS=4
cfg fault relu_fault '{"BLOCK": [32, 64, 128], "ITEMS": [1, 2, 4]}'
out=$(tune "$tmp/fault.json" --across --strategy brute_force --budget 100% --top 2 --out "$tmp/fault")
rc=$?
[ $rc = 0 ] || fail "fault: exit $rc: ${out:0:600}"
n_ok=$(grep '"phase":"search"' "$tmp/fault.journal" | grep -c '"status":"ok"')
n_fault=$(grep '"phase":"search"' "$tmp/fault.journal" | grep -c '"status":"fault"')
[ "$n_ok" = 12 ] && [ "$n_fault" = 6 ] || fail "fault: expected 12 ok and 6 fault search evaluations, got $n_ok, $n_fault"
grep -q '"ITEMS":	4' "$tmp/fault.best.json" 2>/dev/null && fail "fault: chose a faulting configuration"
grep -q '"defines"' "$tmp/fault.best.json" 2>/dev/null || fail "fault: no winner in best.json"

# 2. a tunable value that makes the kernel wrong (ITEMS=3) is never chosen
cfg bug3 relu_items '{"BLOCK": [32, 64], "ITEMS": [1, 2, 3, 4]}' '"defines": {"BUG3": 1}'
for s in brute_force random annealing genetic diff_evolution pso local_search bandit; do
  out=$(tune "$tmp/bug3.json" --strategy $s --budget 100% --top 8 --out "$tmp/bug3_$s")
  grep -q '"ITEMS":	3' "$tmp/bug3_$s.best.json" && fail "bug3 $s: chose ITEMS=3: ${out:0:600}"
  grep -q 'ITEMS 3' "$tmp/bug3_$s.h" && fail "bug3 $s: the header selects ITEMS=3"
done

# 3. an empty space: exit 2, the restriction's path named
cfg empty relu_items '{"BLOCK": [64, 128], "ITEMS": [2, 4]}' '"restrict": ["BLOCK * ITEMS > 100000"]'
out=$(tune "$tmp/empty.json" --out "$tmp/empty"); rc=$?
[ $rc = 2 ] || fail "empty: exit $rc, expected 2"
case "$out" in *"restrict"*"empty"*) ;; *) fail "empty: unclear error: ${out:0:400}" ;; esac
[ -e "$tmp/empty.best.json" ] && fail "empty: wrote a best.json"

# 4. every configuration wrong: exit 1, no winner in best.json or the header
cfg wrong relu_items '{"BLOCK": [64], "ITEMS": [3]}' '"defines": {"BUG3": 1}'
out=$(tune "$tmp/wrong.json" --out "$tmp/wrong"); rc=$?
[ $rc = 1 ] || fail "wrong: exit $rc, expected 1: ${out:0:400}"
case "$out" in *"no configuration ran correctly"*) ;; *) fail "wrong: no clear outcome: ${out:0:400}" ;; esac
grep -q '"defines"' "$tmp/wrong.best.json" && fail "wrong: best.json names a winner"
grep -q 'define ITEMS' "$tmp/wrong.h" && fail "wrong: the header defines a winner"

# 5. --seed seeds the search, not the cases of a sampled config
cfg sampled relu_items '{"BLOCK": [32, 64, 128], "ITEMS": [1, 2]}' '' '"sample": {"count": 2, "seed": 9}'
sed -i 's/"n": \[999, 3000\]/"n": [1000, 2000, 3000, 4000, 5000, 6000]/' "$tmp/sampled.json"
for sd in 1 2; do
  tune "$tmp/sampled.json" --strategy random --budget 1 --top 1 --seed $sd --out "$tmp/sampled$sd" >/dev/null
  grep -o '"case_values":.*' "$tmp/sampled$sd.best.json" >"$tmp/sampled$sd.cases"
done
cmp -s "$tmp/sampled1.cases" "$tmp/sampled2.cases" || fail "seed: --seed 1 and --seed 2 tuned different cases: $(cat "$tmp/sampled1.cases" "$tmp/sampled2.cases")"
[ -s "$tmp/sampled1.cases" ] || fail "seed: no cases in best.json"

# 6. <out>.csv holds every evaluation, also those the journal answered
cfg csv relu_items '{"BLOCK": [32, 64, 128], "ITEMS": [1, 2]}'
tune "$tmp/csv.json" --strategy brute_force --budget 100% --top 2 --out "$tmp/csv" >/dev/null
rows=$(wc -l <"$tmp/csv.csv")
rm "$tmp/csv.csv"
out=$(tune "$tmp/csv.json" --strategy brute_force --budget 100% --top 2 --out "$tmp/csv")
case "$out" in *"0 measured"*) ;; *) fail "csv: the resume measured again: ${out:0:400}" ;; esac
[ "$(wc -l <"$tmp/csv.csv")" = "$rows" ] || fail "csv: resumed after deleting the CSV: $(wc -l <"$tmp/csv.csv") lines, expected $rows"
tune "$tmp/csv.json" --strategy brute_force --budget 100% --top 2 --out "$tmp/csv" >/dev/null
[ "$(wc -l <"$tmp/csv.csv")" = "$rows" ] || fail "csv: a second resume added rows: $(wc -l <"$tmp/csv.csv") lines, expected $rows"
tune "$tmp/csv.json" --strategy brute_force --budget 100% --top 2 --out "$tmp/csv_other" --journal "$tmp/csv.journal" >/dev/null
[ "$(wc -l <"$tmp/csv_other.csv")" = "$rows" ] || fail "csv: another --out on the same journal: $(wc -l <"$tmp/csv_other.csv") lines, expected $rows"

# 7. the header round-trips best.json, string axes included; --with-best
# of a device already in it is left out
cfg strax relu_items '{"BLOCK": [32, 64, 128], "ITEMS": [1, 2, 4]}' '' '"where": "tag == \"a\" || n == 999"'
sed -i 's/"n": \[999, 3000\]/"n": [999, 3000], "tag": ["a", "b"]/' "$tmp/strax.json"
out=$(tune "$tmp/strax.json" --strategy brute_force --budget 100% --top 1 --out "$tmp/strax")
[ -s "$tmp/strax.h" ] || fail "strax: no header: ${out:0:400}"
python3 - "$tmp/strax" <<'PY' || fail "strax: the header does not give best.json's configurations"
import json, re, subprocess, sys
stem = sys.argv[1]
b = json.load(open(stem + ".best.json"))
assert len(b["results"]) == 3, b["results"]
conds = [l.split("/*")[0].split("if", 1)[1].strip() for l in open(stem + ".h") if re.match(r"#\s*(el)?if defined\(HN_CASE_", l)]
if len(set(conds)) != 3:
    sys.exit("the header's case conditions are not one per case: %s" % conds)
for r in b["results"]:
    flags = []
    for kv in r["case_values"].split(","):
        k, v = kv.split("=", 1)
        flags.append("-DHN_CASE_%s=%s" % (k.upper(), v) if re.fullmatch(r"-?\d+", v) else "-DHN_CASE_%s_%s" % (k.upper(), v.upper()))
    out = subprocess.run(["cc", "-E", "-dM", "-x", "c", stem + ".h"] + flags, capture_output=True, text=True, check=True).stdout
    got = dict(re.findall(r"#define (\w+) (.*)", out))
    for k, v in r["config"].items():
        if got.get(k) != str(v):
            sys.exit("case %s: %s=%s in best.json, %s in the header" % (r["case_values"], k, v, got.get(k)))
PY
out=$(tune "$tmp/strax.json" --strategy brute_force --budget 100% --top 1 --out "$tmp/strax" --with-best "$tmp/strax.best.json")
case "$out" in *"in the header already"*) ;; *) fail "with-best: own device not noted: ${out:0:400}" ;; esac
n_dev=$(grep -c 'defined(HN_TARGET_' "$tmp/strax.h")
[ "$n_dev" = 1 ] || fail "with-best: the header lists the device $n_dev times"

# 8. a space of one point: tuned, and compared without a nan score
cfg single relu_items '{"BLOCK": [64], "ITEMS": [2]}'
out=$(tune "$tmp/single.json" --out "$tmp/single"); rc=$?
[ $rc = 0 ] || fail "single: exit $rc: ${out:0:400}"
grep -q '"BLOCK":	64' "$tmp/single.best.json" || fail "single: no winner"
out=$(timeout 60 "$h" tune "$tmp/single.json" --replay "$tmp/single.journal" --compare-strategies --repeats 3 --out "$tmp/single_cmp" 2>&1); rc=$?
[ $rc = 0 ] || fail "single compare: exit $rc: ${out:0:400}"
case "$out" in *nan*) fail "single compare: a nan in: ${out:0:600}" ;; esac
case "$out" in *"nothing to score against"*) ;; *) fail "single compare: no note on the missing score: ${out:0:600}" ;; esac

# 9. a tunable that the defaults' defines also set: the error names the defaults
cfg dflt relu_items '{"BLOCK": [64], "ITEMS": [2, 4]}' '' '"defaults": {"defines": {"ITEMS": 4}}'
out=$(tune "$tmp/dflt.json" --space-only); rc=$?
[ $rc = 2 ] || fail "defaults: exit $rc, expected 2: ${out:0:400}"
case "$out" in *'variants[0].tune.ITEMS'*'"defaults"'*) ;; *) fail "defaults: the error does not name the defaults: ${out:0:400}" ;; esac

# 10. a restriction that cannot be evaluated for some points (a division by
# zero) excludes them, with one notice naming it and the count, where it used
# to end the tune; one that can be evaluated for none is exit 2 naming the file
# and the JSON path
cfg divz relu_items '{"BLOCK": [64, 128], "ITEMS": [1, 2, 4]}' '"restrict": ["BLOCK / (ITEMS - 2) > 0"]'
out=$(tune "$tmp/divz.json" --strategy brute_force --top 0 --out "$tmp/divz"); rc=$?
[ $rc = 0 ] || fail "divz: exit $rc: ${out:0:600}"
n_note=$(printf '%s\n' "$out" | grep -c "restrict\[0\] ('BLOCK / (ITEMS - 2) > 0') could not be evaluated for 4 of the 12 raw configurations of 2 cases")
[ "$n_note" = 1 ] || fail "divz: expected one notice naming the restriction and 4 of 12, got $n_note: ${out:0:800}"
case "$out" in *"division by zero at BLOCK=64,ITEMS=2"*) ;; *) fail "divz: the notice does not say where: ${out:0:800}" ;; esac
n_ev=$(grep -c '"phase":"search"' "$tmp/divz.journal")
[ "$n_ev" = 4 ] || fail "divz: expected the 2 valid configurations on 2 cases (4 evaluations), got $n_ev"
grep -q 'ITEMS=2' "$tmp/divz.journal" && fail "divz: a configuration the restriction could not be evaluated for was measured"
grep -q 'ITEMS=1' "$tmp/divz.journal" && fail "divz: a configuration the restriction rejects was measured"
cfg divall relu_items '{"BLOCK": [64, 128], "ITEMS": [1, 2]}' '"restrict": ["BLOCK <= 128", "ITEMS / (BLOCK - BLOCK) > 0"]'
out=$(tune "$tmp/divall.json" --space-only); rc=$?
[ $rc = 2 ] || fail "divall: exit $rc, expected 2: ${out:0:400}"
case "$out" in *"divall.json"*"variants[0].restrict[1]"*"could not be evaluated for any configuration"*"division by zero"*) ;;
  *) fail "divall: the error does not name the file, the restriction and why: ${out:0:400}" ;; esac
# the same, naming the case (so applied per case): exit 2 naming the case
cfg divcase relu_items '{"BLOCK": [64, 128], "ITEMS": [1, 2]}' '"restrict": ["ITEMS / (n - n) > 0"]'
out=$(tune "$tmp/divcase.json" --strategy brute_force --out "$tmp/divcase"); rc=$?
[ $rc = 2 ] || fail "divcase: exit $rc, expected 2: ${out:0:400}"
case "$out" in *"divcase.json"*"variants[0].restrict[0]"*"for any configuration for case 0"*) ;;
  *) fail "divcase: the error does not name the file, the restriction and the case: ${out:0:400}" ;; esac
[ -s "$tmp/divcase.journal" ] && fail "divcase: evaluations were made"

# 11. a journal of an older version holding false failures: entries that
# record the worker process ending (exited with code 3: the restart after
# another configuration's fault; died of SIGPIPE or SIGKILL) are measured
# again on resume; verdicts (a mismatch, a crash while it ran) are kept
cfg old relu_items '{"BLOCK": [64, 128], "ITEMS": [1, 2, 4]}' '' '"axes": {"n": [999]}'
sed -i 's/"axes": {"n": \[999, 3000\]},//' "$tmp/old.json"
out=$(tune "$tmp/old.json" --strategy brute_force --top 0 --out "$tmp/old"); rc=$?
[ $rc = 0 ] || fail "old journal: first tune: exit $rc: ${out:0:400}"
j=$tmp/old.journal
[ "$(wc -l <"$j")" = 6 ] || fail "old journal: expected 6 evaluations, got $(wc -l <"$j")"
mark() { sed -i "$1s/\"status\":\"ok\"/\"status\":\"$2\"/; $1s/\"reason\":\"\"/\"reason\":\"$3\"/" "$j"; }
mark 1 fault 'the worker process exited with code 3'
mark 2 mismatch '12 of 999 outputs differ'
mark 3 fault 'the worker process died of Segmentation fault'
mark 4 fault 'the worker process died of Broken pipe'
mark 5 fault 'the worker process died of Killed'
c1=$(sed -n 1p "$j" | grep -o '"config":"[^"]*"'); c4=$(sed -n 4p "$j" | grep -o '"config":"[^"]*"')
c5=$(sed -n 5p "$j" | grep -o '"config":"[^"]*"')
out=$(tune "$tmp/old.json" --strategy brute_force --top 0 --out "$tmp/old"); rc=$?
[ $rc = 0 ] || fail "old journal: resume: exit $rc: ${out:0:400}"
case "$out" in *"3 record a worker process that ended"*) ;; *) fail "old journal: the resume does not say what it measures again: ${out:0:400}" ;; esac
case "$out" in *"evaluations: 3 measured (0 failed), 3 from the journal"*) ;; *) fail "old journal: expected 3 measured again and 3 kept: ${out:0:600}" ;; esac
new=$(tail -n +7 "$j")
for c in "$c1" "$c4" "$c5"; do
  printf '%s\n' "$new" | grep -F "$c" | grep -q '"status":"ok"' || fail "old journal: $c not measured again: $(printf '%s' "$new" | cut -c1-300)"
done
[ "$(wc -l <"$j")" = 9 ] || fail "old journal: expected 9 lines after the resume, got $(wc -l <"$j") (a verdict measured again?)"
grep -c '"status":"mismatch"' "$tmp/old.journal" | grep -q '^1$' || fail "old journal: the mismatch verdict is gone"
n_t4=$(grep -o '"configuration"' "$tmp/old.t4/case0.json" | wc -l)
[ "$n_t4" = 6 ] || fail "old journal: T4 holds $n_t4 evaluations, expected 6 (the superseded entries left out)"
out=$(tune "$tmp/old.json" --strategy brute_force --top 0 --out "$tmp/old"); rc=$?
case "$out" in *"evaluations: 0 measured"*) ;; *) fail "old journal: a second resume measured again: ${out:0:400}" ;; esac

# 12. shards resumed over such a journal merge to the verdicts: within a
# journal the later entry of a key is the one merged (the merge kept the first,
# the worker's end), and across journals a verdict replaces a worker's end
for i in 0 1; do
  out=$(tune "$tmp/divz.json" --strategy brute_force --top 0 --shard $i/2 --out "$tmp/sh$i"); rc=$?
  [ $rc = 0 ] || fail "shards: shard $i: exit $rc: ${out:0:400}"
done
j=$tmp/sh0.journal
mark 1 fault 'the worker process exited with code 3'
cp "$j" "$tmp/sh0old.journal"; cp "$tmp/sh0.meta.json" "$tmp/sh0old.meta.json"
out=$(tune "$tmp/divz.json" --strategy brute_force --top 0 --shard 0/2 --out "$tmp/sh0"); rc=$?
case "$out" in *"evaluations: 1 measured"*) ;; *) fail "shards: the resumed shard did not measure the worker's end again: ${out:0:400}" ;; esac
for order in "sh0" "sh0old sh0"; do
  js=(); for s in $order sh1; do js+=("$tmp/$s.journal"); done
  out=$("$h" merge "$tmp/m.journal" "${js[@]}" 2>&1); rc=$?
  [ $rc = 0 ] || fail "shards: merge of $order sh1: exit $rc: ${out:0:400}"
  case "$out" in *" 4 evaluations into"*) ;; *) fail "shards: merge of $order sh1: ${out:0:400}" ;; esac
  python3 - "$tmp/m.journal" <<'PY' || fail "shards: merge of $order sh1 does not hold the verdicts"
import json, sys
last = {}
for l in open(sys.argv[1]):
    e = json.loads(l)
    last[e["key"]] = e
bad = [e["config"] + ": " + e["reason"] for e in last.values() if e["status"] != "ok"]
sys.exit("%d keys, not ok: %s" % (len(last), bad) if bad or len(last) != 4 else 0)
PY
done
out=$(tune "$tmp/divz.json" --strategy brute_force --top 0 --journal "$tmp/m.journal" --out "$tmp/shm"); rc=$?
case "$out" in *"evaluations: 0 measured"*) ;; *) fail "shards: the merged journal did not answer every evaluation: ${out:0:400}" ;; esac

# 13. --top 1 has no runner-up: the table says '-', not inf
out=$(tune "$tmp/divz.json" --strategy brute_force --top 1 --out "$tmp/divz"); rc=$?
printf '%s\n' "$out" | grep -E '^case' | grep -q 'inf' && fail "top 1: a runner-up of inf: ${out:0:600}"

finish
