#!/usr/bin/env bash
# test_interrupt.sh: Ctrl-C and SIGTERM for harness tune and harness train, on
# the emulator (harness run's are in test_hostile_run.sh). Before, both died at
# once: the tune's journal was intact but no summary came, and a training run
# lost its weights.
#   - tune, SIGINT once its journal has rows: exit 130, the summary with the best
#     so far marked "interrupted", how to resume; every journal line is JSON and
#     the CSV has a row per evaluation; the same command again finishes it,
#     measuring nothing twice, with the same search evaluations as a tune never
#     interrupted (the random strategy's path depends only on the seed);
#   - tune, two SIGINTs: exit 130, promptly, the journal valid, no worker left;
#     SIGTERM: exit 143, the evaluation in flight dropped, not journaled;
#   - train xor, SIGINT: exit 130, "Interrupted at", the time per layer, the
#     curve's rows, --save's weights, which --load takes; two SIGINTs end it
#     promptly; SIGTERM: exit 143; train mnist (where Fashion-MNIST is
#     installed): the same after a few steps, without a test pass.
# Every wait polls for the file or row it needs and is bounded.
. "$(dirname "$0")/lib.sh"
cfg="$root/tests/configs/tune_small.json"

# alive PID: running (a zombie waiting for `wait` is not)
alive() {
  local s
  s=$(cut -d' ' -f3 "/proc/$1/stat" 2>/dev/null) && [ "$s" != Z ]
}
# wait_exit PID SECONDS: PID's exit code; 124 (after killing it) when it runs on
wait_exit() {
  local pid=$1 n=$(($2 * 20))
  while alive "$pid" && [ "$n" -gt 0 ]; do
    sleep 0.05
    n=$((n - 1))
  done
  if alive "$pid"; then
    kill -9 "$pid"
    wait "$pid" 2>/dev/null
    return 124
  fi
  wait "$pid"
}
# wait_lines PID FILE N: until FILE has N lines (at most 60 s, or PID ended)
wait_lines() {
  local n=1200
  while [ "$n" -gt 0 ] && alive "$1"; do
    [ -s "$2" ] && [ "$(wc -l <"$2")" -ge "$3" ] && return 0
    sleep 0.05
    n=$((n - 1))
  done
  return 1
}
# journal_ok FILE: every line is a JSON object; prints "lines statuses"
journal_ok() {
  python3 - "$1" <<'PY'
import json, sys
st = set()
n = 0
for line in open(sys.argv[1]):
    st.add(json.loads(line)["status"])
    n += 1
print(n, ",".join(sorted(st)))
PY
}
# search_set FILE: the search evaluations, one "config case_values" a line, sorted
search_set() {
  python3 - "$1" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
for k in sorted(f'{r["config"]} {r["case_values"]}' for r in rows if r["phase"] == "search"):
    print(k)
PY
}

# --min-time: every evaluation takes 50 ms or more, so a signal sent once the
# journal has a row finds the tune still searching (without it the whole tune
# took 0.1 s and could end before the signal came)
tune=("$h" tune "$cfg" --backend emu --quick --strategy random --budget 10 --top 1 --seed 7 --min-time 0.05)

echo "== tune: the uninterrupted reference"
"${tune[@]}" --out "$tmp/ref" >"$tmp/ref.out" 2>&1 || fail "the reference tune failed: $(tail -5 "$tmp/ref.out")"
[ "$(search_set "$tmp/ref.journal" | wc -l)" = 20 ] || fail "the reference made $(search_set "$tmp/ref.journal" | wc -l) search evaluations, expected 20"

echo "== tune: SIGINT once the journal has rows, then the same command again"
"${tune[@]}" --out "$tmp/int" >"$tmp/int.out" 2>"$tmp/int.err" &
pid=$!
wait_lines "$pid" "$tmp/int.journal" 1 || fail "no journal row came (or the tune ended first)"
kill -INT "$pid"
wait_exit "$pid" 60
rc=$?
[ "$rc" = 130 ] || fail "tune SIGINT: exit $rc, expected 130: $(tail -5 "$tmp/int.out")"
grep -qE '^case 0 .*\(interrupted: best so far, not re-measured\)$|^case 0 .*interrupted before' "$tmp/int.out" ||
  fail "tune SIGINT: no interrupted summary line for case 0: $(cat "$tmp/int.out")"
grep -qE '^case 1 .*(interrupted|not tuned)' "$tmp/int.out" || fail "tune SIGINT: case 1 not in the summary"
grep -q 'run the same command again to resume' "$tmp/int.out" || fail "tune SIGINT: no resume hint"
grep -q 'stopping after the configurations being measured' "$tmp/int.err" || fail "tune SIGINT: no notice on stderr"
[ -e "$tmp/int.best.json" ] && fail "tune SIGINT: best.json written for an unfinished tune"
got=$(journal_ok "$tmp/int.journal") || fail "tune SIGINT: the journal does not parse"
before=${got%% *}
[ "$before" -ge 1 ] && [ "$before" -lt 22 ] || fail "tune SIGINT: $before journal lines (expected some, not all)"
[ "${got#* }" = ok ] || fail "tune SIGINT: journal statuses '${got#* }', expected only ok"
[ "$(($(wc -l <"$tmp/int.csv") - 1))" = "$before" ] || fail "tune SIGINT: the CSV's rows are not the journal's $before"
"${tune[@]}" --out "$tmp/int" >"$tmp/res.out" 2>&1 || fail "the resumed tune failed: $(tail -5 "$tmp/res.out")"
grep -q "measured (0 failed), $before from the journal" "$tmp/res.out" ||
  fail "the resumed tune did not take the $before evaluations from the journal: $(grep '^evaluations' "$tmp/res.out")"
python3 - "$tmp/int.journal" <<'PY' || fail "the resumed journal repeats an evaluation"
import json, sys
keys = [json.loads(l)["key"] for l in open(sys.argv[1])]
assert len(keys) == len(set(keys)) == 22, (len(keys), len(set(keys)))
PY
[ "$(search_set "$tmp/int.journal")" = "$(search_set "$tmp/ref.journal")" ] ||
  fail "interrupted and resumed, the tune evaluated another set than the uninterrupted one"
[ -s "$tmp/int.best.json" ] || fail "the resumed tune wrote no best.json"

echo "== tune: two SIGINTs stop at once, no worker left"
"${tune[@]}" --out "$tmp/two" >"$tmp/two.out" 2>&1 &
pid=$!
wait_lines "$pid" "$tmp/two.journal" 1 || fail "two SIGINTs: no journal row came"
workers=$(pgrep -P "$pid")
kill -INT "$pid"
kill -INT "$pid"
wait_exit "$pid" 20
rc=$?
[ "$rc" = 130 ] || fail "tune, two SIGINTs: exit $rc, expected 130: $(tail -5 "$tmp/two.out")"
got=$(journal_ok "$tmp/two.journal") || fail "two SIGINTs: the journal does not parse"
[ "${got#* }" = ok ] || fail "two SIGINTs: journal statuses '${got#* }', expected only ok"
for w in $workers; do
  n=40
  while alive "$w" && [ "$n" -gt 0 ]; do sleep 0.05; n=$((n - 1)); done
  alive "$w" && fail "two SIGINTs: worker $w outlived the tune"
done

echo "== tune: SIGTERM drops the evaluation in flight"
"${tune[@]}" --out "$tmp/term" >"$tmp/term.out" 2>"$tmp/term.err" &
pid=$!
wait_lines "$pid" "$tmp/term.journal" 1 || fail "SIGTERM: no journal row came"
kill -TERM "$pid"
wait_exit "$pid" 20
rc=$?
[ "$rc" = 143 ] || fail "tune SIGTERM: exit $rc, expected 143: $(tail -5 "$tmp/term.out")"
grep -q 'stopping now' "$tmp/term.err" || fail "tune SIGTERM: no 'stopping now' on stderr: $(cat "$tmp/term.err")"
grep -q 'run the same command again to resume' "$tmp/term.out" || fail "tune SIGTERM: no resume hint"
got=$(journal_ok "$tmp/term.journal") || fail "SIGTERM: the journal does not parse"
[ "${got#* }" = ok ] || fail "SIGTERM: journal statuses '${got#* }' (a dropped evaluation was journaled)"

echo "== train xor: SIGINT after the first curve rows"
xor=("$h" train xor --backend emu --epochs 1000000 --interval 20)
"${xor[@]}" --out "$tmp/x.csv" --save "$tmp/x.weights" >"$tmp/x.out" 2>&1 &
pid=$!
wait_lines "$pid" "$tmp/x.csv" 2 || fail "train: no curve row came"
kill -INT "$pid"
wait_exit "$pid" 30
rc=$?
[ "$rc" = 130 ] || fail "train SIGINT: exit $rc, expected 130: $(tail -5 "$tmp/x.out")"
grep -q '^Interrupted at epoch [0-9]*/1000000: training stopped after step [0-9]*' "$tmp/x.out" ||
  fail "train SIGINT: no 'Interrupted at' line: $(tail -5 "$tmp/x.out")"
grep -q '^Where the time went' "$tmp/x.out" && grep -q '^  Linear(16->1) ' "$tmp/x.out" ||
  fail "train SIGINT: no time per layer"
grep -q "^Weights: $tmp/x.weights" "$tmp/x.out" || fail "train SIGINT: the weights were not saved"
step=$(sed -n 's/.*training stopped after step \([0-9]*\).*/\1/p' "$tmp/x.out")
python3 - "$tmp/x.csv" "${step:-0}" <<'PY' || fail "train SIGINT: the curve is not whole, or lacks the last step"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert len(rows) >= 2 and all(len(r) == 8 and r["loss"] for r in rows), rows
assert rows[-1]["step"] == sys.argv[2], (rows[-1], sys.argv[2])
PY
out=$("$h" train xor --backend emu --epochs 1 --load "$tmp/x.weights" --out "$tmp/x2.csv" 2>&1)
[ $? = 0 ] || fail "--load of the interrupted run's weights failed: $out"

echo "== train xor: two SIGINTs end it promptly; SIGTERM"
"${xor[@]}" --out "$tmp/x3.csv" >"$tmp/x3.out" 2>&1 &
pid=$!
wait_lines "$pid" "$tmp/x3.csv" 2 || fail "train, two SIGINTs: no curve row came"
kill -INT "$pid"
kill -INT "$pid"
wait_exit "$pid" 20
rc=$?
[ "$rc" = 130 ] || fail "train, two SIGINTs: exit $rc, expected 130"
"${xor[@]}" --out "$tmp/x4.csv" >"$tmp/x4.out" 2>&1 &
pid=$!
wait_lines "$pid" "$tmp/x4.csv" 2 || fail "train SIGTERM: no curve row came"
kill -TERM "$pid"
wait_exit "$pid" 30
rc=$?
[ "$rc" = 143 ] || fail "train SIGTERM: exit $rc, expected 143"
grep -q '^Interrupted at epoch' "$tmp/x4.out" || fail "train SIGTERM: no 'Interrupted at' line"

data=${HARNESS_FASHION_MNIST:-/usr/share/datasets/fashion-mnist}
if [ -e "$data/train-images-idx3-ubyte.gz" ] || [ -e "$data/train-images-idx3-ubyte" ]; then
  echo "== train mnist: SIGINT after two steps"
  "$h" train mnist --backend emu --data "$data" --limit 1280 --test-limit 64 --epochs 2 --interval 1 \
    --kernels "$root/tests/configs/train_emu.json" --out "$tmp/m.csv" --save "$tmp/m.weights" >"$tmp/m.out" 2>&1 &
  pid=$!
  wait_lines "$pid" "$tmp/m.csv" 3 || fail "mnist: no curve rows came"
  kill -INT "$pid"
  wait_exit "$pid" 60
  rc=$?
  [ "$rc" = 130 ] || fail "mnist SIGINT: exit $rc, expected 130: $(tail -5 "$tmp/m.out")"
  grep -q '^Interrupted at epoch 1/2, step [0-9]*/20' "$tmp/m.out" || fail "mnist SIGINT: no 'Interrupted at' line"
  grep -q '^Test accuracy' "$tmp/m.out" && fail "mnist SIGINT: a test pass ran after the interrupt"
  grep -q '^  Conv2D(16->32, k3, p1) ' "$tmp/m.out" || fail "mnist SIGINT: no time per layer"
  out=$("$h" train mnist --backend emu --data "$data" --limit 64 --test-limit 64 --epochs 1 --load "$tmp/m.weights" \
    --kernels "$root/tests/configs/train_emu.json" --out "$tmp/m2.csv" 2>&1)
  [ $? = 0 ] || fail "--load of the interrupted CNN's weights failed: $out"
else
  echo "(no Fashion-MNIST in $data: the mnist case is left out)"
fi

finish
