# Written by hetcast sweep. Run: gnuplot wu-multicast-small-slow.gp
if (!exists("outfile")) outfile = 'docs/figures/wu-multicast-small-slow.svg'
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
set label 99 'model=nonblocking overhead=8e-05:4e-04 per-byte=1e-10:1e-08 classes=4 latency=0 bandwidth=19375000 messages=small(1:1024) sources=0.05:0.5 dests=0.1:0.9' at screen 0.01,0.015 font ',10'
$completion << EOD
n "lower bound" "fef" "ecf" "wr" "wrp"
8 0.7474120233058053 1.8947306307713738 1.3068268766423556 1.337050797191115 1.2130137228131215
16 1.300195385817128 5.0368353769217045 2.343119915874549 2.2967393033791446 2.076918773173175
24 1.7094311910399413 9.002099955262503 3.20483701654044 2.959858756946355 2.7119816081613513
32 2.1408939812365797 13.33023652274124 3.987621717566179 3.6057633023987394 3.3354130978252825
40 2.793736227527879 20.831231466652028 5.155458522600822 4.620771025819744 4.332648393559852
48 2.966097577192456 27.606007553358783 5.610311378465844 4.969797091956237 4.623110332727155
56 3.6847779792936026 38.156435672859374 6.890058181721104 6.099431926040583 5.721648189633258
64 4.052753727130574 48.842969317816696 7.545005081578753 6.646253200740519 6.265484888324367
EOD
set title 'Wu 5.2: multiple multicast, small messages, slow links'
set ylabel 'mean completion time (ms)'
plot for [i=3:6] $completion using 1:i with linespoints pointsize 0.7, \
     $completion using 1:2 with lines dashtype 2 linewidth 2 linecolor rgb 'black' title 'lower bound'
