#!/usr/bin/env python3
"""dnsrace.py: a pod's resolver and application, in one loop.

  dnsrace.py SERVER udp|tcp COUNT NAME_PATTERN PORT [--retries N] [--hold S] [--wait S]

For i in 0..COUNT-1: asks SERVER (UDP, or TCP with the 2-byte length) for the
A record of NAME_PATTERN.format(i) and, the moment the answer is in, connects
to its address on PORT (TCP, 1 s timeout); each try waits up to --wait S
(default 2) for the answer, a bound a loaded machine never reaches for an
answer the agent let through. Prints one line:
  "answers A connects C refused R timeouts T noanswer N first_fail NAME"
Exit 0. With --hold S it instead connects once (COUNT must be 1) and keeps the
connection alive for S seconds, sending a line each second and reading its
echo, and prints "echoes E of S" (a live connection across an expiry).
Only the standard library: it runs inside the pod's network namespace."""
import errno
import random
import socket
import struct
import sys
import time


def query(name):
    qid = random.randrange(65536)
    q = struct.pack(">HHHHHH", qid, 0x0100, 1, 0, 0, 0)
    for label in name.rstrip(".").split("."):
        q += bytes([len(label)]) + label.encode()
    return qid, q + b"\0" + struct.pack(">HH", 1, 1)


def skip_name(m, off):
    while True:
        length = m[off]
        if length == 0:
            return off + 1
        if length & 0xC0 == 0xC0:
            return off + 2
        off += 1 + length


def first_a(m, qid):
    if len(m) < 12 or struct.unpack(">H", m[:2])[0] != qid:
        return None
    qd, an = struct.unpack(">HH", m[4:8])
    off = 12
    for _ in range(qd):
        off = skip_name(m, off) + 4
    for _ in range(an):
        off = skip_name(m, off)
        rtype, _, _, rdlen = struct.unpack(">HHIH", m[off:off + 10])
        off += 10
        if rtype == 1 and rdlen == 4:
            return socket.inet_ntoa(m[off:off + 4])
        off += rdlen
    return None


WAIT = 2.0


def ask(server, proto, name, retries):
    for _ in range(retries):
        qid, q = query(name)
        try:
            if proto == "udp":
                s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
                s.settimeout(WAIT)
                s.sendto(q, (server, 53))
                m, _ = s.recvfrom(4096)
            else:
                s = socket.create_connection((server, 53), timeout=WAIT)
                s.sendall(struct.pack(">H", len(q)) + q)
                buf = b""
                while len(buf) < 2 or len(buf) < 2 + struct.unpack(">H", buf[:2])[0]:
                    chunk = s.recv(65536)
                    if not chunk:
                        break
                    buf += chunk
                m = buf[2:]
            s.close()
            a = first_a(m, qid)
            if a:
                return a
        except OSError:
            pass
    return None


def main():
    global WAIT
    server, proto, count, pattern, port = sys.argv[1:6]
    count, port = int(count), int(port)
    retries = 1
    hold = 0
    args = sys.argv[6:]
    while args:
        if args[0] == "--retries":
            retries = int(args[1])
        elif args[0] == "--hold":
            hold = int(args[1])
        elif args[0] == "--wait":
            WAIT = float(args[1])
        args = args[2:]
    if hold:
        addr = ask(server, proto, pattern.format(0), retries)
        if not addr:
            print("echoes 0 of %d (no answer)" % hold)
            return
        s = socket.create_connection((addr, port), timeout=1.0)
        ok = 0
        for i in range(hold):
            try:
                s.sendall(b"ping %d\n" % i)
                if s.recv(64):
                    ok += 1
            except OSError:
                pass
            time.sleep(1)
        print("echoes %d of %d" % (ok, hold))
        return
    stats = {"answers": 0, "connects": 0, "refused": 0, "timeouts": 0, "noanswer": 0}
    first_fail = "-"
    for i in range(count):
        name = pattern.format(i)
        addr = ask(server, proto, name, retries)
        if not addr:
            stats["noanswer"] += 1
            first_fail = first_fail if first_fail != "-" else name
            continue
        stats["answers"] += 1
        c = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        c.settimeout(1.0)
        try:
            c.connect((addr, port))
            stats["connects"] += 1
        except socket.timeout:
            stats["timeouts"] += 1
            first_fail = first_fail if first_fail != "-" else name
        except OSError as e:
            stats["refused" if e.errno in (errno.ECONNREFUSED, errno.EPERM, errno.EHOSTUNREACH) else "timeouts"] += 1
            first_fail = first_fail if first_fail != "-" else name
        finally:
            c.close()
    print(" ".join("%s %d" % kv for kv in stats.items()), "first_fail", first_fail)


if __name__ == "__main__":
    main()
