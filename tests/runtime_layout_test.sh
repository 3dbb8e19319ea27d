#!/usr/bin/env bash
# The runtime's layout rules (docs/architecture.md), checked on the sources:
#   - no file under lib/src/runtime/ over 500 lines;
#   - a part (wire, transfer, job, cluster, config, service) includes, of the library's
#     private headers, only its own folder's, model/yaml_document.hpp and
#     wire/json_field.hpp (on the lowest floor: no arrow up);
#   - the assembly (peer/) may include any part's private header; nothing outside peer/
#     includes peer/peer_impl.hpp;
#   - the data path (wire, transfer, job, cluster) and config never include the daemon's
#     or the embedded node's public headers;
#   - every include points down or sideways, never up: the folders stand on floors
#     wire < transfer < job < cluster < config < peer < service < node, a public header
#     (lib/include/hetcast/runtime/) on the floor of the folder whose .cpp bears its name.
#   usage: runtime_layout_test.sh SOURCE_DIR
set -euo pipefail
top=$(cd "${1:?usage: $0 SOURCE_DIR}" && pwd)
src=$top/lib/src/runtime
pub=$top/lib/include/hetcast/runtime
[[ -d $src/wire && -d $pub ]] || { echo "runtime layout test: no $src/wire or $pub" >&2; exit 2; }
cd "$src"

failed=0
bad() {
    echo "runtime layout test: $*" >&2
    failed=1
}

while read -r n file; do
    [[ $file == total ]] && continue
    ((n <= 500)) || bad "$file has $n lines (at most 500)"
done < <(find . -name '*.cpp' -o -name '*.hpp' | sort | xargs wc -l)

parts="wire transfer job cluster config service"
for part in $parts peer node; do
    for file in "$part"/*.cpp "$part"/*.hpp; do
        [[ -e $file ]] || continue
        while IFS=: read -r line inc; do
            inc=${inc#*\"}
            inc=${inc%\"*}
            case $inc in
                hetcast/*) ;;
                ../../model/yaml_document.hpp) ;;
                ../wire/json_field.hpp) ;;
                ../*/*)
                    [[ $part == peer && -e $part/$inc ]] || bad "$file:$line includes \"$inc\": another part's private header"
                    ;;
                */*) bad "$file:$line includes \"$inc\": not a header of $part/" ;;
                *) [[ -e $part/$inc ]] || bad "$file:$line includes \"$inc\", which is not in $part/" ;;
            esac
        done < <(grep -n '^#include "' "$file" || true)
    done
done

for part in wire transfer job cluster config; do
    if hits=$(grep -n '#include "hetcast/runtime/\(service\|node\|history\)\.hpp"' "$part"/* 2>/dev/null); then
        bad "the data path includes the daemon's headers: $hits"
    fi
done

# Nothing but the assembly sees Peer::Impl.
while IFS= read -r file; do
    case $file in
        ./peer/*) ;;
        *) bad "$file includes peer_impl.hpp" ;;
    esac
done < <(grep -rl '#include ".*peer_impl.hpp"' . | sort)

# --- arrows point down -----------------------------------------------------------------
declare -A floor=([wire]=1 [transfer]=2 [job]=3 [cluster]=4 [config]=5 [peer]=6 [service]=7 [node]=8)
# Public headers that no .cpp names: the folder they belong to.
declare -A folder_of=([order_scope]=wire [wire]=wire [peer_types]=peer)
for h in "$pub"/*.hpp; do
    name=$(basename "$h" .hpp)
    [[ -n ${folder_of[$name]:-} ]] && continue
    if [[ -e $name.cpp ]]; then
        folder_of[$name]=$name
    elif cpp=$(ls ./*/"$name".cpp 2>/dev/null | head -1) && [[ -n $cpp ]]; then
        folder_of[$name]=$(basename "$(dirname "$cpp")")
    else
        bad "hetcast/runtime/$name.hpp: no .cpp bears its name; say in this test which folder it belongs to"
    fi
done
check_down() {  # check_down FILE FOLDER
    local file=$1 from=$2 line inc name to
    while IFS=: read -r line inc; do
        name=${inc#*hetcast/runtime/}
        name=${name%%.hpp*}
        to=${folder_of[$name]:-}
        [[ -n $to ]] || continue
        if ((${floor[$to]} > ${floor[$from]})); then
            bad "$file:$line includes hetcast/runtime/$name.hpp: $from/ (floor ${floor[$from]}) may not include $to/ (floor ${floor[$to]}), an arrow up"
        fi
    done < <(grep -n '^#include "hetcast/runtime/[a-z_]*\.hpp"' "$file" || true)
}
for part in $parts peer node; do
    for file in "$part"/*.cpp "$part"/*.hpp; do
        [[ -e $file ]] && check_down "$file" "$part"
    done
done
for file in ./*.cpp ./*.hpp; do
    [[ -e $file ]] && bad "$file stands outside the runtime's folders"
done
for h in "$pub"/*.hpp; do
    name=$(basename "$h" .hpp)
    [[ -n ${folder_of[$name]:-} ]] && check_down "$h" "${folder_of[$name]}"
done

((failed == 0)) || exit 1
echo "runtime layout test: passed"
