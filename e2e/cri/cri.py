#!/usr/bin/python3
"""A tiny CRI client that plays kubelet for the containerd e2e test.

It speaks /runtime.v1.RuntimeService over gRPC (Debian's python3-grpcio) with
a hand-written protobuf encoder, so it needs no generated stubs.  Field
numbers follow k8s.io/cri-api/pkg/apis/runtime/v1/api.proto.

usage: cri.py SOCKET VERB ARGS...
  version
  runp SPEC.json                 -> sandbox id       (SPEC: name, namespace, uid,
                                                      annotations, cgroup_parent)
  pid POD                        -> pause pid (PodSandboxStatus verbose info)
  ip POD                         -> pod IP
  create POD SPEC.json NAME IMAGE CMD...  -> container id
  start CID
  exec CID TIMEOUT CMD...        -> "exit=N ms=M" line, then stdout+stderr
  stopp POD | rmp POD
  lsp                            -> one sandbox id per line
Errors: the gRPC status details on stderr, exit status 2.
"""
import json
import sys
import time

import grpc

SERVICE = "/runtime.v1.RuntimeService/"
RPC_TIMEOUT = 120


# --- protobuf wire format ------------------------------------------------

def varint(n):
    if n < 0:
        n += 1 << 64
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def f_bytes(num, data):
    if isinstance(data, str):
        data = data.encode()
    return varint(num << 3 | 2) + varint(len(data)) + data


def f_int(num, n):
    return varint(num << 3 | 0) + varint(n) if n else b""


def f_str(num, s):
    return f_bytes(num, s) if s else b""


def f_msg(num, body):
    return f_bytes(num, body)


def f_map(num, d):
    return b"".join(f_msg(num, f_bytes(1, k) + f_bytes(2, v)) for k, v in sorted(d.items()))


def f_strs(num, items):
    return b"".join(f_bytes(num, s) for s in items)


def parse(buf):
    """Decode one message into {field: [values]} (ints or bytes)."""
    out, i = {}, 0

    def rd_varint():
        nonlocal i
        shift = val = 0
        while True:
            b = buf[i]
            i += 1
            val |= (b & 0x7F) << shift
            shift += 7
            if not b & 0x80:
                return val

    while i < len(buf):
        key = rd_varint()
        num, wt = key >> 3, key & 7
        if wt == 0:
            val = rd_varint()
        elif wt == 2:
            n = rd_varint()
            val = bytes(buf[i:i + n])
            i += n
        elif wt == 1:
            val = bytes(buf[i:i + 8])
            i += 8
        elif wt == 5:
            val = bytes(buf[i:i + 4])
            i += 4
        else:
            raise ValueError("unsupported wire type %d" % wt)
        out.setdefault(num, []).append(val)
    return out


def first(msg, num, default=b""):
    return msg.get(num, [default])[0]


def as_map(msg, num):
    d = {}
    for entry in msg.get(num, []):
        e = parse(entry)
        d[first(e, 1).decode()] = first(e, 2).decode()
    return d


# --- CRI messages ----------------------------------------------------------

def sandbox_config(spec):
    meta = (f_str(1, spec["name"]) + f_str(2, spec["uid"]) + f_str(3, spec["namespace"])
            + f_int(4, spec.get("attempt", 0)))
    linux = f_str(1, spec.get("cgroup_parent", ""))
    return (f_msg(1, meta) + f_str(2, spec.get("hostname", spec["name"]))
            + f_str(3, spec.get("log_directory", ""))
            + f_map(6, spec.get("labels", {})) + f_map(7, spec.get("annotations", {}))
            + f_msg(8, linux))


def container_config(name, image, cmd):
    return (f_msg(1, f_str(1, name)) + f_msg(2, f_str(1, image)) + f_strs(3, cmd))


# --- client ----------------------------------------------------------------

class Client:
    def __init__(self, sock):
        self.chan = grpc.insecure_channel("unix://" + sock)

    def call(self, method, body, timeout=RPC_TIMEOUT):
        fn = self.chan.unary_unary(SERVICE + method)
        return parse(fn(body, timeout=timeout))


def load_spec(path):
    with open(path) as f:
        return json.load(f)


def main(argv):
    if len(argv) < 3:
        sys.stderr.write(__doc__)
        return 2
    c = Client(argv[1])
    verb, args = argv[2], argv[3:]
    if verb == "version":
        r = c.call("Version", f_str(1, "v1"))
        print(first(r, 2).decode(), first(r, 3).decode(), first(r, 4).decode())
    elif verb == "runp":
        r = c.call("RunPodSandbox", f_msg(1, sandbox_config(load_spec(args[0]))))
        print(first(r, 1).decode())
    elif verb in ("pid", "ip"):
        r = c.call("PodSandboxStatus", f_str(1, args[0]) + f_int(2, 1))
        if verb == "pid":
            print(json.loads(as_map(r, 2)["info"])["pid"])
        else:
            net = parse(first(parse(first(r, 1)), 5))
            print(first(net, 1).decode())
    elif verb == "create":
        pod, spec, name, image, cmd = args[0], load_spec(args[1]), args[2], args[3], args[4:]
        body = f_str(1, pod) + f_msg(2, container_config(name, image, cmd)) + f_msg(3, sandbox_config(spec))
        print(first(c.call("CreateContainer", body), 1).decode())
    elif verb == "start":
        c.call("StartContainer", f_str(1, args[0]))
    elif verb == "exec":
        cid, timeout, cmd = args[0], int(args[1]), args[2:]
        t0 = time.monotonic()
        r = c.call("ExecSync", f_str(1, cid) + f_strs(2, cmd) + f_int(3, timeout), timeout + 30)
        ms = int((time.monotonic() - t0) * 1000)
        code = first(r, 3, 0)
        if code >= 1 << 31:
            code -= 1 << 32
        sys.stdout.write("exit=%d ms=%d\n" % (code, ms))
        sys.stdout.write(first(r, 1).decode(errors="replace") + first(r, 2).decode(errors="replace"))
    elif verb == "stopp":
        c.call("StopPodSandbox", f_str(1, args[0]))
    elif verb == "rmp":
        c.call("RemovePodSandbox", f_str(1, args[0]))
    elif verb == "lsp":
        for item in c.call("ListPodSandbox", b"").get(1, []):
            print(first(parse(item), 1).decode())
    else:
        sys.stderr.write("unknown verb %s\n" % verb)
        return 2
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv))
    except grpc.RpcError as e:
        sys.stderr.write("%s: %s\n" % (e.code().name, e.details()))
        sys.exit(2)
