"""Tables over several bench-netlab --compare runs (scripts/bench-netlab, docs/netlab.md); each
DIR holds a run's info.json, probe-1.json (or probe-1.err) and compare.json.
  queues DIR...   one table per topology and size, a column group per queue discipline
  random DIR...   a line per random seed (and discipline) and a summary line
Run by scripts/bench-netlab, not by hand."""
import json
import os
import re
import statistics
import sys

WITHIN_BOUND = 1.10  # issue 23's target: auto within 10% of the physical bound
WITHIN_CHAIN = 1.03  # ... and never more than 3% slower than the raw chain


def load(d):
    run = {"dir": d, "info": json.load(open(os.path.join(d, "info.json")))}
    try:
        run["cmp"] = json.load(open(os.path.join(d, "compare.json")))
    except (OSError, ValueError):
        run["cmp"] = {"rows": [], "bound": {}, "queues": []}
    try:
        run["probe"] = json.load(open(os.path.join(d, "probe-1.json")))
    except (OSError, ValueError):
        run["probe"] = None
        try:
            err = open(os.path.join(d, "probe-1.err")).read().strip().splitlines()
        except OSError:
            err = []
        run["probe_error"] = err[-1] if err else "no map"
    run["queues"] = "/".join(run["cmp"]["queues"]) or "?"
    return run


def stats(run, size):
    """Per method: median seconds, median achieved/predicted, every copy verified, auto's pick."""
    out = {}
    for r in run["cmp"]["rows"]:
        if r["size"] != size:
            continue
        m = out.setdefault(r["method"], {"t": [], "ap": [], "verified": True, "picks": [], "runs": 0})
        m["runs"] += 1
        m["verified"] = m["verified"] and r["verified"]
        if r["seconds"] is not None:
            m["t"].append(r["seconds"])
            if r.get("predicted"):
                m["ap"].append(r["seconds"] / float(r["predicted"]))
        if r["method"] == "auto" and r.get("ok"):
            m["picks"].append(re.sub(r"^auto:", "", r["algorithm"]))
            m.setdefault("not_pushed", set()).update(r.get("not_pushed", []))
    for m in out.values():
        m["s"] = statistics.median(m["t"]) if m["t"] else None
        m["a/p"] = statistics.median(m["ap"]) if m["ap"] else None
        m["pick"] = statistics.mode(m["picks"]) if m["picks"] else None
    return out


def sizes_of(run):
    return sorted(int(k) for k in run["cmp"]["bound"])


def human(n):
    for u, f in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n % f == 0:
            return f"{n // f} {u}"
    return f"{n} B"


def f2(x, fmt="{:.2f}"):
    return "–" if x is None else fmt.format(x)


def queues_table(runs):
    by_topo = {}
    for run in runs:
        by_topo.setdefault(os.path.basename(run["info"]["topology_file"]).removesuffix(".yaml"), []).append(run)
    print("## Each topology under each queue discipline (`--queues` list)\n")
    print("Per discipline: median seconds, × the physical bound, achieved/predicted (hetcast only); "
          "✗: a copy was not verified.\n")
    for topo, rs in by_topo.items():
        for size in sorted({s for r in rs for s in sizes_of(r)}):
            per = [(r, stats(r, size)) for r in rs]
            methods = list(dict.fromkeys(m for _, st in per for m in st))
            lb = [r["cmp"]["bound"].get(str(size), {}).get("seconds") for r in rs]
            print(f"**{topo}, {human(size)}** (bound {f2(lb[0])} s)\n")
            print("| method | " + " | ".join(f"{r['queues']}: s | × bound | a/p" for r in rs) + " |")
            print("|---|" + "---|---|---|" * len(rs))
            for m in methods:
                cells = []
                for (r, st), b in zip(per, lb):
                    x = st.get(m)
                    if x is None or x["s"] is None:
                        cells += ["failed" if x else "–", "–", "–"]
                        continue
                    s = f"{x['s']:.2f}" + (f" ({x['pick']})" if x["pick"] else "") + ("" if x["verified"] else " ✗")
                    cells += [s, f2(x["s"] / b if b else None), f2(x["a/p"])]
                print(f"| {'chain (socat)' if m == 'socat-chain' else m} | " + " | ".join(cells) + " |")
            print()


def invisible_subnets(info):
    """Subnets whose uplink can never be a bottleneck, in either direction, whatever flows run:
    no more than min(what the subnet's hosts send, what the hosts outside receive) can leave
    it (and the converse enter it). No measurement can find such a subnet, and no plan's rates
    depend on it: its hosts behave as if they sat on the router."""
    hosts = info["hosts"]
    out = set()
    for s in info["subnets"]:
        inside = [h for h in hosts if h["subnet"] == s["name"]]
        outside = [h for h in hosts if h["subnet"] != s["name"]]
        leave = min(sum(h["send_bit_s"] for h in inside), sum(h["recv_bit_s"] for h in outside))
        enter = min(sum(h["recv_bit_s"] for h in inside), sum(h["send_bit_s"] for h in outside))
        if s["uplink_bit_s"] >= max(leave, enter):
            out.add(s["name"])
    return out


def subnets_right(run):
    """True when the probe's subnets are the topology's, or equivalent to them: the hosts of
    invisible subnets (above) grouped in any way among themselves, every other subnet exact.
    None without a map."""
    if run["probe"] is None:
        return None
    info = run["info"]
    truth = sorted(sorted(h["name"] for h in info["hosts"] if h["subnet"] == s["name"]) for s in info["subnets"])
    found = sorted(sorted(s) for s in run["probe"]["map"]["subnets"])
    if found == truth:
        return True
    free = {h["name"] for h in info["hosts"] if h["subnet"] in invisible_subnets(info)}
    bound_truth = [s for s in truth if not free.intersection(s)]
    return all(not free.intersection(s) or free.issuperset(s) for s in found) \
        and [s for s in found if not free.intersection(s)] == bound_truth


def random_table(runs):
    print("## Random topologies (`--random`)\n")
    print("| seed | queues | subnets × hosts | subnets right | auto's pick | auto × bound | auto / chain | chain × bound "
          "| \\|a/p−1\\| auto | \\|a/p−1\\| of the others auto weighed within 10% | every copy verified |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    lines, within, chain_ok, right, failed, devs, auto_devs = 0, 0, 0, 0, 0, [], []
    worst_chain = (None, None)
    worst_dev = (None, None, None)
    for run in runs:
        info = run["info"]
        seed = re.search(r"random-(\d+)$", info["name"])
        seed = seed.group(1) if seed else info["name"]
        sr = subnets_right(run)
        right += bool(sr)
        failed += sr is None
        if sr is None:
            sr_txt = "probe failed: " + run["probe_error"]
        elif sr:
            free = sorted(invisible_subnets(info))
            exact = sorted(sorted(s) for s in run["probe"]["map"]["subnets"]) == sorted(
                sorted(h["name"] for h in info["hosts"] if h["subnet"] == s["name"]) for s in info["subnets"])
            sr_txt = "yes" if exact else f"equivalent (the uplinks of {', '.join(free)} never bind)"
        else:
            sr_txt = "**no**: " + " / ".join(" ".join(sorted(s)) for s in sorted(run["probe"]["map"]["subnets"]))
        shape = f"{len(info['subnets'])} × {len(info['hosts'])}"
        for size in sizes_of(run) or [None]:
            st = stats(run, size) if size else {}
            lb = run["cmp"]["bound"][str(size)]["seconds"] if size else None
            auto, chain = st.get("auto", {}), st.get("socat-chain", {})
            a_s, c_s = auto.get("s"), chain.get("s")
            xb = a_s / lb if a_s and lb else None
            ac = a_s / c_s if a_s and c_s else None
            lines += 1
            within += xb is not None and xb <= WITHIN_BOUND
            chain_ok += ac is not None and ac <= WITHIN_CHAIN
            if ac is not None and (worst_chain[0] is None or ac > worst_chain[0]):
                worst_chain = (ac, seed)
            a_dev = abs(auto["a/p"] - 1) if auto.get("a/p") is not None else None
            others = []
            for m, x in st.items():
                if m in ("auto", "socat-chain") or x["a/p"] is None:
                    continue
                dv = abs(x["a/p"] - 1)
                others.append(f"{m} {dv:.2f}")
                devs.append(dv)
                if worst_dev[0] is None or dv > worst_dev[0]:
                    worst_dev = (dv, m, seed)
            if a_dev is not None:
                devs.append(a_dev)
                auto_devs.append(a_dev)
                if worst_dev[0] is None or a_dev > worst_dev[0]:
                    worst_dev = (a_dev, f"auto ({auto['pick']})", seed)
            skipped = sorted(auto.get("not_pushed", ()))
            if skipped:
                others.append(f"not pushable by name: {skipped[0]}" + (f" and {len(skipped) - 1} more" if len(skipped) > 1 else ""))
            ver = all(x["verified"] for x in st.values()) if st else False
            print(f"| {seed} | {run['queues']} | {shape} | {sr_txt} | {auto.get('pick') or '–'} | {f2(xb)} | {f2(ac)} "
                  f"| {f2(c_s / lb if c_s and lb else None)} "
                  f"| {f2(a_dev)} | {', '.join(others) or '–'} | {'yes' if ver else '**no**'} |")
    print()
    summary = (f"summary: auto ≤ {WITHIN_BOUND:.2f}× the bound on {within} of {lines}; "
               f"auto ≤ {WITHIN_CHAIN:.2f}× the chain on {chain_ok} of {lines}")
    if worst_chain[0] is not None:
        summary += f", worst auto/chain {worst_chain[0]:.2f} (seed {worst_chain[1]})"
    summary += f"; subnets right on {right} of {len(runs)}" + (f" (the probe failed on {failed})" if failed else "")
    if devs:
        summary += f"; median |a/p−1| {statistics.median(devs):.2f} over every algorithm"
        summary += f" (auto's {statistics.median(auto_devs):.2f})" if auto_devs else ""
        summary += f", largest {worst_dev[0]:.2f} ({worst_dev[1]}, seed {worst_dev[2]})"
    print(summary + "\n")


def main():
    if len(sys.argv) < 3 or sys.argv[1] not in ("queues", "random"):
        sys.exit("usage: bench_netlab_report.py queues|random DIR...")
    runs = [load(d) for d in sys.argv[2:]]
    (queues_table if sys.argv[1] == "queues" else random_table)(runs)


if __name__ == "__main__":
    main()
