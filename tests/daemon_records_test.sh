#!/usr/bin/env bash
# Pushes of any length, and what is known of them afterwards (issue 22), on three daemons on
# 127.0.0.1 with short internal deadlines (heartbeat 0.2 s: a command takes its daemon for
# lost after 1.2 s of silence):
#  - a quiet (-q) push lasting several times that silence limit ends with exit 0;
#  - --timeout: a push over it is cancelled ("timed out", exit 1); bad values: exit 2, one line;
#  - the command that started a push is SIGKILLed: the push goes on and lands, and
#    `hetcast wait JOB` prints its report; a coordinator that is SIGSTOPped: the command says
#    it is lost within seconds (exit 3) naming `hetcast wait`, and the push goes on once
#    SIGCONTed;
#  - audit: one line per push at the coordinator (job, operator, what, bytes, destinations,
#    algorithm, outcome, achieved, predicted) and one per landing at each destination (job,
#    path, SHA-256);
#  - history: `jobs --history` (text and JSON) lists the pushes with their outcome, the
#    history file keeps at most `history` entries and survives a restart; `wait` of an ended
#    push prints its report from it; `wait` of an unknown job: exit 2, one line.
#   usage: daemon_records_test.sh HETCASTD HETCAST
set -euo pipefail

hetcastd=$(realpath "$1")
hetcast=$(realpath "$2")
[[ -x $hetcastd && -x $hetcast ]] || { echo "usage: $0 HETCASTD HETCAST" >&2; exit 2; }

test_name="daemon records test"
source "$(dirname "$0")/daemons.sh"
daemon_config=("heartbeat: 0.2" "stall_timeout: 20" "chunk: 16KiB")
push_pid=""
stop_extra() { [[ -n $push_pid ]] && kill -KILL "$push_pid" 2>/dev/null; return 0; }

new_ca "$tmp/keys"
c=$tmp/c
cluster "$c" "$tmp/keys" "" r0 r1 r2
echo "history: 3" >> "$c/r0.yaml"
for n in r0 r1 r2; do start "$c" "$n"; done
"$hetcast" probe --config "$c/r0.yaml" --seconds 0.2 --repeats 1 --reps 3 > /dev/null || fail "probe"
head -c $((256 << 10)) /dev/urandom > "$tmp/slow.bin"  # 4 s at 64 KiB/s
sha=$(sha256sum "$tmp/slow.bin" | cut -d' ' -f1)
push() { "$hetcast" push "$tmp/slow.bin" --config "$c/r0.yaml" --to r1 --algo flat --bwlimit 64KiB/s -q "$@"; }
field() { python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"; }

# A quiet push longer than the silence a command tolerates: the heartbeats keep it waiting.
t0=$(now)
push --json > "$tmp/quiet.json" 2> "$tmp/quiet.err" || fail "quiet push: $(cat "$tmp/quiet.err")"
secs=$(python3 -c "print(round($(now) - $t0, 1))")
python3 -c "import sys; sys.exit(0 if $secs > 3 else 1)" || fail "the quiet push took only $secs s: not longer than the silence limit"
cmp -s "$tmp/slow.bin" "$c/r1/dest/slow.bin" || fail "quiet push: r1's copy differs"
job_quiet=$(field "$tmp/quiet.json" 'd["reports"][0]["job"]')
step "a quiet push of $secs s (6 heartbeats of 0.2 s = 1.2 s of silence allowed): exit 0, copy intact"

# --timeout: over it, cancelled and failed; bad values refused before anything moves.
rm -f "$c/r1/dest/slow.bin"
rc=0
push --timeout 1s --json > "$tmp/timeout.json" 2> "$tmp/timeout.err" || rc=$?
[[ $rc -eq 1 ]] || fail "push over its --timeout: status $rc: $(cat "$tmp/timeout.err")"
[[ $(field "$tmp/timeout.json" 'd["reports"][0]["outcomes"][0]["error"]') == *"timed out"* ]] ||
    fail "push over its --timeout: $(cat "$tmp/timeout.json")"
[[ ! -e $c/r1/dest/slow.bin ]] || fail "a push that timed out landed its file"
job_timeout=$(field "$tmp/timeout.json" 'd["reports"][0]["job"]')
for bad in 5x -1 0 abc 1e9d; do
    rc=0
    push --timeout "$bad" > /dev/null 2> "$tmp/bad.err" || rc=$?
    [[ $rc -eq 2 && $(wc -l < "$tmp/bad.err") -eq 1 ]] && grep -q -- "--timeout" "$tmp/bad.err" ||
        fail "--timeout $bad: status $rc: $(cat "$tmp/bad.err")"
done
step "--timeout 1s on a 4 s push: 'timed out', exit 1, nothing landed; --timeout 5x/-1/0/abc/1e9d: exit 2, one line"

# The command that started a push dies (an ssh session lost): the push goes on; wait re-attaches.
running_job() {  # running_job: the id of the push r0 coordinates, once listed
    for _ in $(seq 200); do
        "$hetcast" jobs --config "$c/r0.yaml" --json > "$tmp/jobs.json" 2>/dev/null &&
            python3 -c 'import json,sys; j=[r["job"] for r in json.load(open(sys.argv[1]))["jobs"] if r["role"]=="coordinator"]; print(j[0]) if j else sys.exit(1)' "$tmp/jobs.json" &&
            return 0
        sleep 0.05
    done
    fail "no push listed by 'hetcast jobs'"
}
rm -f "$c/r1/dest/slow.bin"
push > /dev/null 2>&1 &
push_pid=$!
job=$(running_job)
# On a loaded machine the 4 s push can end before 'jobs' has listed it: nothing to kill then,
# and 'wait' must still re-attach to it (the CI run of 2026-11-28 stopped here).
kill -KILL "$push_pid" 2>/dev/null ||
    echo "daemon records test: the push ended before its command could be killed (a loaded machine)" >&2
wait "$push_pid" 2>/dev/null || true
push_pid=""
rc=0
"$hetcast" wait "$job" --config "$c/r1.yaml" --json > "$tmp/wait.json" 2> "$tmp/wait.err" || rc=$?
[[ $rc -eq 0 ]] || fail "wait $job after its command was killed: status $rc: $(cat "$tmp/wait.err")"
[[ $(field "$tmp/wait.json" 'd["command"], d["ok"], d["reports"][0]["job"]') == "('wait', True, '$job')" ]] ||
    fail "wait $job: $(cat "$tmp/wait.json")"
cmp -s "$tmp/slow.bin" "$c/r1/dest/slow.bin" || fail "the push whose command was killed did not land"
step "push's command SIGKILLed: the push went on and landed; 'wait $job' from another member re-attached (exit 0)"

# The coordinator freezes: the command says so within seconds (exit 3), and how to re-attach.
rm -f "$c/r1/dest/slow.bin"
push > /dev/null 2> "$tmp/lost.err" &
push_pid=$!
job_lost=$(running_job)
kill -STOP "${pid[r0]}"
t0=$(now)
rc=0
wait "$push_pid" || rc=$?
push_pid=""
secs=$(python3 -c "print(round($(now) - $t0, 1))")
kill -CONT "${pid[r0]}"
[[ $rc -eq 3 ]] || fail "push whose coordinator froze: status $rc: $(cat "$tmp/lost.err")"
grep -q "sent nothing for 1200 ms" "$tmp/lost.err" && grep -q "hetcast wait $job_lost" "$tmp/lost.err" ||
    fail "push whose coordinator froze: $(cat "$tmp/lost.err")"
python3 -c "import sys; sys.exit(0 if $secs < 10 else 1)" || fail "the lost coordinator was noticed only after $secs s"
"$hetcast" wait "$job_lost" --config "$c/r0.yaml" -q > "$tmp/wait2.txt" 2>&1 || fail "wait $job_lost: $(cat "$tmp/wait2.txt")"
cmp -s "$tmp/slow.bin" "$c/r1/dest/slow.bin" || fail "the push whose coordinator was stopped did not land once continued"
step "coordinator SIGSTOPped mid-push: the command exited 3 after $secs s naming 'hetcast wait'; continued, the push landed"

# Audit lines.
grep -q "INFO job $job_quiet by 'operator': $tmp/slow.bin, 262144 bytes to 1 (r1) with flat: done, [0-9.]* s achieved, [0-9.]* s predicted" "$tmp/r0.log" ||
    fail "no audit line for job $job_quiet at r0: $(grep "job $job_quiet" "$tmp/r0.log")"
grep -q "INFO job $job_timeout by 'operator': .* with flat: failed (failed: r1), " "$tmp/r0.log" ||
    fail "no audit line for the timed-out job: $(grep "job $job_timeout" "$tmp/r0.log")"
grep -q "INFO job $job_quiet: landed $c/r1/dest/slow.bin, 262144 bytes, sha256 $sha, from 'r0'" "$tmp/r1.log" ||
    fail "no landing line at r1: $(grep "job $job_quiet" "$tmp/r1.log")"
step "audit: a line per push at r0 (job, operator, file, bytes, destinations, algorithm, outcome, times), a landing line with the SHA-256 at r1"

# History: the last 3 at r0, kept across a restart.
"$hetcast" jobs --history --config "$c/r0.yaml" > "$tmp/history.txt" || fail "jobs --history"
"$hetcast" jobs --history --json --config "$c/r0.yaml" > "$tmp/history.json" || fail "jobs --history --json"
[[ $(field "$tmp/history.json" '[(j["job"], j["outcome"], j["member"]) for j in d["jobs"]]') == "[('$job_timeout', 'failed', 'r0'), ('$job', 'done', 'r0'), ('$job_lost', 'done', 'r0')]" ]] ||
    fail "history (3 kept, oldest first): $(cat "$tmp/history.json")"
grep -q "^$job_lost .* r0 .* operator .* done .* flat .*slow.bin$" "$tmp/history.txt" || fail "jobs --history: $(cat "$tmp/history.txt")"
[[ $(find "$c/r0/state" -name 'history.json*' | wc -l) -eq 1 ]] || fail "history leftovers: $(ls -a "$c/r0/state")"
stop r0
start "$c" r0
"$hetcast" wait "$job_timeout" --config "$c/r2.yaml" --json > "$tmp/old.json" 2> "$tmp/old.err" && fail "wait of a failed push exited 0"
[[ $(field "$tmp/old.json" 'd["ok"], d["reports"][0]["job"]') == "(False, '$job_timeout')" ]] || fail "wait of an ended push: $(cat "$tmp/old.json")"
rc=0
"$hetcast" wait 12345 --config "$c/r0.yaml" > /dev/null 2> "$tmp/unknown.err" || rc=$?
[[ $rc -eq 2 && $(wc -l < "$tmp/unknown.err") -eq 1 ]] && grep -q "no job 12345" "$tmp/unknown.err" ||
    fail "wait of an unknown job: status $rc: $(cat "$tmp/unknown.err")"
step "history: the last 3 pushes, oldest first, across a restart; wait of an ended push: its report; of an unknown one: exit 2"
