#!/usr/bin/env python3
"""dpload.py: the clients of e2e/dataplane.sh and test/bench/dataplane.sh.

  dpload.py dns SERVER COUNT PATTERN [FIRST]     COUNT A queries, one at a time,
      each waited for up to 2 s; prints "answered A lost L p50_us P p99_us Q max_us M"
  dns-flood SERVER SECONDS PATTERN N [RATE]      queries as fast as the socket takes
      them (at most RATE a second), names PATTERN % (i mod N), answers read and
      dropped; prints "sent S answers A"
  http-slow ADDR SECONDS                         a request one byte every 20 ms,
      again whenever the agent closes it; prints "connections C closed_after_ms MAX"
  http-silent ADDR SECONDS N                     N connections sending nothing, each
      opened again when closed; prints "connections C"
  http-noread ADDR SECONDS N                     N connections asking for /metrics
      with a 1 KiB receive buffer, never reading; prints "connections C"
  http-flood ADDR SECONDS                        GET /metrics as fast as it is answered;
      prints "requests R answered A"
  http-probe ADDR METHOD PATH                    one request; prints "status S type T
      allow A length L body B" (B: the body's length)
  ctfill COUNT                                   COUNT UDP datagrams to distinct
      127.x.y.z addresses: COUNT conntrack entries in this namespace
Only the standard library: it runs inside the world's namespaces."""
import random
import select
import signal
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


def pct(v, p):
    return v[min(len(v) - 1, int(len(v) * p))] if v else 0


def dns(server, count, pattern, first=0):
    lat, lost = [], 0
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    for i in range(first, first + count):
        qid, q = query(pattern % i)
        t0 = time.monotonic()
        s.sendto(q, (server, 53))
        got = False
        while time.monotonic() - t0 < 2.0:
            r, _, _ = select.select([s], [], [], max(0.0, 2.0 - (time.monotonic() - t0)))
            if not r:
                break
            m = s.recv(4096)
            if len(m) >= 2 and struct.unpack(">H", m[:2])[0] == qid:
                got = True
                break
        if got:
            lat.append((time.monotonic() - t0) * 1e6)
        else:
            lost += 1
    lat.sort()
    print("answered %d lost %d p50_us %.0f p99_us %.0f max_us %.0f"
          % (len(lat), lost, pct(lat, 0.5), pct(lat, 0.99), lat[-1] if lat else 0))


def dns_flood(server, seconds, pattern, n, rate=0):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.setblocking(False)
    t0 = time.monotonic()
    end, sent, answers, i = t0 + seconds, 0, 0, 0
    try:
        while time.monotonic() < end:
            for _ in range(64):
                if rate and sent >= rate * (time.monotonic() - t0):
                    break
                try:
                    s.sendto(query(pattern % (i % n))[1], (server, 53))
                    sent += 1
                    i += 1
                except BlockingIOError:
                    break
            while True:
                try:
                    s.recv(4096)
                    answers += 1
                except BlockingIOError:
                    break
            time.sleep(0.001)
    finally:  # also when stopped by a signal (SIGTERM: the bench's kill_tree)
        print("sent %d answers %d" % (sent, answers), flush=True)


def addr(a):
    host, port = a.rsplit(":", 1)
    return host, int(port)


REQ = b"GET /metrics HTTP/1.1\r\nHost: agent\r\nUser-Agent: dpload\r\n\r\n"


def http_slow(a, seconds):
    # A request that never ends, a byte every 20 ms: held by the agent
    # until its deadline, then opened again.
    body = REQ[:-2] + b"X-Slow: "
    end, conns, longest = time.monotonic() + seconds, 0, 0
    while time.monotonic() < end:
        try:
            c = socket.create_connection(addr(a), timeout=5)
        except OSError:
            time.sleep(0.02)
            continue
        conns += 1
        t0 = time.monotonic()
        try:
            i = 0
            while time.monotonic() < end:
                c.send(body[i:i + 1] if i < len(body) else b"a")
                i += 1
                time.sleep(0.02)
        except OSError:
            pass
        longest = max(longest, int((time.monotonic() - t0) * 1000))
        c.close()
    print("connections %d closed_after_ms %d" % (conns, longest))


def hold(a, seconds, n, noread):
    # n connections at a time, each replaced once the agent closed it or it
    # is 4 s old (past the agent's deadline: a never-reading client cannot
    # tell a close from the data it never reads).
    end, conns, live = time.monotonic() + seconds, 0, []
    while time.monotonic() < end:
        while len(live) < n:
            try:
                c = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
                if noread:
                    c.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1024)
                c.settimeout(2)
                c.connect(addr(a))
                if noread:
                    c.sendall(REQ)
                live.append((c, time.monotonic()))
                conns += 1
            except OSError:
                time.sleep(0.01)
                break
        for c, t0 in list(live):
            gone = time.monotonic() - t0 > 4
            if not noread and not gone:
                r, _, _ = select.select([c], [], [], 0)
                try:
                    gone = bool(r) and not c.recv(65536)
                except OSError:
                    gone = True
            if gone:
                live.remove((c, t0))
                c.close()
        time.sleep(0.05)
    for c, _ in live:
        c.close()
    print("connections %d" % conns)


def http_flood(a, seconds):
    end, reqs, ok = time.monotonic() + seconds, 0, 0
    while time.monotonic() < end:
        try:
            c = socket.create_connection(addr(a), timeout=5)
            reqs += 1
            c.sendall(REQ)
            data = b""
            while True:
                b = c.recv(65536)
                if not b:
                    break
                data += b
            ok += data.startswith(b"HTTP/1.1 200")
            c.close()
        except OSError:
            pass
    print("requests %d answered %d" % (reqs, ok))


def http_probe(a, method, path):
    c = socket.create_connection(addr(a), timeout=5)
    c.sendall(("%s %s HTTP/1.1\r\nHost: agent\r\n\r\n" % (method, path)).encode())
    data = b""
    while True:
        b = c.recv(65536)
        if not b:
            break
        data += b
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode().split("\r\n")
    hdr = {k.lower(): v.strip() for k, _, v in (ln.partition(":") for ln in lines[1:])}
    print("status %s type %s allow %s length %s body %d" % (
        lines[0].split(" ")[1], hdr.get("content-type", "-").replace(" ", ""),
        hdr.get("allow", "-").replace(" ", ""), hdr.get("content-length", "-"), len(body)))


def ctfill(count):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    for i in range(count):
        try:
            s.sendto(b"x", ("127.%d.%d.%d" % (1 + i // 62500, (i // 250) % 250, i % 250 + 1), 9))
        except OSError:
            pass  # ICMP port unreachable reported on the socket


def main():
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    m, a = sys.argv[1], sys.argv[2:]
    if m == "dns":
        dns(a[0], int(a[1]), a[2], int(a[3]) if len(a) > 3 else 0)
    elif m == "dns-flood":
        dns_flood(a[0], float(a[1]), a[2], int(a[3]), int(a[4]) if len(a) > 4 else 0)
    elif m == "http-slow":
        http_slow(a[0], float(a[1]))
    elif m == "http-silent":
        hold(a[0], float(a[1]), int(a[2]), False)
    elif m == "http-noread":
        hold(a[0], float(a[1]), int(a[2]), True)
    elif m == "http-flood":
        http_flood(a[0], float(a[1]))
    elif m == "http-probe":
        http_probe(a[0], a[1], a[2])
    elif m == "ctfill":
        ctfill(int(a[0]))
    else:
        sys.exit("dpload.py: unknown mode " + m)


if __name__ == "__main__":
    main()
