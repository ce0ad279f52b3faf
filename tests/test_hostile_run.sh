#!/usr/bin/env bash
# test_hostile_run.sh: nothing a kernel, a config or an interrupt does crashes
# `harness run`, loses a result or runs what the user did not ask for
# (tests/kernels/hostile/hostile.cu, tests/configs/hostile.json, on the emulator):
#   - a kernel that spins is stopped at --kernel-timeout (timeout), its later cases
#     skipped unless --retry-timeouts; one that never returns to kernel code is
#     killed by the parent's watchdog; one that kills its process is a fault row;
#     the correct variant after each of them is ok;
#   - a kernel that writes into its const input is reported, and the next
#     variant sees the original inputs;
#   - kernel printf is capped per launch and shown for a row's first launch only;
#   - SIGINT finishes the row and stops (exit 130), the file is unfinished and is
#     not overwritten without --force, --resume completes it without repeats; the
#     same after kill -9 of the parent; SIGTERM stops at once (exit 143);
#   - an output that cannot be written stops the run at once (exit 2) and leaves
#     nothing beside it; progress lines come without a terminal;
#   - configs that would run code or write outside results/ are exit 2.
. "$(dirname "$0")/lib.sh"
cfg="$root/tests/configs/hostile.json"
run() { "$h" run "$cfg" --backend emu "$@"; }
# the same in the background, as the harness process itself (so signals reach it)
run_bg() { "$h" run "$cfg" --backend emu "$@" & }

# rows CSV: "case variant status" per row, then the reasons on their own lines
rows() {
  python3 - "$1" <<'PY' 2>&1
import csv, sys
for r in csv.DictReader(open(sys.argv[1], newline="")):
    print(r["case"], r["variant"], r["status"], "|", r["reason"])
PY
}
# has TEXT REGEX: whether a line of TEXT matches
has() { printf '%s\n' "$1" | grep -q "$2"; }
status_list() { rows "$1" | cut -d'|' -f1 | tr '\n' ';' | sed 's/ ;/;/g'; }

echo "== a spinning kernel: timeout, later cases skipped, the next variant fine"
t0=$(date +%s)
run --variant spin_forever --variant conv_ok --kernel-timeout 1 --out "$tmp/spin.csv" >"$tmp/spin.out" 2>&1
rc=$?
[ "$rc" = 1 ] || fail "spin: exit $rc, expected 1: $(tail -5 "$tmp/spin.out")"
got=$(status_list "$tmp/spin.csv")
want="0 spin_forever timeout;0 conv_ok ok;1 spin_forever skipped;1 conv_ok ok;2 spin_forever skipped;2 conv_ok ok;"
[ "$got" = "$want" ] || fail "spin rows: $got"
has "$(rows "$tmp/spin.csv")" "0 spin_forever timeout | kernel 'spin_forever' .*timed out after 1 s" ||
  fail "spin: no time-out reason: $(rows "$tmp/spin.csv")"
has "$(rows "$tmp/spin.csv")" "1 spin_forever skipped | timed out in case 0" || fail "spin: no skip reason"
[ $(( $(date +%s) - t0 )) -lt 20 ] || fail "spin: took $(( $(date +%s) - t0 )) s"

run --variant spin_forever --kernel-timeout 0.5 --retry-timeouts --out "$tmp/retry.csv" >/dev/null 2>&1
got=$(status_list "$tmp/retry.csv")
[ "$got" = "0 spin_forever timeout;1 spin_forever timeout;2 spin_forever timeout;" ] || fail "--retry-timeouts: $got"

echo "== a kernel that never returns to kernel code: the watchdog kills the worker"
run --variant sleep_forever --variant conv_ok --kernel-timeout 1 --case 1 --out "$tmp/hang.csv" >"$tmp/hang.out" 2>&1
rc=$?
[ "$rc" = 1 ] || fail "hang: exit $rc: $(tail -5 "$tmp/hang.out")"
got=$(status_list "$tmp/hang.csv")
[ "$got" = "1 sleep_forever timeout;1 conv_ok ok;" ] || fail "hang rows: $got"
has "$(rows "$tmp/hang.csv")" "never returned; the worker process was killed" || fail "hang: reason: $(rows "$tmp/hang.csv")"

echo "== a kernel that kills its process: a fault row, and the sweep goes on"
run --variant abort_worker --variant conv_ok --out "$tmp/abort.csv" >"$tmp/abort.out" 2>&1
rc=$?
[ "$rc" = 1 ] || fail "abort: exit $rc: $(tail -5 "$tmp/abort.out")"
got=$(status_list "$tmp/abort.csv")
want="0 abort_worker fault;0 conv_ok ok;1 abort_worker fault;1 conv_ok ok;2 abort_worker fault;2 conv_ok ok;"
[ "$got" = "$want" ] || fail "abort rows: $got"
has "$(rows "$tmp/abort.csv")" "abort_worker fault | the worker process died of Aborted" || fail "abort: reason"

echo "== a kernel that writes into its input: reported, and the next variant unharmed"
run --variant clobber_input --variant conv_ok --emu-threads 1 --out "$tmp/clobber.csv" >/dev/null 2>&1
got=$(status_list "$tmp/clobber.csv")
want="0 clobber_input mismatch;0 conv_ok ok;1 clobber_input mismatch;1 conv_ok ok;2 clobber_input mismatch;2 conv_ok ok;"
[ "$got" = "$want" ] || fail "clobber rows: $got"
has "$(rows "$tmp/clobber.csv")" "clobber_input mismatch | wrote into its input 'in' (4 bytes changed" ||
  fail "clobber: reason: $(rows "$tmp/clobber.csv")"

echo "== printf: capped per launch, first launch only"
run --variant printf_flood --case 0 --out "$tmp/flood.csv" >"$tmp/flood.out" 2>/dev/null
n=$(grep -c '^flood ' "$tmp/flood.out")
[ "$n" = 100 ] || fail "flood: $n lines shown, expected the default 100 of the first launch"
# case 0: 2 blocks of 64 threads, 3 lines each = 384 a launch; 1 warm-up + 3 samples + none in checks
grep -q '^\[harness: 284 more lines of kernel printf from this launch not shown' "$tmp/flood.out" ||
  fail "flood: no first-launch note: $(grep harness "$tmp/flood.out")"
grep -q "^\[harness: 1152 lines of kernel printf from the row's other launches not shown (--printf-all" "$tmp/flood.out" ||
  fail "flood: no later-launches note: $(grep harness "$tmp/flood.out")"
run --variant printf_flood --case 0 --printf-lines 7 --printf-all --out "$tmp/flood2.csv" >"$tmp/flood2.out" 2>/dev/null
n=$(grep -c '^flood ' "$tmp/flood2.out")
[ "$n" = 28 ] || fail "--printf-lines 7 --printf-all: $n lines shown, expected 7 in each of 4 launches"

echo "== SIGINT: the row finishes, the run stops, --resume completes it"
out="$tmp/int.csv"
run_bg --variant slow_conv --variant conv_ok --out "$out" >"$tmp/int.out" 2>&1
pid=$!
# Interrupt once the first row is written (not after a fixed sleep: on a loaded
# machine the first row may take seconds); slow_conv keeps the rest from finishing.
for _ in $(seq 300); do
  [ -f "$out" ] && [ "$(wc -l <"$out")" -ge 2 ] && break
  sleep 0.1
done
kill -INT "$pid"
wait "$pid"
rc=$?
[ "$rc" = 130 ] || fail "SIGINT: exit $rc, expected 130: $(tail -3 "$tmp/int.out")"
grep -q "run the same command with --resume" "$tmp/int.out" || fail "SIGINT: no resume hint"
n_before=$(($(wc -l <"$out") - 1))
[ "$n_before" -ge 1 ] && [ "$n_before" -lt 6 ] || fail "SIGINT: $n_before rows written (expected some, not all)"
[ -e "$out.unfinished" ] || fail "SIGINT: no unfinished marker"
run --variant slow_conv --variant conv_ok --out "$out" >"$tmp/int2.out" 2>&1
rc=$?
[ "$rc" = 2 ] || fail "rerun over an unfinished file: exit $rc, expected 2"
grep -q "holds an unfinished run.*--resume continues it, --force starts it over" "$tmp/int2.out" || fail "no refusal message"
[ $(($(wc -l <"$out") - 1)) = "$n_before" ] || fail "the refused rerun changed the file"
run --variant slow_conv --variant conv_ok --out "$out" --resume >"$tmp/int3.out" 2>&1 || fail "--resume failed: $(tail -3 "$tmp/int3.out")"
grep -q "resume: $n_before rows of $out kept" "$tmp/int3.out" || fail "resume: $(grep resume "$tmp/int3.out")"
got=$(status_list "$out" | tr ';' '\n' | sort | tr '\n' ';')
want="0 conv_ok ok;0 slow_conv ok;1 conv_ok ok;1 slow_conv ok;2 conv_ok ok;2 slow_conv ok;"
[ "$got" = "$want" ] || fail "after resume: $got"
[ -e "$out.unfinished" ] && fail "the marker survived a finished run"
[ -s "${out%.csv}.best.csv" ] || fail "no best.csv after the resumed run finished"

echo "== kill -9 of the parent: no orphan worker, --resume without repeats"
out="$tmp/kill.csv"
run_bg --variant slow_conv --variant conv_ok --out "$out" >/dev/null 2>&1
pid=$!
sleep 0.8
kill -9 "$pid"
wait "$pid" 2>/dev/null
sleep 0.3
pgrep -f "hostile.json --backend emu --variant slow_conv --variant conv_ok --out $out" >/dev/null &&
  fail "a worker outlived its parent"
run --variant slow_conv --variant conv_ok --out "$out" --resume >/dev/null 2>&1 || fail "resume after kill -9 failed"
got=$(status_list "$out" | tr ';' '\n' | sort | tr '\n' ';')
[ "$got" = "$want" ] || fail "after kill -9 and resume: $got"

echo "== SIGTERM stops at once"
run_bg --variant slow_conv --out "$tmp/term.csv" >"$tmp/term.out" 2>&1
pid=$!
sleep 0.5
kill -TERM "$pid"
wait "$pid"
rc=$?
[ "$rc" = 143 ] || fail "SIGTERM: exit $rc, expected 143"

echo "== an output that cannot be written"
if [ -w /dev/full ]; then
  before=$(ls /dev | grep -c '^full')
  run --variant conv_ok --out /dev/full >"$tmp/full.out" 2>&1
  rc=$?
  [ "$rc" = 2 ] || fail "/dev/full: exit $rc, expected 2"
  grep -q "/dev/full: cannot write" "$tmp/full.out" || fail "/dev/full: message: $(cat "$tmp/full.out")"
  [ "$(ls /dev | grep -c '^full')" = "$before" ] || fail "/dev/full: files were created beside it: $(ls /dev | grep '^full')"
else
  fail "no writable /dev/full here: an unwritable output cannot be checked"
fi

echo "== progress without a terminal"
run --variant conv_ok --out "$tmp/prog.csv" 2>"$tmp/prog.err" >/dev/null
grep -q '^\[1/3\] case 0 8x8x1 -> 2, f:3x3: 0 rows ok, 0 failed' "$tmp/prog.err" || fail "progress: $(cat "$tmp/prog.err")"
grep -q '^\[3/3\] case 2 ' "$tmp/prog.err" || fail "progress: no line for the last case"
run --variant conv_ok --case 2 --out "$tmp/prog2.csv" 2>"$tmp/prog2.err" >/dev/null
grep -q '^\[1/1\] case 2 ' "$tmp/prog2.err" || fail "--case 2 progress: $(cat "$tmp/prog2.err")"
run --variant conv_ok --quiet --out "$tmp/prog3.csv" 2>"$tmp/prog3.err" >/dev/null
[ ! -s "$tmp/prog3.err" ] || fail "--quiet still printed: $(cat "$tmp/prog3.err")"

echo "== configs that would run code or write elsewhere"
base='"op": "conv2d", "axes": {"in_ch": 1, "out_ch": 1, "filter_size": 3, "img_size": 8},
      "defaults": {"file": "'"$root"'/tests/kernels/hostile/hostile.cu", "block": [8, 8], "grid": [1, 1, 1],
                   "args": ["in", "out", "filter", "h", "w", "in_ch", "out_ch", "filter_size", "pad"]}'
printf '{%s, "variants": [{"kernel": "*(system(\\"touch %s/pwned\\"), &conv_ok)"}]}' "$base" "$tmp" >"$tmp/inject.json"
out=$("$h" run "$tmp/inject.json" --backend emu --out "$tmp/inject.csv" 2>&1)
rc=$?
[ "$rc" = 2 ] || fail "kernel injection: exit $rc: $out"
[ -e "$tmp/pwned" ] && fail "kernel injection ran a command"
case "$out" in *"variants[0].kernel"*"is not a kernel's C++ name"*) ;; *) fail "injection message: $out" ;; esac
# a name climbing out of results/ to a file of this run's own (another process may
# well have a /tmp/x.csv)
escape="hn_hostile_$$"
for name in "../../../../tmp/$escape" "a/b" "x
y" ".."; do
  printf '{"name": %s, %s, "variants": [{"kernel": "conv_ok"}]}' "$(python3 -c 'import json,sys; print(json.dumps(sys.argv[1]))' "$name")" "$base" >"$tmp/name.json"
  out=$(cd "$tmp" && "$h" run "$tmp/name.json" --backend emu 2>&1)
  rc=$?
  [ "$rc" = 2 ] || fail "name '$name': exit $rc: $out"
  case "$out" in *"name: "*"is not a file name"*) ;; *) fail "name '$name': message: $out" ;; esac
done
[ -e "/tmp/$escape.csv" ] && rm -f "/tmp/$escape.csv" && fail "a config name wrote outside results/"
printf '{%s, "where": "img_size > 100", "variants": [{"kernel": "conv_ok"}]}' "$base" >"$tmp/empty.json"
out=$("$h" list "$tmp/empty.json" 2>&1)
[ $? = 2 ] || fail "a where that leaves no case should be exit 2: $out"
case "$out" in *"where: none of the 1 combinations"*) ;; *) fail "empty where message: $out" ;; esac
# sources that are not files: an include of one is a compile error naming it,
# nothing read; a variant's file that is not one is the config's error (exit 2)
printf '#include "/dev/zero"\n__global__ void conv_ok(float *o) {}\n' >"$tmp/zero.cu"
printf '{%s, "variants": [{"kernel": "conv_ok", "file": "%s", "args": ["out"]}]}' "$base" "$tmp/zero.cu" >"$tmp/zero.json"
out=$(timeout 60 "$h" run "$tmp/zero.json" --backend emu --out "$tmp/zero.csv" 2>&1)
rc=$?
[ "$rc" = 1 ] || fail "an include of /dev/zero: exit $rc: $out"
got=$(rows "$tmp/zero.csv")
has "$got" 'conv_ok compile_error | .*zero.cu includes "/dev/zero": /dev/zero is not a regular file' || fail "/dev/zero include: $got"
printf '{%s, "variants": [{"kernel": "conv_ok", "name": "fifo", "file": "/dev/zero"}]}' "$base" >"$tmp/zero_file.json"
out=$(timeout 60 "$h" run "$tmp/zero_file.json" --backend emu --out "$tmp/zero_file.csv" 2>&1)
rc=$?
[ "$rc" = 2 ] || fail "/dev/zero as the file: exit $rc, expected 2: $out"
case "$out" in *"variants[0].file: '/dev/zero' is a device, not a kernel's source file"*) ;;
*) fail "/dev/zero as the file: $out" ;; esac
[ -e "$tmp/zero_file.csv" ] && fail "/dev/zero as the file: a results file was written"
out=$("$h" run "$cfg" --kernel-timeout 0 2>&1)
[ $? = 2 ] || fail "--kernel-timeout 0 should be refused"
out=$("$h" run --help)
case "$out" in *"--resume"*"--retry-timeouts"*) ;; *) fail "run --help: $out" ;; esac
case "$out" in *"--by COLUMN"*) fail "run --help lists compare's --by" ;; esac
out=$("$h" list "$cfg" --hot 2>&1)
[ $? = 2 ] || fail "list --hot should be refused"

finish
