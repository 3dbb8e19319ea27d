#!/usr/bin/env bash
# A congested link never makes a healthy member look dead (issue 22, problem 4), on real
# kernel links: a namespace cluster (scripts/netlab) of 3 subnets x 3 hosts behind 20 Mbit/s
# uplinks, hetcastd on each with a 3 s stall timeout; flat pushes from a1 to every other
# host, so that six flows share a1's uplink and megabytes wait in each socket's buffer.
# Every push must land everywhere with nobody failed as silent or stalled, and a `status`
# during a push must see every member up.
# Root only (network namespaces): exits 77, "skipped", otherwise. About a minute.
#   usage: netlab_congestion_test.sh HETCASTD HETCAST SOURCE_DIR
set -euo pipefail

[[ $# -eq 3 ]] || { echo "usage: $0 HETCASTD HETCAST SOURCE_DIR" >&2; exit 2; }
hetcastd=$(realpath "$1")
hetcast=$(realpath "$2")
src=$(realpath "$3")
netlab=$src/scripts/netlab

test_name="netlab congestion test"
# shellcheck source=netlab_lib.sh
source "$(dirname "$0")/netlab_lib.sh"

lab=nlc$$
tmp=$(mktemp -d "${TMPDIR:-/tmp}/hetcast-netlab-congestion.XXXXXX")
netlab_labs=("$lab")
netlab_cleanup "$netlab" "$lab\." "$tmp" "*.out"

{
    echo "name: $lab"
    echo "subnets:"
    for s in a b c; do
        echo "  - name: $s"
        echo "    uplink: 20Mbit"
        echo "    hosts: [{name: ${s}1, nic: 200Mbit}, {name: ${s}2, nic: 200Mbit}, {name: ${s}3, nic: 200Mbit}]"
    done
} > "$tmp/lab.yaml"
"$netlab" up "$tmp/lab.yaml" > "$tmp/up.out" 2>&1 || fail "up: $(cat "$tmp/up.out")"
"$netlab" daemons "$lab" --hetcastd "$hetcastd" --hetcast "$hetcast" --serve "$tmp" --extra 'stall_timeout: 3' \
    > "$tmp/daemons.out" 2>&1 || fail "daemons: $(cat "$tmp/daemons.out")"
"$netlab" info "$lab" --json > "$tmp/info.json"
cfg=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["daemons"]["client_config"])' "$tmp/info.json")
work=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["daemons"]["dir"])' "$tmp/info.json")
out=$("$netlab" run "$lab" a1 timeout 300 "$hetcast" probe --config "$cfg" --seconds 0.3 --repeats 1 --reps 3 2>&1) \
    || fail "probe: $out"
step "9 hosts behind 20 Mbit/s uplinks, hetcastd with stall_timeout 3 s, probed"

hosts=(a2 a3 b1 b2 b3 c1 c2 c3)
for size in 4 8; do
    head -c $((size << 20)) /dev/urandom > "$tmp/flat$size.bin"
    "$netlab" run "$lab" a1 timeout 300 "$hetcast" push "$tmp/flat$size.bin" --config "$cfg" --all --algo flat --quiet \
        > "$tmp/push$size.out" 2>&1 &
    push=$!
    # While the push fills the uplink: every member up, each time.
    asks=0
    while kill -0 "$push" 2>/dev/null && [[ $asks -lt 5 ]]; do
        sleep 1
        kill -0 "$push" 2>/dev/null || break
        out=$("$netlab" run "$lab" a2 "$hetcast" status --config "$cfg" 2>&1) || fail "status during the push: $out"
        grep -q "9 of 9 up" <<< "$out" || fail "status during the $size MiB push: $out"
        asks=$((asks + 1))
    done
    wait "$push" || fail "flat push of $size MiB: $(cat "$tmp/push$size.out")"
    want=$(sha256sum < "$tmp/flat$size.bin")
    for h in "${hosts[@]}"; do
        [[ $(sha256sum < "$work/$h/dest/flat$size.bin") == "$want" ]] || fail "flat push of $size MiB: $h's copy differs"
    done
    step "flat push of $size MiB from a1 to 8 hosts across the uplinks: all landed; $asks statuses meanwhile saw 9 of 9 up"
done
