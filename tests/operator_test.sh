#!/usr/bin/env bash
# The operator's machine runs no daemon: it has an identity and a copy of the cluster file,
# nothing else (no daemon config; HETCAST_CONFIG unset, then pointing nowhere). Daemons on
# 127.0.0.1 (free ports):
#  - status with neither a config nor a cluster file: one line naming both, exit 2;
#  - status through --cluster, through $HETCAST_CLUSTER, --from HOST:PORT, --from NAME;
#  - a bad cluster file: one line (file:line), exit 2; no member answering: exit 1;
#  - probe, then a push of a file that exists only in the operator's temporary folder
#    (outside every serve_root): it is streamed by the CLI into the member it talks to,
#    which forwards it as it arrives; every member's copy is byte for byte the file, with its
#    mode (the entry member lands its own); to others only, nothing lands at the entry; a
#    tree (push -r) and a file as one job, the same way;
#  - an upload stopped half-way, by Ctrl-C and by the CLI's death (SIGKILL): no temporary
#    left at the entry member (no .part file, no descriptor of an upload), nothing landed;
#  - the first member down: the next one in the file answers.
#   usage: operator_test.sh HETCASTD HETCAST
set -euo pipefail

hetcastd=$(realpath "$1")
hetcast=$(realpath "$2")
[[ -x $hetcastd && -x $hetcast ]] || { echo "usage: $0 HETCASTD HETCAST" >&2; exit 2; }

test_name="operator test"
op=$(mktemp -d "${TMPDIR:-/tmp}/hetcast-operator.XXXXXX")  # the operator's disk: no serve_root covers it
cli_pid=
stop_extra() {
    [[ -n $cli_pid ]] && kill -KILL "$cli_pid" 2>/dev/null
    rm -rf "$op"
}
source "$(dirname "$0")/daemons.sh"

new_ca "$tmp/keys"  # HETCAST_IDENTITY: the operator's identity
unset HETCAST_CONFIG HETCAST_CLUSTER
export HOME=$op XDG_CONFIG_HOME=$op/.config  # nothing of the user's own
[[ -e /etc/hetcast/hetcastd.yaml ]] && { echo "$test_name: skipped (this machine has /etc/hetcast/hetcastd.yaml)"; exit 0; }

c=$tmp/c
cluster "$c" "$tmp/keys" "" n0 n1 n2
for n in n0 n1 n2; do start "$c" "$n"; done
cp "$c/cluster.yaml" "$op/cluster.yaml"

# Runs hetcast ARGS..., keeping stdout in $out, stderr in $err and the status in $rc.
run() {
    rc=0
    "$hetcast" "$@" > "$tmp/out" 2> "$tmp/err" || rc=$?
    out=$(cat "$tmp/out")
    err=$(cat "$tmp/err")
}
one_line() { [[ $(wc -l < "$tmp/err") -eq 1 ]] || fail "$1: not one line on stderr: $err"; }

# --- finding a daemon without a local one ---------------------------------------------------
run status
[[ $rc -eq 2 ]] || fail "status with no config and no cluster file: exit $rc: $err"
one_line "status with nothing"
grep -q "no daemon config" <<< "$err" && grep -q -- "--cluster" <<< "$err" || fail "status with nothing: $err"

run status --cluster "$op/cluster.yaml"
[[ $rc -eq 0 ]] || fail "status --cluster: exit $rc: $err"
grep -q "3 of 3 up (asked 'n0')" <<< "$out" || fail "status --cluster: $out"
HETCAST_CLUSTER=$op/cluster.yaml run status
[[ $rc -eq 0 && $out == *"3 of 3 up (asked 'n0')"* ]] || fail "status with HETCAST_CLUSTER: exit $rc: $out $err"
HETCAST_CONFIG=$op/nowhere.yaml HETCAST_CLUSTER=$op/cluster.yaml run status
[[ $rc -eq 0 && $out == *"3 of 3 up"* ]] || fail "status with HETCAST_CONFIG pointing nowhere: exit $rc: $out $err"
run status --from "127.0.0.1:${port[n1]}"
[[ $rc -eq 0 && $out == *"3 of 3 up (asked 'n1')"* ]] || fail "status --from 127.0.0.1:${port[n1]}: exit $rc: $out $err"
run status --cluster "$op/cluster.yaml" --from n2
[[ $rc -eq 0 && $out == *"(asked 'n2')"* ]] || fail "status --cluster --from n2: exit $rc: $out $err"
step "status through --cluster, \$HETCAST_CLUSTER, --from HOST:PORT and --from NAME; nothing given: one line, exit 2"

printf 'members:\n  - {name: a, host: 127.0.0.1, port: 7700}\n  - {name: b, host: 127.0.0.1, port: 99999}\n' > "$op/bad.yaml"
run status --cluster "$op/bad.yaml"
[[ $rc -eq 2 ]] || fail "a bad cluster file: exit $rc: $err"
one_line "a bad cluster file"
grep -q "bad.yaml:3" <<< "$err" || fail "a bad cluster file, not file:line: $err"
read -r -a dead < <(free_ports 2)
printf 'members:\n  - {name: x0, host: 127.0.0.1, port: %s}\n  - {name: x1, host: 127.0.0.1, port: %s}\n' "${dead[@]}" > "$op/dead.yaml"
run status --cluster "$op/dead.yaml"
[[ $rc -eq 3 ]] || fail "no member answering: exit $rc (3: unreachable): $err"
one_line "no member answering"
grep -q "no member of .*dead.yaml answers" <<< "$err" || fail "no member answering: $err"
step "a bad cluster file: one line with file:line, exit 2; no member answering: one line, exit 3"

export HETCAST_CLUSTER=$op/cluster.yaml
run probe --seconds 0.1 --repeats 1 --reps 2
[[ $rc -eq 0 ]] || fail "probe through the cluster file: exit $rc: $err"

# --- a file on the operator's disk ----------------------------------------------------------
head -c $((8 << 20)) /dev/urandom > "$op/image.bin"
chmod 640 "$op/image.bin"
run push "$op/image.bin" --all --json
[[ $rc -eq 0 ]] || fail "push of the operator's file: exit $rc: $err $out"
for n in n0 n1 n2; do
    cmp -s "$op/image.bin" "$c/$n/dest/image.bin" || fail "$n's copy of image.bin differs or is missing"
    [[ $(stat -c %a "$c/$n/dest/image.bin") == 640 ]] || fail "$n's copy has mode $(stat -c %a "$c/$n/dest/image.bin")"
done
python3 -c '
import json, sys
r = json.loads(sys.argv[1])["reports"][0]
dests = sorted(o["dest"] for o in r["outcomes"] if o["ok"])
assert dests == ["n0", "n1", "n2"], r["outcomes"]
assert any(o["source"] == "operator" and o["dest"] == "n0" for o in r["outcomes"]), r["outcomes"]' "$out" \
    || fail "push report: $out"
[[ -z $(find "$c" -name '*.part' -o -name 'hetcast-upload*') ]] || fail "temporaries left: $(find "$c" -name '*.part' -o -name 'hetcast-upload*')"

head -c $((3 << 20)) /dev/urandom > "$op/other.bin"
run push "$op/other.bin" --to n1,n2
[[ $rc -eq 0 ]] || fail "push of the operator's file to n1,n2: exit $rc: $err"
for n in n1 n2; do cmp -s "$op/other.bin" "$c/$n/dest/other.bin" || fail "$n's copy of other.bin"; done
[[ ! -e $c/n0/dest/other.bin ]] || fail "n0, not a destination, landed other.bin"
# The entry member cannot write its own copy (a file where the folder goes): the others
# still get it through it, and it is named as failed.
echo in-the-way > "$c/n0/dest/blocked"
run push "$op/other.bin" --all --dest blocked
[[ $rc -eq 4 ]] || fail "push with n0's copy blocked: exit $rc (4: partly done): $err"
for n in n1 n2; do cmp -s "$op/other.bin" "$c/$n/dest/blocked/other.bin" || fail "$n's copy with n0's blocked"; done
grep -q "^hetcast push: n0 failed" <<< "$err" || fail "push with n0's copy blocked does not name n0: $err"
rm "$c/n0/dest/blocked"

# On a member (its config: a local daemon), the daemon reads the file, within its serve_roots;
# the refusal says how to stream it instead, and --upload does.
run push "$op/other.bin" --to n1 --dest m --config "$c/n0.yaml"
[[ $rc -eq 2 && $err == *serve_roots*--upload* ]] || fail "push outside serve_roots with a local daemon: exit $rc: $err"
run push "$op/other.bin" --to n1 --dest m --config "$c/n0.yaml" --upload
[[ $rc -eq 0 ]] && cmp -s "$op/other.bin" "$c/n1/dest/m/other.bin" || fail "push --upload with a local daemon: exit $rc: $err"
step "a file only on the operator's disk pushed to every member (the entry lands its own) and to others only, verified, mode kept; with a local daemon: serve_roots, or --upload"

# A directory tree and a loose file, one job: files, an empty directory, a symlink.
mkdir -p "$op/tree/sub" "$op/tree/empty"
head -c 300000 /dev/urandom > "$op/tree/sub/b.bin"
echo hello > "$op/tree/a.txt"
chmod 600 "$op/tree/a.txt"
ln -s a.txt "$op/tree/link"
run push -r "$op/tree" "$op/other.bin" --all --dest t
[[ $rc -eq 0 ]] || fail "push -r of the operator's tree: exit $rc: $err"
for n in n0 n1 n2; do
    diff -r --no-dereference "$op/tree" "$c/$n/dest/t/tree" > /dev/null || fail "$n's copy of the tree differs"
    cmp -s "$op/other.bin" "$c/$n/dest/t/other.bin" || fail "$n's t/other.bin"
    [[ -d $c/$n/dest/t/tree/empty && $(readlink "$c/$n/dest/t/tree/link") == a.txt ]] || fail "$n: no empty directory or link"
    [[ $(stat -c %a "$c/$n/dest/t/tree/a.txt") == 600 ]] || fail "$n: a.txt has mode $(stat -c %a "$c/$n/dest/t/tree/a.txt")"
done
run push -r "$op/tree" --to n1 --dest u
[[ $rc -eq 0 && -f $c/n1/dest/u/tree/sub/b.bin && ! -e $c/n0/dest/u ]] || fail "push -r to n1 only: exit $rc: $err"
[[ -z $(find "$c" -name '*.part' -o -name 'hetcast-upload*') ]] || fail "temporaries left: $(find "$c" -name '*.part' -o -name 'hetcast-upload*')"
step "a tree and a file from the operator's disk (push -r), one job, landed alike on every member"

# --- an upload stopped half-way ---------------------------------------------------------------
# The upload is paced by --bwlimit like any sender of the push: 24 MiB at 2 MiB/s.
head -c $((24 << 20)) /dev/urandom > "$op/big.bin"
upload_fds() { find "/proc/${pid[n0]}/fd" -lname '*hetcast-upload*' 2>/dev/null | wc -l; }
# n1 and n2 get bytes while the CLI still uploads: n0 forwards what is in (cut-through).
parts_growing() { [[ -n $(find "$c/n1/dest" "$c/n2/dest" -name '*.part' -size +0) ]]; }
# The entry member has the upload's nameless file and some of its bytes (the CLI is then known
# by its connection, not only by the timeout).
upload_open() {
    local f
    for f in $(find "/proc/${pid[n0]}/fd" -lname '*hetcast-upload*' 2>/dev/null); do
        [[ $(stat -L -c %s "$f" 2>/dev/null || echo 0) -gt 0 ]] && return 0
    done
    return 1
}
wait_for() {  # wait_for WHAT COMMAND...: up to 20 s for COMMAND to succeed
    local what=$1
    shift
    for _ in $(seq 200); do "$@" && return 0; sleep 0.1; done
    fail "$what"
}
nothing_left() { [[ $(upload_fds) -eq 0 && -z $(find "$c" -name '*.part') ]] && "$hetcast" jobs | grep -q '^no jobs'; }

"$hetcast" push "$op/big.bin" --all --bwlimit 2MiB/s --json > "$tmp/int.json" 2> "$tmp/int.err" &
cli_pid=$!
wait_for "the upload to n0 never got under way: $(cat "$tmp/int.err")" parts_growing
kill -0 "$cli_pid" 2>/dev/null || fail "the CLI ended before n0 forwarded anything: $(cat "$tmp/int.err")"
[[ $(find "$c/n0/dest" -name '*.part' -size -$((24 << 10))k | wc -l) -eq 1 ]] ||
    fail "n0 has all of big.bin before it forwards any of it: $(ls -l "$c/n0/dest")"
kill -INT "$cli_pid"
rc=0
wait "$cli_pid" || rc=$?
cli_pid=
[[ $rc -eq 130 ]] || fail "push after Ctrl-C exited $rc: $(cat "$tmp/int.err")"
wait_for "after Ctrl-C: left behind: $(find "$c" -name '*.part') ($(upload_fds) upload descriptors)" nothing_left
for n in n0 n1 n2; do [[ ! -e $c/$n/dest/big.bin ]] || fail "$n landed big.bin after Ctrl-C"; done

"$hetcast" push "$op/big.bin" --to n1,n2 --bwlimit 2MiB/s > /dev/null 2> "$tmp/kill.err" &
cli_pid=$!
wait_for "the upload to n0 (not a destination) never got under way: $(cat "$tmp/kill.err")" upload_open
kill -KILL "$cli_pid"
{ wait "$cli_pid"; } 2>/dev/null || true
cli_pid=
wait_for "after the CLI died: left behind: $(find "$c" -name '*.part') ($(upload_fds) upload descriptors)" nothing_left
for n in n1 n2; do [[ ! -e $c/$n/dest/big.bin ]] || fail "$n landed big.bin after the CLI died"; done
grep -q "closed before the upload was in" "$tmp/n0.log" || fail "n0 did not say the upload's connection closed"
step "an upload stopped half-way (Ctrl-C; the CLI killed): nothing landed, no temporary left at the entry member"

# --- another operator, revoked ------------------------------------------------------------
"$hetcast" keys issue alice --operator --dir "$tmp/keys" > /dev/null || fail "keys issue alice --operator"
HETCAST_IDENTITY=$tmp/keys/alice.pem run status
[[ $rc -eq 0 ]] || fail "status as the operator alice: exit $rc: $err"
HETCAST_IDENTITY=$tmp/keys/alice.pem run leave --operator alice --yes
[[ $rc -eq 2 && $err == *"cannot revoke its own identity"* ]] || fail "alice revoking herself: exit $rc: $err"
run leave --operator alice --yes
[[ $rc -eq 0 && $out == *"the operator identity 'alice' is revoked"* ]] || fail "leave --operator alice: exit $rc: $out $err"
for n in n0 n1 n2; do
    HETCAST_IDENTITY=$tmp/keys/alice.pem run status --from "$n"
    [[ $rc -eq 3 && $err == *"'alice' was revoked (by another operator)"* ]] || fail "alice after her revocation, at $n: exit $rc: $err"
done
run status
[[ $rc -eq 0 ]] || fail "status as the operator who revoked alice: exit $rc: $err"
step "leave --operator alice (asked by another operator; not by alice herself): every member refuses alice from then on"

# --- the first member down ----------------------------------------------------------------
stop n0
run status
[[ $rc -eq 4 && $out == *"(asked 'n1')"* ]] || fail "status with n0 down: exit $rc (4: members down): $out $err"
head -c $((1 << 20)) /dev/urandom > "$op/small.bin"
run push "$op/small.bin" --to n2
[[ $rc -eq 0 ]] && cmp -s "$op/small.bin" "$c/n2/dest/small.bin" || fail "push through n1 with n0 down: exit $rc: $err"
step "n0 down: the next member in the cluster file answers and takes the upload"
