#!/usr/bin/env bash
# The --json documents of every command (docs/json.md) validated against docs/schema with
# Python's jsonschema (tests/json_schema.py), from real output:
#  - docs/json.md and the schemas list the same fields (and the check fails when they do not);
#  - documents the schemas must reject are rejected (wrong version, a number job id, a field
#    nobody documented, a missing field);
#  - plan (one algorithm, all, a pattern) and map, on network files; node names that are not
#    UTF-8 come out as U+FFFD, exit 0;
#  - three daemons on 127.0.0.1, an emulated 4 MB/s network: status, probe, map show (the
#    same map as the probe's), push with one and with two algorithms (the same shape), a file
#    name in UTF-8 kept exactly (one that is not UTF-8: one line, no crash), jobs
#    and cancel while a push runs: the job id is the same string in jobs, cancel, the push's
#    report and the text of 'hetcast jobs';
#  - a member whose name is not UTF-8 in the cluster file (down): status --json exits 4 with U+FFFD;
#    a job id that is not UTF-8: one line, no internal error; wait of an ended push and
#    jobs --history valid.
#   usage: json_test.sh HETCASTD HETCAST SOURCE_DIR
set -euo pipefail

hetcastd=$(realpath "$1")
hetcast=$(realpath "$2")
src=$(realpath "$3")
[[ -x $hetcastd && -x $hetcast && -d $src/docs/schema ]] || { echo "usage: $0 HETCASTD HETCAST SOURCE_DIR" >&2; exit 2; }

test_name="json test"
source "$(dirname "$0")/daemons.sh"

schema() { python3 "$src/tests/json_schema.py" "$src/docs/schema" "$@"; }
# valid NAME FILE: FILE is a valid NAME document.
valid() { schema validate "$1" "$2" || fail "$1: $(head -c 2000 "$2")"; }
# field FILE EXPR: a Python expression over the document `d`, printed.
# Strings print as they are, anything else as Python's ascii() (U+FFFD as \ufffd).
field() {
    python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); v = eval(sys.argv[2]); print(v if isinstance(v, str) else ascii(v))' "$1" "$2"
}

# --- the page and the schemas -------------------------------------------------------------
schema docs "$src/docs/json.md" || fail "docs/json.md and docs/schema disagree"
grep -v '^| `reports` |' "$src/docs/json.md" > "$tmp/missing.md"
schema docs "$tmp/missing.md" 2> "$tmp/docs.err" && fail "a field missing from json.md went unnoticed"
grep -q "'reports' is in the schema but not documented" "$tmp/docs.err" || fail "docs check: $(cat "$tmp/docs.err")"
sed 's/^| `map_age` |/| `map_age` | number | x |\n| `uptime` |/' "$src/docs/json.md" > "$tmp/extra.md"
schema docs "$tmp/extra.md" 2> "$tmp/docs.err" && fail "a field json.md lists but no schema has went unnoticed"
grep -q "'uptime' is documented but not in the schema" "$tmp/docs.err" || fail "docs check: $(cat "$tmp/docs.err")"
step "docs/json.md and docs/schema list the same fields; a missing or an extra row is caught"

# --- plan and map on network files --------------------------------------------------------
ex=$src/conf/examples
"$hetcast" plan --network "$ex/bhat-eq1.yaml" --algo fnf --json > "$tmp/plan-one.json" || fail "plan --algo fnf"
"$hetcast" plan --network "$ex/bhat-eq1.yaml" --algo all --json > "$tmp/plan-all.json" || fail "plan --algo all"
"$hetcast" plan --network "$ex/three-subnets.yaml" --pattern "$ex/three-subnets-pattern.yaml" --algo all --json \
    > "$tmp/plan-pattern.json" || fail "plan --pattern"
"$hetcast" map --network "$ex/three-subnets.yaml" --json > "$tmp/map.json" || fail "map --json"
for f in plan-one plan-all plan-pattern; do valid plan "$tmp/$f.json"; done
valid map "$tmp/map.json"
[[ $(field "$tmp/plan-one.json" 'len(d["plans"])') == 1 ]] || fail "plan --algo fnf: not one plan"
[[ $(field "$tmp/plan-all.json" 'len(d["plans"])') -gt 3 ]] || fail "plan --algo all: too few plans"
[[ $(field "$tmp/plan-one.json" 'all(t["message"] == 0 for t in d["plans"][0]["transfers"]) and d["plans"][0]["messages"][0]["source"] == d["plans"][0]["root"]') == True ]] ||
    fail "plan --algo fnf: transfers do not refer to its one message"
step "plan (one algorithm, all, a pattern) and map: valid"

# Documents the schemas must reject, made from valid ones.
python3 - "$tmp" <<'PY'
import json, sys
tmp = sys.argv[1]
good = json.load(open(tmp + "/plan-one.json"))
def write(name, d):
    json.dump(d, open("%s/bad-%s.json" % (tmp, name), "w"))
write("version", dict(good, version=2))
write("command", dict(good, command="push"))
write("extra", dict(good, elapsed=1.0))
write("nested", dict(good, plans=[dict(good["plans"][0], colour="red")]))
write("missing", {k: v for k, v in good.items() if k != "version"})
write("empty", dict(good, plans=[]))
report = {"job": 42, "algorithm": "flat", "model": "nonblocking", "bytes": 1, "predicted": 1, "predicted_one_per_link": 1,
          "achieved": 1, "lower_bound": 1, "ratio": 1, "ok": True, "relay": "store-and-forward", "piece": 0,
          "throughput_bound": 0, "candidates": [], "skipped": [], "failed_members": [], "attempts": 1, "outcomes": [],
          "hops": []}
json.dump({"version": 1, "command": "push", "ok": True, "reports": [dict(report, job="42")]}, open(tmp + "/push-good.json", "w"))
write("push-job", {"version": 1, "command": "push", "ok": True, "reports": [report]})
write("push-bare", dict(report, job="42"))
PY
valid push "$tmp/push-good.json"
for b in version command extra nested missing empty; do schema reject plan "$tmp/bad-$b.json" || fail "plan schema: bad-$b"; done
for b in push-job push-bare; do schema reject push "$tmp/bad-$b.json" || fail "push schema: bad-$b"; done
schema validate plan "$tmp/bad-version.json" 2> /dev/null && fail "validate accepted a wrong version"
step "wrong documents rejected (version, command, unknown fields, a missing field, a number job id, a bare report)"

# Node names that are not UTF-8: U+FFFD in the output, exit 0.
printf 'nodes: [a, "b\xff", "c\xc3"]\nlatency: 0.001\nbandwidth: 1e8\n' > "$tmp/latin.yaml"
"$hetcast" plan --network "$tmp/latin.yaml" --algo flat --json > "$tmp/latin-plan.json" 2> "$tmp/latin.err" ||
    fail "plan with non-UTF-8 names exited $?: $(cat "$tmp/latin.err")"
"$hetcast" map --network "$tmp/latin.yaml" --json > "$tmp/latin-map.json" 2> "$tmp/latin.err" ||
    fail "map with non-UTF-8 names exited $?: $(cat "$tmp/latin.err")"
valid plan "$tmp/latin-plan.json"
valid map "$tmp/latin-map.json"
[[ $(field "$tmp/latin-plan.json" 'sorted(d["plans"][0]["messages"][0]["dests"])') == "['b\ufffd', 'c\ufffd']" ]] ||
    fail "non-UTF-8 names: $(cat "$tmp/latin-plan.json")"
[[ $(field "$tmp/latin-map.json" 'sorted(sum(d["subnets"], []))') == "['a', 'b\ufffd', 'c\ufffd']" ]] ||
    fail "non-UTF-8 names in map: $(cat "$tmp/latin-map.json")"
step "node names that are not UTF-8: U+FFFD, exit 0"

# --- three daemons --------------------------------------------------------------------------
new_ca "$tmp/keys"
k=$tmp/k
mkdir -p "$k"
cat > "$k/profile.yaml" <<'EOF'
nodes: [k0, k1, k2]
latency: 0.001
bandwidth: 4.0e+06
EOF
cluster "$k" "$tmp/keys" "$k/profile.yaml" k0 k1 k2
for n in k0 k1 k2; do start "$k" "$n"; done
cfg=$k/k0.yaml

"$hetcast" status --config "$cfg" --json > "$tmp/status.json" || fail "status --json"
valid status "$tmp/status.json"
[[ $(field "$tmp/status.json" '[d["asked"]["name"], [m["name"] for m in d["members"] if m["up"]]]') == "['k0', ['k0', 'k1', 'k2']]" ]] ||
    fail "status: $(cat "$tmp/status.json")"

"$hetcast" probe --config "$cfg" --seconds 0.2 --repeats 1 --reps 3 --json > "$tmp/probe.json" 2> "$tmp/probe.err" ||
    fail "probe --json: $(cat "$tmp/probe.err")"
valid probe "$tmp/probe.json"
"$hetcast" map show --config "$cfg" --from k2 --json > "$tmp/map-show.json" || fail "map show --json"
valid map-show "$tmp/map-show.json"
python3 -c '
import json, sys
p, m = (json.load(open(f)) for f in sys.argv[1:])
assert p["map"] == m["map"], (p["map"], m["map"])
assert p["map"]["nodes"] == ["k0", "k1", "k2"] and p["map"]["measured_at"], p["map"]
assert sorted(sum(p["map"]["subnets"], [])) == ["k0", "k1", "k2"] and p["pairs"] == 3, p' "$tmp/probe.json" "$tmp/map-show.json" ||
    fail "probe and map show differ: $(cat "$tmp/probe.json" "$tmp/map-show.json")"
rc=0
"$hetcast" map show --config "$cfg" --dot --json > /dev/null 2> "$tmp/usage.err" || rc=$?
[[ $rc -eq 2 && $(wc -l < "$tmp/usage.err") -eq 1 ]] || fail "map show --dot --json: exit $rc: $(cat "$tmp/usage.err")"
step "status, probe, map show: valid; map show's map is the probe's"

head -c $((256 << 10)) /dev/urandom > "$tmp/small.bin"
"$hetcast" push "$tmp/small.bin" --config "$cfg" --to k1,k2 --algo flat --json > "$tmp/push-one.json" || fail "push --algo flat"
"$hetcast" push "$tmp/small.bin" --config "$cfg" --to k1,k2 --algo flat,binomial --json > "$tmp/push-two.json" ||
    fail "push --algo flat,binomial"
valid push "$tmp/push-one.json"
valid push "$tmp/push-two.json"
[[ $(field "$tmp/push-one.json" '[d["ok"], [r["algorithm"] for r in d["reports"]]]') == "[True, ['flat']]" ]] ||
    fail "push with one algorithm: $(cat "$tmp/push-one.json")"
[[ $(field "$tmp/push-two.json" '[d["ok"], [r["algorithm"] for r in d["reports"]]]') == "[True, ['flat', 'binomial']]" ]] ||
    fail "push with two algorithms: $(cat "$tmp/push-two.json")"
step "push with one and with two algorithms: the same shape, valid"

# File names: one in UTF-8 comes back exactly in reports[].file; one that is not UTF-8
# lands under its own bytes, and the report names it with U+FFFD (valid JSON, exit 0).
cp "$tmp/small.bin" "$tmp/café ü.bin"
"$hetcast" push "$tmp/café ü.bin" --config "$cfg" --to k1 --algo flat --json > "$tmp/push-utf8.json" || fail "push of 'café ü.bin'"
valid push "$tmp/push-utf8.json"
[[ $(field "$tmp/push-utf8.json" 'd["reports"][0]["file"]') == "$tmp/café ü.bin" ]] || fail "push-utf8: $(cat "$tmp/push-utf8.json")"
cmp -s "$tmp/small.bin" "$k/k1/dest/café ü.bin" || fail "k1's copy of 'café ü.bin'"
cp "$tmp/small.bin" "$tmp/caf"$'\xe9'".bin"
"$hetcast" push "$tmp/caf"$'\xe9'".bin" --config "$cfg" --to k1 --algo flat --json > "$tmp/push-latin.json" 2> "$tmp/push-latin.err" ||
    fail "push of a non-UTF-8 file name: $(cat "$tmp/push-latin.err")"
valid push "$tmp/push-latin.json"
[[ $(field "$tmp/push-latin.json" 'd["reports"][0]["file"]') == "$tmp/caf"$'\xef\xbf\xbd'".bin" ]] ||
    fail "push-latin: the report's file: $(cat "$tmp/push-latin.json")"
cmp -s "$tmp/small.bin" "$k/k1/dest/caf"$'\xe9'".bin" || fail "k1's copy of the Latin-1 name: $(ls "$k/k1/dest")"
step "file names: UTF-8 kept exactly in reports[].file; not UTF-8: lands under its own bytes, U+FFFD in the report"

# A push that runs long enough (16 MiB at 4 MB/s) to be listed and cancelled.
head -c $((16 << 20)) /dev/urandom > "$tmp/big.bin"
"$hetcast" push "$tmp/big.bin" --config "$cfg" --to k1,k2 --algo flat --json > "$tmp/push-big.json" 2> "$tmp/push-big.err" &
push_pid=$!
job=""
for _ in $(seq 200); do
    if "$hetcast" jobs --config "$cfg" --json > "$tmp/jobs.json" 2> /dev/null; then
        job=$(field "$tmp/jobs.json" '" ".join(j["job"] for j in d["jobs"] if j["role"] == "coordinator" and j["state"] == "running")')
        [[ -n $job ]] && break
    fi
    kill -0 "$push_pid" 2> /dev/null || break
    sleep 0.05
done
[[ -n $job ]] || fail "hetcast jobs never listed the push: $(cat "$tmp/jobs.json" "$tmp/push-big.err")"
valid jobs "$tmp/jobs.json"
"$hetcast" jobs --config "$cfg" > "$tmp/jobs.txt" || fail "hetcast jobs"
grep -q "^$job " "$tmp/jobs.txt" || fail "job $job not in the text of hetcast jobs: $(cat "$tmp/jobs.txt")"
"$hetcast" cancel "$job" --config "$cfg" --json > "$tmp/cancel.json" || fail "cancel $job --json"
valid cancel "$tmp/cancel.json"
[[ $(field "$tmp/cancel.json" '[d["job"], d["member"]]') == "['$job', 'k0']" ]] || fail "cancel: $(cat "$tmp/cancel.json")"
rc=0
wait "$push_pid" || rc=$?
[[ $rc -eq 1 ]] || fail "the cancelled push exited $rc: $(cat "$tmp/push-big.err")"
valid push "$tmp/push-big.json"
[[ $(field "$tmp/push-big.json" '[d["ok"], d["reports"][0]["job"]]') == "[False, '$job']" ]] ||
    fail "the cancelled push's report does not carry job $job as a string: $(head -c 1000 "$tmp/push-big.json")"
step "jobs, cancel, the cancelled push (exit 1, ok false): valid; job $job the same string in all and in 'hetcast jobs'"
rc=0
"$hetcast" wait "$job" --config "$cfg" --json > "$tmp/wait.json" 2> /dev/null || rc=$?
[[ $rc -eq 1 ]] || fail "wait of the cancelled push exited $rc"
valid wait "$tmp/wait.json"
[[ $(field "$tmp/wait.json" '[d["ok"], d["reports"][0]["job"]]') == "[False, '$job']" ]] || fail "wait of job $job: $(field "$tmp/wait.json" '[d["ok"], d["reports"][0]["job"]]')"
"$hetcast" jobs --history --config "$cfg" --json > "$tmp/history.json" || fail "jobs --history --json"
valid jobs-history "$tmp/history.json"
[[ $(field "$tmp/history.json" '[j["outcome"] for j in d["jobs"] if j["job"] == "'"$job"'"]') == "['cancelled']" ]] ||
    fail "jobs --history: $(head -c 2000 "$tmp/history.json")"
step "wait of the cancelled push and jobs --history: valid, the job 'cancelled'"

rc=0
"$hetcast" cancel $'1\xff' --config "$cfg" --json > "$tmp/cancel-bad.out" 2> "$tmp/cancel-bad.err" || rc=$?
[[ $rc -ne 0 && $(wc -l < "$tmp/cancel-bad.err") -eq 1 && ! -s $tmp/cancel-bad.out ]] ||
    fail "cancel of a non-UTF-8 id: exit $rc: $(cat "$tmp/cancel-bad.err" "$tmp/cancel-bad.out")"
grep -q "internal error" "$tmp/cancel-bad.err" && fail "cancel of a non-UTF-8 id: $(cat "$tmp/cancel-bad.err")"

# A member whose name is not UTF-8 (down: no daemon has that identity).
stop k0
read -r spare < <(free_ports 1)
printf '  - {name: "z\xff", host: 127.0.0.1, port: %s}\n' "$spare" >> "$k/cluster.yaml"
start "$k" k0
rc=0
"$hetcast" status --config "$cfg" --json > "$tmp/status-latin.json" 2> "$tmp/status-latin.err" || rc=$?
[[ $rc -eq 4 ]] || fail "status with a non-UTF-8 member (down) exited $rc, expected 4: $(cat "$tmp/status-latin.err")"
valid status "$tmp/status-latin.json"
[[ $(field "$tmp/status-latin.json" '[(m["name"], m["up"]) for m in d["members"]][-1]') == "('z\ufffd', False)" ]] ||
    fail "status with a non-UTF-8 member: $(cat "$tmp/status-latin.json")"
step "a member name that is not UTF-8 (down): status --json exits 4 with U+FFFD; a bad job id: one line"
step "passed"
