# Written by hetcast sweep. Run: gnuplot wu-multicast-hybrid-slow.gp
if (!exists("outfile")) outfile = 'docs/figures/wu-multicast-hybrid-slow.svg'
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
set label 99 'model=nonblocking overhead=8e-05:4e-04 per-byte=1e-10:1e-08 classes=4 latency=0 bandwidth=19375000 messages=hybrid(1:1024) sources=0.05:0.5 dests=0.1:0.9' at screen 0.01,0.015 font ',10'
$completion << EOD
n "lower bound" "fef" "ecf" "wr" "wrp"
8 0.05890199377905447 0.12560181165142711 0.08060524423955627 0.08486093839538066 0.06997882830620913
16 0.08766687828404109 0.2888340977701577 0.16930226871273593 0.17040083067459455 0.13188025672941883
24 0.09867414836633749 0.4524593002833517 0.22651250377205076 0.22940894008513443 0.16681456791827856
32 0.1050137778510918 0.5290126641040005 0.24951297757164984 0.25809612118268643 0.1891341549545861
40 0.11532043879831129 0.7454040690849684 0.3124039237398148 0.3110410061101302 0.21367342219505253
48 0.11823685168543116 0.8638321450229448 0.3385317646543817 0.33371397113485196 0.225223309286902
56 0.1274625450793764 1.09476608795956 0.37552267027511654 0.3746953859364283 0.24417561679946195
64 0.1360435926486492 1.3016875741291358 0.4206026653231754 0.4027354928127279 0.257207233392878
EOD
set title 'Wu 5.2: multiple multicast, hybrid messages, slow links'
set ylabel 'mean completion time (s)'
plot for [i=3:6] $completion using 1:i with linespoints pointsize 0.7, \
     $completion using 1:2 with lines dashtype 2 linewidth 2 linecolor rgb 'black' title 'lower bound'
