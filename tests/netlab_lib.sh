# Sourced by the netlab shell tests (not run); needs $test_name.
# Where this machine cannot make network namespaces (not root, or no netns), exits 77,
# "skipped", with one line naming $test_name. Then defines fail, step, and
#   netlab_cleanup NETLAB NS_PREFIX TMP [GLOB]
# which, on any exit of the test, brings down every lab named in the array netlab_labs with
# NETLAB's 'down', deletes whatever namespace a failed 'down' left (names starting with
# hcl-NS_PREFIX, a regular expression), shows the last lines of the TMP/GLOB files when the
# test failed, and removes TMP.
if [[ $(id -u) -ne 0 ]]; then
    echo "$test_name: skipped: needs root/netns (not root)"
    exit 77
fi
probe_ns=hcl-skip$$-probe.x
if ! err=$(ip netns add "$probe_ns" 2>&1); then
    echo "$test_name: skipped: needs root/netns (ip netns add: $err)"
    exit 77
fi
ip netns del "$probe_ns"

fail() { echo "$test_name: FAILED: $*" >&2; exit 1; }
step() { echo "$test_name: $*"; }

netlab_labs=()
netlab_cleanup() {
    netlab_script=$1 netlab_ns_prefix=$2 netlab_tmp=$3 netlab_show=${4:-}
    trap netlab_on_exit EXIT
    trap 'exit 130' INT TERM
}
netlab_on_exit() {
    local rc=$? lab ns f
    set +e
    trap "" PIPE INT TERM
    for lab in "${netlab_labs[@]}"; do "$netlab_script" down "$lab" >/dev/null 2>&1; done
    for ns in $(ip netns list 2>/dev/null | awk '{print $1}' | grep "^hcl-$netlab_ns_prefix"); do ip netns del "$ns"; done
    if [[ $rc -ne 0 && -n $netlab_show ]]; then
        for f in "$netlab_tmp"/$netlab_show; do
            [[ -f $f ]] && { echo "--- $f (last lines)" >&2; tail -n 20 "$f" >&2; }
        done
    fi
    rm -rf "$netlab_tmp"
}
