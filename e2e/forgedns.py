#!/usr/bin/env python3
"""forgedns.py: DNS answers a pod did not get from its resolver, for
e2e/nodeside.sh and e2e/agent.sh. Only the standard library: it runs inside a
pod's (or a neighbour's) network namespace.

Each forgery answers a query the pod really sent, after it left: a row
about one check (scripts/mutants.sh breaks each check and wants its row to
fail) must have that check alone between the forgery and learning, not the
pod's query matching (agent/outq.h) or conntrack (an answer whose query is
still held by the agent is no reply: never queued).

  forgedns.py ask SERVER PORT ID NAME [--answered] [--seen] [--decoy ID2]
                  [--loop DEV ADDR] [--wait S]
      From PORT, asks SERVER (UDP) for NAME's A record with ID, and waits
      until a packet socket sees the query leave eth0 (the agent let it out
      and remembered it; conntrack confirmed its flow): "out". Then, in
      this order:
        --answered   reads the socket until SERVER's answer to it arrives
                     (the agent judged it; the query is answered on both
                     sides): "answer ID ADDR";
        --seen       waits until SERVER's answer is seen arriving on eth0
                     (it crossed the host peer: the node saw it), whatever
                     the pod's own rules then do with it: "seen LEN";
        --decoy ID2  asks again from PORT with ID2, the socket marked
                     DECOY_MARK (SO_MARK): the pod's own postrouting rule
                     drops it, so the agent remembered a query the node
                     never saw: "decoy ID2";
        --loop DEV ADDR  writes a forged answer (ID, NAME -> ADDR, from
                     SERVER:53) as a whole Ethernet frame to DEV, a device
                     whose tc egress mirrors it into the pod's own eth0
                     ingress (tc ... action mirred ingress redirect dev
                     eth0): it never leaves the pod. After --seen it is the
                     seen answer with the address changed (as long as the
                     answer the node saw): "looped LEN".
      Then reads answers for S seconds (default 2): "answer ID ADDR" each
      (ADDR "-" when it holds none).
  forgedns.py spoof SERVER DST PORT ID NAME ADDR
      A raw IPv4 datagram from SERVER:53 to DST:PORT carrying the answer
      (ID, NAME -> ADDR), as an on-link neighbour that can spoof the
      resolver would send it. Prints "sent".
  forgedns.py self SERVER PORT ID NAME ADDR [--sync]
      Asks as `ask` does (until "out"), then writes the answer (ID, NAME ->
      ADDR, from SERVER:53) with a raw IP socket to the pod's own address:
      it travels over loopback, or through a queue rule of the pod's own in
      the output hook. Then, without --sync, reads until it reaches the
      socket: "delivered ADDR" (or "not delivered" at the bound); with
      --sync, as `nfq` below: "synced".
  forgedns.py nfq SERVER PORT ID NAME ADDR
      Asks as `ask` does (until "out"), then sends a forged queue message
      (NFQNL_MSG_PACKET: hook input, in on eth0, the answer ID, NAME -> ADDR
      from SERVER:53 to PORT) to every netfilter socket in the namespace but
      its own (a process with NET_ADMIN can): "sent to N sockets". Then asks
      SERVER for NAME once more from PORT + 10000 and reads until that
      answer arrives: "synced". The agent reads a pod's queue (one netlink
      socket) in order, and the second query was queued after the forgery:
      once its answer is in, the forgery was judged.
Every wait is bounded by BOUND_S, a correctness bound (a loaded machine
takes far less). Exit 0; 1 when a wait ran out; 2 on wrong arguments."""
import fcntl
import select
import socket
import struct
import sys
import time

BOUND_S = 20.0
SYNC_PORT = 10000  # the second query's port is PORT + SYNC_PORT: never one whose answers the pod drops
DECOY_MARK = 0x6E67  # the pod's own rule drops what carries it (e2e/nodeside.sh)
SO_MARK = 36


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


def first_a_at(m):
    """The offset of the first A record's address in answer m, or None."""
    off = 12
    while m[off]:
        off += 1 + m[off]
    off += 5
    an = struct.unpack(">H", m[6:8])[0]
    for _ in range(an):
        if m[off] & 0xC0 == 0xC0:
            off += 2
        else:
            while m[off]:
                off += 1 + m[off]
            off += 1
        rtype, _, _, rdlen = struct.unpack(">HHIH", m[off:off + 10])
        off += 10
        if rtype == 1 and rdlen == 4:
            return off
        off += rdlen
    return None


def first_a(m):
    try:
        at = first_a_at(m)
    except (IndexError, struct.error):
        return "-"
    return "-" if at is None else socket.inet_ntoa(m[at:at + 4])


def own_addr(server):
    probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    probe.connect((server, 53))
    return probe.getsockname()[0]


def wait_frame(watch, outgoing, server, port, qid=None):
    """The UDP payload of the first frame on eth0 between port and
    server:53 (the query leaving, or an answer arriving: outgoing False)
    with DNS ID qid if given; None at the bound."""
    want = socket.inet_aton(server)
    end = time.time() + BOUND_S
    while time.time() < end:
        r, _, _ = select.select([watch], [], [], max(0, end - time.time()))
        if not r:
            break
        f, a = watch.recvfrom(65535)
        if (a[2] == socket.PACKET_OUTGOING) != outgoing or len(f) < 14 + 28 or f[12:14] != b"\x08\x00":
            continue
        ip = f[14:]
        ihl = (ip[0] & 15) * 4
        peer = ip[16:20] if outgoing else ip[12:16]
        ports = (port, 53) if outgoing else (53, port)
        if ip[9] != 17 or peer != want or struct.unpack(">HH", ip[ihl:ihl + 4]) != ports:
            continue
        payload = ip[ihl + 8:struct.unpack(">H", ip[2:4])[0]]
        if qid is None or (len(payload) >= 2 and struct.unpack(">H", payload[:2])[0] == qid):
            return payload
    return None


def read_answers(socks, seconds, until=None):
    """Prints every answer read on socks for `seconds`; with `until` (a
    function of (sock, message)), stops at the first it accepts: True."""
    end = time.time() + seconds
    while time.time() < end:
        r, _, _ = select.select(socks, [], [], max(0, end - time.time()))
        if not r:
            break
        for s in r:
            m, _ = s.recvfrom(4096)
            if len(m) >= 12:
                print("answer %d %s" % (struct.unpack(">H", m[:2])[0], first_a(m)), flush=True)
                if until and until(s, m):
                    return True
    return False


def asked(server, port, qid, name):
    """The pod's query, once it left eth0: (socket, watch), or None."""
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("0.0.0.0", port))
    # Open before the query goes: it sees the query leave, and what comes.
    watch = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(0x0003))
    watch.bind(("eth0", 0))
    s.sendto(query(qid, name), (server, 53))
    if wait_frame(watch, True, server, port) is None:
        print("the query never left eth0", flush=True)
        return None
    print("out", flush=True)
    return s, watch


def synced(server, port, name, qid):
    """Asks once more from another port; True when its answer is in."""
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("0.0.0.0", (port + SYNC_PORT) % 65536))
    sid = qid ^ 0xFFFF
    s.sendto(query(sid, name), (server, 53))
    ok = read_answers([s], BOUND_S, lambda _s, m: struct.unpack(">H", m[:2])[0] == sid)
    print("synced" if ok else "no answer to the second query", flush=True)
    return ok


def ask(server, port, qid, name, o):
    got = asked(server, port, qid, name)
    if not got:
        return 1
    s, watch = got
    real = None
    if o["answered"] and not read_answers([s], BOUND_S, lambda _s, m: struct.unpack(">H", m[:2])[0] == qid):
        print("no answer", flush=True)
        return 1
    if o["seen"]:
        real = wait_frame(watch, False, server, port, qid)
        if real is None:
            print("no answer seen", flush=True)
            return 1
        print("seen %d" % len(real), flush=True)
    if o["decoy"] is not None:
        s.setsockopt(socket.SOL_SOCKET, SO_MARK, DECOY_MARK)
        s.sendto(query(o["decoy"], name), (server, 53))
        print("decoy %d" % o["decoy"], flush=True)
    if o["loop"]:
        dev, addr = o["loop"]
        msg = answer(qid, name, addr)
        at = first_a_at(real) if real else None
        if at is not None:
            msg = real[:at] + socket.inet_aton(addr) + real[at + 4:]
        frame = mac_of("eth0") + mac_of(dev) + b"\x08\x00" + ip_udp(server, own_addr(server), 53, port, msg)
        p = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
        p.bind((dev, 0))
        p.send(frame)
        print("looped %d" % len(msg), flush=True)
    read_answers([s], o["wait"])
    return 0


def self_forge(server, port, qid, name, addr, sync):
    got = asked(server, port, qid, name)
    if not got:
        return 1
    s, _ = got
    me = own_addr(server)
    r = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_RAW)
    r.sendto(ip_udp(server, me, 53, port, answer(qid, name, addr)), (me, 0))
    print("forged", flush=True)
    if sync:
        return 0 if synced(server, port, name, qid) else 1
    if read_answers([s], BOUND_S, lambda _s, m: first_a(m) == addr):
        print("delivered", addr, flush=True)
    else:
        print("not delivered", flush=True)
    return 0


def attr(t, v):
    return struct.pack("=HH", 4 + len(v), t) + v + b"\0" * (-len(v) % 4)


def nfq(server, port, qid, name, addr):
    if not asked(server, port, qid, name):
        return 1
    me = own_addr(server)
    body = struct.pack("=BBH", socket.AF_INET, 0, socket.htons(5353))
    # PACKET_HDR (hook input), IFINDEX_INDEV (the pod's interface), PAYLOAD:
    # all a packet of the agent's own chain would say; only its sender differs.
    body += attr(1, struct.pack("!IHB", 77, 0x0800, 1))
    body += attr(5, struct.pack("!I", socket.if_nametoindex("eth0")))
    body += attr(10, ip_udp(server, me, 53, port, answer(qid, name, addr)))
    msg = struct.pack("=IHHII", 16 + len(body), 3 << 8, 0, 0, 0) + body  # NFQNL_MSG_PACKET
    s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 12)
    s.bind((0, 0))
    mine, sent = s.getsockname()[0], 0
    for line in open("/proc/net/netlink").read().splitlines()[1:]:
        f = line.split()
        if int(f[1]) == 12 and int(f[2]) not in (0, mine):
            s.sendto(msg, (int(f[2]), 0))
            sent += 1
    print("sent to", sent, "sockets", flush=True)
    if not sent:
        return 1
    return 0 if synced(server, port, name, qid) else 1


def spoof(server, dst, port, qid, name, addr):
    r = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_RAW)
    r.sendto(ip_udp(server, dst, 53, port, answer(qid, name, addr)), (dst, 0))
    print("sent")


def ask_opts(rest):
    o = {"answered": False, "seen": False, "decoy": None, "loop": None, "wait": 2.0}
    while rest:
        a = rest.pop(0)
        if a in ("--answered", "--seen"):
            o[a[2:]] = True
        elif a == "--decoy" and rest:
            o["decoy"] = int(rest.pop(0), 0)
        elif a == "--loop" and len(rest) >= 2:
            o["loop"] = (rest.pop(0), rest.pop(0))
        elif a == "--wait" and rest:
            o["wait"] = float(rest.pop(0))
        else:
            return None
    return o


def main(a):
    if len(a) >= 5 and a[0] == "ask":
        o = ask_opts(a[5:])
        if o is not None:
            return ask(a[1], int(a[2]), int(a[3], 0), a[4], o)
    elif a[:1] == ["self"] and len(a) in (6, 7) and a[6:] in ([], ["--sync"]):
        return self_forge(a[1], int(a[2]), int(a[3], 0), a[4], a[5], len(a) == 7)
    elif a[:1] == ["nfq"] and len(a) == 6:
        return nfq(a[1], int(a[2]), int(a[3], 0), a[4], a[5])
    elif a[:1] == ["spoof"] and len(a) == 7:
        spoof(a[1], a[2], int(a[3]), int(a[4], 0), a[5], a[6])
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
