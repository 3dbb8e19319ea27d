#!/usr/bin/env bash
# hetcast-bench --write-map (its generated site maps) with hetcast plan, no root, a few seconds:
#  - the maps are capacities, not N x N matrices: 5000 hosts in under 1 MB;
#  - the loader derives the pair bandwidths as the generator does: pipeline plans the same
#    completion on a 60-host map written with and without --full-matrices;
#  - a 1000-host map plans with auto; a bad rate in it is reported at its file:line:column.
#   usage: bench_map_test.sh HETCAST_BENCH HETCAST
set -euo pipefail
[[ $# -eq 2 ]] || { echo "usage: $0 HETCAST_BENCH HETCAST" >&2; exit 2; }
bench=$1
hetcast=$2
tmp=$(mktemp -d "${TMPDIR:-/tmp}/hetcast-bench-map.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fail() { echo "bench map test: FAILED: $*" >&2; exit 1; }

"$bench" --write-map "$tmp/m5000.yaml" --hosts 5000
size=$(stat -c %s "$tmp/m5000.yaml")
[[ $size -lt 1000000 ]] || fail "the 5000-host map has $size bytes"
"$hetcast" plan --network "$tmp/m5000.yaml" --algo flat --size 1MiB > /dev/null || fail "the 5000-host map does not load"

"$bench" --write-map "$tmp/m60.yaml" --hosts 60
"$bench" --write-map "$tmp/f60.yaml" --hosts 60 --full-matrices
grep -q "^bandwidth:" "$tmp/f60.yaml" && ! grep -q "^bandwidth:" "$tmp/m60.yaml" || fail "--full-matrices: no difference"
compact=$("$hetcast" plan --network "$tmp/m60.yaml" --algo pipeline --size 1GiB | tail -n 1)
full=$("$hetcast" plan --network "$tmp/f60.yaml" --algo pipeline --size 1GiB | tail -n 1)
[[ $compact == "$full" ]] || fail "the compact map plans '$compact', the full one '$full'"

"$bench" --write-map "$tmp/m1000.yaml" --hosts 1000
out=$("$hetcast" plan --network "$tmp/m1000.yaml" --algo auto --size 1GiB | tail -n 1)
[[ $out == completion* ]] || fail "auto on 1000 hosts: $out"
line=$(grep -n "^  nic:" "$tmp/m1000.yaml" | cut -d: -f1)
sed -i "${line}s/nic: \[[^,]*,/nic: [fast,/" "$tmp/m1000.yaml"
rc=0
err=$("$hetcast" plan --network "$tmp/m1000.yaml" --algo auto 2>&1 >/dev/null) || rc=$?
[[ $rc -eq 2 && $err == "hetcast plan: $tmp/m1000.yaml:$line:9: capacity.nic[0]: "* ]] || fail "a bad rate (exit $rc): $err"
echo "bench map test: 5000 hosts in $size bytes; compact and full maps plan alike ($compact); errors at file:line"
