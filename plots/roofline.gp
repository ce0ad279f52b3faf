# roofline.gp: GFLOP/s against arithmetic intensity (FLOP per byte), log-log,
# one point series per variant, with the compute roof(s) and the bandwidth roof.
# Drawn by `harness plot`.
#
# Set by harness (gnuplot -e), besides those of common.gp:
#   datafile     tab-separated, one block (index) per series; columns: intensity,
#                GFLOP/s, mark (ok | mismatch), case, label
#   title, subtitle, note       three title lines
#   ns, sname[ns], scolor[ns]   series names and palette indices
#   npk, pk[npk]                compute peaks in GFLOP/s (fp32, fp64, ...)
#   bw                          peak bandwidth in GB/s (NaN: unknown)
#   xmin, xmax, ymin, ymax      ranges
#   has_mis                     mismatching points exist (ringed in red)

load gpdir.'/common.gp'

array ptypes[6] = [7, 5, 9, 13, 11, 15]
ptype(s) = ptypes[(s - 1) % 6 + 1]
# The roof: the lower of the compute peak P and bandwidth x intensity.
roof(x, P) = (P != P) ? bw * x : (bw != bw) ? P : (bw * x < P ? bw * x : P)

set title title."\n".subtitle."\n".note font ',12'
set logscale xy
set xrange [xmin : xmax]
set yrange [ymin : ymax]
set format x '%g'
set format y '%g'
set xlabel 'Arithmetic intensity (FLOP / byte)'
set ylabel 'Throughput (GFLOP/s)'
set grid xtics ytics mxtics mytics lc rgb '#e4e4e4' lt 1
set key outside right top vertical samplen 2 font ',10'
set samples 600
set tics out

plot \
    for [k = 1:npk] roof(x, pk[k]) with lines lw 2 dt k lc rgb '#000000' \
        title sprintf('roof: %.0f GFLOP/s%s', pk[k], bw == bw ? sprintf(', %.0f GB/s', bw) : ''), \
    for [k = 1:(npk == 0 && bw == bw ? 1 : 0)] bw * x with lines lw 2 lc rgb '#000000' \
        title sprintf('bandwidth roof: %.0f GB/s', bw), \
    for [s = 1:ns] datafile index (s - 1) using 1:2 with points pt ptype(s) ps 1.4 lc rgb color(scolor[s]) title sname[s], \
    for [s = 1:ns] datafile index (s - 1) using 1:(strcol(3) eq 'mismatch' ? $2 : NaN) \
        with points pt 6 ps 3 lw 2 lc rgb mark_red notitle, \
    for [k = 1:has_mis] keyentry with points pt 6 ps 2 lw 2 lc rgb mark_red title 'red ring: mismatch (wrong result)'
