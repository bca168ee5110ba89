#!/usr/bin/python3
"""One TCP connection, relayed to a server that may not listen yet.

    tcp_relay.py LISTEN_PORT TARGET_HOST TARGET_PORT [--timeout S]
                 [--after UNIX_SOCKET_PATH]

Listens on 127.0.0.1:LISTEN_PORT, accepts one connection, then connects to
TARGET_HOST:TARGET_PORT, trying again every 10 ms for up to S seconds
(default 30), and copies bytes both ways until both sides are done (a half-close is passed on).

Why: two programs in embedded mode over memif (docs/embedded.md) each run
an engine, and the memif link comes up only when both have opened their
device. perftest's server checks its port before it listens, so it waits
for the client's engine; perftest's client connects once, right after
opening its device, and gives up if the server is not listening yet. Through
this relay the client's connect succeeds at once and the relay waits for
the server. Prints "listening" on stdout once it accepts connections.

With --after, it starts listening only once a Unix socket listens at that
path (the memif server's socket), so that the client's side, started when
the relay listens, starts after the server's. (A memif client port of
uroced does not retry a refused connection; an embedded engine waits for
its server up to its link wait, docs/embedded.md.)
"""
import argparse
import os
import selectors
import socket
import sys
import time


def unix_listening(path):
    """True when a Unix socket of this network namespace listens at path."""
    try:
        with open("/proc/net/unix") as f:
            next(f)
            for l in f:
                cells = l.split()
                # Num RefCount Protocol Flags Type St Inode [Path]; flag
                # 0x10000 is __SO_ACCEPTCON, set by listen().
                if len(cells) >= 8 and cells[7] == path and int(cells[3], 16) & 0x10000:
                    return True
    except OSError:
        pass
    return False


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("listen_port", type=int)
    ap.add_argument("target_host")
    ap.add_argument("target_port", type=int)
    ap.add_argument("--timeout", type=float, default=30.0)
    ap.add_argument("--after")
    a = ap.parse_args()
    if a.after:
        path = os.path.abspath(a.after)
        deadline = time.monotonic() + a.timeout
        while not unix_listening(path):
            if time.monotonic() > deadline:
                print(f"tcp_relay: nothing listens at {path}", file=sys.stderr)
                return 1
            time.sleep(0.01)
    ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind(("127.0.0.1", a.listen_port))
    ls.listen(1)
    print("listening", flush=True)
    ls.settimeout(a.timeout)
    try:
        client, _ = ls.accept()
    except TimeoutError:
        print(f"tcp_relay: no connection on port {a.listen_port}", file=sys.stderr)
        return 1
    ls.close()
    deadline = time.monotonic() + a.timeout
    while True:
        try:
            server = socket.create_connection((a.target_host, a.target_port))
            break
        except OSError as e:
            if time.monotonic() > deadline:
                print(f"tcp_relay: {a.target_host}:{a.target_port}: {e}", file=sys.stderr)
                return 1
            time.sleep(0.01)
    for s in (client, server):
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sel = selectors.DefaultSelector()
    sel.register(client, selectors.EVENT_READ, server)
    sel.register(server, selectors.EVENT_READ, client)
    # A side that is done writing (EOF) gets its half-close passed on, and
    # the other direction goes on until it ends too: closing both at the
    # first EOF would reset a peer that still sends its last words (perftest
    # exchanges a final message after the other side may have finished).
    open_dirs = 2
    while open_dirs:
        for key, _ in sel.select():
            try:
                data = key.fileobj.recv(65536)
            except ConnectionResetError:
                data = b""
            if data:
                key.data.sendall(data)
                continue
            sel.unregister(key.fileobj)
            open_dirs -= 1
            try:
                key.data.shutdown(socket.SHUT_WR)
            except OSError:
                pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
