#!/usr/bin/env bash
# test_sancheck.sh: does `harness check` find the bugs kernel authors make, at the
# right line, and stay silent on correct kernels? A corpus of realistic kernels
# (tests/kernels/sancheck/: tiled GEMMs, reductions, scans, histograms, stencils,
# softmax, elementwise), one planted bug each or correct (the bug's fixed twin, and
# tricky-but-correct idioms: __syncwarp reductions, double buffering with one
# barrier, shared-memory atomics, cooperative-groups tiles, early exits, a
# barrier as a loop's condition), checked through tests/configs/sancheck/*.json.
#   - a line marked `expect: CLASS VARIANT` in a kernel: the row of VARIANT (or of
#     a variant of the kernel VARIANT without marks of its own) has
#     status CLASS, its reason names one marked line (file:line, with block and
#     thread), and the full report (--report) names every marked line;
#   - a variant without marks: status ok and no reason (no false alarm), except
#     the one whose expectation is written below (a grid too small: the output
#     check says which elements were never written);
#   - races on global memory (global_race.cu): between blocks and within one,
#     and the ordered hand-offs (atomics, a fence then an atomic counter, the
#     atomicCAS loop, barriers) that must stay ok;
#   - `run --sanitize all` gives the same rows as `check`.
. "$(dirname "$0")/lib.sh"

# rows CONFIG: check CONFIG; prints one line per row, "variant status verdict"
rows() {
  local name=$1
  shift
  rm -f "$tmp/$name.txt"
  "$h" "$@" "$root/tests/configs/sancheck/$name.json" --out "$tmp/$name.csv" --report "$tmp/$name.txt" \
    >"$tmp/$name.out" 2>"$tmp/$name.err"
  local rc=$?
  [ $rc = 1 ] || fail "$name: $* exited $rc (want 1: findings): $(tail -3 "$tmp/$name.out" "$tmp/$name.err")"
  python3 - "$tmp/$name.csv" "$tmp/$name.txt" "$root/tests/kernels/sancheck" <<'PY'
import csv, glob, os, re, sys
marks = {}  # variant -> (class, ["file.cu:line", ...])
for path in glob.glob(os.path.join(sys.argv[3], "*.cu")):
    base = os.path.basename(path)
    for i, line in enumerate(open(path), 1):
        m = re.search(r"expect: (\w+) (\w+)", line)
        if m:
            marks.setdefault(m.group(2), (m.group(1), []))[1].append(f"{base}:{i}")
report, cur = {}, None
for line in open(sys.argv[2]) if os.path.exists(sys.argv[2]) else []:
    m = re.match(r"harness: sanitizer: variant (\S+), case", line)
    if m:
        cur = m.group(1)
    elif cur:
        report[cur] = report.get(cur, "") + line
def names(text, where):  # file:line not followed by another digit
    return re.search(re.escape(where) + r"(?!\d)", text) is not None
special = {
    # correct code on half the grid it needs: the output check names the gap
    "rl_grid_short": lambda st, why: st == "mismatch" and "488 of them still hold the poison" in why
                     and "never written" in why and "first at element 512 of 'y'" in why,
}
for r in csv.DictReader(open(sys.argv[1], newline="")):
    v, st, why = r["variant"], r["status"], r["reason"]
    m = marks.get(v) or marks.get(r["kernel"])  # a variant's marks, else its kernel's
    if m:
        cls, where = m
        ok = (st == cls and any(names(why, w) for w in where) and " block (" in why and " thread (" in why
              and all(names(report.get(v, ""), w) for w in where))
    elif v in special:
        ok = special[v](st, why)
    else:
        ok = st == "ok" and not why
    print(v, st, "ok" if ok else "BAD: " + why[:400])
PY
}

# expect_rows NAME WANT: the rows of check on NAME.json are WANT
expect_rows() {
  local got
  got=$(rows "$1" check)
  [ "$got" = "$2" ] || fail "check $1.json:
$got
want:
$2"
}

echo "== tiled GEMMs"
expect_rows matmul "mm_ok ok ok
mm_double_buffer ok ok
mm_transpose ok ok
mm_regtile ok ok
mm_regtile_le race ok
mm_no_sync_raw race ok
mm_no_sync_war race ok
mm_tail_le memcheck ok
mm_shared_le memcheck ok
mm_uninit_edge initcheck ok"

# the planted j <= 2 is both: the race of the extra write, and the index past acc[2]
grep -q "kernel 'mm_regtile_le'.*index 2 out of bounds for type 'float \[2\]'" "$tmp/matmul.txt" ||
  fail "mm_regtile_le: the report lacks the index past acc[2]: $(grep -m3 regtile "$tmp/matmul.txt")"

echo "== reductions, scans, histograms"
expect_rows reduce "red_syncwarp ok ok
red_shfl ok ok
red_cg_tiles ok ok
red_scan ok ok
red_hist ok ok
red_naive_exit ok ok
red_two_pass ok ok
red_count ok ok
red_struct ok ok
red_tree_nosync race ok
red_tree_nosync_wide race ok
red_syncwarp_scope race ok
red_sync_divergent synccheck ok
red_syncwarp_mask synccheck ok
red_shfl_exited synccheck ok
red_scan_inplace race ok
red_volatile_warp race ok
red_struct_count initcheck ok
red_hist_nosync race ok
red_hist_unzeroed initcheck ok
red_two_pass_unzeroed initcheck ok
red_dbias_plus race ok"

echo "== stencils"
expect_rows stencil "st_ok ok ok
st_rows_ok ok ok
st_halo_left memcheck ok
st_halo_le memcheck ok
st_const_ok ok ok
st_const_shift memcheck ok
st_dyn_le memcheck ok"

echo "== softmax"
expect_rows softmax "sm_ok ok ok
sm_vec_ok ok ok
sm_vec_misaligned memcheck ok
sm_loss_atomic initcheck ok
sm_grad_accum initcheck ok
sm_lanes_exit synccheck ok
sm_warp_sums_race race ok"

echo "== elementwise"
expect_rows elementwise "rl_ok ok ok
rl_vec_ok ok ok
rl_tail_le memcheck ok
rl_float2_offset memcheck ok
rl_double_copy memcheck ok
rl_int_wrap memcheck ok
rl_grid_short mismatch ok"
# a misaligned double is one finding (its type's alignment), not two
n=$(grep -c "kernel 'rl_double_copy'" "$tmp/elementwise.txt")
[ "$n" = 1 ] || fail "rl_double_copy: $n findings (want 1): $(grep rl_double_copy "$tmp/elementwise.txt")"

echo "== races on global memory"
expect_rows global_race "gr_ww_neighbour race ok
gr_raw_prev race ok
gr_dbias_plus race ok
gr_hist_plain race ok
gr_atomic ok ok
gr_atomic_ref ok ok
gr_grid_stride ok ok
gr_last_block ok ok
gr_cas_loop ok ok
gr_sync_scratch ok ok"
# a race between blocks names the buffer, the element and both blocks; which of
# the two blocks the emulator's threads ran first is not fixed, so either order
ww="write of device buffer 'dbias' \\(4 bytes at element 1 of 4-byte elements, byte 4 of 12\\)"
grep -Eq "block \\(1,0,0\\) thread \\(0,0,0\\): $ww at global_race.cu:54.* after block \\(0,0,0\\) thread \\(0,0,0\\) wrote it at global_race.cu:53.*nothing orders the two blocks|block \\(0,0,0\\) thread \\(0,0,0\\): $ww at global_race.cu:53.* after block \\(1,0,0\\) thread \\(0,0,0\\) wrote it at global_race.cu:54.*nothing orders the two blocks" "$tmp/global_race.txt" ||
  fail "gr_ww_neighbour: the report does not name both blocks and the element: $(grep -m1 gr_ww "$tmp/global_race.txt")"

echo "== run --sanitize all: the same rows"
want=$(rows matmul check)
got=$(rows matmul run --sanitize all)
[ "$got" = "$want" ] || fail "run --sanitize all on matmul.json:
$got
check gave:
$want"

finish
