# Sourced by scripts/demo and scripts/bench-runtime: a local cluster of hetcastd daemons on
# 127.0.0.1, each with its own port, state and destination folders under $work.
#   cluster_start PROFILE NAME...   PROFILE: a link-emulation network file, or "" for none.
#                                   A daemon loads $work/NAME/state/map.yaml if it exists.
#   cluster_stop                    stops every daemon started: SIGTERM, up to 10 s, then
#                                   SIGKILL (the callers run it from their EXIT trap)
# After cluster_start: ports[i] and pids[i] for the i-th NAME; configs in $work/NAME/hetcastd.yaml,
# logs in $work/NAME/log; the cluster's CA and identities in $work/keys (NAME.pem for each
# member), and HETCAST_IDENTITY exported as its operator's ($work/keys/operator.pem), so
# the caller's hetcast commands reach these daemons.
# Needs: $work (a fresh folder), $hetcastd, $hetcast. $cluster_extra, if set: lines added to
# every daemon's config.

pids=()
ports=()

cluster_stop() {
  local p
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do
    for _ in $(seq 100); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$p" 2>/dev/null || true
    wait "$p" 2>/dev/null || true
  done
  pids=()
}

cluster_start() {
  local profile=$1
  shift
  local names=("$@")
  local n
  # A CA of this cluster's own, the operator's identity and one identity per member (the
  # ones an earlier cluster_start in $work made are kept).
  [ -e "$work/keys/ca.pem" ] || "$hetcast" keys init --dir "$work/keys" > /dev/null || return 1
  for n in "${names[@]}"; do
    [ -e "$work/keys/$n.pem" ] || "$hetcast" keys issue "$n" --dir "$work/keys" > /dev/null || return 1
  done
  export HETCAST_IDENTITY=$work/keys/operator.pem
  # Free ports from the kernel (bound and released at once; the daemons take them right after).
  read -r -a ports <<< "$(python3 -c '
import socket, sys
socks = [socket.socket() for _ in range(int(sys.argv[1]))]
for s in socks: s.bind(("127.0.0.1", 0))
print(" ".join(str(s.getsockname()[1]) for s in socks))' "${#names[@]}")"
  {
    echo "members:"
    for i in "${!names[@]}"; do
      echo "  - {name: ${names[$i]}, host: 127.0.0.1, port: ${ports[$i]}}"
    done
  } > "$work/cluster.yaml"
  for i in "${!names[@]}"; do
    n=${names[$i]}
    mkdir -p "$work/$n"
    {
      echo "name: $n"
      echo "listen: 127.0.0.1:${ports[$i]}"
      echo "state_dir: $work/$n/state"
      echo "dest_root: $work/$n/files"
      echo "identity: $work/keys/$n.pem"
      echo "cluster: $work/cluster.yaml"
      echo "serve_roots: [$work]"
      [ -z "$profile" ] || echo "link_profile: $profile"
      [ -z "${cluster_extra:-}" ] || echo "$cluster_extra"
    } > "$work/$n/hetcastd.yaml"
    "$hetcastd" --config "$work/$n/hetcastd.yaml" 2> "$work/$n/log" &
    pids+=($!)
  done
  # Bounded: 10 s per daemon at most.
  for n in "${names[@]}"; do
    for _ in $(seq 100); do
      grep -q "listening on" "$work/$n/log" 2>/dev/null && break
      sleep 0.1
    done
    grep -q "listening on" "$work/$n/log" || { echo "${0##*/}: $n did not start:" >&2; cat "$work/$n/log" >&2; return 1; }
  done
}
