#!/usr/bin/env bash
# The random topologies of 'netlab random' and bench-netlab's arguments (no root needed).
# 200 seeds: netlab's own parser accepts every file; 1..4 subnets, 2..20 hosts, subnet NICs
# 50..1000 Mbit/s (or the feasibility ceiling), uplinks 20..150, at least one odd host (a
# slower NIC or a slow send side) where there are two hosts, the receive rates within the
# emulation's cap; the file names its seed; one seed makes one file, different seeds differ,
# and over the 200 the extremes all occur. The command line: -o and stdout agree, bad
# arguments are one line with exit status 2 and write nothing; bench-netlab refuses bad
# --random, --seed0 and --queues lists with one line and exit status 2.
#   usage: netlab_random_test.sh SOURCE_DIR
set -euo pipefail

[[ $# -eq 1 ]] || { echo "usage: $0 SOURCE_DIR" >&2; exit 2; }
src=$(realpath "$1")
netlab=$src/scripts/netlab
tmp=$(mktemp -d "${TMPDIR:-/tmp}/hetcast-netlab-random.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fail() { echo "netlab random test: FAILED: $*" >&2; exit 1; }

py=python3
$py -c 'import yaml' 2>/dev/null || py=/usr/bin/python3
$py - "$src/scripts" "$tmp" <<'PY' || fail "the generated topologies (above)"
import importlib.machinery, importlib.util, os, sys
sys.dont_write_bytecode = True
scripts, tmp = sys.argv[1:3]
sys.path.insert(0, scripts)
loader = importlib.machinery.SourceFileLoader("netlab", os.path.join(scripts, "netlab"))
spec = importlib.util.spec_from_loader("netlab", loader)
netlab = importlib.util.module_from_spec(spec)
loader.exec_module(netlab)
import netlab_random as nr

M = 1_000_000
bad = []
bodies, nsubs, nhosts, nics, kinds, ceilings = set(), set(), set(), set(), set(), 0
for seed in range(200):
    text = nr.generate(seed)
    if nr.generate(seed) != text:
        bad.append(f"seed {seed}: two different files")
    if f"# seed: {seed}\n" not in text or f"name: random-{seed}\n" not in text:
        bad.append(f"seed {seed}: the file does not name its seed")
    path = os.path.join(tmp, f"{seed}.yaml")
    open(path, "w").write(text)
    try:
        t = netlab.load_topology(path)
    except netlab.Fail as e:
        bad.append(f"seed {seed}: netlab refuses it: {e}")
        continue
    subs, hosts = t["subnets"], t["hosts"]
    nsubs.add(len(subs))
    nhosts.add(len(hosts))
    if not 1 <= len(subs) <= 4 or not 2 <= len(hosts) <= 20:
        bad.append(f"seed {seed}: {len(subs)} subnets, {len(hosts)} hosts")
    for s in subs:
        if not 20 * M <= s["uplink"] <= 150 * M:
            bad.append(f"seed {seed}: uplink {s['name']} {s['uplink']}")
    drawn = nr.draw(seed)
    ceilings += drawn["ceiling"] is not None
    for s in drawn["subnets"]:
        nics.add(s["nic"])
        top = drawn["ceiling"] or 1000
        if not min(50, top) <= s["nic"] <= top:
            bad.append(f"seed {seed}: subnet {s['name']} NIC {s['nic']} Mbit/s")
        for h in s["hosts"]:
            if h["odd"] is None and (h["send"], h["recv"]) != (s["nic"], s["nic"]):
                bad.append(f"seed {seed}: {h['name']} differs from its subnet without being odd")
            if h["odd"] == "slow NIC" and not (h["send"] == h["recv"] < s["nic"]):
                bad.append(f"seed {seed}: {h['name']}, a slow NIC, is not slower")
            if h["odd"] == "slow sender" and not (h["send"] < h["recv"] == s["nic"]):
                bad.append(f"seed {seed}: {h['name']}, a slow sender, does not send slower")
            kinds.add(h["odd"])
    if not any(h["odd"] for s in drawn["subnets"] for h in s["hosts"]):
        bad.append(f"seed {seed}: no odd host")
    if drawn["subnets"][0]["hosts"][0]["odd"]:
        bad.append(f"seed {seed}: the first host (bench-netlab's source) is odd")
    if sum(h["recv"] for h in hosts) > nr.LOAD_CAP * M:
        bad.append(f"seed {seed}: receive rates add up to {sum(h['recv'] for h in hosts) / M:g} Mbit/s")
    if any(h["send"] < nr.RATE_MIN * M for h in hosts):
        bad.append(f"seed {seed}: a host below {nr.RATE_MIN} Mbit/s")
    bodies.add(text.split("name: ", 1)[1].split("\n", 1)[1])
if len(bodies) < 195:
    bad.append(f"only {len(bodies)} different topologies from 200 seeds")
if nsubs != {1, 2, 3, 4} or min(nhosts) != 2 or max(nhosts) != 20:
    bad.append(f"the ranges are not covered: subnets {sorted(nsubs)}, hosts {min(nhosts)}..{max(nhosts)}")
if min(nics) != 50 or 1000 not in nics or kinds != {None, "slow NIC", "slow sender"} or not ceilings:
    bad.append(f"not every kind occurs: NICs {sorted(nics)}, odd {sorted(map(str, kinds))}, {ceilings} capped")
for b in bad[:10]:
    print(b)
sys.exit(1 if bad else 0)
PY

# The command line: the file, stdout, one-line errors, nothing half-written.
"$netlab" random --seed 7 -o "$tmp/seven.yaml" || fail "netlab random --seed 7 -o FILE"
"$netlab" random --seed 7 > "$tmp/seven.out" || fail "netlab random --seed 7"
cmp -s "$tmp/seven.yaml" "$tmp/seven.out" || fail "-o FILE and stdout differ"
"$netlab" random --seed 8 | cmp -s - "$tmp/seven.out" && fail "seeds 7 and 8 give one file"
expect_error() {  # STATUS PATTERN CMD...: exit STATUS, one line on stderr matching PATTERN, nothing on stdout
    local want=$1 pattern=$2 rc=0
    shift 2
    "$@" > "$tmp/out" 2> "$tmp/err" || rc=$?
    [[ $rc -eq $want ]] || fail "$* exited $rc, not $want: $(cat "$tmp/err")"
    [[ $(wc -l < "$tmp/err") -eq 1 ]] || fail "$*: not one line: $(cat "$tmp/err")"
    grep -q -- "$pattern" "$tmp/err" || fail "$*: '$(cat "$tmp/err")' does not say '$pattern'"
    [[ ! -s "$tmp/out" ]] || fail "$*: wrote to stdout"
}
expect_error 2 "--seed N missing" "$netlab" random
expect_error 2 "--seed needs a value" "$netlab" random --seed
expect_error 2 "not 'x'" "$netlab" random --seed x
expect_error 2 "not '-3'" "$netlab" random --seed -3
expect_error 2 "unknown argument '--size'" "$netlab" random --seed 1 --size 3
expect_error 1 "cannot write $tmp/no/such/dir/t.yaml" "$netlab" random --seed 1 -o "$tmp/no/such/dir/t.yaml"
[[ ! -e "$tmp/no" ]] || fail "a failed -o left something"
[[ -z "$(find "$tmp" -name '*.tmp*')" ]] || fail "a temporary file was left"

bench=$src/scripts/bench-netlab
expect_error 2 "--random wants a number of seeds 1..1000, not '0'" "$bench" --random 0
expect_error 2 "not 'x'" "$bench" --random x
expect_error 2 "not '1001'" "$bench" --random 1001
expect_error 2 "--random needs a value" "$bench" --random
expect_error 2 "--seed0 goes with --random K" "$bench" --seed0 3 --compare
expect_error 2 "--seed0 wants a seed 0..999999999, not 'y'" "$bench" --random 2 --seed0 y
expect_error 2 "no topology files with it" "$bench" --random 2 "$src/conf/netlab/two-subnets.yaml"
expect_error 2 "--random does not go with --tree" "$bench" --random 2 --compare --tree
expect_error 2 "--queues: 'fast' is not realistic, fifo or fair" "$bench" --compare --queues realistic,fast
expect_error 2 "a list of --queues goes with --compare or --random" "$bench" --queues fifo,fair
expect_error 2 "--build-dir $tmp: no tools/hetcast" "$bench" --random 1 --build-dir "$tmp"
echo "netlab random test: passed"
