#!/usr/bin/env bash
# A daemon starts alone: with its seeds down it listens, answers status, says once per try
# that no seed answers, is refused by the seed while no member knows it, and joins once the
# operator orders it (hetcast join) after the seed came up. The shipped conf/hetcastd.yaml
# (its folders moved under a temporary one, its seed a name that does not resolve here)
# starts as shipped.
#   usage: daemon_seeds_test.sh HETCASTD HETCAST SOURCE_DIR
set -euo pipefail

hetcastd=$(realpath "$1")
hetcast=$(realpath "$2")
src=$(realpath "$3")
[[ -x $hetcastd && -x $hetcast && -f $src/conf/hetcastd.yaml ]] || { echo "usage: $0 HETCASTD HETCAST SOURCE_DIR" >&2; exit 2; }

test_name="daemon seeds test"
source "$(dirname "$0")/daemons.sh"

new_ca "$tmp/keys"
c=$tmp/c
cluster "$c" "$tmp/keys" "" a b
"$hetcast" keys issue late --dir "$tmp/keys" --days 10 > /dev/null || fail "keys issue late"
read -r late_port < <(free_ports 1)
cat > "$c/late.yaml" <<END
name: late
listen: 127.0.0.1:$late_port
state_dir: late/state
dest_root: late/dest
identity: $tmp/keys/late.pem
seeds: ["127.0.0.1:${port[a]}"]
END

# --- no seed up: it serves alone ----------------------------------------------------------
start "$c" late
"$hetcast" status --config "$c/late.yaml" > "$tmp/status.out" || fail "status of the daemon alone: $(cat "$tmp/status.out")"
grep -q "asked 'late'" "$tmp/status.out" || fail "status of the daemon alone: $(cat "$tmp/status.out")"
for _ in $(seq 100); do grep -q "cannot join through any seed yet" "$tmp/late.log" && break; sleep 0.1; done
grep -q "WARN cannot join through any seed yet (127.0.0.1:${port[a]}: .*); serving meanwhile, trying again in 1 s" "$tmp/late.log" ||
    fail "no log line about the seed: $(cat "$tmp/late.log")"
step "seed down: 'late' listens, answers status, and says it will try again"

# --- the seed comes up: it joins -------------------------------------------------------------
start "$c" a
start "$c" b
for _ in $(seq 300); do grep -q "'late' is not a member of this cluster" "$tmp/late.log" && break; sleep 0.1; done
grep -q "'late' is not a member of this cluster" "$tmp/late.log" || fail "'late' was not refused on its own: $(cat "$tmp/late.log")"
"$hetcast" join late "127.0.0.1:$late_port" --config "$c/a.yaml" > "$tmp/join.out" 2>&1 || fail "hetcast join late: $(cat "$tmp/join.out")"
for _ in $(seq 300); do grep -q "joined the cluster through 'a'" "$tmp/late.log" && break; sleep 0.1; done
grep -q "joined the cluster through 'a'" "$tmp/late.log" || fail "'late' did not join within 30 s of 'a' coming up"
"$hetcast" status --config "$c/a.yaml" > "$tmp/status.out" || fail "status from a: $(cat "$tmp/status.out")"
grep -q "3 of 3 up" "$tmp/status.out" && grep -q "late" "$tmp/status.out" || fail "a does not list 'late': $(cat "$tmp/status.out")"
step "'a' up later: 'late' refused until the operator joined it through 'a'; a lists 3 of 3 up"
grep -Eq "warning: the certificate of 'late' expires in (9|10) days" "$tmp/status.out" || fail "no expiry warning in status: $(cat "$tmp/status.out")"
grep -Eq "its certificate expires in (9|10) days" "$tmp/late.log" || fail "no expiry warning in late's log: $(cat "$tmp/late.log")"
"$hetcast" keys show "$tmp/keys/late.pem" | grep -Eq "^expires .* \\(in (9|10) days\\)" || fail "keys show: $("$hetcast" keys show "$tmp/keys/late.pem")"
step "an identity issued for 10 days: status, the daemon's log and keys show say it expires in 9 or 10 days (issued with a minute of slack)"
stop late

# --- the shipped example config ----------------------------------------------------------------
"$hetcast" keys issue ws01 --dir "$tmp/keys" > /dev/null || fail "keys issue ws01"
read -r ship_port < <(free_ports 1)
mkdir -p "$tmp/ship/dest/outbox"
echo "members: [{name: ws01, host: 127.0.0.1, port: $ship_port}, {name: ws02, host: ws02.example.org, port: 7700}]" > "$tmp/ship/cluster.yaml"
sed -e "s|/var/lib/hetcast|$tmp/ship/state|; s|/srv/hetcast|$tmp/ship/dest|g; s|/etc/hetcast/ws01.pem|$tmp/keys/ws01.pem|" \
    -e "s|/etc/hetcast/cluster.yaml|$tmp/ship/cluster.yaml|; s|0.0.0.0:7700|127.0.0.1:$ship_port|" \
    "$src/conf/hetcastd.yaml" > "$tmp/ship/hetcastd.yaml"
diff <(grep -A2 '^seeds:' "$src/conf/hetcastd.yaml") <(grep -A2 '^seeds:' "$tmp/ship/hetcastd.yaml") > /dev/null ||
    fail "the test changed the shipped seeds"
start "$tmp/ship" hetcastd
"$hetcast" status --config "$tmp/ship/hetcastd.yaml" > "$tmp/status.out" 2>&1 || true
grep -q "asked 'ws01'" "$tmp/status.out" || fail "the shipped config: status: $(cat "$tmp/status.out")"
step "the shipped conf/hetcastd.yaml starts, serves and answers status with its seed unreachable"
step "passed"
