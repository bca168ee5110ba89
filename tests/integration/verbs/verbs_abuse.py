#!/usr/bin/python3
"""A client that tries to wear uroced down (issue 12), with Debian's
pyverbs; the subcommands that open a device run under uroce-run, flood and
sparse speak to the socket themselves.

    verbs_abuse.py channels IBDEV DAEMON_PID CYCLES
        Creates and destroys a completion channel (each registered with the
        daemon by a CQ created on it) CYCLES times in one context, and
        compares the daemon's descriptor count (/proc/DAEMON_PID/fd, so the
        caller must be allowed to read it) after the first 20 cycles with
        the count at the end. Prints "fds: BEFORE -> AFTER"; exit 1 when the
        count grew (a channel whose destruction the daemon never heard of
        keeps one pipe write end there).

    verbs_abuse.py flood SOCKET HOLD SECONDS [STOP_FILE | made=N]
        Opens HOLD connections to uroced's control socket and keeps them
        (each costs the daemon a descriptor and a thread until it closes; a
        full listen queue, while the daemon pauses accepting, is waited
        out, so that all HOLD are made however slowly the daemon accepts),
        prints "holding HOLD connections", then connects and closes in a
        loop (the flood) for SECONDS, or with STOP_FILE until that file
        exists, or with made=N until it made N connections (SECONDS is then
        the most it floods), then closes everything.
        Prints how many it held (those the daemon kept, not closed with
        its refusal notice) and how many it made.

    verbs_abuse.py statuses SOCKET TIMES SECONDS STOP_FILE
        Asks uroced for its status (the Status request uroce-ctl sends, on a
        fresh connection each time) every 0.2 s, at least TIMES times and
        for at least SECONDS, then creates STOP_FILE. Times each from
        connect to reply (not a process start, which alone can take a
        second on a loaded machine). Prints "asked N times in S s, slowest
        X ms, K of 1 s or more"; exit 1 when a request failed.

    verbs_abuse.py open IBDEV
        Opens IBDEV and allocates a PD: a client that just wants service.

    verbs_abuse.py regmr IBDEV
        Registers a 4 KiB heap buffer on IBDEV; prints the errno (0 if it
        registered).

    verbs_abuse.py pairs IBDEV NOFILE MOST UROCE_CTL RUN_DIR [DAEMON_PID]
        With RLIMIT_NOFILE at NOFILE, creates up to MOST QPs, each with a
        CQ of its own, until one fails (rings cost no descriptor since the
        per-context arena: only the device's or the user's limits stop
        this). Prints "pairs N errno E (NAME)", then the descriptors this
        process held (and uroced's, when DAEMON_PID is given and
        /proc/DAEMON_PID/fd is readable) after 0, 100 and 1,000 pairs, and
        the QPs and CQs `uroce-ctl clients --json` lists for this process.

    verbs_abuse.py mrs IBDEV NOFILE MOST UROCE_CTL RUN_DIR [DAEMON_PID]
        With RLIMIT_NOFILE at NOFILE, registers up to MOST 4 KiB MRs (each
        a buffer of its own, which the provider moves onto a memfd) until
        one fails: only the device's or the user's limits may stop this
        (before ctl version 5 each MR kept a memfd open in the client and
        in the daemon). Prints "mrs N errno E (NAME)", then the descriptors
        this process held (and uroced's, as for pairs) after 0, 100 and
        1,000 MRs, and the MRs `uroce-ctl clients --json` lists for this
        process; then checks one MR's bytes are still the ones written
        before it was registered.

    verbs_abuse.py rings IBDEV DEPTH MOST
        Creates up to MOST RC QPs, each with a CQ of DEPTH entries and a send
        queue DEPTH deep, until one fails. Their rings live in the
        connection's arena, charged to the mapped-bytes quota. Prints "rings
        N errno E" (errno 0: all made).

    verbs_abuse.py fdlimit IBDEV UROCE_CTL RUN_DIR
        Opens IBDEV, then tries to open it again with RLIMIT_NOFILE at room
        for 0, 1, 2, ... more descriptors, until it opens: every failure
        must be EMFILE (whichever descriptor could not be had: libibverbs'
        command fd, the socket, the async pipe, or the arena's fd in Hello's
        reply), and afterwards `uroce-ctl clients --json` must list just
        the first context of this process (the daemon reclaimed every
        refused one). Prints the errno of each attempt.

    verbs_abuse.py sparse SOCKET IBDEV REG_BYTES MAX [--hold FILE]
        Speaks the control protocol itself (datapath/ctl/protocol.h, as a
        hostile client would): Hello, AllocPd, then RegMr of sparse 64 GiB
        memfds (nothing allocated: ftruncate only), each registering
        REG_BYTES of it and asking the daemon to map all 64 GiB, until the
        daemon refuses or MAX succeeded. Prints
        "registered N, then status S (NAME)"; with --hold FILE, then waits
        until FILE exists before dropping the connection.

    verbs_abuse.py objects IBDEV QPS CQS MRS [--hold FILE] [--rate KBPS]
        Opens IBDEV and creates up to QPS QPs (on one CQ), then up to CQS
        more CQs and MRS 4 KiB MRs, each kind until the first failure.
        With --rate, limits the first QP to KBPS (ibv_modify_qp with
        IBV_QP_RATE_LIMIT; exit 1 if refused). Prints "qps N errno E, cqs N
        errno E, mrs N errno E" (errno 0: all made); with --hold FILE, then
        waits until FILE exists.

    verbs_abuse.py contexts IBDEV N
        Opens IBDEV up to N times (each a connection to the daemon), until
        one fails. Prints "opened K errno E" (errno 0: all opened).

    verbs_abuse.py afterdeath IBDEV FILE
        Opens IBDEV with a completion channel and an armed CQ, prints
        "ready", waits until FILE exists (the caller kills the daemon, then
        creates it), and prints the errno of ibv_get_cq_event, ibv_poll_cq,
        ibv_req_notify_cq and ibv_alloc_pd, which must all fail now:
        "get_cq_event E, poll_cq E, req_notify_cq E, alloc_pd E".

Exit status: 0 pass, 1 the property failed, 2 a verb failed unexpectedly.
"""
import errno
import fcntl
import json
import os
import resource
import select
import socket
import struct
import subprocess
import sys
import time

from pyverbs.cq import CQ, CompChannel
import pyverbs.enums as e
from pyverbs.device import Context
from pyverbs.mr import MR
from pyverbs.qp import QP, QPAttr, QPCap, QPInitAttr
from pyverbs.pd import PD
from pyverbs.pyverbs_error import PyverbsRDMAError

# The control protocol's framing, defined once for the test scripts.
from ctl_probe import OP_HELLO, exchange


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


def connect_unix(path, timeout):
    """A connected socket, or None when the daemon refused at once. A full
    listen queue (EAGAIN: the daemon is not accepting just now) is retried
    until `timeout` passes."""
    deadline = time.monotonic() + timeout
    while True:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        s.setblocking(False)
        try:
            s.connect(path)
            return s
        except BlockingIOError:
            s.close()
            if time.monotonic() >= deadline:
                return None
            time.sleep(0.005)
        except OSError:
            s.close()
            return None


def kept(sockets):
    """How many of the sockets the daemon still serves: one it refused has
    the refusal notice (or end of file) to read."""
    ready = select.select(sockets, [], [], 0)[0] if sockets else []
    return len(sockets) - len(ready)


def flood(path, hold, seconds, until=None):
    stop_file = None
    most = None
    if until is not None and until.startswith("made="):
        most = int(until[5:])
    else:
        stop_file = until
    held = []
    for _ in range(hold):
        s = connect_unix(path, 30.0)
        if s is not None:
            held.append(s)
    print("holding %d connections" % len(held), flush=True)
    made = 0
    start = time.monotonic()
    deadline = start + seconds
    while time.monotonic() < deadline:
        if stop_file is not None and os.path.exists(stop_file):
            break
        if most is not None and made >= most:
            break
        s = connect_unix(path, 0.2)
        if s is not None:
            made += 1
            s.close()
    print("held %d connections (%d kept by the daemon), made %d more in %d s" %
          (len(held), kept(held), made, round(time.monotonic() - start)))
    for s in held:
        s.close()
    return 0


OP_STATUS = 23


def statuses(path, times, seconds, stop_file):
    start = time.monotonic()
    asked = slow = 0
    worst = 0.0
    failed = None
    while asked < times or time.monotonic() - start < seconds:
        t0 = time.monotonic()
        try:
            with socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET) as s:
                # Blocking, as uroce-ctl's: a full listen queue is waited
                # out (that wait counts).
                s.connect(path)
                s.settimeout(5.0)
                st, _ = exchange(s, OP_STATUS, 1, struct.pack("<II", 0, 0))
            if st != 0:
                failed = "status %d (%s)" % (st, os.strerror(st))
        except (OSError, RuntimeError) as err:
            failed = str(err)
        ms = (time.monotonic() - t0) * 1000
        asked += 1
        worst = max(worst, ms)
        slow += ms >= 1000
        if failed:
            break
        time.sleep(0.2)
    with open(stop_file, "w"):
        pass
    print("asked %d times in %d s, slowest %d ms, %d of 1 s or more" %
          (asked, round(time.monotonic() - start), worst, slow))
    if failed:
        print("a status request failed: %s" % failed)
        return 1
    return 0


def open_device(ibdev):
    ctx = Context(name=ibdev)
    pd = PD(ctx)
    pd.close()
    ctx.close()
    print("opened %s and allocated a PD" % ibdev)
    return 0


def listed(client, kind):
    """The handles of one kind a client entry lists, with those left out
    of a list cut to fit the reply ("<kind>_omitted")."""
    o = client.get("objects", {})
    return len(o.get(kind, [])) + o.get(kind + "_omitted", 0)


def my_clients(uroce_ctl, run_dir):
    out = subprocess.run([uroce_ctl, "--run-dir", run_dir, "clients", "--json"],
                         capture_output=True, text=True, check=True).stdout
    return [c for c in json.loads(out)["clients"] if c.get("pid") == os.getpid()]


def own_fds():
    return len(os.listdir("/proc/self/fd")) - 1  # not listdir's own


class FdSamples:
    """This process's and the daemon's descriptor counts after n objects."""

    def __init__(self, daemon_pid):
        self.daemon_pid = daemon_pid
        self.at = {}

    def take(self, n):
        try:
            theirs = daemon_fds(self.daemon_pid) if self.daemon_pid else "-"
        except OSError:
            theirs = "-"
        self.at[n] = (own_fds(), theirs)

    def print(self, what):
        for n in sorted(self.at):
            mine, theirs = self.at[n]
            print("after %d %s: client fds %d, daemon fds %s" % (n, what, mine, theirs))


def qp_with_cq(ctx, pd, cap, cq_depth):
    """An RC QP with a CQ of its own, as (qp, cq); the CQ is closed again when
    the QP cannot be made (the error propagates)."""
    cq = CQ(ctx, cq_depth, None, None, 0)
    try:
        qp = QP(pd, QPInitAttr(qp_type=e.IBV_QPT_RC, scq=cq, rcq=cq, cap=cap))
    except PyverbsRDMAError:
        cq.close()
        raise
    return qp, cq


def pairs(ibdev, nofile, most, uroce_ctl, run_dir, daemon_pid):
    ctx = Context(name=ibdev)
    pd = PD(ctx)
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(nofile, hard), hard))
    cap = QPCap(max_send_wr=4, max_recv_wr=4, max_send_sge=1, max_recv_sge=1)
    made, err = [], 0

    seen = FdSamples(daemon_pid)
    seen.take(0)
    while len(made) < most:
        try:
            made.append(qp_with_cq(ctx, pd, cap, 4))
        except PyverbsRDMAError as ex:
            err = ex.error_code
            break
        if len(made) in (100, 1000):
            seen.take(len(made))
    resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    mine = my_clients(uroce_ctl, run_dir)
    qps = sum(listed(c, "qps") for c in mine)
    cqs = sum(listed(c, "cqs") for c in mine)
    print("pairs %d errno %d (%s)" % (len(made), err, errno.errorcode.get(err, "none")))
    seen.print("pairs")
    print("the daemon lists %d QPs and %d CQs of this process" % (qps, cqs))
    sys.stdout.flush()
    for qp, cq in made:
        qp.close()
        cq.close()
    pd.close()
    ctx.close()
    return 0


def mrs(ibdev, nofile, most, uroce_ctl, run_dir, daemon_pid):
    ctx = Context(name=ibdev)
    pd = PD(ctx)
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(nofile, hard), hard))
    made, err = [], 0

    seen = FdSamples(daemon_pid)
    seen.take(0)
    while len(made) < most:
        try:
            mr = MR(pd, 4096, e.IBV_ACCESS_LOCAL_WRITE | e.IBV_ACCESS_REMOTE_WRITE)
        except PyverbsRDMAError as ex:
            err = ex.error_code
            break
        mr.write(b"%08d" % len(made), 8)
        made.append(mr)
        if len(made) in (100, 1000):
            seen.take(len(made))
    resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    mine = my_clients(uroce_ctl, run_dir)
    listed_mrs = sum(listed(c, "mrs") for c in mine)
    print("mrs %d errno %d (%s)" % (len(made), err, errno.errorcode.get(err, "none")))
    seen.print("MRs")
    print("the daemon lists %d MRs of this process" % listed_mrs)
    bad = [i for i, mr in enumerate(made) if mr.read(8, 0) != b"%08d" % i]
    print("MRs whose bytes changed: %d" % len(bad))
    sys.stdout.flush()
    for mr in made:
        mr.close()
    pd.close()
    ctx.close()
    return 1 if bad else 0


def rings(ibdev, depth, most):
    ctx = Context(name=ibdev)
    pd = PD(ctx)
    cap = QPCap(max_send_wr=depth, max_recv_wr=1, max_send_sge=1, max_recv_sge=1)
    made, err = make_until(most, lambda: qp_with_cq(ctx, pd, cap, depth))
    print("rings %d errno %d" % (len(made), err))
    for qp, cq in made:
        qp.close()
        cq.close()
    pd.close()
    ctx.close()
    return 0


def limit_leaving(room):
    """The RLIMIT_NOFILE under which exactly `room` descriptor numbers are
    free (new fds take the lowest free number below the limit)."""
    used = {int(f) for f in os.listdir("/proc/self/fd")}
    limit, free = 0, 0
    while free < room or (limit in used and limit < max(used)):
        free += limit not in used
        limit += 1
    return limit


def fdlimit(ibdev, uroce_ctl, run_dir):
    first = Context(name=ibdev)
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    errs = []
    for room in range(12):
        resource.setrlimit(resource.RLIMIT_NOFILE, (limit_leaving(room), hard))
        try:
            Context(name=ibdev).close()
            errs.append(0)
        except PyverbsRDMAError as ex:
            errs.append(ex.error_code if ex.error_code else -1)
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
        if errs[-1] == 0:
            break
    listed = -1
    for _ in range(40):  # the daemon reclaims a refused one when it sees EOF
        listed = len(my_clients(uroce_ctl, run_dir))
        if listed == 1:
            break
        time.sleep(0.05)
    print("second context with room for 0, 1, ... more fds: errno %s; "
          "the daemon lists %d clients of this process" %
          (" ".join(errno.errorcode.get(x, str(x)) for x in errs), listed))
    first.close()
    # With almost no room libibverbs cannot even list the devices ("failed
    # to find", no errno): those attempts never reach the daemon.
    tried = errs[errs.index(errno.EMFILE):] if errno.EMFILE in errs else []
    ok = len(tried) > 1 and tried[-1] == 0 and all(x == errno.EMFILE for x in tried[:-1])
    return 0 if ok and listed == 1 else 1


OP_ALLOC_PD, OP_REG_MR = 3, 5
GIB = 1 << 30


def sparse(path, ibdev, reg_bytes, most, hold):
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    sock.connect(path)
    rd, wr = os.pipe()
    st, _ = exchange(sock, OP_HELLO, 1, ibdev.encode().ljust(64, b"\0"), [wr])
    os.close(wr)
    if st != 0:
        print("Hello: status %d" % st)
        return 2
    st, rep = exchange(sock, OP_ALLOC_PD, 2, struct.pack("<Q", 0))
    if st != 0:
        print("AllocPd: status %d" % st)
        return 2
    pd = struct.unpack_from("<I", rep)[0]
    n, st, seq = 0, 0, 3
    while n < most:
        fd = os.memfd_create("sparse", os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING)
        os.ftruncate(fd, 64 * GIB)
        fcntl.fcntl(fd, 1033, 0x0002 | 0x0001)  # F_ADD_SEALS: F_SEAL_SHRINK | F_SEAL_SEAL
        # RegMrReq, source kMemfd (0) and padding last
        body = struct.pack("<IIQQQQQII", pd, 1, 0x10000000, reg_bytes, 0x10000000, 64 * GIB, 0, 0, 0)
        st, _ = exchange(sock, OP_REG_MR, seq, body, [fd])
        os.close(fd)
        seq += 1
        if st != 0:
            break
        n += 1
    print("registered %d, then status %d (%s)" %
          (n, st, errno.errorcode.get(st, "none") if st else "none"))
    sys.stdout.flush()
    wait_for(hold)
    sock.close()
    os.close(rd)
    return 0


def wait_for(path):
    while path and not os.path.exists(path):
        time.sleep(0.05)


def make_until(most, make):
    made, err = [], 0
    while len(made) < most:
        try:
            made.append(make())
        except PyverbsRDMAError as ex:
            err = ex.error_code
            break
    return made, err


def objects(ibdev, nqp, ncq, nmr, hold, rate_kbps=None):
    ctx = Context(name=ibdev)
    pd = PD(ctx)
    cq = CQ(ctx, 16, None, None, 0)
    cap = QPCap(max_send_wr=4, max_recv_wr=4, max_send_sge=1, max_recv_sge=1)
    attr = QPInitAttr(qp_type=e.IBV_QPT_RC, scq=cq, rcq=cq, cap=cap)
    qps, qerr = make_until(nqp, lambda: QP(pd, attr))
    cqs, cerr = make_until(ncq, lambda: CQ(ctx, 4, None, None, 0))
    mrs, merr = make_until(nmr, lambda: MR(pd, 4096, e.IBV_ACCESS_LOCAL_WRITE))
    if rate_kbps is not None and qps:
        qa = QPAttr()
        qa.rate_limit = rate_kbps
        try:
            qps[0].modify(qa, e.IBV_QP_RATE_LIMIT)
        except PyverbsRDMAError as ex:
            print("rate limit %d kbps refused: errno %d" % (rate_kbps, ex.error_code))
            return 1
    print("qps %d errno %d, cqs %d errno %d, mrs %d errno %d" %
          (len(qps), qerr, len(cqs), cerr, len(mrs), merr))
    sys.stdout.flush()
    wait_for(hold)
    for o in qps + cqs + mrs:
        o.close()
    cq.close()
    pd.close()
    ctx.close()
    return 0


def contexts(ibdev, most):
    ctxs, err = make_until(most, lambda: Context(name=ibdev))
    print("opened %d errno %d" % (len(ctxs), err))
    for c in ctxs:
        c.close()
    return 0


def errno_of(call):
    try:
        call()
    except PyverbsRDMAError as ex:
        return ex.error_code
    return 0


def regmr(ibdev):
    ctx = Context(name=ibdev)
    pd = PD(ctx)
    err = errno_of(lambda: MR(pd, 4096, e.IBV_ACCESS_LOCAL_WRITE))
    print("reg_mr errno %d" % err)
    pd.close()
    ctx.close()
    return 0


def afterdeath(ibdev, path):
    ctx = Context(name=ibdev)
    ch = CompChannel(ctx)
    cq = CQ(ctx, 4, None, ch, 0)
    cq.req_notify()
    print("ready")
    sys.stdout.flush()
    wait_for(path)
    time.sleep(0.5)  # the provider's watcher notices the hang-up
    ev = errno_of(lambda: ch.get_cq_event(cq))
    poll = errno_of(lambda: cq.poll())
    notify = errno_of(lambda: cq.req_notify())
    pd = errno_of(lambda: PD(ctx))
    print("get_cq_event %d, poll_cq %d, req_notify_cq %d, alloc_pd %d" % (ev, poll, notify, pd))
    return 0


def main(argv):
    hold = None
    if "--hold" in argv:
        i = argv.index("--hold")
        hold = argv[i + 1]
        argv = argv[:i] + argv[i + 2:]
    rate = None
    if "--rate" in argv:
        i = argv.index("--rate")
        rate = int(argv[i + 1])
        argv = argv[:i] + argv[i + 2:]
    if len(argv) == 4 and argv[1] == "contexts":
        return contexts(argv[2], int(argv[3]))
    if len(argv) == 4 and argv[1] == "afterdeath":
        return afterdeath(argv[2], argv[3])
    if len(argv) == 6 and argv[1] == "sparse":
        return sparse(argv[2], argv[3], int(argv[4]), int(argv[5]), hold)
    if len(argv) == 6 and argv[1] == "objects":
        return objects(argv[2], int(argv[3]), int(argv[4]), int(argv[5]), hold, rate)
    if len(argv) == 5 and argv[1] == "fdlimit":
        return fdlimit(argv[2], argv[3], argv[4])
    if len(argv) in (7, 8) and argv[1] == "pairs":
        return pairs(argv[2], int(argv[3]), int(argv[4]), argv[5], argv[6],
                     int(argv[7]) if len(argv) == 8 else 0)
    if len(argv) in (7, 8) and argv[1] == "mrs":
        return mrs(argv[2], int(argv[3]), int(argv[4]), argv[5], argv[6],
                   int(argv[7]) if len(argv) == 8 else 0)
    if len(argv) == 5 and argv[1] == "rings":
        return rings(argv[2], int(argv[3]), int(argv[4]))
    if len(argv) == 6 and argv[1] == "statuses":
        return statuses(argv[2], int(argv[3]), float(argv[4]), argv[5])
    if len(argv) in (5, 6) and argv[1] == "flood":
        return flood(argv[2], int(argv[3]), int(argv[4]), argv[5] if len(argv) == 6 else None)
    if len(argv) == 3 and argv[1] == "regmr":
        return regmr(argv[2])
    if len(argv) == 3 and argv[1] == "open":
        return open_device(argv[2])
    if len(argv) == 5 and argv[1] == "channels":
        return channels(argv[2], int(argv[3]), int(argv[4]))
    sys.stderr.write(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
