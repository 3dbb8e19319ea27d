#!/usr/bin/env bash
# A CA rotation on a running cluster of 4 daemons (r0..r3), in the three steps of
# docs/security.md ("Certificate lifetimes, expiry, CA rotation"), with pushes in flight:
#  - every step re-issues and installs every identity, then restarts one member at a time.
#    Before each restart the member takes part in no job (hetcast jobs), while a push to
#    the others (--exclude it, 8 MiB at 2 MiB/s) is in flight; the push is still running
#    once the member is back with its new identity, and it must end with exit 0 and
#    byte-identical copies. The next push includes the member just restarted, so every
#    mix of old and new identities the steps make carries a push;
#  - SIGHUP after a new identity file was installed says it takes a restart;
#  - a restart of a member inside a push ends its part only: exit 4 naming it, the others
#    get the file, and the next push reaches it;
#  - after step 3 an identity of the old CA (trusting both) is refused at the connection
#    with the reason logged, one of the new CA works, and no daemon died on the way.
#   usage: daemon_rotate_test.sh HETCASTD HETCAST
set -euo pipefail

hetcastd=$(realpath "$1")
hetcast=$(realpath "$2")
[[ -x $hetcastd && -x $hetcast ]] || { echo "usage: $0 HETCASTD HETCAST" >&2; exit 2; }

test_name="daemon rotate test"
stop_extra() { [[ -n ${push_pid:-} ]] && kill -KILL "$push_pid" 2>/dev/null; true; }
source "$(dirname "$0")/daemons.sh"

names=(r0 r1 r2 r3)
old=$tmp/old
new=$tmp/new
c=$tmp/c
new_ca "$old"
mkdir -p "$c"
cat > "$c/profile.yaml" <<'EOF'
nodes: [r0, r1, r2, r3]
latency:
  - [0, 0.001, 0.001, 0.001]
  - [0.001, 0, 0.001, 0.001]
  - [0.001, 0.001, 0, 0.001]
  - [0.001, 0.001, 0.001, 0]
bandwidth:
  - [8.0e+06, 8.0e+06, 8.0e+06, 8.0e+06]
  - [8.0e+06, 8.0e+06, 8.0e+06, 8.0e+06]
  - [8.0e+06, 8.0e+06, 8.0e+06, 8.0e+06]
  - [8.0e+06, 8.0e+06, 8.0e+06, 8.0e+06]
EOF
cluster "$c" "$old" "$c/profile.yaml" "${names[@]}"
# Each member reads its identity from where the operator installs it.
mkdir -p "$c/installed"
for n in "${names[@]}"; do
    install -m 600 "$old/$n.pem" "$c/installed/$n.pem"
    sed -i "s|^identity: .*|identity: $c/installed/$n.pem|" "$c/$n.yaml"
    mkdir -p "$c/$n/state" && cp "$c/profile.yaml" "$c/$n/state/map.yaml"
done
for n in "${names[@]}"; do start "$c" "$n"; done
head -c $((8 << 20)) /dev/urandom > "$tmp/payload.bin"
step "4 daemons up, identities of the old CA"

# issue DIR NAME [ARGS...]: NAME's identity signed by DIR/ca.pem into $tmp/issued/NAME.pem.
issue() {
    local dir=$1 n=$2
    shift 2
    mkdir -p "$tmp/issued"
    "$hetcast" keys issue "$n" --dir "$dir" -o "$tmp/issued/$n.pem" --force "$@" > /dev/null || fail "keys issue $n --dir $dir $*"
}
# reissue DIR [ARGS...]: every member's identity, installed (the daemons still run on the old).
reissue() {
    local n
    for n in "${names[@]}"; do
        issue "$1" "$n" "${@:2}"
        install -m 600 "$tmp/issued/$n.pem" "$c/installed/$n.pem"
    done
}

pushes=0
# push_start COORD WHAT ARGS...: a push of the payload from COORD to the others, in the
# background (push_pid), into folder WHAT; returns once a destination holds part of it.
push_start() {
    local coord=$1 what=$2
    shift 2
    pushes=$((pushes + 1))
    push_coord=$coord
    push_what=$what
    timeout 120 "$hetcast" push "$tmp/payload.bin" --config "$c/$coord.yaml" --all --algo chain --bwlimit 2MiB/s \
        --dest "$what" --json "$@" > "$tmp/$what.json" 2> "$tmp/$what.err" &
    push_pid=$!
    for _ in $(seq 200); do
        [[ -n $(find "$c"/r*/dest/"$what" -name '.payload.bin.hetcast-*.part' -size +0 2>/dev/null) ]] && return 0
        kill -0 "$push_pid" 2>/dev/null || fail "push $what ended before anything arrived: $(cat "$tmp/$what.err")"
        sleep 0.05
    done
    fail "push $what: nothing arrived within 10 s"
}
# push_end WANT_RC DEST...: waits for the push; its status and every listed copy.
push_end() {
    local want=$1 rc=0 n
    shift
    wait "$push_pid" || rc=$?
    push_pid=""
    [[ $rc -eq $want ]] || fail "push $push_what from $push_coord: exit $rc, not $want: $(cat "$tmp/$push_what.err")"
    for n in "$@"; do
        cmp -s "$tmp/payload.bin" "$c/$n/dest/$push_what/payload.bin" || fail "push $push_what: $n's copy differs or is missing"
    done
}
# restart NAME: SIGTERM, start again (it reads its installed identity).
restart() {
    stop "$1"
    start "$c" "$1"
}
others() { local n; for n in "${names[@]}"; do [[ $n == "$1" ]] || echo "$n"; done; }

# rolling TAG: restarts each member in turn while a push to the others is in flight; the
# push starts from the member after it, the one restarted before is among its destinations.
rolling() {
    local tag=$1 i m coord
    for i in "${!names[@]}"; do
        m=${names[$i]}
        coord=${names[$(((i + 1) % ${#names[@]}))]}
        push_start "$coord" "$tag-$m" --exclude "$m"
        "$hetcast" jobs --config "$c/$coord.yaml" --json > "$tmp/jobs.json" || fail "hetcast jobs: $(cat "$tmp/jobs.json")"
        python3 - "$tmp/jobs.json" "$m" <<'PY' || fail "$tag: $m is in a job, or the push is not listed: $(cat "$tmp/jobs.json")"
import json, sys
jobs = json.load(open(sys.argv[1]))["jobs"]
assert jobs and not any(j["member"] == sys.argv[2] for j in jobs), jobs
PY
        restart "$m"
        kill -0 "$push_pid" 2>/dev/null || fail "$tag: the push to all but $m ended before $m was back; it shows nothing"
        # shellcheck disable=SC2046
        push_end 0 $(others "$m" | grep -vx "$coord")
    done
}

# --- step 1: the new CA; every member re-issued by the old CA, trusting the new too --------
"$hetcast" keys init --dir "$new" > /dev/null || fail "keys init --dir new"
reissue "$old" --also-trust "$new/ca.pem"
kill -HUP "${pid[r0]}"
for _ in $(seq 50); do grep -q "SIGHUP: identity changed: it takes a restart" "$tmp/r0.log" && break; sleep 0.1; done
grep -q "SIGHUP: identity changed: it takes a restart" "$tmp/r0.log" || fail "SIGHUP did not say the new identity takes a restart"
rolling step1
step "step 1: each member restarted trusting both CAs while a push to the others ran; $pushes pushes, every copy identical"

# --- step 2: every identity re-issued by the new CA, trusting the old ----------------------
reissue "$new" --also-trust "$old/ca.pem"
issue "$new" operator --operator --also-trust "$old/ca.pem"
export HETCAST_IDENTITY=$tmp/issued/operator.pem
# A member restarted inside a push: its part ends, the others complete, the next push reaches it.
push_start r0 step2-inside
restart r2
push_end 4 r1 r3
grep -q "r2" "$tmp/step2-inside.err" || fail "the push does not name r2: $(cat "$tmp/step2-inside.err")"
rolling step2
step "step 2: each member restarted on the new CA (trusting the old) while a push to the others ran; one restarted inside a push failed alone (exit 4)"

# --- step 3: the new CA alone ---------------------------------------------------------------
reissue "$new"
export HETCAST_IDENTITY=$new/operator.pem
rolling step3
push_start r3 final
push_end 0 r0 r1 r2
step "step 3: each member restarted trusting the new CA alone while a push to the others ran; $pushes pushes in all"

# --- after: the old CA is refused at the connection, the new one works -----------------------
issue "$old" stale --operator --also-trust "$new/ca.pem"
rc=0
HETCAST_IDENTITY=$tmp/issued/stale.pem "$hetcast" status --config "$c/r1.yaml" > "$tmp/stale.out" 2>&1 || rc=$?
[[ $rc -ne 0 ]] || fail "an identity of the old CA was let in: $(cat "$tmp/stale.out")"
grep -q "refused this side's identity (.*unknown ca" "$tmp/stale.out" || fail "the old CA's refusal does not say why: $(cat "$tmp/stale.out")"
grep -q "WARN refused connection from a peer: TLS handshake failed: the peer's certificate was not issued by this cluster's CA" \
    "$tmp/r1.log" || fail "r1 did not log why it refused the old CA's identity: $(tail -n 5 "$tmp/r1.log")"
"$hetcast" status --config "$c/r1.yaml" > "$tmp/status.out" || fail "status with the new CA's operator: $(cat "$tmp/status.out")"
grep -q "4 of 4 up" "$tmp/status.out" || fail "not every member is up: $(cat "$tmp/status.out")"
for n in "${names[@]}"; do kill -0 "${pid[$n]}" 2>/dev/null || fail "$n died"; done
step "after step 3: the old CA's identity refused at the connection (logged), the new CA's works, 4 of 4 up"

for n in "${names[@]}"; do stop "$n"; done
step "passed"
