#!/usr/bin/env bash
# test_tune.sh: harness tune on the emulator (tests/configs/tune_small.json: 24 raw
# configurations, 22 valid): the space's sizes, bad input (an empty space, a
# tunable neither the kernel nor its launch uses, a budget of 0; one only the launch
# uses is accepted), a tune that writes its journal and
# best.json and resumes from the journal without measuring again, a brute-force
# tune killed with kill -9 and resumed without repeating an evaluation, and a
# replay of the recorded journal that finds the recorded optimum.
. "$(dirname "$0")/lib.sh"
cfg="$root/tests/configs/tune_small.json"

echo "== the space"
out=$("$h" tune "$cfg" --backend emu --space-only 2>&1)
[ $? = 0 ] || fail "--space-only failed: $out"
n=$(printf '%s\n' "$out" | grep -c "24 raw configurations, 22 valid")
[ "$n" = 2 ] || fail "expected 22 of 24 valid in both cases: $out"

echo "== bad input"
sed 's/"restrict": \["BLOCK \* ITEMS <= 512"\]/"restrict": ["BLOCK * ITEMS > 4096"]/' "$cfg" >"$tmp/empty.json"
sed -i "s|\"../kernels/tune/|\"$root/tests/kernels/tune/|" "$tmp/empty.json"
expect 2 "empty.json: variants[0].restrict: no configuration of the tunables satisfies the restrictions" \
  "$h" tune "$tmp/empty.json" --backend emu --space-only
sed 's/"ORDER": \[0, 1\]}/"ORDER": [0, 1], "UNUSED_KNOB": [1, 2]}/' "$cfg" >"$tmp/unused.json"
sed -i "s|\"../kernels/tune/|\"$root/tests/kernels/tune/|" "$tmp/unused.json"
expect 2 "variants[0].tune.UNUSED_KNOB: neither the kernel's source" "$h" tune "$tmp/unused.json" --backend emu --space-only
# a tunable only the launch uses (a grid factor, a block size the kernel reads from
# blockDim, a template argument of the kernel's name) changes what runs: accepted
sed 's/"ORDER": \[0, 1\]}/"ORDER": [0, 1], "GRID_X": [1, 2]}/; s/BLOCK \* ITEMS)"\]/BLOCK * ITEMS) * GRID_X"]/' \
  "$cfg" >"$tmp/launch_only.json"
sed -i "s|\"../kernels/tune/|\"$root/tests/kernels/tune/|" "$tmp/launch_only.json"
grep -q 'ITEMS) \* GRID_X' "$tmp/launch_only.json" || fail "launch_only.json: the sed did not apply"
expect 0 "48 raw configurations, 44 valid" "$h" tune "$tmp/launch_only.json" --backend emu --space-only
expect 2 "--budget 0" "$h" tune "$cfg" --backend emu --budget 0
sed 's/"budget": 6/"budget": 0/' "$cfg" >"$tmp/budget0.json"
sed -i "s|\"../kernels/tune/|\"$root/tests/kernels/tune/|" "$tmp/budget0.json"
expect 2 "budget0.json: tuning.budget" "$h" list "$tmp/budget0.json"
expect 2 "unknown strategy 'sideways'" "$h" tune "$cfg" --backend emu --strategy sideways
# cases over the emulator's budget are left out, as harness run skips them
sed 's/"tuning": {/"emu": {"max_mb": 1e-9}, "tuning": {/' "$cfg" >"$tmp/tiny.json"
sed -i "s|\"../kernels/tune/|\"$root/tests/kernels/tune/|" "$tmp/tiny.json"
expect 2 "no case is within the emulator's budget" "$h" tune "$tmp/tiny.json" --backend emu --out "$tmp/tiny"
expect 2 "case 1 (12x12x3, f:3x3, p:0) left out: " "$h" tune "$tmp/tiny.json" --backend emu --out "$tmp/tiny"

echo "== a configuration the device cannot launch is invalid with its reason, and the search goes on"
sed 's/{"pow2": \[32, 256\]}, "ITEMS": \[1, 2, 4\]/{"pow2": [1024, 2048]}, "ITEMS": [1]/; s/"BLOCK \* ITEMS <= 512"/"ITEMS >= 1"/' "$cfg" >"$tmp/big.json"
sed -i "s|\"../kernels/tune/|\"$root/tests/kernels/tune/|" "$tmp/big.json"
out=$("$h" tune "$tmp/big.json" --backend emu --case 0 --strategy brute_force --budget 100% --top 1 --out "$tmp/big" 2>&1)
[ $? = 0 ] || fail "a tune with unlaunchable configurations failed: $out"
python3 - "$tmp/big.journal" <<'PY' || fail "unlaunchable configurations not recorded as invalid with a reason: $out"
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip() and json.loads(l)["phase"] == "search"]
assert len(rows) == 4, len(rows)
for r in rows:
    if r["config"].startswith("BLOCK=2048"):
        assert r["status"] == "launch_error" and "block dimension x = 2048" in r["reason"], r
    else:
        assert r["status"] == "ok", r
PY

echo "== --case lists the cases tuned"
out=$("$h" tune "$cfg" --backend emu --case 1,0 --quick --out "$tmp/cl" 2>&1) || fail "tune --case 1,0: $out"
[ "$(grep -cE '^case [01] ' <<<"$out")" = 2 ] || fail "tune --case 1,0 did not tune both cases: $out"
out=$("$h" tune "$cfg" --backend emu --case 0,2 --out "$tmp/cl2" 2>&1)
[ "$?" = 2 ] && [[ "$out" == *"--case 2: the plan has 2 cases (0 to 1)"* ]] || fail "tune --case 0,2: $out"

echo "== a tune, then the same tune from its journal"
out=$("$h" tune "$cfg" --backend emu --case 0 --out "$tmp/t" 2>&1)
rc=$?
[ "$rc" = 0 ] || fail "tune exited $rc: $out"
case "$out" in *"per case with random, budget 6"*) ;; *) fail "the config's tuning defaults were not used: $out" ;; esac
python3 - "$tmp/t.best.json" "$tmp/t.journal" <<'PY' || fail "best.json or journal wrong"
import json, sys
best = json.load(open(sys.argv[1]))
r = best["results"][0]
assert best["mode"] == "per case" and r["case"] == 0, best
assert set(r["config"]) == {"BLOCK", "ITEMS", "ORDER"}, r
assert r["config"]["BLOCK"] * r["config"]["ITEMS"] <= 512, r
assert r["evaluations"] == 6 and r["valid_configurations"] == 22, r
assert r["time_ms"] > 0 and "runner_up" in r and r["margin"] >= 1.0, r
lines = [json.loads(l) for l in open(sys.argv[2])]
search = [l for l in lines if l["phase"] == "search"]
final = [l for l in lines if l["phase"] == "final"]
assert len(search) == 6 and len({l["key"] for l in search}) == 6, len(search)
assert len(final) == 2, len(final)
assert all(l["status"] == "ok" and l["time_ms"] > 0 for l in lines), lines
PY
out=$("$h" tune "$cfg" --backend emu --case 0 --out "$tmp/t" 2>&1)
case "$out" in *"evaluations: 0 measured (0 failed), 8 from the journal"*) ;; *) fail "the rerun measured again: $out" ;; esac

echo "== the C header and the T4 files"
python3 - "$tmp/t.best.json" "$tmp/t2.best.json" <<'PY' || fail "could not write a second device's best.json"
import json, sys
d = json.load(open(sys.argv[1]))
d["device"] = "Other GPU 9000"
for r in d["results"]:
    r["defines"] = "BLOCK=512,ITEMS=1,ORDER=0"
json.dump(d, open(sys.argv[2], "w"))
PY
out=$("$h" tune "$cfg" --backend emu --case 0 --out "$tmp/t" --with-best "$tmp/t2.best.json" 2>&1)
[ $? = 0 ] || fail "tune --with-best failed: $out"
case "$out" in *"C header: $tmp/t.h (2 devices)"*) ;; *) fail "no two-device header: $out" ;; esac
want=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["results"][0]["defines"])' "$tmp/t.best.json")
# the case's axes as macros select its configuration; the other GPU's target selects its own
got=$(cc -E -dM -DHN_CASE_IN_CH=2 -DHN_CASE_FILTER_SIZE=3 -DHN_CASE_IMG_SIZE=12 -include "$tmp/t.h" -x c /dev/null |
      awk '$2 == "BLOCK" || $2 == "ITEMS" || $2 == "ORDER" {print $2 "=" $3}' | sort | paste -sd, -)
[ "$got" = "$(printf '%s\n' "$want" | tr , '\n' | sort | paste -sd, -)" ] || fail "the header gave $got for case 0, best.json says $want"
got=$(cc -E -dM -DHN_TARGET_OTHER_GPU_9000 -include "$tmp/t.h" -x c /dev/null | awk '$2 == "BLOCK" {print $3}')
[ "$got" = 512 ] || fail "HN_TARGET_OTHER_GPU_9000 did not select the other device's configuration: BLOCK=$got"
python3 - "$tmp/t.t4/case0.json" "$tmp/t.journal" <<'PY' || fail "the T4 file is wrong"
import json, sys
t4 = json.load(open(sys.argv[1]))
assert t4["schema_version"] == "1.0.0"
rows = [json.loads(l) for l in open(sys.argv[2]) if l.strip()]
search = [r for r in rows if r["phase"] == "search" and r["case"] == 0]
assert len(t4["results"]) == len(search), (len(t4["results"]), len(search))
for r in t4["results"]:
    for k in ("timestamp", "configuration", "times", "invalidity", "correctness", "measurements", "objectives"):
        assert k in r, k
    assert set(r["configuration"]) == {"BLOCK", "ITEMS", "ORDER"}, r["configuration"]
    assert r["invalidity"] == "correct" and r["measurements"][0]["name"] == "time" and r["measurements"][0]["value"] > 0
PY

echo "== kill -9 in the middle of a brute-force tune, then resume"
"$h" tune "$cfg" --backend emu --case 0 --strategy brute_force --budget 100% --top 0 --out "$tmp/b" >/dev/null 2>&1 &
pid=$!
for i in $(seq 1 100); do
  [ -s "$tmp/b.journal" ] && [ "$(wc -l <"$tmp/b.journal")" -ge 3 ] && break
  sleep 0.2
done
kill -9 "$pid"
wait "$pid" 2>/dev/null
before=$(wc -l <"$tmp/b.journal")
[ "$before" -ge 3 ] && [ "$before" -lt 22 ] || fail "expected a partial journal, got $before lines"
out=$("$h" tune "$cfg" --backend emu --case 0 --strategy brute_force --budget 100% --top 0 --out "$tmp/b" 2>&1)
[ $? = 0 ] || fail "the resumed tune failed: $out"
measured=$(printf '%s\n' "$out" | sed -n 's/^evaluations: \([0-9]*\) measured.*, \([0-9]*\) from the journal.*/\1 \2/p')
[ "$measured" = "$((22 - before)) $before" ] || fail "resume measured/known: '$measured', expected $((22 - before)) $before"
python3 - "$tmp/b.journal" <<'PY' || fail "the journal repeats an evaluation"
import json, sys
keys = [json.loads(l)["key"] for l in open(sys.argv[1]) if l.strip()]
assert len(keys) == 22 and len(set(keys)) == 22, (len(keys), len(set(keys)))
PY

echo "== replay: a strategy on the recorded journal finds the recorded optimum"
want=$(python3 - "$tmp/b.journal" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
print(min(rows, key=lambda r: r["time_ms"])["config"])
PY
)
out=$("$h" tune "$cfg" --replay "$tmp/b.journal" --case 0 --strategy brute_force --budget 100% --top 0 2>&1)
[ $? = 0 ] || fail "replay failed: $out"
case "$out" in *" $want"*) ;; *) fail "replay did not find $want: $out" ;; esac

echo "== the committed igemm space: every strategy with the whole space as budget finds the recorded optimum"
fix="$root/results/emu/2026-11-30/conv2d_igemm_space.journal"
icfg="$root/tests/configs/conv2d_igemm_space.json"
want=$(python3 - "$fix" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
best = {}
for r in rows:
    if r["phase"] == "search" and r["status"] == "ok" and (r["case"] not in best or r["time_ms"] < best[r["case"]][0]):
        best[r["case"]] = (r["time_ms"], r["config"])
print(" ".join(best[c][1] for c in sorted(best)))
PY
)
for st in brute_force random annealing genetic diff_evolution pso local_search bandit; do
  out=$("$h" tune "$icfg" --replay "$fix" --strategy $st --budget 100% --top 0 2>&1)
  [ $? = 0 ] || { fail "$st on the igemm journal failed: $out"; continue; }
  got=$(printf '%s\n' "$out" | awk '$1 == "case" && $3 == "'$st'" {print $NF}' | paste -sd' ' -)
  [ "$got" = "$want" ] || fail "$st found '$got', the recorded optimum is '$want'"
done

echo "== compare the strategies on the recorded journal"
expect 2 "--compare-strategies needs --replay" "$h" tune "$cfg" --compare-strategies
expect 2 "the budget must be evaluations" "$h" tune "$cfg" --replay "$tmp/b.journal" --compare-strategies --budget 5s
# the recorded configurations with a landscape of our own (emulator times on a
# loaded machine have outliers that make any average noisy): rank r costs 1 + r/10
python3 - "$tmp/b.journal" "$tmp/lin.journal" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
rows.sort(key=lambda r: r["config"])
with open(sys.argv[2], "w") as f:
    for i, r in enumerate(rows):
        r["time_ms"] = 1 + ((i * 7) % len(rows)) / 10
        f.write(json.dumps(r) + "\n")
PY
out=$("$h" tune "$cfg" --replay "$tmp/lin.journal" --case 0 --compare-strategies --budget 8 --repeats 1000 --out "$tmp/c" 2>&1)
[ $? = 0 ] || fail "--compare-strategies failed: $out"
python3 - "$tmp/c.strategies.csv" <<'PY' || fail "the strategy comparison is wrong: $out"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
units = {r["unit"] for r in rows}
assert units == {"case 0"}, units
rnd = [r for r in rows if r["strategy"] == "random"]
# random search scores about 0 against its own calculated expectation
for r in rnd:
    assert abs(float(r["score"])) < 0.05, r
    assert 1.0 <= float(r["final_over_optimum"]) < 1.2, r
for r in rows:
    assert int(r["runs"]) == 1000 and int(r["budget"]) == 8, r
    assert float(r["score"]) <= 1.0 + 1e-9, r
PY
case "$out" in *"random (calc.)"*) ;; *) fail "no calculated random row: $out" ;; esac

finish
