"""netlab's topology files: parsed, checked, and resolved into addresses, namespaces and rates
(docs/netlab.md, "Topology files")."""

import re

from netlab_common import (
    BUFFER_DEFAULT,
    CCS,
    CC_DEFAULT,
    Fail,
    HOST_FIRST,
    HOST_KEYS,
    LAB_NAME_MAX,
    NAME_RE,
    NET_PREFIX,
    NODE_NAME_MAX,
    PORT,
    QUEUES,
    RESERVED,
    SUBNET_KEYS,
    TOP_KEYS,
    ns_name,
    yaml,
)


# --- topology files -------------------------------------------------------------------------

def parse_rate(v, where):
    """'200Mbit' -> 200000000 (bit/s). Kbit/Mbit/Gbit are powers of 1000, as in tc."""
    if isinstance(v, bool) or not isinstance(v, (str, int, float)):
        raise Fail(f"{where}: a rate like 200Mbit expected, got {v!r}")
    m = re.fullmatch(r"\s*([0-9]+(?:\.[0-9]+)?)\s*([KkMmGg]?)bit(?:/s)?\s*", str(v))
    if not m:
        hint = " ('bps' would be bytes in tc: write Kbit, Mbit or Gbit)" if "bps" in str(v).lower() else ""
        raise Fail(f"{where}: '{v}' is not a rate: write e.g. 500Kbit, 200Mbit, 1Gbit{hint}")
    bits = float(m.group(1)) * {"": 1, "k": 1e3, "m": 1e6, "g": 1e9}[m.group(2).lower()]
    if bits < 8000 or bits > 10e9:
        raise Fail(f"{where}: rate {v} is outside 8Kbit .. 10Gbit")
    return int(bits)


def parse_bytes_rate(v, where):
    """'50MB/s', '40MiB/s' -> bytes per second."""
    m = re.fullmatch(r"\s*([0-9]+(?:\.[0-9]+)?)\s*(B|kB|KB|MB|GB|KiB|MiB|GiB)(?:/s)?\s*", str(v))
    if not m or isinstance(v, bool):
        raise Fail(f"{where}: '{v}' is not a write rate: write e.g. 50MB/s or 40MiB/s")
    mult = {"B": 1, "kB": 1e3, "KB": 1e3, "MB": 1e6, "GB": 1e9, "KiB": 1024, "MiB": 1024**2, "GiB": 1024**3}
    return int(float(m.group(1)) * mult[m.group(2)])


def parse_latency(v, where):
    m = re.fullmatch(r"\s*([0-9]+(?:\.[0-9]+)?)\s*(us|ms|s)\s*", str(v))
    if not m or isinstance(v, bool):
        raise Fail(f"{where}: '{v}' is not a delay: write e.g. 2ms")
    return float(m.group(1)) * {"us": 1e-6, "ms": 1e-3, "s": 1.0}[m.group(2)]


def check_name(v, where, maxlen):
    if not isinstance(v, str) or not NAME_RE.match(v) or len(v) > maxlen:
        raise Fail(f"{where}: name {v!r} must be 1..{maxlen} characters: letters, digits, '_' and '-' (not leading)")
    return v


def check_keys(d, allowed, where):
    if not isinstance(d, dict):
        raise Fail(f"{where}: a mapping expected")
    extra = sorted(set(d) - allowed, key=str)
    if extra:
        raise Fail(f"{where}: unknown key '{extra[0]}' (known: {', '.join(sorted(allowed))})")


def entry_name(d, allowed, where):
    """A subnet's or host's entry: only `allowed` keys, and its name, checked."""
    check_keys(d, allowed, where)
    if "name" not in d:
        raise Fail(f"{where}: 'name' missing")
    return check_name(d["name"], f"{where}.name", NODE_NAME_MAX)


def load_topology(path, name=None, overrides=None):
    """The topology file as a resolved dict (addresses, namespaces, rates in bit/s); name, when
    given, replaces the file's; overrides (queues, buffer, cc from the command line) replace the
    file's settings everywhere."""
    if yaml is None:
        raise Fail("python3 has no yaml module: install python3-yaml (scripts/deps)")
    try:
        with open(path) as f:
            text = f.read()
    except OSError as e:
        raise Fail(f"{path}: cannot read: {e.strerror}")
    try:
        doc = yaml.safe_load(text)
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f"{path}:{mark.line + 1}:{mark.column + 1}" if mark else path
        problem = getattr(e, "problem", None) or str(e).splitlines()[0]
        raise Fail(f"{where}: YAML syntax: {problem}")
    try:
        if name is not None:
            check_name(name, "--name", LAB_NAME_MAX)
            if isinstance(doc, dict):
                doc = dict(doc, name=name)
        return resolve(doc, overrides or {})
    except Fail as e:
        raise Fail(f"{path}: {e}")


def parse_queues(v, where):
    if v not in QUEUES:
        raise Fail(f"{where}: '{v}' is not one of {', '.join(QUEUES)}")
    return v


def parse_buffer(v, where):
    m = re.fullmatch(r"\s*([0-9]+)\s*(B|KiB|MiB|KB|MB)?\s*", str(v))
    if not m:
        raise Fail(f"{where}: '{v}' is not a byte count (e.g. 512KiB, 1MiB)")
    n = int(m.group(1)) * {None: 1, "B": 1, "KiB": 1024, "MiB": 1 << 20, "KB": 1000, "MB": 10 ** 6}[m.group(2)]
    if not 3028 <= n <= 64 << 20:
        raise Fail(f"{where}: {n} bytes is outside 3028 B .. 64 MiB")
    return n


def parse_cc(v, where):
    if v not in CCS:
        raise Fail(f"{where}: '{v}' is not one of {', '.join(CCS)}")
    return v


def link_queues(setting):
    """(host egress, switch port, uplink) disciplines of a subnet's setting."""
    return {"realistic": ("fair", "fifo", "fifo"), "fifo": ("fifo",) * 3, "fair": ("fair",) * 3}[setting]


def resolve(doc, overrides=None):
    overrides = overrides or {}
    check_keys(doc, TOP_KEYS, "top level")
    if "name" not in doc:
        raise Fail("'name' missing (the lab's name)")
    lab = check_name(doc["name"], "name", LAB_NAME_MAX)
    subnets = doc.get("subnets")
    if not isinstance(subnets, list) or not subnets:
        raise Fail("'subnets' must be a non-empty list")
    if len(subnets) > 250:
        raise Fail("at most 250 subnets")
    queues = parse_queues(doc.get("queues", "realistic"), "queues")
    buffer = parse_buffer(doc.get("buffer", BUFFER_DEFAULT), "buffer")
    cc = parse_cc(overrides.get("cc") or doc.get("cc", CC_DEFAULT), "cc")
    out = {"name": lab, "router": ns_name(lab, "router"), "subnets": [], "hosts": [], "latency": False,
           "cc": cc}
    seen_hosts, seen_subnets = set(), set()
    for i, s in enumerate(subnets):
        sname = entry_name(s, SUBNET_KEYS, f"subnets[{i}]")
        w = f"subnet '{sname}'"
        if sname in seen_subnets:
            raise Fail(f"{w}: a second subnet of that name")
        seen_subnets.add(sname)
        if "uplink" not in s:
            raise Fail(f"{w}: 'uplink' missing (its rate to the router, e.g. 40Mbit)")
        uplink = parse_rate(s["uplink"], f"{w}.uplink")
        delay = parse_latency(s["latency"], f"{w}.latency") if "latency" in s else 0.0
        out["latency"] = out["latency"] or delay > 0
        squeues = overrides.get("queues") or parse_queues(s.get("queues", queues), f"{w}.queues")
        sbuffer = overrides.get("buffer") or parse_buffer(s.get("buffer", buffer), f"{w}.buffer")
        hosts = s.get("hosts")
        if not isinstance(hosts, list) or not hosts:
            raise Fail(f"{w}: 'hosts' must be a non-empty list")
        if len(hosts) > 240:
            raise Fail(f"{w}: at most 240 hosts per subnet")
        idx = i + 1
        sub = {"name": sname, "index": idx, "cidr": f"{NET_PREFIX}.{idx}.0/24",
               "gateway": f"{NET_PREFIX}.{idx}.1", "uplink": uplink,
               "namespace": ns_name(lab, "sw." + sname), "latency": delay, "hosts": [],
               "queues": squeues, "buffer": sbuffer}
        for j, h in enumerate(hosts):
            hname = entry_name(h, HOST_KEYS, f"{w}.hosts[{j}]")
            hw = f"host '{hname}'"
            if hname in RESERVED:
                raise Fail(f"{hw}: '{hname}' is reserved")
            if hname in seen_hosts:
                raise Fail(f"{hw}: a second host of that name")
            seen_hosts.add(hname)
            if "nic" not in h and not ("send" in h and "recv" in h):
                raise Fail(f"{hw}: 'nic' missing (its rate, e.g. 200Mbit)")
            nic = parse_rate(h["nic"], f"{hw}.nic") if "nic" in h else None
            send = parse_rate(h["send"], f"{hw}.send") if "send" in h else nic
            recv = parse_rate(h["recv"], f"{hw}.recv") if "recv" in h else nic
            disk = parse_bytes_rate(h["disk"], f"{hw}.disk") if "disk" in h else None
            hdelay = parse_latency(h["latency"], f"{hw}.latency") if "latency" in h else 0.0
            out["latency"] = out["latency"] or hdelay > 0
            host = {"name": hname, "subnet": sname, "namespace": ns_name(lab, hname),
                    "address": f"{NET_PREFIX}.{idx}.{HOST_FIRST + j}", "port": PORT,
                    "send": send, "recv": recv, "disk_write": disk, "latency": hdelay}
            sub["hosts"].append(hname)
            out["hosts"].append(host)
        out["subnets"].append(sub)
    return out
