"""Random netlab topologies (`scripts/netlab random --seed N`; docs/netlab.md, "Random topologies").

One seed always makes the same file (random.Random(seed), no other input), and the file says
its seed. What it draws:
  - 1..4 subnets, 2..20 hosts in all (every subnet at least one);
  - a NIC rate per subnet from NIC_RATES (50..1000 Mbit/s), uplinks 20..150 Mbit/s;
  - a few odd hosts (never the first, which bench-netlab pushes from): a slower NIC, or a
    slow send side (receives at the subnet's rate, sends at a fraction of it);
  - then, if the hosts' receive rates add up to more than LOAD_CAP, the fastest subnets' NICs
    (their odd hosts in proportion) are slowed to a common ceiling that keeps the sum within
    it: above that, this machine's veths, bridges and HTB run out of CPU and the links stop
    running at the rates the file gives. With at most 20 hosts the ceiling is at least 100.
"""

import random

SUBNETS = (1, 4)
HOSTS = (2, 20)
NIC_RATES = (50, 100, 150, 200, 300, 500, 1000)   # Mbit/s, one per subnet
UPLINK = (20, 150, 5)                             # Mbit/s: from, to, step
LOAD_CAP = 2000                                   # Mbit/s: the sum of every host's receive rate
RATE_MIN = 10                                     # Mbit/s: no link slower (odd hosts, scaling)
ODD_MAX = 3


def _round_rate(mbit):
    """Whole Mbit/s, 5 Mbit/s steps above 20, never below RATE_MIN."""
    r = int(mbit) if mbit < 20 else int(round(mbit / 5.0)) * 5
    return max(RATE_MIN, r)


def draw(seed):
    """The topology of SEED as a dict: name, seed, subnets [{name, uplink, hosts [{name, send,
    recv, odd}]}] with rates in Mbit/s, and ceiling (the NIC rate the fastest subnets were
    slowed to, None if none was)."""
    rng = random.Random(seed)
    nsub = rng.randint(*SUBNETS)
    nhosts = rng.randint(max(HOSTS[0], nsub), HOSTS[1])
    counts = [1] * nsub
    for _ in range(nhosts - nsub):
        counts[rng.randrange(nsub)] += 1
    subnets, hosts = [], []
    for i, n in enumerate(counts):
        sname = "abcd"[i]
        nic = rng.choice(NIC_RATES)
        uplink = rng.randrange(UPLINK[0], UPLINK[1] + 1, UPLINK[2])
        sub = {"name": sname, "uplink": uplink, "nic": nic, "hosts": []}
        for j in range(n):
            h = {"name": f"{sname}{j + 1}", "send": nic, "recv": nic, "odd": None}
            sub["hosts"].append(h)
            hosts.append(h)
        subnets.append(sub)
    odd_pool = hosts[1:]
    for h in rng.sample(odd_pool, min(len(odd_pool), rng.randint(1, ODD_MAX))):
        if rng.random() < 0.5:
            h["odd"] = "slow NIC"
            r = _round_rate(h["recv"] * rng.uniform(0.1, 0.5))
            h["send"] = h["recv"] = r
        else:
            h["odd"] = "slow sender"
            h["send"] = _round_rate(h["send"] * rng.uniform(0.05, 0.3))
    ceiling = None
    if sum(h["recv"] for h in hosts) > LOAD_CAP:
        # The fastest subnets are slowed to a common ceiling, the highest that keeps the sum
        # within LOAD_CAP; slower subnets keep their rates, odd hosts stay as odd in theirs.
        ceiling = max(s["nic"] for s in subnets)
        while ceiling > 50 and sum(min(s["nic"], ceiling) * len(s["hosts"]) for s in subnets) > LOAD_CAP:
            ceiling -= 5
        for s in subnets:
            if s["nic"] > ceiling:
                f = ceiling / s["nic"]
                s["nic"] = ceiling
                for h in s["hosts"]:
                    h["send"] = min(ceiling, _round_rate(h["send"] * f))
                    h["recv"] = min(ceiling, _round_rate(h["recv"] * f))
    return {"name": f"random-{seed}", "seed": seed, "ceiling": ceiling, "subnets": subnets}


def render(topo):
    """The topology as netlab YAML text, with a comment per odd host and the seed."""
    seed, subnets = topo["seed"], topo["subnets"]
    nhosts = sum(len(s["hosts"]) for s in subnets)
    lines = [f"# random topology, seed {seed} (scripts/netlab random --seed {seed}): "
             f"{len(subnets)} subnet{'s' if len(subnets) > 1 else ''}, {nhosts} hosts",
             f"# seed: {seed}"]
    if topo["ceiling"]:
        lines.append(f"# NICs above {topo['ceiling']} Mbit/s slowed to it: the hosts' receive rates would have added up "
                     f"to more than {LOAD_CAP} Mbit/s, more than veth+HTB emulate on this machine")
    lines += [f"name: {topo['name']}", "subnets:"]
    for s in subnets:
        lines += [f"  - name: {s['name']}", f"    uplink: {s['uplink']}Mbit", "    hosts:"]
        for h in s["hosts"]:
            if h["send"] == h["recv"]:
                rates = f"nic: {h['recv']}Mbit"
            else:
                rates = f"send: {h['send']}Mbit, recv: {h['recv']}Mbit"
            note = f"    # odd: {h['odd']}" if h["odd"] else ""
            lines.append(f"      - {{name: {h['name']}, {rates}}}{note}")
    return "\n".join(lines) + "\n"


def generate(seed):
    """The YAML text of SEED's topology."""
    return render(draw(seed))
