#!/usr/bin/env bash
# Two hetcastd on one state directory: the second fails at once with one line naming the
# directory and the first one's pid, exits non-zero and touches nothing (a temporary file
# of the first one's push in flight stays); the first goes on. Once the first stopped, a
# daemon on that state starts and removes what the first left.
#   usage: daemon_lock_test.sh HETCASTD [HETCAST]
# HETCAST (the CLI, which makes the daemon's identity) defaults to the one built next to
# HETCASTD (BUILD/tools/hetcast for BUILD/daemon/hetcastd).
set -euo pipefail

hetcastd=$(realpath "$1")
hetcast=$(realpath "${2:-$(dirname "$hetcastd")/../tools/hetcast}")
[[ -x $hetcastd && -x $hetcast ]] || { echo "usage: $0 HETCASTD [HETCAST]" >&2; exit 2; }

test_name="daemon lock test"
source "$(dirname "$0")/daemons.sh"

new_ca "$tmp/keys"
"$hetcast" keys issue n --dir "$tmp/keys" > /dev/null || fail "hetcast keys issue n failed"
# Port 0: each daemon gets a port of its own, so only the state directory is shared.
cat > "$tmp/n.yaml" <<EOF
name: n
listen: 127.0.0.1:0
state_dir: state
dest_root: dest
identity: keys/n.pem
EOF

start "$tmp" n
first=${pid[n]}
[[ $(tr -d '\n' < "$tmp/state/lock") == "$first" ]] || fail "state/lock does not hold the pid $first: $(cat "$tmp/state/lock")"
step "the first daemon holds state/lock"

# As if the first one were receiving a file right now.
mkdir -p "$tmp/dest/sub"
part="$tmp/dest/sub/.a.bin.hetcast-12345.part"
echo data > "$part"

rc=0
timeout 10 "$hetcastd" --config "$tmp/n.yaml" > "$tmp/second.out" 2> "$tmp/second.log" || rc=$?
[[ $rc -ne 0 && $rc -ne 124 ]] || fail "the second daemon exited with $rc (want a non-zero status, at once)"
[[ $(wc -l < "$tmp/second.log") -eq 1 ]] || fail "the second daemon said more than one line: $(cat "$tmp/second.log")"
grep -q "state directory $tmp/state is in use by another hetcastd (pid $first)" "$tmp/second.log" ||
    fail "the second daemon's error does not name the directory and pid $first: $(cat "$tmp/second.log")"
[[ -f $part ]] || fail "the second daemon removed the first one's temporary file"
kill -0 "$first" 2>/dev/null || fail "the first daemon died"
grep -q "stale" "$tmp/n.log" && fail "the first daemon removed something"
[[ $(tr -d '\n' < "$tmp/state/lock") == "$first" ]] || fail "state/lock no longer holds the pid $first"
step "a second daemon on the same state: exit $rc, one line ($(cat "$tmp/second.log")), nothing touched"

stop n
start "$tmp" n
[[ ! -e $part ]] || fail "the next daemon did not remove the leftover temporary file"
step "after the first stopped, the next daemon on that state starts and cleans up"
step "passed"
