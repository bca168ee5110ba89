#!/usr/bin/python3
"""perftest -R's second connection, timed from a capture (tshark decodes it).

perftest's -R client sends its data connection's REQ as soon as it has the
server's keys, which come in an RC SEND over the first (perftest's own)
connection; the server listens again only after that SEND completes. For
every REQ that follows an RTU (so: a second connection of one run), this
prints how long after the server's last RC SEND to the client it left, and
what the server answered (REP, or REJ with its reason).

    cm-race-timing.py CAPTURE.pcap SERVER_IP
"""
import subprocess
import sys

ATTR_REQ, ATTR_REJ, ATTR_REP, ATTR_RTU = 0x10, 0x12, 0x13, 0x14
SEND_ONLY = 4


def frames(pcap):
    out = subprocess.run(
        ["tshark", "-r", pcap, "-T", "fields", "-E", "separator=|",
         "-e", "frame.time_relative", "-e", "ip.src", "-e", "infiniband.bth.opcode",
         "-e", "infiniband.bth.destqp", "-e", "infiniband.mad.attributeid",
         "-e", "infiniband.cm.rej.reason"],
        check=True, capture_output=True, text=True).stdout
    for line in out.splitlines():
        t, src, op, dqp, attr, reason = (line.split("|") + [""] * 6)[:6]
        yield (float(t), src, int(op or -1), int(dqp or "0", 0),
               int(attr, 0) if attr else None, reason)


def main():
    pcap, server = sys.argv[1], sys.argv[2]
    last_send = None   # time of the server's last RC SEND to the client
    last_cm = None     # the previous CM attribute seen
    pending = None     # (time of a second REQ, its delay after last_send)
    rows = []
    for t, src, op, dqp, attr, reason in frames(pcap):
        if attr is None:
            if src == server and op == SEND_ONLY and dqp != 1:
                last_send = t
            continue
        if attr == ATTR_REQ and src != server and last_cm == ATTR_RTU and last_send:
            pending = (t, (t - last_send) * 1e3)
        elif pending and src == server and attr in (ATTR_REP, ATTR_REJ):
            what = "REP" if attr == ATTR_REP else f"REJ reason {int(reason or '0', 0)}"
            rows.append((pending[1], (t - pending[0]) * 1e3, what))
            pending = None
        last_cm = attr
    for delay, answer, what in rows:
        print(f"second REQ {delay:8.1f} ms after the server's keys; "
              f"answered in {answer:7.1f} ms: {what}")
    if not rows:
        print("no second connection in the capture")


if __name__ == "__main__":
    main()
