#!/usr/bin/env bash
# Integration test of pushes between real hetcastd daemons on 127.0.0.1 (free ports):
#  - 7 daemons: a 16 MiB random file from n0 to the 6 others with flat, binomial, ecef,
#    ecef-la, lcf, auto (and wrp, as a one-entry pattern); every copy compared byte for byte,
#    every report field checked;
#  - node sets in --to and --exclude (n[1-2], steps, ! & ^, @subnet:N, @*): exactly the
#    members named get the file; a bad node set or a name that is not a member: exit 2;
#  - a destination path leaving the root (--dest ../x, /abs) refused, nothing written;
#  - a daemon whose identity another CA issued trying to join: refused, the others keep
#    serving;
#  - 3 daemons on an emulated slow network: a destination SIGKILLed mid-push → the push
#    fails naming it, the other copy is intact, no final file on the killed one; restarted,
#    it removes the temporaries the kill left (and its spool) and takes the next push;
#  - Ctrl-C on a push cancels it everywhere; `hetcast jobs` and `hetcast cancel`.
#   usage: daemon_push_test.sh HETCASTD HETCAST
set -euo pipefail

hetcastd=$(realpath "$1")
hetcast=$(realpath "$2")
[[ -x $hetcastd && -x $hetcast ]] || { echo "usage: $0 HETCASTD HETCAST" >&2; exit 2; }

test_name="daemon push test"
daemon_config=()
source "$(dirname "$0")/daemons.sh"
daemon_config=("stall_timeout: 20")

# Every file (hidden ones too) under the given folders, with sizes.
listing() { find "$@" -xdev \( -type f -o -type l \) -not -name hetcastd.log -printf '%p %s\n' 2>/dev/null | sort; }  # the logs grow

# The cluster's CA and the operator's identity, which every hetcast command below proves;
# cluster() issues each member's.
new_ca "$tmp/keys"
head -c $((16 << 20)) /dev/urandom > "$tmp/payload.bin"

# --- seven daemons, no emulation ---------------------------------------------------------
c=$tmp/c7
names=(n0 n1 n2 n3 n4 n5 n6)
peers=(n1 n2 n3 n4 n5 n6)
cluster "$c" "$tmp/keys" "" "${names[@]}"
for n in "${names[@]}"; do start "$c" "$n"; done
out=$("$hetcast" probe --config "$c/n0.yaml" --seconds 0.2 --repeats 1 --reps 3 --json) || fail "probe: $out"
python3 -c '
import json, sys
a = json.load(sys.stdin)
m = a["map"]
assert a["pairs"] == 21 and len(a["offsets"]) == 7 and m["nodes"] == ["n%d" % i for i in range(7)], a
assert sorted(sum(m["subnets"], [])) == m["nodes"], a
# One measurement per round (n - 1 rounds for odd n), more when loopback noise makes it
# test sharing or an uplink.
assert len(m["latency"]) == 7 and len(m["bandwidth"][0]) == 7 and a["measurements"] >= 6, a
assert len(m["capacity"]["egress"]) == 7 and all(x > 0 for x in m["capacity"]["ingress"]), a' <<< "$out" \
    || fail "probe of 7: $out"
step "7 daemons up and probed"

# (a) every algorithm to 6 peers; every copy byte for byte; every report field.
jobs=()
check_report() {  # check_report FILE ALGO SECONDS [pattern]
    python3 - "$@" <<'PY'
import json, math, sys
path, algo, wall = sys.argv[1], sys.argv[2], float(sys.argv[3])
pattern = len(sys.argv) > 4
doc = json.load(open(path))
assert doc["version"] == 1 and doc["ok"] is True and len(doc["reports"]) == 1, doc
r = doc["reports"][0]
peers = {"n1", "n2", "n3", "n4", "n5", "n6"}
assert set(r) >= {"job", "algorithm", "model", "bytes", "predicted", "achieved", "lower_bound", "ratio", "ok",
                  "skipped", "outcomes"}, sorted(r)
assert r["ok"] is True and r["skipped"] == [], r
assert isinstance(r["job"], str) and r["job"].isdigit() and int(r["job"]) > 0, r["job"]
assert r["algorithm"] == algo if algo != "auto" else r["algorithm"].startswith("auto"), r["algorithm"]
assert r["model"] == "nonblocking", r["model"]
assert r["bytes"] == 16 << 20, r["bytes"]
for k in ("predicted", "achieved", "lower_bound", "ratio"):
    assert isinstance(r[k], (int, float)) and math.isfinite(r[k]) and r[k] > 0, (k, r[k])
assert r["lower_bound"] <= r["predicted"] * (1 + 1e-9), r
# What the daemons measured cannot exceed what the test saw from outside.
assert r["achieved"] < wall, (r["achieved"], wall)
assert abs(r["ratio"] - r["achieved"] / r["predicted"]) <= 1e-9 * r["ratio"], r
os = r["outcomes"]
assert len(os) == 6 and {o["dest"] for o in os} == peers, os
for o in os:
    assert o["ok"] is True and o["error"] == "" and o["source"] == "n0" and o["message"] == 0, o
    assert 0 < o["achieved"] <= r["achieved"] and 0 < o["predicted"] <= r["predicted"] * (1 + 1e-9), o
assert r["achieved"] == max(o["achieved"] for o in os), r
assert r["predicted"] == max(o["predicted"] for o in os) or pattern, r
print(r["job"])
PY
}
for algo in flat binomial ecef ecef-la lcf auto; do
    for n in "${peers[@]}"; do rm -f "$c/$n/dest/payload.bin"; done
    t0=$(now)
    "$hetcast" push "$tmp/payload.bin" --config "$c/n0.yaml" --all --algo "$algo" --json > "$tmp/push-$algo.json" \
        || fail "push --algo $algo failed: $(cat "$tmp/push-$algo.json")"
    wall=$(python3 -c "print($(now) - $t0)")
    job=$(check_report "$tmp/push-$algo.json" "$algo" "$wall") || fail "push --algo $algo: bad report: $(cat "$tmp/push-$algo.json")"
    jobs+=("$job")
    for n in "${peers[@]}"; do
        cmp -s "$tmp/payload.bin" "$c/$n/dest/payload.bin" || fail "push --algo $algo: $n's copy differs or is missing"
    done
    [[ ! -e $c/n0/dest/payload.bin ]] || fail "push --algo $algo: the source got a copy of its own file"
    step "push --algo $algo: 6 identical copies in ${wall:0:5} s"
done
# wrp is a multi-source algorithm: one pattern entry, n0 serving the same file.
for n in "${peers[@]}"; do rm -f "$c/$n/dest/payload.bin"; done
echo "- {source: n0, file: $tmp/payload.bin, dests: all}" > "$tmp/one.yaml"
t0=$(now)
"$hetcast" push --pattern "$tmp/one.yaml" --config "$c/n0.yaml" --algo wrp --json > "$tmp/push-wrp.json" \
    || fail "push --pattern --algo wrp failed: $(cat "$tmp/push-wrp.json")"
wall=$(python3 -c "print($(now) - $t0)")
job=$(check_report "$tmp/push-wrp.json" wrp "$wall" pattern) || fail "push --algo wrp: bad report: $(cat "$tmp/push-wrp.json")"
jobs+=("$job")
for n in "${peers[@]}"; do cmp -s "$tmp/payload.bin" "$c/$n/dest/payload.bin" || fail "push --algo wrp: $n's copy"; done
[[ $(printf '%s\n' "${jobs[@]}" | sort -u | wc -l) -eq ${#jobs[@]} ]] || fail "job ids repeat: ${jobs[*]}"
step "push --pattern --algo wrp: 6 identical copies; 7 distinct job ids"

# (a') node sets (ClusterShell's syntax) in --to and --exclude: exactly the members named
# get the file; @subnet:N is subnet N as `hetcast map show` numbers it; the member pushing
# is left out of a set that names it; a bad node set, a name that is not a member, an
# unknown group: exit 2, one line, nothing sent.
head -c $((1 << 20)) /dev/urandom > "$tmp/ns.bin"
who_has() { local n; for n in "${names[@]}"; do [[ -e $c/$n/dest/ns.bin ]] && echo -n "$n "; done; echo; }
push_ns() {  # push_ns WANT ARGS...: the push succeeds and exactly WANT ("n1 n2 ") have the file
    local want=$1 n got
    shift
    for n in "${names[@]}"; do rm -f "$c/$n/dest/ns.bin"; done
    "$hetcast" push "$tmp/ns.bin" --config "$c/n0.yaml" --algo flat --quiet "$@" > "$tmp/ns.out" 2>&1 \
        || fail "push $*: $(cat "$tmp/ns.out")"
    got=$(who_has)
    [[ $got == "$want" ]] || fail "push $*: the file went to '$got', not to '$want'"
    for n in $want; do cmp -s "$tmp/ns.bin" "$c/$n/dest/ns.bin" || fail "push $*: $n's copy differs"; done
}
push_ns "n1 n2 " --to 'n[1-2]'
push_ns "n1 n3 n5 " --to 'n[1-6/2]'
push_ns "n2 n4 n5 n6 " --to 'n[0-6]!n[1-3],n2' --exclude n3
push_ns "n6 " --all --exclude 'n[1-5]'
push_ns "n1 n3 n4 n5 n6 " --to '@*' -x n2
push_ns "n4 n5 " --to 'n[1-5]&n[4-6]'
subnet0=$("$hetcast" map show --config "$c/n0.yaml" | sed -n 's/^  0: //p')  # names, then maybe the uplink
[[ -n $subnet0 ]] || fail "no subnet 0 in map show: $("$hetcast" map show --config "$c/n0.yaml")"
want=""
for n in "${names[@]}"; do [[ $n != n0 && " $subnet0 " == *" $n "* ]] && want+="$n "; done
if [[ -n $want ]]; then
    push_ns "$want" --to '@subnet:0'
else  # n0 alone in subnet 0: a set of the pusher alone leaves no destination
    rc=0
    "$hetcast" push "$tmp/ns.bin" --config "$c/n0.yaml" --to '@subnet:0' > /dev/null 2> "$tmp/ns.err" || rc=$?
    [[ $rc -eq 2 ]] && grep -q 'leaves no destination' "$tmp/ns.err" || fail "@subnet:0 of n0 alone: $rc $(cat "$tmp/ns.err")"
fi
for n in "${names[@]}"; do rm -f "$c/$n/dest/ns.bin"; done
before=$(listing "$c")
for bad in "--to|n[5-1]|a reversed range '5-1'" "--to|n[1-3|a '\[' without its '\]'" "--to|n1,,n2|nothing after ','" \
           "--exclude|n[1-2][3]|two bracket groups side by side" "--to|n[5-9]|node set 'n\[5-9\]': n\[7-9\] are not members of the map" \
           "--exclude|x1|x1 is not a member" "--to|@lab-b|no group '@lab-b'" "--to|@subnet:99|no group '@subnet:99'" \
           "--to|n0|leaves no destination"; do
    IFS='|' read -r opt set want <<< "$bad"
    args=(--to n1 "$opt" "$set")
    [[ $opt == --to ]] && args=(--to "$set")
    rc=0
    "$hetcast" push "$tmp/ns.bin" --config "$c/n0.yaml" --quiet "${args[@]}" > "$tmp/ns.out" 2> "$tmp/ns.err" || rc=$?
    [[ $rc -eq 2 ]] || fail "push $opt '$set': status $rc, not 2: $(cat "$tmp/ns.err")"
    [[ $(wc -l < "$tmp/ns.err") -eq 1 ]] || fail "push $opt '$set': not one line: $(cat "$tmp/ns.err")"
    grep -q "^hetcast push: .*$want" "$tmp/ns.err" || fail "push $opt '$set': unclear error: $(cat "$tmp/ns.err")"
done
[[ "$(listing "$c")" == "$before" ]] || fail "a refused node set changed files: $(diff <(echo "$before") <(listing "$c"))"
step "node sets: --to 'n[1-2]', 'n[1-6/2]', ! & and --exclude/-x reached exactly the members named, @subnet:0 as map show numbers it; 9 bad sets refused (exit 2, one line), nothing written"

# (b) destination paths leaving the root: refused before anything is written anywhere.
before=$(listing "$c")
for dest in ../x ../../x sub/../../x /tmp/hetcast-escape-$$; do
    rc=0
    "$hetcast" push "$tmp/payload.bin" --config "$c/n0.yaml" --all --dest "$dest" > "$tmp/trav.out" 2> "$tmp/trav.err" || rc=$?
    [[ $rc -ne 0 ]] || fail "push --dest $dest succeeded"
    grep -q 'leaves the destination root' "$tmp/trav.err" || fail "push --dest $dest: unclear error: $(cat "$tmp/trav.err")"
    [[ $(wc -l < "$tmp/trav.err") -eq 1 ]] || fail "push --dest $dest: more than one line: $(cat "$tmp/trav.err")"
done
rc=0
"$hetcast" push --pattern "$tmp/one.yaml" --config "$c/n0.yaml" --algo wrp --dest ../x > /dev/null 2> "$tmp/trav.err" || rc=$?
[[ $rc -ne 0 ]] && grep -q 'leaves the destination root' "$tmp/trav.err" || fail "pattern --dest ../x: $(cat "$tmp/trav.err")"
[[ "$(listing "$c")" == "$before" ]] || fail "a refused push changed files: $(diff <(echo "$before") <(listing "$c"))"
for n in "${names[@]}"; do [[ ! -e $c/$n/x ]] || fail "$c/$n/x exists"; done
[[ ! -e /tmp/hetcast-escape-$$ ]] || fail "an absolute --dest was written"
step "--dest ../x, ../../x, sub/../../x, /abs and a pattern with ../x: refused, nothing written"

# (b2) paths the kernel would refuse: a --dest over PATH_MAX or with a name over NAME_MAX is
# refused by the command, one line, exit 2; a tree whose landing directory fits but one of
# whose entries would not (push -r) is refused by the daemon before anything moves.
long=$(printf 'd%.0s' $(seq 5019))
name300=$(printf 'n%.0s' $(seq 300))
mkdir -p "$tmp/deep/$(printf 'e%.0s' $(seq 200))"
echo hi > "$tmp/deep/$(printf 'e%.0s' $(seq 200))/f"
d4000=$(for _ in $(seq 20); do printf 'x%.0s' $(seq 199); printf /; done)
before=$(listing "$c")
for args in "$tmp/payload.bin --dest $long|5019 bytes, over PATH_MAX" "$tmp/payload.bin --dest a/$name300/b|name of 300 bytes" \
            "-r $tmp/deep --dest $d4000|bytes, over PATH_MAX"; do
    want=${args#*|}
    rc=0
    # shellcheck disable=SC2086
    "$hetcast" push ${args%%|*} --config "$c/n0.yaml" --all > "$tmp/long.out" 2> "$tmp/long.err" || rc=$?
    [[ $rc -eq 2 && $(wc -l < "$tmp/long.err") -eq 1 ]] || fail "push ${args:0:60}...: status $rc: $(head -c 400 "$tmp/long.err")"
    grep -q "$want" "$tmp/long.err" || fail "push ${args:0:60}...: unclear error: $(head -c 400 "$tmp/long.err")"
done
[[ "$(listing "$c")" == "$before" ]] || fail "a refused long path changed files: $(diff <(echo "$before") <(listing "$c") | head -c 400)"
step "--dest of 5019 bytes, a name of 300 bytes, push -r with dest + entry over 4095 bytes: refused (exit 2, one line), nothing written"

# (d) a daemon whose identity another CA issued (another `hetcast keys init`): the TLS
# handshake of its join fails, it says so naming the certificate, the cluster keeps serving.
"$hetcast" keys init --dir "$tmp/other-keys" > /dev/null || fail "keys init of a second CA failed"
"$hetcast" keys issue intruder --dir "$tmp/other-keys" > /dev/null || fail "keys issue intruder failed"
read -r intruder_port < <(free_ports 1)
cat > "$c/intruder.yaml" <<EOF
name: intruder
listen: 127.0.0.1:$intruder_port
state_dir: intruder/state
dest_root: intruder/dest
identity: $tmp/other-keys/intruder.pem
EOF
# It serves alone and keeps trying (as when no seed is up), saying why each time.
"$hetcastd" --config "$c/intruder.yaml" --join "127.0.0.1:${port[n1]}" 2> "$tmp/intruder.log" &
pid[intruder]=$!
for _ in $(seq 100); do
    grep -qE 'cannot join through any seed yet .*(certificate|cluster.s CA)' "$tmp/intruder.log" && break
    kill -0 "${pid[intruder]}" 2>/dev/null || fail "a daemon of another CA exited: $(cat "$tmp/intruder.log")"
    sleep 0.1
done
grep -qE 'cannot join through any seed yet .*(certificate|cluster.s CA)' "$tmp/intruder.log" ||
    fail "intruder: unclear error: $(cat "$tmp/intruder.log")"
grep -q 'cannot listen' "$tmp/intruder.log" && fail "intruder: a join failure reported as a listen failure"
stop intruder
grep -q 'WARN refused connection from .*TLS handshake failed' "$tmp/n1.log" || fail "n1 did not log the refused connection"
for n in n0 n1; do
    out=$("$hetcast" status --config "$c/$n.yaml")
    grep -q '7 of 7 up' <<< "$out" || fail "after the intruder, $n's status: $out"
    grep -q intruder <<< "$out" && fail "the intruder became a member: $out"
done
for n in "${peers[@]}"; do rm -f "$c/$n/dest/payload.bin"; done
"$hetcast" push "$tmp/payload.bin" --config "$c/n0.yaml" --from n1 --all --algo ecef --quiet > /dev/null \
    || fail "push from n1 after the intruder failed"
for n in n0 n2 n3 n4 n5 n6; do cmp -s "$tmp/payload.bin" "$c/$n/dest/payload.bin" || fail "after the intruder, $n's copy"; done
step "another CA: join refused ($(grep -m1 'cannot join' "$tmp/intruder.log")); 7 of 7 still up, a push from n1 reached all"

for n in "${names[@]}"; do stop "$n"; done
step "7 daemons stopped"

# --- (c) a destination killed mid-push, on an emulated 4 MB/s network ----------------------
k=$tmp/k3
mkdir -p "$k"
cat > "$k/profile.yaml" <<'EOF'
nodes: [k0, k1, k2]
latency:
  - [0, 0.001, 0.001]
  - [0.001, 0, 0.001]
  - [0.001, 0.001, 0]
bandwidth:
  - [4.0e+06, 4.0e+06, 4.0e+06]
  - [4.0e+06, 4.0e+06, 4.0e+06]
  - [4.0e+06, 4.0e+06, 4.0e+06]
EOF
cluster "$k" "$tmp/keys" "$k/profile.yaml" k0 k1 k2
for n in k0 k1 k2; do mkdir -p "$k/$n/state" && cp "$k/profile.yaml" "$k/$n/state/map.yaml"; done
for n in k0 k1 k2; do start "$k" "$n"; done
head -c $((8 << 20)) /dev/urandom > "$tmp/big.bin"
t0=$(now)
timeout 60 "$hetcast" push "$tmp/big.bin" --config "$k/k0.yaml" --to k1,k2 --algo flat --json > "$tmp/kill.json" 2> "$tmp/kill.err" &
push_pid=$!
victim_part=""
for _ in $(seq 200); do
    victim_part=$(find "$k/k2/dest" -name '.big.bin.hetcast-*.part' -size +0 2>/dev/null | head -n 1)
    [[ -n $victim_part ]] && break
    kill -0 "$push_pid" 2>/dev/null || break
    sleep 0.05
done
[[ -n $victim_part ]] || fail "k2 never had a partial file; the push ended first: $(cat "$tmp/kill.err")"
kill -KILL "${pid[k2]}"
wait "${pid[k2]}" 2>/dev/null || true
unset "pid[k2]"
rc=0
wait "$push_pid" || rc=$?
kill_secs=$(python3 -c "print(round($(now) - $t0, 2))")
[[ $rc -ne 0 && $rc -ne 124 ]] || fail "push with k2 killed: status $rc: $(cat "$tmp/kill.err")"
grep -q 'k2' "$tmp/kill.err" || fail "the push's errors do not name k2: $(cat "$tmp/kill.err")"
python3 - "$tmp/kill.json" <<'PY' || fail "push with k2 killed: bad report: $(cat "$tmp/kill.json")"
import json, sys
doc = json.load(open(sys.argv[1]))
r = doc["reports"][0]
by = {o["dest"]: o for o in r["outcomes"]}
assert doc["ok"] is False and r["ok"] is False and set(by) == {"k1", "k2"}, r
assert by["k1"]["ok"] and by["k1"]["achieved"] > 0, by["k1"]
assert not by["k2"]["ok"] and by["k2"]["error"], by["k2"]
PY
cmp -s "$tmp/big.bin" "$k/k1/dest/big.bin" || fail "k1's copy is damaged or missing after k2 was killed"
[[ ! -e $k/k2/dest/big.bin ]] || fail "the killed k2 has a file under the final name"
[[ -f $victim_part ]] || fail "SIGKILL should have left k2's temporary file behind"
step "k2 SIGKILLed mid-push: push failed after $kill_secs s naming k2 ($(head -c 150 "$tmp/kill.err")), k1 intact, no big.bin on k2"

# Restarted, k2 removes what the kill left under its dest_root and its spool, keeps the rest.
mkdir -p "$k/k2/dest/sub" "$k/k2/state/spool/job-7-0.d"
touch "$k/k2/dest/sub/.a.bin.hetcast-12345.part" "$k/k2/state/spool/job-7-0" "$k/k2/state/spool/job-7-0.d/x"
touch "$k/k2/dest/keep.bin" "$k/k2/dest/.keep.part" "$k/k2/dest/keep.hetcast-1.part" "$k/k2/dest/.keep.hetcast-x.part"
start "$k" k2
grep -q "INFO removed 2 stale temporary files under .*k2/dest and 2 spool entries" "$tmp/k2.log" \
    || fail "k2's start did not log the cleanup: $(cat "$tmp/k2.log")"
[[ -z $(find "$k/k2/dest" -name '.*.hetcast-*[0-9].part') ]] || fail "stale temporaries survived: $(find "$k/k2/dest")"
[[ -z $(ls -A "$k/k2/state/spool") ]] || fail "the spool is not empty: $(ls -A "$k/k2/state/spool")"
for f in keep.bin .keep.part keep.hetcast-1.part .keep.hetcast-x.part; do
    [[ -e $k/k2/dest/$f ]] || fail "k2's start removed $f, which is not a hetcast temporary"
done
head -c $((1 << 20)) /dev/urandom > "$tmp/small.bin"
"$hetcast" push "$tmp/small.bin" --config "$k/k0.yaml" --to k1,k2 --algo flat --quiet > /dev/null \
    || fail "push after k2's restart failed"
for n in k1 k2; do cmp -s "$tmp/small.bin" "$k/$n/dest/small.bin" || fail "after the restart, $n's copy"; done
grep -q 'removed' "$tmp/k1.log" && fail "k1 claims to have removed something"
step "k2 restarted: 2 stale temporaries and 2 spool entries removed, other files kept, the next push reached it"

# On a terminal the push draws one progress line, redrawn in place; redirected, it prints
# none (the pushes above). `script` gives the command a terminal.
if command -v script > /dev/null; then
    rm -f "$k/k1/dest/big.bin" "$k/k2/dest/big.bin"
    timeout 120 script -qec "'$hetcast' push '$tmp/big.bin' --config '$k/k0.yaml' --to k1,k2 --algo flat" /dev/null \
        > "$tmp/tty.out" 2>&1 || fail "push on a terminal failed: $(tail -c 400 "$tmp/tty.out")"
    # Labelled with the file; the bytes every destination holds of the 8 MiB, not bytes × destinations.
    grep -qE $'\r\e\\[Kbig\\.bin \\[#* *\\] +[0-9.]+%  [0-9.]+/8.0 MiB  [0-9.]+ MiB/s  ETA' "$tmp/tty.out" ||
        fail "no progress line on a terminal: $(tail -c 400 "$tmp/tty.out" | cat -v)"
    [[ $(grep -o $'\r' "$tmp/tty.out" | wc -l) -ge 2 ]] || fail "the progress line was not redrawn"
    for n in k1 k2; do cmp -s "$tmp/big.bin" "$k/$n/dest/big.bin" || fail "after the terminal push, $n's copy"; done
    step "on a terminal: one progress line (bytes of 16 MiB owed, rate, ETA) redrawn in place"
fi

# Ctrl-C on a push cancels its job everywhere: exit 130, the report says cancelled, no
# copy and no temporary left; `hetcast jobs` lists the job while it runs and nothing after;
# `hetcast cancel` of an unknown job is an error.
rm -f "$k/k1/dest/big.bin" "$k/k2/dest/big.bin"
head -c $((24 << 20)) /dev/urandom > "$tmp/big.bin"  # 6 s at the emulated rate
"$hetcast" push "$tmp/big.bin" --config "$k/k0.yaml" --to k1,k2 --algo flat --json > "$tmp/int.json" 2> "$tmp/int.err" &
push_pid=$!
listed=no
for _ in $(seq 200); do
    if "$hetcast" jobs --config "$k/k0.yaml" > "$tmp/jobs.txt" 2>/dev/null && grep -q ' k0 *coordinator ' "$tmp/jobs.txt" &&
        "$hetcast" jobs --config "$k/k0.yaml" --json > "$tmp/jobs.json" 2>/dev/null &&
        python3 -c 'import json,sys; j=json.load(open(sys.argv[1]))["jobs"]; sys.exit(0 if any(r["role"]=="coordinator" and r["member"]=="k0" for r in j) and any(r["member"]=="k1" for r in j) else 1)' "$tmp/jobs.json"; then
        listed=yes
        break
    fi
    sleep 0.05
done
[[ $listed == yes ]] || fail "hetcast jobs never listed the running push: $(cat "$tmp/jobs.json")"
kill -INT "$push_pid"
rc=0
wait "$push_pid" || rc=$?
[[ $rc -eq 130 ]] || fail "push after Ctrl-C exited $rc: $(cat "$tmp/int.err")"
grep -q "cancelling job" "$tmp/int.err" || fail "push after Ctrl-C did not say it cancels: $(cat "$tmp/int.err")"
python3 -c '
import json, sys
doc = json.load(open(sys.argv[1]))
r = doc["reports"][0]
assert not doc["ok"] and not r["ok"], r
for o in r["outcomes"]:
    assert o["ok"] or "cancelled" in o["error"], o' "$tmp/int.json" || fail "report after Ctrl-C: $(cat "$tmp/int.json")"
gone=no
for _ in $(seq 100); do
    if [[ -z $(find "$k" -name '.*.hetcast-*[0-9].part') ]] && "$hetcast" jobs --config "$k/k0.yaml" | grep -q "^no jobs"; then gone=yes; break; fi
    sleep 0.1
done
[[ $gone == yes ]] || fail "after Ctrl-C: left behind: $(find "$k" -name '.*.hetcast-*[0-9].part'); jobs: $("$hetcast" jobs --config "$k/k0.yaml")"
for n in k1 k2; do
    if [[ -e $k/$n/dest/big.bin ]]; then
        python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["reports"][0]; sys.exit(0 if any(o["dest"]==sys.argv[2] and o["ok"] for o in r["outcomes"]) else 1)' \
            "$tmp/int.json" "$n" || fail "$n has big.bin but the report says it was cancelled"
    fi
done
rc=0
"$hetcast" cancel 12345 --config "$k/k0.yaml" 2> "$tmp/cancel.err" || rc=$?
[[ $rc -eq 2 ]] && grep -q "no job 12345" "$tmp/cancel.err" || fail "cancel of an unknown job: status $rc: $(cat "$tmp/cancel.err")"
step "Ctrl-C on push: job listed by 'hetcast jobs', cancelled everywhere (exit 130), nothing left; unknown job refused"

# --bwlimit: k0 sends 2 × 6 MiB at 6 MiB/s at most, so no less than 2 s; the planner knew.
head -c $((6 << 20)) /dev/urandom > "$tmp/slow.bin"
"$hetcast" push "$tmp/slow.bin" --config "$k/k0.yaml" --to k1,k2 --algo flat --bwlimit 6MiB/s --json > "$tmp/bw.json" \
    || fail "push --bwlimit failed: $(cat "$tmp/bw.json")"
for n in k1 k2; do cmp -s "$tmp/slow.bin" "$k/$n/dest/slow.bin" || fail "push --bwlimit: $n's copy differs"; done
python3 - "$tmp/bw.json" <<'PY' || fail "push --bwlimit 6MiB/s: $(cat "$tmp/bw.json")"
import json, sys
j = json.load(open(sys.argv[1]))
r = j["reports"][0] if "reports" in j else j
floor = 2 * 6 / 6  # seconds: two copies of 6 MiB at 6 MiB/s
assert r["predicted"] >= floor * 0.999, ("predicted", r["predicted"])
assert r["achieved"] >= floor * 0.9, ("achieved", r["achieved"])
PY
for bad in 0 fast 100; do
    rc=0
    "$hetcast" push "$tmp/slow.bin" --config "$k/k0.yaml" --to k1 --bwlimit "$bad" > /dev/null 2> "$tmp/bw.err" || rc=$?
    [[ $rc -eq 2 && $(wc -l < "$tmp/bw.err") -eq 1 ]] || fail "--bwlimit $bad: status $rc: $(cat "$tmp/bw.err")"
done
# --verbose: a line per member state change, on standard error; every destination ends done.
"$hetcast" push "$tmp/small.bin" --config "$k/k0.yaml" --to k1,k2 --algo chain --verbose --quiet > /dev/null 2> "$tmp/verbose.err" \
    || fail "push --verbose failed: $(cat "$tmp/verbose.err")"
for n in k1 k2; do grep -q "^hetcast push: $n done" "$tmp/verbose.err" || fail "push --verbose: no '$n done': $(cat "$tmp/verbose.err")"; done
grep -vqE '^hetcast push: k[0-2] (planned|receiving|relaying|sending|done)( \(.*\))?$' "$tmp/verbose.err" &&
    fail "push --verbose: a line that is not a member state: $(cat "$tmp/verbose.err")"
step "--verbose: $(wc -l < "$tmp/verbose.err") member state lines, k1 and k2 done"
step "--bwlimit 6MiB/s: 2 copies of 6 MiB took $(python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); r=j["reports"][0] if "reports" in j else j; print("%.2f s (predicted %.2f)" % (r["achieved"], r["predicted"]))' "$tmp/bw.json"); --bwlimit 0, fast, 100: exit 2, one line"

for n in k0 k1 k2; do stop "$n"; done
echo "daemon push test: all checks passed"
