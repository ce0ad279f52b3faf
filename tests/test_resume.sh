#!/usr/bin/env bash
# test_resume.sh: what `harness run --resume` keeps and what it runs again
# (tests/configs/run_options.json on the emulator): rows of this plan with the
# same kernel source, device and case are kept as they are; a row of another
# kernel source, an unknown status, a case the plan lacks or a duplicate is
# dropped (and counted) and its row runs again; a file with other columns is
# refused (exit 2) and left alone; --force starts an unfinished file over.
. "$(dirname "$0")/lib.sh"
cfg="$root/tests/configs/run_options.json"
out="$tmp/r.csv"
run() { "$h" run "$cfg" --backend emu --variant conv_plain --all --min-samples 2 --max-samples 2 --out "$out" "$@"; }
# rows: "case:status:median" per row, in file order
rows() { python3 -c '
import csv, sys
print(" ".join(r["case"] + ":" + r["status"] for r in csv.DictReader(open(sys.argv[1], newline=""))))' "$1"; }

run >/dev/null 2>&1 || fail "first run failed"
[ "$(rows "$out")" = "0:ok 1:ok 2:ok 3:ok 4:ok 5:ok 6:ok 7:ok" ] || fail "first run: $(rows "$out")"
cp "$out" "$tmp/orig.csv"

# Tamper: case 1 from another kernel source, case 2 with an unknown status, a row
# for case 99, a duplicate of case 3; cases 5-7 missing (an interrupted run).
python3 - "$out" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1], newline="")))
fields = list(rows[0].keys())
rows[1]["compile_key"] = "0" * 32
rows[2]["status"] = "weird"
extra = dict(rows[0]); extra["case"] = "99"
dup = dict(rows[3]); dup["time_median_ms"] = "12345"
rows = rows[:5] + [extra, dup]
w = csv.DictWriter(open(sys.argv[1], "w", newline=""), fieldnames=fields)
w.writeheader(); w.writerows(rows)
PY
: >"$out.unfinished"
run >"$tmp/refused.out" 2>&1
[ $? = 2 ] || fail "an unfinished file was overwritten without --resume or --force"
run --resume >"$tmp/resume.out" 2>&1 || fail "--resume failed: $(tail -5 "$tmp/resume.out")"
grep -q "^resume: 3 rows of $out kept, 4 dropped (another case, variant, kernel source, device, or a duplicate)" "$tmp/resume.out" ||
  fail "resume message: $(grep resume "$tmp/resume.out")"
# Kept rows stay byte for byte; the dropped ones ran again; one row per case.
[ "$(rows "$out")" = "0:ok 3:ok 4:ok 1:ok 2:ok 5:ok 6:ok 7:ok" ] || fail "after resume: $(rows "$out")"
python3 - "$tmp/orig.csv" "$out" <<'PY' || fail "kept rows changed, or the duplicate's median was kept"
import csv, sys
orig = {r["case"]: r for r in csv.DictReader(open(sys.argv[1], newline=""))}
now = {r["case"]: r for r in csv.DictReader(open(sys.argv[2], newline=""))}
assert now["0"] == orig["0"] and now["3"] == orig["3"] and now["4"] == orig["4"]
assert now["1"]["compile_key"] == orig["1"]["compile_key"]
assert now["3"]["time_median_ms"] != "12345"
PY
[ ! -e "$out.unfinished" ] || fail "the finished run left its .unfinished marker"

# A file with other columns is refused and left as it is.
printf 'case,variant,status\n0,conv_plain,ok\n' >"$tmp/other.csv"
: >"$tmp/other.csv.unfinished"
o=$("$h" run "$cfg" --backend emu --variant conv_plain --case 0 --out "$tmp/other.csv" --resume 2>&1)
[ $? = 2 ] || fail "--resume of a file with other columns: not exit 2: $o"
case "$o" in *"has other columns than"*"--force starts it over"*) ;; *) fail "other columns: $o" ;; esac
[ "$(cat "$tmp/other.csv")" = "$(printf 'case,variant,status\n0,conv_plain,ok')" ] || fail "the refused file changed"
# --force starts it over.
"$h" run "$cfg" --backend emu --variant conv_plain --case 0 --out "$tmp/other.csv" --force >/dev/null 2>&1 || fail "--force failed"
[ "$(rows "$tmp/other.csv")" = "0:ok" ] || fail "--force: $(rows "$tmp/other.csv")"
# --resume without a file runs everything.
"$h" run "$cfg" --backend emu --variant conv_plain --case 0 --out "$tmp/new.csv" --resume >/dev/null 2>&1 || fail "--resume of nothing failed"
[ "$(rows "$tmp/new.csv")" = "0:ok" ] || fail "--resume of nothing: $(rows "$tmp/new.csv")"

finish
