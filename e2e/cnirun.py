#!/usr/bin/python3
"""Plays libcni for the e2e tests: runs a conflist's plugins one by one,
exactly as containerd's go-cni/libcni would, with nothing but the stdlib.

  cnirun.py ADD|DEL|CHECK --conflist FILE --cache DIR --containerid ID
            --netns PATH --cni-path DIR [--ifname eth0] [--args CNI_ARGS]
            [--annotations JSON] [--cni-version V] [--no-cache]

What libcni does, and so what this does:
  - each plugin's stdin is its conflist entry plus "name" and "cniVersion"
    (the list's), "prevResult" (ADD: the previous plugin's result, absent for
    the first; CHECK and DEL: the cached result of the whole list, DEL only
    from 0.4.0 on), and "runtimeConfig" holding only the capabilities the entry
    declares and the runtime supplies (here io.kubernetes.cri.pod-annotations);
  - ADD runs in list order, DEL in reverse, CHECK in order (0.4.0+ only);
  - the final ADD result is cached per (network, container, ifname) and
    removed after a successful DEL.
Prints the final result JSON (ADD) on stdout; on a plugin error prints that
plugin's error JSON on stdout and exits 1. Progress goes to stderr only when
CNIRUN_VERBOSE is set.
"""
import argparse
import json
import os
import subprocess
import sys

ANNOTATIONS_CAP = "io.kubernetes.cri.pod-annotations"


def version_tuple(v):
    try:
        return tuple(int(x) for x in v.split("."))
    except ValueError:
        return (0, 0, 0)


def log(msg):
    if os.environ.get("CNIRUN_VERBOSE"):
        print("cnirun: " + msg, file=sys.stderr)


def fail(code, msg, details=""):
    """An error of our own, shaped like a plugin's, so callers parse one form."""
    err = {"code": code, "msg": "cnirun: " + msg}
    if details:
        err["details"] = details
    print(json.dumps(err))
    sys.exit(1)


def find_plugin(cni_path, ptype):
    for d in cni_path.split(":"):
        p = os.path.join(d, ptype)
        if d and os.access(p, os.X_OK):
            return p
    fail(999, "plugin %r not found in CNI_PATH %s" % (ptype, cni_path))


def build_stdin(entry, net_name, version, prev, capability_args):
    conf = dict(entry)
    conf["name"] = net_name
    conf["cniVersion"] = version
    if prev is not None:
        conf["prevResult"] = prev
    # libcni injects runtimeConfig only for capabilities the entry declares
    # (and only those), replacing whatever the entry had there.
    caps = entry.get("capabilities") or {}
    rc = {k: v for k, v in capability_args.items() if caps.get(k)}
    if rc:
        conf["runtimeConfig"] = rc
    return json.dumps(conf).encode()


def exec_plugin(command, entry, stdin, env):
    path = find_plugin(env["CNI_PATH"], entry["type"])
    e = dict(env, CNI_COMMAND=command)
    log("%s %s" % (command, entry["type"]))
    p = subprocess.run([path], input=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=e)
    if p.stderr:
        sys.stderr.write(p.stderr.decode(errors="replace"))
    out = p.stdout.decode(errors="replace").strip()
    if p.returncode != 0:
        # The spec's error object, passed through untouched when it is one.
        try:
            err = json.loads(out)
            if not isinstance(err, dict):
                raise ValueError
        except ValueError:
            err = {"code": 999, "msg": "plugin %s exited %d" % (entry["type"], p.returncode),
                   "details": out}
        err.setdefault("plugin", entry["type"])
        print(json.dumps(err))
        sys.exit(1)
    if command != "ADD":
        return None
    try:
        return json.loads(out)
    except ValueError:
        fail(999, "plugin %s printed a result that is not JSON" % entry["type"], out)


def cache_file(args, net_name):
    return os.path.join(args.cache, "%s-%s-%s.json" % (net_name, args.containerid, args.ifname))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("command", choices=["ADD", "DEL", "CHECK"])
    ap.add_argument("--conflist", required=True)
    ap.add_argument("--cache", required=True)
    ap.add_argument("--containerid", required=True)
    ap.add_argument("--netns", required=True, help="empty string: no CNI_NETNS (RemovePodSandbox)")
    ap.add_argument("--cni-path", required=True)
    ap.add_argument("--ifname", default="eth0")
    ap.add_argument("--args", default="")
    ap.add_argument("--annotations", default=None, help="JSON object of pod annotations")
    ap.add_argument("--cni-version", default=None, help="override the conflist's cniVersion")
    ap.add_argument("--no-cache", action="store_true", help="DEL/CHECK without the cached result")
    args = ap.parse_args()

    with open(args.conflist) as f:
        conflist = json.load(f)
    version = args.cni_version or conflist["cniVersion"]
    net_name = conflist["name"]
    plugins = conflist["plugins"]

    capability_args = {}
    if args.annotations is not None:
        capability_args[ANNOTATIONS_CAP] = json.loads(args.annotations)

    env = {k: v for k, v in os.environ.items() if not k.startswith("CNI_")}
    env.update(CNI_CONTAINERID=args.containerid, CNI_NETNS=args.netns, CNI_IFNAME=args.ifname,
               CNI_ARGS=args.args, CNI_PATH=args.cni_path)
    cfile = cache_file(args, net_name)

    if args.command == "ADD":
        prev = None
        for entry in plugins:
            prev = exec_plugin("ADD", entry, build_stdin(entry, net_name, version, prev, capability_args), env)
        os.makedirs(args.cache, exist_ok=True)
        tmp = cfile + ".tmp"
        with open(tmp, "w") as f:
            json.dump({"cniVersion": version, "result": prev, "netns": args.netns}, f)
        os.rename(tmp, cfile)
        print(json.dumps(prev))
        return

    cached = None
    if not args.no_cache and os.path.exists(cfile):
        with open(cfile) as f:
            cached = json.load(f)["result"]

    if args.command == "CHECK":
        if version_tuple(version) < (0, 4, 0):
            fail(1, "configuration version %r does not support the CHECK command" % version)
        if cached is None:
            fail(999, "no cached result for %s: CHECK needs a previous ADD" % args.containerid)
        for entry in plugins:
            exec_plugin("CHECK", entry, build_stdin(entry, net_name, version, cached, capability_args), env)
        return

    # DEL: reverse order; the cached result is prevResult from 0.4.0 on.
    prev = cached if version_tuple(version) >= (0, 4, 0) else None
    for entry in reversed(plugins):
        exec_plugin("DEL", entry, build_stdin(entry, net_name, version, prev, capability_args), env)
    if os.path.exists(cfile):
        os.unlink(cfile)


if __name__ == "__main__":
    main()
