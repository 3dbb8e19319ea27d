# Written by hetcast sweep. Run: gnuplot bhat-fig5.gp
if (!exists("outfile")) outfile = 'docs/figures/bhat-fig5.svg'
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
set label 99 'model=blocking latency=1e-05:0.001 bandwidth=1e+07:2e+08 inter-latency=0.001:0.02 inter-bandwidth=10000:50000 size=1e+06' at screen 0.01,0.015 font ',10'
$completion << EOD
n "lower bound" "fnf" "fef" "ecef" "ecef-la" "optimal"
4 24.47042800893688 62.7724750503249 24.478195268387612 24.47817934786449 24.473632557949543 24.473632557949543
8 21.09373597474916 82.74248008788359 21.11020700358369 21.10847055202852 21.1052811337448 21.098310818240304
12 20.471087958997316 95.58761738166085 20.495958783544857 20.489531879627364 20.48744113601047 NaN
16 20.29657782269064 105.41012217598495 20.331552602777897 20.31864373373367 20.317122191408604 NaN
20 20.194185176795497 109.46028755136985 20.23697284553969 20.21886166965169 20.217672445350356 NaN
24 20.144363874982453 113.94182367760622 20.19271598930709 20.17090049757815 20.16973501576485 NaN
28 20.10791473336607 119.7082864563729 20.165406698926656 20.1359414540491 20.134861869238577 NaN
32 20.092756893989602 124.56264072228018 20.15437163527799 20.122892302581718 20.12181332125746 NaN
36 20.084253155582594 126.96987607525435 20.153706052940567 20.11556637586416 20.1150817727721 NaN
40 20.07241314004588 127.86194709472316 20.145766730554534 20.104408561640554 20.103850840173518 NaN
EOD
set title 'Bhat fig. 5: 1 MB broadcast, two distant clusters'
set ylabel 'mean completion time (s)'
set logscale y
plot for [i=3:7] $completion using 1:i with linespoints pointsize 0.7, \
     $completion using 1:2 with lines dashtype 2 linewidth 2 linecolor rgb 'black' title 'lower bound'
