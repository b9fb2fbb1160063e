#!/usr/bin/python3
"""`make bench`: boxxkite-netguard against the kernel floor and the alternatives.

Run by test/bench/run.sh (root). Everything happens in network namespaces this
run creates, named BENCH_ID-* (BENCH_ID = ngb-<random>): the driver itself
moves into BENCH_ID-node first, so the reference firewall plugin's iptables
rules (which go where the plugin runs) land there, never in the machine's
namespace. Each namespace and background process is recorded before it
exists and removed (by name / by PID) on exit, also on failure or a signal.

Modules: benchlib.py (settings, namespaces, timing, configs, statistics),
control.py (latency, scale, concurrency, memory), packet.py, profiling.py.

Sections (BENCH_SECTIONS, comma-separated; all by default):
  latency      ADD and DEL wall time, interleaved with the floor, nft -f and
               the firewall plugin, fresh pod namespace per run
  scale        ADD time with 1, 100, 1000, 10000 allow entries (and nft -f)
  packet       TCP throughput (iperf3) and connection rate (connrate) through
               no ruleset, netguard 1 / 10,000 entries, linear iptables
  concurrency  100 ADDs (then DELs) at once
  memory       peak RSS (/usr/bin/time -v)
  profile      callgrind of one ADD (user space by function group), perf
               sampling of ADDs (kernel share by syscall), off-CPU time
  hostside     the host-side table: ADD/DEL with both sides vs the pod side
               alone, DEL's grace periods, per-packet cost on vs off
Results: a markdown report on stdout and in BENCH_OUT.
"""
import datetime
import hashlib
import os
import shutil
import signal
import subprocess
import sys
import time

from benchlib import (BASE_ENV, BENCHEXEC, BENCH_ID, CONNRATE, CONN_SECONDS, FLOOR, IPERF3, IPERF_SECONDS,
                       NFT, NG_SRC, NG_STATIC_SRC, OUT, PAR, PKT_ENTRIES, PKT_ROUNDS, REPO, RUNS, SCALE_RUNS,
                       SECTIONS, WARMUP, World, log)
from control import (report_concurrency, report_latency, report_memory, report_scale, section_concurrency,
                     section_latency, section_memory, section_scale)
from packet import report_packet, section_packet
from hostside import report_hostside, section_hostside
from profiling import report_profile, section_profile


def machine():
    model = "?"
    for line in open("/proc/cpuinfo"):
        if line.startswith("model name"):
            model = line.split(":", 1)[1].strip()
            break
    mem = 0
    for line in open("/proc/meminfo"):
        if line.startswith("MemTotal"):
            mem = int(line.split()[1]) / 1024 / 1024
    u = os.uname()
    return "%d cores (%s), Linux %s %s, %.0f GiB RAM" % (os.cpu_count(), model, u.release, u.machine, mem)


def versions():
    def first(cmd):
        try:
            return subprocess.run(cmd, capture_output=True, text=True, env=BASE_ENV).stdout.strip().splitlines()[0]
        except (OSError, IndexError):
            return "?"
    pkg = first(["dpkg-query", "-W", "-f=${Version}", "containernetworking-plugins"])
    return "nft %s; %s; containernetworking-plugins %s (firewall); %s" % (
        first([NFT, "--version"]).replace("nftables ", ""), first(["iptables", "--version"]), pkg,
        first([IPERF3, "--version"]))


def main():
    if os.geteuid() != 0:
        sys.exit("bench: needs root (network namespaces)")
    for t in (BENCHEXEC, FLOOR, CONNRATE, NG_SRC):
        if not os.access(t, os.X_OK):
            sys.exit("bench: %s missing (run via make bench / test/bench/run.sh)" % t)
    world = World(BENCH_ID)

    def on_signal(sig, _frame):
        log("signal %d: cleaning up" % sig)
        raise SystemExit(128 + sig)
    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)
    R = {}
    t_start = time.monotonic()
    load0 = open("/proc/loadavg").read().split()[:3]
    try:
        # Measure a snapshot of the binary: others may rebuild build/ meanwhile.
        world.ng = os.path.join(world.tmp, "boxxkite-netguard")
        shutil.copy2(NG_SRC, world.ng)
        R["ng_sha"] = hashlib.sha256(open(world.ng, "rb").read()).hexdigest()[:16]
        R["ng_version"] = subprocess.run([world.ng, "version"], capture_output=True, text=True,
                                         env=BASE_ENV).stdout.strip()
        if os.access(NG_STATIC_SRC, os.X_OK) and os.path.getmtime(NG_STATIC_SRC) >= os.path.getmtime(NG_SRC):
            R["ng_static"] = os.path.join(world.tmp, "boxxkite-netguard-static")
            shutil.copy2(NG_STATIC_SRC, R["ng_static"])
        else:
            R["ng_static_note"] = "not measured (`%s` missing or older than the dynamic binary: `make static`)" % (
                os.path.relpath(NG_STATIC_SRC, REPO))
        world.enter_node()
        for sec, fn in [("latency", section_latency), ("scale", section_scale), ("packet", section_packet),
                        ("concurrency", section_concurrency), ("memory", section_memory),
                        ("profile", section_profile), ("hostside", section_hostside)]:
            if sec in SECTIONS:
                log("section %s" % sec)
                t = time.monotonic()
                fn(world, R)
                R["t_" + sec] = time.monotonic() - t
        load1 = open("/proc/loadavg").read().split()[:3]
        out = []
        out.append("# boxxkite-netguard benchmark: latest results\n")
        out.append("`make bench` (test/bench/run.sh), run %s UTC, %.0f s, namespaces `%s-*`.\n" % (
            datetime.datetime.utcnow().strftime("%Y-%m-%d %H:%M"), time.monotonic() - t_start, BENCH_ID))
        out.append("- machine: %s; load average at start %s, at end %s (the machine is shared: numbers are "
                   "noisy, hence interleaving, medians and the spread columns)" % (machine(), "/".join(load0),
                                                                                    "/".join(load1)))
        out.append("- plugin: `%s` (%s, sha256 %s…); tools: %s" % (os.path.relpath(NG_SRC, REPO), R["ng_version"],
                                                                    R["ng_sha"], versions()))
        out.append("- settings: BENCH_RUNS=%d BENCH_WARMUP=%d BENCH_SCALE_RUNS=%d BENCH_PAR=%d BENCH_PKT_ROUNDS=%d "
                   "BENCH_IPERF_SECONDS=%d BENCH_CONN_SECONDS=%d BENCH_PKT_ENTRIES=%d BENCH_SECTIONS=%s\n" % (
                       RUNS, WARMUP, SCALE_RUNS, PAR, PKT_ROUNDS, IPERF_SECONDS, CONN_SECONDS, PKT_ENTRIES,
                       ",".join(SECTIONS)))
        for sec, fn in [("latency", report_latency), ("scale", report_scale), ("packet", report_packet),
                        ("concurrency", report_concurrency), ("memory", report_memory),
                        ("profile", report_profile), ("hostside", report_hostside)]:
            if sec in SECTIONS and ("t_" + sec) in R:
                fn(R, out)
        text = "\n".join(out) + "\n"
        with open(OUT, "w") as f:
            f.write(text)
        print(text)
        log("written to %s" % OUT)
    finally:
        world.cleanup()


if __name__ == "__main__":
    main()
