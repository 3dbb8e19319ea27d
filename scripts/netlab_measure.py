"""netlab measure: TCP goodput of flows run at the same time, with python sockets in the
hosts' namespaces (the script runs itself there as _send and _recv)."""

import json
import os
import subprocess
import sys
import time

from netlab_common import Fail, die, find_host, load_state, need_root


# --- measure: TCP goodput with python sockets -------------------------------------------------

def cmd_measure(argv):
    usage = "usage: netlab measure LAB SRC:DST [SRC:DST...] [--seconds S] [--warmup S] [--json]"
    seconds, warmup, as_json, pairs = 1.0, 0.3, False, []
    rest = list(argv)
    lab = None
    while rest:
        a = rest.pop(0)
        if a in ("--seconds", "--warmup") and rest:
            try:
                v = float(rest.pop(0))
            except ValueError:
                die(usage, 2)
            if a == "--seconds":
                seconds = v
            else:
                warmup = v
        elif a == "--json":
            as_json = True
        elif a.startswith("-"):
            die(usage, 2)
        elif lab is None:
            lab = a
        else:
            if a.count(":") != 1:
                die(usage, 2)
            pairs.append(tuple(a.split(":")))
    if lab is None or not pairs or seconds <= 0 or warmup < 0:
        die(usage, 2)
    need_root()
    try:
        st = load_state(lab)
        for s, d in pairs:
            find_host(st, s), find_host(st, d)
            if s == d:
                raise Fail(f"{s}:{d}: a flow needs two hosts")
        results = measure(st, pairs, seconds, warmup)
    except Fail as e:
        die(str(e))
    if as_json:
        print(json.dumps(results, indent=2))
    else:
        for r in results:
            print(f"{r['src']} -> {r['dst']}: {r['mbit_s']:.1f} Mbit/s "
                  f"({r['bytes']} bytes in {r['seconds']:.2f} s after {warmup:g} s warm-up)")


def measure(st, pairs, seconds, warmup):
    me = os.path.join(os.path.dirname(os.path.abspath(__file__)), "netlab")
    receivers, senders = {}, []
    try:
        for dst in sorted({d for _, d in pairs}):
            h = find_host(st, dst)
            n = sum(1 for _, d in pairs if d == dst)
            p = subprocess.Popen(["ip", "netns", "exec", h["namespace"], sys.executable, me, "_recv", h["address"],
                                  str(n), str(seconds), str(warmup)],
                                 stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            line = p.stdout.readline().split()
            if len(line) != 2 or line[0] != "port":
                p.kill()
                raise Fail(f"receiver on {dst} did not start: {p.stderr.read().strip()}")
            receivers[dst] = (p, int(line[1]), h["address"])
        for src, dst in pairs:
            h = find_host(st, src)
            _, port, addr = receivers[dst]
            senders.append(subprocess.Popen(
                ["ip", "netns", "exec", h["namespace"], sys.executable, me, "_send", addr, str(port), src,
                 str(warmup + seconds + 0.3)],
                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
        for p in senders:
            try:
                _, err = p.communicate(timeout=warmup + seconds + 30)
            except subprocess.TimeoutExpired:
                raise Fail("a sender did not finish in time")
            if p.returncode != 0:
                raise Fail(f"sender failed: {err.strip()}")
        results = {}
        for dst, (p, _, _) in receivers.items():
            try:
                out, err = p.communicate(timeout=30)
            except subprocess.TimeoutExpired:
                raise Fail(f"receiver on {dst} did not finish in time")
            if p.returncode != 0:
                raise Fail(f"receiver on {dst} failed: {err.strip()}")
            for r in json.loads(out):
                results.setdefault((r["src"], dst), []).append(r)
        out = []
        for src, dst in pairs:
            r = results[(src, dst)].pop(0)
            out.append({"src": src, "dst": dst, "bytes": r["bytes"], "seconds": r["seconds"],
                        "mbit_s": r["bytes"] * 8 / r["seconds"] / 1e6})
        return out
    finally:
        for p in senders + [r[0] for r in receivers.values()]:
            if p.poll() is None:
                p.kill()
                p.wait()


def helper_recv(addr, n, seconds, warmup):
    """Accepts n connections; per connection the bytes received in [first byte + warmup,
    first byte + warmup + seconds]; JSON on stdout."""
    import socket
    import threading
    n, seconds, warmup = int(n), float(seconds), float(warmup)
    ls = socket.socket()
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind((addr, 0))
    ls.listen(n)
    ls.settimeout(10)
    print("port", ls.getsockname()[1], flush=True)
    results, threads = [], []

    def drain(c):
        c.settimeout(warmup + seconds + 20)
        buf = bytearray(1 << 18)
        name = b""
        while not name.endswith(b"\n"):
            k = c.recv(1)
            if not k:
                break
            name += k
        first = None
        got = 0
        t_start = t_end = None
        while True:
            k = c.recv_into(buf)
            now = time.monotonic()
            if not k:
                break
            if first is None:
                first = now
                t_start, t_end = first + warmup, first + warmup + seconds
            if t_start <= now <= t_end:
                got += k
        c.close()
        results.append({"src": name.decode().strip(), "bytes": got, "seconds": seconds})

    for _ in range(n):
        c, _ = ls.accept()
        t = threading.Thread(target=drain, args=(c,))
        t.start()
        threads.append(t)
    for t in threads:
        t.join()
    print(json.dumps(results))


def helper_send(addr, port, name, duration):
    import socket
    s = socket.create_connection((addr, int(port)), timeout=5)
    s.settimeout(30)
    s.sendall(name.encode() + b"\n")
    chunk = b"\0" * (1 << 16)
    end = time.monotonic() + float(duration)
    while time.monotonic() < end:
        s.sendall(chunk)
    s.shutdown(socket.SHUT_WR)
    s.recv(1)
    s.close()
