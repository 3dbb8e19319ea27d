#!/usr/bin/env bash
# hetcastd's log: --log-level and log_level: filter by the level each line was written
# at; bad values are one line (the config's with file:line) and exit 2; on a stderr that
# $JOURNAL_STREAM names, lines carry a <N> syslog priority and no timestamp of their own,
# while state_dir/hetcastd.log keeps its timestamps.
#   usage: daemon_log_test.sh HETCASTD [HETCAST]
set -euo pipefail

hetcastd=$(realpath "$1")
hetcast=$(realpath "${2:-$(dirname "$hetcastd")/../tools/hetcast}")
[[ -x $hetcastd && -x $hetcast ]] || { echo "usage: $0 HETCASTD [HETCAST]" >&2; exit 2; }

test_name="daemon log test"
source "$(dirname "$0")/daemons.sh"

new_ca "$tmp/keys"
cluster "$tmp" "$tmp/keys" "" n
stamp='^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8}\.[0-9]{3}Z '

rc=0
"$hetcastd" --config "$tmp/n.yaml" --log-level loud > /dev/null 2> "$tmp/bad-flag.err" || rc=$?
[[ $rc -eq 2 ]] || fail "--log-level loud: exit $rc, want 2"
[[ $(wc -l < "$tmp/bad-flag.err") -eq 1 ]] || fail "--log-level loud: not one line: $(cat "$tmp/bad-flag.err")"
grep -qx "hetcastd: --log-level: expected one of trace, debug, info, warn, error, got 'loud'" "$tmp/bad-flag.err" ||
    fail "--log-level loud: $(cat "$tmp/bad-flag.err")"
{ cat "$tmp/n.yaml"; echo "log_level: chatty"; } > "$tmp/bad.yaml"
rc=0
"$hetcastd" --config "$tmp/bad.yaml" > /dev/null 2> "$tmp/bad-config.err" || rc=$?
[[ $rc -eq 2 ]] || fail "log_level: chatty: exit $rc, want 2"
[[ $(wc -l < "$tmp/bad-config.err") -eq 1 ]] || fail "log_level: chatty: not one line: $(cat "$tmp/bad-config.err")"
grep -q "^hetcastd: $tmp/bad.yaml:$(wc -l < "$tmp/bad.yaml"):12: log_level: expected one of .*, got 'chatty'$" "$tmp/bad-config.err" ||
    fail "log_level: chatty: no file:line: $(cat "$tmp/bad-config.err")"
[[ ! -e $tmp/n/state ]] || fail "a bad level still created the state directory"
step "bad levels: exit 2, one line ($(cat "$tmp/bad-config.err"))"

# status_on NAME: a status request to the daemon, which logs it at debug.
status_on() { "$hetcast" status --config "$tmp/$1.yaml" > "$tmp/status.out" 2>&1 || fail "hetcast status: $(cat "$tmp/status.out")"; }

start "$tmp" n
status_on n
stop n
grep -q "DEBUG" "$tmp/n.log" && fail "debug lines at the default level (info): $(grep DEBUG "$tmp/n.log")"
grep -Eq "${stamp}INFO listening on " "$tmp/n.log" || fail "no timestamped INFO line: $(cat "$tmp/n.log")"
: > "$tmp/n.log"
start "$tmp" n --log-level debug
status_on n
stop n
grep -Eq "${stamp}DEBUG request 'status' from '" "$tmp/n.log" || fail "no debug line at --log-level debug: $(cat "$tmp/n.log")"
{ cat "$tmp/n.yaml"; echo "log_level: debug"; } > "$tmp/debug.yaml"
: > "$tmp/n.log"
start "$tmp" debug
status_on debug
stop debug
grep -q "DEBUG request 'status'" "$tmp/n.log" && fail "log_level: debug read from the wrong file?"
grep -q "DEBUG request 'status'" "$tmp/debug.log" || fail "no debug line with log_level: debug: $(cat "$tmp/debug.log")"
step "info hides the debug lines, --log-level debug and log_level: debug show them"

# As systemd does for StandardError=journal: JOURNAL_STREAM names stderr's device and inode.
: > "$tmp/journal.log"
file_lines=$(wc -l < "$tmp/n/state/hetcastd.log")
JOURNAL_STREAM=$(stat -c '%d:%i' "$tmp/journal.log") "$hetcastd" --config "$tmp/n.yaml" 2>> "$tmp/journal.log" &
pid[journal]=$!
for _ in $(seq 100); do grep -q '^<6>ready: ' "$tmp/journal.log" && break; sleep 0.1; done
grep -q '^<6>ready: ' "$tmp/journal.log" || fail "no '<6>ready:' line for the journal: $(cat "$tmp/journal.log")"
stop journal
grep -q '^<6>stopping on SIGTERM$' "$tmp/journal.log" || fail "no '<6>stopping' line: $(cat "$tmp/journal.log")"
grep -Evq '^<[3467]>' "$tmp/journal.log" && fail "a journal line without a priority: $(grep -Ev '^<[3467]>' "$tmp/journal.log")"
grep -Eq '^<[0-9]>[0-9]{4}-' "$tmp/journal.log" && fail "a timestamp in the journal: $(cat "$tmp/journal.log")"
tail -n +$((file_lines + 1)) "$tmp/n/state/hetcastd.log" > "$tmp/file-part.log"
grep -Eq "${stamp}INFO ready: " "$tmp/file-part.log" || fail "the log file lost its timestamps: $(cat "$tmp/file-part.log")"
# A JOURNAL_STREAM that names another file (stderr redirected under a service): timestamps.
: > "$tmp/n.log"
JOURNAL_STREAM=$(stat -c '%d:%i' "$tmp/n.yaml") start "$tmp" n
stop n
grep -Eq "${stamp}INFO ready: " "$tmp/n.log" || fail "a JOURNAL_STREAM of another file dropped the timestamps: $(cat "$tmp/n.log")"
: > "$tmp/journal-bad.log"
rc=0
JOURNAL_STREAM=$(stat -c '%d:%i' "$tmp/journal-bad.log") "$hetcastd" --config "$tmp/bad.yaml" 2>> "$tmp/journal-bad.log" || rc=$?
[[ $rc -eq 2 ]] && grep -qx "<3>hetcastd: $tmp/bad.yaml:.*log_level: .*" "$tmp/journal-bad.log" ||
    fail "a bad config under the journal: status $rc, not one <3> line: $(cat "$tmp/journal-bad.log")"
step "journal: <N> priorities, no timestamps, a failure to start at <3>; the log file and other stderrs keep their stamps"
step "passed"
