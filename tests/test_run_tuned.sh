#!/usr/bin/env bash
# test_run_tuned.sh: `harness run CONFIG --tuned BEST.json` on the emulator. A
# tiny tune (brute force over BLOCK x ITEMS of tests/kernels/tune/unroll_tuned.cu,
# two cases), then a sweep of other cases run with its result as the variant
# unroll_tuned@tuned: one row per case, with the configuration tuned for that
# case (same operator parameters) or the nearest tuned case's, said in the
# "tuned" column, the defines in their columns, every row ok; a tune across
# cases as a second --tuned (unroll_tuned@tuned2, "across cases"); --variant
# NAME@tuned; harness list and compile; --resume keeps the tuned rows. And the refusals
# (exit 2 naming the file): not JSON, not a tune's output, another operator, a
# kernel file that is not there, a tuned define named as one of the sweep's axes.
. "$(dirname "$0")/lib.sh"

K="$root/tests/kernels/tune/unroll_tuned.cu"
GRID='"ceil_div(in_ch * filter_size * filter_size * (h - filter_size + 1) * (w - filter_size + 1), BLOCK * ITEMS)"'
ARGS='"in", "cols", "in_ch", "h", "w", "filter_size", "int: h - filter_size + 1", "int: w - filter_size + 1"'
cat >"$tmp/tune.json" <<JSON
{"name": "tuned_tune", "op": "im2col",
 "axes": {"in_ch": [2, 3], "filter_size": 3, "img_size": 12},
 "check": {"atol": 0, "rtol": 0, "min_match": 1.0},
 "variants": [{"file": "$K", "kernel": "unroll_tuned",
   "tune": {"BLOCK": [32, 64], "ITEMS": [1, 2]}, "defines": {"ORDER": [0, 1]},
   "block": ["BLOCK"], "grid": [$GRID], "args": [$ARGS]}]}
JSON
# the sweep: its own variant, and cases the tune did not see (in_ch 1, img_size 13)
cat >"$tmp/sweep.json" <<JSON
{"name": "tuned_sweep", "op": "im2col",
 "axes": {"in_ch": [1, 2, 3], "filter_size": 3, "img_size": [12, 13]},
 "check": {"atol": 0, "rtol": 0, "min_match": 1.0},
 "variants": [{"file": "$K", "kernel": "unroll_tuned", "defines": {"BLOCK": 128, "ITEMS": 1, "ORDER": 0},
   "block": ["BLOCK"], "grid": [$GRID], "args": [$ARGS]}]}
JSON
cd "$tmp" || exit 1

echo "== a tiny tune"
expect 0 "best configurations" "$h" tune tune.json --backend emu --quick --strategy brute_force --budget 100% \
  --out "$tmp/t/t.csv"
[ -f t/t.csv.best.json ] || fail "no best.json"
# two cases with two different configurations (the tune's own winners may
# coincide), and the same per case as a tune across cases of one of them
python3 - <<'PY' || fail "could not make the best.json variants"
import json
b = json.load(open("t/t.csv.best.json"))
assert b["mode"] == "per case" and len(b["results"]) == 2, b
b["results"][0]["defines"] = "BLOCK=64,ITEMS=2"
b["results"][1]["defines"] = "BLOCK=32,ITEMS=1"
json.dump(b, open("per_case.json", "w"))
b["mode"] = "across cases"
b["results"] = [{"unit": "all cases", "defines": "BLOCK=32,ITEMS=2"}]
json.dump(b, open("across.json", "w"))
PY

echo "== run --tuned (per case) --tuned (across cases)"
expect 0 "x 2 variants = 12 rows" "$h" run sweep.json --backend emu --quick --tuned t/t.csv.best.json \
  --out r0.csv --quiet
expect 0 "x 3 variants = 18 rows" "$h" run sweep.json --backend emu --quick --tuned per_case.json \
  --tuned across.json --out r.csv --quiet
case "$out" in *"unroll_tuned@tuned "*"unroll_tuned@tuned2 "*) ;; *) fail "summary lacks the tuned variants: $out" ;; esac
python3 - r.csv r0.csv t/t.csv.best.json <<'PY' || fail "run --tuned rows"
import csv, json, sys
rows = list(csv.DictReader(open(sys.argv[1], newline="")))
bad = []
want = {  # in_ch, img_size -> (BLOCK, ITEMS, note) of per_case.json
    ("1", "12"): ("64", "2", "nearest tuned case in_ch=2,filter_size=3,img_size=12 (per_case.json)"),
    ("1", "13"): ("64", "2", "nearest tuned case in_ch=2,filter_size=3,img_size=12 (per_case.json)"),
    ("2", "12"): ("64", "2", "this case (per_case.json)"),
    ("2", "13"): ("64", "2", "nearest tuned case in_ch=2,filter_size=3,img_size=12 (per_case.json)"),
    ("3", "12"): ("32", "1", "this case (per_case.json)"),
    ("3", "13"): ("32", "1", "nearest tuned case in_ch=3,filter_size=3,img_size=12 (per_case.json)"),
}
if len(rows) != 18: bad.append(f"{len(rows)} rows, expected 18")
for r in rows:
    key = (r["in_ch"], r["img_size"])
    got = (r["BLOCK"], r["ITEMS"], r["tuned"])
    if r["status"] != "ok": bad.append(f"{r['variant']} {key}: {r['status']} {r['reason']}")
    if r["ORDER"] != "0": bad.append(f"{r['variant']} {key}: ORDER={r['ORDER']} (the tune's variant_label has 0)")
    if r["variant"] == "unroll_tuned@tuned" and got != want[key]: bad.append(f"tuned {key}: {got}, expected {want[key]}")
    if r["variant"] == "unroll_tuned@tuned2" and got != ("32", "2", "across cases (across.json)"):
        bad.append(f"tuned2 {key}: {got}")
    if r["variant"] == "unroll_tuned" and got != ("128", "1", ""): bad.append(f"own {key}: {got}")
for v in ("unroll_tuned", "unroll_tuned@tuned", "unroll_tuned@tuned2"):
    n = sum(r["variant"] == v for r in rows)
    if n != 6: bad.append(f"{v}: {n} rows, expected one per case (6)")
# the real tune's result: each case with the defines of its tuned case
best = {tuple(x["case_values"].split(",")[0::2]): x["defines"] for x in json.load(open(sys.argv[3]))["results"]}
for r in csv.DictReader(open(sys.argv[2], newline="")):
    if r["variant"] != "unroll_tuned@tuned" or r["img_size"] != "12" or r["in_ch"] == "1": continue
    d = best[(f"in_ch={r['in_ch']}", "img_size=12")]
    if f"BLOCK={r['BLOCK']},ITEMS={r['ITEMS']}" != d or r["status"] != "ok" or not r["tuned"].startswith("this case"):
        bad.append(f"real tune, in_ch {r['in_ch']}: BLOCK={r['BLOCK']},ITEMS={r['ITEMS']} {r['status']} {r['tuned']!r}, tuned {d}")
print("\n".join(bad))
sys.exit(1 if bad else 0)
PY

echo "== --variant NAME@tuned, --resume, list"
expect 0 "x 1 variants = 6 rows" "$h" run sweep.json --backend emu --quick --tuned per_case.json \
  --variant unroll_tuned@tuned --out v.csv --quiet
n=$(grep -c "unroll_tuned@tuned" v.csv)
[ "$n" = 6 ] || fail "--variant unroll_tuned@tuned: $n rows, expected 6"
expect 0 "resume: 18 rows of r.csv kept" "$h" run sweep.json --backend emu --quick --tuned per_case.json \
  --tuned across.json --out r.csv --resume
expect 0 "case 4: this case (per_case.json)" "$h" list sweep.json --tuned per_case.json
case "$out" in *"x 2 variants = 12 rows"*"defines: ORDER=0 BLOCK=64 ITEMS=2"*"defines: ORDER=0 BLOCK=32 ITEMS=1"*) ;;
  *) fail "list --tuned: $out" ;; esac

expect 0 "unroll_tuned@tuned[BLOCK=32,ITEMS=1]" "$h" compile sweep.json --backend emu --tuned per_case.json
case "$out" in *"unroll_tuned@tuned[BLOCK=64,ITEMS=2]"*) ;; *) fail "compile --tuned: $out" ;; esac

# from another folder: the tuned config ("tune.json", as the tune was given it) is
# found from the best.json's folder's parent
(cd t && "$h" list ../sweep.json --tuned t.csv.best.json >../elsewhere.out 2>&1) ||
  fail "list --tuned from another folder: $(tail -3 elsewhere.out)"
grep -q "tuned (t.csv.best.json), runs:" elsewhere.out || fail "list --tuned from another folder: $(tail -3 elsewhere.out)"

echo "== refusals"
printf '{"kernel":' >notjson.json
expect 2 "--tuned notjson.json: not JSON" "$h" run sweep.json --backend emu --tuned notjson.json --out e.csv
printf '{"results": []}' >nokernel.json
expect 2 "--tuned nokernel.json: not a best.json written by harness tune" "$h" run sweep.json --backend emu \
  --tuned nokernel.json --out e.csv
python3 - "$root" <<'PY' || fail "could not make the bad best.json files"
import json, sys
b = json.load(open("per_case.json"))
o = dict(b, config=sys.argv[1] + "/configs/relu_sweep.json", variant="relu_grid_stride", kernel="relu_grid_stride")
json.dump(o, open("other_op.json", "w"))
t = json.load(open("tune.json"))
t["variants"][0]["file"] = "no_such_kernel.cu"
json.dump(t, open("tune_gone.json", "w"))
json.dump(dict(b, config="tune_gone.json"), open("gone.json", "w"))
json.dump(dict(b, config="nowhere.json"), open("noconfig.json", "w"))
json.dump(dict(b, variant="renamed"), open("novariant.json", "w"))
for r in b["results"]: r.pop("defines")
json.dump(b, open("none.json", "w"))
PY
expect 2 "--tuned other_op.json: a tune of operator 'relu'" "$h" run sweep.json --backend emu --tuned other_op.json \
  --out e.csv
expect 2 "--tuned gone.json: the config it tuned: tune_gone.json: variants[0].file: file 'no_such_kernel.cu' not found" \
  "$h" run sweep.json --backend emu --tuned gone.json --out e.csv
expect 2 "--tuned noconfig.json: the config it tuned, nowhere.json, is not found" "$h" run sweep.json \
  --backend emu --tuned noconfig.json --out e.csv
expect 2 "--tuned novariant.json: tune.json has no variant 'renamed'" "$h" run sweep.json --backend emu \
  --tuned novariant.json --out e.csv
expect 2 "--tuned none.json: no result has a configuration" "$h" run sweep.json --backend emu --tuned none.json \
  --out e.csv
# a tuned define that is an axis of the sweep
sed -e 's/"img_size": \[12, 13\]}/"img_size": [12, 13], "ITEMS": [1]}/' \
    -e 's|"kernel": "unroll_tuned", "defines": {"BLOCK": 128, "ITEMS": 1, "ORDER": 0}|"kernel": "unroll_tuned", "defines": {"BLOCK": 128, "ORDER": 0}, "options": ["-DITEMS=1"]|' \
    sweep.json >clash.json
expect 2 "--tuned per_case.json: its variant, added to clash.json as variants[1] 'unroll_tuned@tuned', does not fit there: clash.json: variants[1].tune.ITEMS: tunable 'ITEMS' has the name of an axis" \
  "$h" list clash.json --tuned per_case.json
expect 2 "--tuned per_case.json: given twice" "$h" run sweep.json --tuned per_case.json --tuned per_case.json --out e.csv
expect 2 "--tuned and --shard" "$h" run sweep.json --tuned per_case.json --shard 0/2 --out e.csv
[ ! -e e.csv ] || fail "a refused run left e.csv"

finish
