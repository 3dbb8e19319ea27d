#!/usr/bin/env bash
# A lab where one machine is off: three daemons on 127.0.0.1, one stopped. `hetcast probe`
# measures the two that answer, exits 0 with one warning line naming the third, lists it in
# its text and in --json (`unreachable`), and stores a map of the two on both; status says
# the map lacks it; a push --all then reaches the other one and names the stopped one as
# skipped. Back up, a probe takes it in again.
#   usage: daemon_probe_down_test.sh HETCASTD HETCAST
set -euo pipefail

hetcastd=$(realpath "$1")
hetcast=$(realpath "$2")
[[ -x $hetcastd && -x $hetcast ]] || { echo "usage: $0 HETCASTD HETCAST" >&2; exit 2; }

test_name="daemon probe down test"
source "$(dirname "$0")/daemons.sh"

new_ca "$tmp/keys"
c=$tmp/c
cluster "$c" "$tmp/keys" "" a b off
for n in a b off; do start "$c" "$n"; done
stop off

probe=(probe --config "$c/a.yaml" --seconds 0.1 --repeats 1 --reps 2)
rc=0
"$hetcast" "${probe[@]}" > "$tmp/probe.out" 2> "$tmp/probe.err" || rc=$?
[[ $rc -eq 0 ]] || fail "probe with 'off' stopped: exit $rc: $(cat "$tmp/probe.out" "$tmp/probe.err")"
grep -q "warning: 1 member did not answer and is not in the map: off" "$tmp/probe.err" ||
    fail "probe: no warning naming 'off': $(cat "$tmp/probe.err")"
grep -q "^probed 2 members" "$tmp/probe.out" || fail "probe: not 2 members measured: $(cat "$tmp/probe.out")"
grep -A1 "not measured (did not answer):" "$tmp/probe.out" | grep -q "^  off: " ||
    fail "probe: the text does not list 'off' as not measured: $(cat "$tmp/probe.out")"
step "probe with 'off' stopped: exit 0, a warning and a line name it"

for n in a b; do
    "$hetcast" map show --config "$c/$n.yaml" --json > "$tmp/map-$n.json" || fail "map show on $n: exit $?"
    python3 -c 'import json, sys; n = json.load(open(sys.argv[1]))["map"]["nodes"]; sys.exit(sorted(n) != ["a", "b"])' \
        "$tmp/map-$n.json" || fail "$n's map is not of a and b: $(head -c 500 "$tmp/map-$n.json")"
done
"$hetcast" "${probe[@]}" --json > "$tmp/probe.json" 2> /dev/null || fail "probe --json: exit $?"
python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert [u["name"] for u in d["unreachable"]] == ["off"], d["unreachable"]
assert d["unreachable"][0]["error"], "no reason"
assert sorted(d["map"]["nodes"]) == ["a", "b"], d["map"]["nodes"]
' "$tmp/probe.json" || fail "probe --json: $(head -c 1500 "$tmp/probe.json")"
"$hetcast" status --config "$c/a.yaml" > "$tmp/status.out" || true
grep -q "^map: measured .*; not in it: off (probe again to include)" "$tmp/status.out" ||
    fail "status does not say the map lacks 'off': $(cat "$tmp/status.out")"
step "the map of a and b is stored on both; --json lists 'off' in unreachable; status says the map lacks it"

head -c 100000 /dev/urandom > "$tmp/f.bin"
"$hetcast" push "$tmp/f.bin" --config "$c/a.yaml" --all --json > "$tmp/push.json" 2> "$tmp/push.err" ||
    fail "push --all after the probe: $(cat "$tmp/push.json" "$tmp/push.err")"
cmp -s "$tmp/f.bin" "$c/b/dest/f.bin" || fail "b did not get the file"
python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
r = d["reports"][0]
assert r["skipped"] == ["off"], r["skipped"]
' "$tmp/push.json" || fail "push --all: 'off' not named as skipped: $(head -c 1500 "$tmp/push.json")"
step "push --all goes to b and names 'off' as skipped"

start "$c" off
"$hetcast" "${probe[@]}" --json --trace "$tmp/trace.json" > "$tmp/probe2.json" 2> "$tmp/probe2.err" ||
    fail "probe with all up: $(cat "$tmp/probe2.err")"
[[ ! -s $tmp/probe2.err ]] || fail "probe with all up warned: $(cat "$tmp/probe2.err")"
python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["unreachable"] == [], d["unreachable"]
assert len(d["map"]["nodes"]) == 3
t = json.load(open(sys.argv[2]))
assert len(t) == d["measurements"] > 0, (len(t), d["measurements"])
for m in t:
    assert m["phase"] and m["flows"], m
    for a, b, rate in m["flows"]:
        assert a != b and {a, b} <= {"a", "b", "off"}, m
        assert rate is None or rate > 0, m
' "$tmp/probe2.json" "$tmp/trace.json" || fail "probe with all up, --trace: $(head -c 1500 "$tmp/probe2.json"; head -c 1500 "$tmp/trace.json")"
rc=0
"$hetcast" "${probe[@]}" --refresh b --trace "$tmp/trace2.json" > /dev/null 2> "$tmp/trace2.err" || rc=$?
[[ $rc -ne 0 && ! -e $tmp/trace2.json ]] && grep -q "only a whole probe is traced" "$tmp/trace2.err" ||
    fail "probe --refresh --trace: exit $rc: $(cat "$tmp/trace2.err")"
"$hetcast" status --config "$c/a.yaml" > "$tmp/status.out" || fail "status: $(cat "$tmp/status.out")"
grep -q "not in it" "$tmp/status.out" && fail "status after the full probe: $(cat "$tmp/status.out")"
step "'off' back up: the next probe measures all three, and --trace writes each of its measurements"
step "passed"
