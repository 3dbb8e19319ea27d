# Written by hetcast sweep. Run: gnuplot clusters-optimal.gp
if (!exists("outfile")) outfile = 'docs/figures/clusters-optimal.svg'
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
n "lower bound" "lcf" "lcf-interleaved" "fef" "ecef" "ecef-la" "binomial" "optimal"
4 11.009948497910802 20.48928332515185 20.491283325151848 29.158144057758296 20.45328332515185 20.45328332515185 20.843352703921706 20.45328332515185
5 11.108321368600343 26.8744479245694 26.878447924569397 35.69738490639542 27.51269746824509 27.105657675736726 30.398361893369078 26.846447924569397
6 10.740448960176666 24.290711631039745 24.240711631039744 39.51874887088451 25.579885699618185 24.529278515127512 28.659541497464055 24.19038267767595
7 10.978556255472212 24.55931144609922 24.54731144609922 43.552931639367074 25.86360751855856 25.353152069490026 28.230011257132045 24.41731144609922
8 10.74559047967366 23.444334340386145 23.408438965856355 45.874360048543245 25.0333035029433 24.3434156612533 26.45800968152659 23.280438965856355
9 10.96706904868423 23.943594828514215 23.919594828514214 47.47506187358057 28.11702165177813 25.481636999809677 36.17869882581168 23.729594828514223
10 10.928671118138785 22.791103059423914 22.802243002714008 47.43190615517929 26.844227307531316 24.315003512012034 35.53932631100866 22.530807874091565
EOD
set title 'Khuller: LCF against the optimum, cluster model, C in 2..20'
set ylabel 'mean completion time (s)'
plot for [i=3:9] $completion using 1:i with linespoints pointsize 0.7, \
     $completion using 1:2 with lines dashtype 2 linewidth 2 linecolor rgb 'black' title 'lower bound'
