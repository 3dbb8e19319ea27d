#!/usr/bin/env bash
# The Prometheus endpoint (`metrics:`): two daemons on 127.0.0.1, each with metrics on a port
# of its own. A scrape is the text format (HELP/TYPE, name{labels} value); after a probe and a
# 1 MiB push from a to b, a's bytes sent and pushes{ok} and b's bytes received moved, the
# map age is there; another path is 404; a bad `metrics:` value is refused with its line.
#   usage: daemon_metrics_test.sh HETCASTD HETCAST
set -euo pipefail

hetcastd=$(realpath "$1")
hetcast=$(realpath "$2")
[[ -x $hetcastd && -x $hetcast ]] || { echo "usage: $0 HETCASTD HETCAST" >&2; exit 2; }

test_name="daemon metrics test"
source "$(dirname "$0")/daemons.sh"
daemon_config=("metrics: 127.0.0.1:0")

new_ca "$tmp/keys"
c=$tmp/c
cluster "$c" "$tmp/keys" "" a b
for n in a b; do start "$c" "$n"; done
declare -A mport=()
for n in a b; do
    mport[$n]=$(sed -n 's|.*metrics on http://127.0.0.1:\([0-9]*\)/metrics.*|\1|p' "$tmp/$n.log" | tail -n 1)
    [[ -n ${mport[$n]} ]] || fail "$n did not log its metrics address: $(cat "$tmp/$n.log")"
done

# scrape NAME [PATH]: the body on stdout; the HTTP status on stderr's last line.
scrape() {
    python3 - "${mport[$1]}" "${2:-/metrics}" <<'PY'
import sys, urllib.request, urllib.error
try:
    with urllib.request.urlopen(f"http://127.0.0.1:{sys.argv[1]}{sys.argv[2]}", timeout=10) as r:
        assert r.headers["Content-Type"].startswith("text/plain; version=0.0.4"), r.headers["Content-Type"]
        sys.stdout.write(r.read().decode())
except urllib.error.HTTPError as e:
    print(e.code, file=sys.stderr)
    sys.exit(1)
PY
}
# value FILE METRIC: its value (the whole "name{labels}" as written).
value() { awk -v m="$2" '$1 == m { print $2 }' "$1"; }

scrape a > "$tmp/a0.txt" || fail "scraping a"
grep -q '^# TYPE hetcast_bytes_sent_total counter$' "$tmp/a0.txt" || fail "no TYPE line: $(head -20 "$tmp/a0.txt")"
grep -q '^hetcast_info{name="a",version="' "$tmp/a0.txt" || fail "no hetcast_info: $(head -20 "$tmp/a0.txt")"
[[ $(value "$tmp/a0.txt" 'hetcast_pushes_total{outcome="ok"}') == 0 ]] || fail "pushes ok before any push: $(cat "$tmp/a0.txt")"
[[ $(value "$tmp/a0.txt" hetcast_members) == 2 ]] || fail "members: $(cat "$tmp/a0.txt")"
grep -q '^hetcast_map_age_seconds' "$tmp/a0.txt" && fail "a map age without a map"
python3 - "$tmp/a0.txt" <<'PY' || fail "not the text exposition format: $(cat "$tmp/a0.txt")"
import re, sys
for line in open(sys.argv[1]):
    line = line.rstrip("\n")
    if line.startswith("# HELP ") or line.startswith("# TYPE "):
        continue
    assert re.fullmatch(r'[a-z_]+(\{[a-z_]+="[^"]*"(,[a-z_]+="[^"]*")*\})? [0-9.e+-]+', line), line
PY
step "a scrape before any push: the text format, zero pushes, 2 members, no map age"

"$hetcast" probe --config "$c/a.yaml" --seconds 0.1 --repeats 1 --reps 2 > /dev/null || fail "probe"
head -c $((1 << 20)) /dev/urandom > "$tmp/f.bin"
"$hetcast" push "$tmp/f.bin" --config "$c/a.yaml" --all --quiet > /dev/null || fail "push"
cmp -s "$tmp/f.bin" "$c/b/dest/f.bin" || fail "b's copy"
scrape a > "$tmp/a1.txt" || fail "scraping a after the push"
scrape b > "$tmp/b1.txt" || fail "scraping b after the push"
[[ $(value "$tmp/a1.txt" 'hetcast_pushes_total{outcome="ok"}') == 1 ]] || fail "a's pushes ok: $(cat "$tmp/a1.txt")"
(( $(value "$tmp/a1.txt" hetcast_bytes_sent_total) >= 1 << 20 )) || fail "a's bytes sent: $(cat "$tmp/a1.txt")"
(( $(value "$tmp/b1.txt" hetcast_bytes_received_total) >= 1 << 20 )) || fail "b's bytes received: $(cat "$tmp/b1.txt")"
(( $(value "$tmp/a1.txt" hetcast_connections_opened_total) >= 1 )) || fail "a's connections: $(cat "$tmp/a1.txt")"
grep -q '^hetcast_map_age_seconds [0-9]' "$tmp/a1.txt" || fail "no map age after the probe: $(cat "$tmp/a1.txt")"
[[ $(value "$tmp/a1.txt" hetcast_map_members) == 2 ]] || fail "map members: $(cat "$tmp/a1.txt")"
step "after a 1 MiB push: a sent $(value "$tmp/a1.txt" hetcast_bytes_sent_total) B, b received $(value "$tmp/b1.txt" hetcast_bytes_received_total) B, pushes{ok} 1, map age $(value "$tmp/a1.txt" hetcast_map_age_seconds) s"

rc=0
scrape a /other > /dev/null 2> "$tmp/404.err" || rc=$?
[[ $rc -ne 0 ]] && grep -q '^404$' "$tmp/404.err" || fail "GET /other: $(cat "$tmp/404.err")"
step "another path: 404"

sed 's/^metrics: .*/metrics: nohost/' "$c/a.yaml" > "$c/bad.yaml"
rc=0
"$hetcastd" --config "$c/bad.yaml" > /dev/null 2> "$tmp/bad.err" || rc=$?
[[ $rc -eq 2 && $(wc -l < "$tmp/bad.err") -eq 1 ]] && grep -q "bad.yaml:.*metrics: expected HOST:PORT" "$tmp/bad.err" ||
    fail "metrics: nohost: status $rc: $(cat "$tmp/bad.err")"
step "metrics: nohost refused: $(cat "$tmp/bad.err")"
step "passed"
