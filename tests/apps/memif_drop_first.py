#!/usr/bin/python3
"""A memif socket in front of a memif server that leaves the first
handshake unanswered: the retry path of a memif client's open (ports.cpp,
"did not complete the handshake; again"), made to happen every time.

    memif_drop_first.py LISTEN SERVER HOLD_MS

Listens at LISTEN. The first connection is held HOLD_MS without a word, then
closed. Each later one, one at a time, is relayed to SERVER message by
message, descriptors included (memif passes its regions' memfds and its
rings' eventfds with SCM_RIGHTS); one that finds no SERVER yet is closed
(the client connects again). Runs until SIGTERM, or for 90 s.
"""
import os
import select
import signal
import socket
import sys
import time


def relay(a, b):
    """Copies messages both ways until either side closes."""
    while True:
        for s in select.select([a, b], [], [], 60)[0]:
            other = b if s is a else a
            msg, fds, _, _ = socket.recv_fds(s, 4096, 16)
            if not msg:
                return
            if fds:
                socket.send_fds(other, [msg], fds)
                for fd in fds:
                    os.close(fd)
            else:
                other.send(msg)


def main(argv):
    listen_at, server, hold_ms = argv[1], argv[2], int(argv[3])
    ls = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    ls.bind(listen_at)
    ls.listen(4)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    print("listening at %s" % listen_at, flush=True)
    try:
        return serve(ls, server, hold_ms)
    finally:
        os.unlink(listen_at)


def serve(ls, server, hold_ms):
    deadline = time.monotonic() + 90
    first = True
    while time.monotonic() < deadline:
        if not select.select([ls], [], [], 1)[0]:
            continue
        c, _ = ls.accept()
        if first:
            first = False
            time.sleep(hold_ms / 1000)
            c.close()
            print("held the first connection %d ms, then closed it" % hold_ms, flush=True)
            continue
        s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            s.connect(server)
        except OSError:
            s.close()
            c.close()
            continue
        print("relaying a connection to %s" % server, flush=True)
        relay(c, s)
        c.close()
        s.close()
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
