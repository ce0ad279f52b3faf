# bars.gp: grouped bars, one group per case and one bar per series, in 1-3
# panels stacked vertically. Drawn by `harness plot` (times, speed-up) and
# `harness compare`.
#
# Set by harness (gnuplot -e), besides those of common.gp:
#   datafile     tab-separated, one block (index) per panel; columns: pos, case,
#                label, then per series s: value, lo, hi, mark at 4s, 4s+1, 4s+2, 4s+3
#   title, subtitle, note (three title lines; note may be ''), xlabel
#   ns, sname[ns], scolor[ns]          series names and palette indices
#   np, and per panel p: ptitle, pylabel, plog, pymin, pymax (y range), pn (cases),
#       pwhisk (draw lo..hi), phas/phval/phtitle (a dashed reference line)
#   has_mis, has_fail, has_skip        add these marks to the legend
#   xfont                              point size of the case labels
#
# Marks: ok = solid bar; mismatch = hatched bar with a red outline (a time, but a
# wrong result); failed = red x at the bottom of the axis (no time); skipped or
# none = grey circle at the bottom of the axis. The legend is drawn with
# keyentry so that a series with no ok bar (every row failed) still has one.

load gpdir.'/common.gp'
if (!exists('note')) note = ''

bw = 0.84 / ns                                  # bar width
xpos(s) = column(1) + (s - (ns + 1) / 2.0) * bw
vc(s) = 4 * s                                   # value column of series s
mk(s) = strcol(vc(s) + 3)
# On a log axis a value <= 0 cannot be drawn: it sits on the floor.
val(s, p) = (plog[p] && column(vc(s)) <= 0) ? pymin[p] : column(vc(s))
at_axis = 0.018                                 # marker height, in y2 = [0:1]
# Case labels beyond 48 characters are cut in the middle, so that both ends
# show (compare's labels end in the kernel that tells two groups apart); the
# data file keeps them whole.
short(l) = strlen(l) > 48 ? l[1:22].'...'.l[strlen(l)-22:strlen(l)] : l

set multiplot layout np, 1 title title."\n".subtitle.(note eq '' ? '' : "\n".note) font ',13'
set style fill solid 0.9 border rgb '#303030'
set grid ytics lc rgb '#dddddd' lt 1
xtfont = sprintf(',%d', xfont)
set xtics rotate by 90 right nomirror scale 0 font xtfont
set ytics nomirror
set mytics
set y2range [0:1]
unset y2tics
set key outside top center horizontal Left reverse maxrows 2 samplen 2 spacing 1.1 width 2 font ',10'
set border 3
set tics out

do for [p = 1:np] {
    set title ptitle[p] font ',12'
    set ylabel pylabel[p]
    set format y '%g'
    if (plog[p]) {
        set logscale y
        # Under two decades, decade ticks leave one label: use powers of two.
        if (pymax[p] / pymin[p] < 100) { set ytics 2 ** floor(log(pymin[p]) / log(2)), 2 } else { set ytics auto }
    } else {
        unset logscale y
        set ytics auto
    }
    set yrange [pymin[p] : pymax[p]]
    set xrange [-0.6 : pn[p] - 0.4]
    if (p == np) { set xlabel xlabel } else { unset xlabel }
    plot \
        for [s = 1:ns] keyentry with boxes lc rgb color(scolor[s]) title sname[s], \
        for [s = 1:ns] datafile index (p - 1) using (xpos(s)):(mk(s) eq 'ok' ? val(s, p) : NaN):(bw) \
            with boxes lc rgb color(scolor[s]) notitle, \
        for [s = 1:ns] datafile index (p - 1) using (xpos(s)):(mk(s) eq 'mismatch' ? val(s, p) : NaN):(bw) \
            with boxes fs pattern 4 border lc rgb mark_red lw 1.5 lc rgb color(scolor[s]) notitle, \
        for [k = 1:pwhisk[p]] for [s = 1:ns] datafile index (p - 1) \
            using (xpos(s)):(column(vc(s) + 1)):(0):(column(vc(s) + 2) - column(vc(s) + 1)) \
            with vectors heads size screen 0.003,90 lw 1 lc rgb '#202020' notitle, \
        datafile index (p - 1) using 1:(NaN):xtic(short(strcol(3))) notitle, \
        for [s = 1:ns] datafile index (p - 1) using (xpos(s)):(mk(s) eq 'failed' ? at_axis : NaN) axes x1y2 \
            with points pt 2 ps 1.3 lw 2 lc rgb mark_red notitle, \
        for [s = 1:ns] datafile index (p - 1) using (xpos(s)):(mk(s) eq 'skipped' || mk(s) eq 'none' ? at_axis : NaN) axes x1y2 \
            with points pt 6 ps 1.1 lw 1.5 lc rgb mark_grey notitle, \
        for [k = 1:phas[p]] phval[p] with lines dt 2 lw 1.5 lc rgb '#000000' title phtitle[p], \
        for [k = 1:has_mis] keyentry with boxes fs pattern 4 border lc rgb mark_red lw 1.5 lc rgb '#888888' \
            title 'hatched, red outline: mismatch (timed, wrong result)', \
        for [k = 1:has_fail] keyentry with points pt 2 ps 1.3 lw 2 lc rgb mark_red title 'x at the axis: failed (no time)', \
        for [k = 1:has_skip] keyentry with points pt 6 ps 1.1 lw 1.5 lc rgb mark_grey title 'o at the axis: skipped or not run'
}
unset multiplot
