#!/usr/bin/env bash
# test_sanitize_cli.sh: the emulator's sanitizer through the command line.
#   - `harness check` on tests/configs/sanitize.json: each planted conv2d bug
#     gets its status (race, initcheck, memcheck) with the marked line in the
#     reason, the correct kernel is ok, the full report is on stderr and in
#     --report, the exit code is 1;
#   - `harness debug --sanitize` prints the findings and exits 1;
#     `run --sanitize` on a cuda backend is refused;
#   - no false alarm: `harness check` on every config of configs/ and
#     tests/configs/ (one small case each, short time-outs), and the
#     emulator's own tests of correct kernels (test_emu_run, test_emu_cg_half)
#     with every module instrumented (HARNESS_EMU_SANITIZE);
#   - `harness profile`: the per-line CSV, the table, the annotated listing.
# The corpus of planted bugs and tricky correct kernels is test_sanitize.c's.
. "$(dirname "$0")/lib.sh"
bin=$(dirname "$h")

echo "== harness check: planted conv2d bugs"
"$h" check "$root/tests/configs/sanitize.json" --out "$tmp/san.csv" --report "$tmp/san.txt" >"$tmp/san.out" 2>"$tmp/san.err"
rc=$?
[ $rc = 1 ] || fail "check with findings: exit $rc (want 1): $(tail -3 "$tmp/san.out" "$tmp/san.err")"
got=$(python3 - "$tmp/san.csv" "$root/tests/kernels/sanitize/conv2d_bugs.cu" <<'PY'
import csv, re, sys
marks = {}
for i, line in enumerate(open(sys.argv[2]), 1):
    m = re.search(r"expect: (\w+) (\w+)", line)
    if m: marks.setdefault(m.group(2), []).append(f"conv2d_bugs.cu:{i}")
for r in csv.DictReader(open(sys.argv[1], newline="")):
    v, st, why = r["variant"], r["status"], r["reason"]
    named = any(re.search(re.escape(m) + r"(?!\d)", why) for m in marks.get(v, []))
    ok = st == "ok" and not why if v not in marks else named and f"kernel '{v}' block (" in why and " thread (" in why
    print(r["case"], v, st, "ok" if ok else "BAD: " + why[:300])
PY
)
want="0 conv2d_halo_race race ok
0 conv2d_halo_uninit initcheck ok
0 conv2d_edge_oob memcheck ok
0 conv2d_pad_z_out_shared_halo ok ok
1 conv2d_halo_race race ok
1 conv2d_halo_uninit initcheck ok
1 conv2d_edge_oob memcheck ok
1 conv2d_pad_z_out_shared_halo ok ok"
[ "$got" = "$want" ] || fail "check rows:
$got"
grep -q "harness: sanitizer: variant conv2d_halo_race, case 0" "$tmp/san.err" || fail "no report on stderr"
grep -q "^race: kernel 'conv2d_halo_race'" "$tmp/san.txt" || fail "no report in --report: $(head -3 "$tmp/san.txt")"
grep -q "sanitizer (all): 6 rows with findings" "$tmp/san.out" || fail "summary: $(tail -3 "$tmp/san.out")"
grep -q "race memcheck initcheck synccheck" "$tmp/san.out" || fail "no sanitizer columns in the table"
[ ! -e "$tmp/san.best.csv" ] || fail "a check run wrote a best-variant file"

echo "== harness debug --sanitize, run --sanitize --backend cuda"
"$h" debug "$root/tests/configs/sanitize.json" --kernel conv2d_halo_uninit --sanitize init >"$tmp/dbg.out" 2>&1
rc=$?
[ $rc = 1 ] || fail "debug --sanitize: exit $rc (want 1)"
grep -q "^initcheck: kernel 'conv2d_halo_uninit'" "$tmp/dbg.out" || fail "debug --sanitize: $(grep -i sanitizer "$tmp/dbg.out")"
"$h" debug "$root/tests/configs/sanitize.json" --kernel conv2d_pad_z_out_shared_halo --sanitize all >"$tmp/dbg2.out" 2>&1 ||
  fail "debug --sanitize on a correct kernel: $(tail -3 "$tmp/dbg2.out")"
grep -q "0 findings" "$tmp/dbg2.out" || fail "debug --sanitize, correct kernel: $(grep -i sanitizer "$tmp/dbg2.out")"
out=$("$h" run "$root/tests/configs/sanitize.json" --sanitize race --backend cuda 2>&1)
[ $? = 2 ] && case "$out" in *"CPU emulator"*) ;; *) false ;; esac || fail "run --sanitize --backend cuda: $out"
out=$("$h" check "$root/tests/configs/sanitize.json" --sanitize race,bogus 2>&1)
[ $? = 2 ] && case "$out" in *"unknown check 'bogus'"*) ;; *) false ;; esac || fail "--sanitize race,bogus: $out"

echo "== harness profile"
"$h" profile "$root/tests/configs/sanitize.json" --variant conv2d_pad_z_out_shared_halo --case 1 \
  --profile-blocks 0 --out "$tmp/prof.csv" >"$tmp/prof.out" 2>&1 || fail "profile: $(tail -3 "$tmp/prof.out")"
got=$(python3 - "$tmp/prof.lines.csv" <<'PY'
import csv, sys
for r in csv.DictReader(open(sys.argv[1], newline="")):
    per = r["sectors_per_request"] or r["bank_conflicts_per_request"]
    print(r["file"].split("/")[-1], r["line"], r["space"], r["kind"], per, r["blocks_profiled"] == r["blocks"])
PY
)
case "$got" in
  *"conv2d_pad_z_out_shared_halo.cu 38 global load"*"conv2d_pad_z_out_shared_halo.cu 38 shared store 0 True"*"shared load 0 True"*"global store"*) ;;
  *) fail "profile lines: $got" ;;
esac
grep -q "^profile of variant conv2d_pad_z_out_shared_halo, case 1" "$tmp/prof.out" || fail "no profile table on stdout"
grep -q "       ^ shared load: " "$tmp/prof.txt" || fail "no annotated listing: $(head -5 "$tmp/prof.txt")"
grep -q "^results: $tmp/prof.csv" "$tmp/prof.out" || fail "profile results: $(tail -3 "$tmp/prof.out")"
out=$("$h" run "$root/tests/configs/sanitize.json" --profile --sanitize all 2>&1)
[ $? = 2 ] || fail "run --profile --sanitize: $out"

echo "== no false alarms: every config"
for c in "$root"/configs/*.json "$root"/tests/configs/*.json; do
  name=$(basename "$c" .json)
  [ "$name" = sanitize ] && continue
  # training configs (a "layers" list) are not sweeps: harness train checks those
  grep -q '"layers"' "$c" && continue
  # the largest case of each config under 2 MFLOP (a small one that still has
  # edges and several blocks); hostile kernels that spin or sleep are cut
  # short (their rows time out, which is not a finding)
  case_id=$(python3 - "$h" "$c" <<'PY'
import subprocess, sys
out = subprocess.run([sys.argv[1], "list", sys.argv[2]], capture_output=True, text=True).stdout
lines = out.splitlines()
best, small = None, None
if "cases:" in lines:
    for line in lines[lines.index("cases:") + 2:]:
        f = line.split()
        if len(f) < 2 or not f[0].isdigit(): break
        try: g = float(f[-1])
        except ValueError: continue
        if small is None or g < small[1]: small = (f[0], g)
        if g <= 2e-3 and (best is None or g > best[1]): best = (f[0], g)
print((best or small or ("0", 0))[0])
PY
)
  only=()
  # hostile.json's kernels that spin, sleep or abort on purpose cost time-outs and
  # restarts, not findings: its well-behaved ones are enough here
  [ "$name" = hostile ] && only=(--variant conv_ok --variant slow_conv --variant printf_flood --variant clobber_input)
  "$h" check "$c" --case "$case_id" --all --kernel-timeout 3 "${only[@]}" --out "$tmp/all-$name.csv" \
    >"$tmp/all-$name.out" 2>&1
  bad=$(python3 - "$tmp/all-$name.csv" <<'PY'
import csv, sys
try:
    rows = list(csv.DictReader(open(sys.argv[1], newline="")))
except OSError:
    print("no results"); sys.exit()
for r in rows:
    # hostile.json's clobber_input: the last block writes into its const input
    # 'in' while other blocks may still read it (before it, on a GPU): a real
    # race between blocks, the global race check's to find
    if r["variant"] == "clobber_input" and r["status"] == "race" and "device buffer 'in'" in r["reason"]:
        continue
    if r["status"] in ("race", "memcheck", "initcheck", "synccheck"):
        print(r["variant"], r["status"], r["reason"][:400])
if not rows: print("no rows")
PY
)
  [ -z "$bad" ] || fail "$name: $bad"
done

echo "== no false alarms: the emulator's tests with every module instrumented"
for t in test_emu_run test_emu_cg_half; do
  HARNESS_EMU_SANITIZE=all "$bin/$t" >"$tmp/$t.out" 2>&1 || fail "$t under HARNESS_EMU_SANITIZE: $(grep -E "sanitizer|FAIL|failed" "$tmp/$t.out" | head -5)"
  if grep -E "^(race|memcheck|initcheck):" "$tmp/$t.out" >/dev/null; then
    fail "$t: findings: $(grep -E "^(race|memcheck|initcheck):" "$tmp/$t.out" | head -3)"
  fi
done

finish
