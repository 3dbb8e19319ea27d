#!/usr/bin/env bash
# Readiness and SIGHUP, as systemd sees them: hetcastd with NOTIFY_SOCKET pointing at a unix
# datagram socket this test listens on (python3) sends READY=1 once its port accepts (the
# listener connects to the port as soon as READY=1 arrives). SIGHUP re-reads the config:
# log_level info -> debug makes debug lines appear; a member added to the cluster file shows
# in status; a broken config file changes nothing and the daemon goes on.
#   usage: daemon_notify_test.sh HETCASTD HETCAST
set -euo pipefail

hetcastd=$(realpath "$1")
hetcast=$(realpath "$2")
[[ -x $hetcastd && -x $hetcast ]] || { echo "usage: $0 HETCASTD HETCAST" >&2; exit 2; }

test_name="daemon notify test"
source "$(dirname "$0")/daemons.sh"
stop_extra() { [[ -n ${listener:-} ]] && { kill "$listener" 2>/dev/null; wait "$listener" 2>/dev/null; }; true; }

new_ca "$tmp/keys"
c=$tmp/c
cluster "$c" "$tmp/keys" "" a b

# Each datagram on a line of notify.log; on READY=1, "accepts" or "refuses" after it: what a
# connection to a's port does right then.
python3 - "$tmp/notify.sock" "$tmp/notify.log" "${port[a]}" <<'PY' &
import socket, sys, time
path, log, port = sys.argv[1], sys.argv[2], int(sys.argv[3])
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(path)
s.settimeout(1)
end = time.time() + 120
with open(log, "a", buffering=1) as out:
    while time.time() < end:
        try:
            data = s.recv(4096).decode(errors="replace")
        except socket.timeout:
            continue
        out.write(data.replace("\n", " ") + "\n")
        if "READY=1" in data.split("\n"):
            c = socket.socket()
            try:
                c.connect(("127.0.0.1", port))
                out.write("accepts\n")
            except OSError:
                out.write("refuses\n")
            finally:
                c.close()
PY
listener=$!
for _ in $(seq 100); do [[ -S $tmp/notify.sock ]] && break; sleep 0.1; done
[[ -S $tmp/notify.sock ]] || fail "the test's notify socket did not appear"

export NOTIFY_SOCKET=$tmp/notify.sock
start "$c" a
unset NOTIFY_SOCKET
start "$c" b
for _ in $(seq 100); do grep -q "^accepts\|^refuses" "$tmp/notify.log" 2>/dev/null && break; sleep 0.1; done
grep -q "READY=1.*MAINPID=${pid[a]}" "$tmp/notify.log" || fail "no READY=1 from a: $(cat "$tmp/notify.log" 2>/dev/null)"
[[ $(sed -n 2p "$tmp/notify.log") == accepts ]] || fail "at READY=1 a's port did not accept: $(cat "$tmp/notify.log")"
step "READY=1 (with MAINPID) arrived, and a's port accepted right then"

# --- SIGHUP: the log level -----------------------------------------------------------------
"$hetcast" status --config "$c/a.yaml" > /dev/null
grep -q "DEBUG request 'status'" "$tmp/a.log" && fail "a debug line before log_level: debug"
echo "log_level: debug" >> "$c/a.yaml"
kill -HUP "${pid[a]}"
for _ in $(seq 100); do grep -q "SIGHUP: log_level info -> debug" "$tmp/a.log" && break; sleep 0.1; done
grep -q "SIGHUP: log_level info -> debug" "$tmp/a.log" || fail "SIGHUP: no line about the log level: $(tail -5 "$tmp/a.log")"
"$hetcast" status --config "$c/a.yaml" > /dev/null
for _ in $(seq 50); do grep -q "DEBUG request 'status'" "$tmp/a.log" && break; sleep 0.1; done
grep -q "DEBUG request 'status'" "$tmp/a.log" || fail "after SIGHUP with log_level: debug, no debug line"
for _ in $(seq 50); do [[ $(grep -c "^READY=1" "$tmp/notify.log") -ge 2 ]] && break; sleep 0.1; done
grep -q "^RELOADING=1" "$tmp/notify.log" && [[ $(grep -c "^READY=1" "$tmp/notify.log") -ge 2 ]] ||
    fail "SIGHUP: no RELOADING=1 then READY=1: $(cat "$tmp/notify.log")"
step "SIGHUP: log_level info -> debug took effect (RELOADING=1, READY=1)"

# --- SIGHUP: the member list ----------------------------------------------------------------
read -r xport < <(free_ports 1)
echo "  - {name: x, host: 127.0.0.1, port: $xport}" >> "$c/cluster.yaml"
kill -HUP "${pid[a]}"
for _ in $(seq 100); do grep -q "SIGHUP: member list: 2 -> 3 members; added 'x'" "$tmp/a.log" && break; sleep 0.1; done
grep -q "SIGHUP: member list: 2 -> 3 members; added 'x'" "$tmp/a.log" || fail "SIGHUP: no member list line: $(tail -5 "$tmp/a.log")"
"$hetcast" status --config "$c/a.yaml" > "$tmp/status.out" || true
grep -q "2 of 3 up" "$tmp/status.out" || fail "after SIGHUP, status does not list x: $(cat "$tmp/status.out")"
step "SIGHUP: a member added to the cluster file is in the member list"

# --- SIGHUP with a broken file, and a key that takes a restart --------------------------------
cp "$c/a.yaml" "$tmp/a.good"
echo "no_such_key: 1" >> "$c/a.yaml"
kill -HUP "${pid[a]}"
for _ in $(seq 100); do grep -q "SIGHUP: kept the running configuration" "$tmp/a.log" && break; sleep 0.1; done
grep -q "ERROR SIGHUP: kept the running configuration: .*no_such_key" "$tmp/a.log" || fail "SIGHUP with a bad file: $(tail -5 "$tmp/a.log")"
kill -0 "${pid[a]}" || fail "a died on SIGHUP with a bad file"
cp "$tmp/a.good" "$c/a.yaml"
echo "tolerance: 0.3" >> "$c/a.yaml"
kill -HUP "${pid[a]}"
for _ in $(seq 100); do grep -q "SIGHUP: tolerance changed: it takes a restart" "$tmp/a.log" && break; sleep 0.1; done
grep -q "SIGHUP: tolerance changed: it takes a restart" "$tmp/a.log" || fail "SIGHUP: tolerance: $(tail -5 "$tmp/a.log")"
"$hetcast" status --config "$c/a.yaml" > /dev/null || true
step "SIGHUP: a bad file keeps the running configuration; tolerance is said to take a restart"
stop a
grep -q "^STOPPING=1" "$tmp/notify.log" || fail "no STOPPING=1: $(cat "$tmp/notify.log")"
step "passed"
