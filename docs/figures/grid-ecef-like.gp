# Written by hetcast sweep. Run: gnuplot grid-ecef-like.gp
if (!exists("outfile")) outfile = 'docs/figures/grid-ecef-like.svg'
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
set label 99 'model=blocking latency=0.001:0.015 gap=0.1:0.6 local=0.02:3 local-start=after-send' at screen 0.01,0.015 font ',10'
$completion << EOD
n "lower bound" "ecef" "ecef-la" "ecef-lat-min" "ecef-lat-max"
2 2.188192841762319 2.3462979185523167 2.3462979185523167 2.3462979185523167 2.3462979185523167
6 2.859800549844467 3.1692898366628217 3.1638434100467876 3.220081159623123 3.234496134828773
10 3.050762589626456 3.391368724686604 3.3848059449998615 3.465497556918271 3.4714374070115768
14 3.1017638017180724 3.457155094058431 3.4527412409678577 3.54209416959782 3.547097182960518
18 3.1458252847803543 3.5258234998171263 3.5169277630712013 3.612894126526935 3.603178922858529
22 3.1698909236720967 3.561368333982202 3.55676843663155 3.6559979836810528 3.6525079566909024
26 3.1846076414070748 3.5843659428372723 3.5756339190922586 3.678845113566201 3.6829188465737994
30 3.200020599207413 3.617456499714533 3.607637165655485 3.7155013153442087 3.7215442472874045
34 3.2090300588269915 3.6353348334798956 3.62841740662023 3.737734573838833 3.7488847343087577
38 3.214772348926133 3.6489470932806145 3.641007666222117 3.751727795518048 3.763674914749024
42 3.215578395370867 3.65884791585838 3.656160625374405 3.76092562867596 3.778715049192254
46 3.2274667044457823 3.682421935430873 3.673834692608906 3.779616887769495 3.800403758167735
50 3.227807302085365 3.6886136117526047 3.681914554848222 3.790771197216443 3.814430157915241
EOD
$hits << EOD
n "ecef" "ecef-la" "ecef-lat-min" "ecef-lat-max"
2 100 100 100 100
6 51.800000000000004 52 34.1 33.2
10 42.5 47.099999999999994 19.1 20.4
14 42.699999999999996 45.2 12.5 16.5
18 39.5 46.7 10.6 12.9
22 45.6 46.800000000000004 7.7 10.6
26 43.6 51.4 8.1 7.1
30 43.3 49.4 7.1 7.1
34 44.5 50.2 5.800000000000001 5.3
38 45.800000000000004 50.9 4.3 5.2
42 48.6 48.8 3.9 3.3000000000000003
46 43.9 53.1 3.6999999999999997 4
50 44.4 53.6 2.8000000000000003 2.8000000000000003
EOD
set multiplot layout 2,1
set title '004 figs. 3-4: the ECEF-like heuristics only'
set ylabel 'mean completion time (s)'
plot for [i=3:6] $completion using 1:i with linespoints pointsize 0.7, \
     $completion using 1:2 with lines dashtype 2 linewidth 2 linecolor rgb 'black' title 'lower bound'
unset logscale y
set title 'hit rate: share of trials matching the best of all algorithms run'
set ylabel 'hit rate (%)'
set yrange [0:105]
plot for [i=2:5] $hits using 1:i with linespoints pointsize 0.7
unset multiplot
