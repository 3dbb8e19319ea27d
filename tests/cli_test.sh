#!/usr/bin/env bash
# End-to-end checks of `hetcast plan`: a good network file plans, bad files and bad
# requests exit 2 with one error line on stderr and nothing on stdout.
# usage: cli_test.sh PATH/TO/hetcast PATH/TO/REPO
set -uo pipefail
hetcast=$1
src_dir=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0

fail() {
    echo "FAIL: $*"
    failures=$((failures + 1))
}

# run NAME ARGS...: runs hetcast, leaving the status in $rc and the output in $tmp/NAME.{out,err}.
run() {
    local name=$1
    shift
    "$hetcast" "$@" >"$tmp/$name.out" 2>"$tmp/$name.err"
    rc=$?
}

# expect_usage_error NAME ARGS...: exit 2, one line on stderr, nothing on stdout.
expect_usage_error() {
    local name=$1
    run "$@"
    [ "$rc" -eq 2 ] || fail "$name: exit status $rc, expected 2"
    [ ! -s "$tmp/$name.out" ] || fail "$name: printed on stdout: $(head -c 200 "$tmp/$name.out")"
    [ "$(wc -l <"$tmp/$name.err")" -eq 1 ] || fail "$name: expected one line on stderr, got: $(cat "$tmp/$name.err")"
}

# expect_file_error NAME CONTENT: `hetcast plan` on a file holding CONTENT fails with
# one line "[hetcast plan: ]FILE:LINE:COL: ..." on stderr.
expect_file_error() {
    local name=$1 file="$tmp/$1.yaml"
    printf '%s' "$2" >"$file"
    expect_usage_error "$name" plan --network "$file" --algo fnf
    local line
    line=$(head -n 1 "$tmp/$name.err")
    line=${line#hetcast plan: }
    case "$line" in
        "$file":[0-9]*:[0-9]*:*) ;;
        *) fail "$name: stderr does not start with '$file:LINE:COL:': $line" ;;
    esac
}

run good plan --network "$src_dir/conf/examples/bhat-eq1.yaml" --algo fnf --json
[ "$rc" -eq 0 ] || fail "good: exit status $rc: $(cat "$tmp/good.err")"
python3 -c '
import json, sys
try:
    t = json.load(open(sys.argv[1]))["completion_time"]
except Exception as e:
    sys.exit("not JSON with a completion_time: %r" % e)
if t != 1000:
    sys.exit("completion_time %r" % t)
' "$tmp/good.out" 2>"$tmp/good.py" || fail "good: expected JSON with completion_time 1000: $(cat "$tmp/good.py")"

expect_file_error non-square $'nodes: [a, b, c]\ncost:\n  - [0, 1, 1]\n  - [1, 0]\n  - [1, 1, 0]\n'
expect_file_error negative-cost $'nodes: [a, b]\ncost:\n  - [0, 1]\n  - [-3, 0]\n'
expect_file_error unknown-subnet-node $'nodes: [a, b]\ncost: [[0, 1], [1, 0]]\nsubnets: [[a], [z]]\n'
expect_file_error duplicate-names $'nodes: [a, b, a]\ncost: 0\n'
expect_file_error zero-bandwidth $'nodes: [a, b]\nlatency: 0.001\nbandwidth: [[0, 1e6], [0, 0]]\n'
expect_file_error syntax $'nodes: [a, b\ncost: [[0, 1], [1, 0]]\n'
expect_file_error unknown-key $'nodes: [a, b]\ncots: [[0, 1], [1, 0]]\n'

eq1="$src_dir/conf/examples/bhat-eq1.yaml"
expect_usage_error unknown-algo plan --network "$eq1" --algo no-such-algorithm
expect_usage_error unknown-dest plan --network "$eq1" --algo fnf --dests P1,P9
expect_usage_error root-in-dests plan --network "$eq1" --algo fnf --root P1 --dests P0,P1
expect_usage_error missing-file plan --network "$tmp/does-not-exist.yaml" --algo fnf

# Multi-source patterns: `hetcast plan --network FILE --pattern FILE --algo NAME`.
subnets="$src_dir/conf/examples/three-subnets.yaml"
pattern="$src_dir/conf/examples/three-subnets-pattern.yaml"

# check_pattern_plan NAME: $tmp/NAME.out is one pattern plan (or {"plans": [...]}) whose
# messages are the example pattern's and whose fields agree with its transfers.
check_pattern_plan() {
    python3 - "$tmp/$1.out" "$subnets" >"$tmp/$1.py" 2>&1 <<'PY' || fail "$1: $(cat "$tmp/$1.py")"
import json, sys
doc = json.load(open(sys.argv[1]))
plans = doc["plans"] if "plans" in doc else [doc]
nodes = ["a1", "a2", "a3", "b1", "b2", "b3", "c1", "c2"]
want = [("a1", 1048576, [n for n in nodes if n != "a1"]),
        ("b1", 262144, ["a2", "a3", "c1", "c2"]),
        ("c2", 65536, ["a1", "b2", "b3", "c1"])]
for p in plans:
    name = p["algorithm"]
    for key in ("algorithm", "model", "completion_time", "lower_bound", "messages", "transfers"):
        assert key in p, "%s: no %s" % (name, key)
    got = [(m["source"], m["size"], m["dests"]) for m in p["messages"]]
    assert got == want, "%s: messages %r" % (name, got)
    assert [m["id"] for m in p["messages"]] == [0, 1, 2], name
    reached = sorted((t["message"], t["to"]) for t in p["transfers"])
    expected = sorted((k, d) for k, (_, _, ds) in enumerate(want) for d in ds)
    assert reached == expected, "%s: each (message, dest) must be reached once: %r" % (name, reached)
    for t in p["transfers"]:
        assert t["from"] in nodes and t["to"] in nodes, t
        assert t["start"] <= t["sender_free"] and t["arrival"] <= t["complete"], t
    latest = max(t["complete"] for t in p["transfers"])
    assert p["completion_time"] == latest, "%s: completion_time %r, latest complete %r" % (name, p["completion_time"], latest)
    assert 0 < p["lower_bound"] <= p["completion_time"], "%s: lower bound %r above completion %r" % (name, p["lower_bound"], p["completion_time"])
PY
}

for algo in fef ecf wr wrp; do
    run "pattern-$algo" plan --network "$subnets" --pattern "$pattern" --algo "$algo" --json
    [ "$rc" -eq 0 ] || fail "pattern-$algo: exit status $rc: $(cat "$tmp/pattern-$algo.err")"
    check_pattern_plan "pattern-$algo"
    python3 -c 'import json, sys; a = json.load(open(sys.argv[1]))["algorithm"]; sys.exit(a != sys.argv[2] and "algorithm %r" % a)' \
        "$tmp/pattern-$algo.out" "$algo" || fail "pattern-$algo: wrong algorithm name"
done

run pattern-all plan --network "$subnets" --pattern "$pattern" --algo all --json
[ "$rc" -eq 0 ] || fail "pattern-all: exit status $rc: $(cat "$tmp/pattern-all.err")"
check_pattern_plan pattern-all
run pattern-auto plan --network "$subnets" --pattern "$pattern" --algo auto --json
[ "$rc" -eq 0 ] || fail "pattern-auto: exit status $rc: $(cat "$tmp/pattern-auto.err")"
check_pattern_plan pattern-auto
python3 - "$tmp" >"$tmp/pattern-rank.py" 2>&1 <<'PY' || fail "pattern-all/auto: $(cat "$tmp/pattern-rank.py")"
import json, sys
tmp = sys.argv[1]
plans = json.load(open(tmp + "/pattern-all.out"))["plans"]
names = [p["algorithm"] for p in plans]
assert sorted(names) == ["ecf", "fef", "wr", "wrp"], names
times = [p["completion_time"] for p in plans]
assert times == sorted(times), "not sorted by completion: %r" % times
assert len({p["lower_bound"] for p in plans}) == 1, "one lower bound per pattern"
by = {p["algorithm"]: p["completion_time"] for p in plans}
assert by["wrp"] <= by["wr"], "wrp %r later than wr %r" % (by["wrp"], by["wr"])
for a in by:  # the single-algorithm runs report what `all` reports
    one = json.load(open("%s/pattern-%s.out" % (tmp, a)))
    assert one["completion_time"] == by[a], (a, one["completion_time"], by[a])
best = json.load(open(tmp + "/pattern-auto.out"))
assert best["algorithm"] == "auto:" + names[0], best["algorithm"]
assert best["completion_time"] == times[0], (best["completion_time"], times[0])
PY

run pattern-blocking plan --network "$subnets" --pattern "$pattern" --algo all --json --model blocking
[ "$rc" -eq 0 ] || fail "pattern-blocking: exit status $rc: $(cat "$tmp/pattern-blocking.err")"
check_pattern_plan pattern-blocking
grep -q '"model": "blocking"' "$tmp/pattern-blocking.out" || fail "pattern-blocking: model is not blocking"

run pattern-text plan --network "$subnets" --pattern "$pattern" --algo wrp
[ "$rc" -eq 0 ] || fail "pattern-text: exit status $rc: $(cat "$tmp/pattern-text.err")"
grep -q '^wrp: 3 messages, nonblocking model$' "$tmp/pattern-text.out" || fail "pattern-text: no title line: $(head -n 1 "$tmp/pattern-text.out")"
grep -q '^completion .*, lower bound ' "$tmp/pattern-text.out" || fail "pattern-text: no summary line"
# title + 3 messages + header + 15 transfers (7 + 4 + 4 dests) + summary
[ "$(wc -l <"$tmp/pattern-text.out")" -eq 21 ] || fail "pattern-text: expected 21 lines, got $(wc -l <"$tmp/pattern-text.out")"
run pattern-text-all plan --network "$subnets" --pattern "$pattern" --algo all
[ "$rc" -eq 0 ] || fail "pattern-text-all: exit status $rc: $(cat "$tmp/pattern-text-all.err")"
[ "$(wc -l <"$tmp/pattern-text-all.out")" -eq 5 ] || fail "pattern-text-all: expected a header and 4 algorithms: $(cat "$tmp/pattern-text-all.out")"

expect_usage_error pattern-with-root plan --network "$subnets" --pattern "$pattern" --algo wr --root a1
expect_usage_error pattern-with-dests plan --network "$subnets" --pattern "$pattern" --algo wr --dests a2
expect_usage_error pattern-with-size plan --network "$subnets" --pattern "$pattern" --algo wr --size 1MiB
grep -q -- '--pattern' "$tmp/pattern-with-size.err" || fail "pattern-with-size: error does not name --pattern: $(cat "$tmp/pattern-with-size.err")"
expect_usage_error pattern-unknown-algo plan --network "$subnets" --pattern "$pattern" --algo fnf
grep -q 'fef, ecf, wr, wrp' "$tmp/pattern-unknown-algo.err" || fail "pattern-unknown-algo: does not list the pattern algorithms: $(cat "$tmp/pattern-unknown-algo.err")"
expect_usage_error pattern-missing plan --network "$subnets" --pattern "$tmp/no-such-pattern.yaml" --algo wr
expect_usage_error pattern-bad-model plan --network "$subnets" --pattern "$pattern" --algo wr --model telepathy

# expect_pattern_error NAME CONTENT: a pattern file holding CONTENT fails with one line
# "[hetcast plan: ]FILE:LINE:COL: ..." on stderr.
expect_pattern_error() {
    local name=$1 file="$tmp/$1.yaml"
    printf '%s' "$2" >"$file"
    expect_usage_error "$name" plan --network "$subnets" --pattern "$file" --algo wrp
    local line
    line=$(head -n 1 "$tmp/$name.err")
    line=${line#hetcast plan: }
    case "$line" in
        "$file":[0-9]*:[0-9]*:*) ;;
        *) fail "$name: stderr does not start with '$file:LINE:COL:': $line" ;;
    esac
}
expect_pattern_error pattern-unknown-node $'- source: a1\n  size: 1\n  dests: [a2, zz]\n'
expect_pattern_error pattern-source-in-dests $'- {source: a1, size: 1, dests: [a2, a1]}\n'
expect_pattern_error pattern-bad-size $'- {source: a1, size: lots, dests: all}\n'
expect_pattern_error pattern-unknown-key $'- {source: a1, size: 1, dest: all}\n'
expect_pattern_error pattern-not-a-list $'source: a1\n'
expect_pattern_error pattern-syntax $'- {source: a1, size: 1, dests: [a2\n'
printf '[]\n' >"$tmp/pattern-empty.yaml"
expect_usage_error pattern-empty plan --network "$subnets" --pattern "$tmp/pattern-empty.yaml" --algo wr

if [ "$failures" -ne 0 ]; then
    echo "cli test: $failures check(s) failed"
    exit 1
fi
echo "cli test: all checks passed"
