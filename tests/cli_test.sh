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
    t = json.load(open(sys.argv[1]))["plans"][0]["completion_time"]
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
expect_usage_error empty-dests plan --network "$eq1" --algo fnf --dests ,
expect_usage_error bad-model plan --network "$eq1" --algo fnf --model telepathy
expect_file_error nan-cost $'nodes: [a, b]\ncost:\n  - [0, .nan]\n  - [1, 0]\n'

# Single-source JSON: exactly the issue's keys. On eq. 2 (GUSTO) the optimum and the lower
# bound are both 296 (AMES→USC-ISI 39, then USC-ISI→IND 257), worked by hand in bhat_test.
gusto="$src_dir/conf/examples/bhat-eq2-gusto.yaml"
run json-one plan --network "$gusto" --algo optimal --model blocking --json
[ "$rc" -eq 0 ] || fail "json-one: exit status $rc: $(cat "$tmp/json-one.err")"
run json-all plan --network "$gusto" --algo all --model blocking --json
[ "$rc" -eq 0 ] || fail "json-all: exit status $rc: $(cat "$tmp/json-all.err")"
python3 - "$tmp" >"$tmp/json.py" 2>&1 <<'PY' || fail "json: $(cat "$tmp/json.py")"
import json, sys
tmp = sys.argv[1]
plan_keys = {"algorithm", "model", "root", "size", "completion_time", "lower_bound", "relay", "piece", "messages", "transfers"}
transfer_keys = {"message", "from", "to", "start", "sender_free", "arrival", "complete"}
def check(p):
    assert set(p) == plan_keys, sorted(p)
    assert p["model"] == "blocking" and p["root"] == "AMES" and p["size"] == 1048576, p
    assert p["lower_bound"] == 296, p["lower_bound"]
    for t in p["transfers"]:
        assert set(t) == transfer_keys, sorted(t)
        assert t["message"] == 0, t
    assert [(m["id"], m["source"], m["size"], sorted(m["dests"])) for m in p["messages"]] == \
        [(0, "AMES", 1048576, ["ANL", "IND", "USC-ISI"])], p["messages"]
    assert sorted(t["to"] for t in p["transfers"]) == ["ANL", "IND", "USC-ISI"], p["algorithm"]
    assert p["completion_time"] == max(t["complete"] for t in p["transfers"]), p["algorithm"]
doc = json.load(open(tmp + "/json-one.out"))
assert set(doc) == {"version", "command", "plans"} and doc["version"] == 1 and len(doc["plans"]) == 1, sorted(doc)
one = doc["plans"][0]
check(one)
assert one["algorithm"] == "optimal" and one["completion_time"] == 296, one
doc = json.load(open(tmp + "/json-all.out"))
assert set(doc) == {"version", "command", "plans"} and doc["command"] == "plan", sorted(doc)
for p in doc["plans"]:
    check(p)
names = [p["algorithm"] for p in doc["plans"]]
assert len(names) == len(set(names)), names
for a in ("flat", "binomial", "fnf", "fef", "ecef", "ecef-la", "ecef-relay", "optimal"):
    assert a in names, "%s missing from --algo all" % a
times = [p["completion_time"] for p in doc["plans"]]
assert times == sorted(times), "not sorted by completion: %r" % times
assert times[0] == 296, times
PY

# optimal refuses more than 10 participants by name; `all` leaves it out.
eleven="$tmp/eleven.yaml"
printf 'nodes: [a, b, c, d, e, f, g, h, i, j, k]\ncost: 1\n' >"$eleven"
expect_usage_error optimal-11 plan --network "$eleven" --algo optimal
grep -q 'at most 10' "$tmp/optimal-11.err" || fail "optimal-11: $(cat "$tmp/optimal-11.err")"
run optimal-11-all plan --network "$eleven" --algo all --json
[ "$rc" -eq 0 ] || fail "optimal-11-all: exit status $rc: $(cat "$tmp/optimal-11-all.err")"
python3 -c 'import json, sys; n = [p["algorithm"] for p in json.load(open(sys.argv[1]))["plans"]]; sys.exit("optimal" in n or "ecef" not in n)' \
    "$tmp/optimal-11-all.out" || fail "optimal-11-all: optimal listed or ecef missing"
run optimal-10 plan --network "$eleven" --algo optimal --dests b,c,d,e,f,g,h,i,j --model blocking --json
[ "$rc" -eq 0 ] || fail "optimal-10: exit status $rc: $(cat "$tmp/optimal-10.err")"
# Unit costs, 10 participants: the holders double each step, so ceil(log2 10) = 4.
python3 -c 'import json, sys; sys.exit(json.load(open(sys.argv[1]))["plans"][0]["completion_time"] != 4)' "$tmp/optimal-10.out" ||
    fail "optimal-10: completion is not 4"

# hetcast map: ECO's partition as {"tolerance", "subnets"}; bad input exits 2.
three="$src_dir/conf/examples/three-subnets.yaml"
run map-json map --network "$three" --json
[ "$rc" -eq 0 ] || fail "map-json: exit status $rc: $(cat "$tmp/map-json.err")"
python3 -c '
import json, sys
doc = json.load(open(sys.argv[1]))
want = {"version": 1, "command": "map", "tolerance": 0.2, "subnets": [["a1", "a2", "a3"], ["b1", "b2", "b3"], ["c1", "c2"]]}
sys.exit(doc != want and "got %r" % doc)
' "$tmp/map-json.out" 2>"$tmp/map-json.py" || fail "map-json: $(cat "$tmp/map-json.py")"
expect_usage_error map-tolerance map --network "$three" --tolerance -0.1
expect_usage_error map-tolerance-text map --network "$three" --tolerance lots
expect_usage_error map-missing map --network "$tmp/does-not-exist.yaml"
printf 'nodes: [a, b]\ncost:\n  - [0, 1]\n  - [-1, 0]\n' >"$tmp/map-bad.yaml"
expect_usage_error map-bad map --network "$tmp/map-bad.yaml"
grep -q "^hetcast map: $tmp/map-bad.yaml:4:" "$tmp/map-bad.err" || fail "map-bad: no file:line: $(cat "$tmp/map-bad.err")"

# Multi-source patterns: `hetcast plan --network FILE --pattern FILE --algo NAME`.
subnets="$src_dir/conf/examples/three-subnets.yaml"
pattern="$src_dir/conf/examples/three-subnets-pattern.yaml"

# check_pattern_plan NAME: $tmp/NAME.out is {"plans": [...]}, each plan one
# messages are the example pattern's and whose fields agree with its transfers.
check_pattern_plan() {
    python3 - "$tmp/$1.out" "$subnets" >"$tmp/$1.py" 2>&1 <<'PY' || fail "$1: $(cat "$tmp/$1.py")"
import json, sys
doc = json.load(open(sys.argv[1]))
plans = doc["plans"]
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

for algo in fef ecf wr wrp exchange; do
    run "pattern-$algo" plan --network "$subnets" --pattern "$pattern" --algo "$algo" --json
    [ "$rc" -eq 0 ] || fail "pattern-$algo: exit status $rc: $(cat "$tmp/pattern-$algo.err")"
    check_pattern_plan "pattern-$algo"
    python3 -c 'import json, sys; a = json.load(open(sys.argv[1]))["plans"][0]["algorithm"]; sys.exit(a != sys.argv[2] and "algorithm %r" % a)' \
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
assert sorted(names) == ["ecf", "exchange", "fef", "wr", "wrp"], names
times = [p["completion_time"] for p in plans]
assert times == sorted(times), "not sorted by completion: %r" % times
assert len({p["lower_bound"] for p in plans}) == 1, "one lower bound per pattern"
by = {p["algorithm"]: p["completion_time"] for p in plans}
assert by["wrp"] <= by["wr"], "wrp %r later than wr %r" % (by["wrp"], by["wr"])
for a in by:  # the single-algorithm runs report what `all` reports
    one = json.load(open("%s/pattern-%s.out" % (tmp, a)))["plans"][0]
    assert one["completion_time"] == by[a], (a, one["completion_time"], by[a])
best = json.load(open(tmp + "/pattern-auto.out"))["plans"][0]
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
[ "$(wc -l <"$tmp/pattern-text-all.out")" -eq 6 ] || fail "pattern-text-all: expected a header and 5 algorithms: $(cat "$tmp/pattern-text-all.out")"

expect_usage_error pattern-with-root plan --network "$subnets" --pattern "$pattern" --algo wr --root a1
expect_usage_error pattern-with-dests plan --network "$subnets" --pattern "$pattern" --algo wr --dests a2
expect_usage_error pattern-with-size plan --network "$subnets" --pattern "$pattern" --algo wr --size 1MiB
grep -q -- '--pattern' "$tmp/pattern-with-size.err" || fail "pattern-with-size: error does not name --pattern: $(cat "$tmp/pattern-with-size.err")"
expect_usage_error pattern-unknown-algo plan --network "$subnets" --pattern "$pattern" --algo fnf
grep -q 'fef, ecf, wr, wrp, exchange' "$tmp/pattern-unknown-algo.err" || fail "pattern-unknown-algo: does not list the pattern algorithms: $(cat "$tmp/pattern-unknown-algo.err")"
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

# --matching B and --degree d reach lcf-matching and lcf-degree (Khuller 5.1, 5.3): the
# inter-cluster transfers overlapping in time never exceed B in all, d_i into or out of cluster i.
khuller="$src_dir/conf/examples/khuller-clusters.yaml"
check_limits() {
    local name=$1 limits=$2
    shift 2
    run "$name" plan --network "$khuller" "$@" --json
    [ "$rc" -eq 0 ] || fail "$name: exit status $rc: $(cat "$tmp/$name.err")"
    python3 -c '
import json, sys
limits = json.loads(sys.argv[2])
cluster = lambda node: node.split("n")[0]
inter = [t for t in json.load(open(sys.argv[1]))["plans"][0]["transfers"] if cluster(t["from"]) != cluster(t["to"])]
def peak(ts):
    events = sorted([(t["start"], 1) for t in ts] + [(t["complete"], -1) for t in ts], key=lambda e: (e[0], e[1]))
    now = most = 0
    for _, d in events:
        now += d
        most = max(most, now)
    return most
if "total" in limits and peak(inter) > limits["total"]:
    sys.exit("%d inter-cluster transfers at once, limit %d" % (peak(inter), limits["total"]))
for c, d in enumerate(limits.get("per_cluster", [])):
    mine = [t for t in inter if "c%d" % c in (cluster(t["from"]), cluster(t["to"]))]
    if peak(mine) > d:
        sys.exit("cluster c%d: %d inter-cluster transfers at once, limit %d" % (c, peak(mine), d))
if not inter:
    sys.exit("no inter-cluster transfer")
' "$tmp/$name.out" "$limits" 2>"$tmp/$name.py" || fail "$name: $(cat "$tmp/$name.py")"
}
for b in 1 2 3; do
    check_limits "matching-$b" "{\"total\": $b}" --algo lcf-matching --matching "$b"
done
check_limits degree-1 '{"per_cluster": [1, 1, 1, 1, 1, 1, 1, 1, 1]}' --algo lcf-degree --degree 1
check_limits degree-list '{"per_cluster": [3, 2, 1, 1, 1, 1, 1, 1, 1]}' --algo lcf-degree --degree 3,2,1,1,1,1,1,1,1
# B = 1 enters the 8 other clusters one after the other: at least 8 C = 32; B = 3 overlaps them.
python3 -c '
import json, sys
one, three = (json.load(open(f))["plans"][0]["completion_time"] for f in sys.argv[1:])
sys.exit(0 if one >= 32 and three < 32 else "B = 1: %r, B = 3: %r" % (one, three))
' "$tmp/matching-1.out" "$tmp/matching-3.out" 2>"$tmp/matching.py" || fail "matching: $(cat "$tmp/matching.py")"
expect_usage_error matching-zero plan --network "$khuller" --algo lcf-matching --matching 0
expect_usage_error matching-list plan --network "$khuller" --algo lcf-matching --matching 1,2
expect_usage_error degree-count plan --network "$khuller" --algo lcf-degree --degree 1,2
grep -q '2 degrees given for 9 clusters' "$tmp/degree-count.err" || fail "degree-count: $(cat "$tmp/degree-count.err")"
expect_usage_error degree-text plan --network "$khuller" --algo lcf-degree --degree two
expect_usage_error degree-pattern plan --network "$subnets" --pattern "$pattern" --algo wr --degree 2

# hetcast probe: its options, and bad values refused before any daemon is asked.
run probe-help probe --help
[ "$rc" -eq 0 ] || fail "probe --help: exit status $rc"
for opt in --seconds --repeats --tolerance --reps --json; do
    grep -q -- "$opt" "$tmp/probe-help.out" || fail "probe --help does not mention $opt: $(cat "$tmp/probe-help.out")"
done
! grep -q -- '--sizes' "$tmp/probe-help.out" || fail "probe --help still offers --sizes"
expect_usage_error probe-seconds probe --seconds 0
expect_usage_error probe-repeats probe --repeats 0
expect_usage_error probe-tolerance probe --tolerance -1

# --version: the project version of CMakeLists.txt, plus the commit when built from a checkout.
version=$(sed -n 's/^project(hetcast VERSION \([0-9.]*\).*/\1/p' "$src_dir/CMakeLists.txt")
run version --version
[ "$rc" -eq 0 ] || fail "--version: exit status $rc"
grep -Eq "^hetcast $version( \(git [-.A-Za-z0-9_]+\))?\$" "$tmp/version.out" && [ "$(wc -l <"$tmp/version.out")" -eq 1 ] ||
    fail "--version: expected 'hetcast $version [(git COMMIT)]', got: $(cat "$tmp/version.out")"

# An unknown command: one line with the nearest command as a hint, exit 2.
expect_usage_error unknown-command psuh
grep -qx "hetcast: unknown command 'psuh' (did you mean 'push'?)" "$tmp/unknown-command.err" ||
    fail "unknown-command: $(cat "$tmp/unknown-command.err")"
expect_usage_error unknown-prefix stat --json
grep -q "did you mean 'status'?" "$tmp/unknown-prefix.err" || fail "unknown-prefix: $(cat "$tmp/unknown-prefix.err")"
expect_usage_error unknown-far frobnicate
grep -qx "hetcast: unknown command 'frobnicate' (see 'hetcast --help')" "$tmp/unknown-far.err" ||
    fail "unknown-far: $(cat "$tmp/unknown-far.err")"
expect_usage_error unknown-option --verbose
grep -q "unknown option '--verbose'" "$tmp/unknown-option.err" || fail "unknown-option: $(cat "$tmp/unknown-option.err")"

# Completion of node sets: members and @groups from the cluster file (no daemon answers on
# port 9), the last element of a list or after an operator.
printf 'name: a\nlisten: 127.0.0.1:9\nstate_dir: s\ndest_root: d\nidentity: i.pem\ncluster: c.yaml\n' > "$tmp/a.yaml"
printf 'members:\n  - {name: ws01, host: h, port: 1}\n  - {name: ws02, host: h, port: 2}\ngroups:\n  lab-b: "ws[01-02]"\n  gpu: ws02\n' > "$tmp/c.yaml"
completed() {
    (
        # shellcheck source=/dev/null
        source "$src_dir/completion/hetcast.bash"
        COMP_WORDS=("$hetcast" "$@")
        COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
        COMPREPLY=()
        _hetcast
        printf '%s\n' "${COMPREPLY[@]}" | LC_ALL=C sort | tr '\n' ' '
    )
}
[ "$(completed push f --config "$tmp/a.yaml" --to '@')" = "@* @gpu @lab-b " ] || fail "completion of --to @: $(completed push f --config "$tmp/a.yaml" --to '@')"
[ "$(completed push f --config "$tmp/a.yaml" -x 'ws01!w')" = "ws01!ws01 ws01!ws02 " ] || fail "completion after '!': $(completed push f --config "$tmp/a.yaml" -x 'ws01!w')"
[ "$(completed status --config "$tmp/a.yaml" -w 'ws02,@l')" = "ws02,@lab-b " ] || fail "completion of -w: $(completed status --config "$tmp/a.yaml" -w 'ws02,@l')"
[ "$(completed leave --config "$tmp/a.yaml" '')" = "@* @gpu @lab-b ws01 ws02 " ] || fail "completion of leave: $(completed leave --config "$tmp/a.yaml" '')"

if [ "$failures" -ne 0 ]; then
    echo "cli test: $failures check(s) failed"
    exit 1
fi
echo "cli test: all checks passed"
