# Written by hetcast sweep. Run: gnuplot wu-multicast-hybrid-fast.gp
if (!exists("outfile")) outfile = 'docs/figures/wu-multicast-hybrid-fast.svg'
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
set label 99 'model=nonblocking overhead=8e-05:4e-04 per-byte=1e-10:1e-08 classes=4 latency=0 bandwidth=1.25e+08 messages=hybrid(1:1024) sources=0.05:0.5 dests=0.1:0.9' at screen 0.01,0.015 font ',10'
$completion << EOD
n "lower bound" "fef" "ecf" "wr" "wrp"
8 19.365324209742557 42.5107001992912 30.940759101968236 31.381240538942244 28.447819951479136
16 33.556760312491136 108.54042377141361 65.56105283769546 64.87563468806918 58.03994287429415
24 42.17361265456127 187.0424728572923 90.16517446872997 87.21773328073581 74.36731375230853
32 47.535662675949496 234.49181472274293 102.23184157953456 97.60542226302478 84.34851398239338
40 58.49886660771029 364.1023828978224 129.837568054399 119.49931690481341 101.79642196772168
48 62.40032227225681 441.00640936513986 143.21341422377222 129.137300454079 108.81124052108137
56 73.31574819089134 613.382008507292 162.26810341462016 149.16705195090526 124.28602025804084
64 82.19226827282561 790.8445140907322 187.30759701894152 163.98260139814727 135.46585395490231
EOD
set title 'Wu 5.2: multiple multicast, hybrid messages, fast links'
set ylabel 'mean completion time (ms)'
plot for [i=3:6] $completion using 1:i with linespoints pointsize 0.7, \
     $completion using 1:2 with lines dashtype 2 linewidth 2 linecolor rgb 'black' title 'lower bound'
