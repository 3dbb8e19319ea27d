#!/usr/bin/env python3
"""Four hetcast nodes in this process: node n0 broadcasts a NumPy array and pushes a file to
the three others, which take the array without a copy and find the file under their root.
A real cluster runs one Node (or hetcastd) per host with a measured map instead."""
import hashlib
import os
import sys
import tempfile

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


def main():
    root = tempfile.mkdtemp(prefix="hetcast-example-")
    ca = hetcast.ClusterCa("example")
    nodes = [hetcast.Node(n, ca.issue(n), dest_root=os.path.join(root, n)) for n in NAMES]
    for node in nodes:
        node.start()
    members = [(node.name, "127.0.0.1", node.port) for node in nodes]
    network = hetcast.Network(MAP)
    for node in nodes:
        node.join(members, network)

    weights = np.random.default_rng(1).standard_normal((512, 1024), dtype=np.float32)
    job = nodes[0].start_broadcast(weights, on_progress=lambda p: None)
    report = job.wait()
    print(f"array: {report['bytes']} bytes with {report['algorithm']} in {report['achieved']:.3f} s "
          f"(predicted {report['predicted']:.3f} s, bound {report['lower_bound']:.3f} s)")
    intact = 0
    for node in nodes[1:]:
        got = node.receive(timeout=10)
        received = np.frombuffer(got, dtype=np.float32).reshape(weights.shape)  # no copy
        intact += bool(np.array_equal(received, weights))

    path = os.path.join(root, "checkpoint.bin")
    with open(path, "wb") as f:
        f.write(os.urandom(3 << 20))
    report = nodes[0].push([path], name="ckpt/checkpoint.bin")
    want = hashlib.sha256(open(path, "rb").read()).hexdigest()
    landed = sum(
        hashlib.sha256(open(os.path.join(root, n, "ckpt", "checkpoint.bin"), "rb").read()).hexdigest() == want
        for n in NAMES[1:])
    print(f"{intact} of 3 nodes hold an intact array, {landed} of 3 an intact file")
    for node in nodes:
        node.stop()
    return 0 if intact == 3 and landed == 3 and report["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
