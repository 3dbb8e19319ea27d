"""bench-netlab --pattern and --concurrent (scripts/bench-netlab, docs/netlab.md): many sources at
once on the lab that is up. Run by scripts/bench-netlab, not by hand.

--pattern all-to-all|random: one `hetcast push --pattern` from the first host per algorithm,
  every host a source of its own file (all-to-all: to every other host; random: to a seeded
  half of the others).
--concurrent K: K hosts (spread over the subnets) each run `hetcast push FILE --all` at the
  same moment, then the same K pushes one after another; the clock starts once every push's
  process is in its namespace, ready to exec hetcast (gated()).
Every copy is checked by sha256; times are set against the physical bound of the topology:
the largest volume any NIC or uplink must carry, one way, over its rate (x TCP goodput)."""
import json, os, random, subprocess, sys, threading, time
from bench_netlab_common import GOODPUT, dest_root, parse_size, sha256
root, hetcast, lab, d, sizes_arg, repeat, algos_arg, info_text, mode = sys.argv[1:10]
info, repeat = json.loads(info_text), int(repeat)
netlab = os.path.join(root, "scripts", "netlab")
hosts = info["hosts"]
first = hosts[0]
work = os.path.join(os.path.dirname(os.path.dirname(first["config"])), "many")
os.makedirs(work, exist_ok=True)
rows = []
reports = []  # every push at once and every pattern push, its whole report (hops included)


def note(msg):
    print(f"bench-netlab: {info['name']}: {msg}", file=sys.stderr, flush=True)


def make_file(h, size, seed):
    path = os.path.join(work, f"from-{h['name']}.bin")
    rng = random.Random(seed * 7919 + hosts.index(h))
    with open(path, "wb") as f:
        f.write(rng.randbytes(size))
    return path, sha256(path)


def bound(messages):
    """MESSAGES: (source host, [dest hosts], bytes). Every message leaves its source's NIC
    once, enters each destination's NIC, leaves its subnet once when a destination is
    elsewhere and enters each other subnet holding a destination once (sim/pattern_bound.hpp)."""
    vol = {}

    def add(key, n):
        vol[key] = vol.get(key, 0) + n
    for s, ds, n in messages:
        add(("out", s["name"]), n)
        for h in ds:
            add(("in", h["name"]), n)
        if len(info["subnets"]) > 1:
            remote = {h["subnet"] for h in ds} - {s["subnet"]}
            if remote:
                add(("up-out", s["subnet"]), n)
            for sub in remote:
                add(("up-in", sub), n)
    rate = {("out", h["name"]): h["send_bit_s"] for h in hosts}
    rate.update({("in", h["name"]): h["recv_bit_s"] for h in hosts})
    for s in info["subnets"]:
        rate[("up-out", s["name"])] = rate[("up-in", s["name"])] = s["uplink_bit_s"]
    key = max(vol, key=lambda k: vol[k] * 8 / rate[k])
    return vol[key] * 8 / (GOODPUT * rate[key]), f"{key[0]} {key[1]} at {rate[key] / 1e6:g} Mbit/s"


def run(h, *cmd, timeout=None):
    return subprocess.run([netlab, "run", lab, h["name"], *cmd], stdin=subprocess.DEVNULL, capture_output=True,
                          text=True, timeout=timeout)


def gated(h, *cmd):
    """CMD in h's namespace, held at a gate: returns once `netlab run`'s own start (a Python
    interpreter, about 0.3 s of CPU; eight at once on two cores took 2-3 s) is behind it;
    CMD runs when open_gate() is called, so a makespan counts hetcast, not the harness."""
    p = subprocess.Popen([netlab, "run", lab, h["name"], "sh", "-c", 'echo ready; read -r _ || exit 1; exec "$@"', "sh",
                          *cmd], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if p.stdout.readline().strip() != "ready":
        p.kill()
        raise SystemExit(f"bench-netlab: {h['name']}: {p.communicate()[1].strip()[-300:]}")
    return p


def open_gate(p):
    p.stdin.write("\n")
    p.stdin.close()
    p.stdin = None  # communicate() would flush it


def report_of(out):
    try:
        return json.loads(out)["reports"][0]
    except (ValueError, KeyError, IndexError):
        return None


def landed_right(messages, shas):
    """Every copy in place and intact; removes them."""
    good = True
    for (s, ds, _), want in zip(messages, shas):
        for h in ds:
            p = os.path.join(dest_root(h), f"from-{s['name']}.bin")
            good &= sha256(p) == want
            try:
                os.unlink(p)
            except FileNotFoundError:
                pass
    return good


def last_line(text, rc):
    return (text.strip().splitlines() or [f"exit status {rc}"])[-1]


def patterns(kind, size):
    rng = random.Random(size)
    files = {h["name"]: make_file(h, size, size) for h in hosts}
    messages, entries = [], []
    for h in hosts:
        others = [o for o in hosts if o is not h]
        ds = others if kind == "all-to-all" else sorted(rng.sample(others, max(1, len(others) // 2)),
                                                         key=hosts.index)
        messages.append((h, ds, size))
        entries.append({"source": h["name"], "file": files[h["name"]][0], "dests": [o["name"] for o in ds]})
    pfile = os.path.join(work, f"pattern-{kind}-{size}.yaml")
    with open(pfile, "w") as f:
        json.dump(entries, f)  # JSON is YAML
    phys, what = bound(messages)
    shas = [files[s["name"]][1] for s, _, _ in messages]
    print(f"#### pattern {kind}, {len(messages)} sources, {size >> 20} MiB each; physical bound {phys:.2f} s ({what})\n")
    print("| algorithm | achieved s | predicted s | report's bound s | × physical bound | achieved/predicted | copies |")
    print("|---|---|---|---|---|---|---|")
    for algo in [a for a in algos_arg.split(",") if a]:
        for _ in range(repeat):
            p = run(first, hetcast, "push", "--pattern", pfile, "--algo", algo, "--json", "-q", "--config",
                    first["config"], timeout=600)
            rep = report_of(p.stdout)
            ok = p.returncode == 0 and rep is not None and rep.get("ok", False)
            right = landed_right(messages, shas)
            if rep is not None:
                reports.append({"pattern": kind, "algorithm": algo, "report": rep})
            row = {"mode": f"pattern-{kind}", "size": size, "algorithm": rep.get("algorithm", algo) if rep else algo,
                   "ok": ok, "verified": right, "physical_bound": phys}
            if ok:
                a, pr, lb = float(rep["achieved"]), float(rep["predicted"]), float(rep["lower_bound"])
                row.update(achieved=a, predicted=pr, lower_bound=lb)
                print(f"| {algo} | {a:.2f} | {pr:.2f} | {lb:.2f} | {a / phys:.2f} | {a / pr:.2f} | "
                      f"{'all verified' if right else 'NOT all verified'} |")
            else:
                row["error"] = last_line(p.stderr, p.returncode)
                note(f"pattern --algo {algo} failed: {row['error']}")
                print(f"| {algo} | failed: {row['error'][:80]} | | | | | |")
            rows.append(row)
    print()


def cpu_times():
    """(busy, total) jiffies of the whole machine, from /proc/stat: the emulation, the
    daemons and the CLIs share its cores, so a run that keeps them busy is bound by them."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    idle = v[3] + (v[4] if len(v) > 4 else 0)
    return sum(v) - idle, sum(v)


def concurrent(k, size):
    by_subnet = {}
    for h in hosts:
        by_subnet.setdefault(h["subnet"], []).append(h)
    order = [h for group in zip(*by_subnet.values()) for h in group]
    order += [h for h in hosts if h not in order]
    pushers = order[:k]
    files = {h["name"]: make_file(h, size, size + 1) for h in pushers}
    messages = [(h, [o for o in hosts if o is not h], size) for h in pushers]
    shas = [files[h["name"]][1] for h in pushers]
    phys, what = bound(messages)
    print(f"#### {k} pushes at once ({', '.join(h['name'] for h in pushers)}), {size >> 20} MiB each to every other "
          f"host; physical bound {phys:.2f} s ({what})\n")
    print("| run | makespan s | × physical bound | CPU busy | pushes ok | copies verified | failures |")
    print("|---|---|---|---|---|---|---|")
    for _ in range(repeat):
        for label in ("at once", "one after another"):
            procs = [(h, gated(h, hetcast, "push", files[h["name"]][0], "--all", "--algo", "auto", "--json", "-q",
                               "--config", h["config"])) for h in pushers]
            t0 = time.monotonic()
            c0 = cpu_times()
            results, pushes = [], []
            if label == "at once":
                for _, pr in procs:
                    open_gate(pr)
                done = {}

                def wait(h, pr):
                    out, err = pr.communicate(timeout=900)
                    done[h["name"]] = (time.monotonic() - t0, pr.returncode, out, err)
                threads = [threading.Thread(target=wait, args=(h, pr)) for h, pr in procs]
                for t in threads:
                    t.start()
                for t in threads:
                    t.join()
                for h, _ in procs:
                    end, rc, out, err = done[h["name"]]
                    results.append((h, rc, out, err))
                    r = report_of(out) or {}
                    reports.append({"run": len(rows), "host": h["name"], "ended": end, "report": r})
                    pushes.append({"host": h["name"], "ended": end, "achieved": r.get("achieved"),
                                   "predicted": r.get("predicted"), "algorithm": r.get("algorithm"),
                                   "beside": r.get("beside"), "beside_at_plan": r.get("beside_at_plan"),
                                   "predicted_at_plan": r.get("predicted_at_plan")})
                note("at once, each push: " + ", ".join(
                    f"{p['host']} ended {p['ended']:.2f} s (ran {p['achieved'] or 0:.2f}, predicted "
                    f"{p['predicted'] or 0:.2f}, {p['algorithm']}, beside {p['beside'] or 0}"
                    + (f"; planned beside {p['beside_at_plan']}: {p['predicted_at_plan']:.2f}"
                       if p.get("predicted_at_plan") else "") + ")" for p in pushes))
            else:
                for h, pr in procs:
                    open_gate(pr)
                    out, err = pr.communicate(timeout=900)
                    results.append((h, pr.returncode, out, err))
            span = time.monotonic() - t0
            c1 = cpu_times()
            busy = (c1[0] - c0[0]) / max(1, c1[1] - c0[1])
            fails = [f"{h['name']}: {last_line(err, rc)}" for h, rc, out, err in results
                     if rc != 0 or not (report_of(out) or {}).get("ok", False)]
            right = landed_right(messages, shas)
            rows.append({"mode": f"concurrent-{k}", "run": label, "size": size, "makespan": span, "cpu_busy": busy,
                         "physical_bound": phys, "ok": len(results) - len(fails), "verified": right, "failures": fails,
                         "pushes": pushes})
            print(f"| {label} | {span:.2f} | {span / phys:.2f} | {busy:.0%} | {len(results) - len(fails)} of {len(results)} | "
                  f"{'all' if right else 'NOT all'} | {'; '.join(fails)[:160]} |")
    print()
    misses = sorted(abs(p["achieved"] / p["predicted"] - 1) for r in rows if r.get("mode") == f"concurrent-{k}"
                    for p in r.get("pushes", []) if p.get("achieved") and p.get("predicted"))
    if misses:
        within = sum(1 for m in misses if m <= 0.15)
        print(f"pushes at once that predicted their own time within 15%: {within} of {len(misses)}, median "
              f"|achieved/predicted - 1| {misses[len(misses) // 2]:.2f}\n")


kind, _, arg = mode.partition(":")
for s in sizes_arg.split(","):
    size = parse_size(s)
    if kind == "pattern":
        patterns(arg, size)
    else:
        concurrent(int(arg), size)
with open(os.path.join(d, "many.json"), "w") as f:
    json.dump(rows, f, indent=1)
if reports:
    with open(os.path.join(d, "reports.json"), "w") as f:
        json.dump(reports, f)
