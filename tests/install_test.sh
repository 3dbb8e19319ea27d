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
cmake -S "$src_dir/tests/consumer" -B "$tmp/consumer" -DCMAKE_PREFIX_PATH="$tmp/prefix" >/dev/null
cmake --build "$tmp/consumer" >/dev/null
out=$("$tmp/consumer/consumer")
[ "$out" = "20" ] || { echo "FAIL: consumer printed '$out', expected 20"; exit 1; }
echo "install test: consumer built against the installed package and printed $out"

# The example program of tools/examples, built the same way against the installed package.
cmake -S "$src_dir/tools/examples" -B "$tmp/examples" -DCMAKE_PREFIX_PATH="$tmp/prefix" >/dev/null
cmake --build "$tmp/examples" >/dev/null
out=$("$tmp/examples/broadcast" 4 65536) || { echo "FAIL: the example exited non-zero: $out"; exit 1; }
grep -q "^3 of 3 nodes hold an intact copy$" <<< "$out" || { echo "FAIL: the example printed: $out"; exit 1; }
echo "install test: tools/examples/broadcast built against the installed package; 3 of 3 copies intact"
