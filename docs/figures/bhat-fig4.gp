# Written by hetcast sweep. Run: gnuplot bhat-fig4.gp
if (!exists("outfile")) outfile = 'docs/figures/bhat-fig4.svg'
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
set label 99 'model=blocking latency=1e-05:0.001 bandwidth=10000:2e+08 size=1e+06' at screen 0.01,0.015 font ',10'
$completion << EOD
n "lower bound" "fnf" "fef" "ecef" "ecef-la" "optimal"
2 69.31363201975734 69.31363201975734 69.31363201975734 69.31363201975734 69.31363201975734 69.31363201975734
4 17.272470261791092 48.69112036998515 24.15885341263148 22.941614356594087 22.023775506324384 21.05341499720955
6 16.304177518487236 80.13766092729401 29.62544979298469 24.372606275343934 23.70798983353321 22.059297445848717
8 16.064399385741545 160.28092211599403 35.63719119676824 26.427033651166177 25.78306858645506 23.20940744298465
10 15.523576279582848 184.17121997917894 40.08737848897521 27.073931311716034 26.600785457307317 24.73840053819705
12 15.298717714437771 86.44641614553734 44.78852966529153 27.98266343786878 27.404433380007156 NaN
14 15.05548811181666 133.81754511690636 49.170089843973955 28.85231973685127 28.277723393725793 NaN
16 14.824409506019844 118.77867572069381 52.88251935493376 29.812930226598642 29.471368089037046 NaN
18 14.720718961708004 124.84358755205108 56.79439611774964 30.358117678493524 30.1604035371711 NaN
20 14.53490487891873 131.45053070727084 60.37762559934454 30.57296305633664 30.29613740499974 NaN
EOD
set title 'Bhat fig. 4: 1 MB broadcast, random heterogeneous network'
set ylabel 'mean completion time (ms)'
plot for [i=3:7] $completion using 1:i with linespoints pointsize 0.7, \
     $completion using 1:2 with lines dashtype 2 linewidth 2 linecolor rgb 'black' title 'lower bound'
