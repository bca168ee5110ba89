#!/usr/bin/python3
"""A verbs client that tries to wear uroced down (issue 12), run under
uroce-run with Debian's pyverbs.

    verbs_abuse.py channels IBDEV DAEMON_PID CYCLES
        Creates and destroys a completion channel (each registered with the
        daemon by a CQ created on it) CYCLES times in one context, and
        compares the daemon's descriptor count (/proc/DAEMON_PID/fd, so the
        caller must be allowed to read it) after the first 20 cycles with
        the count at the end. Prints "fds: BEFORE -> AFTER"; exit 1 when the
        count grew (a channel whose destruction the daemon never heard of
        keeps one pipe write end there).

Exit status: 0 pass, 1 the property failed, 2 a verb failed unexpectedly.
"""
import os
import sys

from pyverbs.cq import CQ, CompChannel
from pyverbs.device import Context


def daemon_fds(pid):
    return len(os.listdir("/proc/%d/fd" % pid))


def cycle(ctx):
    ch = CompChannel(ctx)
    cq = CQ(ctx, 4, None, ch, 0)
    cq.close()
    ch.close()


def channels(ibdev, pid, cycles):
    ctx = Context(name=ibdev)
    for _ in range(20):
        cycle(ctx)
    before = daemon_fds(pid)
    for _ in range(cycles - 20):
        cycle(ctx)
    after = daemon_fds(pid)
    print("fds: %d -> %d after %d channel create/destroy cycles" % (before, after, cycles))
    ctx.close()
    return 0 if after <= before else 1


def main(argv):
    if len(argv) == 5 and argv[1] == "channels":
        return channels(argv[2], int(argv[3]), int(argv[4]))
    sys.stderr.write(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
