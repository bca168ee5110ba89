#!/usr/bin/python3
"""QEMU's view of a guest's virtio-net queues, one line per queue.

    qemu-queues.py MONITOR_SOCKET

For a guest that stopped sending (tests/interop_rxe/failures.sh): through
QEMU's human monitor, each queue's state in the device model (descriptors
taken but not returned, the last index read from the guest) beside the
indexes in the guest's memory: the avail ring's idx (what the guest
posted) and flags, the used ring's idx (what QEMU returned) and flags.
The guest's eth0 runs without VIRTIO_RING_F_EVENT_IDX
(scripts/interop/guest.sh), so the flags say who asked not to be told:
used flags 1 (NO_NOTIFY) is QEMU saying it needs no kick, avail flags 1
(NO_INTERRUPT) the guest saying it needs no interrupt. A queue whose
guest idx is ahead of QEMU's last index with no descriptor in use
waits: for a kick that did not come while NO_NOTIFY is clear, for
QEMU's own work while it is set. Exits 1 when the monitor cannot be read.
"""
import re
import socket
import sys

PROMPT = b"(qemu) "


def command(sock, text):
    sock.sendall(text.encode() + b"\n")
    out = b""
    while not out.endswith(PROMPT):
        chunk = sock.recv(65536)
        if not chunk:
            break
        out += chunk
    # The monitor echoes the line with cursor escapes; the answer follows
    # the echo's last "erase to end of line".
    body = out.decode(errors="replace").replace("\r", "")
    body = body.rsplit("\x1b[K", 1)[-1]
    return body[: -len(PROMPT)] if body.endswith(PROMPT.decode()) else body


def guest_u16(sock, addr):
    m = re.search(r":\s*0x([0-9a-f]+)", command(sock, f"xp /1hx {addr:#x}"))
    return int(m.group(1), 16) if m else None


def main():
    if len(sys.argv) != 2:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    sock = socket.socket(socket.AF_UNIX)
    sock.settimeout(3)
    try:
        sock.connect(sys.argv[1])
        out = b""
        while not out.endswith(PROMPT):
            chunk = sock.recv(65536)
            if not chunk:
                raise OSError("monitor closed")
            out += chunk
        paths = re.findall(r"^(\S+) \[virtio-net\]", command(sock, "info virtio"), re.M)
        if not paths:
            print("qemu: no virtio-net device")
            return 1
        for index, name in ((0, "rx"), (1, "tx")):
            st = command(sock, f"info virtio-queue-status {paths[0]} {index}")
            f = dict(re.findall(r"^[ \t]*(\w+):[ \t]+(\S+)", st, re.M))
            avail, used = int(f["avail"], 16), int(f["used"], 16)
            print(f"qemu: {name} queue: inuse {f['inuse']}, last_avail_idx "
                  f"{f['last_avail_idx']}, used_idx {f['used_idx']}; guest memory: "
                  f"avail idx {guest_u16(sock, avail + 2)}, avail flags "
                  f"{guest_u16(sock, avail)}, used idx {guest_u16(sock, used + 2)}, "
                  f"used flags {guest_u16(sock, used)}")
    except (OSError, KeyError, ValueError) as e:
        print(f"qemu: monitor not read: {e}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
