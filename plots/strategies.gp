# strategies.gp: harness tune --compare-strategies: each strategy's performance
# P(k) against the budget in evaluations (0 = random search's expected best,
# 1 = the optimum), the mean over the compared units.
#
# Set by harness (gnuplot -e), besides those of common.gp:
#   datafile        tab-separated: k, then one column per strategy
#   title, subtitle two title lines
#   ns, sname[ns]   the strategies, in the data file's column order

load gpdir.'/common.gp'

set title title."\n".subtitle font ',12'
set xlabel 'Evaluations'
set ylabel 'Performance relative to random search (0) and the optimum (1)'
set grid xtics ytics lc rgb '#e4e4e4' lt 1
set key outside right top vertical samplen 2 font ',10'
set yrange [-0.5 : 1.05]
set tics out
set datafile missing 'NaN'

plot \
    1 with lines lw 1 dt 2 lc rgb '#000000' title 'optimum', \
    0 with lines lw 1 dt 3 lc rgb '#000000' title 'random search (calculated)', \
    for [s = 1:ns] datafile using 1:(column(s + 1)) with lines lw 2 lc rgb color(s) title sname[s]
