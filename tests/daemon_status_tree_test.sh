#!/usr/bin/env bash
# `hetcast status` along the control tree (docs/protocol.md, "The control tree"): seven
# daemons on 127.0.0.1 with limits.control_fanout 2, so s0 asks s1 and s2, which answer for
# s3..s6. All up: every member up with its version, and s0 dialled two members, not six.
# Then s4 (below s1) and s2 (a relay) stopped: both down, the others up (s5, s6 asked
# directly once s2 does not answer), within down_after and a margin, not a hang.
#   usage: daemon_status_tree_test.sh HETCASTD HETCAST
set -euo pipefail

hetcastd=$(realpath "$1")
hetcast=$(realpath "$2")
[[ -x $hetcastd && -x $hetcast ]] || { echo "usage: $0 HETCASTD HETCAST" >&2; exit 2; }

test_name="daemon status tree test"
source "$(dirname "$0")/daemons.sh"
daemon_config=("limits: {control_fanout: 2}" "metrics: 127.0.0.1:0")

new_ca "$tmp/keys"
c=$tmp/c
names=(s0 s1 s2 s3 s4 s5 s6)
cluster "$c" "$tmp/keys" "" "${names[@]}"
for n in "${names[@]}"; do start "$c" "$n"; done
mport=$(sed -n 's|.*metrics on http://127.0.0.1:\([0-9]*\)/metrics.*|\1|p' "$tmp/s0.log" | tail -n 1)
[[ -n $mport ]] || fail "s0 did not log its metrics address"
opened() {
    python3 - "$mport" <<'PY'
import sys, urllib.request
with urllib.request.urlopen(f"http://127.0.0.1:{sys.argv[1]}/metrics", timeout=10) as r:
    for line in r.read().decode().splitlines():
        if line.startswith("hetcast_connections_opened_total "):
            print(int(float(line.split()[1])))
PY
}
step "7 daemons up, control_fanout 2"

# check FILE DOWN...: every member listed once, those named down and no other.
check() {
    python3 - "$@" <<'PY' || fail "status: $(cat "$1")"
import json, sys
st = json.load(open(sys.argv[1]))
down = set(sys.argv[2:])
rows = {m["name"]: m for m in st["members"]}
assert sorted(rows) == [f"s{i}" for i in range(7)], sorted(rows)
for name, m in rows.items():
    if name in down:
        assert not m["up"] and m.get("error"), m
    else:
        assert m["up"] and m.get("version") not in (None, "?") and "expires" in m, m
PY
}

before=$(opened)
"$hetcast" status --json --config "$c/s0.yaml" > "$tmp/st1.json" || fail "status failed"
check "$tmp/st1.json"
after=$(opened)
# The CLI's connection and s0's two children; a star would dial all six.
[[ $((after - before)) -eq 3 ]] || fail "s0 opened $((after - before)) connections for a status, not 3 (the CLI's, s1, s2)"
step "all up, their versions through the relays; s0 dialled its two children only"

stop s4
stop s2
t0=$(now)
rc=0
"$hetcast" status --json --config "$c/s0.yaml" > "$tmp/st2.json" || rc=$?
t1=$(now)
[[ $rc -eq 4 ]] || fail "status with members down exited $rc, not 4 (partial)"
check "$tmp/st2.json" s2 s4
python3 -c 'import sys; sys.exit(0 if float(sys.argv[2]) - float(sys.argv[1]) < 15 else 1)' "$t0" "$t1" \
    || fail "status took $(python3 -c 'import sys; print(float(sys.argv[2]) - float(sys.argv[1]))' "$t0" "$t1") s"
step "s2 (a relay) and s4 (below s1) down, the rest up"
step "passed"
