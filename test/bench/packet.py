"""`make bench`, the per-packet cost: throughput and connection rate from a
pod to a peer through no ruleset, netguard (1 and N entries) and a linear
iptables ruleset, and where a connection's CPU goes."""
import json
import os
import random
import re
import shutil
import subprocess
import time

from benchlib import (BASE_ENV, CONNRATE, CONN_SECONDS, IPERF3, IPERF_SECONDS, IPT_RESTORE, NFT, PKT_ENTRIES,
                       PKT_PAIRS, PKT_ROUNDS, SEED, TABLE, cni_env, fmt, gen_entries, has_table, log, med, pct,
                       ng_conf, ns_run, prev_result, table, timed, write_json)


# ---- section 3: per-packet cost -------------------------------------------------------

POD_IP, PEER_IP = "10.250.0.2", "10.250.0.3"
PEER_ENTRY = "tcp://%s:5201-5202" % PEER_IP


def iptables_rules(entries, stateful):
    """The same policy as a linear iptables ruleset: every allow entry one
    rule, the peer's entry last (the worst case for a linear list)."""
    lines = ["*filter", ":INPUT DROP [0:0]", ":FORWARD DROP [0:0]", ":OUTPUT DROP [0:0]",
             "-A INPUT -i lo -j ACCEPT", "-A OUTPUT -o lo -j ACCEPT"]
    if stateful:
        lines += ["-A INPUT -m conntrack --ctstate ESTABLISHED,RELATED -j ACCEPT",
                  "-A INPUT -m conntrack --ctstate INVALID -j DROP",
                  "-A OUTPUT -m conntrack --ctstate ESTABLISHED,RELATED -j ACCEPT",
                  "-A OUTPUT -m conntrack --ctstate INVALID -j DROP"]
    else:
        lines += ["-A INPUT -s %s -p tcp -m multiport --sports 5201,5202 -j ACCEPT" % PEER_IP]
    for md in ["169.254.169.254", "100.100.100.200", "168.63.129.16", "169.254.0.23", "169.254.42.42"]:
        lines.append("-A OUTPUT -d %s -j REJECT --reject-with icmp-admin-prohibited" % md)
    lines += ["-A OUTPUT -d 10.96.0.10 -p udp --dport 53 -j ACCEPT",
              "-A OUTPUT -d 10.96.0.10 -p tcp --dport 53 -j ACCEPT"]
    for e in entries:
        m = re.match(r"^(?:(tcp|udp)://)?([0-9./]+):(\d+)(?:-(\d+))?$", e)
        if not m:
            continue
        proto, host, lo, hi = m.group(1) or "tcp", m.group(2), m.group(3), m.group(4)
        lines.append("-A OUTPUT -d %s -p %s --dport %s -j ACCEPT" % (host, proto, lo + (":" + hi if hi else "")))
    lines += ["-A OUTPUT -p tcp -j REJECT --reject-with tcp-reset",
              "-A OUTPUT -j REJECT --reject-with icmp-admin-prohibited", "COMMIT", ""]
    return "\n".join(lines)


def section_packet(world, R):
    pod, peer = world.add_netns("pkt-pod", False), world.add_netns("pkt-peer", False)
    npod, npeer = os.path.basename(pod), os.path.basename(peer)
    sh = lambda *a: subprocess.run(list(a), check=True, env=BASE_ENV)  # noqa: E731
    # Created inside the pod namespace with its peer end in the peer's: nothing
    # ever exists in the machine's namespace. No default route anywhere.
    sh("ip", "-n", npod, "link", "add", "eth0", "type", "veth", "peer", "name", "eth0", "netns", npeer)
    for n, ip in ((npod, POD_IP), (npeer, PEER_IP)):
        for k in ("all", "default"):
            ns_run(world.path(n), ["sysctl", "-qw", "net.ipv6.conf.%s.disable_ipv6=1" % k])
        sh("ip", "-n", n, "addr", "add", ip + "/24", "dev", "eth0")
        sh("ip", "-n", n, "link", "set", "lo", "up")
        sh("ip", "-n", n, "link", "set", "eth0", "up")
    ns_run(pod, ["sysctl", "-qw", "net.ipv4.ip_local_port_range=10000 65000"])
    bound = PKT_ROUNDS * 5 * (IPERF_SECONDS + CONN_SECONDS + 30) + 180
    iperf = world.spawn(peer, [IPERF3, "-s", "-B", PEER_IP, "-p", "5201"], "iperf3")
    world.spawn(peer, [CONNRATE, "listen", PEER_IP, "5202", str(bound)], "connrate")

    rng = random.Random(SEED + 2)
    prev = prev_result(pod, POD_IP + "/24", "10.250.0.1")
    many = gen_entries(PKT_ENTRIES - 1, rng) + [PEER_ENTRY]
    v4many = gen_entries(PKT_ENTRIES, rng, v4_only=True)
    conf1 = write_json(world, "pkt-1.json", ng_conf(world, [PEER_ENTRY], prev, {}))
    confn = write_json(world, "pkt-n.json", ng_conf(world, many, prev, {}))
    ipt_sf = os.path.join(world.tmp, "ipt-stateful.rules")
    ipt_sl = os.path.join(world.tmp, "ipt-stateless.rules")
    with open(ipt_sf, "w") as f:
        f.write(iptables_rules(v4many + [PEER_ENTRY], True))
    with open(ipt_sl, "w") as f:
        f.write(iptables_rules(v4many + [PEER_ENTRY], False))
    nrules = sum(1 for x in open(ipt_sf) if x.startswith("-A OUTPUT"))

    def ng(conf):
        def apply():
            return timed([world.ng], env=cni_env("ADD", pod, 1), stdin=conf).ok and has_table(pod, TABLE)
        return apply

    def ipt(path):
        def apply():
            return timed([IPT_RESTORE], netns=pod, stdin=path).ok and has_table(pod, "filter", "ip")
        return apply

    variants = [("no ruleset", lambda: True),
                ("netguard, 1 entry", ng(conf1)),
                ("netguard, %d entries" % PKT_ENTRIES, ng(confn)),
                ("iptables, %d rules + conntrack" % nrules, ipt(ipt_sf)),
                ("iptables, %d rules, stateless" % nrules, ipt(ipt_sl))]
    res = {v[0]: {"gbps": [], "cps": [], "p50": [], "p99": [], "errors": 0, "rg": [], "rc": []}
           for v in variants}

    def wait_ready():
        for _ in range(50):
            out = ns_run(peer, ["ss", "-Hltn"]).stdout
            if ":5201" in out and ":5202" in out:
                return
            time.sleep(0.1)
        raise RuntimeError("iperf3 / connrate listeners did not come up in the peer namespace")

    def apply_variant(name, apply):
        ns_run(pod, [NFT, "flush", "ruleset"], check=True)
        return apply()

    wait_ready()
    t0 = time.monotonic()
    for r in range(PKT_ROUNDS):
        order = list(variants)
        rng.shuffle(order)
        this = {}
        for name, apply in order:
            d = res[name]
            if not apply_variant(name, apply):
                d["errors"] += 1
                continue
            if iperf.poll() is not None:  # iperf3 serves one test at a time; restart if it died
                iperf = world.spawn(peer, [IPERF3, "-s", "-B", PEER_IP, "-p", "5201"], "iperf3")
                wait_ready()
            g = c = None
            try:
                p = ns_run(pod, [IPERF3, "-c", PEER_IP, "-p", "5201", "-t", str(IPERF_SECONDS), "-J",
                                 "--connect-timeout", "2000"], timeout=IPERF_SECONDS + 20)
                g = json.loads(p.stdout)["end"]["sum_received"]["bits_per_second"] / 1e9
                d["gbps"].append(g)
            except (subprocess.TimeoutExpired, ValueError, KeyError):
                d["errors"] += 1
            try:
                p = ns_run(pod, [CONNRATE, "connect", PEER_IP, "5202", str(CONN_SECONDS)],
                           timeout=CONN_SECONDS + 20)
                m = dict(zip(p.stdout.split()[0::2], p.stdout.split()[1::2]))
                c = float(m["rate"])
                d["cps"].append(c)
                d["p50"].append(int(m["p50_us"]))
                d["p99"].append(int(m["p99_us"]))
                if int(m["failures"]):
                    d["errors"] += 1
            except (subprocess.TimeoutExpired, KeyError, ValueError):
                d["errors"] += 1
            this[name] = (g, c)
        ref = this.get(variants[1][0])
        for name, (g, c) in this.items():  # paired with the 1-entry run of the same round
            if ref and g and ref[0]:
                res[name]["rg"].append(g / ref[0])
            if ref and c and ref[1]:
                res[name]["rc"].append(c / ref[1])
        log("packet: %d/%d rounds (%.0f s)" % (r + 1, PKT_ROUNDS, time.monotonic() - t0))

    # The target's comparison, 1 vs PKT_ENTRIES entries, as tight A/B pairs:
    # both orders, back to back, so the machine's load hits both alike.
    ab = {"rg": [], "rc": []}
    a, b = variants[1], variants[2]
    for k in range(PKT_PAIRS):
        got = {}
        for name, apply in ((a, b) if k % 2 == 0 else (b, a)):
            if not apply_variant(name, apply):
                res[name]["errors"] += 1
                continue
            try:
                p = ns_run(pod, [IPERF3, "-c", PEER_IP, "-p", "5201", "-t", "1", "-J",
                                 "--connect-timeout", "2000"], timeout=30)
                g = json.loads(p.stdout)["end"]["sum_received"]["bits_per_second"]
                p = ns_run(pod, [CONNRATE, "connect", PEER_IP, "5202", "1"], timeout=30)
                m = dict(zip(p.stdout.split()[0::2], p.stdout.split()[1::2]))
                got[name] = (g, float(m["rate"]))
            except (subprocess.TimeoutExpired, ValueError, KeyError):
                res[name]["errors"] += 1
            if iperf.poll() is not None:
                iperf = world.spawn(peer, [IPERF3, "-s", "-B", PEER_IP, "-p", "5201"], "iperf3")
                wait_ready()
        if a[0] in got and b[0] in got:
            ab["rg"].append(got[b[0]][0] / got[a[0]][0])
            ab["rc"].append(got[b[0]][1] / got[a[0]][1])
    log("packet: %d A/B pairs done (%.0f s)" % (PKT_PAIRS, time.monotonic() - t0))

    # Where a new connection's CPU goes: perf samples of the connrate client
    # (its SYN crosses the pod's output hook, and the SYN-ACK its input hook,
    # in its own context), by kernel function family. Robust to the noise of
    # other tenants, which throughput and rates are not.
    prof = {"conn": {}, "tput": {}}
    if shutil.which("perf"):
        for name, apply in variants[:4]:
            if not apply_variant(name, apply):
                continue
            prof["conn"][name] = perf_shares(world, [CONNRATE, "connect", PEER_IP, "5202", str(CONN_SECONDS)],
                                             pod, "connrate", CONN_SECONDS)
            prof["tput"][name] = perf_shares(world, [IPERF3, "-c", PEER_IP, "-p", "5201", "-t",
                                                     str(IPERF_SECONDS), "--connect-timeout", "2000"],
                                             pod, "iperf3", IPERF_SECONDS)
    ns_run(pod, [NFT, "flush", "ruleset"])
    R["packet"] = dict(variants=[v[0] for v in variants], res=res, prof=prof, ab=ab)
    for p in list(world.procs):
        world.stop(p)
    world.del_netns(pod)
    world.del_netns(peer)


def perf_shares(world, argv, netns, comm, seconds):
    """Share of COMM's CPU samples per kernel function family while it runs."""
    data = os.path.join(world.tmp, "pkt-perf.data")
    p = subprocess.run(["perf", "record", "-q", "-e", "cpu-clock", "-F", "10000", "-o", data, "--",
                        "nsenter", "--net=" + netns] + argv, capture_output=True, text=True, env=BASE_ENV,
                       timeout=seconds + 60)
    if p.returncode != 0:
        return None
    rep = subprocess.run(["perf", "report", "-i", data, "--comm", comm, "--sort", "sym", "--stdio", "-q"],
                         capture_output=True, text=True).stdout
    cats = {}
    for line in rep.splitlines():
        m = re.match(r"^\s*([\d.]+)%\s+\[[k.]\]\s+(\S+)", line)
        if m:
            k = pkt_category(m.group(2))
            cats[k] = cats.get(k, 0.0) + float(m.group(1))
    cats["everything else"] = max(0.0, 100.0 - sum(v for k, v in cats.items() if k != "everything else"))
    return cats


PKT_CATS = ["nft set lookup", "rule evaluation", "iptables (xt)", "conntrack", "everything else"]


def pkt_category(sym):
    if re.search(r"pipapo|nft_hash|nft_rhash|nft_rbtree|nft_bitmap|nft_lookup_eval|nft_set_", sym):
        return "nft set lookup"
    if re.search(r"ipt_do_table|^xt_|_mt$|_mt_|nft_match|nft_target|nft_compat", sym):
        return "iptables (xt)"
    if sym.startswith(("nft_", "__nft_")) or "nf_tables" in sym:
        return "rule evaluation"
    if re.search(r"nf_conntrack|nf_ct_|^__nf_ct|tcp_packet|nf_nat|ipv4_conntrack|nf_confirm", sym):
        return "conntrack"
    return "everything else"


def pair_text(xs):
    return "%+.1f%% (%+.1f…%+.1f)" % ((med(xs) - 1) * 100, (pct(xs, 25) - 1) * 100, (pct(xs, 75) - 1) * 100)


def report_packet(R, out):
    P = R["packet"]
    res = P["res"]
    names = P["variants"]
    out.append("## 3. Per-packet cost\n")
    out.append("A pod namespace and a peer namespace joined by a veth (IPv4, no other links, no default route). "
               "Per round, all variants in shuffled order: the pod's ruleset is flushed and the variant applied, "
               "then iperf3 (one TCP stream, %d s, pod to peer) and `connrate` (one connection at a time for %d s: "
               "connect, wait for the server's FIN, close). %d rounds. 'vs 1 entry' is the median over rounds of "
               "the ratio to the 1-entry run of the same round (pairing removes slow drift in the machine's load), "
               "with its min–max. The netguard rows are the plugin's own table (`ct state established` accepts "
               "before any set lookup, so only a connection's first packet meets the allowlist); the iptables "
               "rows put the peer's rule after all the others (worst case of a linear list), `stateless` has no "
               "conntrack shortcut, so every packet walks the list.\n" % (IPERF_SECONDS, CONN_SECONDS, PKT_ROUNDS))
    rows = []

    def rel(xs):
        if not xs:
            return "-"
        return "%+.1f%% (%+.1f…%+.1f)" % ((med(xs) - 1) * 100, (min(xs) - 1) * 100, (max(xs) - 1) * 100)
    for name in names:
        d = res[name]
        g, c = d["gbps"], d["cps"]
        rows.append([name, "%s (%s–%s)" % (fmt(med(g)), fmt(min(g) if g else None), fmt(max(g) if g else None)),
                     rel(d["rg"]),
                     "%s (%s–%s)" % (fmt(med(c), 0), fmt(min(c) if c else None, 0), fmt(max(c) if c else None, 0)),
                     rel(d["rc"]), "%s / %s" % (fmt(med(d["p50"]), 0), fmt(med(d["p99"]), 0)), d["errors"]])
    out.append(table(["variant", "throughput Gbit/s (min–max)", "vs 1 entry", "connections/s (min–max)",
                      "vs 1 entry", "connection p50 / p99 µs", "errors"], rows))
    ab = P.get("ab") or {}
    prof = P.get("prof") or {}
    conn, tput = prof.get("conn") or {}, prof.get("tput") or {}
    big, one = names[2], names[1]
    if ab.get("rg") and ab.get("rc"):
        out.append("\n- %s vs 1 entry, %d back-to-back A/B pairs (1 s iperf3 + 1 s connrate each, alternating "
                   "order): throughput %s, connection rate %s (median of the pairs' ratios, p25…p75 in brackets: "
                   "the spread is the machine's noise)." % (big, len(ab["rc"]), pair_text(ab["rg"]),
                                                            pair_text(ab["rc"])))
    if conn.get(big) and conn.get(one):
        dc = conn[big].get("nft set lookup", 0) - conn[one].get("nft set lookup", 0)
        dt = (tput[big].get("nft set lookup", 0) - tput[one].get("nft set lookup", 0)
              if tput.get(big) and tput.get(one) else None)
        out.append("- CPU attribution (a share within one process, robust to the noise that moves the rates "
                   "above): the %d-entry allowlist adds %+.1f points of a new connection's CPU in set lookup%s, "
                   "i.e. it costs about that share of the connection rate; target within 3%%: **%s**."
                   % (PKT_ENTRIES, dc, "" if dt is None else " and %+.1f points of a bulk stream's" % dt,
                      "met" if max(abs(dc), abs(dt or 0)) <= 3 else "not met"))
    for title, d, who in (("opens connections", conn, "connrate"), ("sends one bulk TCP stream", tput, "iperf3")):
        if not d:
            continue
        out.append("\nWhere the client's CPU goes while it %s (`perf record -e cpu-clock` of `%s` in the pod, "
                   "share of its samples by kernel function family; the pod's output hook and, over a veth, the "
                   "input hook run in its context; iptables-nft rules are nf_tables rules, hence 'rule "
                   "evaluation').\n" % (title, who))
        rows = [[name] + ["%.1f%%" % d[name].get(k, 0.0) for k in PKT_CATS] for name in names if d.get(name)]
        out.append(table(["variant"] + PKT_CATS, rows))
    out.append("")
