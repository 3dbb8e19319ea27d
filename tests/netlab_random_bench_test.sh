#!/usr/bin/env bash
# bench-netlab --random end to end (root only; exits 77, "skipped", without root, network
# namespaces or socat): one small seed (42: one subnet, a1 and a slow sender a2), 4 MiB,
# under two queue disciplines. The per-seed table has a row per discipline with the subnets
# right, auto's pick, auto × bound, auto / chain and chain × bound filled in and every copy verified; the
# side-by-side table has a column group per discipline; the summary line counts 2 rows;
# compare.json has a verified auto push and a verified socat chain; no lab is left behind.
#   usage: netlab_random_bench_test.sh HETCASTD HETCAST SOURCE_DIR
set -euo pipefail

[[ $# -eq 3 ]] || { echo "usage: $0 HETCASTD HETCAST SOURCE_DIR" >&2; exit 2; }
hetcastd=$(realpath "$1")
hetcast=$(realpath "$2")
src=$(realpath "$3")
test_name="netlab random bench test"
# shellcheck source=netlab_lib.sh
source "$(dirname "$0")/netlab_lib.sh"
command -v socat >/dev/null || { echo "$test_name: skipped: needs socat (scripts/deps)"; exit 77; }
build=$(dirname "$(dirname "$hetcastd")")
[[ "$build/tools/hetcast" -ef "$hetcast" ]] || { echo "$test_name: $hetcast is not $build/tools/hetcast" >&2; exit 2; }

tag=nrb$$-
tmp=$(mktemp -d "${TMPDIR:-/tmp}/hetcast-netlab-random-bench.XXXXXX")
chmod 755 "$tmp"
netlab_labs=("${tag}random-42")
netlab_cleanup "$src/scripts/netlab" "$tag" "$tmp"

"$src/scripts/bench-netlab" --random 1 --seed0 42 --sizes 4MiB --queues realistic,fifo --lab-prefix "$tag" \
    --build-dir "$build" -o "$tmp/out" > "$tmp/summary" 2> "$tmp/log" || { tail -20 "$tmp/log" >&2; fail "bench-netlab exited non-zero"; }

# | seed | queues | subnets × hosts | subnets right | pick | auto × bound | auto / chain | chain × bound | ... | verified |
rows=$(grep -E '^\| 42 \| ' "$tmp/summary" || true)
[[ $(wc -l <<< "$rows") -eq 2 ]] || fail "not one row per discipline: $rows"
while IFS='|' read -r _ _ queues shape right pick xb ac cb _ _ verified _; do
    [[ "$shape" == " 1 × 2 " ]] || fail "seed 42 is one subnet of two hosts, the table says '$shape'"
    [[ "$right" == " yes " ]] || fail "$queues: subnets right: '$right'"
    [[ "$pick" =~ ^\ [a-z] ]] || fail "$queues: no pick of auto: '$pick'"
    for x in "$xb" "$ac" "$cb"; do
        [[ "$x" =~ ^\ [0-9]+\.[0-9]{2}\ $ ]] || fail "$queues: auto × bound '$xb', auto / chain '$ac', chain × bound '$cb'"
    done
    [[ "$verified" == " yes " ]] || fail "$queues: not every copy verified"
done <<< "$rows"
grep -q '^| 42 | realistic |' <<< "$rows" && grep -q '^| 42 | fifo |' <<< "$rows" || fail "the disciplines: $rows"
grep -q '^summary: auto ≤ 1.10× the bound on [0-2] of 2; ' "$tmp/summary" || fail "no summary line of 2 rows"
grep -q '^| method | realistic: s | × bound | a/p | fifo: s | × bound | a/p |$' "$tmp/summary" ||
    fail "no side-by-side table of realistic and fifo"
for d in random-42-realistic random-42-fifo; do
    python3 - "$tmp/out/$d/compare.json" <<'PY' || fail "$d/compare.json"
import json, sys
rows = json.load(open(sys.argv[1]))["rows"]
auto = [r for r in rows if r["method"] == "auto"]
chain = [r for r in rows if r["method"] == "socat-chain"]
assert auto and all(r["ok"] and r["verified"] and r["predicted"] for r in auto), auto
assert chain and all(r["ok"] and r["verified"] for r in chain), chain
PY
done
cmp -s "$tmp/out/topologies/random-42.yaml" <("$src/scripts/netlab" random --seed 42) || fail "the topology is not seed 42's"
left=$(ip netns list | awk '{print $1}' | grep "^hcl-$tag" || true)
[[ -z "$left" ]] || fail "labs left behind: $left"
echo "$test_name: passed"
