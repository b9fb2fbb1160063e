#!/usr/bin/env python3
"""dnsq.py: crafted DNS queries from inside a pod (e2e/dnsquery.sh), with
dnspython (python3-dnspython) building and reading the messages.

  dnsq.py udp SERVER SPEC            one query over UDP
  dnsq.py tcp SERVER SPEC...         every SPEC's message in ONE segment
                                     (pipelined), then read until EOF
  dnsq.py tcpsplit SERVER SPEC       the 2-byte length in one segment, the
                                     message 100 ms later in another
  dnsq.py tcpseq SERVER SPEC...      one connection, each message after the
                                     previous answer
SPEC: NAME[/TYPE] (TYPE default A; NAME as written: case and trailing dot
kept), or two:NAME1,NAME2 (one message, two questions), or opcode:N:NAME
(opcode N, e.g. 4 NOTIFY, 5 UPDATE), or id:N:NAME (the given ID).

Prints one line per message: "NAME TYPE RCODE ID_OK Q_OK MS", RCODE the
answer's (NOERROR, NXDOMAIN, REFUSED, FORMERR, NOTIMP, ...) or "none" (no
answer within $DNSQ_WAIT s, default 8: a loaded machine is slow, a refusal
is timed by the caller); ID_OK/Q_OK 1 when the answer's ID and question are the
query's. tcp* modes end with "eof MS" (the server closed) or "open" or
"reset MS". Exit 0."""
import os
import socket
import struct
import sys
import time

import dns.message
import dns.rcode

T0 = time.monotonic()
WAIT = float(os.environ.get("DNSQ_WAIT", "8"))


def ms():
    return (time.monotonic() - T0) * 1000


def build(spec):
    """(wire, label) for SPEC."""
    if spec.startswith("two:"):
        a, b = spec[4:].split(",")
        m = dns.message.make_query(a, "A")
        m.question.append(dns.message.make_query(b, "A").question[0])
        return m, f"{a}+{b} A"
    opcode = None
    qid = None
    if spec.startswith("opcode:"):
        _, n, spec = spec.split(":", 2)
        opcode = int(n)
    if spec.startswith("id:"):
        _, n, spec = spec.split(":", 2)
        qid = int(n)
    name, _, typ = spec.partition("/")
    typ = typ or "A"
    m = dns.message.make_query(name, typ)
    if opcode is not None:
        m.set_opcode(opcode)
    if qid is not None:
        m.id = qid
    return m, f"{name} {typ}"


def wire(m):
    # The name exactly as given (dnspython keeps the case of a Name).
    return m.to_wire()


def report(m, label, data, t):
    if data is None:
        print(f"{label} none 0 0 {t:.1f}")
        return
    if len(data) < 12:
        print(f"{label} garbled 0 0 {t:.1f}")
        return
    # The header by hand (dnspython reads an UPDATE's sections as zones):
    # the rcode, the ID, and the question section byte for byte (case
    # included) against the query's.
    rc = dns.rcode.to_text(data[3] & 0x0F)
    rid = struct.unpack(">H", data[:2])[0]
    qw = wire(m)[12:]
    qd = struct.unpack(">H", data[4:6])[0]
    want_qd = len(m.question)
    q_ok = int(qd == want_qd and data[12 : 12 + question_len(qw, want_qd)] == qw[: question_len(qw, want_qd)])
    print(f"{label} {rc} {int(rid == m.id)} {q_ok} {t:.1f}")


def question_len(w, n):
    """Bytes of the first n questions at the start of w (no pointers)."""
    off = 0
    for _ in range(n):
        while w[off]:
            off += 1 + w[off]
        off += 5
    return off


def udp(server, spec):
    m, label = build(spec)
    fam = socket.AF_INET6 if ":" in server else socket.AF_INET
    s = socket.socket(fam, socket.SOCK_DGRAM)
    s.connect((server, 53))
    s.settimeout(WAIT)
    t = ms()
    s.send(wire(m))
    try:
        data = s.recv(65535)
    except (socket.timeout, ConnectionRefusedError):
        data = None
    report(m, label, data, ms() - t)


def connect(server):
    fam = socket.AF_INET6 if ":" in server else socket.AF_INET
    s = socket.socket(fam, socket.SOCK_STREAM)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    s.settimeout(WAIT)
    s.connect((server, 53))
    return s


def read_msg(s):
    """One framed message, or None; raises on reset."""
    buf = b""
    while len(buf) < 2:
        c = s.recv(2 - len(buf))
        if not c:
            return None
        buf += c
    n = struct.unpack(">H", buf)[0]
    body = b""
    while len(body) < n:
        c = s.recv(n - len(body))
        if not c:
            return None
        body += c
    return body


def tail(s, t):
    """After the last expected answer: has the server closed?"""
    s.settimeout(0.5)
    try:
        c = s.recv(1)
        print(f"eof {ms() - t:.1f}" if not c else "open")
    except socket.timeout:
        print("open")
    except ConnectionResetError:
        print(f"reset {ms() - t:.1f}")


def tcp(server, specs, split=False, seq=False):
    msgs = [build(sp) for sp in specs]
    s = connect(server)
    t = ms()
    answers = {}
    closed = None
    try:
        if seq:
            for m, label in msgs:
                w = wire(m)
                s.sendall(struct.pack(">H", len(w)) + w)
                data = read_msg(s)
                report(m, label, data, ms() - t)
                if data is None:
                    closed = "eof"
                    break
            if not closed:
                tail(s, t)
            else:
                print(f"eof {ms() - t:.1f}")
            return
        if split:
            w = wire(msgs[0][0])
            s.send(struct.pack(">H", len(w)))
            time.sleep(0.1)
            s.send(w)
        else:
            s.sendall(b"".join(struct.pack(">H", len(w)) + w for w in (wire(m) for m, _ in msgs)))
        while len(answers) < len(msgs):
            data = read_msg(s)
            if data is None:
                closed = "eof"
                break
            rid = struct.unpack(">H", data[:2])[0]
            for i, (m, _) in enumerate(msgs):
                if m.id == rid and i not in answers:
                    answers[i] = (data, ms() - t)
                    break
    except ConnectionResetError:
        closed = "reset"
    except socket.timeout:
        closed = "open"
    for i, (m, label) in enumerate(msgs):
        data, at = answers.get(i, (None, 0.0))
        report(m, label, data, at)
    if closed == "eof":
        print(f"eof {ms() - t:.1f}")
    elif closed == "reset":
        print(f"reset {ms() - t:.1f}")
    elif closed == "open":
        print("open")
    else:
        tail(s, t)


def main():
    mode, server, *specs = sys.argv[1:]
    if mode == "udp":
        udp(server, specs[0])
    elif mode == "tcp":
        tcp(server, specs)
    elif mode == "tcpsplit":
        tcp(server, specs[:1], split=True)
    elif mode == "tcpseq":
        tcp(server, specs, seq=True)
    else:
        sys.exit(f"dnsq.py: no mode {mode}")


main()
