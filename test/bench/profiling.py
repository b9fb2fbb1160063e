"""`make bench`, the profile of one ADD: user-space instructions by step
(callgrind) and CPU samples by user object / kernel activity (perf)."""
import os
import random
import re
import shutil
import subprocess

from benchlib import (EXAMPLE_ALLOW, PROFILE_RUNS, SCALE_SIZES, SEED, TABLE, cni_env, gen_entries, has_table,
                       ng_conf, prev_result, table, write_json)


# ---- callgrind and perf ------------------------------------------------------

# Disjoint subtrees of the ADD path, by their (non-inlined, exported) entry
# functions: callgrind's inclusive instruction counts.
CG_GROUPS = [
    ("JSON parse of stdin (jansson json_loadb)", ["json_loadb"]),
    ("config, CNI_ARGS, prevResult, annotations: validation", ["ng_config_parse", "ng_cni_args_parse",
                                                               "ng_prev_parse", "ng_annotations_parse", "ng_select"]),
    ("policy compile (incl. set normalisation)", ["ng_policy_names", "ng_resolve_all", "ng_policy_compile"]),
    ("batch buffer setup (ng_batch_init)", ["ng_batch_init"]),
    ("encoding: rule/set builders + libnftnl (ng_render_create, ng_render_replace)",
     ["ng_render_create", "ng_render_replace"]),
    ("netns check + enter + socket (ng_netns_open, ng_nl_open_netns)", ["ng_netns_open", "ng_nl_open_netns"]),
    ("netlink send + ack loop, user side (ng_nl_commit)", ["ng_nl_commit"]),
    ("result JSON (ng_prev_convert) + decision log (ng_log_emit)", ["ng_prev_convert", "ng_log_emit"]),
]


def callgrind_profile(world, conf, tag):
    if not shutil.which("valgrind") or not shutil.which("callgrind_annotate"):
        return None
    ns = world.add_netns("cg-" + tag)
    outf = os.path.join(world.tmp, "callgrind-%s.out" % tag)
    with open(conf) as f:
        p = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=" + outf, world.ng],
                           env=cni_env("ADD", ns, 1), stdin=f, capture_output=True, text=True, timeout=300)
    ok = p.returncode == 0 and has_table(ns, TABLE)
    world.del_netns(ns)
    if not ok:
        return None
    ann = subprocess.run(["callgrind_annotate", "--inclusive=yes", "--threshold=100", outf],
                         capture_output=True, text=True).stdout
    incl, total = {}, None
    for line in ann.splitlines():
        m = re.match(r"^\s*([\d,]+)\s+\(\s*[\d.]+%\)\s+(.*)$", line)
        if not m:
            continue
        n, rest = int(m.group(1).replace(",", "")), m.group(2)
        if "PROGRAM TOTALS" in rest:
            total = n
            continue
        fn = re.sub(r"\s+\[.*\]$", "", rest)
        fn = fn.rsplit(":", 1)[-1]
        if fn not in incl or n > incl[fn]:  # one name may appear per object; keep the largest
            incl[fn] = n
    # Self cost per shared object: how much of it is libnftnl, jansson, ld.so, libc.
    self_ann = subprocess.run(["callgrind_annotate", "--threshold=100", outf], capture_output=True, text=True).stdout
    by_obj = {}
    for line in self_ann.splitlines():
        m = re.match(r"^\s*([\d,]+)\s+\(\s*[\d.]+%\)\s+.*\[(.*)\]\s*$", line)
        if m:
            obj = os.path.basename(m.group(2))
            by_obj[obj] = by_obj.get(obj, 0) + int(m.group(1).replace(",", ""))
    return dict(total=total, incl=incl, by_obj=by_obj)


# The function do_syscall_64 calls, as a syscall name (6.x kernels inline the
# __x64_sys_* wrappers, so stacks show these).
KSYSCALL = {"vm_mmap_pgoff": "mmap", "ksys_mmap_pgoff": "mmap", "__vm_munmap": "munmap",
            "do_mprotect_pkey": "mprotect", "do_sys_openat2": "openat", "__sys_sendmsg": "sendmsg",
            "__sys_recvfrom": "recvfrom", "do_group_exit": "exit_group", "do_exit": "exit_group",
            "__do_sys_newfstatat": "fstatat", "vfs_fstatat": "fstatat", "__sys_socket": "socket",
            "__sys_bind": "bind", "__do_sys_brk": "brk", "__x64_sys_close": "close", "ksys_read": "read",
            "ksys_write": "write", "__x64_sys_setns": "setns", "do_sys_poll": "poll"}


def perf_profile(world, conf, runs):
    """perf samples (cpu-clock) of `runs` ADDs, classified by where the CPU
    was: user space (by object), or kernel (by the syscall or fault)."""
    if not shutil.which("perf"):
        return None
    nss = [world.add_netns("pf%d" % i) for i in range(runs)]
    script = os.path.join(world.tmp, "perf-loop.sh")
    with open(script, "w") as f:
        f.write("#!/bin/sh\nset -e\n")
        for i, ns in enumerate(nss):
            f.write("CNI_NETNS=%s %s < %s > /dev/null\n" % (ns, world.ng, conf))
    data = os.path.join(world.tmp, "perf.data")
    env = cni_env("ADD", "", 1)
    del env["CNI_NETNS"]
    p = subprocess.run(["perf", "record", "-q", "-e", "cpu-clock", "-F", "20000", "-g", "-o", data, "--",
                        "/bin/sh", script], env=env, capture_output=True, text=True, timeout=300)
    for ns in nss:
        world.del_netns(ns)
    if p.returncode != 0:
        return {"error": (p.stderr.strip().splitlines() or ["perf record failed"])[-1]}
    sc = subprocess.run(["perf", "script", "-i", data, "-F", "comm,ip,sym,dso"], capture_output=True, text=True)
    cats, n = {}, 0
    for block in sc.stdout.split("\n\n"):
        lines = [x for x in block.strip().splitlines() if x.strip()]
        if not lines or not lines[0].strip().startswith("boxxkite-netgu"):
            continue
        frames = lines[1:] if len(lines) > 1 else []
        if not frames:
            continue
        n += 1
        leaf = frames[0]
        syms = [(f.split() + ["?", "?"])[1].split("+")[0] for f in frames]
        if "[kernel.kallsyms]" not in leaf:
            obj = re.search(r"\(([^)]*)\)\s*$", leaf)
            o = os.path.basename(obj.group(1)) if obj else "?"
            key = "user: " + ("boxxkite-netguard" if o.startswith("boxxkite") else o)
        elif any(x.startswith(("asm_sysvec", "asm_common_interrupt")) for x in syms):
            key = "kernel: interrupts (timer, softirq)"
        elif any(x in ("asm_exc_page_fault", "exc_page_fault") for x in syms):
            key = "kernel: page faults"
        elif "nfnetlink_rcv_batch" in syms:
            i = syms.index("nfnetlink_rcv_batch")
            key = "kernel: nf_tables transaction: " + (syms[i - 1] if i else "nfnetlink_rcv_batch")
        elif "do_syscall_64" in syms:
            i = syms.index("do_syscall_64") - 1
            while i > 0 and syms[i] == "x64_sys_call":  # the dispatcher; the syscall is below it
                i -= 1
            name = re.sub(r"^__(x64|do)_sys_", "", syms[i]) if i >= 0 else "entry"
            key = "kernel: syscall " + KSYSCALL.get(name, name)
        else:
            key = "kernel: other"
        cats[key] = cats.get(key, 0) + 1
    return {"samples": n, "cats": cats, "runs": runs}


def section_profile(world, R):
    prev = prev_result("/run/netns/%s-pod" % world.id, "10.244.1.5/24", "10.244.1.1",
                       "fd00:244:1::5/64", "fd00:244:1::1")
    conf = write_json(world, "prof.json", ng_conf(world, EXAMPLE_ALLOW, prev))
    big_n = max(SCALE_SIZES)
    conf_big = write_json(world, "prof-big.json",
                          ng_conf(world, gen_entries(big_n, random.Random(SEED + 1)), prev))
    R["cg"] = {"example": callgrind_profile(world, conf, "ex"), "big": callgrind_profile(world, conf_big, "big"),
               "big_n": big_n}
    R["perf"] = perf_profile(world, conf, PROFILE_RUNS)
    R["perf_big"] = perf_profile(world, conf_big, max(3, PROFILE_RUNS // 6))


def report_profile(R, out):
    out.append("## Profile of ADD\n")
    cg = R.get("cg") or {}
    ex, big = cg.get("example"), cg.get("big")
    if ex:
        out.append("**User space** (valgrind callgrind, instructions executed by one ADD; inclusive counts of "
                   "the entry function of each step; 'process start' is everything outside `main`: exec'd "
                   "image set-up, ld.so relocations and symbol binding (the binary links with `-z now`), libc "
                   "init, exit).\n")
        rows = []

        def grp(d):
            g = {}
            for label, fns in CG_GROUPS:
                g[label] = sum(d["incl"].get(f, 0) for f in fns)
            g["process start: ld.so + libc init + exit (outside main)"] = d["total"] - d["incl"].get("main", 0)
            g["other in main (frees, env, glue)"] = d["incl"].get("main", 0) - sum(
                g[label] for label, _ in CG_GROUPS)
            return g
        ge = grp(ex)
        gb = grp(big) if big else {}
        for label in ["process start: ld.so + libc init + exit (outside main)"] + [x[0] for x in CG_GROUPS] + \
                ["other in main (frees, env, glue)"]:
            rows.append([label, "{:,}".format(ge[label]), "%.1f%%" % (100.0 * ge[label] / ex["total"]),
                         "{:,}".format(gb[label]) if gb else "-",
                         "%.1f%%" % (100.0 * gb[label] / big["total"]) if gb else "-"])
        rows.append(["**total**", "{:,}".format(ex["total"]), "100%",
                     "{:,}".format(big["total"]) if big else "-", "100%" if big else "-"])
        out.append(table(["step", "Ir, example config", "share", "Ir, %d entries" % cg.get("big_n", 0), "share"], rows))
        objs = sorted(ex["by_obj"].items(), key=lambda kv: -kv[1])[:6]
        out.append("\nSelf instructions by object, example config: " + ", ".join(
            "%s %.1f%%" % (o, 100.0 * n / ex["total"]) for o, n in objs) + ".\n")
    else:
        out.append("callgrind: not available (valgrind missing or the run failed).\n")
    pf, pb = R.get("perf"), R.get("perf_big")
    if pf and "cats" in pf and pf["samples"]:
        out.append("**Where the CPU time of an ADD goes, user vs kernel** (`perf record -e cpu-clock -F 20000 -g`, "
                   "%d ADDs of the example config and %d of the %d-entry one, fresh namespace each; samples of the "
                   "plugin process after exec, classified by the leaf's object or by what the kernel was serving: "
                   "the nf_tables message being processed, a page fault, or the syscall). Off-CPU waiting is not "
                   "sampled: see the latency table's off-CPU column.\n"
                   % (pf["runs"], pb.get("runs", 0) if pb else 0, cg.get("big_n", 0)))
        big_ok = pb and "cats" in pb and pb["samples"]
        keys = sorted(set(pf["cats"]) | (set(pb["cats"]) if big_ok else set()),
                      key=lambda k: -(pf["cats"].get(k, 0) / pf["samples"] +
                                      (pb["cats"].get(k, 0) / pb["samples"] if big_ok else 0)))
        rows, small_a, small_b = [], 0, 0
        for k in keys:
            a = pf["cats"].get(k, 0)
            b = pb["cats"].get(k, 0) if big_ok else 0
            if a * 100 < pf["samples"] and (not big_ok or b * 100 < pb["samples"]):
                small_a, small_b = small_a + a, small_b + b
                continue
            rows.append([k, "%.1f%%" % (100.0 * a / pf["samples"]),
                         "%.1f%%" % (100.0 * b / pb["samples"]) if big_ok else "-"])
        rows.append(["everything under 1% each", "%.1f%%" % (100.0 * small_a / pf["samples"]),
                     "%.1f%%" % (100.0 * small_b / pb["samples"]) if big_ok else "-"])

        def kern(d):
            return 100.0 * sum(v for k, v in d["cats"].items() if k.startswith("kernel")) / d["samples"]
        rows.append(["**kernel total**", "%.1f%%" % kern(pf), "%.1f%%" % kern(pb) if big_ok else "-"])
        rows.append(["samples", pf["samples"], pb["samples"] if big_ok else "-"])
        out.append(table(["where", "example config", "%d entries" % cg.get("big_n", 0)], rows))
        out.append("")
    elif pf:
        out.append("perf: %s\n" % pf.get("error", "no samples"))
