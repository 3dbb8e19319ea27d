#!/usr/bin/env bash
# netlab at 48 hosts (conf/netlab/scale/hosts-48.yaml; root only, exits 77 otherwise):
#  - the lab comes up with one HTB class per other host on each host's NIC (the realistic
#    queues: O(n) classes per link end, not one per host pair of the lab);
#  - 'daemons --true-map' starts hetcastd on every host with the topology's own map (a
#    network file whose pair bandwidths follow from its capacities): 'hetcast status' lists
#    48 of 48 up with a map, 'hetcast map show' has the topology's four subnets;
#  - a cut-through push of 2 MiB from a1 to --all lands 47 byte-identical copies;
#  - 'down' leaves no namespace of the lab.
# About half a minute. The lab is named nls<pid>, so labs of others are never touched.
#   usage: netlab_scale_test.sh HETCASTD HETCAST SOURCE_DIR
set -euo pipefail

[[ $# -eq 3 ]] || { echo "usage: $0 HETCASTD HETCAST SOURCE_DIR" >&2; exit 2; }
hetcastd=$(realpath "$1")
hetcast=$(realpath "$2")
src=$(realpath "$3")
netlab=$src/scripts/netlab

test_name="netlab scale test"
# shellcheck source=netlab_lib.sh
source "$(dirname "$0")/netlab_lib.sh"

lab=nls$$
tmp=$(mktemp -d "${TMPDIR:-/tmp}/hetcast-netlab-scale.XXXXXX")
netlab_labs=("$lab")
netlab_cleanup "$netlab" "$lab\." "$tmp"

"$netlab" up "$src/conf/netlab/scale/hosts-48.yaml" --name "$lab" > "$tmp/up.out" 2> "$tmp/up.err" \
    || fail "up: $(cat "$tmp/up.err")"
hosts=$(ip netns list | awk '{print $1}' | grep -c "^hcl-$lab\.[a-d][0-9]*$" || true)
[[ $hosts -eq 48 ]] || fail "$hosts host namespaces, not 48"
# Per host NIC: the parent, the default class, the ACK class and one per other host (47).
classes=$(ip netns exec "hcl-$lab.c5" tc class show dev hcl-eth0 | grep -c '^class htb')
[[ $classes -eq 50 ]] || fail "c5's NIC has $classes HTB classes, not 50"
step "up: $(cat "$tmp/up.out")"

"$netlab" daemons "$lab" --hetcastd "$hetcastd" --hetcast "$hetcast" --true-map --timeout 60 > "$tmp/daemons.out" 2>&1 \
    || fail "daemons: $(cat "$tmp/daemons.out")"
"$netlab" info "$lab" --json > "$tmp/info.json"
read -r cfg work < <(python3 -c 'import json,sys; d=json.load(open(sys.argv[1]))["daemons"]; print(d["client_config"], d["dir"])' "$tmp/info.json")
out=$("$netlab" run "$lab" a1 "$hetcast" status --config "$cfg" 2>&1) || fail "status: $out"
grep -q "^48 of 48 up" <<< "$out" || fail "status: $(tail -n 3 <<< "$out")"
grep -q "^map: measured" <<< "$out" || fail "status shows no map: $(tail -n 2 <<< "$out")"
out=$("$netlab" run "$lab" a1 "$hetcast" map show --config "$cfg" 2>&1) || fail "map show: $out"
for s in "a1 a2 a3 a4 a5 a6 a7 a8 a9 a10 a11 a12" "b1 b2 b3 b4 b5 b6 b7 b8 b9 b10 b11 b12" \
         "c1 c2 c3 c4 c5 c6 c7 c8 c9 c10 c11 c12" "d1 d2 d3 d4 d5 d6 d7 d8 d9 d10 d11 d12"; do
    python3 - "$s" "$out" <<'PY' || fail "map show lacks the subnet $s: $out"
import re, sys
want = sys.argv[1].split()
names = [re.findall(r"\b[a-d][0-9]+\b", line) for line in sys.argv[2].splitlines()]
sys.exit(0 if any(sorted(n) == sorted(want) for n in names) else 1)
PY
done
step "hetcastd on 48 hosts with the topology's map: 48 of 48 up, its 4 subnets"

head -c $((2 << 20)) /dev/urandom > "$work/payload.bin"
out=$("$netlab" run "$lab" a1 timeout 300 "$hetcast" push "$work/payload.bin" --config "$cfg" --all --algo pipeline 2>&1) \
    || fail "push: $out"
want=$(sha256sum < "$work/payload.bin")
copies=0
for h in $(python3 -c 'import json,sys; print(" ".join(h["name"] for h in json.load(open(sys.argv[1]))["hosts"][1:]))' "$tmp/info.json"); do
    [[ -f $work/$h/dest/payload.bin ]] || fail "push: no copy on $h: $out"
    [[ $(sha256sum < "$work/$h/dest/payload.bin") == "$want" ]] || fail "push: the copy on $h differs"
    copies=$((copies + 1))
done
[[ $copies -eq 47 ]] || fail "$copies copies checked, not 47"
step "pipeline push of 2 MiB from a1 to --all: 47 byte-identical copies ($(grep -o 'achieved completion.*' <<< "$out"))"

"$netlab" down "$lab" > /dev/null
left=$(ip netns list | awk '{print $1}' | grep -F "hcl-$lab." || true)
[[ -z $left ]] || fail "namespaces left: $left"
step "down: nothing left"
