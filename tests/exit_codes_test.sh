#!/usr/bin/env bash
# hetcast's exit statuses (the table in hetcast(1) and the README), one check per row, on
# three daemons on 127.0.0.1 (130, Ctrl-C on a push, is daemon_push_test.sh's):
#   0 success; 1 the operation failed (a push no destination got, also when all are down:
#   a JSON report naming each); 2 bad input (cancel abc, an unknown job, a bad option value);
#   3 no daemon reached or our identity refused; 4 partial (status with members down, a push some destinations got).
#   usage: exit_codes_test.sh HETCASTD HETCAST
set -euo pipefail

hetcastd=$(realpath "$1")
hetcast=$(realpath "$2")
[[ -x $hetcastd && -x $hetcast ]] || { echo "usage: $0 HETCASTD HETCAST" >&2; exit 2; }

test_name="exit codes test"
source "$(dirname "$0")/daemons.sh"

new_ca "$tmp/keys"
c=$tmp/c
cluster "$c" "$tmp/keys" "" e0 e1 e2
for n in e0 e1 e2; do start "$c" "$n"; done
"$hetcast" probe --config "$c/e0.yaml" --seconds 0.2 --repeats 1 --reps 3 > /dev/null || fail "probe"
head -c 100000 /dev/urandom > "$tmp/f.bin"

# expect STATUS NAME COMMAND...: runs COMMAND (stdout to $tmp/NAME.out, stderr to $tmp/NAME.err).
expect() {
    local want=$1 name=$2 rc=0
    shift 2
    "$@" > "$tmp/$name.out" 2> "$tmp/$name.err" || rc=$?
    [[ $rc -eq $want ]] || fail "$name: status $rc, expected $want: $(cat "$tmp/$name.err" "$tmp/$name.out" | head -c 1500)"
}
field() { python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"; }

expect 0 status-up "$hetcast" status --config "$c/e0.yaml"
expect 0 push-ok "$hetcast" push "$tmp/f.bin" --config "$c/e0.yaml" --to e1,e2 -q
step "0: status with every member up, a push every destination got"

expect 2 cancel-abc "$hetcast" cancel abc --config "$c/e0.yaml"
[[ $(wc -l < "$tmp/cancel-abc.err") -eq 1 ]] && grep -q "'abc' is not a job id" "$tmp/cancel-abc.err" || fail "cancel abc: $(cat "$tmp/cancel-abc.err")"
expect 2 cancel-unknown "$hetcast" cancel 12345 --config "$c/e0.yaml"
grep -q "no job 12345" "$tmp/cancel-unknown.err" || fail "cancel 12345: $(cat "$tmp/cancel-unknown.err")"
expect 2 timeout-bad "$hetcast" push "$tmp/f.bin" --config "$c/e0.yaml" --to e1 --timeout 5x
expect 2 option-bad "$hetcast" status --config "$c/e0.yaml" --frobnicate
[[ ! -s $tmp/cancel-abc.out && ! -s $tmp/timeout-bad.out ]] || fail "bad input printed on stdout"
step "2: cancel abc, cancel of an unknown job, push --timeout 5x, an unknown option (one line, nothing on stdout)"

stop e2
expect 4 status-down "$hetcast" status --config "$c/e0.yaml"
grep -q "^2 of 3 up" "$tmp/status-down.out" || fail "status with e2 down: $(cat "$tmp/status-down.out")"
expect 4 status-down-json "$hetcast" status --config "$c/e0.yaml" --json
[[ $(field "$tmp/status-down-json.out" '[m["up"] for m in d["members"]]') == "[True, True, False]" ]] || fail "status --json: $(cat "$tmp/status-down-json.out")"
rm -f "$c/e1/dest/f.bin"
expect 4 push-partial "$hetcast" push "$tmp/f.bin" --config "$c/e0.yaml" --to e1,e2 -q
cmp -s "$tmp/f.bin" "$c/e1/dest/f.bin" || fail "partial push: e1's copy"
grep -q "e2 failed: unreachable" "$tmp/push-partial.err" || fail "partial push: $(cat "$tmp/push-partial.err")"
step "4: status with 1 of 3 members down (text and JSON), a push e1 got and e2 (down) did not"

stop e1
expect 1 push-none "$hetcast" push "$tmp/f.bin" --config "$c/e0.yaml" --to e1,e2 --json
[[ $(field "$tmp/push-none.out" 'd["ok"], sorted((o["dest"], o["ok"], o["error"].split(":")[0]) for o in d["reports"][0]["outcomes"])') == \
    "(False, [('e1', False, 'unreachable'), ('e2', False, 'unreachable')])" ]] || fail "push to members all down: $(cat "$tmp/push-none.out")"
grep -q "e1 failed: unreachable" "$tmp/push-none.err" && grep -q "e2 failed: unreachable" "$tmp/push-none.err" ||
    fail "push to members all down: $(cat "$tmp/push-none.err")"
step "1: a push whose destinations are all down: a JSON report naming e1 and e2, each 'unreachable'"

"$hetcast" keys init --dir "$tmp/other" > /dev/null || fail "keys init of another CA"
expect 3 status-stranger env HETCAST_IDENTITY="$tmp/other/operator.pem" "$hetcast" status --config "$c/e0.yaml"
stop e0
expect 3 status-nodaemon "$hetcast" status --config "$c/e0.yaml"
grep -q "is hetcastd running there" "$tmp/status-nodaemon.err" || fail "status with no daemon: $(cat "$tmp/status-nodaemon.err")"
expect 3 jobs-nodaemon "$hetcast" jobs --config "$c/e0.yaml" --json
[[ ! -s $tmp/jobs-nodaemon.out ]] || fail "jobs --json with no daemon printed: $(cat "$tmp/jobs-nodaemon.out")"
step "3: status with an identity another CA issued; status and jobs with no daemon to ask"
