#!/usr/bin/env bash
# One flow that never gets through does not cost the cluster its map (issue 23): three
# daemons on 127.0.0.1 whose emulated links (link_profile) run at 4 MB/s, except c -> b at
# 2 kB/s, so that no 32 KiB bulk frame of c's reaches b within a measuring window. Before,
# the probe failed with "measuring c -> b: ..."; now it measures that flow again (alone),
# exits 0, stores a map of all three, names the pair in a note ("c -> b: not measured")
# and gives it what the NICs allow.
#   usage: daemon_probe_starved_test.sh HETCASTD HETCAST
set -euo pipefail

hetcastd=$(realpath "$1")
hetcast=$(realpath "$2")
[[ -x $hetcastd && -x $hetcast ]] || { echo "usage: $0 HETCASTD HETCAST" >&2; exit 2; }

test_name="daemon probe starved test"
source "$(dirname "$0")/daemons.sh"

new_ca "$tmp/keys"
c=$tmp/c
mkdir -p "$c"
cat > "$c/profile.yaml" <<'YAML'
nodes: [a, b, c]
latency:
  - [0, 0.0005, 0.0005]
  - [0.0005, 0, 0.0005]
  - [0.0005, 0.0005, 0]
bandwidth:
  - [0, 4.0e6, 4.0e6]
  - [4.0e6, 0, 4.0e6]
  - [4.0e6, 2.0e3, 0]
YAML
cluster "$c" "$tmp/keys" "$c/profile.yaml" a b c
for n in a b c; do start "$c" "$n"; done

rc=0
timeout 300 "$hetcast" probe --config "$c/a.yaml" --seconds 0.2 --repeats 1 --reps 2 --json \
    > "$tmp/probe.json" 2> "$tmp/probe.err" || rc=$?
[[ $rc -eq 0 ]] || fail "probe with c -> b starved: exit $rc: $(cat "$tmp/probe.err"; head -c 1500 "$tmp/probe.json")"
python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert sorted(d["map"]["nodes"]) == ["a", "b", "c"], d["map"]["nodes"]
notes = [n for n in d["notes"] if n.startswith("c -> b: not measured")]
assert len(notes) == 1, d["notes"]
others = [n for n in d["notes"] if "not measured" in n and not n.startswith("c -> b")]
assert not others, others
g = d["goodput"]
assert all(g[i][j] > 0 for i in range(3) for j in range(3) if i != j), g
' "$tmp/probe.json" || fail "probe --json: $(head -c 3000 "$tmp/probe.json")"
step "c -> b never measures: the probe exits 0 with a map of a, b and c and a note naming c -> b"
for n in a b c; do
    "$hetcast" map show --config "$c/$n.yaml" --json > "$tmp/map-$n.json" || fail "map show on $n: exit $?"
done
step "the map is stored on every member"
step "passed"
