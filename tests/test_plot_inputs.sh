#!/usr/bin/env bash
# test_plot_inputs.sh: `harness plot`, `compare` and `merge` on inputs a user
# makes by hand, each once wrong:
#   - a UTF-8 byte-order mark made 'case' an unknown column: the chart's case
#     ids were the labels;
#   - two results files joined with cat: the second header was a row (a case
#     'case' of a variant 'variant' marked failed); one with other columns put
#     every later field under the wrong name;
#   - files of two configs share case ids: their cases were drawn as one, under
#     the first one's label;
#   - an ok row without a time was listed as "case 0 v: ok" among the failed;
#   - a single case was announced as "faster and slower half" ("1 cases x 1
#     variants");
#   - merge --quiet printed the whole verdict table; merge into a folder that
#     did not exist failed; one file given twice reported each of its rows;
#   - a file where every row failed was split into a "faster" and a "slower
#     half" of nothing, with an empty speed-up chart; a half holding only cases
#     without a sort time was "the 0 cases with the highest ... time";
#   - --out a folder made gnuplot fail ("Is a directory") and left '.dat';
#     --out x.jpg was a PNG named .jpg; --sort/--baseline on a training curve
#     did nothing;
#   - compare took one file: two runs were "unexpected argument".
# Exit 77 (skipped) without gnuplot.
. "$(dirname "$0")/lib.sh"
command -v "${HARNESS_GNUPLOT:-gnuplot}" >/dev/null || { echo "no gnuplot: skipped"; exit 77; }
fx="$root/tests/fixtures/conv2d_small.csv"

# expect CODE NEEDLE ARGS...: harness ARGS exits CODE with NEEDLE in its output
expect_cmd=("$h")
expect_name=""
expect_show=tail
# the data rows of a chart's .dat (its comment lines name the file)
rows() { grep -v '^#' "$1"; }

echo "== a byte-order mark, CRLF line endings"
expect 0 "6 cases x 4 variants" plot "$fx" --out "$tmp/plain.png"
case "$out" in *"case 4 conv2d_pad_z_out: mismatch: first check:"*) ;; *) fail "a timed mismatch's reason: $out" ;; esac
{ printf '\xef\xbb\xbf'; sed 's/$/\r/' "$fx"; } >"$tmp/bom.csv"
expect 0 "6 cases x 4 variants" plot "$tmp/bom.csv" --out "$tmp/bom.png"
diff <(rows "$tmp/plain.dat") <(rows "$tmp/bom.dat") >/dev/null || fail "BOM + CRLF: other data than the plain file"
diff <(rows "$tmp/plain-speedup.dat") <(rows "$tmp/bom-speedup.dat") >/dev/null || fail "BOM: other speed-ups"
expect 0 "compare bom by variant" compare "$tmp/bom.csv" --by variant --out "$tmp/bomc.png"

# reordered columns: plot finds its columns by name; compare says why a define is not one
python3 -c '
import csv, sys
rows = list(csv.reader(open(sys.argv[1])))
csv.writer(open(sys.argv[2], "w", newline=""), lineterminator="\n").writerows(r[::-1] for r in rows)' \
  "$root/tests/fixtures/accum_dtype.csv" "$tmp/rev.csv"
expect 0 "cases x" plot "$tmp/rev.csv" --out "$tmp/rev.png"
expect 2 "--by ACCUM_DTYPE: the columns are not in the order harness run writes them" compare "$tmp/rev.csv" \
  --by ACCUM_DTYPE --out "$tmp/revc.png"
expect 0 "compare rev by variant" compare "$tmp/rev.csv" --by variant --out "$tmp/revc.png"

head -1 "$fx" >"$tmp/hdr.csv"
expect 2 "hdr.csv: no rows (a header only): nothing to compare" compare "$tmp/hdr.csv" --by variant --out "$tmp/h.png"
expect 2 "hdr.csv: no rows: nothing to plot" plot "$tmp/hdr.csv" --out "$tmp/h.png"

echo "== files joined with cat"
cat "$fx" "$fx" >"$tmp/twice.csv"
expect 0 "1 line repeating the header left out" plot "$tmp/twice.csv" --out "$tmp/twice.png"
case "$out" in *"case case"*|*"7 cases"*) fail "the repeated header drawn as a case: $out" ;; esac
case "$out" in *"repeat a (case, variant) seen before"*) ;; *) fail "the second copy's rows not counted: $out" ;; esac
diff <(rows "$tmp/plain.dat") <(rows "$tmp/twice.dat") >/dev/null || fail "joined twice: other data than once"
expect 0 "1 line repeating the header left out" compare "$tmp/twice.csv" --by variant --out "$tmp/twicec.png"
printf 'case,n,label,variant,status,reason,time_median_ms\n0,1,n:1,relu,ok,,0.5\n' >"$tmp/relu.csv"
cat "$fx" "$tmp/relu.csv" >"$tmp/two_configs.csv"
expect 2 "two_configs.csv:26: a second header, with other columns than the first" plot "$tmp/two_configs.csv" \
  --out "$tmp/tc.png"
expect 2 "a second header" compare "$tmp/two_configs.csv" --by variant --out "$tmp/tcc.png"

expect 2 "plot takes one results file (plot each on its own; harness compare $fx $tmp/relu.csv compares two runs)" \
  plot "$fx" "$tmp/relu.csv"

echo "== two configs' cases with the same ids"
printf 'case,label,variant,status,reason,time_median_ms\n0,A,v,ok,,1\n1,B,v,ok,,2\n0,C,w,ok,,3\n1,D,w,ok,,4\n' \
  >"$tmp/ids.csv"
expect 0 "(4 cases x 2 variants" plot "$tmp/ids.csv" --out "$tmp/ids.png"
[ "$(rows "$tmp/ids.dat" | grep -c .)" = 4 ] || fail "ids: not 4 cases drawn: $(cat "$tmp/ids.dat")"
rows "$tmp/ids.dat" | grep -q "	0	C	" || fail "ids: case 0 of w not under its own label C"

echo "== an ok row without a time; a single case"
printf 'case,label,variant,status,reason,time_median_ms\n0,A,v,ok,,1\n0,A,w,ok,,\n1,B,v,ok,,2\n1,B,w,mismatch,,nan\n' \
  >"$tmp/notime.csv"
expect 0 "case 0 w: ok but no time (time_median_ms empty)" plot "$tmp/notime.csv" --out "$tmp/nt.png"
case "$out" in *"case 1 w: mismatch but no time (time_median_ms 'nan')"*) ;; *) fail "nan time: $out" ;; esac
printf 'case,label,variant,kernel,backend,status,reason,time_median_ms\n0,A,v,k,emu,ok,,1\n0,A,w,k,emu,ok,,nan\n1,B,v,k,emu,ok,,2\n1,B,w,k,emu,ok,,4\n' \
  >"$tmp/notime2.csv"
expect 0 "no time: 1 ok or mismatch row without a median time above 0 (e.g. case 0 w: time_median_ms 'nan')" \
  compare "$tmp/notime2.csv" --by variant --out "$tmp/nt2.png"
printf 'case,label,variant,status,reason,time_median_ms\n0,A,v,ok,,1\n' >"$tmp/one.csv"
expect 0 "median time per case (1 case x 1 variant, sorted by v)" plot "$tmp/one.csv" --out "$tmp/one.png"

echo "== every row failed; the sort variant without a time in half the cases"
printf 'case,label,variant,status,reason,time_median_ms\n0,A,v,launch_error,"boom, twice",\n0,A,w,compile_error,x,\n1,B,v,launch_error,y,\n1,B,w,compile_error,z,\n' \
  >"$tmp/failed.csv"
expect 0 "median time per case (2 cases x 2 variants, sorted by v)" plot "$tmp/failed.csv" --out "$tmp/failed.png"
case "$out" in *"no speed-up chart: the baseline v has no time in any case"*) ;; *) fail "all failed: speed-up: $out" ;; esac
case "$out" in *"case 0 v: launch_error: boom, twice"*) ;; *) fail "all failed: the reason: $out" ;; esac
grep -q "^# panel 1: 2 cases, none with a v time: in file order" "$tmp/failed.dat" ||
  fail "all failed: not one panel in file order: $(grep panel "$tmp/failed.dat")"
[ -e "$tmp/failed-speedup.png" ] && fail "all failed: an empty speed-up chart was drawn"
{
  echo 'case,label,variant,status,reason,time_median_ms'
  for c in 0 1 2 3; do echo "$c,L$c,v,ok,,$((c + 1))"; [ $c -ge 2 ] && echo "$c,L$c,w,launch_error,r," || echo "$c,L$c,w,ok,,2"; done
} >"$tmp/half.csv"
expect 0 "faster and slower half (4 cases x 2 variants" plot "$tmp/half.csv" --sort w --out "$tmp/half.png"
grep -q "^# panel 2: Slower half: 2 cases without a w time" "$tmp/half.dat" ||
  fail "half: 'the 0 cases with the highest': $(grep panel "$tmp/half.dat")"
{
  echo 'case,label,variant,status,reason,time_median_ms'
  for c in 0 1 2 3; do echo "$c,L$c,v,ok,,$((c + 1))"; [ $c = 3 ] && echo "$c,L$c,w,skipped,r," || echo "$c,L$c,w,ok,,1"; done
} >"$tmp/some.csv"
expect 0 "faster and slower half" plot "$tmp/some.csv" --sort w --out "$tmp/some.png"
grep -q "^# panel 2: Slower half: the 1 case with the highest w time, then 1 without one" "$tmp/some.dat" ||
  fail "some: $(grep panel "$tmp/some.dat")"

echo "== --out: a folder, no extension, another extension"
expect 0 "$tmp/dir/one.png" plot "$tmp/one.csv" --out "$tmp/dir/"
[ -s "$tmp/dir/one.png" ] && [ ! -e "$tmp/dir/.dat" ] || fail "--out DIR/: not DIR/one.png: $(ls -a "$tmp/dir")"
expect 0 "$tmp/dir/bom.svg" plot "$tmp/bom.csv" --out "$tmp/dir" --format svg
[ -s "$tmp/dir/bom-speedup.svg" ] || fail "--out DIR: no DIR/bom-speedup.svg"
expect 0 "$tmp/noext: median time" plot "$tmp/bom.csv" --out "$tmp/noext" --format pdf
# the main chart was named as given, its sibling had .pdf added
[ -s "$tmp/noext-speedup" ] && [ ! -e "$tmp/noext-speedup.pdf" ] || fail "--out without extension: $(ls "$tmp")"
expect 2 "--out $tmp/c.jpg: a chart ends in .png, .svg or .pdf" plot "$tmp/one.csv" --out "$tmp/c.jpg"
expect 2 "does not end in .svg (--format svg)" plot "$tmp/one.csv" --out "$tmp/c.png" --format svg
expect 0 "chart: $tmp/dir/bom-by-variant.png" compare "$tmp/bom.csv" --by variant --out "$tmp/dir/"
expect 2 "a chart ends in .png, .svg or .pdf" compare "$tmp/bom.csv" --by variant --out "$tmp/c.jpg"

echo "== a training curve: --sort and --baseline refused, --log said"
printf 'split,epoch,step,images,loss,accuracy,images_per_s,elapsed_s\ntrain,1,10,40,0.5,75.0,,0.1\ntrain,2,20,80,0.1,100.0,,0.2\n' \
  >"$tmp/curve.csv"
expect 0 "training loss and accuracy against the step" plot "$tmp/curve.csv" --out "$tmp/curve.png"
expect 2 "is a training curve (harness train): --sort applies to a results file" plot "$tmp/curve.csv" --sort x \
  --out "$tmp/curve.png"
expect 2 "--baseline applies to a results file" plot "$tmp/curve.csv" --baseline x --out "$tmp/curve.png"
expect 0 "the loss axis of a training curve is always logarithmic" plot "$tmp/curve.csv" --log --out "$tmp/curve.png"

echo "== compare of several runs"
# run b: case 0 twice as slow, case 1 missing, a case 9 of its own
hdr='case,n,label,variant,kernel,backend,device,arch,status,reason,time_median_ms,max_abs_err'
printf '%s\n0,1,n:1,v,k,emu,cpu,emu,ok,,1,0\n1,7,n:7,v,k,emu,cpu,emu,ok,,2,0\n2,9,n:9,v,k,emu,cpu,emu,skipped,big,,\n' \
  "$hdr" >"$tmp/a.csv"
printf 'case,n,label,variant,kernel,backend,device,arch,status,reason,time_median_ms,max_abs_err,extra\n0,1,n:1,v,k,emu,cpu,emu,ok,,2,0,x\n2,9,n:9,v,k,emu,cpu,emu,skipped,big,,,x\n9,5,n:5,v,k,emu,cpu,emu,ok,,1,0,x\n' \
  >"$tmp/b.csv"
expect 0 "compare a-vs-b by run (baseline a): 2 cases" compare "$tmp/a.csv" "$tmp/b.csv" --out "$tmp/ab.png"
case "$out" in *"verdict: b: 2.00x slower than a (geometric mean over 1 case)"*) ;; *) fail "a vs b verdict: $out" ;; esac
case "$out" in *"not compared: 2 groups with a single run value"*) ;; *) fail "a vs b: the unpaired cases: $out" ;; esac
[ -s "$tmp/ab.png" ] || fail "a vs b: no chart"
expect 0 "verdict: b: 2.00x slower than a" compare "$tmp/a.csv" "$tmp/b.csv" --quiet --out "$tmp/abq.png"
case "$out" in *"case 0: n:1"*|*"big"*) fail "compare --quiet printed the tables or the excluded list: $out" ;; esac
case "$out" in *"  2 skipped (the CSV's reason column)"*) ;; *) fail "compare --quiet: no count of excluded: $out" ;; esac
expect 0 "verdict: a#2: as fast as a" compare "$tmp/a.csv" "$tmp/a.csv" --out "$tmp/aa.png"
expect 0 "verdict: a: 2.00x faster than b" compare "$tmp/a.csv" "$tmp/b.csv" --baseline b --out "$tmp/ab2.png"
expect 2 "are not runs of one config: the columns that say what was run differ" compare "$tmp/a.csv" "$fx" \
  --out "$tmp/x.png"
printf '%s\n5,1,n:1,w,k,emu,cpu,emu,ok,,1,0\n' "$hdr" >"$tmp/w.csv"
expect 2 "the runs have no case and variant in common" compare "$tmp/a.csv" "$tmp/w.csv" --out "$tmp/x.png"
expect 2 "missing.csv: no such file" compare "$tmp/a.csv" "$tmp/missing.csv"

echo "== merge --quiet"
cfg="$root/configs/relu_sweep.json"
for i in 0 1; do
  "$h" run "$cfg" --backend emu --quick --shard $i/2 --out "$tmp/s$i.csv" --quiet >/dev/null 2>&1 ||
    fail "shard $i/2 did not run"
done
expect 0 "merged 2 shard files of 2: 8 rows" merge "$tmp/m.csv" "$tmp/s0.csv" "$tmp/s1.csv" --quiet
case "$out" in *"geomean"*|*"fastest"*) fail "merge --quiet printed the verdict table: $out" ;; esac
expect 0 "fastest correct variant per case" merge "$tmp/m2.csv" "$tmp/s0.csv" "$tmp/s1.csv"
# a folder that does not exist yet is made (it was "cannot create ...sort.tmp")
expect 0 "8 rows into $tmp/new/deep/m.csv" merge "$tmp/new/deep/m.csv" "$tmp/s0.csv" "$tmp/s1.csv" --quiet
# one file given twice is one input (each of its rows was 'given twice', and
# the line said "merged 3 shard files of 2")
expect 0 "merged 2 shard files of 2: 8 rows" merge "$tmp/m3.csv" "$tmp/s0.csv" "$tmp/s1.csv" "$tmp/./s0.csv" --quiet
case "$out" in *"shard 0/2 is given more than once ($tmp/./s0.csv again); its rows count once"*) ;; *) fail "twice: $out" ;; esac
case "$out" in *"the first is kept"*) fail "twice: every row reported: $out" ;; esac

echo "== --out a symbolic link: the chart is drawn into the file it names, the link stays"
mkdir -p "$tmp/charts"
: >"$tmp/charts/kept.png"
ln -sf "$tmp/charts/kept.png" "$tmp/link.png"
expect 0 "6 cases x 4 variants" plot "$fx" --out "$tmp/link.png"
[ -L "$tmp/link.png" ] || fail "plot replaced the link $tmp/link.png with a file"
[ "$(head -c 4 "$tmp/charts/kept.png" | od -An -c | tr -d ' ')" = '211PNG' ] || fail "no PNG in the file the link names"

finish
