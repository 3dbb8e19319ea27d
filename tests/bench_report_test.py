"""scripts/bench_netlab_report.py: when the probe's subnets count as right (exact, or equivalent
because the subnets it merged have uplinks that can never be a bottleneck). Random topologies."""
import importlib.util
import random
import sys

spec = importlib.util.spec_from_file_location("report", sys.argv[1] + "/scripts/bench_netlab_report.py")
report = importlib.util.module_from_spec(spec)
spec.loader.exec_module(report)


def topology(rng, uplink_factor):
    subnets, hosts = [], []
    for i in range(rng.randint(2, 4)):
        name = "abcd"[i]
        members = [f"{name}{j}" for j in range(1, rng.randint(1, 5) + 1)]
        for h in members:
            nic = rng.choice([20, 50, 100, 200]) * 1e6
            hosts.append({"name": h, "subnet": name, "send_bit_s": nic, "recv_bit_s": nic})
        subnets.append({"name": name, "hosts": members})
    for s in subnets:
        inside = sum(h["send_bit_s"] for h in hosts if h["subnet"] == s["name"])
        s["uplink_bit_s"] = uplink_factor * inside
    return {"subnets": subnets, "hosts": hosts}


def run(info, groups):
    return {"info": info, "probe": {"map": {"subnets": groups}}}


def exact(info):
    return [list(s["hosts"]) for s in info["subnets"]]


def merged(info, names):
    keep = [list(s["hosts"]) for s in info["subnets"] if s["name"] not in names]
    return keep + [[h for s in info["subnets"] if s["name"] in names for h in s["hosts"]]]


rng = random.Random(23)
checks = 0
for _ in range(300):
    # Uplinks at least what their hosts send and receive together: none can ever bind.
    free = topology(rng, 1.0)
    assert report.invisible_subnets(free) == {s["name"] for s in free["subnets"]}
    assert report.subnets_right(run(free, exact(free)))
    assert report.subnets_right(run(free, merged(free, {s["name"] for s in free["subnets"]})))
    # Uplinks below what their hosts send together (when a subnet has two or more hosts).
    tight = topology(rng, 0.4)
    visible = [s for s in tight["subnets"] if s["name"] not in report.invisible_subnets(tight)]
    assert report.subnets_right(run(tight, exact(tight)))
    if len(visible) >= 2:
        assert not report.subnets_right(run(tight, merged(tight, {visible[0]["name"], visible[1]["name"]})))
    if visible and len(visible[0]["hosts"]) > 1:
        # One host of a subnet that binds moved into a group of its own.
        s = visible[0]["hosts"]
        groups = [g for g in exact(tight) if g != s] + [s[:1], s[1:]]
        assert not report.subnets_right(run(tight, groups))
        checks += 1
assert checks > 50, checks
# A one-host subnet behind an uplink slower than its NIC binds; at its NIC rate it does not.
info = {"subnets": [{"name": "a", "uplink_bit_s": 135e6, "hosts": ["a1"]},
                    {"name": "b", "uplink_bit_s": 45e6, "hosts": ["b1"]}],
        "hosts": [{"name": "a1", "subnet": "a", "send_bit_s": 300e6, "recv_bit_s": 300e6},
                  {"name": "b1", "subnet": "b", "send_bit_s": 20e6, "recv_bit_s": 20e6}]}
assert report.invisible_subnets(info) == {"a", "b"}
info["hosts"][1].update(send_bit_s=60e6, recv_bit_s=60e6)
assert report.invisible_subnets(info) == {"a"}
assert not report.subnets_right(run(info, [["a1", "b1"]]))
print("bench_report_test: ok")
