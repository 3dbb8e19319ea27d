# Written by hetcast sweep. Run: gnuplot wu-multicast-large-fast.gp
if (!exists("outfile")) outfile = 'docs/figures/wu-multicast-large-fast.svg'
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
set label 99 'model=nonblocking overhead=8e-05:4e-04 per-byte=1e-10:1e-08 classes=4 latency=0 bandwidth=1.25e+08 messages=large sources=0.05:0.5 dests=0.1:0.9' at screen 0.01,0.015 font ',10'
$completion << EOD
n "lower bound" "fef" "ecf" "wr" "wrp"
8 0.03241894255454313 0.0808864529251693 0.055407702833032334 0.05630601540899624 0.048035544194966306
16 0.04845168461740828 0.18374806172851355 0.09347042871785424 0.09636381566116875 0.07764247666219264
24 0.06158250014513133 0.3032903259155562 0.1268328712466116 0.12369850611738033 0.09846480463398027
32 0.07524149028328457 0.40771225845371056 0.1516117714131761 0.146109244913129 0.11530953036677499
40 0.0952936867823462 0.636128329726303 0.1899672311572693 0.18251915013842276 0.14161344057964703
48 0.1017398801803507 0.7636208323409204 0.20433156924628612 0.19340097604357243 0.15079912034593923
56 0.1211592954155493 1.0226070086689971 0.23928135284841923 0.2256906702185993 0.17482145763330098
64 0.13581945763861727 1.3325818698916374 0.26767277507126325 0.2531688492333647 0.19531495724971382
EOD
set title 'Wu 5.2: multiple multicast, large messages, fast links'
set ylabel 'mean completion time (s)'
plot for [i=3:6] $completion using 1:i with linespoints pointsize 0.7, \
     $completion using 1:2 with lines dashtype 2 linewidth 2 linecolor rgb 'black' title 'lower bound'
