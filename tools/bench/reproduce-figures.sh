#!/usr/bin/env bash
# Regenerates the figures of docs/reproduction.md: one `hetcast sweep` per paper figure,
# each writing docs/figures/NAME.csv (the per-n summary), NAME.svg and NAME.gp (the gnuplot
# script behind the SVG). Needs gnuplot for the SVGs (apt-get install gnuplot-nox).
#
#   tools/bench/reproduce-figures.sh [HETCAST_BINARY] [FIGURE...]
#
# With no FIGURE, every figure. Trial counts are modest so that each sweep takes under a
# minute on 2 cores; raise TRIALS_SCALE (default 1) to multiply them.
set -euo pipefail
cd "$(dirname "$0")/../.."
hetcast=${1:-build/tools/hetcast}
shift || true
scale=${TRIALS_SCALE:-1}
out=docs/figures
threads=${THREADS:-2}

sweep() {  # NAME TRIALS TITLE ARGS...
    local name=$1 trials=$(( $2 * scale )) title=$3
    shift 3
    if [ ${#selected[@]} -gt 0 ] && [[ ! " ${selected[*]} " =~ " $name " ]]; then return; fi
    echo "== $name" >&2
    "$hetcast" sweep --trials "$trials" --threads "$threads" --seed 1 \
        --summary-csv "$out/$name.csv" --plot "$out/$name.svg" --title "$title" "$@"
}
selected=("$@")

# Bhat et al. (paper 001) §5
sweep bhat-fig4 1000 "Bhat fig. 4: 1 MB broadcast, random heterogeneous network" \
    --generator bhat --nodes 2:20:2 --algos fnf,fef,ecef,ecef-la,optimal
sweep bhat-fig5 500 "Bhat fig. 5: 1 MB broadcast, two distant clusters" \
    --generator bhat-clusters --nodes 4:40:4 --algos fnf,fef,ecef,ecef-la,optimal --logy
sweep bhat-fig6 200 "Bhat fig. 6: 1 MB multicast in a 100-node system" \
    --generator bhat-multicast --nodes 5:90:5 --algos fnf,fef,ecef,ecef-la,ecef-relay

# Wu et al. (paper 000) §5.1 single broadcast, averaged over every root
sweep wu-broadcast 100 "Wu 5.1: single broadcast, large messages, 1 Gb/s" \
    --generator wu --nodes 8:64:8 --algos fef,ecf,wr,wrp
# §5.2 multiple multicast: three message mixes, fast (1 Gb/s) and slow (155 Mb/s) links
for link in fast slow; do
    for mix in small large hybrid; do
        sweep "wu-multicast-$mix-$link" 200 "Wu 5.2: multiple multicast, $mix messages, $link links" \
            --generator wu-multicast --nodes 8:64:8 --algos fef,ecf,wr,wrp --messages "$mix" --link "$link"
    done
done

# Barchet-Steffenel & Mounié (paper 004) §6: completion and hit rate, 2 to 50 clusters
sweep grid-all 1000 "004 figs. 1-2, 4: broadcast on a grid, all inter-cluster heuristics" \
    --generator grid --nodes 2:50:4 --hit-rate \
    --algos flat-tree,fef,ecef,ecef-la,ecef-lat-min,ecef-lat-max,bottom-up
sweep grid-ecef-like 1000 "004 figs. 3-4: the ECEF-like heuristics only" \
    --generator grid --nodes 2:50:4 --hit-rate --algos ecef,ecef-la,ecef-lat-min,ecef-lat-max
# the same, but a cluster starts its local broadcast as soon as it holds the message
sweep grid-ecef-like-receipt 1000 "004 figs. 3-4, local broadcast from receipt" \
    --generator grid --nodes 2:50:4 --hit-rate --algos ecef,ecef-la,ecef-lat-min,ecef-lat-max --local-start receipt

# Khuller, Kim & Wan (paper 002): LCF against the exact optimum (small) and the others (larger)
sweep clusters-optimal 500 "Khuller: LCF against the optimum, cluster model, C in 2..20" \
    --generator clusters --nodes 4:10 --algos lcf,lcf-interleaved,fef,ecef,ecef-la,binomial,optimal
sweep clusters 200 "Khuller: broadcast on random clusters, C in 2..20" \
    --generator clusters --nodes 8:64:8 --algos lcf,lcf-interleaved,fef,ecef,ecef-la,binomial,eco
