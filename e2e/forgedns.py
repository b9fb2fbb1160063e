#!/usr/bin/env python3
"""forgedns.py: DNS answers a pod did not get from its resolver, for
e2e/nodeside.sh. Only the standard library: it runs inside a pod's (or a
neighbour's) network namespace.

  forgedns.py ask SERVER PORT ID NAME [--loop DEV ADDR]
      From PORT, asks SERVER (UDP) for NAME's A record with ID, and reads
      answers for 2 s. With --loop, the moment the query is out it also
      writes a forged answer (ID, NAME -> ADDR, from SERVER:53) as a whole
      Ethernet frame to DEV, a device whose tc egress mirrors it into the
      pod's own eth0 ingress (tc ... action mirred ingress redirect dev
      eth0): the answer never leaves the pod. Prints one line per answer
      read: "answer ID ADDR" (ADDR "-" when it holds none).
  forgedns.py spoof SERVER DST PORT ID NAME ADDR
      A raw IPv4 datagram from SERVER:53 to DST:PORT carrying the answer
      (ID, NAME -> ADDR), as an on-link neighbour that can spoof the
      resolver would send it. Prints "sent".
Exit 0 unless the arguments are wrong."""
import fcntl
import select
import socket
import struct
import sys
import time


def name_wire(name):
    out = b""
    for label in name.rstrip(".").split("."):
        out += bytes([len(label)]) + label.encode()
    return out + b"\0"


def query(qid, name):
    return struct.pack(">HHHHHH", qid, 0x0100, 1, 0, 0, 0) + name_wire(name) + struct.pack(">HH", 1, 1)


def answer(qid, name, addr):
    hdr = struct.pack(">HHHHHH", qid, 0x8180, 1, 1, 0, 0)
    rr = struct.pack(">HHHIH", 0xC00C, 1, 1, 300, 4) + socket.inet_aton(addr)
    return hdr + name_wire(name) + struct.pack(">HH", 1, 1) + rr


def csum(b):
    if len(b) % 2:
        b += b"\0"
    s = sum(struct.unpack(">%dH" % (len(b) // 2), b))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def ip_udp(src, dst, sport, dport, payload):
    ulen = 8 + len(payload)
    pseudo = socket.inet_aton(src) + socket.inet_aton(dst) + struct.pack(">BBH", 0, 17, ulen)
    udp = struct.pack(">HHHH", sport, dport, ulen, 0) + payload
    udp = udp[:6] + struct.pack(">H", csum(pseudo + udp) or 0xFFFF) + udp[8:]
    ip = struct.pack(">BBHHHBBH4s4s", 0x45, 0, 20 + ulen, 0x4242, 0, 64, 17, 0,
                     socket.inet_aton(src), socket.inet_aton(dst))
    ip = ip[:10] + struct.pack(">H", csum(ip)) + ip[12:]
    return ip + udp


def mac_of(dev):
    # SIOCGIFHWADDR: /sys/class/net is the mounting namespace's, not ours.
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    return fcntl.ioctl(s.fileno(), 0x8927, struct.pack("256s", dev.encode()))[18:24]


def first_a(m):
    off = 12
    while m[off]:
        off += 1 + m[off]
    off += 5
    an = struct.unpack(">H", m[6:8])[0]
    for _ in range(an):
        off += 2 if m[off] & 0xC0 == 0xC0 else 0
        rtype, _, _, rdlen = struct.unpack(">HHIH", m[off:off + 10])
        off += 10
        if rtype == 1 and rdlen == 4:
            return socket.inet_ntoa(m[off:off + 4])
        off += rdlen
    return "-"


def ask(server, port, qid, name, loop):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("0.0.0.0", port))
    # The pod's query is judged by the agent before it leaves (dns.queries,
    # agent/query.h): the forgery must come after it is out, or no
    # conntrack entry waits for an answer and the input chain drops it.
    # A packet socket on eth0 sees the query frame leave.
    watch = None
    if loop:
        watch = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(0x0003))
        watch.bind(("eth0", 0))
    s.sendto(query(qid, name), (server, 53))
    if loop:
        wait_out(watch, server, port)
        dev, addr = loop
        me = s.getsockname()[0]
        if me == "0.0.0.0":
            probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            probe.connect((server, 53))
            me = probe.getsockname()[0]
        frame = mac_of("eth0") + mac_of(dev) + b"\x08\x00" + ip_udp(server, me, 53, port, answer(qid, name, addr))
        p = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
        p.bind((dev, 0))
        p.send(frame)
    end = time.time() + 2
    while time.time() < end:
        r, _, _ = select.select([s], [], [], max(0, end - time.time()))
        if not r:
            break
        m, _ = s.recvfrom(4096)
        if len(m) >= 12:
            print("answer %d %s" % (struct.unpack(">H", m[:2])[0], first_a(m)), flush=True)


def wait_out(watch, server, port, timeout=2.0):
    """Until a frame leaves eth0 carrying UDP from `port` to server:53."""
    want = socket.inet_aton(server)
    end = time.time() + timeout
    while time.time() < end:
        r, _, _ = select.select([watch], [], [], max(0, end - time.time()))
        if not r:
            return
        f, a = watch.recvfrom(65535)
        if a[2] != socket.PACKET_OUTGOING or len(f) < 14 + 28 or f[12:14] != b"\x08\x00":
            continue
        ip = f[14:]
        ihl = (ip[0] & 15) * 4
        if ip[9] == 17 and ip[16:20] == want and struct.unpack(">HH", ip[ihl : ihl + 4]) == (port, 53):
            return


def spoof(server, dst, port, qid, name, addr):
    r = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_RAW)
    r.sendto(ip_udp(server, dst, 53, port, answer(qid, name, addr)), (dst, 0))
    print("sent")


def main(a):
    if len(a) >= 5 and a[0] == "ask":
        loop = (a[6], a[7]) if len(a) == 8 and a[5] == "--loop" else None
        if len(a) not in (5, 8) or (len(a) == 8 and not loop):
            return 2
        ask(a[1], int(a[2]), int(a[3], 0), a[4], loop)
        return 0
    if len(a) == 7 and a[0] == "spoof":
        spoof(a[1], a[2], int(a[3]), int(a[4], 0), a[5], a[6])
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
