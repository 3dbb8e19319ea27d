# Written by hetcast sweep. Run: gnuplot wu-broadcast.gp
if (!exists("outfile")) outfile = 'docs/figures/wu-broadcast.svg'
set terminal svg size 960,560 dynamic noenhanced font 'Helvetica,13' background rgb 'white'
set output outfile
set key outside right top autotitle columnheader
set grid
set xlabel 'nodes'
set linetype 1 linecolor rgb '#1f77b4' linewidth 1.5 pointtype 1
set linetype 2 linecolor rgb '#ff7f0e' linewidth 1.5 pointtype 2
set linetype 3 linecolor rgb '#2ca02c' linewidth 1.5 pointtype 3
set linetype 4 linecolor rgb '#d62728' linewidth 1.5 pointtype 4
set linetype 5 linecolor rgb '#9467bd' linewidth 1.5 pointtype 5
set linetype 6 linecolor rgb '#8c564b' linewidth 1.5 pointtype 6
set linetype 7 linecolor rgb '#e377c2' linewidth 1.5 pointtype 7
set linetype 8 linecolor rgb '#7f7f7f' linewidth 1.5 pointtype 8
set linetype 9 linecolor rgb '#bcbd22' linewidth 1.5 pointtype 9
set linetype 10 linecolor rgb '#17becf' linewidth 1.5 pointtype 10
set linetype cycle 10
set bmargin 5
set label 99 'model=nonblocking overhead=8e-05:4e-04 per-byte=1e-10:1e-08 classes=4 latency=0 bandwidth=1.25e+08 messages=large' at screen 0.01,0.015 font ',10'
$completion << EOD
n "lower bound" "fef" "ecf" "wr" "wrp"
8 27.533278110125146 71.37469716934932 51.45881094921898 51.45881094921898 51.45881094921898
16 29.109083695258295 112.62748781734766 67.55273909318026 67.55273909318026 67.55273909318026
24 27.944004466205808 144.8503552602909 71.59741564996601 71.59741564996601 71.59741564996601
32 27.951108405485964 162.39446537156803 73.93433027901253 73.93433027901253 73.93433027901253
40 28.06635673698401 223.609144096883 83.70932007895554 83.70932007895554 83.70932007895554
48 27.074638643784443 228.75710237949846 80.25962887174536 80.25962887174536 80.25962887174536
56 26.924710904396623 249.88268645920826 81.12217158968959 81.12217158968959 81.12217158968959
64 27.910822085844234 280.6593465318311 87.4267848678427 87.4267848678427 87.4267848678427
EOD
set title 'Wu 5.1: single broadcast, large messages, 1 Gb/s'
set ylabel 'mean completion time (ms)'
plot for [i=3:6] $completion using 1:i with linespoints pointsize 0.7, \
     $completion using 1:2 with lines dashtype 2 linewidth 2 linecolor rgb 'black' title 'lower bound'
