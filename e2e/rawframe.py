#!/usr/bin/env python3
"""rawframe: what a process with CAP_NET_RAW can do with an AF_PACKET socket,
for e2e/packet.sh.

  rawframe.py send --ifname IF --dst-mac MAC --src IP --dst IP --marker M
                   [--proto tcp|udp] [--sport N] [--dport N] [--flags S|SA|A]
                   [--bypass] [--vlan ID] [--skb-protocol HEX] [--arp OP [--pad N | --frame-len N]]
                   [--source-route VIA]
      writes one hand-made Ethernet frame (IPv4 or IPv6 by the addresses)
      carrying the text M to interface IF. --bypass sets PACKET_QDISC_BYPASS
      (the socket skips the qdisc layer); --vlan wraps the frame in an
      802.1Q tag; --skb-protocol binds the socket to another EtherType than
      the frame's own (what the kernel then parses the frame as). --arp
      sends an ARP frame instead (operation OP, sender --src, target --dst,
      the marker after the ARP body, plus N more bytes with --pad, or
      zeros up to a frame of exactly N bytes with --frame-len).
      --src-mac sets the frame's source MAC (default: the interface's).
      --ip-socket sends the IP packet (no Ethernet header) through a raw IP
      socket (IPPROTO_RAW: the header as written, source included) instead:
      the pod's stack routes it, through the inet hooks.
      --source-route VIA adds an IPv4 loose source route option (or an
      IPv6 segment routing header, type 4) naming VIA as the next hop.
      --stdout writes the frame to stdout instead of sending it. Prints
      "sent" or "send failed: ERRNO" (a frame dropped by the egress hook
      fails the send with ENOBUFS); exit 0 either way.

  rawframe.py mld --ifname IF --src IP [--type N] GROUP...
      writes an MLDv2 report exactly as the kernel writes one (to ff02::16,
      hop-by-hop router alert, one record per GROUP, of record type N:
      4, CHANGE_TO_EXCLUDE, by default); prints as send does.

  rawframe.py mcsniff --ifname IF --out FILE
      prints "ready", then appends to FILE one line "SRCMAC mld|igmp GROUP"
      for every group record of every MLD or IGMP report arriving on IF.

  rawframe.py sniff --ifname IF --out FILE
      prints "ready" once listening, then appends to FILE every marker
      ("NGRAW-...") seen in a frame arriving on IF, one per line, until
      killed.
"""
import argparse
import ipaddress
import re
import socket
import struct
import sys

ETH_P_ALL = 0x0003
SOL_PACKET = 263
PACKET_QDISC_BYPASS = 20
MARKER = re.compile(rb"NGRAW-[A-Za-z0-9-]+")


def checksum(data):
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack("!%dH" % (len(data) // 2), data))
    s = (s >> 16) + (s & 0xFFFF)
    s += s >> 16
    return ~s & 0xFFFF


def transport(args, src, dst, payload):
    proto = 6 if args.proto == "tcp" else 17
    if proto == 6:
        flags = {"S": 0x02, "SA": 0x12, "A": 0x10}[args.flags]
        hdr = struct.pack("!HHIIBBHHH", args.sport, args.dport, 1000, 0 if flags == 0x02 else 2000,
                          5 << 4, flags, 65535, 0, 0)
    else:
        hdr = struct.pack("!HHHH", args.sport, args.dport, 8 + len(payload), 0)
    seg = hdr + payload
    if src.version == 4:
        pseudo = src.packed + dst.packed + struct.pack("!BBH", 0, proto, len(seg))
    else:
        pseudo = src.packed + dst.packed + struct.pack("!I3xB", len(seg), proto)
    c = checksum(pseudo + seg)
    off = 16 if proto == 6 else 6
    return proto, seg[:off] + struct.pack("!H", c) + seg[off + 2:]


def packet(args):
    src, dst = ipaddress.ip_address(args.src), ipaddress.ip_address(args.dst)
    proto, seg = transport(args, src, dst, args.marker.encode())
    via = ipaddress.ip_address(args.source_route) if args.source_route else None
    if src.version == 4:
        # LSRR (131): length 7, pointer 4, one address; a NOP pads to 8.
        opt = struct.pack("!BBB4sB", 131, 7, 4, via.packed, 1) if via else b""
        ihl = 5 + len(opt) // 4
        h = struct.pack("!BBHHHBBH4s4s", 0x40 | ihl, 0, ihl * 4 + len(seg), 1, 0, 64, proto, 0, src.packed,
                        dst.packed) + opt
        h = h[:10] + struct.pack("!H", checksum(h)) + h[12:]
        return 0x0800, h + seg
    ext, nexthdr = b"", proto
    if via:  # segment routing header (RFC 8754): one segment, segments left 1
        ext, nexthdr = struct.pack("!BBBBBBH16s", proto, 2, 4, 1, 0, 0, 0, via.packed), 43
    h = struct.pack("!IHBB16s16s", 6 << 28, len(ext) + len(seg), nexthdr, 64, src.packed, dst.packed)
    return 0x86DD, h + ext + seg


def arp(args, src_mac):
    spa, tpa = ipaddress.ip_address(args.src).packed, ipaddress.ip_address(args.dst).packed
    body = struct.pack("!HHBBH6s4s6s4s", 1, 0x0800, 6, 4, args.arp, src_mac, spa, b"\0" * 6, tpa)
    body += args.marker.encode()
    if args.frame_len:  # the whole frame, Ethernet header (14 bytes) included
        if args.frame_len < 14 + len(body):
            raise SystemExit("--frame-len %d: the ARP body and marker alone take %d" % (args.frame_len, 14 + len(body)))
        return body + b"\0" * (args.frame_len - 14 - len(body))
    return body + b"\0" * args.pad


def send_ip(args):
    _, ip = packet(args)
    fam = socket.AF_INET6 if ":" in args.dst else socket.AF_INET
    s = socket.socket(fam, socket.SOCK_RAW, socket.IPPROTO_RAW)
    try:
        s.sendto(ip, (args.dst, 0))
        print("sent")
    except OSError as e:
        print("send failed: %s" % e.strerror)


def send(args):
    if args.ip_socket:
        return send_ip(args)
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, 0)
    s.bind((args.ifname, 0))
    src_mac = s.getsockname()[4]
    if args.src_mac:
        src_mac = bytes.fromhex(args.src_mac.replace(":", ""))
    if args.arp is not None:
        ethertype, ip = 0x0806, arp(args, src_mac)
    else:
        ethertype, ip = packet(args)
    skb_proto = int(args.skb_protocol, 16) if args.skb_protocol else ethertype
    s.bind((args.ifname, skb_proto))
    if args.bypass:
        s.setsockopt(SOL_PACKET, PACKET_QDISC_BYPASS, 1)
    tag = struct.pack("!HH", 0x8100, args.vlan) if args.vlan is not None else b""
    frame = bytes.fromhex(args.dst_mac.replace(":", "")) + src_mac + tag + struct.pack("!H", ethertype) + ip
    if args.stdout:  # for another sender (test/tools/xsktx.c)
        sys.stdout.buffer.write(frame)
        return
    transmit(s, frame)


def transmit(s, frame):
    try:
        s.send(frame)
        print("sent")
    except OSError as e:
        print("send failed: %s" % e.strerror)


def mld(args):
    src = ipaddress.ip_address(args.src).packed
    dst = ipaddress.ip_address("ff02::16").packed
    recs = b"".join(struct.pack("!BBH16s", args.type, 0, 0, ipaddress.ip_address(g).packed) for g in args.groups)
    icmp = struct.pack("!BBHHH", 143, 0, 0, 0, len(args.groups)) + recs
    pseudo = src + dst + struct.pack("!I3xB", len(icmp), 58)
    icmp = icmp[:2] + struct.pack("!H", checksum(pseudo + icmp)) + icmp[4:]
    hbh = bytes([58, 0, 5, 2, 0, 0, 1, 0])  # router alert, PadN: the kernel's own
    ip6 = struct.pack("!IHBB16s16s", 6 << 28, len(hbh) + len(icmp), 0, 1, src, dst) + hbh + icmp
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, 0)
    s.bind((args.ifname, 0x86DD))
    transmit(s, bytes.fromhex("333300000016") + s.getsockname()[4] + struct.pack("!H", 0x86DD) + ip6)


def records(buf, at, n, rec_len, addr_len):
    """The group addresses of n MLDv2 (rec_len 20) or IGMPv3 (8) records from at."""
    out = []
    for _ in range(n):
        if len(buf) < at + rec_len:
            break
        aux, nsrc = buf[at + 1], struct.unpack("!H", buf[at + 2:at + 4])[0]
        out.append(str(ipaddress.ip_address(buf[at + 4:at + 4 + addr_len])))
        at += rec_len + addr_len * nsrc + 4 * aux
    return out


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
        if ip[off] in (131, 132) and len(ip) >= off + 24:  # MLDv1 report / done
            return "mld", [str(ipaddress.ip_address(ip[off + 8:off + 24]))]
        if ip[off] != 143:
            return None
        return "mld", records(ip, off + 8, struct.unpack("!H", ip[off + 6:off + 8])[0], 20, 16)
    if etype == 0x0800 and len(ip) >= 20 and ip[9] == 2:
        igmp = ip[(ip[0] & 15) * 4:]
        if len(igmp) >= 8 and igmp[0] in (0x12, 0x16, 0x17):
            return "igmp", [str(ipaddress.ip_address(igmp[4:8]))]
        if len(igmp) >= 8 and igmp[0] == 0x22:
            return "igmp", records(igmp, 8, struct.unpack("!H", igmp[6:8])[0], 8, 4)
    return None


def mcsniff(args):
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
    s.bind((args.ifname, 0))
    print("ready", flush=True)
    with open(args.out, "a", buffering=1) as f:
        while True:
            data, addr = s.recvfrom(65535)
            got = None if addr[2] == socket.PACKET_OUTGOING else groups_of(data)
            for g in got[1] if got else ():
                f.write("%s %s %s\n" % (":".join("%02x" % b for b in data[6:12]), got[0], g))


def sniff(args):
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
    s.bind((args.ifname, 0))
    print("ready", flush=True)
    with open(args.out, "ab", buffering=0) as out:
        while True:
            data, addr = s.recvfrom(65535)
            if addr[2] == socket.PACKET_OUTGOING:
                continue
            for m in MARKER.findall(data):
                out.write(m + b"\n")


def main():
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="cmd", required=True)
    a = sub.add_parser("send")
    a.add_argument("--ifname", required=True)
    a.add_argument("--dst-mac", required=True)
    a.add_argument("--src", required=True)
    a.add_argument("--dst", required=True)
    a.add_argument("--marker", required=True)
    a.add_argument("--proto", choices=("tcp", "udp"), default="udp")
    a.add_argument("--sport", type=int, default=40000)
    a.add_argument("--dport", type=int, default=9999)
    a.add_argument("--flags", choices=("S", "SA", "A"), default="S")
    a.add_argument("--bypass", action="store_true")
    a.add_argument("--vlan", type=int)
    a.add_argument("--skb-protocol")
    a.add_argument("--arp", type=int)
    a.add_argument("--stdout", action="store_true")
    a.add_argument("--src-mac")
    a.add_argument("--ip-socket", action="store_true")
    a.add_argument("--pad", type=int, default=0)
    a.add_argument("--frame-len", type=int, default=0)
    a.add_argument("--source-route")
    b = sub.add_parser("sniff")
    b.add_argument("--ifname", required=True)
    b.add_argument("--out", required=True)
    m = sub.add_parser("mld")
    m.add_argument("--ifname", required=True)
    m.add_argument("--src", required=True)
    m.add_argument("--type", type=int, default=4)
    m.add_argument("groups", nargs="+")
    c = sub.add_parser("mcsniff")
    c.add_argument("--ifname", required=True)
    c.add_argument("--out", required=True)
    args = p.parse_args()
    if args.cmd == "send" and not args.marker.startswith("NGRAW-"):
        sys.exit("markers start with NGRAW-")
    {"send": send, "sniff": sniff, "mld": mld, "mcsniff": mcsniff}[args.cmd](args)


if __name__ == "__main__":
    main()
