#!/usr/bin/env python3
"""Four hetcast nodes in this process: node n0 broadcasts a NumPy array, which the three
others take without a copy; pushes a file, which lands under their roots, with its progress
shown; then starts a second, rate-capped push of the file and cancels it half-way.
A real cluster runs one Node (or hetcastd) per host with a measured map instead; on
loopback nothing slows the map's slow links, so pushes beat their predictions here.
    usage: broadcast.py [--file-mib N]"""
import argparse
import hashlib
import os
import shutil
import sys
import tempfile
import time

import numpy as np

import hetcast

# Four hosts in two subnets: 1 Gbit/s inside a subnet, 100 Mbit/s across.
NAMES = ["n0", "n1", "n2", "n3"]
MAP = "nodes: [%s]\nlatency:\n%s\nbandwidth:\n%s\n" % (
    ", ".join(NAMES),
    "\n".join("  - [%s]" % ", ".join("0" if i == j else ("1e-4" if i % 2 == j % 2 else "2e-3")
                                      for j in range(4)) for i in range(4)),
    "\n".join("  - [%s]" % ", ".join("0" if i == j else ("125e6" if i % 2 == j % 2 else "12.5e6")
                                      for j in range(4)) for i in range(4)))


def resident():
    """Resident memory of this process (the interpreter, NumPy and the four nodes), bytes."""
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def digest(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def describe(what, report):
    failed = [o for o in report["outcomes"] if not o["ok"]]
    print(f"{what}: {report['bytes']} bytes with {report['algorithm']}, achieved {report['achieved']:.3f} s, "
          f"predicted {report['predicted']:.3f} s, bound {report['lower_bound']:.3f} s, "
          f"{len(report['outcomes']) - len(failed)} of {len(report['outcomes'])} delivered"
          + (f" ({failed[0]['error']})" if failed else ""))


def main():
    args = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    args.add_argument("--file-mib", type=int, default=64, help="size of the pushed file (default 64)")
    file_size = max(1, args.parse_args().file_mib) << 20

    root = tempfile.mkdtemp(prefix="hetcast-example-")
    ca = hetcast.ClusterCa("example")
    nodes = [hetcast.Node(n, ca.issue(n), dest_root=os.path.join(root, n)) for n in NAMES]
    for node in nodes:
        node.start()
    members = [(node.name, "127.0.0.1", node.port) for node in nodes]
    network = hetcast.Network(MAP)
    for node in nodes:
        node.join(members, network)

    # 1. A NumPy array: sent from its own memory, received into one buffer per node.
    weights = np.random.default_rng(1).standard_normal((512, 1024), dtype=np.float32)
    report = nodes[0].start_broadcast(weights).wait()
    describe("array", report)
    intact = 0
    for node in nodes[1:]:
        got = node.receive(timeout=10)
        received = np.frombuffer(got, dtype=np.float32).reshape(weights.shape)  # no copy
        intact += bool(np.array_equal(received, weights))
    ok = report["ok"] and intact == 3
    print(f"array: {intact} of 3 nodes hold an intact copy")

    # 2. A file, read piece by piece and landed once its checksum matches: memory stays
    # bounded whatever its size. Progress callbacks run on a node's thread.
    path = os.path.join(root, "checkpoint.bin")
    with open(path, "wb") as f:
        for _ in range(file_size >> 20):
            f.write(os.urandom(1 << 20))
    before = peak = resident()
    shown = [-1]

    def progress(p):
        nonlocal peak
        peak = max(peak, resident())
        tenth = 10 * p["delivered"] // max(p["owed"], 1)
        if tenth > shown[0]:
            shown[0] = tenth
            print(f"  file: {100 * p['delivered'] // max(p['owed'], 1)}% delivered", file=sys.stderr)

    report = nodes[0].start_push([path], name="ckpt/checkpoint.bin", on_progress=progress).wait()
    describe("file", report)
    want = digest(path)
    landed = sum(digest(os.path.join(root, n, "ckpt", "checkpoint.bin")) == want for n in NAMES[1:])
    print(f"file: {landed} of 3 nodes hold an intact copy; resident memory grew by at most "
          f"{(peak - before) >> 20} MiB while pushing {file_size >> 20} MiB")
    ok = ok and report["ok"] and landed == 3

    # 3. The same file again at a quarter of its size per second, cancelled half-way: the
    # destinations drop what they hold of it (one that had it all may keep it, whole).
    job = nodes[0].start_push([path], name="second.bin", bwlimit=file_size // 4)
    while not job.done():
        p = job.progress()
        if p["owed"] and 2 * p["delivered"] >= p["owed"]:
            break
        time.sleep(0.02)
    cancelled = job.cancel("no longer wanted")
    report = job.wait()
    describe("cancelled push", report)
    time.sleep(0.5)  # a late piece would show
    left = [os.path.join(d, f) for n in NAMES[1:] for d, _, fs in os.walk(os.path.join(root, n))
            for f in fs if f.endswith(".part")]
    copies = [os.path.join(root, n, "second.bin") for n in NAMES[1:] if os.path.exists(os.path.join(root, n, "second.bin"))]
    whole = all(digest(c) == want for c in copies)
    print(f"cancelled push: {len(copies)} copies landed, {len(left)} temporaries left")
    ok = ok and cancelled and not report["ok"] and len(copies) < 3 and whole and not left

    for node in nodes:
        node.stop()
    shutil.rmtree(root)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
