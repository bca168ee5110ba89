#!/usr/bin/python3
"""A hostile control-socket client for the robustness test.

    ctl_probe.py SOCKET IBDEV MAX_HANDLE

Connects to uroced's control socket as whatever user runs it, says Hello
for IBDEV, then asks the daemon to destroy or query every handle
0..MAX_HANDLE of every object type (QPs, SRQs, CQs, AHs, MRs, completion
channels, PDs, in the order a client's teardown would). It created no
object itself, so every request must fail with ENOENT (docs/ctl.md: handles
are per connection): if the daemon honoured one, the handle belonged to
another client and was destroyed under it. Prints one line per unexpected
reply and exits 1 if there was any, 0 otherwise.

The wire format is datapath/ctl/protocol.h's: a 16-byte header {u32 magic,
u16 version, u16 op, u32 length, u32 seq}, then the op's request struct;
replies add {i32 status, u32 reserved}. The version is read from that
header (kVersion), so the probe speaks whatever version the tree builds.
"""
import errno
import os
import re
import socket
import struct
import sys

PROTOCOL_H = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..",
                          "datapath", "ctl", "protocol.h")


def protocol_version(path=PROTOCOL_H):
    with open(path, encoding="utf-8") as f:
        m = re.search(r"kVersion\s*=\s*(\d+)\s*;", f.read())
    if m is None:
        raise SystemExit(f"ctl_probe.py: no kVersion in {path}")
    return int(m.group(1))


MAGIC = 0x45435255
VERSION = protocol_version()
HDR = struct.Struct("<IHHII")
STATUS = struct.Struct("<iI")

OP_HELLO = 1
# (op, name) whose request is {u32 handle, u32 pad}; teardown order.
HANDLE_OPS = [
    (16, "DestroyQp"),
    (20, "DestroySrq"),
    (19, "QuerySrq"),
    (12, "DestroyCq"),
    (22, "DestroyAh"),
    (6, "DeregMr"),
    (9, "DestroyCompChannel"),
    (4, "DeallocPd"),
]
OP_QUERY_QP = 15  # {u32 qp_handle, u32 attr_mask}


def exchange(sock, op, seq, body, fds=()):
    """Sends one request (with fds by SCM_RIGHTS), checks that the reply
    echoes it, closes any fds it carries; returns (status, reply body)."""
    msg = HDR.pack(MAGIC, VERSION, op, HDR.size + len(body), seq) + body
    anc = []
    if fds:
        anc = [(socket.SOL_SOCKET, socket.SCM_RIGHTS, struct.pack("%di" % len(fds), *fds))]
    sock.sendmsg([msg], anc)
    data, anc, _, _ = sock.recvmsg(65536, socket.CMSG_SPACE(4 * 4))
    for level, kind, payload in anc:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            for fd in struct.unpack("%di" % (len(payload) // 4), payload):
                os.close(fd)
    if len(data) < HDR.size + STATUS.size:
        raise RuntimeError("short reply (%d bytes) to op %d" % (len(data), op))
    magic, version, rop, length, rseq = HDR.unpack_from(data)
    if (magic, version, rop, rseq) != (MAGIC, VERSION, op, seq):
        raise RuntimeError("reply header %r does not echo op %d seq %d" %
                           ((hex(magic), version, rop, rseq), op, seq))
    status, _ = STATUS.unpack_from(data, HDR.size)
    return status, data[HDR.size + STATUS.size:]


def request(sock, op, seq, body, fds=()):
    return exchange(sock, op, seq, body, fds)[0]


def main():
    path, ibdev, max_handle = sys.argv[1], sys.argv[2], int(sys.argv[3])
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    sock.connect(path)
    rd, wr = os.pipe()
    st = request(sock, OP_HELLO, 1, ibdev.encode().ljust(64, b"\0"), [wr])
    os.close(wr)
    if st != 0:
        print("Hello for %s as uid %d: status %d (%s)" %
              (ibdev, os.getuid(), st, os.strerror(st)))
        return 1
    bad = 0
    seq = 2
    for h in range(max_handle + 1):
        st = request(sock, OP_QUERY_QP, seq, struct.pack("<II", h, 1))
        seq += 1
        if st != errno.ENOENT:
            print("QueryQp handle %d: status %d, expected ENOENT" % (h, st))
            bad += 1
    for op, name in HANDLE_OPS:
        for h in range(max_handle + 1):
            st = request(sock, op, seq, struct.pack("<II", h, 0))
            seq += 1
            if st != errno.ENOENT:
                print("%s handle %d: status %d (%s), expected ENOENT" %
                      (name, h, st, os.strerror(st) if st > 0 else "success"))
                bad += 1
    print("uid %d: %d requests over handles 0..%d, %d not ENOENT" %
          (os.getuid(), seq - 2, max_handle, bad))
    os.close(rd)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
