# Written by hetcast sweep. Run: gnuplot grid-ecef-like-receipt.gp
if (!exists("outfile")) outfile = 'docs/figures/grid-ecef-like-receipt.svg'
set terminal svg size 960,900 dynamic noenhanced font 'Helvetica,13' background rgb 'white'
set output outfile
set key outside right top autotitle columnheader
set grid
set xlabel 'clusters'
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
set label 99 'model=blocking latency=0.001:0.015 gap=0.1:0.6 local=0.02:3 local-start=receipt' at screen 0.01,0.015 font ',10'
$completion << EOD
n "lower bound" "ecef" "ecef-la" "ecef-lat-min" "ecef-lat-max"
2 2.188192841762319 2.188192841762319 2.188192841762319 2.188192841762319 2.188192841762319
6 2.859800549844467 3.0181891092545463 3.0122404537312275 3.054713758331463 2.9173470729876585
10 3.050762589626456 3.2673960275146574 3.2644594854969435 3.337005926207126 3.1495503550543615
14 3.1017638017180724 3.351943754713874 3.345583570670458 3.4333619390719963 3.238073292822067
18 3.1458252847803543 3.4369469403895456 3.4324576083866774 3.5174073384768434 3.328927111640279
22 3.1698909236720967 3.4770111108980517 3.475413444351587 3.5722624259018425 3.3925776277743083
26 3.1846076414070748 3.5097838455808787 3.499002130037866 3.60331883123632 3.4401099424697974
30 3.200020599207413 3.5468701724747036 3.5397536975337136 3.646255537646679 3.4939488693070793
34 3.2090300588269915 3.573638487209531 3.568567856698761 3.6726949997944813 3.539791298781095
38 3.214772348926133 3.5842547156532447 3.577072437048089 3.684801656928072 3.5568769663415005
42 3.215578395370867 3.601370794960158 3.5983591710369347 3.7039863370972146 3.584085466447907
46 3.2274667044457823 3.627681108021988 3.6224539219771024 3.7253125367543176 3.6269842953808147
50 3.227807302085365 3.633875688293053 3.6286493088558975 3.7396108055753774 3.647777581855602
EOD
$hits << EOD
n "ecef" "ecef-la" "ecef-lat-min" "ecef-lat-max"
2 100 100 100 100
6 34.9 36.6 30.599999999999998 78.7
10 22 22.3 13.8 77.10000000000001
14 17 20.4 8 71.5
18 17.8 17.9 8.4 65.8
22 18.9 20.9 6.1 61.199999999999996
26 19.400000000000002 25.1 6.5 56.2
30 21.5 25.7 6 51.800000000000004
34 24.099999999999998 28.1 5.3 46.7
38 25 28.999999999999996 6.2 45.2
42 24.4 29.2 5.5 43.5
46 24.4 33.4 6.9 37.9
50 30.9 34.2 4.1000000000000005 33.900000000000006
EOD
set multiplot layout 2,1
set title '004 figs. 3-4, local broadcast from receipt'
set ylabel 'mean completion time (s)'
plot for [i=3:6] $completion using 1:i with linespoints pointsize 0.7, \
     $completion using 1:2 with lines dashtype 2 linewidth 2 linecolor rgb 'black' title 'lower bound'
unset logscale y
set title 'hit rate: share of trials matching the best of all algorithms run'
set ylabel 'hit rate (%)'
set yrange [0:105]
plot for [i=2:5] $hits using 1:i with linespoints pointsize 0.7
unset multiplot
