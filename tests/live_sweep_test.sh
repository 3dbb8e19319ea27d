#!/usr/bin/env bash
# `hetcast sweep --live` on four loopback daemons with a map given by hand: every push
# lands, the CSV has one row per push with auto's pick, and the copies are the payloads.
set -euo pipefail
hetcastd=$1 hetcast=$2 src=$3
work=$(mktemp -d "${TMPDIR:-/tmp}/hetcast-live.XXXXXX")
. "$src/scripts/cluster.sh"
trap 'cluster_stop; rm -rf "$work"' EXIT
fail() { echo "live_sweep_test: $*" >&2; exit 1; }

for n in a1 a2 b1 b2; do
  mkdir -p "$work/$n/state"
  cat > "$work/$n/state/map.yaml" <<'MAP'
nodes: [a1, a2, b1, b2]
latency: 0.0001
bandwidth: 1e9
subnets: [[a1, a2], [b1, b2]]
capacity: {nic: 1Gbit, uplink: 200Mbit}
MAP
done
cluster_start "" a1 a2 b1 b2
"$hetcast" sweep --live --config "$work/a1/hetcastd.yaml" --algos auto,flat,lcf --sizes 256KiB,1MiB --repeat 2 \
  -o "$work/out" > "$work/stdout" 2> "$work/stderr" || { cat "$work/stderr"; fail "sweep --live failed"; }

csv="$work/out/live.csv"
[ "$(head -1 "$csv")" = "algorithm,size,run,achieved,predicted,lower_bound,chosen_by_auto,ok,error" ] || fail "CSV header: $(head -1 "$csv")"
[ "$(tail -n +2 "$csv" | wc -l)" -eq 12 ] || fail "expected 12 pushes in the CSV, got $(tail -n +2 "$csv" | wc -l)"
python3 - "$csv" <<'PY' || fail "CSV rows are wrong"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert all(r["ok"] == "1" for r in rows), [r for r in rows if r["ok"] != "1"]
assert all(float(r["achieved"]) > 0 and float(r["predicted"]) > 0 for r in rows)
assert all(float(r["lower_bound"]) <= float(r["predicted"]) * (1 + 1e-9) for r in rows)
assert all(r["chosen_by_auto"] for r in rows if r["algorithm"] == "auto")
assert not any(r["chosen_by_auto"] for r in rows if r["algorithm"] != "auto")
assert sorted({r["size"] for r in rows}) == ["1048576", "262144"]
PY
grep -q "measured winner" "$work/stdout" || fail "no winner line in the summary"
[ -f "$work/out/live-summary.txt" ] || fail "no live-summary.txt"
for n in a2 b1 b2; do
  cmp -s "$work/out/payload-1048576.bin" "$work/$n/files/payload-1048576.bin" || fail "$n's copy differs"
done
# Bad input: one line, exit 2, nothing pushed.
set +e
"$hetcast" sweep --live --config "$work/a1/hetcastd.yaml" --algos nosuch --sizes 1MiB -o "$work/bad" 2> "$work/err"
rc=$?
set -e
[ $rc -eq 2 ] || fail "unknown algorithm: exit $rc, not 2"
[ "$(wc -l < "$work/err")" -eq 1 ] || fail "unknown algorithm: not one line: $(cat "$work/err")"
echo "live sweep: 12 pushes, CSV and summary checked"
