#!/usr/bin/env python3
"""soakhttp.py: hostile HTTP clients of the agent's --listen, for the soak.

  soakhttp.py slow ADDR PORT [--gap-ms 20]
      GET /metrics one byte every GAP ms, reads the answer, again; forever.
  soakhttp.py noread ADDR PORT [--hold-s 20]
      GET /metrics in one send, then never reads (a receive buffer of 1 KiB,
      so the agent's writes block); after HOLD s closes and starts again.

Reconnects when the agent is away (a restart). Runs until SIGTERM, then
prints "requests N connects C refused R". Only the standard library."""
import signal
import socket
import sys
import time

stop = False


def on_term(*_):
    global stop
    stop = True


def main():
    mode, addr, port = sys.argv[1], sys.argv[2], int(sys.argv[3])
    opt = dict(zip(sys.argv[4::2], sys.argv[5::2]))
    gap = int(opt.get("--gap-ms", 20)) / 1000
    hold = float(opt.get("--hold-s", 20))
    signal.signal(signal.SIGTERM, on_term)
    req = b"GET /metrics HTTP/1.1\r\nHost: agent\r\nConnection: close\r\n\r\n"
    done = connects = refused = 0
    while not stop:
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        if mode == "noread":
            s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1024)
        try:
            s.settimeout(2)
            s.connect((addr, port))
            connects += 1
            if mode == "slow":
                for b in req:
                    if stop:
                        break
                    s.sendall(bytes([b]))
                    time.sleep(gap)
                s.settimeout(30)
                while s.recv(65536):
                    pass
            else:
                s.sendall(req)
                end = time.monotonic() + hold
                while not stop and time.monotonic() < end:
                    time.sleep(0.1)
            done += 1
        except OSError:
            refused += 1
            time.sleep(0.2)
        finally:
            s.close()
    print("requests %d connects %d refused %d" % (done, connects, refused))


if __name__ == "__main__":
    main()
