# lib.sh: what the shell tests share. Sourced, not run, as a test's first line:
#   . "$(dirname "$0")/lib.sh"
# It is not a test itself: CMake registers tests/test_*.sh only.
#
# After it, with `set -u` on:
#   $h, $root    the harness binary and the source tree (HARNESS_BIN and
#                HARNESS_ROOT, which CTest sets; the test stops if one is missing);
#   $test_name   the test's name, test_cli for tests/test_cli.sh;
#   $tmp         a folder of the test's own under ${HARNESS_TMP:-/tmp}, removed
#                when the test exits (a test that sets its own EXIT trap removes it);
#   $fails       the failures so far, which fail counts and finish reports.
set -u
h=${HARNESS_BIN:?}
root=${HARNESS_ROOT:?}
test_name=$(basename "$0" .sh)
tmp=${HARNESS_TMP:-/tmp}/${test_name#test_}.$$
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT
fails=0

# fail MESSAGE...: prints "FAIL: MESSAGE" and counts a failure; the test goes on.
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# expect CODE NEEDLE COMMAND...: COMMAND exits CODE (a signal is 128 + its number)
# with NEEDLE in what it prints, stdout and stderr together; that output is left
# in $out. A failure names the command and shows its output. What a test may set
# once, after sourcing this file:
#   expect_cmd=(WORDS...)  put before every COMMAND: ("$h" debug), (timeout 60);
#   expect_name=TEXT       failures read "TEXT ARGS: exit 1, expected 2", ARGS being
#                          expect's own (without expect_cmd; TEXT may be empty);
#                          unset (the default):
#                          "'COMMAND' exited 1, expected 2";
#   expect_show=all|400|tail  what a failure shows of the output: all of it (the
#                          default), its first 400 characters, or its last lines
#                          (5 for a wrong code, 8 for a missing NEEDLE).
expect_cmd=()
expect_show=all
expect() {
  local code=$1 needle=$2 rc name said_rc shown_rc shown_needle
  shift 2
  out=$("${expect_cmd[@]}" "$@" 2>&1)
  rc=$?
  if [ -n "${expect_name+set}" ]; then
    name="$expect_name$*"
    said_rc="$name: exit $rc"
  else
    name="'$*'"
    said_rc="$name exited $rc"
  fi
  case "$expect_show" in
    400) shown_rc=${out:0:400} shown_needle=${out:0:400} ;;
    tail)
      shown_rc=$(printf '%s\n' "$out" | tail -5)
      shown_needle=$(printf '%s\n' "$out" | tail -8)
      ;;
    *) shown_rc=$out shown_needle=$out ;;
  esac
  [ "$rc" = "$code" ] || fail "$said_rc, expected $code: $shown_rc"
  case "$out" in *"$needle"*) ;; *) fail "$name: expected \"$needle\" in: $shown_needle" ;; esac
}

# finish [NOTE]: the test's last line. "<test>: all passed [NOTE]" and exit 0, or
# "<test>: N failure(s)" and exit 1.
finish() {
  if [ "$fails" = 0 ]; then
    echo "$test_name: all passed${1:+ $1}"
    exit 0
  fi
  echo "$test_name: $fails failure(s)"
  exit 1
}

# sample_sweep NAME COUNT MIN_ROWS VARIANTS: runs the committed configs/NAME.json on
# the emulator with its sample cut to COUNT cases (--quick timing) and checks that
# every row that ran (not skipped for the budget) is ok, that at least MIN_ROWS ran
# and that VARIANTS distinct variants did. The config lands in $tmp/NAME.json, the
# results in $tmp/NAME.csv, for the test's further use.
sample_sweep() {
  local name=$1 count=$2 min_rows=$3 variants=$4 got n_ran n_ok n_var
  sed "s|\"\.\./kernels/|\"$root/kernels/|; s|\"count\": [0-9]*|\"count\": $count|" \
    "$root/configs/$name.json" >"$tmp/$name.json"
  "$h" run "$tmp/$name.json" --backend emu --quick --quiet --out "$tmp/$name.csv" >"$tmp/$name.log" 2>&1 ||
    fail "$name exited $?: $(tail -5 "$tmp/$name.log")"
  got=$(python3 -c "
import csv
rows = [r for r in csv.DictReader(open('$tmp/$name.csv')) if r['status'] != 'skipped']
print(len(rows), sum(r['status'] == 'ok' for r in rows), len({r['variant'] for r in rows}))" 2>&1)
  read -r n_ran n_ok n_var <<<"$got"
  [ "${n_ran:-0}" -ge "$min_rows" ] && [ "$n_ok" = "$n_ran" ] && [ "$n_var" = "$variants" ] ||
    fail "$name: $n_ok of $n_ran rows ok (at least $min_rows wanted), $n_var variants ran ($variants wanted): $got"
}
