#!/usr/bin/env python3
"""srcroute: what a process can do with an ordinary socket, for e2e/hardening.sh
(packet sockets: rawframe.py).

  srcroute.py send FAMILY FINAL PORT [FIRST]
      one UDP datagram to FINAL:PORT; with FIRST, the socket first sets an
      IPv4 loose source route (IP_OPTIONS) or an IPv6 segment routing header
      (IPV6_RTHDR, type 4) so that the packet leaves addressed to FIRST (an
      allowed resolver, say) and names FINAL as where it goes next. Prints
      "sent" or "send failed: ERRNO".
  srcroute.py join GROUP IFNAME
      joins the IPv6 (or IPv4) multicast group GROUP on IFNAME, holds it for
      2 s (the kernel reports the membership), prints "joined".
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


if __name__ == "__main__":
    cmd = sys.argv[1]
    if cmd == "send":
        send(sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5] if len(sys.argv) > 5 else None)
    else:
        join(sys.argv[2], sys.argv[3])
