# Written by hetcast sweep. Run: gnuplot wu-multicast-small-fast.gp
if (!exists("outfile")) outfile = 'docs/figures/wu-multicast-small-fast.svg'
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
set label 99 'model=nonblocking overhead=8e-05:4e-04 per-byte=1e-10:1e-08 classes=4 latency=0 bandwidth=1.25e+08 messages=small(1:1024) sources=0.05:0.5 dests=0.1:0.9' at screen 0.01,0.015 font ',10'
$completion << EOD
n "lower bound" "fef" "ecf" "wr" "wrp"
8 0.7257547322189398 1.8412673751443003 1.2658098385933207 1.294617153713608 1.180941301303932
16 1.2821700633489863 4.905867058034619 2.2888396994479168 2.228819878708262 2.028436800552767
24 1.6898852921189598 8.831671319609958 3.1590469805785926 2.8951962662502506 2.6864360989243092
32 2.123609683236431 13.179708407127553 3.941497850039382 3.510287375327697 3.280752552745278
40 2.778580389857789 20.46426934610961 5.081241693096271 4.513138248132188 4.264664878083281
48 2.951556372706627 27.163046802088573 5.566077050850719 4.830837605278041 4.583619457839875
56 3.6725114509361276 37.93184899933525 6.808148189650216 5.950973048684946 5.676684766860991
64 4.040431732443263 48.220062958467416 7.473799718995292 6.524511636788893 6.2315011451233095
EOD
set title 'Wu 5.2: multiple multicast, small messages, fast links'
set ylabel 'mean completion time (ms)'
plot for [i=3:6] $completion using 1:i with linespoints pointsize 0.7, \
     $completion using 1:2 with lines dashtype 2 linewidth 2 linecolor rgb 'black' title 'lower bound'
