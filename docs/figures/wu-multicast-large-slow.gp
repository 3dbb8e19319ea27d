# Written by hetcast sweep. Run: gnuplot wu-multicast-large-slow.gp
if (!exists("outfile")) outfile = 'docs/figures/wu-multicast-large-slow.svg'
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
set label 99 'model=nonblocking overhead=8e-05:4e-04 per-byte=1e-10:1e-08 classes=4 latency=0 bandwidth=19375000 messages=large sources=0.05:0.5 dests=0.1:0.9' at screen 0.01,0.015 font ',10'
$completion << EOD
n "lower bound" "fef" "ecf" "wr" "wrp"
8 0.09448389083969998 0.24488615153113677 0.15417156751001795 0.1592629910633107 0.11392871002734571
16 0.10882252003471818 0.49133141773142797 0.2495581351660636 0.2654369858404793 0.16661221059799602
24 0.1203626787069506 0.7379431484388261 0.3173556608078736 0.3365570542844317 0.20023820292457858
32 0.13125109087824888 0.9132663713709038 0.3720492291792442 0.3803217381710071 0.22281405833216616
40 0.14775261373455295 1.2475263479416079 0.4497523037082891 0.44620041856661957 0.24813378994225788
48 0.15460167907424877 1.4681657200545721 0.46863130474060855 0.4665756351656487 0.26034905232020406
56 0.17146143676978198 1.7893507220377438 0.5355171811470965 0.5279753895178103 0.2823719025424355
64 0.18567059029038924 2.1362887881454733 0.5821151489857899 0.5608250127262008 0.3035107376418374
EOD
set title 'Wu 5.2: multiple multicast, large messages, slow links'
set ylabel 'mean completion time (s)'
plot for [i=3:6] $completion using 1:i with linespoints pointsize 0.7, \
     $completion using 1:2 with lines dashtype 2 linewidth 2 linecolor rgb 'black' title 'lower bound'
