#!/usr/bin/env bash
# Under load, healthy members never look down (issue 22, problem 5): 5 daemons on
# 127.0.0.1; 100 `hetcast status` at once, spread over them, while 10 pushes run. Every
# status must list 5 of 5 up, and every push must land without leaving anyone out ("did
# not answer"). Then a push throttled by --bwlimit far below chunk / stall_timeout: it
# completes, and meanwhile `status` sees its destination up, quickly.
#   usage: daemon_load_test.sh HETCASTD HETCAST
set -euo pipefail

hetcastd=$(realpath "$1")
hetcast=$(realpath "$2")
[[ -x $hetcastd && -x $hetcast ]] || { echo "usage: $0 HETCASTD HETCAST" >&2; exit 2; }

test_name="daemon load test"
daemon_config=()
source "$(dirname "$0")/daemons.sh"
daemon_config=("stall_timeout: 3" "down_after: 5" "limits: {max_jobs: 16}")

bg=()
stop_extra() { for p in "${bg[@]}"; do kill "$p" 2>/dev/null; done; }

new_ca "$tmp/keys"
c=$tmp/c5
names=(n0 n1 n2 n3 n4)
cluster "$c" "$tmp/keys" "" "${names[@]}"
for n in "${names[@]}"; do start "$c" "$n"; done
out=$("$hetcast" probe --config "$c/n0.yaml" --seconds 0.2 --repeats 1 --reps 3 --json) || fail "probe: $out"
head -c $((2 << 20)) /dev/urandom > "$tmp/payload.bin"
step "5 daemons up and probed"

# --- 100 statuses and 10 pushes at once ------------------------------------------------
started=$(now)
for i in $(seq 100); do
    timeout 120 "$hetcast" status --config "$c/n$((i % 5)).yaml" --json > "$tmp/status$i.json" 2> "$tmp/status$i.err" &
    bg+=($!)
done
for i in $(seq 10); do
    timeout 120 "$hetcast" push "$tmp/payload.bin" --config "$c/n$((i % 5)).yaml" --all --dest "p$i" --algo flat \
        --quiet > "$tmp/push$i.out" 2>&1 &
    bg+=($!)
done
failed=0
for p in "${bg[@]}"; do wait "$p" || failed=$((failed + 1)); done
bg=()
took=$(python3 -c "import sys; print('%.1f' % (float(sys.argv[2]) - float(sys.argv[1])))" "$started" "$(now)")
python3 - "$tmp" <<'PY' || fail "statuses under load (see above)"
import json, sys
tmp = sys.argv[1]
bad = []
for i in range(1, 101):
    try:
        s = json.load(open("%s/status%d.json" % (tmp, i)))
    except Exception as e:
        bad.append("status %d: %s %s" % (i, e, open("%s/status%d.err" % (tmp, i)).read()[:200]))
        continue
    down = [m["name"] + ": " + m.get("error", "?") for m in s["members"] if not m["up"]]
    if down:
        bad.append("status %d (asked %s): down: %s" % (i, s["asked"]["name"], "; ".join(down)))
for line in bad[:10]:
    print(line, file=sys.stderr)
sys.exit(1 if bad else 0)
PY
for i in $(seq 10); do
    if grep -q "did not answer\|FAILED" "$tmp/push$i.out"; then fail "push $i under load: $(cat "$tmp/push$i.out")"; fi
    for n in "${names[@]}"; do
        [[ $n == "n$((i % 5))" ]] && continue
        cmp -s "$tmp/payload.bin" "$c/$n/dest/p$i/payload.bin" || fail "push $i: no copy on $n: $(cat "$tmp/push$i.out")"
    done
done
[[ $failed -eq 0 ]] || fail "$failed of 110 commands under load failed"
step "100 statuses (5 of 5 up in each) and 10 pushes at once: all fine in $took s"

# --- a push throttled below chunk / stall_timeout --------------------------------------
# 1 MiB chunks at 128 KiB/s were one frame every 8 s, past the 3 s stall timeout; its
# destination's control messages waited behind them.
head -c $((1536 << 10)) /dev/urandom > "$tmp/slow.bin"
timeout 120 "$hetcast" push "$tmp/slow.bin" --config "$c/n0.yaml" --to n1 --bwlimit 128KiB/s --quiet \
    > "$tmp/slow.out" 2>&1 &
slow=$!
bg+=($slow)
asks=0
for _ in $(seq 100); do
    [[ -f $c/n1/dest/slow.bin ]] && break
    kill -0 "$slow" 2>/dev/null || break
    # Each status waits at most down_after (5 s) for n1; n1 must be up every time.
    out=$("$hetcast" status --config "$c/n0.yaml" --json) || fail "status during the throttled push: $out"
    python3 -c 'import json, sys; s = json.load(sys.stdin); assert all(m["up"] for m in s["members"]), s' <<< "$out" \
        || fail "status during the throttled push shows a member down: $out"
    asks=$((asks + 1))
    sleep 0.5
done
wait "$slow" || fail "the throttled push failed: $(cat "$tmp/slow.out")"
bg=()
cmp -s "$tmp/slow.bin" "$c/n1/dest/slow.bin" || fail "the throttled push's copy differs"
[[ $asks -ge 3 ]] || fail "only $asks statuses during the throttled push"
step "a push at 128 KiB/s with 1 MiB chunks and a 3 s stall timeout lands; $asks statuses meanwhile saw n1 up"
