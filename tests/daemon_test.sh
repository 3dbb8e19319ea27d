#!/usr/bin/env bash
# Integration test of hetcastd and the hetcast commands that talk to it: four daemons on
# 127.0.0.1 with free ports; identities from `hetcast keys` (0600, never overwritten without
# --force); status, probe (also through a member other than the first), map show, a
# multi-source pattern push with every copy checked byte for byte; a push with a member's
# identity refused, no operator identity anywhere, the order the CLI looks for one; an
# identity file open to others, an identity of another name, a config with the old
# secret_file, a client of another CA, a bad config file; a fifth daemon joining, a hung
# member marked down after down_after, a stopped member skipped, a member leaving (and
# revoked: its certificate refused by every daemon); a clean shutdown on SIGTERM. Pushes of
# every algorithm, traversal, a daemon of another CA and a destination killed mid-push are
# in daemon_push_test.sh.
#   usage: daemon_test.sh HETCASTD HETCAST SOURCE_DIR
set -euo pipefail

hetcastd=$(realpath "$1")
hetcast=$(realpath "$2")
src=${3:-}
[[ -x $hetcastd && -x $hetcast ]] || { echo "usage: $0 HETCASTD HETCAST [SOURCE_DIR]" >&2; exit 2; }
[[ -z $src || -d $src ]] || { echo "daemon test: no source dir '$src'" >&2; exit 2; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/hetcast-daemon-test.XXXXXX")
pids=()
cleanup() {
    local rc=$?
    set +e
    trap "" PIPE
    for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
    for pid in "${pids[@]}"; do
        for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        kill -KILL "$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null || true
    done
    if [[ $rc -ne 0 ]]; then
        for f in "$tmp"/n*.log; do [[ -f $f ]] && { echo "--- $f (last lines)" >&2; tail -n 15 "$f" >&2; }; done
    fi
    rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

fail() { echo "daemon test: FAILED: $*" >&2; exit 1; }
step() { echo "daemon test: $*"; }

# Four free ports: bind port 0 and let the kernel choose.
read -r -a ports < <(python3 -c '
import socket
ss = [socket.socket() for _ in range(4)]
for s in ss: s.bind(("127.0.0.1", 0))
print(" ".join(str(s.getsockname()[1]) for s in ss))
for s in ss: s.close()')
[[ ${#ports[@]} -eq 4 ]] || fail "could not pick four free ports"

# The cluster's CA, the operator's identity (every hetcast command below proves it) and one
# identity per member, n4 (which joins later) and n9 (the port-in-use check) included.
keys=$tmp/keys
"$hetcast" keys init --dir "$keys" > "$tmp/keys.out" || fail "hetcast keys init failed: $(cat "$tmp/keys.out")"
for n in n0 n1 n2 n3 n4 n9; do
    "$hetcast" keys issue "$n" --dir "$keys" > "$tmp/keys.out" || fail "hetcast keys issue $n failed: $(cat "$tmp/keys.out")"
done
export HETCAST_IDENTITY=$keys/operator.pem
for f in ca operator n0 n1 n2 n3 n4 n9; do
    [[ $(stat -c %a "$keys/$f.pem") == 600 ]] || fail "hetcast keys wrote $f.pem with mode $(stat -c %a "$keys/$f.pem"), not 600"
done
out=$("$hetcast" keys show "$keys/n1.pem") || fail "hetcast keys show n1.pem: $out"
grep -qE '^name +n1$' <<< "$out" && grep -qE '^role +member$' <<< "$out" || fail "keys show n1.pem: $out"
out=$("$hetcast" keys show "$keys/operator.pem") || fail "hetcast keys show operator.pem: $out"
grep -qE '^role +operator$' <<< "$out" || fail "keys show operator.pem: $out"
# Never over an existing file without --force (issue, and a second init in the same
# folder); with --force, a new identity, still 0600.
cp "$keys/n1.pem" "$tmp/n1-before.pem"
cp "$keys/ca.pem" "$tmp/ca-before.pem"
rc=0
"$hetcast" keys issue n1 --dir "$keys" > /dev/null 2> "$tmp/keys.err" || rc=$?
[[ $rc -ne 0 ]] && grep -q 'exists' "$tmp/keys.err" || fail "keys issue over n1.pem: status $rc: $(cat "$tmp/keys.err")"
cmp -s "$keys/n1.pem" "$tmp/n1-before.pem" || fail "a refused keys issue changed n1.pem"
rc=0
"$hetcast" keys init --dir "$keys" > /dev/null 2> "$tmp/keys.err" || rc=$?
[[ $rc -ne 0 ]] && grep -q 'exists' "$tmp/keys.err" || fail "a second keys init in $keys: status $rc: $(cat "$tmp/keys.err")"
cmp -s "$keys/ca.pem" "$tmp/ca-before.pem" || fail "a refused keys init changed ca.pem"
"$hetcast" keys issue n1 --dir "$keys" --force > /dev/null 2> "$tmp/keys.err" || fail "keys issue --force: $(cat "$tmp/keys.err")"
! cmp -s "$keys/n1.pem" "$tmp/n1-before.pem" || fail "keys issue --force did not replace n1.pem"
[[ $(stat -c %a "$keys/n1.pem") == 600 ]] || fail "keys issue --force: n1.pem has mode $(stat -c %a "$keys/n1.pem")"
step "keys: a CA, the operator and 6 members, all 0600; issue and init refuse to overwrite, --force replaces"

{
    echo "members:"
    for i in 0 1 2 3; do echo "  - {name: n$i, host: 127.0.0.1, port: ${ports[$i]}}"; done
    echo "groups:"
    echo "  even: 'n[0,2]'"
    echo "  far: '@even,n3!n0'"   # n2, n3
} > "$tmp/cluster.yaml"
for i in 0 1 2 3; do
    mkdir -p "$tmp/n$i"
    cat > "$tmp/n$i.yaml" <<EOF
name: n$i
listen: 127.0.0.1:${ports[$i]}
state_dir: n$i/state
dest_root: n$i/dest
identity: keys/n$i.pem
cluster: cluster.yaml
serve_roots: [.]
stall_timeout: 20
EOF
done
echo "down_after: 0.5" >> "$tmp/n0.yaml"

for i in 0 1 2 3; do
    "$hetcastd" --config "$tmp/n$i.yaml" 2> "$tmp/n$i.log" &
    pids+=($!)
done

# Wait (bounded) until every daemon answers.
for i in 0 1 2 3; do
    up=no
    for _ in $(seq 100); do
        kill -0 "${pids[$i]}" 2>/dev/null || fail "hetcastd n$i exited: $(cat "$tmp/n$i.log")"
        if "$hetcast" status --config "$tmp/n$i.yaml" > /dev/null 2>&1; then up=yes; break; fi
        sleep 0.1
    done
    [[ $up == yes ]] || fail "hetcastd n$i did not answer within 10 s"
done
grep -q "INFO ready: .*port ${ports[0]}" "$tmp/n0.log" || fail "no 'ready' log line: $(cat "$tmp/n0.log")"
grep -Eq '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8}\.[0-9]{3}Z INFO ' "$tmp/n0.log" || fail "log lines lack a timestamp and level"
step "4 daemons listening on ports ${ports[*]}"

# status: four members up, no map yet.
out=$("$hetcast" status --config "$tmp/n0.yaml")
[[ $(grep -cE '^n[0-3] .* up ' <<< "$out") -eq 4 ]] || fail "status does not show 4 up: $out"
grep -q '4 of 4 up' <<< "$out" || fail "status summary: $out"
grep -q 'no map' <<< "$out" || fail "status should say 'no map' before a probe: $out"
out=$("$hetcast" status --config "$tmp/n0.yaml" --from n2 --json)
python3 -c 'import json,sys; a=json.load(sys.stdin); assert a["asked"]["name"]=="n2" and sum(m["up"] for m in a["members"])==4' <<< "$out" \
    || fail "status --from n2 --json: $out"
# No local daemon answers (its port is closed): --from finds the member in the cluster file.
dead=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
sed "s/^listen: .*/listen: 127.0.0.1:$dead/" "$tmp/n0.yaml" > "$tmp/no-local.yaml"
out=$("$hetcast" status --config "$tmp/no-local.yaml" --from 'n[1]' --json) || fail "--from n[1] without a local daemon: $out"
python3 -c 'import json,sys; assert json.load(sys.stdin)["asked"]["name"]=="n1"' <<< "$out" || fail "--from n[1] without a local daemon asked another: $out"
step "status: 4 up"

# probe: a map of the four members, written with -o and stored on every daemon.
out=$("$hetcast" probe --config "$tmp/n0.yaml" --seconds 0.2 --repeats 2 --reps 3 -o "$tmp/map.yaml") \
    || fail "probe failed"
grep -qE '^probed 4 members in [0-9.]+ s \([0-9]+ measurements, [0-9.]+ s of transfers\); [0-9] subnets? at tolerance' <<< "$out" \
    || fail "probe printed no summary: $out"
grep -q 'NICs (Mbit/s' <<< "$out" && [[ $(grep -cE '^  n[0-3] +out +[0-9.]+ +in +[0-9.]+$' <<< "$out") -eq 4 ]] \
    || fail "probe printed no NIC rates: $out"
grep -q 'clock offsets' <<< "$out" || fail "probe printed no clock offsets: $out"
# Where the measuring went: waiting for first bytes and for answers are parts of it.
read -r meas first answers < <(sed -nE 's/.*measuring ([0-9.]+) s \(waiting for first bytes ([0-9.]+) s, for answers after the last bytes ([0-9.]+) s\).*/\1 \2 \3/p' <<< "$out")
[[ -n ${meas:-} ]] || fail "probe printed no split of its measuring time: $out"
awk -v m="$meas" -v f="$first" -v a="$answers" 'BEGIN { exit !(m > 0 && f + a <= m + 0.15) }' \
    || fail "probe: first bytes $first s + answers $answers s exceed measuring $meas s"
grep -q '^capacity:' "$tmp/map.yaml" || fail "the probed map has no capacities: $(cat "$tmp/map.yaml")"
for i in 0 1 2 3; do grep -q "n$i" "$tmp/map.yaml" || fail "the map lacks n$i"; done
nodes=$("$hetcast" map --network "$tmp/map.yaml" --json | python3 -c 'import json,sys; print(sum(len(s) for s in json.load(sys.stdin)["subnets"]))')
[[ $nodes -eq 4 ]] || fail "the probed map has $nodes nodes, not 4"
for i in 0 1 2 3; do [[ -s $tmp/n$i/state/map.yaml ]] || fail "n$i did not store the map"; done
for i in 0 1 2 3; do
    grep -qE '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]+Z INFO ready: .n'$i'.' "$tmp/n$i/state/hetcastd.log" ||
        fail "n$i's state_dir/hetcastd.log lacks its timestamped ready line"
done
"$hetcast" status --config "$tmp/n3.yaml" | grep -q 'map: measured .* ago' || fail "status after the probe shows no map age"
step "probe: map of 4 nodes"

# probe through n2, which is neither the first member nor the first of most pairs: every
# member still gets a clock offset relative to n2 (one machine: near zero), n2 itself 0.
out=$("$hetcast" probe --config "$tmp/n0.yaml" --from n2 --seconds 0.1 --repeats 1 --reps 3) \
    || fail "probe through n2 failed: $out"
offsets=$(sed -n '/^clock offsets/,$p' <<< "$out" | grep -E '^  n[0-9]+ +[+-][0-9]+\.[0-9]{3} ms$' || true)
for i in 0 1 2 3; do
    [[ $(grep -cE "^  n$i " <<< "$offsets") -eq 1 ]] || fail "probe through n2: no offset line for n$i: $out"
done
[[ $(wc -l <<< "$offsets") -eq 4 ]] || fail "probe through n2: not 4 offset lines: $out"
grep -qE '^  n2 +\+0\.000 ms$' <<< "$offsets" || fail "probe through n2: n2's own offset is not 0: $out"
awk '{ v = $2 + 0; if (v < -50 || v > 50) exit 1 }' <<< "$offsets" || fail "probe through n2: offsets over 50 ms on one host: $out"
step "probe through n2: an offset for each of the 4 members"

# map show: the subnets and both matrices, or DOT.
out=$("$hetcast" map show --config "$tmp/n1.yaml")
for i in 0 1 2 3; do grep -q "n$i" <<< "$out" || fail "map show lacks n$i: $out"; done
grep -q '^4 members' <<< "$out" || fail "map show: $out"
grep -q 'latency (ms)' <<< "$out" && grep -q 'bandwidth (MB/s)' <<< "$out" || fail "map show lacks the matrices: $out"
grep -q 'NICs (Mbit/s' <<< "$out" || fail "map show lacks the NIC rates: $out"
out=$("$hetcast" map show --config "$tmp/n1.yaml" --dot)
grep -q 'subgraph cluster_0' <<< "$out" && grep -q '"n0" -- "n1"' <<< "$out" || fail "map show --dot: $out"
"$hetcast" map --network "$tmp/map.yaml" > /dev/null || fail "'hetcast map --network' no longer works"
step "map show: 4 members, matrices, dot"

head -c $((16 << 20)) /dev/urandom > "$tmp/payload.bin"

# A daemon reads only files under its serve_roots ($tmp here): a file elsewhere, or a link
# inside that leads out, is refused in one line (status 2) before anything is planned.
ln -s /etc/hostname "$tmp/escape-link"
for f in /etc/hostname "$tmp/escape-link"; do
    rc=0
    "$hetcast" push "$f" --config "$tmp/n0.yaml" --all > "$tmp/serve.out" 2> "$tmp/serve.err" || rc=$?
    [[ $rc -eq 2 && $(wc -l < "$tmp/serve.err") -eq 1 ]] && grep -q "outside the folders this daemon serves" "$tmp/serve.err" ||
        fail "push of $f outside serve_roots: status $rc: $(cat "$tmp/serve.err")"
done
[[ -z $(find "$tmp"/n*/dest -name hostname -o -name escape-link) ]] || fail "a file outside serve_roots was sent"
cat > "$tmp/outside-pattern.yaml" <<PATTERN
- {source: n1, file: /etc/hostname, dests: [n2]}
PATTERN
rc=0
"$hetcast" push --pattern "$tmp/outside-pattern.yaml" --config "$tmp/n0.yaml" 2> "$tmp/serve.err" > /dev/null || rc=$?
[[ $rc -ne 0 ]] && grep -q "outside the folders this daemon serves" "$tmp/serve.err" ||
    fail "a pattern naming a file outside n1's serve_roots: status $rc: $(cat "$tmp/serve.err")"
step "serve_roots: /etc/hostname, a link out of the root and a pattern's file outside refused ($(head -c 120 "$tmp/serve.err"))"

# push --pattern: three sources at once (Wu's multi-node multicast, executed). n1 and n2
# serve their own files, n3 a generated payload; n0 coordinates. Each copy is checked.
head -c $((1 << 20)) /dev/urandom > "$tmp/from-n1.bin"
head -c $((3 << 19)) /dev/urandom > "$tmp/from-n2.bin"
cat > "$tmp/pattern.yaml" <<PATTERN
- {source: n1, file: $tmp/from-n1.bin, dests: [n0, n2, n3]}
- {source: n2, file: $tmp/from-n2.bin, dests: all}
- {source: n3, size: 300000, dests: [n0, n1]}
PATTERN
# exchange+ct cuts through: every relay needs the sources' piece digests, which a source
# gives for its own file only under the operator's order.
for algo in wr wrp exchange+ct; do
    for i in 0 1 2 3; do rm -rf "$tmp/n$i/dest/pat"; done
    "$hetcast" push --pattern "$tmp/pattern.yaml" --config "$tmp/n0.yaml" --algo "$algo" --dest pat --json \
        > "$tmp/pattern-$algo.json" || fail "push --pattern --algo $algo failed: $(cat "$tmp/pattern-$algo.json")"
    python3 - "$tmp/pattern-$algo.json" "$algo" <<'PY' || fail "push --pattern --algo $algo: bad report"
import json, sys
doc = json.load(open(sys.argv[1]))
assert doc["ok"] and len(doc["reports"]) == 1, doc
r = doc["reports"][0]
assert r["ok"] and len(r["outcomes"]) == 3 + 3 + 2, r
assert r["algorithm"] == sys.argv[2], r["algorithm"]
assert 0 < r["lower_bound"] <= r["predicted"] and r["achieved"] > 0, r
assert {o["source"] for o in r["outcomes"]} == {"n1", "n2", "n3"}, r
assert sys.argv[2] != "exchange+ct" or r.get("relay") == "cut-through", r.get("relay")
PY
    for i in 0 2 3; do cmp -s "$tmp/from-n1.bin" "$tmp/n$i/dest/pat/from-n1.bin" || fail "pattern $algo: n$i lacks n1's file"; done
    for i in 0 1 3; do cmp -s "$tmp/from-n2.bin" "$tmp/n$i/dest/pat/from-n2.bin" || fail "pattern $algo: n$i lacks n2's file"; done
    for i in 0 1; do
        [ "$(stat -c %s "$tmp/n$i/dest/pat/n3-3.bin")" = 300000 ] || fail "pattern $algo: n$i lacks n3's payload"
    done
    cmp -s "$tmp/n0/dest/pat/n3-3.bin" "$tmp/n1/dest/pat/n3-3.bin" || fail "pattern $algo: n3's payload differs between copies"
    [ ! -e "$tmp/n2/dest/pat/n3-3.bin" ] || fail "pattern $algo: n2 got a message not meant for it"
    step "push --pattern --algo $algo: 3 sources, 8 deliveries, every copy checked"
done

# Groups from the cluster file, wherever node sets are taken: @far is n2 and n3.
for i in 1 2 3; do rm -f "$tmp/n$i/dest/grouped.bin"; done
head -c 100000 /dev/urandom > "$tmp/grouped.bin"
"$hetcast" push "$tmp/grouped.bin" --config "$tmp/n0.yaml" --to @far --algo flat --quiet > "$tmp/group-push.out" 2>&1 ||
    fail "push --to @far: $(cat "$tmp/group-push.out")"
for i in 2 3; do cmp -s "$tmp/grouped.bin" "$tmp/n$i/dest/grouped.bin" || fail "push --to @far: n$i lacks the file"; done
[[ ! -e $tmp/n1/dest/grouped.bin ]] || fail "push --to @far reached n1"
out=$("$hetcast" status --config "$tmp/n0.yaml" -w @far) || fail "status -w @far: $out"
[[ $(grep -cE '^n[0-3] ' <<< "$out") -eq 2 ]] && grep -qE '^n2 ' <<< "$out" && grep -qE '^n3 ' <<< "$out" &&
    grep -q '2 of 2 up' <<< "$out" || fail "status -w @far: $out"
out=$("$hetcast" status --config "$tmp/n0.yaml" -w '@*' -x '@even' --json) || fail "status -w @* -x @even: $out"
python3 -c 'import json,sys; a=json.load(sys.stdin); assert sorted(m["name"] for m in a["members"])==["n1","n3"], a' <<< "$out" ||
    fail "status -w @* -x @even --json: $out"
out=$("$hetcast" status --config "$tmp/n0.yaml" -w @subnet:0) || fail "status -w @subnet:0: $out"
grep -qE '^n0 ' <<< "$out" || fail "status -w @subnet:0 lacks n0 (subnet 0 holds the first member): $out"
for bad in "push|$tmp/grouped.bin|--to|@near" "status|-w|@near"; do
    IFS='|' read -r -a argv <<< "$bad"
    rc=0
    "$hetcast" "${argv[@]}" --config "$tmp/n0.yaml" > /dev/null 2> "$tmp/group.err" || rc=$?
    [[ $rc -eq 2 && $(wc -l < "$tmp/group.err") -eq 1 ]] && grep -q "no group '@near' (.*the cluster file's groups: @even, @far)" "$tmp/group.err" ||
        fail "${argv[*]}: status $rc: $(cat "$tmp/group.err")"
done
step "groups: push --to @far reached n2 and n3 only; status -w @far, -w @* -x @even, -w @subnet:0; @near refused ($(cat "$tmp/group.err"))"

# A member's identity is not the operator's: a push, a probe and a leave with n2's are
# refused in one line naming it (non-zero status), nothing lands, nobody leaves; asking
# (status) is allowed.
head -c $((1 << 20)) /dev/urandom > "$tmp/by-member.bin"
rc=0
"$hetcast" push "$tmp/by-member.bin" --config "$tmp/n0.yaml" --all -i "$keys/n2.pem" > "$tmp/member.out" 2> "$tmp/member.err" || rc=$?
[[ $rc -ne 0 ]] || fail "a push with n2's member identity succeeded: $(cat "$tmp/member.out")"
[[ $(wc -l < "$tmp/member.err") -eq 1 ]] && grep -q "needs the operator's identity" "$tmp/member.err" &&
    grep -q "'n2'" "$tmp/member.err" || fail "a push with n2's identity: status $rc: $(cat "$tmp/member.err")"
member_err=$(cat "$tmp/member.err")
rc=0
"$hetcast" probe --config "$tmp/n0.yaml" --seconds 0.1 --repeats 1 --reps 1 -i "$keys/n2.pem" > /dev/null 2> "$tmp/member.err" || rc=$?
[[ $rc -ne 0 ]] && grep -q "needs the operator's identity" "$tmp/member.err" ||
    fail "a probe with n2's identity: status $rc: $(cat "$tmp/member.err")"
rc=0
"$hetcast" leave n1 --yes --config "$tmp/n0.yaml" -i "$keys/n2.pem" > /dev/null 2> "$tmp/member.err" || rc=$?
[[ $rc -ne 0 ]] && grep -q "needs the operator's identity" "$tmp/member.err" ||
    fail "a leave with n2's identity: status $rc: $(cat "$tmp/member.err")"
sleep 0.5  # what a push or a leave that got through would have done by now
[[ -z $(find "$tmp"/n*/dest -name by-member.bin) ]] || fail "a push with a member's identity landed: $(find "$tmp"/n*/dest -name by-member.bin)"
out=$("$hetcast" status --config "$tmp/n0.yaml" -i "$keys/n2.pem") || fail "status with n2's identity: $out"
grep -q '4 of 4 up' <<< "$out" || fail "after a member's leave n1, status: $out"
grep -q "WARN refused 'push' from 'n2'" "$tmp/n0.log" || fail "n0 did not log the refused push"
step "member identity: push, probe and leave refused ($member_err), nothing landed; status allowed"

# Where the CLI finds the operator's identity: -i, else $HETCAST_IDENTITY, else
# $XDG_CONFIG_HOME/hetcast/operator.pem (~/.config/hetcast/operator.pem without it), else
# /etc/hetcast/operator.pem; none of them: one line, status 2. The checks of the files
# under a home folder need no /etc/hetcast/operator.pem on this machine.
"$hetcast" keys init --dir "$tmp/other" > /dev/null || fail "keys init of a second CA failed"
out=$(HETCAST_IDENTITY=$tmp/other/operator.pem "$hetcast" status --config "$tmp/n0.yaml" -i "$keys/operator.pem" 2>&1) ||
    fail "-i did not win over HETCAST_IDENTITY: $out"
home=$tmp/home
mkdir -p "$home"
nohome() { env -u HETCAST_IDENTITY -u XDG_CONFIG_HOME HOME="$home" "$@"; }
if [[ -e /etc/hetcast/operator.pem ]]; then
    step "no operator identity: skipped, /etc/hetcast/operator.pem exists on this machine"
else
    rc=0
    nohome "$hetcast" status --config "$tmp/n0.yaml" > "$tmp/noid.out" 2> "$tmp/noid.err" || rc=$?
    [[ $rc -eq 2 && $(wc -l < "$tmp/noid.err") -eq 1 ]] && grep -q 'no operator identity' "$tmp/noid.err" ||
        fail "no identity anywhere: status $rc: $(cat "$tmp/noid.err")"
    rc=0
    nohome XDG_CONFIG_HOME="$home/xdg" "$hetcast" push "$tmp/by-member.bin" --config "$tmp/n0.yaml" --all \
        > "$tmp/noid.out" 2> "$tmp/noid.err" || rc=$?
    [[ $rc -eq 2 && $(wc -l < "$tmp/noid.err") -eq 1 ]] && grep -q 'no operator identity' "$tmp/noid.err" ||
        fail "push with no identity anywhere: status $rc: $(cat "$tmp/noid.err")"
    noid_err=$(cat "$tmp/noid.err")
    mkdir -p "$home/.config/hetcast" "$home/xdg/hetcast"
    cp -p "$keys/operator.pem" "$home/.config/hetcast/operator.pem"
    out=$(nohome "$hetcast" status --config "$tmp/n0.yaml" 2>&1) || fail "~/.config/hetcast/operator.pem not found: $out"
    # With XDG_CONFIG_HOME set, its hetcast/operator.pem (here of another CA: refused) is the one.
    cp -p "$tmp/other/operator.pem" "$home/xdg/hetcast/operator.pem"
    rc=0
    nohome XDG_CONFIG_HOME="$home/xdg" "$hetcast" status --config "$tmp/n0.yaml" > /dev/null 2>&1 || rc=$?
    [[ $rc -ne 0 ]] || fail "\$XDG_CONFIG_HOME/hetcast/operator.pem was not preferred to ~/.config/hetcast/operator.pem"
    out=$(nohome XDG_CONFIG_HOME="$home/xdg" HETCAST_IDENTITY="$keys/operator.pem" "$hetcast" status --config "$tmp/n0.yaml" 2>&1) ||
        fail "HETCAST_IDENTITY did not win over \$XDG_CONFIG_HOME/hetcast/operator.pem: $out"
    step "no operator identity: status 2, one line ($noid_err); -i, HETCAST_IDENTITY, XDG_CONFIG_HOME, ~/.config in that order"
fi

# An identity file open to its group or to others: hetcastd refuses to start, in one line
# saying what to do.
for mode in 644 640 604; do
    cp "$keys/n0.pem" "$keys/open.pem"
    chmod "$mode" "$keys/open.pem"
    sed -e 's/^identity: .*/identity: keys\/open.pem/' -e 's/^listen: .*/listen: 127.0.0.1:0/' \
        -e 's/^state_dir: .*/state_dir: open-state/' "$tmp/n0.yaml" > "$tmp/open.yaml"
    rc=0
    timeout 10 "$hetcastd" --config "$tmp/open.yaml" > "$tmp/open.out" 2> "$tmp/open.err" || rc=$?
    [[ $rc -ne 0 && $rc -ne 124 ]] || fail "hetcastd with an identity of mode $mode: status $rc"
    [[ $(wc -l < "$tmp/open.err") -eq 1 ]] && grep -q 'chmod 600' "$tmp/open.err" \
        || fail "identity of mode $mode: $(cat "$tmp/open.err")"
    [[ ! -s $tmp/open.out ]] || fail "hetcastd printed on stdout"
done
rm -f "$keys/open.pem"
step "identity open to others (644, 640, 604) refused: $(cat "$tmp/open.err")"

# An identity of another name than the daemon's, an operator's identity, and a config with
# the old secret_file: each refused at start in one line.
sed -e 's/^identity: .*/identity: keys\/n1.pem/' -e 's/^listen: .*/listen: 127.0.0.1:0/' \
    -e 's/^state_dir: .*/state_dir: other-state/' "$tmp/n0.yaml" > "$tmp/other-name.yaml"
rc=0
timeout 10 "$hetcastd" --config "$tmp/other-name.yaml" 2> "$tmp/other-name.err" || rc=$?
[[ $rc -ne 0 && $rc -ne 124 && $(wc -l < "$tmp/other-name.err") -eq 1 ]] && grep -q "'n1'" "$tmp/other-name.err" &&
    grep -q "'n0'" "$tmp/other-name.err" || fail "n0 with n1's identity: status $rc: $(cat "$tmp/other-name.err")"
rc=0
timeout 10 "$hetcastd" --config "$tmp/other-name.yaml" --name operator --identity "$keys/operator.pem" 2> "$tmp/as-op.err" || rc=$?
[[ $rc -ne 0 && $rc -ne 124 && $(wc -l < "$tmp/as-op.err") -eq 1 ]] && grep -q "operator" "$tmp/as-op.err" ||
    fail "a daemon with the operator's identity: status $rc: $(cat "$tmp/as-op.err")"
sed -e 's/^identity: .*/secret_file: keys\/n0.pem/' "$tmp/other-name.yaml" > "$tmp/old.yaml"
rc=0
timeout 10 "$hetcastd" --config "$tmp/old.yaml" 2> "$tmp/old.err" || rc=$?
[[ $rc -eq 2 && $(wc -l < "$tmp/old.err") -eq 1 ]] && grep -q "secret_file" "$tmp/old.err" && grep -q "identity" "$tmp/old.err" ||
    fail "a config with secret_file: status $rc: $(cat "$tmp/old.err")"
step "n1's identity for n0, the operator's for a daemon, secret_file: refused ($(cat "$tmp/other-name.err"); $(cat "$tmp/old.err"))"

# A congestion control the kernel does not have: refused at start, one line, status 2.
sed -e 's/^identity: .*/identity: keys\/n0.pem/' "$tmp/other-name.yaml" > "$tmp/cc.yaml"
echo "tcp_congestion: nosuchcc0" >> "$tmp/cc.yaml"
rc=0
timeout 10 "$hetcastd" --config "$tmp/cc.yaml" 2> "$tmp/cc.err" || rc=$?
[[ $rc -eq 2 && $(wc -l < "$tmp/cc.err") -eq 1 ]] && grep -q "tcp_congestion: 'nosuchcc0': this kernel has no such" "$tmp/cc.err" ||
    fail "tcp_congestion: nosuchcc0: status $rc: $(cat "$tmp/cc.err")"
step "a congestion control the kernel lacks refused at start: $(cat "$tmp/cc.err")"

# A client whose identity another CA issued: the TLS handshake fails, in one line naming the
# certificate; the daemons keep serving and n0 logs the refused connection.
rc=0
"$hetcast" status --config "$tmp/n0.yaml" -i "$tmp/other/operator.pem" > /dev/null 2> "$tmp/wrong.err" || rc=$?
[[ $rc -ne 0 ]] || fail "status with another CA's identity succeeded"
grep -qiE 'certificate|cluster.s CA' "$tmp/wrong.err" || fail "another CA: unclear error: $(cat "$tmp/wrong.err")"
[[ $(wc -l < "$tmp/wrong.err") -eq 1 ]] || fail "another CA: more than one line: $(cat "$tmp/wrong.err")"
"$hetcast" status --config "$tmp/n0.yaml" | grep -q '4 of 4 up' || fail "the daemons stopped serving after another CA's client"
grep -q 'WARN refused connection from .*TLS handshake failed' "$tmp/n0.log" || fail "n0 did not log the refused connection"
step "another CA's identity refused: $(cat "$tmp/wrong.err")"

# A bad config file: exit 2 and file:line.
printf 'name: bad\nlisten: 127.0.0.1:0\nstate_dir: s\ndest_root: d\nidentity: keys/n0.pem\nchunk: lots\n' > "$tmp/bad.yaml"
rc=0
timeout 10 "$hetcastd" --config "$tmp/bad.yaml" 2> "$tmp/bad.err" || rc=$?
[[ $rc -eq 2 ]] || fail "a bad config: status $rc, not 2: $(cat "$tmp/bad.err")"
grep -Eq "^hetcastd: .*bad\.yaml:6:[0-9]+: " "$tmp/bad.err" || fail "a bad config: no file:line: $(cat "$tmp/bad.err")"
[[ $(wc -l < "$tmp/bad.err") -eq 1 ]] || fail "a bad config: more than one line"
step "bad config refused: $(cat "$tmp/bad.err")"
rc=0
timeout 10 "$hetcastd" --config "$tmp/n0.yaml" --listen nonsense 2> "$tmp/bad.err" || rc=$?
[[ $rc -eq 2 ]] || fail "--listen nonsense: status $rc, not 2"
step "a bad --listen refused: $(cat "$tmp/bad.err")"

# Listening on a port already in use: one line, status 1.
rc=0
timeout 10 "$hetcastd" --config "$tmp/n1.yaml" --name n9 --identity "$keys/n9.pem" --state-dir "$tmp/n9-state" \
    --listen "127.0.0.1:${ports[0]}" 2> "$tmp/bind.err" || rc=$?
[[ $rc -eq 1 && $(wc -l < "$tmp/bind.err") -eq 1 ]] || fail "a port in use: status $rc: $(cat "$tmp/bind.err")"
grep -qi "in use" "$tmp/bind.err" && ! grep -q "state directory" "$tmp/bind.err" ||
    fail "a port in use: not the port's error: $(cat "$tmp/bind.err")"
step "port in use refused: $(cat "$tmp/bind.err")"

# join: a fifth daemon started with --join n1's address (no cluster file of its own) is
# refused while no member knows it; the operator's 'hetcast join' adds it: it gets the
# member list and the map from n1; every member learns it; the map gains its row and
# column; the next push from n0 to --all reaches it.
port4=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
mkdir -p "$tmp/n4"
cat > "$tmp/n4.yaml" <<EOF
name: n4
listen: 127.0.0.1:$port4
state_dir: n4/state
dest_root: n4/dest
identity: keys/n4.pem
serve_roots: [.]
stall_timeout: 20
EOF
"$hetcastd" --config "$tmp/n4.yaml" --join "127.0.0.1:${ports[1]}" 2> "$tmp/n4.log" &
pids+=($!)
for _ in $(seq 100); do grep -q "cannot join through any seed yet" "$tmp/n4.log" && break; sleep 0.1; done
grep -q "cannot join through any seed yet (.*'n4' is not a member of this cluster" "$tmp/n4.log" ||
    fail "n4 joined on its own, without the operator's order: $(cat "$tmp/n4.log")"
"$hetcast" join n4 "127.0.0.1:$port4" --config "$tmp/n0.yaml" --from n1 > "$tmp/join.out" 2>&1 ||
    fail "hetcast join n4: $(cat "$tmp/join.out")"
joined=no
for _ in $(seq 200); do
    kill -0 "${pids[4]}" 2>/dev/null || fail "hetcastd n4 exited: $(cat "$tmp/n4.log")"
    if grep -q "joined the cluster through 'n1'" "$tmp/n4.log"; then joined=yes; break; fi
    sleep 0.1
done
[[ $joined == yes ]] || fail "n4 did not join within 20 s: $(cat "$tmp/n4.log")"
# The probed map has subnets and capacities: n4 was measured against a member of each subnet,
# and the map keeps its capacities, n4's NIC rates among them.
grep -q "'n4' measured against [0-9]* subnets ([0-9]* measurements): subnet" "$tmp/n1.log" ||
    fail "the join did not measure n4 against the subnets: $(cat "$tmp/n1.log")"
"$hetcast" map show --config "$tmp/n0.yaml" --json > "$tmp/map-join.json" || fail "map show after the join"
python3 -c '
import json, sys
m = json.load(open(sys.argv[1]))["map"]
names = [n if isinstance(n, str) else n["name"] for n in m["nodes"]]
assert "n4" in names and len(m["capacity"]["egress"]) == 5 and m["capacity"]["egress"][names.index("n4")] > 0, m.get("capacity")
' "$tmp/map-join.json" || fail "after the join the map lost its capacities: $(cat "$tmp/map-join.json")"
# probe --refresh: n2 alone measured again, against the subnets; the map keeps every member.
"$hetcast" probe --refresh n2 --config "$tmp/n0.yaml" --seconds 0.2 --repeats 1 --reps 2 --json > "$tmp/refresh.json" \
    || fail "probe --refresh n2: $(cat "$tmp/refresh.json")"
python3 -c '
import json, sys
p = json.load(open(sys.argv[1]))
assert any(n.startswith("n2 measured again against") for n in p["notes"]), p["notes"]
assert len(p["map"]["nodes"]) == 5 and len(p["map"]["capacity"]["egress"]) == 5, p["map"]
' "$tmp/refresh.json" || fail "probe --refresh n2: $(cat "$tmp/refresh.json")"
# probe --refresh-uplink: n2's subnet's uplink measured again, the rest kept; on a map of one
# subnet (loopback may probe as one) a one-line error instead.
rc=0
"$hetcast" probe --refresh-uplink n2 --config "$tmp/n0.yaml" --seconds 0.2 --repeats 1 --reps 2 --json \
    > "$tmp/refresh-uplink.json" 2> "$tmp/refresh-uplink.err" || rc=$?
python3 -c '
import json, sys
m = json.load(open(sys.argv[1]))["map"]
rc = int(sys.argv[3])
if len(m["subnets"]) >= 2:
    p = json.load(open(sys.argv[2]))
    assert rc == 0, rc
    assert any(n.startswith("the uplink of n2\x27s subnet measured again: ") for n in p["notes"]), p["notes"]
    assert len(p["map"]["nodes"]) == 5 and p["map"]["subnets"] == m["subnets"], p["map"]
else:
    err = open(sys.argv[4]).read().splitlines()
    assert rc != 0 and len(err) == 1 and "one subnet" in err[0], (rc, err)
' <("$hetcast" map show --config "$tmp/n0.yaml" --json) "$tmp/refresh-uplink.json" "$rc" "$tmp/refresh-uplink.err" \
    || fail "probe --refresh-uplink n2: status $rc: $(cat "$tmp/refresh-uplink.json" "$tmp/refresh-uplink.err")"
rc=0
"$hetcast" probe --refresh n7 --config "$tmp/n0.yaml" > /dev/null 2> "$tmp/refresh.err" || rc=$?
[[ $rc -ne 0 && $(wc -l < "$tmp/refresh.err") -eq 1 ]] && grep -q "'n7' is not a member" "$tmp/refresh.err" ||
    fail "probe --refresh of a stranger: status $rc: $(cat "$tmp/refresh.err")"
for i in 0 2 4; do
    out=$("$hetcast" status --config "$tmp/n$i.yaml")
    grep -q '5 of 5 up' <<< "$out" || fail "after the join, n$i's status: $out"
    out=$("$hetcast" map show --config "$tmp/n$i.yaml")
    grep -q '^5 members' <<< "$out" || fail "after the join, n$i's map: $out"
done
for i in 1 2 3 4; do rm -f "$tmp/n$i/dest/payload.bin"; done
"$hetcast" push "$tmp/payload.bin" --config "$tmp/n0.yaml" --all --algo ecef --json > "$tmp/push-join.json" \
    || fail "push after the join failed: $(cat "$tmp/push-join.json")"
for i in 1 2 3 4; do cmp -s "$tmp/payload.bin" "$tmp/n$i/dest/payload.bin" || fail "after the join, n$i's copy"; done
# The map has capacities: the report's bounds (computed while the push runs) include the
# steady-state throughput, and the lower bound is at least what it forces.
python3 - "$tmp/push-join.json" <<'PY' || fail "push after the join: bounds: $(cat "$tmp/push-join.json")"
import json, sys
r = json.load(open(sys.argv[1]))["reports"][0]
assert r["throughput_bound"] > 0, r["throughput_bound"]
assert r["lower_bound"] >= r["bytes"] / r["throughput_bound"] * (1 - 1e-9), (r["lower_bound"], r["bytes"], r["throughput_bound"])
assert r["lower_bound"] <= r["achieved"] * (1 + 1e-9), r
PY
out=$("$hetcast" status --config "$tmp/n0.yaml" --from n4 --json) || fail "status --from n4 (joined, not in the cluster file): $out"
python3 -c 'import json,sys; assert json.load(sys.stdin)["asked"]["name"]=="n4"' <<< "$out" || fail "status --from n4 asked another: $out"
rc=0
"$hetcast" status --config "$tmp/n0.yaml" --from 'n[1-2]' > /dev/null 2> "$tmp/from.err" || rc=$?
[[ $rc -eq 2 && $(wc -l < "$tmp/from.err") -eq 1 ]] && grep -q "names 2 members (n\[1-2\]): give one" "$tmp/from.err" ||
    fail "--from 'n[1-2]': status $rc: $(cat "$tmp/from.err")"
step "join: n4 refused on its own, joined by the operator through n1, 5 members and a 5-node map everywhere, the next push reached it; --from n4 reaches it"

# A member that is connected but does not answer (SIGSTOP) is down after n0's down_after
# (0.5 s; the default is 2 s): status from n0 says so without waiting longer.
"$hetcast" status --config "$tmp/n0.yaml" | grep -q '5 of 5 up' || fail "before SIGSTOP, not 5 of 5 up"
kill -STOP "${pids[3]}"
t0=$(date +%s.%N)
rc=0
out=$("$hetcast" status --config "$tmp/n0.yaml") || rc=$?
[[ $rc -eq 4 ]] || { kill -CONT "${pids[3]}"; fail "status with n3 stopped: exit $rc (expected 4, a member down): $out"; }
secs=$(python3 -c "print(round($(date +%s.%N) - $t0, 2))")
kill -CONT "${pids[3]}"
grep -qE '^n3 .* down ' <<< "$out" && grep -q '4 of 5 up' <<< "$out" || fail "n3 stopped, but status says: $out"
python3 -c "import sys; sys.exit(0 if 0.5 <= $secs < 1.6 else 1)" || fail "status took $secs s with down_after 0.5 s"
up=no
for _ in $(seq 50); do
    if "$hetcast" status --config "$tmp/n0.yaml" | grep -q '5 of 5 up'; then up=yes; break; fi
    sleep 0.1
done
[[ $up == yes ]] || fail "n3 is not up again after SIGCONT"
step "down_after: a stopped n3 shown down after $secs s, up again after SIGCONT"

# A member that stops answering is left out of a push to --all, which the others complete;
# the push fails (status 4, partial) naming it: never a silent skip (issue 14).
kill -TERM "${pids[3]}"
rc=0
wait "${pids[3]}" || rc=$?
[[ $rc -eq 0 ]] || fail "hetcastd n3 exited with $rc on SIGTERM"
for i in 1 2 4; do rm -f "$tmp/n$i/dest/payload.bin"; done
rc=0
"$hetcast" push "$tmp/payload.bin" --config "$tmp/n0.yaml" --all --algo flat --json > "$tmp/push-down.json" \
    2> "$tmp/push-down.err" || rc=$?
[[ $rc -eq 4 ]] || fail "push --all with n3 down exited $rc (expected 4, partial): $(cat "$tmp/push-down.json")"
python3 -c '
import json, sys
doc = json.load(open(sys.argv[1]))
r = doc["reports"][0]
by = {o["dest"]: o for o in r["outcomes"]}
assert not doc["ok"] and r["skipped"] == ["n3"] and not r["ok"] and set(by) == {"n1", "n2", "n3", "n4"}, r
assert all(by[n]["ok"] for n in ("n1", "n2", "n4")) and "unreachable" in by["n3"]["error"], r
assert [f["member"] for f in r["failed_members"]] == ["n3"], r' "$tmp/push-down.json" ||
    fail "the report should name n3: $(cat "$tmp/push-down.json")"
grep -q "n3" "$tmp/push-down.err" || fail "push --all did not name n3 on stderr: $(cat "$tmp/push-down.err")"
for i in 1 2 4; do cmp -s "$tmp/payload.bin" "$tmp/n$i/dest/payload.bin" || fail "with n3 down, n$i's copy"; done
step "down: n3 stopped, push --all named it (status 4), the others got the file"

# Named with --to, a member that is down fails the push (status 4, named with its reason);
# the other destination still gets the file.
rm -f "$tmp/n1/dest/payload.bin"
rc=0
"$hetcast" push "$tmp/payload.bin" --config "$tmp/n0.yaml" --to n1,n3 --algo flat --json > "$tmp/push-to-down.json" \
    2> "$tmp/push-to-down.err" || rc=$?
[[ $rc -eq 4 ]] || fail "push --to n1,n3 with n3 down exited $rc: $(cat "$tmp/push-to-down.err")"
python3 -c '
import json, sys
doc = json.load(open(sys.argv[1]))
r = doc["reports"][0]
by = {o["dest"]: o for o in r["outcomes"]}
assert not doc["ok"] and not r["ok"] and set(by) == {"n1", "n3"}, r
assert by["n1"]["ok"] and not by["n3"]["ok"] and "unreachable" in by["n3"]["error"], r' "$tmp/push-to-down.json" ||
    fail "push --to with n3 down: $(cat "$tmp/push-to-down.json")"
cmp -s "$tmp/payload.bin" "$tmp/n1/dest/payload.bin" || fail "with n3 down, n1's copy (--to)"
grep -q "n3" "$tmp/push-to-down.err" || fail "push --to did not name n3 on stderr: $(cat "$tmp/push-to-down.err")"
step "down: push --to n1,n3 names n3 unreachable, exits 4, n1 got the file"

# n3 started again, so that it is up, with its certificate, when it is made to leave.
"$hetcastd" --config "$tmp/n3.yaml" 2>> "$tmp/n3.log" &
pids[3]=$!
up=no
for _ in $(seq 100); do
    kill -0 "${pids[3]}" 2>/dev/null || fail "hetcastd n3 exited on its restart: $(tail -n 5 "$tmp/n3.log")"
    out=$("$hetcast" status --config "$tmp/n0.yaml" 2>&1) || true
    if grep -q '5 of 5 up' <<< "$out"; then up=yes; break; fi
    sleep 0.1
done
[[ $up == yes ]] || fail "n3 restarted is not up within 10 s"

# leave takes a node set; every name is checked before anyone leaves.
for bad in "n[0,3]|'n0' coordinates this leave" "n3,n7|n7 is not a member" "@near|no group '@near'"; do
    rc=0
    "$hetcast" leave "${bad%%|*}" --yes --config "$tmp/n0.yaml" > /dev/null 2> "$tmp/leave.err" || rc=$?
    [[ $rc -eq 2 && $(wc -l < "$tmp/leave.err") -eq 1 ]] && grep -q "${bad#*|}" "$tmp/leave.err" ||
        fail "leave ${bad%%|*}: status $rc: $(cat "$tmp/leave.err")"
done
"$hetcast" status --config "$tmp/n0.yaml" | grep -q '5 of 5 up' || fail "a refused leave removed a member"

# leave: n3 is removed from every member list and map, and revoked: every member keeps
# state_dir/revoked.yaml naming it and refuses its certificate from then on.
"$hetcast" leave 'n[3]' --yes --config "$tmp/n0.yaml" > /dev/null || fail "leave n[3] failed"
for i in 0 1 2 4; do
    out=$("$hetcast" map show --config "$tmp/n$i.yaml")
    grep -q '^4 members' <<< "$out" || fail "after leave, n$i's map: $out"
    out=$("$hetcast" status --config "$tmp/n$i.yaml")
    grep -q '4 of 4 up' <<< "$out" || fail "after leave, n$i's status: $out"
    [[ $(grep -c 'name:' "$tmp/n$i/state/revoked.yaml" 2>/dev/null) -eq 1 ]] &&
        grep -qE '^ *- name: "?n3"?$' "$tmp/n$i/state/revoked.yaml" &&
        grep -qE '^ *since: [0-9]+$' "$tmp/n$i/state/revoked.yaml" &&
        grep -qE '^ *order: ".*\\"cmd\\":\\"leave\\"' "$tmp/n$i/state/revoked.yaml" ||
        fail "n$i's revoked.yaml does not name n3 alone: $(cat "$tmp/n$i/state/revoked.yaml" 2>&1)"
done
kill -0 "${pids[3]}" 2>/dev/null || fail "n3 exited when it was made to leave"
# A push from n1 to n3: n3 is no longer a member.
rm -f "$tmp/n3/dest/payload.bin"
rc=0
"$hetcast" push "$tmp/payload.bin" --config "$tmp/n0.yaml" --from n1 --to n3 --algo flat > "$tmp/to-left.out" 2>&1 || rc=$?
[[ $rc -ne 0 ]] && grep -q "n3" "$tmp/to-left.out" || fail "a push from n1 to the left n3: status $rc: $(cat "$tmp/to-left.out")"
[[ ! -e $tmp/n3/dest/payload.bin ]] || fail "the left n3 received a push"
# n3, still running with its old certificate, asked to push to n1: n1 refuses it as revoked.
rm -f "$tmp/n1/dest/payload.bin"
n1_lines=$(wc -l < "$tmp/n1.log")
n3_lines=$(wc -l < "$tmp/n3.log")
rc=0
"$hetcast" push "$tmp/payload.bin" --config "$tmp/n3.yaml" --to n1 --algo flat > "$tmp/from-left.out" 2>&1 || rc=$?
[[ $rc -ne 0 ]] || fail "the left n3 pushed to n1: $(cat "$tmp/from-left.out")"
[[ ! -e $tmp/n1/dest/payload.bin ]] || fail "n1 took a push from the revoked n3"
{ cat "$tmp/from-left.out"; tail -n +$((n1_lines + 1)) "$tmp/n1.log"; tail -n +$((n3_lines + 1)) "$tmp/n3.log"; } > "$tmp/from-left.all"
grep -q "revoked" "$tmp/from-left.all" || fail "a push from the left n3 to n1 failed, but not for n3's revoked certificate: $(cat "$tmp/from-left.out"); n1: $(tail -n +$((n1_lines + 1)) "$tmp/n1.log")"
step "leave: n3 gone from every member list and map, in every revoked.yaml; a push to it fails ($(tail -n 1 "$tmp/to-left.out")); its push to n1 is refused ($(tail -n 1 "$tmp/from-left.out"))"

# Clean shutdown: SIGTERM → status 0 within 10 s.
for i in 0 1 2 3 4; do kill -TERM "${pids[$i]}"; done
for i in 0 1 2 3 4; do
    for _ in $(seq 100); do kill -0 "${pids[$i]}" 2>/dev/null || break; sleep 0.1; done
    kill -0 "${pids[$i]}" 2>/dev/null && fail "hetcastd n$i did not stop within 10 s of SIGTERM"
    rc=0
    wait "${pids[$i]}" || rc=$?
    [[ $rc -eq 0 ]] || fail "hetcastd n$i exited with $rc on SIGTERM"
    grep -q 'INFO stopping on SIGTERM' "$tmp/n$i.log" || fail "n$i did not log its shutdown"
done
pids=()
step "SIGTERM: all 5 stopped cleanly"

echo "daemon test: all checks passed"
