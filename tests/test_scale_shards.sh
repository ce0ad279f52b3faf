#!/usr/bin/env bash
# test_scale_shards.sh: `harness run --shard I/N` and `harness merge` on the
# emulator:
#   - three shards hold every case once (the sidecars say so), and their merge
#     has the same rows, statuses and check results as the unsharded run, in plan
#     order, with a best.csv naming the same cases; merged exit 0;
#   - a shard left out: the merge lists its missing rows and exits 1; a shard
#     given twice: its rows count once;
#   - refused (exit 2, nothing written): shards of an edited config, of an
#     edited kernel, of another harness version, of another shard count, and a
#     CSV with no sidecar;
#   - --resume of a shard's file by another split (or unsharded) is refused and
#     leaves the file as it was; a fresh unsharded run drops a stale sidecar;
#   - tune shards: their journals merge into one with every evaluation once.
. "$(dirname "$0")/lib.sh"
. "$root/tests/scale_lib.sh"
# a copy of the config and its kernels, so they can be edited
mkdir -p "$tmp/cfg/tests/configs" "$tmp/cfg/tests/kernels" "$tmp/cfg/kernels"
cp "$root/tests/configs/scale_small.json" "$tmp/cfg/tests/configs/"
cp "$root/tests/kernels/conv2d_planted.cu" "$tmp/cfg/tests/kernels/"
cp -r "$root/kernels/conv2d" "$root/kernels/include" "$tmp/cfg/kernels/"
cfg="$tmp/cfg/tests/configs/scale_small.json"

echo "== unsharded, then 3 shards"
"$h" run "$cfg" --backend emu --out "$tmp/all.csv" >"$tmp/all.out" 2>&1
for i in 0 1 2; do
  "$h" run "$cfg" --backend emu --shard $i/3 --out "$tmp/s$i.csv" >"$tmp/s$i.out" 2>&1
  grep -q "^shard $i/3: [0-9]* of the 8 cases" "$tmp/s$i.out" || fail "shard $i: $(head -2 "$tmp/s$i.out")"
  [ -s "$tmp/s$i.meta.json" ] || fail "shard $i: no sidecar"
done
python3 - "$tmp"/s{0,1,2}.meta.json <<'PY' || fail "sidecars"
import json, sys
metas = [json.load(open(p)) for p in sys.argv[1:]]
split = metas[0]["case_shard"]
assert all(m["case_shard"] == split and m["finished"] for m in metas), "sidecars disagree or unfinished"
assert all(0 <= s < 3 for s in split) and len(split) == 8, split
assert {s for s in split} == {0, 1, 2}, split
PY
"$h" merge "$tmp/merged.csv" "$tmp"/s{0,1,2}.csv >"$tmp/merge.out" 2>&1
rc=$?
[ "$rc" = 0 ] || fail "merge: exit $rc: $(tail -5 "$tmp/merge.out")"
d=$(same_rows "$tmp/all.csv" "$tmp/merged.csv")
[ -z "$d" ] || fail "merged vs unsharded: $d"
o=$(in_plan_order "$tmp/merged.csv")
[ -z "$o" ] || fail "merged: $o"
[ "$(column "$tmp/merged.best.csv" case)" = "$(column "$tmp/all.best.csv" case)" ] || fail "best.csv cases differ"
grep -q "merged 3 shard files of 3: 24 rows" "$tmp/merge.out" || fail "merge summary: $(tail -2 "$tmp/merge.out")"

echo "== a shard missing, a shard twice"
"$h" merge "$tmp/part.csv" "$tmp/s0.csv" "$tmp/s2.csv" >"$tmp/part.out" 2>"$tmp/part.err"
rc=$?
[ "$rc" = 1 ] || fail "missing shard: exit $rc"
grep -q "shard 1/3 was not given; its rows are missing:" "$tmp/part.err" || fail "missing: $(cat "$tmp/part.err")"
n1=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["case_shard"].count(1) * 3)' "$tmp/s1.meta.json")
[ "$(grep -c '^  case [0-9]* ' "$tmp/part.err")" = "$n1" ] || fail "missing: expected $n1 rows listed: $(cat "$tmp/part.err")"
"$h" merge "$tmp/twice.csv" "$tmp"/s{0,1,2}.csv "$tmp/s1.csv" >"$tmp/twice.out" 2>&1
rc=$?
[ "$rc" = 0 ] || fail "shard twice: exit $rc"
grep -q "shard 1/3 is given more than once" "$tmp/twice.out" || fail "twice: $(cat "$tmp/twice.out")"
d=$(same_rows "$tmp/all.csv" "$tmp/twice.csv")
[ -z "$d" ] || fail "shard twice: $d"

echo "== refused"
refuse() { # NEEDLE SHARD...
  local needle=$1
  shift
  rm -f "$tmp/refused.csv"
  local o
  o=$("$h" merge "$tmp/refused.csv" "$@" 2>&1)
  local rc=$?
  [ "$rc" = 2 ] || fail "refuse '$needle': exit $rc: $o"
  case "$o" in *"$needle"*) ;; *) fail "refuse: expected \"$needle\" in: $o" ;; esac
  [ -e "$tmp/refused.csv" ] && fail "refuse '$needle': the output was written"
}
# another kernel source: shard 2 again after an edit of a kernel
sed -i 's/^__global__/\/\/ edited\n__global__/' "$tmp/cfg/tests/kernels/conv2d_planted.cu"
"$h" run "$cfg" --backend emu --shard 2/3 --out "$tmp/k2.csv" >/dev/null 2>&1
refuse "shards of different configs or kernel sources" "$tmp/s0.csv" "$tmp/s1.csv" "$tmp/k2.csv"
# ... and the old shards now that the kernel changed
refuse "changed since the shards ran" "$tmp"/s{0,1,2}.csv
cp "$root/tests/kernels/conv2d_planted.cu" "$tmp/cfg/tests/kernels/"
# another config
sed 's/"seed": 7/"seed": 7, "\/\/": "edited"/' "$cfg" >"$tmp/cfg/tests/configs/edited.json"
"$h" run "$tmp/cfg/tests/configs/edited.json" --backend emu --shard 2/3 --out "$tmp/c2.csv" >/dev/null 2>&1
refuse "shards of different configs or kernel sources" "$tmp/s0.csv" "$tmp/s1.csv" "$tmp/c2.csv"
# another harness version
cp "$tmp/s2.csv" "$tmp/v2.csv"
sed 's/"harness":"[^"]*"/"harness":"0.0.1-other"/' "$tmp/s2.meta.json" >"$tmp/v2.meta.json"
refuse "by harness 0.0.1-other" "$tmp/s0.csv" "$tmp/s1.csv" "$tmp/v2.csv"
# another split
"$h" run "$cfg" --backend emu --shard 1/2 --out "$tmp/h1.csv" >/dev/null 2>&1
refuse "is a shard of 3 and" "$tmp/s0.csv" "$tmp/h1.csv"
# no sidecar
cp "$tmp/all.csv" "$tmp/plain.csv"
refuse "has no" "$tmp/s0.csv" "$tmp/plain.csv"

echo "== --resume of a shard's file by another split is refused"
cp "$tmp/s0.csv" "$tmp/r0.csv"
cp "$tmp/s0.meta.json" "$tmp/r0.meta.json"
before=$(cksum <"$tmp/r0.csv")
o=$("$h" run "$cfg" --backend emu --shard 1/3 --resume --out "$tmp/r0.csv" 2>&1)
rc=$?
[ "$rc" = 2 ] || fail "resume as shard 1 of shard 0's file: exit $rc: $o"
case "$o" in *"holds the rows of --shard 0/3"*"not of --shard 1/3"*) ;; *) fail "resume other shard: $o" ;; esac
o=$("$h" run "$cfg" --backend emu --resume --out "$tmp/r0.csv" 2>&1)
[ $? = 2 ] || fail "resume without --shard of a shard's file: $o"
case "$o" in *"not of no --shard"*) ;; *) fail "resume unsharded: $o" ;; esac
[ "$(cksum <"$tmp/r0.csv")" = "$before" ] || fail "a refused resume changed the file"
# (exit 1, not 2: the planted kernel's rows are mismatches)
o=$("$h" run "$cfg" --backend emu --shard 0/3 --resume --out "$tmp/r0.csv" 2>&1)
[ $? = 1 ] || fail "resume of the same shard: $o"
case "$o" in *"rows of $tmp/r0.csv kept"*) ;; *) fail "same-shard resume kept nothing: $o" ;; esac
# a fresh unsharded run over the file drops the stale sidecar, so a later resume is not refused
"$h" run "$cfg" --backend emu --force --case 0 --out "$tmp/r0.csv" >/dev/null 2>&1
[ -e "$tmp/r0.meta.json" ] && fail "a fresh unsharded run left the shard's sidecar"
o=$("$h" run "$cfg" --backend emu --resume --case 0 --out "$tmp/r0.csv" 2>&1)
case "$o" in *"rows of $tmp/r0.csv kept"*) ;; *) fail "resume after the fresh unsharded run: $o" ;; esac

echo "== tune shards: journals"
tcfg="$root/tests/configs/tune_small.json"
"$h" tune "$tcfg" --backend emu --budget 4 --top 0 --out "$tmp/tu" >"$tmp/tu.out" 2>&1 || fail "tune: $(tail -3 "$tmp/tu.out")"
for i in 0 1; do
  "$h" tune "$tcfg" --backend emu --budget 4 --top 0 --shard $i/2 --out "$tmp/tu$i" >"$tmp/tu$i.out" 2>&1 ||
    fail "tune shard $i: $(tail -3 "$tmp/tu$i.out")"
done
"$h" merge "$tmp/tu.merged.journal" "$tmp/tu0.journal" "$tmp/tu1.journal" "$tmp/tu1.journal" >"$tmp/tum.out" 2>&1
rc=$?
[ "$rc" = 0 ] || fail "journal merge: exit $rc: $(cat "$tmp/tum.out")"
grep -q "8 evaluations into .*(4 given more than once, kept once)" "$tmp/tum.out" || fail "journal merge: $(cat "$tmp/tum.out")"
d=$(python3 - "$tmp/tu.journal" "$tmp/tu.merged.journal" <<'PY'
import json, sys
a, b = (sorted(e["key"] for e in map(json.loads, open(p))) for p in sys.argv[1:])
if a != b: print(len(a), len(b))
PY
)
[ -z "$d" ] || fail "merged journal vs unsharded tune: $d"
"$h" merge "$tmp/tu.part.journal" "$tmp/tu0.journal" >"$tmp/tup.out" 2>&1
[ $? = 1 ] || fail "journal merge with a shard missing should exit 1"
grep -q "shard 1/2 was not given" "$tmp/tup.out" || fail "journal missing: $(cat "$tmp/tup.out")"
o=$("$h" merge "$tmp/x.csv" "$tmp/tu0.journal" 2>&1)
[ $? = 2 ] || fail "a journal into a CSV: $o"

finish
