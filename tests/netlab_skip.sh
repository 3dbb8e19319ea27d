# Sourced by the netlab shell tests (not run): exits 77, "skipped", with one line naming
# $test_name, where this machine cannot make network namespaces (not root, or no netns).
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
