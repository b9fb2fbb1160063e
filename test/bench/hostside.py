"""`make bench`, the host-side table (hostMirror, README "Host-side table"):
what ADD and DEL pay for the second side, whether DEL waits out one RCU grace
period or two, and the per-packet cost of the host side with 10,000 allow
entries. Pods here have a real veth whose peer is in the node namespace (the
driver's), as a bridge or ptp primary gives them."""
import json
import os
import random
import subprocess
import time

from benchlib import (BASE_ENV, CONNRATE, EXAMPLE_ALLOW, FLOOR, IPERF3, NFT, PKT_ENTRIES, PKT_PAIRS, RUNS, SEED,
                       WARMUP, Series, TABLE, cni_env, fmt, gen_entries, has_table, log, med, ng_conf, ns_run, pct,
                       prev_result, table, timed, write_json)


def _sh(*a):
    subprocess.run(list(a), check=True, env=BASE_ENV)


def _veth_pod(world, short, ip4, gw4):
    """A pod namespace whose eth0's peer (`h<short>`) is in the node namespace,
    with the gateway address on the node's end: the ptp layout."""
    pod = world.add_netns(short, pod_if=False)
    name = os.path.basename(pod)
    host = "h" + short[-12:]
    # Created from the node (where the driver runs) with the pod end inside
    # the pod's namespace: nothing in the machine's namespace.
    _sh("ip", "-n", world.node.rsplit("/", 1)[1], "link", "add", host, "type", "veth", "peer", "name", "eth0",
        "netns", name)
    _sh("ip", "-n", name, "addr", "add", ip4, "dev", "eth0")
    _sh("ip", "-n", name, "link", "set", "eth0", "up")
    _sh("ip", "-n", name, "link", "set", "lo", "up")
    _sh("ip", "-n", world.node.rsplit("/", 1)[1], "addr", "add", gw4 + "/32", "dev", host)
    _sh("ip", "-n", world.node.rsplit("/", 1)[1], "link", "set", host, "up")
    return pod, host


def _host_tables():
    out = subprocess.run([NFT, "list", "tables", "netdev"], capture_output=True, text=True, env=BASE_ENV)
    return [l.split()[-1] for l in out.stdout.splitlines() if " ngh." in l]


def _resident(world):
    """One pod that stays, with its host-side table, as on a node already
    running pods: the first netdev ingress chain of the machine flips a
    global static key (code patching, several ms); a node pays that once,
    not at every ADD, and so does this benchmark."""
    pod, _ = _veth_pod(world, "hsres", "10.244.8.5/24", "10.244.8.1")
    prev = prev_result(pod, "10.244.8.5/24", "10.244.8.1")
    conf = write_json(world, "hs-res.json", ng_conf(world, EXAMPLE_ALLOW, prev, host_mirror="required"))
    out = os.path.join(world.tmp, "hs-res.out")
    s = timed([world.ng], env=cni_env("ADD", pod, 999999), stdin=conf, stdout=out)
    if not s.ok:
        with open(out) as f:
            raise RuntimeError("hostside: the resident pod's ADD failed: " + f.read()[:500])
    return pod, conf


def section_hostside(world, R):
    rng = random.Random(SEED + 5)
    resident, res_conf = _resident(world)
    V = [("pod side only (hostMirror off)", "off"), ("both sides (hostMirror required)", "required")]
    add_s = {n: Series(n) for n, _ in V}
    del_s = {n: Series(n) for n, _ in V}
    floor_del = Series("floor: one table delete (one grace period)")
    total = WARMUP + RUNS
    t0 = time.monotonic()
    for r in range(total):
        order = list(V)
        rng.shuffle(order)
        for k, (name, mode) in enumerate(order):
            pod, host = _veth_pod(world, "hs%d-%d" % (r, k), "10.244.9.5/24", "10.244.9.1")
            prev = prev_result(pod, "10.244.9.5/24", "10.244.9.1")
            conf = write_json(world, "hs-%s.json" % mode, ng_conf(world, EXAMPLE_ALLOW, prev, host_mirror=mode))
            s = timed([world.ng], env=cni_env("ADD", pod, r), stdin=conf)
            ok = has_table(pod, TABLE) and len(_host_tables()) == (2 if mode == "required" else 1)
            if r >= WARMUP:
                add_s[name].add(s, ok)
            s = timed([world.ng], env=cni_env("DEL", pod, r), stdin=conf)
            ok = not has_table(pod, TABLE) and len(_host_tables()) == 1
            if r >= WARMUP:
                del_s[name].add(s, ok)
            world.del_netns(pod)
        # The floor's delete of one table: one RCU grace period, the cost DEL
        # would pay a second time if each side's socket closed in turn.
        fpod = world.add_netns("hsf%d" % r)
        timed([FLOOR, "add", fpod])
        s = timed([FLOOR, "del", fpod])
        if r >= WARMUP:
            floor_del.add(s, not has_table(fpod, "ngb_floor"))
        world.del_netns(fpod)
        time.sleep(0.02)
        if (r + 1) % 10 == 0:
            log("hostside: %d/%d rounds (%.0f s)" % (r + 1, total, time.monotonic() - t0))
    R["hs_add"] = [add_s[n] for n, _ in V]
    R["hs_del"] = [del_s[n] for n, _ in V]
    R["hs_floor_del"] = floor_del
    _packet(world, R, rng)
    timed([world.ng], env=cni_env("DEL", resident, 999999), stdin=res_conf)
    world.del_netns(resident)


def _measure(pod, peer_ip):
    p = ns_run(pod, [IPERF3, "-c", peer_ip, "-p", "5201", "-t", "1", "-J", "--connect-timeout", "2000"], timeout=30)
    g = json.loads(p.stdout)["end"]["sum_received"]["bits_per_second"] / 1e9
    p = ns_run(pod, [CONNRATE, "connect", peer_ip, "5202", "1"], timeout=30)
    m = dict(zip(p.stdout.split()[0::2], p.stdout.split()[1::2]))
    return g, float(m["rate"])


def _packet(world, R, rng):
    """pod --veth-- node --veth-- peer, routed by the node: the pod's tables
    with 10,000 entries, and the host side off or on, in A/B pairs."""
    node = world.node.rsplit("/", 1)[1]
    pod, host = _veth_pod(world, "hspkt", "10.251.0.2/24", "10.251.0.1")
    npod = pod.rsplit("/", 1)[1]
    peer = world.add_netns("hspeer", pod_if=False)
    npeer = peer.rsplit("/", 1)[1]
    _sh("ip", "-n", node, "link", "add", "hspeer0", "type", "veth", "peer", "name", "eth0", "netns", npeer)
    _sh("ip", "-n", npeer, "addr", "add", "10.252.0.2/24", "dev", "eth0")
    _sh("ip", "-n", npeer, "link", "set", "eth0", "up")
    _sh("ip", "-n", npeer, "link", "set", "lo", "up")
    _sh("ip", "-n", node, "addr", "add", "10.252.0.1/24", "dev", "hspeer0")
    _sh("ip", "-n", node, "link", "set", "hspeer0", "up")
    _sh("ip", "-n", npod, "route", "add", "10.252.0.0/24", "via", "10.251.0.1", "dev", "eth0", "onlink")
    _sh("ip", "-n", npeer, "route", "add", "10.251.0.0/24", "via", "10.252.0.1")
    _sh("ip", "-n", node, "route", "add", "10.251.0.2/32", "dev", host)
    ns_run(world.node, ["sysctl", "-qw", "net.ipv4.ip_forward=1"], check=True)
    for n in (pod, peer):
        ns_run(n, ["sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1"])
    ns_run(pod, ["sysctl", "-qw", "net.ipv4.ip_local_port_range=10000 65000"])
    iperf = world.spawn(peer, [IPERF3, "-s", "-B", "10.252.0.2", "-p", "5201"], "hs-iperf3")
    world.spawn(peer, [CONNRATE, "listen", "10.252.0.2", "5202", str(PKT_PAIRS * 10 + 120)], "hs-connrate")
    for _ in range(50):
        out = ns_run(peer, ["ss", "-Hltn"]).stdout
        if ":5201" in out and ":5202" in out:
            break
        time.sleep(0.1)
    prev = prev_result(pod, "10.251.0.2/24", "10.251.0.1")
    many = gen_entries(PKT_ENTRIES - 1, rng) + ["tcp://10.252.0.2:5201-5202"]
    confs = {m: write_json(world, "hs-pkt-%s.json" % m, ng_conf(world, many, prev, {}, host_mirror=m))
             for m in ("off", "required")}
    names = {"off": "10,000 entries, host side off", "required": "10,000 entries, host side on"}
    got = {m: {"g": [], "c": []} for m in confs}
    ratios = {"g": [], "c": []}
    errors = 0
    for k in range(PKT_PAIRS):
        pair = {}
        for m in (("off", "required") if k % 2 == 0 else ("required", "off")):
            timed([world.ng], env=cni_env("DEL", pod, 1), stdin=confs[m])
            s = timed([world.ng], env=cni_env("ADD", pod, 1), stdin=confs[m])
            if not s.ok or len(_host_tables()) != (2 if m == "required" else 1):
                errors += 1
                continue
            try:
                pair[m] = _measure(pod, "10.252.0.2")
            except (subprocess.TimeoutExpired, ValueError, KeyError):
                errors += 1
            if iperf.poll() is not None:
                iperf = world.spawn(peer, [IPERF3, "-s", "-B", "10.252.0.2", "-p", "5201"], "hs-iperf3")
                time.sleep(0.5)
        for m, (g, c) in pair.items():
            got[m]["g"].append(g)
            got[m]["c"].append(c)
        if len(pair) == 2:
            ratios["g"].append(pair["required"][0] / pair["off"][0])
            ratios["c"].append(pair["required"][1] / pair["off"][1])
    timed([world.ng], env=cni_env("DEL", pod, 1), stdin=confs["required"])
    R["hs_pkt"] = dict(got=got, ratios=ratios, names=names, errors=errors)
    for p in list(world.procs):
        world.stop(p)
    ns_run(world.node, [NFT, "list", "tables"])


def _lat_rows(series):
    rows = []
    for s in series:
        rows.append([s.name, len(s.samples), fmt(s.median()) if s.samples else "-",
                     fmt(s.p(90)) if s.samples else "-",
                     fmt(s.mean("user") + s.mean("sys")) if s.samples else "-", s.errors])
    return rows


def _rel(xs):
    if not xs:
        return "-"
    return "%+.1f%% (p25…p75 %+.1f…%+.1f)" % ((med(xs) - 1) * 100, (pct(xs, 25) - 1) * 100, (pct(xs, 75) - 1) * 100)


def report_hostside(R, out):
    add, dele, fl = R["hs_add"], R["hs_del"], R["hs_floor_del"]
    out.append("## 7. Host-side table (hostMirror)\n")
    out.append("Pods with a veth whose peer is in the node namespace (the ptp layout), the example config; per "
               "round both variants in shuffled order, each its own fresh pod: ADD then DEL, each its own "
               "process (benchexec). 'both sides' adds the node's host-side table: one more transaction in the "
               "node namespace at ADD and at DEL. One resident pod with its host-side table stays for the whole "
               "section, as on a node already running pods (the machine's first netdev ingress chain flips a "
               "global static key, a cost paid once per node, not per ADD).\n")
    head = ["runs", "median ms", "p90 ms", "CPU user+sys ms (mean; robust to the machine's load)", "errors"]
    out.append(table(["ADD"] + head, _lat_rows(add)))
    out.append("")
    out.append(table(["DEL"] + head, _lat_rows(dele + [fl])))
    if add[1].samples and dele[1].samples and dele[0].samples and fl.samples:
        extra = dele[1].median() - dele[0].median()
        out.append("\n- ADD with both sides: median %s ms (goal <= 3 ms: **%s**), %+.2f ms over the pod side "
                   "alone; CPU %+.2f ms." % (fmt(add[1].median()), "met" if add[1].median() <= 3 else "not met",
                                            add[1].median() - add[0].median(),
                                            add[1].mean("user") + add[1].mean("sys") - add[0].mean("user")
                                            - add[0].mean("sys")))
        out.append("- DEL with both sides costs %+.2f ms over the pod side alone; one table delete by the floor "
                   "(one RCU grace period at socket close) costs %s ms. Both deletions are committed before "
                   "either socket closes, so the kernel frees them together: %s." % (
                       extra, fmt(fl.median()),
                       "one grace period, not two" if extra < 0.5 * fl.median() else
                       "the second side still pays about a grace period of its own"))
    P = R.get("hs_pkt")
    if P:
        out.append("\nPer-packet cost: pod --veth-- node --veth-- peer, routed by the node; the pod's tables with "
                   "%d allow entries, the host side off or on, %d back-to-back A/B pairs (alternating order) of "
                   "1 s iperf3 + 1 s connrate.\n" % (PKT_ENTRIES, len(P["ratios"]["c"])))
        rows = []
        for m in ("off", "required"):
            g, c = P["got"][m]["g"], P["got"][m]["c"]
            rows.append([P["names"][m], fmt(med(g)) if g else "-", fmt(med(c), 0) if c else "-"])
        out.append(table(["variant", "throughput Gbit/s (median)", "connections/s (median)"], rows))
        out.append("\n- host side on vs off (median of the pairs' ratios): throughput %s, connection rate %s; "
                   "goal within 3%%; errors %d." % (_rel(P["ratios"]["g"]), _rel(P["ratios"]["c"]), P["errors"]))
    out.append("")
