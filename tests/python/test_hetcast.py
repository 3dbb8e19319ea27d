"""The Python module against nodes in this process over loopback."""
import gc
import os
import sys
import tempfile
import threading
import time
import unittest

import numpy as np

import hetcast


def uniform_map(names):
    """Two subnets (even and odd indices): 1 GB/s inside, 100 MB/s across."""
    n = len(names)

    def rows(f):
        return "\n".join("  - [%s]" % ", ".join("0" if i == j else f(i, j) for j in range(n)) for i in range(n))
    return hetcast.Network("nodes: [%s]\nlatency:\n%s\nbandwidth:\n%s\n" % (
        ", ".join(names),
        rows(lambda i, j: "1e-4" if i % 2 == j % 2 else "2e-3"),
        rows(lambda i, j: "1e9" if i % 2 == j % 2 else "1e8")))


class Cluster:
    CA = hetcast.ClusterCa("python-tests")

    def __init__(self, n):
        self.dir = tempfile.TemporaryDirectory(prefix="hetcast-py-")
        self.names = ["n%d" % i for i in range(n)]
        self.nodes = [hetcast.Node(name, self.CA.issue(name), dest_root=os.path.join(self.dir.name, name))
                      for name in self.names]
        for node in self.nodes:
            node.start()
        self.members = [(node.name, "127.0.0.1", node.port) for node in self.nodes]

    def join(self, network):
        for node in self.nodes:
            node.join(self.members, network)

    def close(self):
        for node in self.nodes:
            node.stop()
        self.dir.cleanup()


class NodeTest(unittest.TestCase):
    def setUp(self):
        self.c = Cluster(4)
        self.c.join(uniform_map(self.c.names))

    def tearDown(self):
        self.c.close()

    def test_numpy_array_reaches_every_node_and_is_read_without_a_copy(self):
        rng = np.random.default_rng(5)
        for shape, dtype in [((1,), np.uint8), ((300, 7), np.float64), ((1 << 20,), np.int32)]:
            a = rng.integers(0, 100, size=shape).astype(dtype)
            report = self.c.nodes[0].broadcast(a)
            self.assertTrue(report["ok"], report)
            self.assertEqual(report["bytes"], a.nbytes)
            self.assertLessEqual(report["lower_bound"], report["predicted"] + 1e-12)
            for node in self.c.nodes[1:]:
                d = node.receive(timeout=10)
                self.assertIsNotNone(d)
                self.assertEqual(d.source, "n0")
                got = np.frombuffer(d, dtype=dtype).reshape(shape)
                self.assertTrue(np.array_equal(got, a))
                self.assertFalse(got.flags.writeable)  # hetcast's own buffer, shared
                self.assertFalse(got.flags.owndata)
                with self.assertRaises(ValueError):
                    got[...] = 0
            for node in self.c.nodes:
                self.assertIsNone(node.receive(timeout=0))

    def test_bytes_bytearray_memoryview_and_a_multicast_to_some(self):
        for data in [b"", b"x" * 1000, bytearray(range(256)), memoryview(b"abcdef")[1:4]]:
            report = self.c.nodes[1].multicast(data, ["n2", "n3"], algo="ecef")
            self.assertTrue(report["ok"], report)
            self.assertEqual(report["algorithm"], "ecef")
            for i in (2, 3):
                self.assertEqual(self.c.nodes[i].receive(timeout=10).tobytes(), bytes(data))
            self.assertIsNone(self.c.nodes[0].receive(timeout=0))

    def test_a_strided_array_is_refused(self):
        a = np.arange(100, dtype=np.int64)[::2]
        with self.assertRaises(hetcast.InputError):
            self.c.nodes[0].start_broadcast(a)

    def test_files_and_trees_land_verified(self):
        src = os.path.join(self.c.dir.name, "src")
        os.makedirs(os.path.join(src, "set", "sub"))
        blobs = {"ckpt.bin": os.urandom(2 << 20), "set/a": os.urandom(1000), "set/sub/b": os.urandom(70000)}
        for rel, data in blobs.items():
            with open(os.path.join(src, rel), "wb") as f:
                f.write(data)
        landed = []
        self.c.nodes[1].on_landed(landed.append)
        report = self.c.nodes[0].push([os.path.join(src, "ckpt.bin")], name="models/ckpt.bin")
        self.assertTrue(report["ok"], report)
        self.assertEqual([(l["path"], l["bytes"], l["source"]) for l in landed],
                         [(os.path.join(self.c.dir.name, "n1", "models", "ckpt.bin"), 2 << 20, "n0")])
        self.c.nodes[1].on_landed(None)
        report = self.c.nodes[0].push([os.path.join(src, "set")], recursive=True, name="data", dests=["n1", "n3"])
        self.assertTrue(report["ok"], report)
        for i, name in enumerate(self.c.names[1:], start=1):
            root = os.path.join(self.c.dir.name, name)
            with open(os.path.join(root, "models", "ckpt.bin"), "rb") as f:
                self.assertEqual(f.read(), blobs["ckpt.bin"])
            has_tree = os.path.exists(os.path.join(root, "data", "set", "a"))
            self.assertEqual(has_tree, i != 2)
            if has_tree:
                for rel in ("set/a", "set/sub/b"):
                    with open(os.path.join(root, "data", rel), "rb") as f:
                        self.assertEqual(f.read(), blobs[rel])
        with self.assertRaises(hetcast.InputError):
            self.c.nodes[0].start_push([os.path.join(src, "missing")])
        with self.assertRaises(hetcast.InputError):
            self.c.nodes[0].start_push([os.path.join(src, "ckpt.bin")], name="../escape")

    def test_exchange_of_offered_buffers(self):
        a, b = np.arange(5000, dtype=np.int16), b"second source"
        self.c.nodes[1].offer("a", a)
        self.c.nodes[2].offer("b", b)
        report = self.c.nodes[0].exchange([("n1", "a", []), ("n2", "b", ["n3"])], algo="wrp")
        self.assertTrue(report["ok"], report)
        self.assertEqual(len(report["outcomes"]), 3 + 1)
        seen = {}
        for i, node in enumerate(self.c.nodes):
            while (d := node.receive(timeout=0.3)) is not None:
                seen[(i, d.source)] = d.tobytes()
        self.assertEqual(seen, {(0, "n1"): a.tobytes(), (2, "n1"): a.tobytes(), (3, "n1"): a.tobytes(),
                                (3, "n2"): b})

    def test_errors_are_python_exceptions(self):
        with self.assertRaises(hetcast.InputError):
            self.c.nodes[0].start_multicast(b"x", ["nobody"])
        with self.assertRaises(hetcast.InputError):
            self.c.nodes[0].start_broadcast(b"x", algo="no-such-algorithm")
        with self.assertRaises(ValueError):  # InputError is a ValueError
            hetcast.Network("nodes: [a, b]\nlatency: [[0]]\n")
        lone = hetcast.Node("lone", Cluster.CA.issue("lone"))
        with self.assertRaises(hetcast.InputError):
            lone.start_broadcast(b"x")  # no map yet


class JobTest(unittest.TestCase):
    def setUp(self):
        self.c = Cluster(3)
        self.c.join(uniform_map(self.c.names))

    def tearDown(self):
        self.c.close()

    def test_progress_callbacks_and_cancel(self):
        data = os.urandom(64 << 20)
        progress, done = [], threading.Event()
        reports = []
        job = self.c.nodes[0].start_broadcast(
            data, on_progress=lambda p: progress.append(p["delivered"]),
            on_done=lambda r: (reports.append(r), done.set()))
        report = job.wait()
        self.assertTrue(done.wait(10))
        self.assertEqual(reports[0]["job"], report["job"])
        self.assertTrue(report["ok"], report)
        self.assertTrue(job.done())
        self.assertFalse(job.cancel())
        self.assertEqual(progress, sorted(progress))
        self.assertEqual(progress[-1], 2 * len(data))
        self.assertEqual(job.progress()["owed"], 2 * len(data))

        job = self.c.nodes[0].start_broadcast(data)
        self.assertTrue(job.cancel("from python"))
        report = job.wait()
        self.assertFalse(report["ok"])
        for o in report["outcomes"]:
            if not o["ok"]:
                self.assertIn("cancelled: from python", o["error"])

    def test_a_callback_that_raises_does_not_stop_the_job(self):
        def boom(_):
            raise RuntimeError("from the callback")
        raised, hook = [], sys.unraisablehook
        sys.unraisablehook = lambda u: raised.append(str(u.exc_value))
        try:
            job = self.c.nodes[0].start_broadcast(b"y" * 100000, on_progress=boom, on_done=boom)
            report = job.wait()
            deadline = time.monotonic() + 10
            while len(raised) < 2 and time.monotonic() < deadline:  # on_done runs after wait() returns
                time.sleep(0.01)
        finally:
            sys.unraisablehook = hook
        self.assertTrue(report["ok"], report)
        self.assertGreaterEqual(len(raised), 2)  # reported where Python reports such errors
        self.assertTrue(all(r == "from the callback" for r in raised))

    def test_dropping_a_node_with_a_running_job_aborts_it(self):
        node = self.c.nodes.pop(0)
        job = node.start_broadcast(os.urandom(32 << 20))
        node.stop()
        del node
        gc.collect()
        report = job.wait_for(30)
        self.assertIsNotNone(report)
        self.assertFalse(job.cancel())


class ProbeTest(unittest.TestCase):
    def test_probe_measures_the_members_and_every_node_plans_on_the_result(self):
        c = Cluster(3)
        self.addCleanup(c.close)
        self.assertIsNone(c.nodes[1].map)
        c.join(uniform_map(c.names))
        self.assertEqual(c.nodes[1].map.subnets, [])
        net = c.nodes[0].probe(repeats=1, seconds=0.1)
        self.assertEqual(net.names, ["n0", "n1", "n2"])
        self.assertEqual(sorted(n for g in net.subnets for n in g), ["n0", "n1", "n2"])
        for node in c.nodes:
            self.assertEqual(str(node.map), str(net))
        with self.assertRaises(hetcast.InputError):
            c.nodes[0].probe(seconds=0.001)


class ExampleTest(unittest.TestCase):
    def test_the_example_lands_every_copy_and_its_cancelled_push_leaves_nothing(self):
        import runpy
        import contextlib
        import io
        from unittest import mock
        here = os.path.dirname(os.path.abspath(__file__))
        example = os.path.join(here, "..", "..", "tools", "python", "examples", "broadcast.py")
        out = io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
            with mock.patch.object(sys, "argv", [example, "--file-mib", "4"]):
                with self.assertRaises(SystemExit) as e:
                    runpy.run_path(example, run_name="__main__")
        self.assertEqual(e.exception.code, 0, out.getvalue())
        for line in ("array: 3 of 3 nodes hold an intact copy", "file: 3 of 3 nodes hold an intact copy",
                     "0 temporaries left"):
            self.assertIn(line, out.getvalue())


if __name__ == "__main__":
    unittest.main()
