"""netlab daemons: a cluster CA and an identity per host, hetcastd in every host's namespace,
and the topology's own map for them (--true-map)."""

import json
import os
import shutil
import signal
import subprocess
import time

from netlab_common import (
    DATA_ROOT,
    Fail,
    GOODPUT,
    PORT,
    Stop,
    die,
    kill_all,
    load_daemons,
    load_state,
    need_root,
    on_signal,
    repo_root,
    save_json,
    sh,
    state_dir,
    unmount,
)
from netlab_topology import link_queues


def daemons_using(folder):
    """hetcastd processes whose command line names a path under folder: a lab's daemons even
    when its state, and with it the list of their pids, is gone."""
    key = os.fsencode(folder.rstrip("/") + "/")
    out = []
    for e in os.listdir("/proc"):
        if not e.isdigit():
            continue
        try:
            with open(f"/proc/{e}/cmdline", "rb") as f:
                cmd = f.read()
            if key in cmd and b"hetcastd" in cmd:
                out.append(int(e))
        except OSError:
            pass
    return out


def cmd_daemons(argv):
    usage = ("usage: netlab daemons LAB [--hetcastd PATH] [--hetcast PATH] [--dir DIR] [--disk tmpfs|shared] [--port N] "
             "[--serve DIR]... "
             "[--extra 'KEY: VALUE']... [--true-map]")
    if not argv or argv[0].startswith("-"):
        die(usage, 2)
    lab = argv[0]
    hetcastd = os.path.join(repo_root(), "build", "daemon", "hetcastd")
    hetcast = None
    base = DATA_ROOT
    port = PORT
    extra = []
    serve = []
    timeout = 10.0
    disk = "tmpfs"
    true_map = False
    rest = argv[1:]
    while rest:
        opt = rest.pop(0)
        if opt == "--true-map":
            true_map = True
        elif opt in ("--hetcastd", "--hetcast", "--dir", "--disk", "--port", "--extra", "--timeout", "--serve") and rest:
            val = rest.pop(0)
            if opt == "--disk":
                if val not in ("tmpfs", "shared"):
                    die(f"--disk {val}: tmpfs or shared expected", 2)
                disk = val
            elif opt == "--serve":
                serve.append(os.path.abspath(val))
            elif opt == "--hetcastd":
                hetcastd = val
            elif opt == "--hetcast":
                hetcast = val
            elif opt == "--dir":
                base = val
            elif opt == "--port":
                if not val.isdigit() or not 1 <= int(val) <= 65535:
                    die(f"--port {val}: 1..65535 expected", 2)
                port = int(val)
            elif opt == "--timeout":
                timeout = float(val)
            else:
                extra.append(val)
        else:
            die(usage, 2)
    need_root()
    try:
        st = load_state(lab)
    except Fail as e:
        die(str(e))
    hetcastd = os.path.abspath(hetcastd)
    if not os.access(hetcastd, os.X_OK):
        die(f"no hetcastd at {hetcastd} (build it with scripts/build, or give --hetcastd PATH)")
    # The CLI makes the identities: by default the one built next to hetcastd
    # (BUILD/tools/hetcast for BUILD/daemon/hetcastd).
    if hetcast is None:
        hetcast = os.path.join(os.path.dirname(os.path.dirname(hetcastd)), "tools", "hetcast")
    hetcast = os.path.abspath(hetcast)
    if not os.access(hetcast, os.X_OK):
        die(f"no hetcast at {hetcast} (it makes the daemons' identities: give --hetcast PATH)")
    if load_daemons(lab):
        die(f"daemons of lab '{lab}' are already started ('netlab down {lab}' stops them with the lab)")
    work = os.path.join(os.path.abspath(base), lab)
    if os.path.exists(work):
        if not os.path.exists(os.path.join(work, ".netlab")):
            die(f"{work} exists and was not made by netlab: give another --dir")
        unmount(work)
        shutil.rmtree(work)
    os.makedirs(work)
    # The lab's hosts share this machine's one disk, which a cluster's hosts do not: eleven
    # copies fsynced at once onto it took up to 0.6 s per 32 MiB push here (one-switch), a
    # tenth of the push. By default the daemons' folder is a RAM file system of its own.
    if disk == "tmpfs":
        p = sh(["mount", "-t", "tmpfs", "-o", "mode=0755", f"hetcast-netlab-{lab}", work], check=False)
        if p.returncode != 0:
            os.rmdir(work)
            die(f"cannot mount a tmpfs on {work} ({p.stderr.strip()}); --disk shared writes to {base}'s disk")
    open(os.path.join(work, ".netlab"), "w").close()
    sd = state_dir(lab)
    # The daemons read files for pushes from the lab's folder and from what --serve names.
    info = {"dir": work, "disk": disk, "hetcastd": hetcastd, "hetcast": hetcast, "port": port, "pids": {}, "configs": {},
            "logs": {}, "serve": [work] + serve}
    save_json(os.path.join(sd, "daemons.json"), info)
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, on_signal)
    try:
        start_daemons(st, info, extra, timeout, true_map)
    except (Fail, Stop, KeyboardInterrupt) as e:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        stop_daemons(info)
        os.remove(os.path.join(sd, "daemons.json"))
        unmount(work)
        shutil.rmtree(work, ignore_errors=True)
        die(f"daemons '{lab}' failed (stopped those started): {e}")
    first = st["hosts"][0]["name"]
    print(f"netlab: {len(info['pids'])} hetcastd up in lab '{lab}'; files under {work}")
    print(f"netlab: client config of {first}: {info['configs'][first]}")
    print(f"netlab: operator identity: {info['identity']} ('netlab run' sets HETCAST_IDENTITY to it)")
    print(f"netlab: e.g. scripts/netlab run {lab} {first} build/tools/hetcast status "
          f"--config {info['configs'][first]}")


def true_map(st):
    """The lab's map as its topology makes it, a network file for the daemons: each host's
    NIC and each uplink at GOODPUT x its rate (what a probe would find), the pair bandwidths
    left to the capacities they cross, the topology's delays (or 50 us where it has none)."""
    def rates(v):
        return "[" + ", ".join(f"{r * GOODPUT / 8:.6g}" for r in v) + "]"
    hosts = st["hosts"]
    subnets = st["subnets"]
    lines = [f"# the topology's own map of lab '{st['name']}' (scripts/netlab daemons --true-map)",
             "nodes: [" + ", ".join(h["name"] for h in hosts) + "]"]
    delay = max([s["latency"] for s in subnets] + [h["latency"] for h in hosts])
    lines.append(f"latency: {max(delay, 50e-6):.6g}")
    lines.append("subnets:")
    lines += ["  - [" + ", ".join(s["hosts"]) + "]" for s in subnets]
    lines.append("capacity:")
    lines.append("  egress: " + rates(h["send"] for h in hosts))
    lines.append("  ingress: " + rates(h["recv"] for h in hosts))
    lines.append("  uplink: " + rates(s["uplink"] for s in subnets))
    # What the daemons' probe reads from the hosts' qdiscs (docs/model.md): FIFO host NICs
    # in most subnets' hosts make the map say so; fair switches too make it 'fair'.
    host_q = [link_queues(s.get("queues", "fair")) for s in subnets for _ in s["hosts"]]
    fifo_hosts = sum(q[0] == "fifo" for q in host_q)
    if 2 * fifo_hosts > len(host_q):
        lines.append("  queues: fifo")
    elif all(q == ("fair",) * 3 for q in host_q):
        lines.append("  queues: fair")
    return "\n".join(lines) + "\n"


def start_daemons(st, info, extra, timeout, with_map=False):
    work = info["dir"]
    # The lab's own CA (keys/ca.pem), the operator's identity (keys/operator.pem, what
    # 'run' hands the hetcast CLI) and one member identity per host, all 0600.
    keys = os.path.join(work, "keys")

    def keys_cmd(*args):
        p = subprocess.run([info["hetcast"], "keys", *args, "--dir", keys], stdin=subprocess.DEVNULL,
                           capture_output=True, text=True)
        if p.returncode != 0:
            last = (p.stderr.strip().splitlines() or ["no output"])[-1]
            raise Fail(f"hetcast keys {' '.join(args)}: {last}")

    keys_cmd("init", "--cluster", f"netlab-{st['name']}")
    for h in st["hosts"]:
        keys_cmd("issue", h["name"])
    cluster = os.path.join(work, "cluster.yaml")
    with open(cluster, "w") as f:
        f.write(f"# lab '{st['name']}' (scripts/netlab): every member at its namespace address\nmembers:\n")
        for h in st["hosts"]:
            f.write(f"  - {{name: {h['name']}, host: {h['address']}, port: {info['port']}}}\n")
    info.update(keys=keys, identity=os.path.join(keys, "operator.pem"), cluster=cluster)
    for h in st["hosts"]:
        d = os.path.join(work, h["name"])
        os.makedirs(d)
        if with_map:
            os.makedirs(os.path.join(d, "state"))
            with open(os.path.join(d, "state", "map.yaml"), "w") as f:
                f.write(true_map(st))
        cfg = os.path.join(d, "hetcastd.yaml")
        with open(cfg, "w") as f:
            f.write(f"# host {h['name']} of lab '{st['name']}' (scripts/netlab daemons)\n"
                    f"name: {h['name']}\n"
                    f"listen: {h['address']}:{info['port']}\n"
                    f"state_dir: {d}/state\n"
                    f"dest_root: {d}/dest\n"
                    f"identity: {os.path.join(keys, h['name'] + '.pem')}\n"
                    f"cluster: {cluster}\n"
                    f"serve_roots: [{', '.join(json.dumps(d) for d in info['serve'])}]\n")
            for line in extra:
                f.write(line + "\n")
        log = os.path.join(d, "log")
        with open(log, "w") as lf:
            p = subprocess.Popen(["ip", "netns", "exec", h["namespace"], info["hetcastd"], "--config", cfg],
                                 stdin=subprocess.DEVNULL, stdout=lf, stderr=lf, start_new_session=True)
        info["pids"][h["name"]] = p.pid
        info["configs"][h["name"]] = cfg
        info["logs"][h["name"]] = log
        save_json(os.path.join(st["state_dir"], "daemons.json"), info)
    end = time.monotonic() + timeout
    for h in st["hosts"]:
        n = h["name"]
        while True:
            with open(info["logs"][n]) as f:
                text = f.read()
            if "listening on" in text:
                break
            pid = info["pids"][n]
            try:
                done = os.waitpid(pid, os.WNOHANG)[0]
            except ChildProcessError:
                done = pid
            if done:
                last = (text.strip().splitlines() or ["no output"])[-1]
                raise Fail(f"hetcastd on {n} exited: {last}")
            if time.monotonic() > end:
                raise Fail(f"hetcastd on {n} did not log 'listening on' within {timeout:g} s (log: {info['logs'][n]})")
            time.sleep(0.05)


def stop_daemons(info):
    pids = [p for p in info.get("pids", {}).values() if is_hetcastd(p)]
    kill_all(pids, grace=10.0)


def proc_state(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return "gone"


def is_hetcastd(pid):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return b"hetcastd" in f.read()
    except OSError:
        return False
