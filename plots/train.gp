# train.gp: harness train's curve (results/train_<task>.csv): the running loss
# (log scale) and accuracy against the training step, one panel each, with the
# test set's loss and accuracy as points where the CSV has them.
#
# Set by harness (gnuplot -e), besides those of common.gp:
#   datafile        tab-separated: index 0 the training rows, index 1 the test
#                   rows; columns step, loss, accuracy (%)
#   ntest           rows in index 1
#   title, subtitle two title lines

load gpdir.'/common.gp'

set multiplot layout 2, 1 title title."\n".subtitle font ',12'
set grid xtics ytics lc rgb '#e4e4e4' lt 1
set key inside right top samplen 2 font ',10'
set tics out
set xlabel 'Step'

set ylabel 'Loss (running mean)'
set logscale y
set format y '%g'
if (ntest > 0) {
    plot datafile index 0 using 1:2 with linespoints lw 2 pt 7 ps 0.5 lc rgb color(1) title 'training', \
         datafile index 1 using 1:2 with points pt 9 ps 1.6 lc rgb color(2) title 'test'
} else {
    plot datafile index 0 using 1:2 with linespoints lw 2 pt 7 ps 0.5 lc rgb color(1) title 'training'
}
unset logscale y
set format y '%g'

set ylabel 'Accuracy (%)'
set yrange [0 : 100]
set key inside right bottom
if (ntest > 0) {
    plot datafile index 0 using 1:3 with linespoints lw 2 pt 7 ps 0.5 lc rgb color(1) title 'training', \
         datafile index 1 using 1:3 with points pt 9 ps 1.6 lc rgb color(2) title 'test'
} else {
    plot datafile index 0 using 1:3 with linespoints lw 2 pt 7 ps 0.5 lc rgb color(1) title 'training'
}
unset multiplot
