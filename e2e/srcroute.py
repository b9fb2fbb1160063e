#!/usr/bin/env python3
"""srcroute: what any process can do without a capability, for e2e/hardening.sh.

  srcroute.py send FAMILY FINAL PORT [FIRST]
      one UDP datagram to FINAL:PORT; with FIRST, the socket first sets an
      IPv4 loose source route (IP_OPTIONS) or an IPv6 segment routing header
      (IPV6_RTHDR, type 4) so that the packet leaves addressed to FIRST (an
      allowed resolver, say) and names FINAL as where it goes next. Prints
      "sent" or "send failed: ERRNO".
  srcroute.py join GROUP IFNAME
      joins the IPv6 (or IPv4) multicast group GROUP on IFNAME, holds it for
      2 s (the kernel reports the membership), prints "joined".
  srcroute.py mldsend IFNAME SRC GROUP...
      writes, with a packet socket, an MLDv2 report exactly as the kernel
      writes one (hop-by-hop router alert, one record per GROUP); prints
      "sent" or "send failed: ERRNO".
  srcroute.py sniff IFNAME OUT
      prints "ready", then appends to OUT one line "SRCMAC mld|igmp GROUP"
      for every group record of every MLD or IGMP report arriving on IFNAME.
"""
import ipaddress
import socket
import struct
import sys
import time

IPV6_RTHDR = 57


def send(fam, dst, port, via):
    af = socket.AF_INET if fam == "4" else socket.AF_INET6
    s = socket.socket(af, socket.SOCK_DGRAM)
    if via:
        v = ipaddress.ip_address(via).packed
        if fam == "4":
            # NOP, then LSRR: type 131, length 7, pointer 4, the first hop;
            # the kernel sends to it and appends FINAL to the route.
            s.setsockopt(socket.IPPROTO_IP, socket.IP_OPTIONS, struct.pack("!BBBB4s", 1, 131, 7, 4, v))
        else:
            # Two segments, segments left 1: the kernel puts FINAL in
            # segment 0 and sends to segment 1, the first hop.
            srh = struct.pack("!BBBBBBH16s16s", 0, 4, 4, 1, 1, 0, 0, b"\0" * 16, v)
            s.setsockopt(socket.IPPROTO_IPV6, IPV6_RTHDR, srh)
    try:
        s.sendto(b"NGSRCROUTE", (dst, int(port)))
        print("sent")
    except OSError as e:
        print("send failed: %s" % e.strerror)


def join(group, ifname):
    g = ipaddress.ip_address(group)
    idx = socket.if_nametoindex(ifname)
    if g.version == 6:
        s = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
        s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_JOIN_GROUP, g.packed + struct.pack("@I", idx))
    else:
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.setsockopt(socket.IPPROTO_IP, socket.IP_ADD_MEMBERSHIP, struct.pack("@4s4si", g.packed, b"\0" * 4, idx))
    print("joined", flush=True)
    time.sleep(2)


def checksum(data):
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack("!%dH" % (len(data) // 2), data))
    s = (s >> 16) + (s & 0xFFFF)
    s += s >> 16
    return ~s & 0xFFFF


def mldsend(ifname, src, groups):
    src = ipaddress.ip_address(src).packed
    dst = ipaddress.ip_address("ff02::16").packed
    recs = b"".join(struct.pack("!BBH16s", 4, 0, 0, ipaddress.ip_address(g).packed) for g in groups)
    icmp = struct.pack("!BBHHH", 143, 0, 0, 0, len(groups)) + recs
    pseudo = src + dst + struct.pack("!I3xB", len(icmp), 58)
    icmp = icmp[:2] + struct.pack("!H", checksum(pseudo + icmp)) + icmp[4:]
    hbh = bytes([58, 0, 5, 2, 0, 0, 1, 0])
    ip6 = struct.pack("!IHBB16s16s", 6 << 28, len(hbh) + len(icmp), 0, 1, src, dst) + hbh + icmp
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, 0)
    s.bind((ifname, 0x86DD))
    frame = bytes.fromhex("333300000016") + s.getsockname()[4] + struct.pack("!H", 0x86DD) + ip6
    try:
        s.send(frame)
        print("sent")
    except OSError as e:
        print("send failed: %s" % e.strerror)


def groups_of(frame):
    """(kind, [group...]) of an MLD or IGMP report frame, else None."""
    etype = struct.unpack("!H", frame[12:14])[0]
    ip = frame[14:]
    if etype == 0x86DD and len(ip) >= 40:
        nh, off = ip[6], 40
        while nh in (0, 43, 60) and len(ip) >= off + 8:  # hop-by-hop, routing, destination
            nh, off = ip[off], off + (ip[off + 1] + 1) * 8
        if nh != 58 or len(ip) < off + 8:
            return None
        t = ip[off]
        if t in (131, 132) and len(ip) >= off + 24:  # MLDv1 report / done
            return "mld", [str(ipaddress.ip_address(ip[off + 8:off + 24]))]
        if t != 143:
            return None
        n, out, at = struct.unpack("!H", ip[off + 6:off + 8])[0], [], off + 8
        for _ in range(n):
            if len(ip) < at + 20:
                break
            aux, nsrc = ip[at + 1], struct.unpack("!H", ip[at + 2:at + 4])[0]
            out.append(str(ipaddress.ip_address(ip[at + 4:at + 20])))
            at += 20 + 16 * nsrc + 4 * aux
        return "mld", out
    if etype == 0x0800 and len(ip) >= 20 and ip[9] == 2:
        ihl = (ip[0] & 15) * 4
        igmp = ip[ihl:]
        if len(igmp) >= 8 and igmp[0] in (0x12, 0x16, 0x17):
            return "igmp", [str(ipaddress.ip_address(igmp[4:8]))]
        if len(igmp) >= 8 and igmp[0] == 0x22:
            n, out, at = struct.unpack("!H", igmp[6:8])[0], [], 8
            for _ in range(n):
                if len(igmp) < at + 8:
                    break
                aux, nsrc = igmp[at + 1], struct.unpack("!H", igmp[at + 2:at + 4])[0]
                out.append(str(ipaddress.ip_address(igmp[at + 4:at + 8])))
                at += 8 + 4 * nsrc + 4 * aux
            return "igmp", out
    return None


def sniff(ifname, out):
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(3))
    s.bind((ifname, 0))
    print("ready", flush=True)
    with open(out, "a", buffering=1) as f:
        while True:
            data, addr = s.recvfrom(65535)
            if addr[2] == socket.PACKET_OUTGOING:
                continue
            got = groups_of(data)
            if got:
                mac = ":".join("%02x" % b for b in data[6:12])
                for g in got[1]:
                    f.write("%s %s %s\n" % (mac, got[0], g))


if __name__ == "__main__":
    cmd = sys.argv[1]
    if cmd == "send":
        send(sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5] if len(sys.argv) > 5 else None)
    elif cmd == "join":
        join(sys.argv[2], sys.argv[3])
    elif cmd == "mldsend":
        mldsend(sys.argv[2], sys.argv[3], sys.argv[4:])
    else:
        sniff(sys.argv[2], sys.argv[3])
