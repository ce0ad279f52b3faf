#!/usr/bin/env bash
# test_hostile_tune.sh: what a hostile user did to the newest commands (tune,
# merge, train, run's newer options) and what it used to cost, on the emulator:
#   - a journal whose last line a kill cut short: the next tune's first
#     evaluation was appended onto the fragment and lost with it;
#   - a CSV or a binary file given as --journal had journal lines appended to
#     it; given to --replay or merge, it was "0 evaluations" (exit 1 or 0);
#   - tune's <out>.csv of another config (other columns) was appended to, and a
#     last row cut short had the next row joined onto it;
#   - a shard's CSV row cut short merged as a complete row (exit 0); cut inside
#     a quoted field, it made the file unreadable to merge and run --resume;
#   - a shard sidecar claiming 2e9 shards hung merge (and its memory); a merge
#     into ./s0.csv with s0.csv among its shards replaced that shard;
#   - /dev/zero as a config or journal was read until the memory ran out;
#   - --kernel-timeout 1e10 timed every launch out at once; inf was taken by
#     every number option (--lr inf trained to NaN; --min-time inf was refused
#     only after the results file and its unfinished marker were made);
#   - a restriction naming every tunable of a 6.9e10 space built it for hours;
#   - train --emu-threads 100000 died of an abort (out of memory); run with it
#     (a worker that cannot start) left a header-only file and its unfinished
#     marker, so the next run was refused without --force;
#   - tuning.budget 2.5 was rounded to 2 in silence; --repeats 0 ran 100 and
#     --repeats without --compare-strategies, --with-best or --journal with
#     --replay were ignored; --compare-strategies failed (exit 1) after its
#     work when --out's folder did not exist;
#   - a tune shard with no case (more shards than cases) was exit 2 and wrote
#     no journal, so the merge of the shards could never be complete;
#   - train --save to a folder trained, then lost the weights (exit 1);
#   - a training layer's kernel calling abort() (built for the host, #ifdef
#     HN_EMU) killed harness train, which runs kernels in its own process;
#   - --report to a folder was found unwritable only once a row had findings
#     (and the summary still said the report went there); without --sanitize
#     it was ignored in silence.
# Each is now exit 2 with the file and what is wrong, or a result kept.
. "$(dirname "$0")/lib.sh"

expect_cmd=(timeout 60) # every expect'ed command, stopped after a minute
expect_show=400

# the tune_small config with absolute paths (and a copy with one more axis)
python3 - "$root" "$tmp" <<'PY'
import json, sys
root, tmp = sys.argv[1], sys.argv[2]
c = json.load(open(root + "/tests/configs/tune_small.json"))
c["variants"][0]["file"] = root + "/tests/kernels/tune/unroll_tuned.cu"
json.dump(c, open(tmp + "/t.json", "w"))
c["axes"]["extra"] = [1]
json.dump(c, open(tmp + "/t2.json", "w"))
c = json.load(open(tmp + "/t.json"))
c["tuning"]["budget"] = 2.5
json.dump(c, open(tmp + "/budget.json", "w"))
c = json.load(open(tmp + "/t.json"))
c["variants"][0]["tune"] = {k: {"range": [1, 4096, 1]} for k in ("BLOCK", "ITEMS", "ORDER")}
c["variants"][0]["restrict"] = ["BLOCK * ITEMS * ORDER == 7"]
json.dump(c, open(tmp + "/huge.json", "w"))
PY
tune_cmd=("$h" tune "$tmp/t.json" --backend emu --quick --case 0)
tune() { "${tune_cmd[@]}" "$@"; }
# bad_lines FILE: how many lines of FILE are not JSON
bad_lines() {
  python3 - "$1" <<'PY'
import json, sys
bad = 0
for line in open(sys.argv[1]):
    try:
        json.loads(line)
    except ValueError:
        bad += 1
print(bad)
PY
}

echo "== a journal cut mid-line: the next evaluations are kept"
tune --budget 2 --out "$tmp/a" >"$tmp/a.out" 2>&1 || fail "first tune: $(tail -3 "$tmp/a.out")"
head -c $(($(stat -c %s "$tmp/a.journal") - 40)) "$tmp/a.journal" >"$tmp/cut.journal"
tune --budget 3 --out "$tmp/a" --journal "$tmp/cut.journal" >"$tmp/b.out" 2>&1 || fail "tune on a cut journal: $(tail -3 "$tmp/b.out")"
grep -q "cut.journal: 1 incomplete line(s) skipped" "$tmp/b.out" || fail "cut journal: $(grep -i journal "$tmp/b.out")"
[ "$(bad_lines "$tmp/cut.journal")" = 1 ] || fail "the fragment swallowed an evaluation: $(bad_lines "$tmp/cut.journal") bad lines"
tune --budget 3 --out "$tmp/a" --journal "$tmp/cut.journal" >"$tmp/c.out" 2>&1 || fail "third tune: $(tail -3 "$tmp/c.out")"
grep -q "^evaluations: 0 measured" "$tmp/c.out" || fail "an evaluation was lost: $(grep '^evaluations' "$tmp/c.out")"

echo "== files that are not journals"
printf 'a,b\n1,2\n' >"$tmp/not.csv"
cp "$tmp/not.csv" "$tmp/not.bak"
expect 2 "not.csv: not a tuning journal" "${tune_cmd[@]}" --budget 2 --out "$tmp/n" --journal "$tmp/not.csv"
cmp -s "$tmp/not.csv" "$tmp/not.bak" || fail "--journal appended to a CSV"
head -c 3000 /dev/urandom >"$tmp/bin.journal"
expect 2 "bin.journal: not a tuning journal" "$h" tune "$tmp/t.json" --replay "$tmp/bin.journal" --budget 3
expect 2 "/dev/zero: not a regular file" "$h" tune "$tmp/t.json" --replay /dev/zero --budget 3
expect 2 "/dev/zero: not a regular file" "$h" list /dev/zero
expect 2 "$tmp: is a folder, not a file" "$h" list "$tmp"

echo "== tune's CSV: another config's columns are left alone; a cut row is ended"
cp "$tmp/a.csv" "$tmp/a.csv.bak"
expect 2 "a.csv: its header is not that of these results" \
  "$h" tune "$tmp/t2.json" --backend emu --quick --case 0 --budget 2 --out "$tmp/a"
cmp -s "$tmp/a.csv" "$tmp/a.csv.bak" || fail "rows of other columns were appended"
head -c -50 "$tmp/a.csv.bak" >"$tmp/a.csv"
tune --budget 3 --out "$tmp/a" >/dev/null 2>&1 || fail "tune after a cut CSV row"
python3 - "$tmp/a.csv" <<'PY' || fail "a row was joined onto the cut one"
import csv, sys
rows = list(csv.reader(open(sys.argv[1])))
n = len(rows[0])
odd = [len(r) for r in rows[1:] if len(r) != n]
assert len(odd) == 1 and odd[0] < n, (n, [len(r) for r in rows])
PY

echo "== numbers"
expect 2 "budget.json: tuning.budget: 2.5: expected a whole number" "$h" tune "$tmp/budget.json" --space-only
expect 2 "huge.json: variants[0].restrict: more than 2e+07 restriction evaluations" \
  "$h" tune "$tmp/huge.json" --space-only --case 0
expect 2 "--kernel-timeout: 'inf' is not a finite number" "${tune_cmd[@]}" --kernel-timeout inf --budget 1 --out "$tmp/k"
expect 2 "--lr: 'inf' is not a finite number" "$h" train xor --lr inf
expect 2 "--emu-threads 100000: at most 4096" "$h" train xor --backend emu --epochs 1 --emu-threads 100000 --out "$tmp/et.csv"
csv="$tmp/et2.csv"
for i in 1 2; do # the second is not refused for an unfinished run the first left
  expect 2 "--emu-threads 100000: at most 4096" "$h" run "$root/tests/configs/hostile.json" --backend emu \
    --variant conv_ok --case 0 --emu-threads 100000 --out "$csv"
done
[ -e "$csv" ] || [ -e "$csv.unfinished" ] && fail "a run whose worker could not start left $(ls "$tmp" | grep et2)"
csv="$tmp/mt.csv"
expect 2 "--min-time: 'inf' is not a finite number" \
  "$h" run "$root/tests/configs/hostile.json" --backend emu --variant conv_ok --case 0 --min-time inf --out "$csv"
[ -e "$csv" ] || [ -e "$csv.unfinished" ] && fail "a refused run left $(ls "$tmp" | grep mt.csv)"
expect 0 "1 rows written" "$h" run "$root/tests/configs/hostile.json" --backend emu --variant conv_ok --case 0 \
  --kernel-timeout 1e10 --out "$tmp/kt.csv"

echo "== --report: a folder is refused before anything runs; without --sanitize it is an error"
expect 2 "--report: $tmp: cannot append: Is a directory" \
  "$h" check "$root/tests/configs/hostile.json" --variant conv_ok --case 0 --report "$tmp" --out "$tmp/ck.csv"
[ -e "$tmp/ck.csv" ] && fail "check ran with an unwritable --report"
expect 2 "needs --sanitize" "$h" run "$root/tests/configs/hostile.json" --backend emu --variant conv_ok --case 0 \
  --report "$tmp/rep.txt" --out "$tmp/rep.csv"
expect 2 "needs --sanitize" "$h" debug "$root/tests/configs/hostile.json" --kernel conv_ok --report "$tmp/rep.txt"

echo "== run --resume after a kill cut a row inside a quoted field"
csv="$tmp/r.csv"
"$h" run "$root/tests/configs/hostile.json" --backend emu --variant conv_ok --out "$csv" >/dev/null 2>&1 || fail "run"
python3 - "$csv" <<'PY'
import sys
lines = open(sys.argv[1]).read().rstrip("\n").split("\n")
last = lines[-1]
open(sys.argv[1], "w").write("\n".join(lines[:-1]) + "\n" + last[:last.index('"') + 3])
PY
touch "$csv.unfinished"
expect 0 "resume: 2 rows of $csv kept" "$h" run "$root/tests/configs/hostile.json" --backend emu --variant conv_ok \
  --out "$csv" --resume
[ "$(grep -c ',conv_ok,.*,ok,' "$csv")" = 3 ] || fail "resume after a cut quoted field: $(cat "$csv")"

echo "== merge: a row cut short, a sidecar of 2e9 shards, a binary journal"
cfg="$root/tests/configs/scale_small.json"
for i in 0 1; do
  "$h" run "$cfg" --backend emu --quick --variant conv2d_pad_z_out --shard $i/2 --out "$tmp/s$i.csv" \
    >"$tmp/s$i.out" 2>&1 || fail "shard $i: $(tail -3 "$tmp/s$i.out")"
done
head -c $(($(stat -c %s "$tmp/s0.csv") - 100)) "$tmp/s0.csv" >"$tmp/cut.csv"
cp "$tmp/s0.meta.json" "$tmp/cut.meta.json"
expect 1 "cut.csv: row " "$h" merge "$tmp/m.csv" "$tmp/cut.csv" "$tmp/s1.csv"
expect 1 "is cut short" "$h" merge "$tmp/m.csv" "$tmp/cut.csv" "$tmp/s1.csv"
python3 - "$tmp/s0.csv" "$tmp/cutq.csv" <<'PY'
import sys
lines = open(sys.argv[1]).read().rstrip("\n").split("\n")
last = lines[-1]
open(sys.argv[2], "w").write("\n".join(lines[:-1]) + "\n" + last[:last.index('"') + 3])
PY
cp "$tmp/s0.meta.json" "$tmp/cutq.meta.json"
expect 1 "cutq.csv: its last row is cut short" "$h" merge "$tmp/m.csv" "$tmp/cutq.csv" "$tmp/s1.csv"
expect 0 "merged 2 shard files of 2" "$h" merge "$tmp/m.csv" "$tmp/s0.csv" "$tmp/s1.csv"
cp "$tmp/s0.meta.json" "$tmp/s0.meta.bak"
expect 2 "is both the output and a shard" "$h" merge "$tmp/./s0.csv" "$tmp/s0.csv" "$tmp/s1.csv"
cmp -s "$tmp/s0.meta.json" "$tmp/s0.meta.bak" || fail "a merge into ./s0.csv replaced shard 0's sidecar"
cp "$tmp/s0.csv" "$tmp/big.csv"
python3 - "$tmp/s0.meta.json" "$tmp/big.meta.json" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
m["shard"]["count"] = 2000000000
json.dump(m, open(sys.argv[2], "w"))
PY
expect 2 "big.meta.json: not a shard's description" "$h" merge "$tmp/m2.csv" "$tmp/big.csv"
tune --budget 1 --shard 0/2 --out "$tmp/j0" >/dev/null 2>&1 || fail "tune shard"
cp "$tmp/j0.meta.json" "$tmp/bin.meta.json"
expect 2 "bin.journal: not a tuning journal" "$h" merge "$tmp/m.journal" "$tmp/j0.journal" "$tmp/bin.journal"
[ -e "$tmp/m.journal" ] && fail "a refused journal merge wrote its output"

echo "== a tune shard with no case: done (exit 0), so the merge of all shards is complete"
for i in 0 1 2; do # --case 0: one case, in shard 0
  tune --budget 1 --shard $i/3 --out "$tmp/e$i" >"$tmp/e$i.out" 2>&1 || fail "tune shard $i/3: $(tail -3 "$tmp/e$i.out")"
done
grep -q "shard 2/3: no case to tune" "$tmp/e2.out" || fail "empty shard: $(cat "$tmp/e2.out")"
expect 0 "merged 3 journals of 3 shards" "$h" merge "$tmp/e.journal" "$tmp"/e{0,1,2}.journal

echo "== --with-best files checked before the tune, not after it"
echo '{"not": "a best.json"}' >"$tmp/notbest.json"
expect 2 "--with-best $tmp/notbest.json: not a best.json written by harness tune" \
  "${tune_cmd[@]}" --budget 1 --out "$tmp/wb" --with-best "$tmp/notbest.json"
[ -e "$tmp/wb.journal" ] && fail "--with-best refused only after the tune ran (a journal was written)"

echo "== --compare-strategies and --replay: options that did nothing, a new --out folder"
fix="$root/results/emu/2026-11-30/tune_small.journal"
expect 2 "--repeats 0: expected 1 to 100000" "$h" tune "$tmp/t.json" --replay "$fix" --compare-strategies --repeats 0
expect 2 "--repeats is the number of runs of --compare-strategies" "$h" tune "$tmp/t.json" --replay "$fix" --repeats 5
expect 2 "--with-best: --replay evaluates from a recorded journal" \
  "$h" tune "$tmp/t.json" --replay "$fix" --with-best "$tmp/x.best.json"
expect 0 "per unit: $tmp/new/c.strategies.csv" \
  "$h" tune "$tmp/t.json" --replay "$fix" --compare-strategies --repeats 2 --budget 3 --out "$tmp/new/c"

echo "== train: a layer's kernel that calls abort() fails the launch, not the process"
mkdir -p "$tmp/tk/a/b"
ln -s "$root/kernels" "$tmp/tk/kernels" # the config's ../../kernels
cat >"$tmp/tk/abort.cu" <<'CU'
#include <stdlib.h>
__global__ void linear_tiled(const float *x, const float *w, const float *b, float *y, int batch, int in_f, int out_f) {
#ifdef HN_EMU
    abort();
#endif
}
CU
python3 - "$root/configs/train/default.json" "$tmp/tk/a/b/abort.json" "$tmp/tk/abort.cu" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
c["layers"]["linear"]["forward"]["file"] = sys.argv[3]
json.dump(c, open(sys.argv[2], "w"))
PY
expect 2 "SIGABRT (abort() called) at abort.cu:4" \
  "$h" train xor --backend emu --epochs 1 --kernels "$tmp/tk/a/b/abort.json" --out "$tmp/tk.csv"

echo "== train --save to a folder: refused before training"
expect 2 "--save $tmp: is a folder" "$h" train xor --epochs 2 --save "$tmp" --out "$tmp/xor.csv"
[ -e "$tmp/xor.csv" ] && fail "train trained although --save could not be written"

finish
