#!/usr/bin/env bash
# Installs the build into a temporary prefix and builds tests/consumer against it with
# find_package(hetcast): proves the exported package is consumable.
set -euo pipefail
build_dir=$1
src_dir=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cmake --install "$build_dir" --prefix "$tmp/prefix" >/dev/null
test -f "$tmp/prefix/include/hetcast/model/network.hpp" || { echo "FAIL: headers not installed"; exit 1; }

# The tree beside the library: binaries, man pages, completion, the systemd unit, examples
# and docs in their FHS places, each of them usable.
p=$tmp/prefix
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
version=$(sed -n 's/^project(hetcast VERSION \([0-9.]*\).*/\1/p' "$src_dir/CMakeLists.txt")
doc=$p/share/doc/hetcast
for f in bin/hetcast bin/hetcastd bin/hetcast-bench; do
    [ -x "$p/$f" ] || fail "$f not installed"
done
for f in share/man/man1/hetcast.1 share/man/man1/hetcastd.1 share/man/man5/hetcastd.yaml.5 \
    share/bash-completion/completions/hetcast share/bash-completion/completions/hetcastd \
    lib/systemd/system/hetcastd.service include/hetcast/version.hpp \
    share/doc/hetcast/README.md share/doc/hetcast/configuration.md \
    share/doc/hetcast/examples/hetcastd.yaml share/doc/hetcast/examples/cluster.yaml; do
    [ -s "$p/$f" ] || fail "$f not installed"
done
for f in "$src_dir"/docs/*.md "$src_dir"/docs/schema/*.json "$src_dir"/conf/examples/*; do
    case $f in
        */docs/schema/*) [ -s "$doc/docs/schema/${f##*/}" ] || fail "docs/schema/${f##*/} not installed in $doc/docs/schema" ;;
        */docs/*) [ -s "$doc/docs/${f##*/}" ] || fail "docs/${f##*/} not installed in $doc/docs" ;;
        *) [ -s "$doc/examples/${f##*/}" ] || fail "conf/examples/${f##*/} not installed in $doc/examples" ;;
    esac
done
[ -z "$(find "$p/include" -name '*.in')" ] || fail "templates installed: $(find "$p/include" -name '*.in')"
grep -q "^#define HETCAST_VERSION \"$version\"" "$p/include/hetcast/version.hpp" || fail "version.hpp: $(cat "$p/include/hetcast/version.hpp")"

# --version: the project version, and the commit when built from a checkout.
for b in hetcast hetcastd; do
    out=$("$p/bin/$b" --version 2>&1) || fail "$b --version: exit status $?"
    grep -Eqx "$b $version( \(git [-.A-Za-z0-9_]+\))?" <<<"$out" || fail "$b --version printed: $out"
done

# The man pages render without a warning, carry the version, and list what --help lists.
for page in man1/hetcast.1 man1/hetcastd.1 man5/hetcastd.yaml.5; do
    f=$p/share/man/$page
    [ -s "$f" ] || continue
    grep -q "^\.TH .* \"hetcast $version\"" "$f" || fail "$page: no version $version in .TH: $(grep '^\.TH' "$f")"
    if command -v groff >/dev/null; then
        warnings=$(LC_ALL=C.UTF-8 groff -man -Tutf8 -ww -z "$f" 2>&1)
        [ -z "$warnings" ] || fail "$page: groff warns: $warnings"
    fi
    if command -v man >/dev/null; then
        text=$(MANWIDTH=80 LC_ALL=C.UTF-8 man -l "$f" 2>"$tmp/man.err") || fail "$page: man -l failed: $(cat "$tmp/man.err")"
        [ ! -s "$tmp/man.err" ] || fail "$page: man -l says: $(cat "$tmp/man.err")"
        grep -q "^NAME" <<<"$text" || fail "$page: man -l shows no NAME section"
    fi
done
if [ -s "$p/share/man/man1/hetcast.1" ]; then
    for cmd in plan map sweep push probe status leave jobs cancel "map show" keys; do
        grep -q "^\.SS \"hetcast $cmd\"" "$p/share/man/man1/hetcast.1" || fail "hetcast.1 has no section for '$cmd'"
    done
    grep -q '\\-\\-algo' "$p/share/man/man1/hetcast.1" || fail "hetcast.1 does not list --algo"
fi
grep -q '\\-\\-join' "$p/share/man/man1/hetcastd.1" 2>/dev/null || fail "hetcastd.1 does not list --join"

# The completion sources without a word and completes the installed binary's commands, and
# nothing (no error) for members when no daemon answers.
comp=$p/share/bash-completion/completions/hetcast
out=$(HETCAST_CONFIG=$tmp/none.yaml bash --norc --noprofile -c '
    source "$1" || exit 1
    complete -p hetcast hetcastd >/dev/null || exit 1
    COMP_WORDS=("$2" ""); COMP_CWORD=1; _hetcast; echo "commands: ${COMPREPLY[*]}"
    COMP_WORDS=("$2" push --); COMP_CWORD=2; _hetcast; echo "options: ${COMPREPLY[*]}"
    COMP_WORDS=("$2" push f --to ""); COMP_CWORD=4; _hetcast; echo "members: ${COMPREPLY[*]}"
' _ "$comp" "$p/bin/hetcast" 2>&1) || fail "completion: $out"
grep -qx "commands: .*push.*" <<<"$out" || fail "completion offers no commands: $out"
grep -qx "options: .*--to.*" <<<"$out" || fail "completion offers no push options: $out"
grep -qx "members: " <<<"$out" || fail "completion without a daemon: $out"
[ "$(wc -l <<<"$out")" -eq 3 ] || fail "completion printed more than its answers: $out"

# The unit runs the installed daemon and points at its docs.
unit=$p/lib/systemd/system/hetcastd.service
grep -Eq '^ExecStart=/[^ ]*/bin/hetcastd --config ' "$unit" || fail "unit: $(grep ExecStart= "$unit")"
grep -q '^Documentation=man:hetcastd(1) ' "$unit" || fail "unit: $(grep Documentation= "$unit")"

# The installed examples are the ones the planner reads.
"$p/bin/hetcast" plan --network "$doc/examples/bhat-eq1.yaml" --algo fnf >/dev/null 2>"$tmp/plan.err" ||
    fail "plan on the installed example: $(cat "$tmp/plan.err")"

[ "$failures" -eq 0 ] || { echo "install test: $failures check(s) of the installed tree failed"; exit 1; }
echo "install test: binaries, man pages, completion, unit, examples and docs installed and usable"

# The package is relocatable: no file of it names the prefix it was installed to or a
# library by its path on the build machine, and it works after the tree is moved.
pkgfiles=("$p"/lib/cmake/hetcast/*.cmake "$p"/lib/pkgconfig/hetcast.pc)
for f in "${pkgfiles[@]}"; do
    [ -s "$f" ] || { echo "FAIL: $f not installed"; exit 1; }
    if grep -nE "$p|(^|[\";= ])/(usr|lib|opt|home|srv|tmp|work)/" "$f"; then
        echo "FAIL: ${f#$p/} names an absolute path (above)"; exit 1
    fi
done
mv "$p" "$tmp/moved"
p=$tmp/moved
cmake -S "$src_dir/tests/consumer" -B "$tmp/consumer" -DCMAKE_PREFIX_PATH="$p" >/dev/null
cmake --build "$tmp/consumer" >/dev/null
out=$("$tmp/consumer/consumer")
[ "$out" = "20" ] || { echo "FAIL: consumer printed '$out', expected 20"; exit 1; }
echo "install test: consumer built against the installed package and printed $out"

# The example program of tools/examples, built the same way against the installed package.
cmake -S "$src_dir/tools/examples" -B "$tmp/examples" -DCMAKE_PREFIX_PATH="$p" >/dev/null
cmake --build "$tmp/examples" >/dev/null
out=$("$tmp/examples/broadcast" 4 65536 $((4 << 20)) 2>/dev/null) || { echo "FAIL: the example exited non-zero: $out"; exit 1; }
for line in "buffer: 3 of 3 nodes hold an intact copy" "file: 3 of 3 nodes hold an intact copy" "cancelled push: .* 0 temporaries left"; do
    grep -q "^$line" <<< "$out" || { echo "FAIL: the example did not print '$line': $out"; exit 1; }
done
echo "install test: tools/examples/broadcast built against the installed package; a buffer and a file intact, a cancelled push left nothing"

# The same consumer built with pkg-config instead of CMake, against the moved tree.
if command -v pkg-config >/dev/null; then
    flags=$(PKG_CONFIG_PATH=$p/lib/pkgconfig pkg-config --cflags --libs "hetcast = $version") ||
        { echo "FAIL: pkg-config does not find hetcast $version in $p/lib/pkgconfig"; exit 1; }
    # shellcheck disable=SC2086
    ${CXX:-c++} -std=c++20 -o "$tmp/consumer-pc" "$src_dir/tests/consumer/main.cpp" $flags
    out=$("$tmp/consumer-pc")
    [ "$out" = "20" ] || { echo "FAIL: the pkg-config consumer printed '$out', expected 20"; exit 1; }
    echo "install test: consumer built with pkg-config against the moved tree and printed $out"
else
    echo "install test: pkg-config not installed (scripts/deps installs it); pkg-config build skipped"
fi

# The Python package, when built, imports from the moved tree.
if [ -d "$p/lib/python3/dist-packages/hetcast" ]; then
    py=$(sed -n 's/^Python3_EXECUTABLE:[A-Z]*=//p' "$build_dir/CMakeCache.txt")
    out=$(PYTHONPATH=$p/lib/python3/dist-packages "${py:-python3}" -c 'import hetcast; print(hetcast.__version__)') ||
        { echo "FAIL: the installed Python package does not import: $out"; exit 1; }
    [ "$out" = "$version" ] || { echo "FAIL: the installed Python package says version '$out', expected $version"; exit 1; }
    echo "install test: the Python package imports from the moved tree (version $out)"
fi
