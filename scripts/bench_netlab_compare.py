"""bench-netlab --compare (scripts/bench-netlab, docs/netlab.md): hetcast push per algorithm against
a raw socat chain on the lab that is up; with --tree, push -r of a generated tree against tar over
socat (chain, loop, fan-out). Run by scripts/bench-netlab, not by hand."""
import hashlib, json, os, random, re, shlex, shutil, stat, statistics, subprocess, sys, time
from bench_netlab_common import GOODPUT, dest_root, parse_size, sha256
root, hetcast, lab, d, sizes_arg, repeat, algos_arg = sys.argv[1:8]
info, repeat = json.loads(sys.argv[8]), int(repeat)
tree_mode, nfiles = sys.argv[9] == "1", int(sys.argv[10])
# weighed: also push every algorithm auto weighed within WEIGHED of its pick (the push report's
# candidates, docs/json.md), after auto in each round.
weighed = len(sys.argv) > 11 and sys.argv[11] == "1"
near = int(sys.argv[12]) if len(sys.argv) > 12 else 0  # at most this many of them (0: all)
WEIGHED = 0.10
netlab = os.path.join(root, "scripts", "netlab")
PORT, BUF = 7790, 131072
hosts = info["hosts"]  # file order: subnet by subnet
src, dests = hosts[0], hosts[1:]
labdir = os.path.dirname(os.path.dirname(src["config"]))
work = os.path.join(labdir, "compare")
os.makedirs(work, exist_ok=True)


def note(msg):
    print(f"bench-netlab: {info['name']}: {msg}", file=sys.stderr, flush=True)


def human(n):
    for u, f in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n % f == 0:
            return f"{n // f} {u}"
    return f"{n} B"


def rm(path):
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


def bound(size):
    """Physical bound from the topology: every destination receives SIZE through its NIC, the
    source sends it once, every subnet without the source takes it in through its uplink and
    the source's subnet sends it out through its own; each at GOODPUT x the shaped rate."""
    terms = [(src["send_bit_s"], f"{src['name']} sends at")]
    terms += [(h["recv_bit_s"], f"{h['name']} receives at") for h in dests]
    if len(info["subnets"]) > 1:
        terms += [(s["uplink_bit_s"], f"uplink {s['name']} " + ("out" if s["name"] == src["subnet"] else "in") + " at")
                  for s in info["subnets"]]
    rate, what = min(terms, key=lambda t: t[0])
    return size * 8 / (GOODPUT * rate), f"{what} {rate / 1e6:g} Mbit/s"


def netlab_run(host, *cmd, **kw):
    return [netlab, "run", lab, host["name"], *cmd]


# Which algorithms does this build know? 'hetcast plan --help' lists them.
listed = subprocess.run([hetcast, "plan", "--help"], capture_output=True, text=True).stdout
known = {"auto"} | set(re.findall(r"^  ([a-z][a-z0-9+-]*)\s", listed.partition("\nalgorithms:")[2].split("\n\n")[0], re.M))
algos, skipped = [], []
for a in [a for a in algos_arg.split(",") if a]:
    (algos if a in known else skipped).append(a)
for a in skipped:
    note(f"skipping --algo {a}: this hetcast does not know it")


def push(algo, source, want, limit, landed, check):
    """hetcast push of SOURCE (a file, or with -r a tree) to every other host; LANDED: where
    each copy lands; CHECK(path): the copy is right. Time: the report's achieved."""
    for f in landed:
        remove(f)
    recursive = ["-r"] if tree_mode else []
    t0 = time.monotonic()
    try:
        p = subprocess.run(netlab_run(src, hetcast, "push", *recursive, source, "--all", "--algo", algo, "--json", "-q",
                                      "--config", src["config"]),
                           stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=limit)
        out, err, rc = p.stdout, p.stderr, p.returncode
    except subprocess.TimeoutExpired:
        out, err, rc = "", f"timed out after {limit:.0f} s", -1
    wall = time.monotonic() - t0
    try:
        rep = json.loads(out)["reports"][0]  # docs/json.md: one report per file and algorithm
    except (ValueError, KeyError, IndexError):
        rep = None
    ok = rc == 0 and rep is not None and rep.get("ok", False)
    verified = all(check(f) for f in landed)
    for f in landed:
        remove(f)
    row = {"seconds": float(rep["achieved"]) if ok else None, "wall": wall, "ok": ok, "verified": verified,
           "algorithm": rep.get("algorithm", algo) if rep else algo,
           "predicted": rep.get("predicted") if rep else None, "bytes": rep.get("bytes") if rep else None,
           "candidates": rep.get("candidates", []) if rep else []}
    if ok:
        # When each destination had the last byte (hops) and when its copy had landed (outcomes).
        last = {}
        for h in rep.get("hops", []):
            last[h["to"]] = max(last.get(h["to"], 0.0), float(h["end"]))
        lands = [(float(o["achieved"]), last[o["dest"]]) for o in rep.get("outcomes", []) if o["dest"] in last]
        if lands:
            row["arrived"] = max(a for _, a in lands)
            row["landing"] = statistics.median(t - a for t, a in lands)
    if not ok:
        row["error"] = (err.strip().splitlines() or [f"exit status {rc}"])[-1]
        note(f"push --algo {algo} failed: {row['error']}")
    return row


def wait_listening(h, limit=10.0):
    end = time.monotonic() + limit
    while time.monotonic() < end:
        r = subprocess.run(netlab_run(h, "ss", "-Hltn", f"sport = :{PORT}"), capture_output=True, text=True,
                           stdin=subprocess.DEVNULL)
        if r.stdout.strip():
            return True
        time.sleep(0.05)
    return False


def pipelines(method, receivers, sender, limit):
    """RECEIVERS: (host, shell command) pairs, started in that order, each listening on PORT
    before the next starts; then SENDER on the source, released by 'go'. Time: from the go
    to the moment the last receiver's command has ended."""
    procs, errs = {}, []
    row = {"seconds": None, "wall": None, "ok": False, "verified": False, "algorithm": method, "predicted": None}
    try:
        for h, cmd in receivers:
            e = open(os.path.join(work, f"{method}-{h['name']}.err"), "w")
            errs.append(e)
            procs[h["name"]] = subprocess.Popen(netlab_run(h, "sh", "-c", cmd), stdin=subprocess.DEVNULL,
                                                stdout=subprocess.DEVNULL, stderr=e, start_new_session=True)
            if not wait_listening(h):
                raise RuntimeError(f"{h['name']} never listened on {PORT}")
        e = open(os.path.join(work, f"{method}-{src['name']}.err"), "w")
        errs.append(e)
        sp = subprocess.Popen(netlab_run(src, "sh", "-c", "read go; " + sender), stdin=subprocess.PIPE,
                              stdout=subprocess.DEVNULL, stderr=e, start_new_session=True)
        procs[src["name"]] = sp
        time.sleep(0.5)  # the source's shell is up and waits for 'go'
        t0 = time.monotonic()
        sp.stdin.write(b"go\n")
        sp.stdin.close()
        done = {}
        while len(done) < len(procs):
            now = time.monotonic()
            for n, p in procs.items():
                if n not in done and p.poll() is not None:
                    done[n] = now
            if now - t0 > limit:
                raise RuntimeError(f"timed out after {limit:.0f} s ({len(done)} of {len(procs)} done)")
            time.sleep(0.005)
        row["seconds"] = max(t for n, t in done.items() if n != src["name"]) - t0
        row["wall"] = max(done.values()) - t0
        bad = [n for n, p in procs.items() if p.returncode != 0]
        row["ok"] = not bad
        if bad:
            row["error"] = "exit status != 0 on " + ",".join(bad)
            note(f"{method}: {row['error']} (see {work}/{method}-HOST.err)")
    except RuntimeError as ex:
        row["error"] = str(ex)
        note(f"{method} failed: {ex}")
    finally:
        for p in procs.values():
            if p.poll() is None:
                try:
                    os.killpg(p.pid, 9)
                except ProcessLookupError:
                    pass
                p.wait()
        for e in errs:
            e.close()
    return row


LISTEN = f"socat -u -b {BUF} TCP-LISTEN:{PORT},reuseaddr STDOUT"


def send_to(h):
    return f"socat -u -b {BUF} STDIN TCP:{h['address']}:{PORT},retry=50,interval=0.1"


def chain(payload, size, want, limit):
    """socat through every host in file order: each stores the bytes and forwards them at
    once; started last to first, then the source sends."""
    files = {h["name"]: os.path.join(labdir, h["name"], "chain.bin") for h in dests}
    for f in files.values():
        remove(f)
    receivers = []
    for i in range(len(hosts) - 1, 0, -1):
        f = shlex.quote(files[hosts[i]["name"]])
        fwd = f" | tee {f} | {send_to(hosts[i + 1])}" if i < len(hosts) - 1 else f" > {f}"
        receivers.append((hosts[i], LISTEN + fwd))
    row = pipelines("chain", receivers, f"exec socat -u -b {BUF} OPEN:{shlex.quote(payload)},rdonly "
                                        f"TCP:{hosts[1]['address']}:{PORT},retry=50,interval=0.1", limit)
    row["verified"] = all(sha256(f) == want for f in files.values())
    for f in files.values():
        remove(f)
    return row


# --tree -----------------------------------------------------------------------------------

TREE_SEED = 20261125
MTIME0 = 1767225600  # 2026-01-01 UTC: every mtime is this plus a seeded offset, whole seconds


def make_tree(top, total, n):
    """N regular files totalling TOTAL bytes under TOP: about n/500 large ones (80% of the
    bytes, at least one) and the rest small, config-sized (log-normal, median about 2 KiB);
    nested directories (up to 5 deep, two empty), some symbolic links; modes 644 mostly, also
    755, 600, 640; seeded, so the same arguments always make the same tree."""
    rng = random.Random(TREE_SEED)
    remove(top)
    os.makedirs(top)
    os.chmod(top, 0o755)
    dirs = [("", 0)]
    for i in range(max(2, n // 12)):
        parent, depth = rng.choice([x for x in dirs if x[1] < 5])
        rel = os.path.join(parent, rng.choice(["etc", "conf", "lib", "share", "src", "data", "doc", "bin"]) + f"{i}")
        os.mkdir(os.path.join(top, rel), rng.choices([0o755, 0o750, 0o700], [90, 7, 3])[0])
        dirs.append((rel, depth + 1))
    big = max(1, n // 500) if n > 1 else 1
    small = n - big
    small_total = total // 5 if small else 0
    raw = [rng.lognormvariate(7.6, 1.2) for _ in range(small)]
    sizes = [int(r * small_total / sum(raw)) for r in raw] if small else []
    rest = total - sum(sizes)
    weights = [rng.uniform(1, 3) for _ in range(big)]
    bigs = [int(w * rest / sum(weights)) for w in weights]
    bigs[-1] += rest - sum(bigs)
    sizes = bigs + sizes
    rng.shuffle(sizes)
    names = []
    for i, sz in enumerate(sizes):
        parent = rng.choice(dirs)[0]
        ext = ".img" if sz > 1 << 20 else rng.choice([".conf", ".yaml", ".sh", ".txt", ".json", ""])
        rel = os.path.join(parent, f"f{i:05d}{ext}")
        path = os.path.join(top, rel)
        with open(path, "wb") as f:
            f.write(rng.randbytes(sz))
        os.chmod(path, rng.choices([0o644, 0o755, 0o600, 0o640], [70, 15, 10, 5])[0])
        t = MTIME0 + rng.randrange(0, 300 * 86400)
        os.utime(path, (t, t))
        names.append(rel)
    links = 0
    for i in range(max(2, n // 200)):
        parent = rng.choice(dirs)[0]
        target = os.path.relpath(rng.choice(names + [x[0] for x in dirs[1:]]), parent or ".")
        os.symlink(target, os.path.join(top, parent, f"link{i}"))
        links += 1
    os.symlink("/etc/hetcast/hetcastd.yaml", os.path.join(top, "outside-link"))  # leads out: kept as text
    for i in range(2):
        os.mkdir(os.path.join(top, rng.choice(dirs)[0], f"empty{i}"), 0o755)
    return {"files": n, "links": links + 1, "bytes": total}


def listing(top):
    """Every entry under TOP, sorted: path, type, mode, and mtime with sha256 (files) or the
    link's text; None when TOP is missing."""
    if not os.path.isdir(top):
        return None
    out = []
    for dp, dns, fns in os.walk(top):
        for n in dns + fns:
            p = os.path.join(dp, n)
            rel = os.path.relpath(p, top)
            st = os.lstat(p)
            if stat.S_ISLNK(st.st_mode):
                out.append((rel, "link", os.readlink(p)))
            elif stat.S_ISDIR(st.st_mode):
                out.append((rel, "dir", oct(stat.S_IMODE(st.st_mode))))
            elif stat.S_ISREG(st.st_mode):
                out.append((rel, "file", oct(stat.S_IMODE(st.st_mode)), st.st_mtime_ns, sha256(p)))
            else:
                out.append((rel, "other"))
    return sorted(out)


def tar_method(method, top, want, limit):
    """tar c on the source, tar x on every other host, over socat: 'tar-chain' pipelines
    through every host in file order (each extracts and forwards at once), 'tar-loop' sends
    to one host after the other, 'tar-fanout' to every host at once."""
    parent, name = os.path.dirname(top), os.path.basename(top)
    tar_c = f"tar c -C {shlex.quote(parent)} {shlex.quote(name)}"
    into = {h["name"]: os.path.join(labdir, h["name"], "tar") for h in dests}
    for x in into.values():
        remove(x)
        os.makedirs(x)

    def tar_x(h):
        return f"tar x -C {shlex.quote(into[h['name']])}"

    receivers = []
    if method == "tar-chain":
        for i in range(len(hosts) - 1, 0, -1):
            h = hosts[i]
            if i == len(hosts) - 1:
                receivers.append((h, f"{LISTEN} | {tar_x(h)}"))
            else:
                fifo = shlex.quote(os.path.join(labdir, h["name"], "tar.fifo"))
                receivers.append((h, f"rm -f {fifo}; mkfifo {fifo}; {tar_x(h)} < {fifo} & t=$!; "
                                     f"{LISTEN} | tee -p {fifo} | {send_to(hosts[i + 1])}; r=$?; "
                                     f"wait $t || r=1; rm -f {fifo}; exit $r"))
        sender = f"{tar_c} | {send_to(hosts[1])}"
    else:
        receivers = [(h, f"{LISTEN} | {tar_x(h)}") for h in dests]
        if method == "tar-loop":
            sender = "; ".join(f"{tar_c} | {send_to(h)} || exit 1" for h in dests)
        else:
            sender = ("pids=; " + " ".join(f"({tar_c} | {send_to(h)}) & pids=\"$pids $!\";" for h in dests) +
                      " r=0; for p in $pids; do wait $p || r=1; done; exit $r")
    row = pipelines(method, receivers, sender, limit)
    row["verified"] = all(listing(os.path.join(x, name)) == want for x in into.values())
    for x in into.values():
        remove(x)
    return row


def remove(path):
    if os.path.isdir(path) and not os.path.islink(path):
        shutil.rmtree(path)
    else:
        rm(path)


def near_picks(r, have):
    """What auto weighed within WEIGHED of the predicted time of its pick, the pick aside, in
    the order auto tried them; one this hetcast cannot push by name is left out with a note."""
    pick = re.sub(r"^auto:", "", r["algorithm"])
    preds = {c["algorithm"]: float(c["predicted"]) for c in r["candidates"]}
    if pick not in preds:
        note(f"auto picked {pick}, which its candidates do not list: nothing else pushed")
        return []
    out, unknown = [], []
    for c in r["candidates"]:
        a = c["algorithm"]
        if a == pick or ("push", a) in have or a in out or float(c["predicted"]) > (1 + WEIGHED) * preds[pick]:
            continue
        # push --algo takes "X+ct", X's plan cut through, for every X it knows.
        (out if a in known or (a.endswith("+ct") and a[:-3] in known) else unknown).append(a)
    if near and len(out) > near:
        out.sort(key=lambda a: preds[a])
        note(f"--near {near}: {', '.join(out[near:])} not pushed")
        out = out[:near]
    if unknown:
        r["not_pushed"] = unknown
        note(f"auto weighed {', '.join(unknown)} within {WEIGHED:.0%} of {pick}; hetcast push --algo does not "
             f"know {'it' if len(unknown) == 1 else 'them'}: not pushed")
    note(f"auto picked {pick} ({preds[pick]:.2f} s predicted); within {WEIGHED:.0%}: {', '.join(out) or 'none'}")
    return out


rows, trees = [], {}
if tree_mode:
    methods = [("push", a) for a in algos] + [("tar", m) for m in ("tar-chain", "tar-fanout", "tar-loop")]
    note("rsync: not measured (it needs ssh or an rsync daemon on every host; the lab has neither)")
else:
    # 'socat-chain', not 'chain': hetcast has an algorithm of that name.
    methods = [("push", a) for a in algos] + [("chain", "socat-chain")]
for size in [parse_size(s) for s in sizes_arg.split(",") if s]:
    lb, _ = bound(size)
    limit = max(120.0, 40 * lb)
    if tree_mode:
        top = os.path.join(work, f"tree-{size}", "tree")
        note(f"making a tree of {nfiles} files, {human(size)} (seed {TREE_SEED}) in {os.path.dirname(top)}")
        trees[size] = make_tree(top, size, nfiles)
        want = listing(top)
        trees[size]["dirs"] = sum(e[1] == "dir" for e in want) + 1
        tar_bytes = subprocess.run(f"tar c -C {shlex.quote(os.path.dirname(top))} tree | wc -c", shell=True,
                                   capture_output=True, text=True, check=True).stdout.strip()
        trees[size]["tar_bytes"] = int(tar_bytes)
        landed = [os.path.join(dest_root(h), "tree") for h in dests]
    else:
        payload = os.path.join(work, f"payload-{size}.bin")
        subprocess.run(netlab_run(src, "sh", "-c", f"head -c {size} /dev/urandom > {shlex.quote(payload)}"),
                       check=True, stdin=subprocess.DEVNULL)
        want = sha256(payload)
        landed = [os.path.join(dest_root(h), os.path.basename(payload)) for h in dests]
    size_methods = list(methods)
    for run in range(1, repeat + 1):
        for kind, m in size_methods:  # one method at a time, interleaved across repeats
            if kind == "push" and tree_mode:
                r = push(m, top, want, limit, landed, lambda f: listing(f) == want)
            elif kind == "push":
                r = push(m, payload, want, limit, landed, lambda f: sha256(f) == want)
            elif kind == "tar":
                r = tar_method(m, top, want, limit)
            else:
                r = chain(payload, size, want, limit)
            r.update(method=m, size=size, run=run)
            rows.append(r)
            if weighed and m == "auto" and r["ok"] and size_methods == methods:
                size_methods[size_methods.index(("push", "auto")) + 1:1] = \
                    [("push", a) for a in near_picks(r, size_methods)]
            note(f"{human(size)} run {run} {m}: {r['seconds'] if r['seconds'] is None else round(r['seconds'], 2)} s, "
                 f"verified {r['verified']}")
    remove(os.path.dirname(top) if tree_mode else payload)

bounds = {}
for size in sorted({r["size"] for r in rows}):
    bounds[size] = bound(size)
with open(os.path.join(d, "compare.json"), "w") as f:
    json.dump({"topology": info["name"], "queues": sorted({s["queues"] for s in info["subnets"]}),
               "cc": info.get("cc"), "hosts": len(hosts), "subnets": len(info["subnets"]),
               "bound": {str(k): {"seconds": v[0], "why": v[1]} for k, v in bounds.items()},
               "rows": rows}, f, indent=1)
with open(os.path.join(d, "compare.csv"), "w") as f:
    keys = ["method", "size", "run", "seconds", "wall", "ok", "verified", "algorithm", "predicted", "error",
            "arrived", "landing"]
    f.write(",".join(keys) + "\n")
    for r in rows:
        f.write(",".join("" if r.get(k) is None else str(r.get(k)).replace(",", ";") for k in keys) + "\n")

LABELS = {"socat-chain": "chain (socat)", "tar-chain": "tar chain (pipelined: each host tees to tar x and the next)",
          "tar-fanout": "tar fan-out (every host at once, as pdcp -r, clush --copy)",
          "tar-loop": "tar loop (one host after another, as scp -r in a for loop)"}


def label_of(m, rs):
    if m in LABELS:
        return LABELS[m]
    picks = [re.sub(r"^auto:", "", r["algorithm"]) for r in rs if r["ok"]]
    name = f"auto ({statistics.mode(picks)})" if m == "auto" and picks else m
    return f"hetcast push -r {name}" if tree_mode else name


what = "a tree" if tree_mode else "the payload"
print(f"compare: {what} from {src['name']} to the {len(dests)} others; median of {repeat}:\n")
if skipped:
    print(f"skipped (unknown to this hetcast): {', '.join(skipped)}\n")
if tree_mode:
    print("rsync: not measured (needs ssh or an rsync daemon on every host; the lab has neither).\n")
for size in sorted({r["size"] for r in rows}):
    lb, why = bound(size)
    if tree_mode:
        t = trees[size]
        msg = [r["bytes"] for r in rows if r["size"] == size and r.get("bytes")]
        print(f"**tree of {human(size)}**: {t['files']} files, {t['dirs']} directories, {t['links']} symbolic links; "
              f"tar stream {t['tar_bytes'] / size:.3f}× the files' bytes"
              + (f", hetcast's message {msg[0] / size:.3f}×" if msg else "") + "; "
              f"physical bound for the files' bytes {lb:.2f} s ({why}, × {GOODPUT} TCP goodput)\n")
        print("| method | seconds: median (min–max) | / hetcast auto | / bound | every copy verified | CLI wall s (median) |")
        print("|---|---|---|---|---|---|")
    else:
        print(f"**{human(size)}**: physical bound {lb:.2f} s ({why}, × {GOODPUT} TCP goodput)\n")
        print("| method | seconds: median (min–max) | median / bound | every copy verified | CLI wall s (median) |")
        print("|---|---|---|---|---|")
    size_order = list(dict.fromkeys(r["method"] for r in rows if r["size"] == size))
    med = {}
    for m in size_order:
        rs = [r for r in rows if r["size"] == size and r["method"] == m]
        ts = [r["seconds"] for r in rs if r["seconds"] is not None]
        if ts:
            med[m] = statistics.median(ts)
    for m in size_order:
        rs = [r for r in rows if r["size"] == size and r["method"] == m]
        ts = [r["seconds"] for r in rs if r["seconds"] is not None]
        nver = sum(r["verified"] for r in rs)
        vtxt = "yes" if nver == len(rs) else f"no ({nver} of {len(rs)} runs)"
        wall = f"{statistics.median(r['wall'] for r in rs):.2f}" if m not in LABELS else "–"
        vs_auto = []
        if tree_mode:
            vs_auto = [f"{med[m] / med['auto']:.2f}" if m in med and "auto" in med else "–"]
        if ts:
            fails = "" if len(ts) == len(rs) else f", {len(rs) - len(ts)} failed"
            cells = [f"{med[m]:.2f} ({min(ts):.2f}–{max(ts):.2f}{fails})", *vs_auto, f"{med[m] / lb:.2f}"]
        else:
            cells = [f"failed: {rs[0].get('error', '?')}", *vs_auto, "–"]
        print("| " + " | ".join([label_of(m, rs), *cells, vtxt, wall]) + " |")
    if tree_mode:
        for m in algos:
            rs = [r for r in rows if r["size"] == size and r["method"] == m and r.get("landing") is not None]
            if rs:
                print(f"\n- {m}: the last byte in at {statistics.median(r['arrived'] for r in rs):.2f} s, landed at "
                      f"{statistics.median(r['seconds'] for r in rs):.2f} s; landing the tree took "
                      f"{statistics.median(r['landing'] for r in rs):.2f} s per destination after its last byte (medians)",
                      end="")
        print()
    others = ("tar-chain", "tar-fanout", "tar-loop") if tree_mode else ("socat-chain", "flat")
    short = {"socat-chain": "chain"}
    ratios = [f"auto/{short.get(o, o)} = {med['auto'] / med[o]:.2f}" for o in others if "auto" in med and o in med]
    print("\n" + ("; ".join(ratios) if ratios else "auto/" + ", auto/".join(short.get(o, o) for o in others) + ": n/a")
          + "\n")
