#!/usr/bin/env bash
# A push never counts on a relay that is down: with a map on which the best way from r0 to r2
# is through r1 (not a destination), and r1 stopped, `push --to r2 --algo ecef-relay` plans
# without r1 and delivers directly; the daemon says why. Before, the plan relayed through
# r1, the try failed, and the re-serving picked r1 again.
#   usage: daemon_relay_down_test.sh HETCASTD HETCAST
set -euo pipefail

hetcastd=$(realpath "$1")
hetcast=$(realpath "$2")
[[ -x $hetcastd && -x $hetcast ]] || { echo "usage: $0 HETCASTD HETCAST" >&2; exit 2; }

test_name="relay down test"
source "$(dirname "$0")/daemons.sh"

new_ca "$tmp/keys"
c=$tmp/c
cluster "$c" "$tmp/keys" "" r0 r1 r2
for n in r0 r1 r2; do
    mkdir -p "$c/$n/state"
    cat > "$c/$n/state/map.yaml" <<'MAP'
nodes: [r0, r1, r2]
cost:
  - [0,  1, 50]
  - [1,  0,  1]
  - [50, 1,  0]
MAP
done
for n in r0 r1 r2; do start "$c" "$n"; done
head -c 100000 /dev/urandom > "$tmp/f.bin"

"$hetcast" plan --network "$c/r0/state/map.yaml" --algo ecef-relay --root r0 --dests r2 > "$tmp/plan.out" 2>&1 ||
    fail "plan: $(cat "$tmp/plan.out")"
grep -Eq "r1 +r2" "$tmp/plan.out" || fail "the map does not make ecef-relay relay through r1: $(cat "$tmp/plan.out")"
step "on this map ecef-relay relays r0 -> r1 -> r2"

stop r1
rc=0
"$hetcast" push "$tmp/f.bin" --config "$c/r0.yaml" --to r2 --algo ecef-relay -q > "$tmp/push.out" 2> "$tmp/push.err" || rc=$?
[[ $rc -eq 0 ]] || fail "push with the relay down: status $rc: $(cat "$tmp/push.err")"
cmp -s "$tmp/f.bin" "$c/r2/dest/f.bin" || fail "r2's copy differs"
grep -q "not relaying through 'r1'" "$tmp/r0.log" || fail "r0 did not say why r1 was left out: $(tail -n 20 "$tmp/r0.log")"
step "with r1 down the push plans around it and r2 gets the file (exit 0)"
