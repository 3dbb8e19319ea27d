#!/usr/bin/env bash
# Integration test of `hetcast push -r` between real hetcastd daemons on 127.0.0.1:
#  - a tree with modes 0600/0755/0644/0700, an executable, empty files, an empty directory,
#    nested directories, a symlink inside it and one pointing out of it, several MB of data;
#    pushed as one job to 3 members with a cut-through algorithm (chain) and a
#    store-and-forward one (ecef); the landed trees are listed with `find -printf` (type,
#    mode, mtime, size, link target) and compared with the source, file contents byte for
#    byte; no temporary file is left;
#  - the report (JSON and text) counts files, directories, links and bytes;
#  - --no-preserve: modes less the umask, mtimes the landing time;
#  - a single file keeps its mode and mtime;
#  - a name collision (two sources landing at one path) and a directory without -r: exit
#    2 with one line, nothing lands;
#  - a destination where a directory is in the way of a file: that member fails naming the
#    path, the other entries land;
#  - a restarted daemon removes a stale bundle and a stale link temporary;
#  - the largest manifest allowed travels, from a member's disk and uploaded; one larger is
#    refused at the source with one line; so is an upload in more pieces than its plan carries.
#   usage: daemon_tree_test.sh HETCASTD HETCAST
set -euo pipefail

hetcastd=$(realpath "$1")
hetcast=$(realpath "$2")
[[ -x $hetcastd && -x $hetcast ]] || { echo "usage: $0 HETCASTD HETCAST" >&2; exit 2; }

test_name="daemon tree test"
daemon_config=()
source "$(dirname "$0")/daemons.sh"

# Every entry under DIR, relative, with type, mode, mtime (ns), size of files and link targets.
tree_listing() {
    (cd "$1" && find . -mindepth 1 -not -name '*.hetcast-*.part' \
        -printf '%P %y %m %T@ %s %l\n' | awk '$2 == "d" { $5 = "-" } { print }' | sort)
}
modes_only() { (cd "$1" && find . -mindepth 1 -printf '%P %y %m %l\n' | sort); }
no_temporaries() {
    local left
    left=$(find "$@" -name '*.hetcast-*.part' 2>/dev/null || true)
    [[ -z $left ]] || fail "temporaries left: $left"
}

new_ca "$tmp/keys"
c=$tmp/c
names=(t0 t1 t2 t3)
cluster "$c" "$tmp/keys" "" "${names[@]}"
for n in "${names[@]}"; do start "$c" "$n"; done
"$hetcast" probe --config "$c/t0.yaml" --seconds 0.2 --repeats 1 --reps 3 > /dev/null || fail "probe failed"
step "4 daemons up and probed"

# The source tree.
src=$tmp/src/proj
mkdir -p "$src/bin" "$src/empty-dir" "$src/a/b/c/d/e" "$src/secret"
head -c $((3 << 20)) /dev/urandom > "$src/big.bin"
head -c $((1 << 20)) /dev/urandom > "$src/a/b/c/d/e/deep.bin"
printf '#!/bin/sh\necho hi\n' > "$src/bin/run.sh"
echo "key" > "$src/secret/id"
: > "$src/empty.txt"
: > "$src/a/empty"
for i in $(seq 40); do echo "file $i" > "$src/a/b/f$i.txt"; done
ln -s ../big.bin "$src/bin/big-link"
ln -s /etc/passwd "$src/outside"
# Names are bytes: one in Latin-1 (not UTF-8), a link to it, must land as they are.
echo "latin" > "$src/caf"$'\xe9'".txt"
ln -s "caf"$'\xe9'".txt" "$src/a/l"$'\xe9'
chmod 0755 "$src/bin/run.sh"
chmod 0600 "$src/secret/id" "$src/big.bin"
chmod 0700 "$src/secret"
chmod 0644 "$src/empty.txt"
chmod 0640 "$src/a/b/f7.txt"
chmod 0750 "$src/a/b/c"
touch -h -d '2001-02-03 04:05:06.123456789' "$src/outside"
touch -d '2010-01-01 00:00:00.5' "$src/big.bin" "$src/empty-dir" "$src/a/b/c" "$src"
touch -d '1999-12-31 23:59:59' "$src/secret/id" "$src/secret"
want=$(tree_listing "$tmp/src")

# -r with a cut-through plan, then store and forward, each into its own folder.
for algo in chain ecef; do
    rc=0
    "$hetcast" push -r "$src" --config "$c/t0.yaml" --all --algo "$algo" --piece 256KiB --dest "$algo" --json \
        > "$tmp/$algo.json" 2> "$tmp/$algo.err" || rc=$?
    [[ $rc -eq 0 ]] || fail "push -r with $algo exited $rc: $(cat "$tmp/$algo.err")"
    python3 - "$tmp/$algo.json" "$src" <<'PY' || fail "report of push -r with $algo: $(cat "$tmp/$algo.json")"
import json, os, sys
r = json.load(open(sys.argv[1]))
r = r["reports"][0] if "reports" in r else r
assert r["ok"] is True and len(r["outcomes"]) == 3, r
files = dirs = links = size = 0
for top, ds, fs in os.walk(sys.argv[2]):
    for f in fs:
        p = os.path.join(top, f)
        if os.path.islink(p):
            links += 1
        else:
            files += 1
            size += os.path.getsize(p)
    links += sum(os.path.islink(os.path.join(top, d)) for d in ds)
    dirs += 1
t = r["tree"]
assert (t["files"], t["dirs"], t["links"]) == (files, dirs, links) == (47, 9, 3), (t, files, dirs, links)
assert t["bytes"] == r["bytes"] == size, (t, r["bytes"], size)
PY
    for n in t1 t2 t3; do
        got=$(tree_listing "$c/$n/dest/$algo")
        [[ "$got" == "$want" ]] || fail "$algo: the tree on $n differs: $(diff <(echo "$want") <(echo "$got"))"
        diff -r --no-dereference "$tmp/src" "$c/$n/dest/$algo" > /dev/null || fail "$algo: contents differ on $n"
        [[ $(readlink "$c/$n/dest/$algo/proj/outside") == /etc/passwd ]] || fail "$algo: the outside link on $n"
    done
    no_temporaries "$c"
done
step "push -r (chain, cut-through; ecef, store and forward) to 3: types, modes, mtimes, links, contents as the source"

# --no-preserve: the umask (022) applies, mtimes are the landing time.
before=$(date +%s)
"$hetcast" push -r "$src" --config "$c/t0.yaml" --to t1 --algo flat --dest plain --no-preserve --quiet > "$tmp/plain.out" \
    || fail "push -r --no-preserve failed"
grep -qx "tree: 47 files, 9 directories, 3 links, $(cat "$src"/big.bin "$src"/a/b/c/d/e/deep.bin "$src"/bin/run.sh \
    "$src"/secret/id "$src"/a/b/f*.txt "$src"/caf*.txt | wc -c) bytes" "$tmp/plain.out" || fail "the text report: $(cat "$tmp/plain.out")"
[[ $(stat -c %a "$c/t1/dest/plain/proj/secret/id") == 600 ]] || fail "--no-preserve: secret/id"
[[ $(stat -c %a "$c/t1/dest/plain/proj/a/b/f7.txt") == 640 ]] || fail "--no-preserve: f7.txt"
[[ $(stat -c %a "$c/t1/dest/plain/proj/bin/run.sh") == 755 ]] || fail "--no-preserve: run.sh"
[[ $(stat -c %Y "$c/t1/dest/plain/proj/big.bin") -ge $before ]] || fail "--no-preserve: big.bin kept its mtime"
[[ $(stat -c %Y "$c/t1/dest/plain/proj/secret") -ge $before ]] || fail "--no-preserve: secret kept its mtime"
step "--no-preserve: modes less the umask, mtimes of the landing"

# A single file keeps its mode and mtime; several files are one job.
"$hetcast" push "$src/secret/id" "$src/bin/run.sh" --config "$c/t0.yaml" --to t2 --algo flat --dest files --json \
    > "$tmp/files.json" || fail "push of two files failed"
python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); r=r["reports"][0] if "reports" in r else r; assert r["tree"]["files"] == 2, r' \
    "$tmp/files.json" || fail "two files are not one job: $(cat "$tmp/files.json")"
[[ $(stat -c '%a %.9Y' "$c/t2/dest/files/id") == "$(stat -c '%a %.9Y' "$src/secret/id")" ]] || fail "two files: id"
[[ $(stat -c %a "$c/t2/dest/files/run.sh") == 755 ]] || fail "two files: run.sh"
"$hetcast" push "$src/big.bin" --config "$c/t0.yaml" --to t2 --algo flat --dest one --quiet > /dev/null || fail "push of one file"
[[ $(stat -c '%a %.9Y' "$c/t2/dest/one/big.bin") == "$(stat -c '%a %.9Y' "$src/big.bin")" ]] || fail "one file: mode or mtime"
"$hetcast" push "$src/caf"$'\xe9'".txt" --config "$c/t0.yaml" --to t2 --algo flat --dest latin --quiet > /dev/null \
    || fail "push of a file whose name is not UTF-8"
cmp -s "$src/caf"$'\xe9'".txt" "$c/t2/dest/latin/caf"$'\xe9'".txt" || fail "a name that is not UTF-8 did not land as it is: $(ls "$c/t2/dest/latin")"
step "one file and two files keep modes and mtimes; two files are one job; a name that is not UTF-8 lands as it is"

# Refusals: exit 2, one line, nothing lands.
mkdir -p "$tmp/other/proj"
echo x > "$tmp/other/proj/big.bin"
echo y > "$tmp/x1" && mkdir -p "$tmp/d2" && echo z > "$tmp/d2/x1"
before=$(find "$c" -path '*/dest/*' | sort)
expect_refused() {  # expect_refused PATTERN ARGS...
    local pattern=$1 rc=0
    shift
    "$hetcast" push "$@" --config "$c/t0.yaml" --all --quiet > "$tmp/ref.out" 2> "$tmp/ref.err" || rc=$?
    [[ $rc -eq 2 ]] || fail "push $* exited $rc, not 2: $(cat "$tmp/ref.err")"
    [[ $(wc -l < "$tmp/ref.err") -eq 1 ]] || fail "push $*: not one line: $(cat "$tmp/ref.err")"
    grep -q -- "$pattern" "$tmp/ref.err" || fail "push $*: '$pattern' not in: $(cat "$tmp/ref.err")"
}
expect_refused "both land at 'proj'" -r "$src" "$tmp/other/proj"
expect_refused "both land at 'x1'" "$tmp/x1" "$tmp/d2/x1"
expect_refused "is a directory (use -r)" "$src"
mkdir -p "$tmp/fifo-dir" && mkfifo "$tmp/fifo-dir/p"
expect_refused "is a fifo" -r "$tmp/fifo-dir"
[[ "$(find "$c" -path '*/dest/*' | sort)" == "$before" ]] || fail "a refused push landed something"
step "collisions, a directory without -r and a fifo: exit 2, one line, nothing landed"

# A directory in the way of a file on one member: it fails naming the path; the rest lands.
mkdir -p "$c/t3/dest/way/proj/big.bin"
rc=0
"$hetcast" push -r "$src" --config "$c/t0.yaml" --all --algo flat --dest way --quiet > "$tmp/way.out" 2> "$tmp/way.err" \
    || rc=$?
[[ $rc -eq 4 ]] || fail "a directory in the way: exit $rc (expected 4, partial): $(cat "$tmp/way.err")"
grep -q "t3 failed: 1 of 59 entries did not land: 'proj/big.bin'" "$tmp/way.err" || fail "the reason: $(cat "$tmp/way.err")"
[[ -f $c/t3/dest/way/proj/a/b/c/d/e/deep.bin && -L $c/t3/dest/way/proj/outside ]] || fail "the rest did not land on t3"
[[ "$(tree_listing "$c/t1/dest/way")" == "$want" ]] || fail "t1 did not get the whole tree"
no_temporaries "$c"
step "a directory in the way: that member fails naming the path, the other entries land, no temporaries"

# What a daemon killed while landing a tree leaves (its bundle, a link's temporary name) is
# removed when it starts again (a dangling link too); the landed tree stays.
stop t1
head -c 1000 /dev/urandom > "$c/t1/dest/way/.hetcast-bundle-0123456789abcdef.hetcast-42.part"
mkdir -p "$c/t1/dest/other" && ln -s /nowhere/at/all "$c/t1/dest/other/.outside.hetcast-7.part"
start "$c" t1
[[ ! -e $c/t1/dest/way/.hetcast-bundle-0123456789abcdef.hetcast-42.part && ! -L $c/t1/dest/other/.outside.hetcast-7.part ]] \
    || fail "a stale bundle or link temporary survived the restart"
[[ "$(tree_listing "$c/t1/dest/way")" == "$want" ]] || fail "the restart changed the landed tree"
step "restarted: a stale bundle and a stale link temporary removed, the tree kept"

# The largest manifest a push may carry travels: its plan is one frame (8 MiB + 4 KiB at
# most). The limit is read from the refusal of a 12 MB manifest (symlinks whose 4000-byte
# targets JSON escapes six-fold); the largest tree the source takes lands everywhere, and
# one entry more is refused at the source with one line. From t0's disk (the
# coordinator, cut-through with chain) and uploaded by the CLI (its order repeats the manifest).
links() {  # links DIR N
    rm -rf "$1"
    python3 -c 'import os, sys
os.makedirs(sys.argv[1])
for i in range(int(sys.argv[2])): os.symlink("\x01" * 4000, os.path.join(sys.argv[1], "l%05d" % i))' "$1" "$2"
}
largest_manifest() {  # largest_manifest HOW ARGS...: HOW is "disk" or "upload"
    local how=$1 words k
    shift
    links "$tmp/many/m" 500
    expect_refused "over the" -r "$tmp/many/m" --dest many "$@"
    # "... entries takes T KiB, over the L KiB one job carries ...", in KiB or MiB
    read -r -a words < <(python3 -c 'import re, sys
m = re.search(r"takes (\d+) (KiB|MiB), over the (\d+) (KiB|MiB)", open(sys.argv[1]).read())
kib = lambda n, u: int(n) * (1024 if u == "MiB" else 1)
print(kib(*m.group(1, 2)), kib(*m.group(3, 4)))' "$tmp/ref.err") || true
    [[ ${#words[@]} -eq 2 ]] || fail "$how: the refusal does not say the limit: $(cat "$tmp/ref.err")"
    # From just over the estimate down, one link at a time, to the largest the source takes.
    k=$(( words[1] * 500 / words[0] + 2 ))
    links "$tmp/many/m" "$k"
    until "$hetcast" push -r "$tmp/many/m" --config "$c/t0.yaml" --all --algo chain --dest many "$@" --quiet \
        > /dev/null 2> "$tmp/many.err"; do
        grep -q "over the" "$tmp/many.err" && [[ $k -gt 1 ]] ||
            fail "$how: a manifest of $k entries, under the ${words[1]} KiB limit, did not travel: $(cat "$tmp/many.err")"
        k=$((k - 1))
        rm "$tmp/many/m/l$(printf %05d "$k")"
    done
    for n in t1 t2 t3; do
        [[ $(find "$c/$n/dest/many/m" -type l | wc -l) -eq $k && $(readlink "$c/$n/dest/many/m/l00000") == "$(readlink "$tmp/many/m/l00000")" ]] ||
            fail "$how: $n did not get the $k links"
    done
    links "$tmp/many/m" $((k + 1))
    expect_refused "entries takes .* KiB, over the ${words[1]} KiB one" -r "$tmp/many/m" --dest many "$@"
    rm -rf "$c"/t*/dest/many
    step "$how: the largest manifest the source takes ($k entries, up to ${words[1]} KiB) landed on every member; $((k + 1)) refused with one line"
}
largest_manifest disk
largest_manifest upload --upload

# An upload in more pieces than its plan can carry the digests of (twice, in one frame):
# refused with one line before anything moves (it used to lose its coordinator).
truncate -s $((252 << 20)) "$tmp/many.bin"
expect_refused "an upload in 64512 pieces, over the 32768" "$tmp/many.bin" --upload --piece 4KiB --dest pieces
[[ -z $(find "$c"/t*/dest -name 'many*') ]] || fail "the refused upload left something: $(find "$c"/t*/dest -name 'many*')"
step "an upload in 64512 pieces of 4 KiB: refused with one line, nothing landed"

for n in "${names[@]}"; do stop "$n"; done
step "passed"
