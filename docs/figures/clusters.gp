# Written by hetcast sweep. Run: gnuplot clusters.gp
if (!exists("outfile")) outfile = 'docs/figures/clusters.svg'
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
set label 99 'model=blocking clusters=2:8 global=2:20' at screen 0.01,0.015 font ',10'
$completion << EOD
n "lower bound" "lcf" "lcf-interleaved" "fef" "ecef" "ecef-la" "binomial" "eco"
8 10.844441725374299 22.679911247302492 22.62517281097801 44.668306329992696 24.502530888598812 23.731909818057645 25.86796499083794 43.918306329992696
16 10.796995098897881 20.479428998085048 20.23434942858507 48.67093823234735 25.367522641469506 24.031021623214983 29.908746501874493 45.078322021527384
24 10.834376407695965 19.59575564569532 19.397985069571554 51.44724064197364 24.634724284859267 23.620879606902694 35.178688853783235 44.43243987514483
32 10.995183465939355 20.468016607455088 20.160423639641735 59.63334882657584 27.593941590059654 26.68296318717692 35.73311137839027 50.177080709032055
40 11.076884814019163 19.791945907966515 19.44952160057232 63.83734343178327 26.29332051401413 25.859534632962273 41.5667913210003 49.9120341748314
48 11.467075358443195 21.367468441921222 21.057115343947906 70.23925858415797 28.930684312457856 28.279255258457606 43.95989397268122 53.32209730663685
56 11.294622147450788 20.38944948822633 19.972653692681202 73.71822111516256 28.266264118979706 27.49144991460493 39.62950873663537 51.86915538195655
64 10.875175301333968 19.750991243225762 19.305265199222525 77.01795779028035 26.531593784621887 26.500189676426984 36.51911444727149 49.31717879903363
EOD
set title 'Khuller: broadcast on random clusters, C in 2..20'
set ylabel 'mean completion time (s)'
plot for [i=3:9] $completion using 1:i with linespoints pointsize 0.7, \
     $completion using 1:2 with lines dashtype 2 linewidth 2 linecolor rgb 'black' title 'lower bound'
