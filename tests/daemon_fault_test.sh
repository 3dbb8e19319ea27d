#!/usr/bin/env bash
# Member failures during a push between real hetcastd daemons (issue 14), on 127.0.0.1 with
# free ports and an emulated slow network (link_profile, also the map): 4 MB/s between any
# two daemons except where n0 (the source) is slowed to 1.5 MB/s, so pushes of 4-6 MiB last
# a few seconds and store-and-forward planners relay through n1. Six daemons n0..n5.
# stall_timeout 10 s (the default), n0 slow to all but n1:
#  a. --algo chain (n0→n1→…→n5, cutting through) and --algo ecef (n1 relays to the rest):
#     the first relay n1 SIGKILLed when its .part reaches half the file;
#  c. n3 SIGSTOPped before a push --to n1..n5: the others get the file, n3 is named; SIGCONT;
#  d. n4's dest_root replaced by a regular file: n4 is named, the others get the file.
# stall_timeout 2 s, n0 slow to n5 only:
#  b. --algo chain, n1 SIGSTOPped at half: failed as silent, the rest re-served; SIGCONT, it
#     drops its temporary and relays the next push;
#  e. flat --to n5 (6 MiB at 1.5 MB/s, ~4 s): a healthy receiver fed slowly by the
#     coordinator must not be failed as silent.
#  f. (root only: a skip line otherwise) n4's dest_root a 2 MiB tmpfs, 6 MiB pushed to all: n4
#     fails saying there is no space, the others get the file; the tmpfs is unmounted after;
#  g. the source n0 (the coordinator) SIGKILLed mid-push (chain): the CLI exits non-zero within
#     5 s with one line naming it; within stall_timeout + 5 s no member has a .part or lists
#     the job; n0 restarted, the next push works;
#  h. n3 with limits: {max_jobs: 1}; two pushes from two coordinators (n0, then n2 while the
#     first runs) both through n3: both complete, or the refused one names n3 "busy" alone
#     and its other destinations complete;
#  i. a file whose name is 255 bytes (NAME_MAX) lands intact under that name everywhere.
# Each failure case: exit status 1, the member (alone) in failed_members, byte-identical
# copies on every other destination (orphans re-served: attempt >= 2), no .part left on live
# daemons, their descriptors back within +2 of before, and the push within
#   bound = 2 × predicted + stall_timeout + 10 s   (predicted: the report's).
#   usage: daemon_fault_test.sh HETCASTD HETCAST
set -euo pipefail

hetcastd=$(realpath "$1")
hetcast=$(realpath "$2")
[[ -x $hetcastd && -x $hetcast ]] || { echo "usage: $0 HETCASTD HETCAST" >&2; exit 2; }

test_name="daemon fault test"
stop_extra() {
    [[ -n ${push_pid:-} ]] && kill -KILL "$push_pid" 2>/dev/null
    [[ -n ${push2_pid:-} ]] && kill -KILL "$push2_pid" 2>/dev/null
    # Case f's tmpfs: its daemon is stopped first, and it is never left mounted, never
    # rm -rf'd into.
    if [[ -n ${mounted:-} ]]; then
        [[ -n ${pid[n4]:-} ]] && { kill -CONT "${pid[n4]}"; kill -KILL "${pid[n4]}"; wait "${pid[n4]}"; } 2>/dev/null
        umount "$mounted" 2>/dev/null || umount -l "$mounted"
    fi
}
source "$(dirname "$0")/daemons.sh"
secs_since() { python3 -c "import sys; print(round(float(sys.argv[2]) - float(sys.argv[1]), 2))" "$1" "$(now)"; }

fds() { ls "/proc/$1/fd" 2>/dev/null | wc -l; }
parts() { find "$@" -name '.*.hetcast-*.part' 2>/dev/null; }

# The cluster's CA and the operator's identity; cluster() issues each member's.
new_ca "$tmp/keys"

names=(n0 n1 n2 n3 n4 n5)
# profile FILE SLOW_TO...: row i, column j is what i sends to j (bytes/s): 4 MB/s, but n0
# sends to each SLOW_TO member at 1.5 MB/s.
profile() {
    python3 - "$@" <<'PY'
import sys
path, slow_to = sys.argv[1], set(sys.argv[2:])
names = ["n%d" % i for i in range(6)]
with open(path, "w") as f:
    f.write("nodes: [%s]\n" % ", ".join(names))
    f.write("latency:\n")
    for a in names:
        f.write("  - [%s]\n" % ", ".join("0" if a == b else "0.001" for b in names))
    f.write("bandwidth:\n")
    for a in names:
        f.write("  - [%s]\n" % ", ".join(repr(1.5e6 if (a == "n0" and b in slow_to) or (b == "n0" and a in slow_to)
                                               else 4.0e6) for b in names))
PY
}
# bring_up DIR SLOW_TO...: six daemons with that profile (as link_profile and as the map),
# stall_timeout $stall, each warmed up.
bring_up() {
    c=$1
    shift
    mkdir -p "$c"
    profile "$c/profile.yaml" "$@"
    daemon_config=("stall_timeout: $stall")
    cluster "$c" "$tmp/keys" "$c/profile.yaml" "${names[@]}"
    for n in "${names[@]}"; do mkdir -p "$c/$n/state" && cp "$c/profile.yaml" "$c/$n/state/map.yaml"; done
    for n in "${names[@]}"; do start "$c" "$n"; done
    warm "${names[@]}"
}

# Every daemon pushes a small file to every other once, so each keeps the connections it
# will use: descriptor counts are then steady between pushes.
head -c $((64 << 10)) /dev/urandom > "$tmp/warm.bin"
warm() {
    local n
    for n in "$@"; do
        timeout 60 "$hetcast" push "$tmp/warm.bin" --config "$c/n0.yaml" --from "$n" --all --algo flat --quiet \
            > "$tmp/warm.out" 2>&1 || fail "warm-up push from $n: $(cat "$tmp/warm.out")"
    done
}
# Cases a, c, d: the default stall_timeout (10 s); n0 slow to all but n1.
stall=10
bring_up "$tmp/c10" n2 n3 n4 n5
step "6 daemons up (stall_timeout $stall s; n0 sends at 4 MB/s to n1, 1.5 MB/s to the others; 4 MB/s elsewhere), warmed up"

head -c $((6 << 20)) /dev/urandom > "$tmp/f6.bin"
head -c $((4 << 20)) /dev/urandom > "$tmp/f4.bin"

declare -A fd0=()
record_fds() { local n; for n in "${!pid[@]}"; do fd0[$n]=$(fds "${pid[$n]}"); done; }

# push_bg FILE ALGO OUT [ARGS...]: the push in the background (push_pid), t0 its start.
push_bg() {
    local file=$1 algo=$2 out=$3
    shift 3
    t0=$(now)
    timeout 120 "$hetcast" push "$file" --config "$c/n0.yaml" --algo "$algo" --json "$@" > "$out" 2> "$out.err" &
    push_pid=$!
}

# wait_part NODE FILE FRACTION: polls NODE's .part of FILE until it holds FRACTION of it.
wait_part() {
    local n=$1 base size want p s
    base=$(basename "$2")
    size=$(stat -c %s "$2")
    want=$(python3 -c "print(int($size * $3))")
    for _ in $(seq 600); do
        p=$(find "$c/$n/dest" -maxdepth 1 -name ".$base.hetcast-*.part" 2>/dev/null | head -n 1)
        if [[ -n $p ]]; then
            s=$(stat -c %s "$p" 2>/dev/null || echo 0)
            [[ $s -ge $want ]] && { part_size=$s; return 0; }
        fi
        kill -0 "$push_pid" 2>/dev/null || fail "$n never held $3 of $base: the push ended first: $(cat "$out" "$out.err")"
        sleep 0.02
    done
    fail "$n's .part did not reach $3 of $base within 12 s"
}

# finish_push: waits for push_pid; sets push_rc, push_secs.
finish_push() {
    push_rc=0
    wait "$push_pid" || push_rc=$?
    push_pid=""
    push_secs=$(secs_since "$t0")
}

# check_failed OUT VICTIM FILE REASON_RE ORPHANS...: the report names VICTIM failed (reason
# matching REASON_RE), every other destination ok, ORPHANS delivered by a try >= 2; the
# push took at most the bound. Prints "predicted bound attempts reason".
check_failed() {
    local out=$1 victim=$2 file=$3 re=$4
    shift 4
    python3 - "$out" "$victim" "$re" "$push_secs" "$stall" "$*" <<'PY'
import json, re, sys
path, victim, reason_re, secs, stall, orphans = sys.argv[1:7]
r = json.load(open(path))
assert len(r["reports"]) == 1, r
r = r["reports"][0]
failed = {f["member"]: f["reason"] for f in r["failed_members"]}
assert victim in failed, "%s not in failed_members %s" % (victim, failed)
assert re.search(reason_re, failed[victim]), "reason for %s: %r !~ %r" % (victim, failed[victim], reason_re)
assert set(failed) == {victim}, "other members failed too: %s" % failed
assert r["ok"] is False, r["ok"]
by = {o["dest"]: o for o in r["outcomes"]}
assert victim in by and not by[victim]["ok"] and by[victim]["error"], by.get(victim)
for d, o in by.items():
    if d != victim:
        assert o["ok"] and o["error"] == "", "%s: %s" % (d, o)
for d in orphans.split():
    assert by[d]["attempt"] >= 2, "orphaned %s delivered by try %s" % (d, by[d]["attempt"])
if orphans.split():
    assert r["attempts"] >= 2, r["attempts"]
bound = 2 * r["predicted"] + float(stall) + 10
assert float(secs) <= bound, "the push took %s s, bound %.1f s (predicted %.2f s)" % (secs, bound, r["predicted"])
print("%.2f %.1f %d %s" % (r["predicted"], bound, r["attempts"], failed[victim].replace(" ", "_")[:90]))
PY
}

# check_survivors FILE DEST...: byte-identical copies; no .part on any live daemon within
# 10 s; every live daemon's descriptors back within +2 of fd0 within 10 s.
check_survivors() {
    local file=$1 n p ok
    shift
    for n in "$@"; do cmp -s "$file" "$c/$n/dest/$(basename "$file")" || fail "$n's copy of $(basename "$file") differs or is missing"; done
    for _ in $(seq 100); do
        ok=1
        for n in "${!pid[@]}"; do
            [[ -n $(parts "$c/$n/dest") ]] && ok=0
            [[ $(fds "${pid[$n]}") -le $((fd0[$n] + 2)) ]] || ok=0
        done
        [[ $ok -eq 1 ]] && return 0
        sleep 0.1
    done
    for n in "${!pid[@]}"; do
        p=$(parts "$c/$n/dest")
        [[ -z $p ]] || fail "$n still has temporaries 10 s after the push: $p"
        [[ $(fds "${pid[$n]}") -le $((fd0[$n] + 2)) ]] ||
            fail "$n holds $(fds "${pid[$n]}") descriptors, ${fd0[$n]} before the push: $(ls -l "/proc/${pid[$n]}/fd")"
    done
}

clean_dests() { local n; for n in "${names[@]}"; do rm -f "$c/$n/dest/$1"; done; }

# --- a. the first relay SIGKILLed at half its copy: chain, then ecef --------------------------
# ecef on this map must relay through n1 (n0 reaches the others at 1.5 MB/s only).
"$hetcast" plan --network "$c/profile.yaml" --root n0 --size 4MiB --algo ecef --json > "$tmp/ecef-plan.json" \
    || fail "hetcast plan --algo ecef: $(cat "$tmp/ecef-plan.json")"
ecef_orphans=$(python3 - "$tmp/ecef-plan.json" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))["plans"][0]
# Every transfer (from, to) in the plan, whatever the exact layout of the JSON.
edges = set()
def walk(x):
    if isinstance(x, dict):
        f = x.get("from", x.get("sender", x.get("src")))
        t = x.get("to", x.get("receiver", x.get("dst")))
        if isinstance(f, str) and isinstance(t, str): edges.add((f, t))
        for v in x.values(): walk(v)
    elif isinstance(x, list):
        for v in x: walk(v)
walk(p)
assert edges, "no transfers found in the plan: %s" % json.dumps(p)[:400]
kids = {}
for f, t in edges: kids.setdefault(f, set()).add(t)
assert kids.get("n1"), "ecef does not relay through n1 here: %s" % sorted(edges)
# Everything below n1 is orphaned when it dies.
below, todo = set(), ["n1"]
while todo:
    u = todo.pop()
    for v in kids.get(u, ()):
        if v not in below: below.add(v); todo.append(v)
print(" ".join(sorted(below)))
PY
) || fail "ecef plan: $ecef_orphans"

declare -A a_timing=()
for algo in chain ecef; do
    if [[ $algo == chain ]]; then file=$tmp/f6.bin; orphans="n2 n3 n4 n5"; extra=(--piece 512KiB); else
        file=$tmp/f4.bin; orphans=$ecef_orphans; extra=(); fi
    clean_dests "$(basename "$file")"
    record_fds
    out=$tmp/a-$algo.json
    push_bg "$file" "$algo" "$out" --all "${extra[@]}"
    wait_part n1 "$file" 0.5
    kill -KILL "${pid[n1]}"
    wait "${pid[n1]}" 2>/dev/null || true
    unset "pid[n1]"
    kill_at=$(secs_since "$t0")
    finish_push
    [[ $push_rc -eq 4 ]] || fail "a/$algo: push status $push_rc, expected 4 (partial): $(cat "$out" "$out.err")"
    res=$(check_failed "$out" n1 "$file" . $orphans) || fail "a/$algo: $res; report: $(cat "$out")"
    check_survivors "$file" n2 n3 n4 n5
    [[ ! -e $c/n1/dest/$(basename "$file") ]] || fail "a/$algo: the killed n1 has the final file"
    read -r pred bound tries reason <<< "$res"
    step "a. $algo: n1 SIGKILLed at ${kill_at} s (.part $part_size B); push exit 4 in $push_secs s (bound $bound, predicted $pred), $tries tries, n1: ${reason//_/ }; n2..n5 identical (re-served: $orphans); no .part, fds back"
    # Restarted, n1 removes its temporaries and takes part again.
    start "$c" n1
    [[ -z $(parts "$c/n1/dest") ]] || fail "a/$algo: restarted n1 kept its temporaries: $(parts "$c/n1/dest")"
    warm n1 n0
done

# --- c. a destination SIGSTOPped before the push ----------------------------------------------
clean_dests f4.bin
record_fds
kill -STOP "${pid[n3]}"
stopped_pid=${pid[n3]}
unset "pid[n3]"
out=$tmp/c.json
push_bg "$tmp/f4.bin" ecef "$out" --to n1,n2,n3,n4,n5
finish_push
pid[n3]=$stopped_pid
kill -CONT "${pid[n3]}"
cont_t=$(now)
[[ $push_rc -eq 4 ]] || fail "c: push status $push_rc, expected 4 (partial): $(cat "$out" "$out.err")"
res=$(check_failed "$out" n3 "$tmp/f4.bin" .) || fail "c: $res; report: $(cat "$out")"
read -r pred bound tries reason <<< "$res"
check_survivors "$tmp/f4.bin" n1 n2 n4 n5
[[ ! -e $c/n3/dest/f4.bin ]] || fail "c: the stopped n3 has the file"
step "c. ecef --to n1..n5, n3 SIGSTOPped before: push exit 4 in $push_secs s (bound $bound, predicted $pred), $tries tries, n3: ${reason//_/ }; the 4 others identical; after SIGCONT no .part on n3 ($(secs_since "$cont_t") s)"

# --- d. a destination whose dest_root is a regular file ---------------------------------------
clean_dests f4.bin
mv "$c/n4/dest" "$c/n4/dest.away"
echo "not a folder" > "$c/n4/dest"
record_fds
out=$tmp/d.json
push_bg "$tmp/f4.bin" ecef "$out" --all
finish_push
[[ $push_rc -eq 4 ]] || fail "d: push status $push_rc, expected 4 (partial): $(cat "$out" "$out.err")"
res=$(check_failed "$out" n4 "$tmp/f4.bin" .) || fail "d: $res; report: $(cat "$out")"
read -r pred bound tries reason <<< "$res"
check_survivors "$tmp/f4.bin" n1 n2 n3 n5
[[ $(cat "$c/n4/dest") == "not a folder" ]] || fail "d: n4's dest_root file was changed"
rm "$c/n4/dest"
mv "$c/n4/dest.away" "$c/n4/dest"
step "d. ecef, n4's dest_root a regular file: push exit 4 in $push_secs s (bound $bound, predicted $pred), n4: ${reason//_/ }; the 4 others identical"

# --- b and e: stall_timeout 2 s; n0 sends at 4 MB/s to all but n5 (1.5 MB/s) -----------------
for n in "${names[@]}"; do stop "$n"; done
stall=2
bring_up "$tmp/c2" n5
step "6 daemons restarted with stall_timeout $stall s (n0 slow to n5 only), warmed up"

# --- b. the first relay SIGSTOPped at half: failed as silent after stall_timeout -------------
clean_dests f6.bin
record_fds
out=$tmp/b.json
push_bg "$tmp/f6.bin" chain "$out" --all --piece 512KiB
wait_part n1 "$tmp/f6.bin" 0.5
kill -STOP "${pid[n1]}"
stop_at=$(secs_since "$t0")
stopped_pid=${pid[n1]}
unset "pid[n1]"   # not a survivor while stopped: no descriptor check on it
finish_push
pid[n1]=$stopped_pid
kill -CONT "${pid[n1]}"
cont_t=$(now)
[[ $push_rc -eq 4 ]] || fail "b: push status $push_rc, expected 4 (partial): $(cat "$out" "$out.err")"
res=$(check_failed "$out" n1 "$tmp/f6.bin" 'stopped answering|nothing from it|silent|stall|timed out' n2 n3 n4 n5) ||
    fail "b: $res; report: $(cat "$out")"
read -r pred bound tries reason <<< "$res"
unset "pid[n1]"; fd_n1=${fd0[n1]}
check_survivors "$tmp/f6.bin" n2 n3 n4 n5
pid[n1]=$stopped_pid
# Continued, n1 drops the cancelled job's temporary and its descriptors settle.
for _ in $(seq 100); do
    [[ -z $(parts "$c/n1/dest") && $(fds "${pid[n1]}") -le $((fd_n1 + 2)) ]] && break
    sleep 0.1
done
[[ -z $(parts "$c/n1/dest") ]] || fail "b: 10 s after SIGCONT, n1 still has $(parts "$c/n1/dest")"
n1_clean=$(secs_since "$cont_t")
n1_fds=$(fds "${pid[n1]}")
[[ ! -e $c/n1/dest/f6.bin ]] || fail "b: the stopped n1 landed the file it never finished receiving"
kill -0 "${pid[n1]}" || fail "b: n1 died after SIGCONT"
# The next push includes n1 as a relay again and succeeds.
clean_dests f6.bin
record_fds
t0=$(now)
timeout 120 "$hetcast" push "$tmp/f6.bin" --config "$c/n0.yaml" --all --algo chain --piece 512KiB --json > "$tmp/b2.json" 2>&1 ||
    fail "b: the push after SIGCONT failed: $(cat "$tmp/b2.json"); n1's log: $(tail -n 20 "$tmp/n1.log")"
next_secs=$(secs_since "$t0")
recover_secs=$(secs_since "$cont_t")
check_survivors "$tmp/f6.bin" n1 n2 n3 n4 n5
step "b. chain: n1 SIGSTOPped at $stop_at s; push exit 4 in $push_secs s (bound $bound, predicted $pred), $tries tries, n1: ${reason//_/ }; n2..n5 identical"
step "b. SIGCONT: n1 without .part after $n1_clean s (fds $n1_fds, $fd_n1 before); the next chain push through n1 ok in $next_secs s ($recover_secs s after SIGCONT)"
[[ $n1_fds -le $((fd_n1 + 2)) ]] || fail "b: after SIGCONT n1 holds $n1_fds descriptors, $fd_n1 before: $(ls -l "/proc/${pid[n1]}/fd")"

# --- e. a healthy destination fed slowly by the coordinator is not "silent" --------------------
# n0 streams 6 MiB to n5 at 1.5 MB/s (about 4 s, twice stall_timeout): n5 receives all along,
# so it must not be failed as "stopped answering".
clean_dests f6.bin
record_fds
out=$tmp/e.json
push_bg "$tmp/f6.bin" flat "$out" --to n5
finish_push
[[ $push_rc -eq 0 ]] || fail "e: a push to n5 over a 1.5 MB/s link ($push_secs s, stall_timeout $stall s) failed (status $push_rc): $(python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))["reports"][0]
print("failed_members:", r["failed_members"], "attempts:", r["attempts"])' "$out" 2>&1 || cat "$out" "$out.err")"
check_survivors "$tmp/f6.bin" n5
step "e. flat --to n5 at 1.5 MB/s with stall_timeout $stall s: ok in $push_secs s, n5 not failed"

# settle_survivors WHAT: no .part on any live daemon and every live daemon's descriptors within
# +2 of fd0, within 10 s (check_survivors without copies).
settle_survivors() {
    local n
    for _ in $(seq 100); do
        local ok=1
        for n in "${!pid[@]}"; do
            [[ -n $(parts "$c/$n/dest") ]] && ok=0
            [[ $(fds "${pid[$n]}") -le $((fd0[$n] + 2)) ]] || ok=0
        done
        [[ $ok -eq 1 ]] && return 0
        sleep 0.1
    done
    for n in "${!pid[@]}"; do
        [[ -z $(parts "$c/$n/dest") ]] || fail "$1: $n still has temporaries after 10 s: $(parts "$c/$n/dest")"
        [[ $(fds "${pid[$n]}") -le $((fd0[$n] + 2)) ]] ||
            fail "$1: $n holds $(fds "${pid[$n]}") descriptors, ${fd0[$n]} before: $(ls -l "/proc/${pid[$n]}/fd")"
    done
}

# --- f. disk full on one destination (a 2 MiB tmpfs as n4's dest_root) ----------------------
if [[ $(id -u) -ne 0 ]]; then
    echo "daemon fault test: f. skipped: needs root for a tmpfs"
else
    stop n4
    mount -t tmpfs -o size=2m tmpfs "$c/n4/dest" || fail "f: mount -t tmpfs on $c/n4/dest failed"
    mounted=$c/n4/dest
    start "$c" n4
    warm n4 n0
    clean_dests f6.bin
    record_fds
    out=$tmp/f.json
    push_bg "$tmp/f6.bin" ecef "$out" --all
    finish_push
    [[ $push_rc -eq 4 ]] || fail "f: push status $push_rc, expected 4 (partial): $(cat "$out" "$out.err")"
    res=$(check_failed "$out" n4 "$tmp/f6.bin" '(?i)no space') || fail "f: $res; report: $(cat "$out")"
    read -r pred bound tries reason <<< "$res"
    check_survivors "$tmp/f6.bin" n1 n2 n3 n5
    [[ ! -e $c/n4/dest/f6.bin ]] || fail "f: n4 landed f6.bin on a 2 MiB tmpfs"
    used=$(df -B1 --output=used "$c/n4/dest" | tail -n 1 | tr -d ' ')
    # The reason's end (check_failed shortens it; the path of the temporary is long).
    why=$(python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))["reports"][0]
print([f["reason"] for f in r["failed_members"] if f["member"] == "n4"][0].rsplit(": ", 1)[-1])' "$out")
    step "f. ecef --all, n4's dest_root a 2 MiB tmpfs: push exit 4 in $push_secs s (bound $bound, predicted $pred), $tries tries, n4: cannot write its .part: $why; the 4 others identical; n4's tmpfs holds $used B after, no .part"
    stop n4
    umount "$c/n4/dest" || fail "f: umount $c/n4/dest"
    mounted=""
    start "$c" n4
    warm n4 n0
fi

# --- g. the source (the coordinator the CLI talks to) SIGKILLed mid-push -------------------
clean_dests f6.bin
record_fds
out=$tmp/g.json
push_bg "$tmp/f6.bin" chain "$out" --all --piece 512KiB
# Early enough that n1, which gets the file 2.7 times faster than it relays it, does not
# hold it whole yet (it would rightly land it).
wait_part n2 "$tmp/f6.bin" 0.1
"$hetcast" jobs --config "$c/n1.yaml" --json > "$tmp/g-jobs.json" 2> "$tmp/g-jobs.err" || fail "g: hetcast jobs: $(cat "$tmp/g-jobs.err")"
job=$(python3 -c '
import json, sys
ids = sorted({j["job"] for j in json.load(open(sys.argv[1]))["jobs"]})
assert len(ids) == 1, ids
print(ids[0])' "$tmp/g-jobs.json") || fail "g: not one job listed while the push runs: $(cat "$tmp/g-jobs.json")"
kill -KILL "${pid[n0]}"
wait "${pid[n0]}" 2>/dev/null || true
unset "pid[n0]"
kill_t=$(now)
kill_at=$(secs_since "$t0")
finish_push
cli_secs=$(secs_since "$kill_t")
[[ $push_rc -ne 0 ]] || fail "g: the push exited 0 with its coordinator killed: $(cat "$out")"
[[ $(wc -l < "$out.err") -eq 1 ]] || fail "g: not one line on stderr (status $push_rc): $(cat "$out.err")"
grep -Eq "n0|127\.0\.0\.1:${port[n0]}([^0-9]|$)" "$out.err" || fail "g: the error does not name n0 (127.0.0.1:${port[n0]}): $(cat "$out.err")"
python3 -c "import sys; sys.exit(0 if float(sys.argv[1]) <= 5 else 1)" "$cli_secs" ||
    fail "g: the CLI exited $cli_secs s after n0 was killed (more than 5 s): $(cat "$out.err")"
# Every other daemon drops the job: no .part, not listed, within stall_timeout + 5 s.
limit=$(python3 -c "print(int(($stall + 5) * 10))")
dropped=""
for _ in $(seq "$limit"); do
    left=$(parts "$c"/n[1-5]/dest)
    "$hetcast" jobs --config "$c/n1.yaml" --json > "$tmp/g-jobs.json" 2> "$tmp/g-jobs.err" || true
    listed=$(python3 -c '
import json, sys
try: rows = json.load(open(sys.argv[1]))["jobs"]
except Exception as e: print("unreadable:", e); sys.exit()
print(" ".join(sorted({j["member"] for j in rows if j["job"] == sys.argv[2]})))' "$tmp/g-jobs.json" "$job")
    if [[ -z $left && -z $listed ]]; then dropped=$(secs_since "$kill_t"); break; fi
    sleep 0.1
done
[[ -n $dropped ]] || fail "g: $((stall + 5)) s after n0 was killed: .part left: [$left]; job $job still listed by: [$listed]; $(cat "$tmp/g-jobs.json" "$tmp/g-jobs.err")"
for n in n1 n2 n3 n4 n5; do [[ ! -e $c/$n/dest/f6.bin ]] || fail "g: $n landed f6.bin though its source died"; done
settle_survivors g
g_err=$(cat "$out.err")
# n0 restarted: the next push works.
start "$c" n0
warm n0
clean_dests f6.bin
record_fds
t0=$(now)
timeout 120 "$hetcast" push "$tmp/f6.bin" --config "$c/n0.yaml" --all --algo chain --piece 512KiB --json > "$tmp/g2.json" 2>&1 ||
    fail "g: the push after n0's restart failed: $(cat "$tmp/g2.json")"
next_secs=$(secs_since "$t0")
check_survivors "$tmp/f6.bin" n1 n2 n3 n4 n5
step "g. chain, n0 (coordinator) SIGKILLed at $kill_at s: CLI exit $push_rc ${cli_secs} s later: '$g_err'; job $job gone from n1..n5 (no .part, not listed) $dropped s after the kill (limit $((stall + 5)) s); n0 restarted, next push ok in $next_secs s"

# --- h. max_jobs 1 on n3, two pushes from two coordinators through it ------------------------
stop n3
echo "limits: {max_jobs: 1}" >> "$c/n3.yaml"
start "$c" n3
warm n3 n0 n2
clean_dests f6.bin
clean_dests f4.bin
record_fds
outA=$tmp/h-a.json
outB=$tmp/h-b.json
out=$outA
push_bg "$tmp/f6.bin" chain "$outA" --all --piece 512KiB
tA=$t0
wait_part n3 "$tmp/f6.bin" 0.1
tB=$(now)
timeout 120 "$hetcast" push "$tmp/f4.bin" --config "$c/n0.yaml" --from n2 --algo ecef --all --json > "$outB" 2> "$outB.err" &
push2_pid=$!
rcB=0
wait "$push2_pid" || rcB=$?
push2_pid=""
secsB=$(secs_since "$tB")
finish_push
rcA=$push_rc
secsA=$push_secs
# Exactly: both ok; or one refused n3 alone, "busy", its other destinations ok, the other ok.
verdict=$(python3 - "$outA" "$rcA" "$outB" "$rcB" <<'PY'
import json, sys
def load(p):
    try:
        r = json.load(open(p))
    except Exception as e:
        raise SystemExit("no JSON report in %s: %s" % (p, e))
    return r["reports"][0]
a, b = load(sys.argv[1]), load(sys.argv[3])
rc = {"A": int(sys.argv[2]), "B": int(sys.argv[4])}
r = {"A": a, "B": b}
def all_ok(k):
    return rc[k] == 0 and r[k]["ok"] is True and not r[k]["failed_members"] and all(o["ok"] for o in r[k]["outcomes"])
def refused(k):
    f = {x["member"]: x["reason"] for x in r[k]["failed_members"]}
    if rc[k] != 4 or r[k]["ok"] is not False or set(f) != {"n3"} or "busy" not in f["n3"]:
        return None
    for o in r[k]["outcomes"]:
        if o["dest"] == "n3":
            if o["ok"]: return None
        elif not o["ok"]:
            return None
    return f["n3"]
if all_ok("A") and all_ok("B"):
    print("both - both completed")
elif all_ok("A") and refused("B"):
    print("B n3 refused the second push: " + refused("B"))
elif all_ok("B") and refused("A"):
    print("A n3 refused the first push: " + refused("A"))
else:
    raise SystemExit("neither both completed nor one refused by n3 'busy' alone: A status %d failed %s, B status %d failed %s"
                     % (rc["A"], a["failed_members"], rc["B"], b["failed_members"]))
PY
) || fail "h: $verdict; A: $(cat "$outA" "$outA.err" | tail -c 1500); B: $(cat "$outB" "$outB.err" | tail -c 1500)"
read -r refused_push _ h_text <<< "$verdict"
case $refused_push in
    both) check_survivors "$tmp/f6.bin" n1 n2 n3 n4 n5; check_survivors "$tmp/f4.bin" n0 n1 n3 n4 n5 ;;
    A) check_survivors "$tmp/f6.bin" n1 n2 n4 n5; check_survivors "$tmp/f4.bin" n0 n1 n3 n4 n5
       [[ ! -e $c/n3/dest/f6.bin ]] || fail "h: n3 refused the first push but has f6.bin" ;;
    B) check_survivors "$tmp/f6.bin" n1 n2 n3 n4 n5; check_survivors "$tmp/f4.bin" n0 n1 n4 n5
       [[ ! -e $c/n3/dest/f4.bin ]] || fail "h: n3 refused the second push but has f4.bin" ;;
esac
step "h. n3 max_jobs 1: push A (n0, chain 6 MiB) status $rcA in $secsA s, push B (n2, ecef 4 MiB, started $(python3 -c "print(round($tB - $tA, 2))") s later) status $rcB in $secsB s: $h_text; copies identical, no .part, fds back"

# --- i. a 255-byte file name --------------------------------------------------------------
long=$(python3 -c 'print("n" * 241 + "-255-bytes.bin")')
[[ ${#long} -eq 255 ]] || fail "i: the name is ${#long} bytes"
mkdir -p "$tmp/long"
head -c $((1 << 20)) /dev/urandom > "$tmp/long/$long"
clean_dests "$long"
record_fds
out=$tmp/i.json
push_bg "$tmp/long/$long" chain "$out" --all --piece 256KiB
finish_push
[[ $push_rc -eq 0 ]] || fail "i: a push of a 255-byte name failed (status $push_rc): $(cat "$out" "$out.err" | tail -c 2000)"
check_survivors "$tmp/long/$long" n1 n2 n3 n4 n5
for n in n1 n2 n3 n4 n5; do
    [[ $(ls -A "$c/$n/dest" | grep -c "^n\{241\}-255-bytes\.bin$") -eq 1 ]] || fail "i: $n: $(ls -A "$c/$n/dest")"
done
step "i. chain --all of 1 MiB named with 255 bytes: ok in $push_secs s; n1..n5 hold it under that exact name, identical"

for n in "${names[@]}"; do stop "$n"; done
echo "daemon fault test: all checks passed"
