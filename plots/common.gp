# common.gp: the terminal and the colours every harness chart shares; loaded
# first by bars.gp and roofline.gp.
#
# Set by harness (gnuplot -e): term ('png' | 'svg' | 'pdf'), outfile, width and
# height in pixels (pdf: 100 px to the inch).
#
# Text is drawn "noenhanced": variant names are full of underscores, which
# enhanced text would turn into subscripts.

if (term eq 'svg') {
    set terminal svg size width, height fixed font 'sans,11' noenhanced background '#ffffff'
} else {
    if (term eq 'pdf') {
        set terminal pdfcairo size (width / 100.0), (height / 100.0) font 'sans,8' noenhanced
    } else {
        set terminal pngcairo size width, height font 'sans,11' noenhanced background '#ffffff'
    }
}
set output outfile
set datafile separator "\t"
set datafile missing 'NaN'

# Series colours: palette index 0 is the grey of a baseline (cuBLAS, the
# --baseline of compare); 1.. cycle through colours that stay apart for colour-
# blind readers. Red is kept out of the cycle: it marks mismatches and failures.
array palette[8] = ['#0072b2', '#e69f00', '#009e73', '#cc79a7', '#56b4e9', '#8c564b', '#f0e442', '#332288']
color(i) = (i == 0) ? '#888888' : palette[(int(i) - 1) % 8 + 1]
mark_red = '#d00000'
mark_grey = '#707070'
