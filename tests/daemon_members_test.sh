#!/usr/bin/env bash
# One member list: three daemons on 127.0.0.1 with a group `odd: "b,c"` in the cluster file.
#  - `leave` without a terminal and without --yes: one line, exit 2, nobody leaves; on a
#    terminal it asks, and "n" changes nothing; --yes makes c leave;
#  - the group that names c keeps working for b (push --to @odd, status -w @odd), with a
#    warning naming c;
#  - a restart with the cluster file older than members.yaml (c still in it): members.yaml
#    wins and the difference is logged; an edit of the cluster file (d added) wins at the next
#    start, logged; the start after that says nothing.
#   usage: daemon_members_test.sh HETCASTD HETCAST
set -euo pipefail

hetcastd=$(realpath "$1")
hetcast=$(realpath "$2")
[[ -x $hetcastd && -x $hetcast ]] || { echo "usage: $0 HETCASTD HETCAST" >&2; exit 2; }

test_name="daemon members test"
source "$(dirname "$0")/daemons.sh"

new_ca "$tmp/keys"
c=$tmp/c
cluster "$c" "$tmp/keys" "" a b c
printf 'groups:\n  odd: "b,c"\n' >> "$c/cluster.yaml"
for n in a b c; do start "$c" "$n"; done
"$hetcast" probe --config "$c/a.yaml" --seconds 0.1 --repeats 1 --reps 2 > /dev/null || fail "probe"

# --- leave asks ---------------------------------------------------------------------------
rc=0
"$hetcast" leave c --config "$c/a.yaml" < /dev/null > "$tmp/leave.out" 2> "$tmp/leave.err" || rc=$?
[[ $rc -eq 2 && $(wc -l < "$tmp/leave.err") -eq 1 ]] && grep -q -- "--yes" "$tmp/leave.err" ||
    fail "leave without a terminal nor --yes: status $rc: $(cat "$tmp/leave.err")"
# On a terminal (a pseudo-terminal the test makes), answering "n".
rc=0
python3 - "$hetcast" "$c/a.yaml" > "$tmp/tty.out" 2>&1 <<'PY' || rc=$?
import os, pty, subprocess, sys, time
master, slave = pty.openpty()
p = subprocess.Popen([sys.argv[1], "leave", "c", "--config", sys.argv[2]], stdin=slave, stdout=slave, stderr=slave)
os.close(slave)
seen = b""
deadline = time.time() + 20
while b"[y/N]" not in seen and time.time() < deadline:
    try:
        seen += os.read(master, 4096)
    except OSError:
        break
os.write(master, b"n\n")
rc = p.wait(timeout=20)
try:
    while True:
        chunk = os.read(master, 4096)
        if not chunk:
            break
        seen += chunk
except OSError:
    pass
sys.stdout.write(seen.decode(errors="replace"))
sys.exit(rc)
PY
[[ $rc -eq 1 ]] && grep -q "revoke its identity" "$tmp/tty.out" && grep -q "nothing changed" "$tmp/tty.out" ||
    fail "leave on a terminal answered 'n': status $rc: $(cat "$tmp/tty.out")"
"$hetcast" status --config "$c/a.yaml" | grep -q '3 of 3 up' || fail "a leave that was not confirmed removed a member"
"$hetcast" leave --help | grep -q "revoke" || fail "leave --help does not say it revokes the identity"
"$hetcast" leave --help | grep -q "keys issue" || fail "leave --help does not say how a member comes back"
step "leave: refused without a terminal or --yes (exit 2), 'n' on a terminal changes nothing"
"$hetcast" leave c --yes --config "$c/a.yaml" > /dev/null || fail "leave c --yes"
"$hetcast" status --config "$c/a.yaml" | grep -q '2 of 2 up' || fail "after leave c --yes, not 2 of 2 up"
step "leave c --yes: 2 members left"

# --- a group that names the member who left ---------------------------------------------------
head -c 50000 /dev/urandom > "$tmp/f.bin"
"$hetcast" push "$tmp/f.bin" --config "$c/a.yaml" --to @odd --quiet > "$tmp/push.out" 2> "$tmp/push.err" ||
    fail "push --to @odd after c left: $(cat "$tmp/push.out" "$tmp/push.err")"
cmp -s "$tmp/f.bin" "$c/b/dest/f.bin" || fail "b did not get the file pushed to @odd"
grep -q "warning: group '@odd' names c, not a member" "$tmp/push.err" || fail "push --to @odd: no warning: $(cat "$tmp/push.err")"
"$hetcast" status --config "$c/a.yaml" -w @odd > "$tmp/status.out" 2> "$tmp/status.err" ||
    fail "status -w @odd: $(cat "$tmp/status.out" "$tmp/status.err")"
grep -q "1 of 1 up" "$tmp/status.out" || fail "status -w @odd: $(cat "$tmp/status.out")"
grep -q "warning: group '@odd' names c, not a member" "$tmp/status.err" || fail "status -w @odd: no warning: $(cat "$tmp/status.err")"
step "group @odd (b,c) after c left: push and status work for b, with a warning naming c"

# --- which member list wins -------------------------------------------------------------------
stop c
stop a
start "$c" a
grep -q "WARN member list: .*members.yaml (joins and leaves since .*cluster.yaml was last edited) wins over it: left 'c'" "$tmp/a.log" ||
    fail "restart with an older cluster file: no line about the difference: $(grep 'member list' "$tmp/a.log")"
"$hetcast" status --config "$c/a.yaml" | grep -q '2 of 2 up' || fail "restart: members.yaml did not win"
step "restart, the cluster file older than the last leave: members.yaml wins, the difference logged"

stop a
read -r dport < <(free_ports 1)
{
    echo "members:"
    echo "  - {name: a, host: 127.0.0.1, port: ${port[a]}}"
    echo "  - {name: b, host: 127.0.0.1, port: ${port[b]}}"
    echo "  - {name: d, host: 127.0.0.1, port: $dport}"
} > "$c/cluster.yaml"
start "$c" a
grep -q "WARN member list: .*cluster.yaml was edited after the last join or leave (.*members.yaml), and wins: added 'd'" "$tmp/a.log" ||
    fail "restart after an edit: no line about the difference: $(grep 'member list' "$tmp/a.log")"
"$hetcast" status --config "$c/a.yaml" > "$tmp/status.out" || true
grep -q "2 of 3 up" "$tmp/status.out" || fail "after the edit, a does not list d: $(cat "$tmp/status.out")"
stop a
lines=$(grep -c "member list:" "$tmp/a.log")
start "$c" a
[[ $(grep -c "member list:" "$tmp/a.log") -eq $lines ]] || fail "the start after the edit logged a difference again"
step "an edit of the cluster file wins at the next start, logged once"
step "passed"
