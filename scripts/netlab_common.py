"""What scripts/netlab and its modules share: names, paths, rates, errors, commands run on the
machine, a lab's saved state, and stopping processes."""

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time

try:
    import yaml
except ImportError:  # pragma: no cover - depends on the machine
    # A python3 of its own (pyenv, a venv) may lack PyYAML; Debian's has it with python3-yaml.
    if sys.executable != "/usr/bin/python3" and os.path.exists("/usr/bin/python3") \
            and not os.environ.get("NETLAB_REEXEC"):
        os.environ["NETLAB_REEXEC"] = "1"
        os.execv("/usr/bin/python3", ["/usr/bin/python3"] + sys.argv)
    yaml = None


PREFIX = "hcl-"                      # namespaces and links
RUN_ROOT = "/run/hetcast-netlab"     # one folder per lab that is up
DATA_ROOT = "/var/tmp/hetcast-netlab"  # daemons' folders (received files are not kept in RAM)
NET_PREFIX = "198.18"                # 198.18.0.0/15: subnet i is 198.18.i.0/24, router .1, hosts .11 ...
PORT = 7700
NAME_RE = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_-]*$")
LAB_NAME_MAX = 40
NODE_NAME_MAX = 11                   # PREFIX + name must fit a link name (15 characters)
RESERVED = {"router", "sw"}
HOST_FIRST = 11                      # first host address in a subnet

# Shaping: HTB on the egress of every link end, one parent class per link (rate = ceil).
# Bursts are about a millisecond at the rate (at least two full frames): veths hand whole
# GSO packets (up to 64 KiB) to the qdisc, so what passes at once is at most one of those.
# Every class queue is a byte FIFO of about QUEUE_MS at the full rate, so a full queue adds
# tens of milliseconds, not seconds. NETLAB_GSO_MAX (bytes, e.g. 1514) caps the GSO packets
# the hosts build: finer-grained shaping of short messages, more CPU per byte.
BURST_MS = 1.0
BURST_MIN = 2 * 1514
QUEUE_MS = 25.0
QUEUE_MIN = 4 * 65536
QUANTUM = 30000                      # bytes a class sends per round when classes share
GSO_MAX = os.environ.get("NETLAB_GSO_MAX", "65536")

# Queueing per link end (docs/netlab.md, "Queues"): 'fair' gives every host pair its own class
# (a host's fq_codel NIC); 'fifo' is one tail-drop byte FIFO of BUFFER bytes (a switch port or
# router uplink). 'realistic' = fair at each host's own egress, fifo on switch ports and uplinks.
QUEUES = ("realistic", "fifo", "fair")
BUFFER_DEFAULT = 512 * 1024
ACK_FIRST = os.environ.get("NETLAB_ACK_FIRST", "1") != "0"
CCS = ("cubic", "bbr")
CC_DEFAULT = "cubic"                 # what workstations run (the Linux default)

HOST_KEYS = {"name", "nic", "send", "recv", "disk", "latency"}
SUBNET_KEYS = {"name", "uplink", "hosts", "latency", "queues", "buffer"}
TOP_KEYS = {"name", "subnets", "queues", "buffer", "cc"}


class Fail(Exception):
    """An error reported as one line: 'netlab: <text>'."""


def die(msg, code=1):
    print("netlab: " + msg, file=sys.stderr)
    sys.exit(code)


def warn(msg):
    print("netlab: " + msg, file=sys.stderr)


def ns_name(lab, what):
    return f"{PREFIX}{lab}.{what}"


# --- commands run on the machine -------------------------------------------------------------

def sh(args, check=True, quiet=False):
    """Runs a command; on failure raises Fail with its first line of stderr."""
    p = subprocess.run(args, stdin=subprocess.DEVNULL, capture_output=True, text=True)
    if check and p.returncode != 0:
        err = (p.stderr.strip() or p.stdout.strip() or f"exit status {p.returncode}").splitlines()[0]
        raise Fail(f"'{' '.join(args)}' failed: {err}")
    return p


def nsx(ns, *args, check=True):
    return sh(["ip", "netns", "exec", ns] + list(args), check=check)


def need_root():
    if os.geteuid() != 0:
        die("needs root (network namespaces)")
    for tool in ("ip", "tc"):
        if not shutil.which(tool):
            die(f"'{tool}' not found: install iproute2")


def lab_namespaces(lab=None):
    """Namespaces with the prefix (of one lab, or of all); their labs."""
    p = sh(["ip", "netns", "list"], check=False)
    names = [line.split()[0] for line in p.stdout.splitlines() if line.strip()]
    out = []
    for n in names:
        if not n.startswith(PREFIX) or "." not in n:
            continue
        if lab is None or n.startswith(f"{PREFIX}{lab}."):
            out.append(n)
    return out


def state_dir(lab):
    return os.path.join(RUN_ROOT, lab)


def load_state(lab, required=True):
    try:
        with open(os.path.join(state_dir(lab), "lab.json")) as f:
            return json.load(f)
    except FileNotFoundError:
        if required:
            raise Fail(f"no lab '{lab}' is up (no {state_dir(lab)}/lab.json; 'netlab info' lists the labs)")
        return None
    except (OSError, ValueError) as e:
        raise Fail(f"{state_dir(lab)}/lab.json: unreadable: {e}")


def save_json(path, obj):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(obj, f, indent=2)
        f.write("\n")
    os.replace(tmp, path)


def load_daemons(lab):
    try:
        with open(os.path.join(state_dir(lab), "daemons.json")) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def alive(pid):
    """True while pid runs (a zombie, waiting for its parent to reap it, does not)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


def kill_all(pids, grace=5.0):
    """SIGTERM, up to grace seconds, then SIGKILL."""
    pids = [p for p in pids if p != os.getpid()]
    for p in pids:
        try:
            os.kill(p, signal.SIGTERM)
        except ProcessLookupError:
            pass
    end = time.monotonic() + grace
    while time.monotonic() < end and any(alive(p) for p in pids):
        time.sleep(0.05)
    for p in pids:
        if alive(p):
            try:
                os.kill(p, signal.SIGKILL)
            except ProcessLookupError:
                pass
    # A killed process still runs until the kernel has torn it down (its sockets, its files
    # on a RAM file system), which under load took more than 2 s once (the netlab test).
    end = time.monotonic() + 10
    while time.monotonic() < end and any(alive(p) for p in pids):
        time.sleep(0.05)


# --- hosts, the checkout, signals --------------------------------------------------------------

def find_host(st, name):
    for h in st["hosts"]:
        if h["name"] == name:
            return h
    raise Fail(f"lab '{st['name']}' has no host '{name}' (hosts: {', '.join(h['name'] for h in st['hosts'])})")


def repo_root():
    return os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


GOODPUT = 0.956  # one TCP stream's goodput over the shaped rate (1448/1514)


class Stop(Exception):
    """A signal while 'up' or 'daemons' builds: what they built is taken down."""


def on_signal(signum, _frame):
    raise Stop(f"stopped by signal {signum}")


def unmount(d):
    """The tmpfs 'daemons' mounted on the lab's folder, if any (its files go with it)."""
    if os.path.ismount(d):
        p = sh(["umount", "--lazy", d], check=False)
        if p.returncode != 0:
            warn(f"cannot unmount {d}: {p.stderr.strip()}")
