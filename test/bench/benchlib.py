"""Shared pieces of `make bench` (see bench.py): settings, the world of
network namespaces this run owns, timing one process, configurations,
statistics and markdown tables."""
import ctypes
import ipaddress
import json
import os
import random
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))


def env_int(name, default):
    v = os.environ.get(name, "")
    return int(v) if v.strip() else default


RUNS = env_int("BENCH_RUNS", 50)
WARMUP = env_int("BENCH_WARMUP", 3)
SCALE_RUNS = env_int("BENCH_SCALE_RUNS", 15)
SCALE_SIZES = [int(x) for x in os.environ.get("BENCH_SCALE_SIZES", "1,100,1000,10000").split(",") if x]
PAR = env_int("BENCH_PAR", 100)
PKT_ROUNDS = env_int("BENCH_PKT_ROUNDS", 4)
PKT_PAIRS = env_int("BENCH_PKT_PAIRS", 12)
IPERF_SECONDS = env_int("BENCH_IPERF_SECONDS", 2)
CONN_SECONDS = env_int("BENCH_CONN_SECONDS", 1)
PKT_ENTRIES = env_int("BENCH_PKT_ENTRIES", 10000)
PROFILE_RUNS = env_int("BENCH_PROFILE_RUNS", 30)
SECTIONS = [s.strip() for s in os.environ.get(
    "BENCH_SECTIONS", "latency,scale,packet,concurrency,memory,profile,hostside").split(",") if s.strip()]
OUT = os.environ.get("BENCH_OUT", os.path.join(HERE, "results-latest.md"))
BENCH_ID = os.environ.get("BENCH_ID") or "ngb-%06x" % random.getrandbits(24)
SEED = env_int("BENCH_SEED", 7)

TOOLS = os.environ.get("BENCH_TOOLS", os.path.join(REPO, "build", "bench"))
BENCHEXEC = os.path.join(TOOLS, "benchexec")
FLOOR = os.path.join(TOOLS, "floor")
CONNRATE = os.path.join(TOOLS, "connrate")
NG_SRC = os.environ.get("NG_BIN", os.path.join(REPO, "build", "boxxkite-netguard"))
# `make static` (the DaemonSet image's binary): measured too when it is at
# least as new as NG_BIN, so that it is the same code.
NG_STATIC_SRC = os.environ.get("NG_STATIC_BIN", os.path.join(REPO, "build", "static", "boxxkite-netguard"))
FIREWALL = "/usr/lib/cni/firewall"
NFT = "/usr/sbin/nft"
IPT_RESTORE = "/usr/sbin/iptables-restore"
IPERF3 = "/usr/bin/iperf3"
GNU_TIME = "/usr/bin/time"
TABLE = "boxxkite_netguard"
CLONE_NEWNET = 0x40000000
# Every child gets this environment (plus the CNI_* of its call), so that all
# variants start alike; the firewall plugin needs PATH to find iptables.
BASE_ENV = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "LC_ALL": "C"}


def log(msg):
    print("bench: " + msg, file=sys.stderr, flush=True)



# ---- the world: namespaces and processes of this run only -------------------

class World:
    def __init__(self, bench_id):
        self.id = bench_id
        self.tmp = tempfile.mkdtemp(prefix=bench_id + ".", dir="/tmp")
        self.netns = []  # names, in creation order
        self.procs = []  # Popen objects of background services
        self.node = None
        self.ng = None  # the snapshot of the plugin binary this run measures

    def path(self, name):
        return "/run/netns/" + name

    def add_netns(self, short, pod_if=True):
        name = "%s-%s" % (self.id, short)
        self.netns.append(name)
        with open(os.path.join(self.tmp, "netns"), "a") as f:  # for run.sh's trap
            f.write(name + "\n")
        subprocess.run(["ip", "netns", "add", name], check=True)
        # The pod's interface (CNI_IFNAME): the packet-socket guard hooks it,
        # and ADD refuses a namespace without it.
        if pod_if:
            # (a veth pair inside the namespace: not every kernel has dummy)
            subprocess.run(["ip", "-n", name, "link", "add", "eth0", "type", "veth", "peer", "name", "eth0p"],
                           check=True)
        return self.path(name)

    def del_netns(self, path):
        name = os.path.basename(path)
        if name not in self.netns:
            raise RuntimeError("refusing to delete a namespace this run did not create: " + name)
        self._kill_inside(name)
        subprocess.run(["ip", "netns", "delete", name], stderr=subprocess.DEVNULL)
        self.netns.remove(name)

    def _kill_inside(self, name):
        p = subprocess.run(["ip", "netns", "pids", name], capture_output=True, text=True)
        for pid in p.stdout.split():
            if pid == str(os.getpid()):  # the driver lives in our node namespace
                continue
            try:
                os.kill(int(pid), signal.SIGKILL)
            except (ProcessLookupError, ValueError):
                pass

    def enter_node(self):
        """Moves this process (single-threaded) into our node namespace."""
        self.node = self.add_netns("node", pod_if=False)
        subprocess.run(["ip", "-n", os.path.basename(self.node), "link", "set", "lo", "up"], check=True)
        libc = ctypes.CDLL(None, use_errno=True)
        fd = os.open(self.node, os.O_RDONLY | os.O_CLOEXEC)
        if libc.setns(fd, CLONE_NEWNET) != 0:
            raise OSError(ctypes.get_errno(), "setns into " + self.node)
        os.close(fd)

    def spawn(self, netns, argv, logname):
        logf = open(os.path.join(self.tmp, logname + ".log"), "ab")
        # nsenter execs the program, so the PID is the service itself.
        p = subprocess.Popen(["nsenter", "--net=" + netns] + argv, stdin=subprocess.DEVNULL,
                             stdout=logf, stderr=logf, env=BASE_ENV)
        self.procs.append(p)
        return p

    def stop(self, p):
        if p.poll() is None:
            p.terminate()
            try:
                p.wait(2)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        if p in self.procs:
            self.procs.remove(p)

    def cleanup(self):
        for p in list(self.procs):
            try:
                self.stop(p)
            except Exception:  # noqa: BLE001 - teardown goes on
                pass
        for name in reversed(list(self.netns)):
            try:
                self.del_netns(self.path(name))
            except Exception:  # noqa: BLE001
                pass
        shutil.rmtree(self.tmp, ignore_errors=True)


# ---- timing one process ------------------------------------------------------

class Sample:
    __slots__ = ("wall", "user", "sys", "rss", "minflt", "status", "ok")

    def __init__(self, line):
        w, u, s, rss, flt, st = (int(x) for x in line.split())
        self.wall, self.user, self.sys = w / 1e6, u / 1e3, s / 1e3  # ms
        self.rss, self.minflt, self.status = rss, flt, st
        self.ok = st == 0


def timed(argv, env=None, netns=None, stdin=None, stdout=None):
    cmd = [BENCHEXEC]
    if netns:
        cmd += ["-n", netns]
    if stdin:
        cmd += ["-i", stdin]
    if stdout:
        cmd += ["-o", stdout]
    p = subprocess.run(cmd + ["--"] + argv, env=env or BASE_ENV, capture_output=True, text=True,
                       timeout=300)
    if p.returncode != 0:
        raise RuntimeError("benchexec failed: " + p.stderr.strip())
    return Sample(p.stdout)


def ns_run(netns, argv, **kw):
    return subprocess.run(["nsenter", "--net=" + netns] + argv, capture_output=True, text=True,
                          env=BASE_ENV, **kw)


def has_table(netns, table, family="inet"):
    return ns_run(netns, [NFT, "list", "table", family, table]).returncode == 0


# ---- configurations -----------------------------------------------------------

def prev_result(netns, ip4, gw4, ip6=None, gw6=None):
    ips = [{"interface": 2, "address": ip4, "gateway": gw4}]
    if ip6:
        ips.append({"interface": 2, "address": ip6, "gateway": gw6})
    return {
        "cniVersion": "1.0.0",
        "interfaces": [{"name": "ngbr0", "mac": "0a:58:0a:f4:01:01"},
                       {"name": "veth0b1c2d3e", "mac": "be:2f:11:4c:9a:01"},
                       {"name": "eth0", "mac": "0a:58:0a:f4:01:05", "sandbox": netns}],
        "ips": ips,
        "routes": [{"dst": "10.0.0.0/8", "gw": gw4}],
        "dns": {},
    }


# The e2e world's example (conf/ + e2e/conf/pod-network.conflist) without the
# DNS name (a name would make every ADD a DNS query, which is not what this
# measures), plus one per-pod grant through the annotation, as containerd sends it.
EXAMPLE_ALLOW = ["10.20.1.5:443", "[fd00:20::5]:443", "tcp://10.30.0.0/16:443"]
ANNOTATIONS = {"netguard.boxxkite.io/egress": "10.1.2.3:443"}


def ng_conf(world, allow, prev, annotations=ANNOTATIONS, host_mirror="off"):
    conf = {
        "cniVersion": "1.0.0",
        "name": "ngbench",
        "type": "boxxkite-netguard",
        "capabilities": {"io.kubernetes.cri.pod-annotations": True},
        "logFile": os.path.join(world.tmp, "netguard.log"),
        "enforce": {"namespaces": ["sandboxes"], "optInAnnotation": True},
        "dns": {"servers": ["10.96.0.10", "fd00:10:96::a"]},
        # "resolve": no agent runs in these sections (learn, the default
        # since 0.3, waits for one at ADD: code 11 after 3 s); the agent's
        # costs are bench/agent.sh's and bench/dataplane.sh's.
        "egress": {"allow": allow, "envelope": ["10.0.0.0/8:443", "[fd00:20::/32]:443"], "names": "resolve"},
        "ingress": {"ports": [8080], "sources": ["10.99.0.0/24", "fd00:99::/64"], "allowNode": True},
        "denyAction": "reject",
        # The sections measuring the pod's tables keep their topology (a pod
        # interface with no peer on the node's side): the host side is
        # measured on its own, in hostside.py.
        "hostMirror": host_mirror,
        "runtimeConfig": {"io.kubernetes.cri.pod-annotations": annotations},
        "prevResult": prev,
    }
    return conf


def write_json(world, name, obj):
    path = os.path.join(world.tmp, name)
    with open(path, "w") as f:
        json.dump(obj, f)
    return path


def cni_env(cmd, netns, i):
    e = dict(BASE_ENV)
    e.update(CNI_COMMAND=cmd, CNI_CONTAINERID="ngb%08d" % i, CNI_NETNS=netns, CNI_IFNAME="eth0",
             CNI_PATH="/usr/lib/cni",
             CNI_ARGS="IgnoreUnknown=1;K8S_POD_NAMESPACE=sandboxes;K8S_POD_NAME=bench-%d;"
                      "K8S_POD_INFRA_CONTAINER_ID=ngb%08d;K8S_POD_UID=00000000-0000-4000-8000-%012d" % (i, i, i))
    return e


def gen_entries(n, rng, v4_only=False):
    """n egress.allow entries of the kinds a platform writes: mostly single
    IPv4 hosts on 443, IPv4 CIDRs (/16../30), some other ports and ranges, a
    little UDP, IPv6 hosts and /48../64 prefixes. Clear of every metadata
    address (169.254/16, 100.100/16, 168.63/16, fd00::/8, 64:ff9b::/96)."""
    first = [3, 13, 18, 20, 34, 35, 44, 52, 54, 99, 104, 151, 185, 198, 203, 10, 172, 192]
    ports = ["443"] * 14 + ["5432", "6379", "8443", "9000-9100", "27017", "3306"]
    out = []
    for _ in range(n):
        r = rng.random()
        port = rng.choice(ports)
        if v4_only or r < 0.88:
            a = rng.choice(first)
            if a == 172:
                b = rng.randint(16, 31)
            elif a == 192:
                a, b = 192, 168
            else:
                b = rng.randint(0, 255)
            ip = "%d.%d.%d.%d" % (a, b, rng.randint(0, 255), rng.randint(1, 254))
            k = rng.random()
            if k < 0.62:
                out.append("%s:%s" % (ip, port))
            elif k < 0.92:
                plen = rng.choice([16, 20, 22, 24, 24, 24, 26, 27, 28, 30])
                net = ipaddress.ip_network("%s/%d" % (ip, plen), strict=False)
                out.append("tcp://%s:%s" % (net, port))
            else:
                out.append("udp://%s:%s" % (ip, rng.choice(["53", "123", "8125", "5353"])))
        else:
            h = "2600:1f%02x:%x:%x" % (rng.randint(0x10, 0x1f), rng.randint(0, 0xffff), rng.randint(0, 0xffff))
            if rng.random() < 0.6:
                out.append("[%s::%x]:%s" % (h, rng.randint(1, 0xffff), port))
            else:
                out.append("[%s::/64]:%s" % (h, port))
    return out


# ---- statistics -----------------------------------------------------------------

def pct(xs, p):
    s = sorted(xs)
    if not s:
        return float("nan")
    k = (len(s) - 1) * p / 100.0
    f = int(k)
    c = min(f + 1, len(s) - 1)
    return s[f] + (s[c] - s[f]) * (k - f)


def med(xs):
    return pct(xs, 50)


def fmt(x, d=2):
    return "-" if x is None or x != x else ("%.*f" % (d, x))


def table(headers, rows):
    out = ["| " + " | ".join(headers) + " |", "|" + "|".join(" --- " for _ in headers) + "|"]
    for r in rows:
        out.append("| " + " | ".join(str(c) for c in r) + " |")
    return "\n".join(out)


class Series:
    def __init__(self, name):
        self.name = name
        self.samples = []
        self.errors = 0

    def add(self, s, ok=True):
        if s.ok and ok:
            self.samples.append(s)
        else:
            self.errors += 1

    def walls(self):
        return [s.wall for s in self.samples]

    def median(self):
        return med(self.walls())

    def p(self, q):
        return pct(self.walls(), q)

    def mean(self, attr):
        xs = [getattr(s, attr) for s in self.samples]
        return statistics.mean(xs) if xs else float("nan")


# ---- nft input: what our plugin installed, as nft prints it ----------------------

def strip_listing(text):
    text = re.sub(r"(?m)^\s*packets \d+ bytes \d+\s*\n", "", text)
    text = re.sub(r"counter packets \d+ bytes \d+", "counter", text)
    return re.sub(r" expires [0-9a-z.]+", "", text)


def make_nft_inputs(world, conf_path, tag):
    """Installs the table with our plugin in a scratch namespace, lists it
    and writes `nft -f` inputs: plain (create) and replace (add + delete +
    create, the plugin's own semantics). Checks that nft installs the same."""
    ns = world.add_netns("gen-" + tag)
    s = timed([world.ng], env=cni_env("ADD", ns, 0), stdin=conf_path)
    if not s.ok:
        raise RuntimeError("netguard ADD failed while generating the nft input (%s)" % tag)
    listed = ns_run(ns, [NFT, "list", "table", "inet", TABLE], check=True).stdout
    plain = strip_listing(listed)
    world.del_netns(ns)
    p_plain = os.path.join(world.tmp, "ruleset-%s.nft" % tag)
    p_repl = os.path.join(world.tmp, "ruleset-%s-replace.nft" % tag)
    with open(p_plain, "w") as f:
        f.write(plain)
    with open(p_repl, "w") as f:
        f.write("table inet %s\ndelete table inet %s\n" % (TABLE, TABLE) + plain)
    ns = world.add_netns("chk-" + tag)
    same = False
    if timed([NFT, "-f", p_plain], netns=ns).ok:
        relisted = ns_run(ns, [NFT, "list", "table", "inet", TABLE]).stdout
        same = strip_listing(relisted) == plain
    world.del_netns(ns)
    return p_plain, p_repl, same, plain.count("\n")
