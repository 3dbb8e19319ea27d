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

if [ "$failures" -ne 0 ]; then
    echo "cli test: $failures check(s) failed"
    exit 1
fi
echo "cli test: all checks passed"
