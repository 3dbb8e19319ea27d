"""What the bench-netlab helpers (bench_netlab_compare.py, bench_netlab_many.py) share."""
import hashlib, re, sys

GOODPUT = 0.956  # TCP goodput over the shaped rate on netlab links (1448/1514; docs/netlab.md)


def parse_size(s):
    m = re.fullmatch(r"\s*(\d+)\s*([kmg]i?b|b)?\s*", s, re.I)
    if not m:
        sys.exit(f"bench-netlab: bad size '{s}' (e.g. 32MiB, 8MB, 1048576)")
    unit = (m.group(2) or "b").lower()
    return int(m.group(1)) * {"b": 1, "kb": 10**3, "mb": 10**6, "gb": 10**9,
                              "kib": 2**10, "mib": 2**20, "gib": 2**30}[unit]


def dest_root(h):
    for line in open(h["config"]):
        m = re.match(r"\s*dest_root:\s*(\S+)", line)
        if m:
            return m.group(1).strip("'\"")
    sys.exit(f"bench-netlab: no dest_root in {h['config']}")


def sha256(path):
    try:
        with open(path, "rb") as f:
            return hashlib.file_digest(f, "sha256").hexdigest() if hasattr(hashlib, "file_digest") \
                else hashlib.sha256(f.read()).hexdigest()
    except OSError:
        return None
