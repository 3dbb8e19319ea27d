# Shared by the shell tests that run hetcastd on 127.0.0.1 (sourced, not run): a temporary
# folder, free ports, a cluster CA and an identity per member, a cluster file with one
# config per member, starting and stopping daemons, and a cleanup that stops every daemon
# still running, also when a test fails.
#
# The sourcing script sets, before sourcing:
#   test_name   "daemon push test" etc., the prefix of every line it prints
#   hetcastd    the daemon binary
#   hetcast     the CLI (it makes the identities: hetcast keys)
# and may define stop_extra() (run first by the cleanup: unmount, kill a CLI, ...). After
# sourcing it has $tmp, the associative arrays pid[NAME] and port[NAME], and the functions
# below. `daemon_config` (one YAML line per entry) is appended to every config cluster()
# writes.

tmp=$(mktemp -d "${TMPDIR:-/tmp}/hetcast-${test_name// /-}.XXXXXX")
declare -A pid=() port=()
daemon_config=()

cleanup() {
    local rc=$?
    set +e
    trap "" PIPE
    declare -F stop_extra > /dev/null && stop_extra
    # A stopped daemon ignores SIGTERM until continued.
    for p in "${pid[@]}"; do kill -CONT "$p" 2>/dev/null; kill -TERM "$p" 2>/dev/null; done
    for p in "${pid[@]}"; do
        for _ in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
        kill -KILL "$p" 2>/dev/null
        wait "$p" 2>/dev/null
    done
    if [[ $rc -ne 0 ]]; then
        for f in "$tmp"/*.log; do [[ -f $f ]] && { echo "--- $f (last lines)" >&2; tail -n 25 "$f" >&2; }; done
    fi
    rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

fail() { echo "$test_name: FAILED: $*" >&2; exit 1; }
step() { echo "$test_name: $*"; }
now() { date +%s.%N; }

# free_ports N: N ports the kernel picked (bound and released; the daemons take them next).
free_ports() {
    python3 -c '
import socket, sys
ss = [socket.socket() for _ in range(int(sys.argv[1]))]
for s in ss: s.bind(("127.0.0.1", 0))
print(" ".join(str(s.getsockname()[1]) for s in ss))' "$1"
}

# new_ca KEYS: a cluster CA (KEYS/ca.pem) and the operator's identity (KEYS/operator.pem),
# which every hetcast command of the test then proves (HETCAST_IDENTITY; nothing of the
# user's own ~/.config/hetcast is used).
new_ca() {
    "$hetcast" keys init --dir "$1" > /dev/null || fail "hetcast keys init --dir $1 failed"
    export HETCAST_IDENTITY=$1/operator.pem
}

# cluster DIR KEYS PROFILE NAME...: a cluster file and one config per member in DIR
# (state and destination folders DIR/NAME/state and DIR/NAME/dest; no profile when empty),
# each member with its identity KEYS/NAME.pem, issued by KEYS/ca.pem unless it exists.
cluster() {
    local dir=$1 keys=$2 profile=$3
    shift 3
    local -a names=("$@") ps
    local n
    for n in "${names[@]}"; do
        [[ -e $keys/$n.pem ]] || "$hetcast" keys issue "$n" --dir "$keys" > /dev/null || fail "hetcast keys issue $n failed"
    done
    read -r -a ps < <(free_ports $#)
    [[ ${#ps[@]} -eq $# ]] || fail "could not pick $# free ports"
    mkdir -p "$dir"
    echo "members:" > "$dir/cluster.yaml"
    for i in "${!names[@]}"; do
        n=${names[$i]}
        port[$n]=${ps[$i]}
        echo "  - {name: $n, host: 127.0.0.1, port: ${ps[$i]}}" >> "$dir/cluster.yaml"
        {
            echo "name: $n"
            echo "listen: 127.0.0.1:${ps[$i]}"
            echo "state_dir: $n/state"
            echo "dest_root: $n/dest"
            echo "identity: $keys/$n.pem"
            echo "cluster: cluster.yaml"
            echo "serve_roots: [$tmp]"
            [[ -z $profile ]] || echo "link_profile: $profile"
            for line in "${daemon_config[@]}"; do echo "$line"; done
        } > "$dir/$n.yaml"
    done
}

# start DIR NAME [ARGS...]: starts NAME's daemon (log appended to $tmp/NAME.log) and waits,
# bounded, for a new 'ready' line.
start() {
    local dir=$1 n=$2 before
    shift 2
    touch "$tmp/$n.log"
    before=$(grep -c 'INFO ready: ' "$tmp/$n.log" || true)
    "$hetcastd" --config "$dir/$n.yaml" "$@" 2>> "$tmp/$n.log" &
    pid[$n]=$!
    for _ in $(seq 100); do
        [[ $(grep -c 'INFO ready: ' "$tmp/$n.log" || true) -gt $before ]] && return 0
        kill -0 "${pid[$n]}" 2>/dev/null || fail "hetcastd $n exited: $(tail -n 20 "$tmp/$n.log")"
        sleep 0.1
    done
    fail "hetcastd $n did not get ready within 10 s"
}

# stop NAME: SIGTERM, bounded wait, exit status 0.
stop() {
    local n=$1 rc=0
    kill -TERM "${pid[$n]}"
    for _ in $(seq 100); do kill -0 "${pid[$n]}" 2>/dev/null || break; sleep 0.1; done
    kill -0 "${pid[$n]}" 2>/dev/null && fail "hetcastd $n did not stop within 10 s of SIGTERM"
    wait "${pid[$n]}" || rc=$?
    unset "pid[$n]"
    [[ $rc -eq 0 ]] || fail "hetcastd $n exited with $rc on SIGTERM"
}
