"""`make bench`, the control-plane cost: ADD/DEL latency against the floor,
nft -f and the firewall plugin; scaling with the allowlist; a burst of
concurrent ADDs; peak memory."""
import json
import os
import random
import re
import select
import signal
import subprocess
import time

from benchlib import (BASE_ENV, EXAMPLE_ALLOW, FIREWALL, FLOOR, GNU_TIME, NFT, PAR, RUNS, SCALE_RUNS,
                       SCALE_SIZES, SEED, Series, TABLE, WARMUP, cni_env, fmt, gen_entries, has_table,
                       log, make_nft_inputs, med, ng_conf, pct, prev_result, table, timed, write_json)


def latency_rows(series, floor):
    rows = []
    f = floor.median() if floor else None
    fp90 = floor.p(90) if floor else None
    for s in series:
        if not s.samples:
            rows.append([s.name, 0, "-", "-", "-", "-", "-", "-", "-", "-", s.errors])
            continue
        cpu = s.mean("user") + s.mean("sys")
        rows.append([
            s.name, len(s.samples), fmt(s.median()), fmt(s.p(90)),
            "%s / %s" % (fmt(min(s.walls())), fmt(max(s.walls()))),
            "%.2fx" % (s.median() / f) if f else "-",
            "%.2fx" % (s.p(90) / fp90) if fp90 else "-",
            "%s / %s" % (fmt(s.mean("user")), fmt(s.mean("sys"))),
            fmt(max(0.0, s.median() - cpu)),
            "%d" % med([x.minflt for x in s.samples]),
            s.errors,
        ])
    return rows


LAT_HEAD = ["variant", "runs", "median ms", "p90 ms", "min / max ms", "median x floor", "p90 x floor",
            "CPU user / sys ms (mean)", "off-CPU ms (median wall − mean CPU)", "minor faults", "errors"]


# ---- section 1: ADD / DEL latency ---------------------------------------------------

def section_latency(world, R):
    prev = prev_result("/run/netns/%s-pod" % world.id, "10.244.1.5/24", "10.244.1.1",
                       "fd00:244:1::5/64", "fd00:244:1::1")
    conf = write_json(world, "example.json", ng_conf(world, EXAMPLE_ALLOW, prev))
    fw_conf = write_json(world, "firewall.json", {"cniVersion": "1.0.0", "name": "ngbench", "type": "firewall",
                                                   "backend": "iptables", "prevResult": prev})
    R["conf_example"] = conf
    nft_plain, nft_repl, nft_same, nft_lines = make_nft_inputs(world, conf, "example")
    R["nft_same"], R["nft_lines"] = nft_same, nft_lines

    def fw_has(ip):
        out = subprocess.run(["iptables", "-w", "-S", "CNI-FORWARD"], capture_output=True, text=True, env=BASE_ENV)
        return ip in out.stdout

    have_fw = os.access(FIREWALL, os.X_OK)
    V = []  # name, add(ns, i) -> (ok), del or None

    def ng_add(binary=None):
        def f(ns, i):
            s = timed([binary or world.ng], env=cni_env("ADD", ns, i), stdin=conf)
            return s, has_table(ns, TABLE)
        return f

    def ng_del(binary=None):
        def f(ns, i):
            s = timed([binary or world.ng], env=cni_env("DEL", ns, i), stdin=conf)
            return s, not has_table(ns, TABLE)
        return f

    def floor_add(*extra):
        def f(ns, i):
            return timed([FLOOR, "add", ns] + list(extra)), has_table(ns, "ngb_floor")
        return f

    def floor_del(ns, i):
        return timed([FLOOR, "del", ns]), not has_table(ns, "ngb_floor")

    def nft_add(path):
        def f(ns, i):
            return timed([NFT, "-f", path], netns=ns), has_table(ns, TABLE)
        return f

    def nft_del(ns, i):
        return timed([NFT, "delete", "table", "inet", TABLE], netns=ns), not has_table(ns, TABLE)

    def fw_add(ns, i):
        s = timed([FIREWALL], env=cni_env("ADD", ns, i), stdin=fw_conf)
        return s, fw_has("10.244.1.5/32")

    def fw_del(ns, i):
        s = timed([FIREWALL], env=cni_env("DEL", ns, i), stdin=fw_conf)
        return s, not fw_has("10.244.1.5/32")

    V.append(("netguard", ng_add(), ng_del()))
    if R.get("ng_static"):
        V.append(("netguard, static-pie build", ng_add(R["ng_static"]), ng_del(R["ng_static"])))
    V.append(("floor", floor_add(), floor_del))
    V.append(("floor+ct", floor_add("--ct"), floor_del))
    V.append(("floor+replace", floor_add("--replace"), None))
    V.append(("nft -f", nft_add(nft_plain), nft_del))
    V.append(("nft -f (replace)", nft_add(nft_repl), None))
    if have_fw:
        V.append(("firewall (iptables)", fw_add, fw_del))
    add_s = {v[0]: Series(v[0]) for v in V}
    del_s = {v[0]: Series(v[0]) for v in V if v[2]}
    rng = random.Random(SEED)
    total = WARMUP + RUNS
    t0 = time.monotonic()
    for r in range(total):
        nss = {name: world.add_netns("l%d-%d" % (r, k)) for k, (name, _, _) in enumerate(V)}
        order = list(V)
        rng.shuffle(order)
        for name, add, _ in order:
            s, ok = add(nss[name], r)
            if r >= WARMUP:
                add_s[name].add(s, ok)
        rng.shuffle(order)
        for name, _, dele in order:
            if dele:
                s, ok = dele(nss[name], r)
                if r >= WARMUP:
                    del_s[name].add(s, ok)
        for ns in nss.values():
            world.del_netns(ns)
        time.sleep(0.02)  # let the namespace cleanup work start before the next round
        if (r + 1) % 10 == 0:
            log("latency: %d/%d rounds (%.0f s)" % (r + 1, total, time.monotonic() - t0))
    R["lat_add"] = [add_s[v[0]] for v in V]
    R["lat_del"] = [del_s[v[0]] for v in V if v[2]]
    R["have_fw"] = have_fw


def report_latency(R, out):
    adds, dels = R["lat_add"], R["lat_del"]
    by = {s.name: s for s in adds}
    dby = {s.name: s for s in dels}
    out.append("## 1. ADD and DEL wall time\n")
    out.append("Wall time of one process, fork to reap (`benchexec`), fresh pod namespace per run, all variants "
               "interleaved in shuffled order every round (%d rounds after %d warm-up). ADD config: the example "
               "below (3 allow entries, 1 annotation grant, dual-stack prevResult); `nft -f` input: `nft list "
               "table` of what our plugin installed, counters stripped (%d lines; nft installs an identical table: "
               "%s). Decomposition rows: `floor+ct` adds one `ct state` rule per chain (conntrack hooks), "
               "`floor+replace` prefixes the floor with the create-if-missing + delete pair our ADD sends. "
               "Static-pie build (`make static`, what the DaemonSet image ships): %s.\n"
               % (RUNS, WARMUP, R["nft_lines"], "yes" if R["nft_same"] else "NO",
                  "measured" if R.get("ng_static") else R.get("ng_static_note", "not measured")))
    out.append("**ADD**\n")
    out.append(table(LAT_HEAD, latency_rows(adds, by.get("floor"))))
    out.append("\n**DEL**\n")
    out.append(table(LAT_HEAD, latency_rows(dels, dby.get("floor"))))
    ng, fl, fw = by.get("netguard"), by.get("floor"), by.get("firewall (iptables)")
    dng, dfl, dfw = dby.get("netguard"), dby.get("floor"), dby.get("firewall (iptables)")
    lines = []
    if ng and fl and ng.samples and fl.samples:
        ra, rd = ng.median() / fl.median(), dng.median() / dfl.median()
        lines.append("- ADD: %.2fx the floor (target <= 1.15x): **%s**." % (ra, "met" if ra <= 1.15 else "not met"))
        lines.append("- DEL: %.2fx the floor (target <= 1.15x): **%s**." % (rd, "met" if rd <= 1.15 else "not met"))
    if fw and fw.samples and ng and ng.samples:
        fa, fd = fw.median() / ng.median(), dfw.median() / dng.median()
        lines.append("- vs the firewall plugin: ADD %.1fx faster, DEL %.1fx faster (target >= 2x): **%s**."
                     % (fa, fd, "met" if min(fa, fd) >= 2 else "not met"))
    fr = by.get("floor+replace")
    if fr and fr.samples and fl and fl.samples:
        lines.append("- The create-if-missing + delete pair alone costs the floor %.1f ms (floor+replace %.2f ms vs "
                     "floor %.2f ms): the DELTABLE queues the table for destruction after an RCU grace period, and "
                     "closing the netlink socket waits for that (the kernel's netlink release notifier flushes "
                     "nf_tables' destroy work). The wait is off-CPU (see the off-CPU column)."
                     % (fr.median() - fl.median(), fr.median(), fl.median()))
    out.append("\n" + "\n".join(lines) + "\n")


# ---- section 2: scaling with the allowlist -----------------------------------------

def section_scale(world, R):
    rng = random.Random(SEED + 1)
    entries = gen_entries(max(SCALE_SIZES), rng)
    prev = prev_result("/run/netns/%s-pod" % world.id, "10.244.1.5/24", "10.244.1.1",
                       "fd00:244:1::5/64", "fd00:244:1::1")
    confs, nfts = {}, {}
    for n in SCALE_SIZES:
        confs[n] = write_json(world, "scale-%d.json" % n, ng_conf(world, entries[:n], prev))
        p_plain, _, same, lines = make_nft_inputs(world, confs[n], "s%d" % n)
        nfts[n] = (p_plain, same)
    elems = {}
    add_s = {n: Series("netguard ADD, %d entries" % n) for n in SCALE_SIZES}
    del_s = {n: Series("netguard DEL, %d entries" % n) for n in SCALE_SIZES}
    nft_s = {n: Series("nft -f, %d entries" % n) for n in SCALE_SIZES}
    floor = Series("floor ADD")
    jobs = [("ng", n) for n in SCALE_SIZES] + [("nft", n) for n in SCALE_SIZES] + [("floor", 0)]
    logpath = os.path.join(world.tmp, "netguard.log")
    t0 = time.monotonic()
    for r in range(SCALE_RUNS + 1):  # round 0 is a warm-up
        rng.shuffle(jobs)
        for kind, n in jobs:
            ns = world.add_netns("s%d-%s-%d" % (r, kind, n))
            if kind == "ng":
                s = timed([world.ng], env=cni_env("ADD", ns, r), stdin=confs[n])
                ok = has_table(ns, TABLE)
                if ok and n not in elems:
                    with open(logpath) as f:
                        last = [json.loads(x) for x in f if '"verb":"ADD"' in x][-1]
                    elems[n] = last.get("allow_elements")
                d = timed([world.ng], env=cni_env("DEL", ns, r), stdin=confs[n])
                if r:
                    add_s[n].add(s, ok)
                    del_s[n].add(d)
            elif kind == "nft":
                s = timed([NFT, "-f", nfts[n][0]], netns=ns)
                if r:
                    nft_s[n].add(s, has_table(ns, TABLE))
            else:
                s = timed([FLOOR, "add", ns])
                if r:
                    floor.add(s)
            world.del_netns(ns)
        log("scale: %d/%d rounds (%.0f s)" % (r, SCALE_RUNS, time.monotonic() - t0))
    R["scale"] = dict(sizes=SCALE_SIZES, add=add_s, dele=del_s, nft=nft_s, floor=floor, elems=elems,
                      nft_same={n: nfts[n][1] for n in SCALE_SIZES}, example=entries[:8])


def report_scale(R, out):
    S = R["scale"]
    out.append("## 2. Scaling with the allowlist\n")
    out.append("ADD (and DEL) of netguard and `nft -f` of the same table, fresh namespace each, %d rounds, "
               "interleaved. Entries are generated (seeded) the way a platform writes them: ~55%% single IPv4 "
               "hosts, ~27%% IPv4 CIDRs /16–/30, some UDP, other ports and port ranges, ~12%% IPv6 hosts and /64s; "
               "first entries: `%s`. Overlapping entries are merged by the plugin, so the set holds fewer "
               "elements than entries. Floor ADD in the same rounds: median %s ms.\n"
               % (SCALE_RUNS, ", ".join(S["example"][:5]), fmt(S["floor"].median())))
    rows = []
    base = S["add"][S["sizes"][0]].median()
    for n in S["sizes"]:
        a, d, nf = S["add"][n], S["dele"][n], S["nft"][n]
        rows.append([n, S["elems"].get(n, "-"), fmt(a.median()), fmt(a.p(90)),
                     "%+.2f" % (a.median() - base), fmt(d.median()), fmt(nf.median()), fmt(nf.p(90)),
                     "%.1fx" % (nf.median() / a.median()) if a.samples and nf.samples else "-",
                     "%s / %s" % (fmt(a.mean("user")), fmt(a.mean("sys"))),
                     a.errors + d.errors + nf.errors + (0 if S["nft_same"][n] else 1)])
    out.append(table(["allow entries", "set elements (v4+v6)", "ADD median ms", "ADD p90 ms", "vs 1 entry",
                      "DEL median ms", "nft -f median ms", "nft -f p90 ms", "nft -f / netguard",
                      "netguard CPU user / sys ms", "errors"], rows))
    out.append("")


# ---- section 4: concurrency ------------------------------------------------------------------

def parallel(jobs, deadline=180):
    """Starts every job at once (posix_spawn), times each from its spawn to
    its exit (pidfd), returns (durations ms, statuses, wall ms)."""
    poller = select.poll()
    live = {}
    t_start = time.perf_counter_ns()
    for argv, env, stdin, out in jobs:
        t0 = time.perf_counter_ns()
        pid = os.posix_spawn(argv[0], argv, env, file_actions=[
            (os.POSIX_SPAWN_OPEN, 0, stdin, os.O_RDONLY, 0),
            (os.POSIX_SPAWN_OPEN, 1, out, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600),
            (os.POSIX_SPAWN_OPEN, 2, out + ".err", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)])
        fd = os.pidfd_open(pid)
        live[fd] = (pid, t0)
        poller.register(fd, select.POLLIN)
    durs, statuses = [], []
    end = time.monotonic() + deadline
    while live and time.monotonic() < end:
        for fd, _ in poller.poll(1000):
            t1 = time.perf_counter_ns()
            pid, t0 = live.pop(fd)
            poller.unregister(fd)
            os.close(fd)
            _, st = os.waitpid(pid, 0)
            durs.append((t1 - t0) / 1e6)
            statuses.append(os.waitstatus_to_exitcode(st))
    for fd, (pid, _) in live.items():  # past the deadline: count as errors
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        os.close(fd)
        statuses.append(-9)
    return durs, statuses, (time.perf_counter_ns() - t_start) / 1e6


def section_concurrency(world, R):
    prev = prev_result("/run/netns/%s-pod" % world.id, "10.244.1.5/24", "10.244.1.1",
                       "fd00:244:1::5/64", "fd00:244:1::1")
    conf = write_json(world, "par.json", ng_conf(world, EXAMPLE_ALLOW, prev))
    outdir = os.path.join(world.tmp, "par")
    os.makedirs(outdir, exist_ok=True)
    kinds = ["netguard", "floor", "floor+replace"]
    # All namespaces first and all deletions last: deleting 100 namespaces
    # keeps the kernel's cleanup worker busy for a while, which would slow
    # whichever burst came next.
    nss = {k: [world.add_netns("c%d-%d" % (j, i)) for i in range(PAR)] for j, k in enumerate(kinds)}
    random.Random(SEED + 3).shuffle(kinds)
    res = {"order": list(kinds)}
    for kind in kinds:
        time.sleep(1.0)  # let the previous burst's after-effects settle
        ns_list = nss[kind]
        if kind == "netguard":
            jobs = [([world.ng], cni_env("ADD", ns, i), conf, "%s/add%d" % (outdir, i))
                    for i, ns in enumerate(ns_list)]
        else:
            extra = ["--replace"] if kind == "floor+replace" else []
            jobs = [([FLOOR, "add", ns] + extra, BASE_ENV, "/dev/null", "%s/fadd%d" % (outdir, i))
                    for i, ns in enumerate(ns_list)]
        durs, sts, wall = parallel(jobs)
        table_name = TABLE if kind == "netguard" else "ngb_floor"
        missing = sum(1 for ns in ns_list if not has_table(ns, table_name))
        res[kind + " ADD"] = dict(durs=durs, errors=sum(1 for s in sts if s != 0), missing=missing, wall=wall)
        if kind == "netguard":
            time.sleep(1.0)
            jobs = [([world.ng], cni_env("DEL", ns, i), conf, "%s/del%d" % (outdir, i))
                    for i, ns in enumerate(ns_list)]
            durs, sts, wall = parallel(jobs)
            left = sum(1 for ns in ns_list if has_table(ns, TABLE))
            res["netguard DEL"] = dict(durs=durs, errors=sum(1 for s in sts if s != 0), missing=left, wall=wall)
    errs = []
    for f in sorted(os.listdir(outdir)):
        if f.endswith(".err") and os.path.getsize(os.path.join(outdir, f)):
            errs.append(open(os.path.join(outdir, f)).read().strip()[:200])
    res["stderr"] = errs[:3]
    for k in nss:
        for ns in nss[k]:
            world.del_netns(ns)
    R["conc"] = res


def report_concurrency(R, out):
    C = R["conc"]
    out.append("## 4. Concurrency\n")
    out.append("%d pods at once on %d cores: %d fresh namespaces, then every ADD started together "
               "(posix_spawn), each timed from its spawn to its exit; then every DEL together. For reference "
               "the same burst of the floor, and of the floor with the create-if-missing + delete pair (each "
               "then waits for a grace period at exit), bursts in shuffled order (this run: %s), all namespaces "
               "made before the first burst. Errors: non-zero exit; missing: "
               "table absent after ADD (or still present after DEL).\n" % (PAR, os.cpu_count(), PAR, ", ".join(C.get("order", []))))
    rows = []
    for k in ("netguard ADD", "netguard DEL", "floor ADD", "floor+replace ADD"):
        d = C.get(k)
        if not d:
            continue
        rows.append([k, len(d["durs"]), fmt(d["wall"], 1), fmt(med(d["durs"])), fmt(pct(d["durs"], 99)),
                     fmt(max(d["durs"]) if d["durs"] else None), d["errors"], d["missing"]])
    out.append(table(["burst", "processes", "wall ms (all done)", "per-call p50 ms", "per-call p99 ms",
                      "per-call max ms", "errors", "missing / left"], rows))
    if C.get("stderr"):
        out.append("\nstderr seen: `%s`" % "`, `".join(C["stderr"]))
    out.append("")


# ---- section 5: memory -------------------------------------------------------------------------

def gnu_time_rss(argv, env, stdin, netns=None):
    cmd = [GNU_TIME, "-v"] + (["nsenter", "--net=" + netns] if netns else []) + argv
    with open(stdin) as f:
        p = subprocess.run(cmd, env=env, stdin=f, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    m = re.search(r"Maximum resident set size \(kbytes\): (\d+)", p.stderr)
    st = re.search(r"Exit status: (\d+)", p.stderr)
    return (int(m.group(1)) if m else None), (int(st.group(1)) if st else None)


def section_memory(world, R):
    prev = prev_result("/run/netns/%s-pod" % world.id, "10.244.1.5/24", "10.244.1.1",
                       "fd00:244:1::5/64", "fd00:244:1::1")
    conf = write_json(world, "mem.json", ng_conf(world, EXAMPLE_ALLOW, prev))
    big_n = max(SCALE_SIZES)
    conf_big = write_json(world, "mem-big.json",
                          ng_conf(world, gen_entries(big_n, random.Random(SEED + 1)), prev))
    nft_plain, _, _, _ = make_nft_inputs(world, conf, "mem")
    rows = []
    for name, argv_fn, c, ns_exec in [
            ("netguard ADD, example config", lambda ns: [world.ng], conf, False),
            ("netguard ADD, %d entries" % big_n, lambda ns: [world.ng], conf_big, False),
            ("floor ADD", lambda ns: [FLOOR, "add", ns], "/dev/null", False),
            ("nft -f (example ruleset)", lambda ns: [NFT, "-f", nft_plain], "/dev/null", True),
            ("firewall ADD", lambda ns: [FIREWALL], os.path.join(world.tmp, "mem-fw.json"), False)]:
        if name.startswith("firewall"):
            if not os.access(FIREWALL, os.X_OK):
                continue
            write_json(world, "mem-fw.json", {"cniVersion": "1.0.0", "name": "ngbench", "type": "firewall",
                                              "backend": "iptables", "prevResult": prev})
        vals, bad = [], 0
        for i in range(5):
            ns = world.add_netns("m%d" % i)
            rss, st = gnu_time_rss(argv_fn(ns), cni_env("ADD", ns, i), c, ns if ns_exec else None)
            if st == 0 and rss:
                vals.append(rss)
            else:
                bad += 1
            if name.startswith("firewall"):
                subprocess.run([FIREWALL], input=open(c).read(), env=cni_env("DEL", ns, i), text=True,
                               capture_output=True)
            world.del_netns(ns)
        rows.append([name, fmt(med(vals) / 1024 if vals else None), fmt(max(vals) / 1024 if vals else None), bad])
    R["memory"] = rows


def report_memory(R, out):
    out.append("## 5. Memory\n")
    out.append("Peak RSS (`/usr/bin/time -v`, Maximum resident set size) of one call, 5 calls each, fresh "
               "namespace each. Target for netguard ADD: <= 4 MB.\n")
    out.append(table(["call", "median MiB", "max MiB", "errors"], R["memory"]))
    ng = R["memory"][0]
    try:
        out.append("\n- netguard ADD peak RSS %s MiB (target <= 4 MB): **%s**.\n"
                   % (ng[2], "met" if float(ng[2]) * 1.048576 <= 4 else "not met"))
    except ValueError:
        pass
