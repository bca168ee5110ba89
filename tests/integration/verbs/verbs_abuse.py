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

    verbs_abuse.py flood SOCKET HOLD SECONDS
        Opens HOLD connections to uroced's control socket and keeps them
        (each costs the daemon a descriptor and a thread until it closes),
        then for SECONDS connects and closes in a loop (the flood), then
        closes everything. Prints how many it held and how many it made.

    verbs_abuse.py open IBDEV
        Opens IBDEV and allocates a PD: a client that just wants service.

    verbs_abuse.py fdlimit IBDEV NOFILE UROCE_CTL RUN_DIR
        With RLIMIT_NOFILE at NOFILE, creates CQs until one fails: that
        failure must be EMFILE (the reply's ring fd could not be received),
        and, with the limit raised again, `uroce-ctl clients --json` must
        list exactly the CQs this process holds (the daemon rolled the
        failed one back). Prints the counts.

Exit status: 0 pass, 1 the property failed, 2 a verb failed unexpectedly.
"""
import errno
import json
import os
import resource
import socket
import subprocess
import sys
import time

from pyverbs.cq import CQ, CompChannel
from pyverbs.device import Context
from pyverbs.pd import PD
from pyverbs.pyverbs_error import PyverbsRDMAError


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


def flood(path, hold, seconds):
    held = []
    for _ in range(hold):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        s.settimeout(1.0)
        try:
            s.connect(path)
        except OSError:
            s.close()
            continue
        held.append(s)
    made = 0
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        s.settimeout(0.2)
        try:
            s.connect(path)
            made += 1
        except OSError:
            pass
        s.close()
    print("held %d connections, made %d more in %d s" % (len(held), made, seconds))
    for s in held:
        s.close()
    return 0


def open_device(ibdev):
    ctx = Context(name=ibdev)
    pd = PD(ctx)
    pd.close()
    ctx.close()
    print("opened %s and allocated a PD" % ibdev)
    return 0


def fdlimit(ibdev, nofile, uroce_ctl, run_dir):
    ctx = Context(name=ibdev)
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (nofile, hard))
    cqs = []
    err = None
    while len(cqs) < 100000:
        try:
            cqs.append(CQ(ctx, 4, None, None, 0))
        except PyverbsRDMAError as e:
            err = e.error_code
            break
    resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    out = subprocess.run([uroce_ctl, "--run-dir", run_dir, "clients", "--json"],
                         capture_output=True, text=True, check=True).stdout
    mine = [c for c in json.loads(out)["clients"] if c.get("pid") == os.getpid()]
    listed = sum(len(c.get("objects", {}).get("cqs", [])) for c in mine)
    print("held %d CQs, failure errno %s (%s), the daemon lists %d" %
          (len(cqs), err, os.strerror(err) if err else "-", listed))
    for cq in cqs:
        cq.close()
    ctx.close()
    return 0 if err == errno.EMFILE and listed == len(cqs) and cqs else 1


def main(argv):
    if len(argv) == 6 and argv[1] == "fdlimit":
        return fdlimit(argv[2], int(argv[3]), argv[4], argv[5])
    if len(argv) == 5 and argv[1] == "flood":
        return flood(argv[2], int(argv[3]), int(argv[4]))
    if len(argv) == 3 and argv[1] == "open":
        return open_device(argv[2])
    if len(argv) == 5 and argv[1] == "channels":
        return channels(argv[2], int(argv[3]), int(argv[4]))
    sys.stderr.write(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
