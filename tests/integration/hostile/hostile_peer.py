#!/usr/bin/python3
"""hostile_peer.py: a raw RoCEv2 peer that attacks a real uroced (docs/security.md).

It speaks RoCEv2 by hand over an AF_PACKET socket on one end of a veth pair
whose other end is the daemon's af_packet port: Ethernet, IPv4, UDP 4791,
BTH and the extended headers, the ICRC (IBTA Vol1 Annex A17.3.3: CRC-32 over
a masked copy of the IPv4/UDP/IB headers and the payload), and answers ARP
for its own address. hostile_victim (run through uroce-run) owns the memory
under attack: it brings one RC QP per case to RTS against this peer, posts
receives, and reports its completions and every byte of its buffers (guard |
target | guard).

Each case asserts three things: the exact response on the wire (ACK/NAK
syndrome, PSN and MSN, or silence, proven by a probe sent after the attack
whose ACK arrives first), the exact completions on the victim's side, and
that no byte changed except those the case allows (a model of every buffer,
compared with a dump of each after every case). Silently dropped frames must
also show in the daemon's counters.

  hostile_peer.py --iface IF --ip A.B.C.D --dev-mac MAC --dev-ip A.B.C.D
                  --ctl 'UROCE-CTL ARGS' --results FILE -- VICTIM-COMMAND...
Prints one line per case and exits 1 when any case failed.
"""
import argparse
import json
import queue
import shlex
import socket
import struct
import subprocess
import sys
import threading
import time
import zlib

ETH_P_ALL, ETH_P_IP, ETH_P_ARP = 0x0003, 0x0800, 0x0806
ROCE_PORT = 4791

# RC opcodes (IBTA Vol1 9.2, Table 38; FLUSH and ATOMIC_WRITE: the 2021
# memory placement extensions, as Linux rxe implements them).
SEND_FIRST, SEND_MIDDLE, SEND_LAST, SEND_ONLY = 0x00, 0x01, 0x02, 0x04
WRITE_FIRST, WRITE_MIDDLE, WRITE_LAST, WRITE_ONLY = 0x06, 0x07, 0x08, 0x0A
READ_REQUEST = 0x0C
READ_RESP_FIRST, READ_RESP_MIDDLE, READ_RESP_LAST, READ_RESP_ONLY = 0x0D, 0x0E, 0x0F, 0x10
ACK, ATOMIC_ACK, CMP_SWAP, FETCH_ADD = 0x11, 0x12, 0x13, 0x14
SEND_ONLY_INV = 0x17
FLUSH, ATOMIC_WRITE = 0x1C, 0x1D
UD_SEND_ONLY = 0x64
# UC opcodes (IBTA Vol1 9.2, Table 38: prefix 001).
UC_SEND_ONLY = 0x24
UC_WRITE_FIRST, UC_WRITE_MIDDLE, UC_WRITE_LAST, UC_WRITE_ONLY = 0x26, 0x27, 0x28, 0x2A
# The Q_Key of the victim's UD QPs (hostile_victim.cpp kQkey).
VICTIM_QKEY = 0x2A2A2A2A

NAK_PSN_SEQ, NAK_INV_REQ, NAK_REM_ACCESS, NAK_REM_OP = 0x60, 0x61, 0x62, 0x63

# ibv_wc_status values.
WC_SUCCESS, WC_LOC_LEN_ERR, WC_WR_FLUSH_ERR = 0, 1, 5
WC_REM_INV_REQ_ERR, WC_REM_ACCESS_ERR, WC_REM_OP_ERR, WC_RETRY_EXC_ERR = 9, 10, 11, 12
# ibv_access_flags.
LOCAL_WRITE, REMOTE_WRITE, REMOTE_READ, REMOTE_ATOMIC = 1, 2, 4, 8
ALL = LOCAL_WRITE | REMOTE_WRITE | REMOTE_READ | REMOTE_ATOMIC

MTU = 1024
RESPONSE_TIMEOUT = 5.0


def csum16(b):
    if len(b) % 2:
        b += b"\0"
    s = sum(struct.unpack("!%dH" % (len(b) // 2), b))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return (~s) & 0xFFFF


def icrc(ip_to_payload):
    """The RoCEv2 ICRC of an IPv4 packet (without its ICRC): masked fields as 1s."""
    b = bytearray(ip_to_payload)
    ihl = (b[0] & 0xF) * 4
    b[1] = 0xFF                      # TOS
    b[8] = 0xFF                      # TTL
    b[10:12] = b"\xff\xff"           # header checksum
    b[ihl + 6:ihl + 8] = b"\xff\xff"  # UDP checksum
    b[ihl + 8 + 4] = 0xFF            # BTH resv8a
    return zlib.crc32(b"\xff" * 8 + bytes(b)) & 0xFFFFFFFF


def bth(opcode, dqpn, psn, ackreq=True, pad=0, pkey=0xFFFF):
    return struct.pack("!BBHII", opcode, pad << 4, pkey, dqpn & 0xFFFFFF,
                       (0x80000000 if ackreq else 0) | (psn & 0xFFFFFF))


def reth(va, rkey, length):
    return struct.pack("!QII", va & (2**64 - 1), rkey, length)


def deth(qkey, src_qpn):
    return struct.pack("!II", qkey & 0xFFFFFFFF, src_qpn & 0xFFFFFF)


def atomic_eth(va, rkey, swap_add, compare=0):
    return struct.pack("!QIQQ", va, rkey, swap_add, compare)


class Wire:
    """An AF_PACKET endpoint with its own MAC/IPv4 on one interface."""

    def __init__(self, ifname, ip, dev_mac, dev_ip):
        self.ip = socket.inet_aton(ip)
        self.dev_ip = socket.inet_aton(dev_ip)
        self.dev_mac = bytes.fromhex(dev_mac.replace(":", ""))
        with open(f"/sys/class/net/{ifname}/address") as f:
            self.mac = bytes.fromhex(f.read().strip().replace(":", ""))
        self.s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
        self.s.bind((ifname, 0))
        self.queues = {}
        self.lock = threading.Lock()
        self.bad_icrc = 0
        self.ipid = 1
        threading.Thread(target=self._rx, daemon=True).start()

    def queue_for(self, qpn):
        with self.lock:
            return self.queues.setdefault(qpn, queue.Queue())

    def _rx(self):
        while True:
            fr, addr = self.s.recvfrom(65535)
            if addr[2] == socket.PACKET_OUTGOING or len(fr) < 42:
                continue
            et = struct.unpack_from("!H", fr, 12)[0]
            if et == ETH_P_ARP:
                op = struct.unpack_from("!H", fr, 20)[0]
                sha, spa, tpa = fr[22:28], fr[28:32], fr[38:42]
                if op == 1 and tpa == self.ip:
                    self.s.send(sha + self.mac + struct.pack("!HHHBBH", ETH_P_ARP, 1, ETH_P_IP, 6, 4, 2)
                                + self.mac + self.ip + sha + spa)
                continue
            if et != ETH_P_IP or fr[0:6] != self.mac:
                continue
            ip = fr[14:]
            ihl = (ip[0] & 0xF) * 4
            ip = ip[:struct.unpack_from("!H", ip, 2)[0]]
            if ip[9] != 17 or struct.unpack_from("!H", ip, ihl + 2)[0] != ROCE_PORT:
                continue
            if icrc(ip[:-4]) != struct.unpack_from("<I", ip, len(ip) - 4)[0]:
                self.bad_icrc += 1
                continue
            ib = ip[ihl + 8:-4]
            self.queue_for(struct.unpack_from("!I", ib, 4)[0] & 0xFFFFFF).put(ib)

    def ip_packet(self, ib, icrc_xor=0, src=None):
        """IPv4/UDP/IB packet with its ICRC (xor icrc_xor: a corrupt one), from
        this peer's address or `src` (a spoofed one)."""
        udp_len = 8 + len(ib) + 4
        self.ipid = (self.ipid + 1) & 0xFFFF
        iph = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + udp_len, self.ipid, 0x4000, 64, 17, 0,
                          socket.inet_aton(src) if src else self.ip, self.dev_ip)
        iph = iph[:10] + struct.pack("!H", csum16(iph)) + iph[12:]
        pkt = iph + struct.pack("!HHHH", 0xC000, ROCE_PORT, udp_len, 0) + ib
        return pkt + struct.pack("<I", icrc(pkt) ^ icrc_xor)

    def send_ip(self, pkt):
        self.s.send(self.dev_mac + self.mac + struct.pack("!H", ETH_P_IP) + pkt)

    def send(self, ib, icrc_xor=0, src=None):
        self.send_ip(self.ip_packet(ib, icrc_xor, src))


class Victim:
    """hostile_victim driven over its stdin/stdout."""

    def __init__(self, cmd, mode, tcp=None):
        """Runs `cmd`, or (tcp = (host, port)) talks to a victim served on a TCP port."""
        if tcp is None:
            self.p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                      text=True)
            self.w, self.r = self.p.stdin, self.p.stdout
        else:
            self.p = None
            deadline = time.monotonic() + 120
            while True:   # the server may not listen yet (a guest still starting it)
                try:
                    self.sock = socket.create_connection(tcp, timeout=60)
                    break
                except OSError:
                    if time.monotonic() > deadline:
                        raise
                    time.sleep(0.2)
            self.w = self.sock.makefile("w")
            self.r = self.sock.makefile("r")
        self.call("setup " + mode)
        self.info = self.call("info")
        self.regions = self.info["regions"]
        self.gid_hex = self.info["gid"]

    def call(self, line):
        self.w.write(line + "\n")
        self.w.flush()
        out = self.r.readline()
        if not out:
            rc = self.p.wait() if self.p else "unknown"
            raise RuntimeError(f"victim exited (rc {rc}) on: {line}")
        r = json.loads(out)
        if not r.get("ok"):
            raise RuntimeError(f"victim: {line}: {r.get('error')}")
        return r

    def dump(self, name):
        return bytearray.fromhex(self.call("dump " + name)["hex"])

    def close(self):
        self.w.write("quit\n")
        self.w.flush()
        if self.p is None:
            return 0 if self.r.readline() == "" else 1
        return self.p.wait(timeout=10)


class CaseFailed(Exception):
    pass


def expect(cond, what):
    if not cond:
        raise CaseFailed(what)


def parse(ib):
    op, _, _, dqpn, apsn = struct.unpack_from("!BBHII", ib, 0)
    r = {"op": op, "psn": apsn & 0xFFFFFF, "body": ib[12:]}
    if op in (ACK, ATOMIC_ACK, READ_RESP_FIRST, READ_RESP_LAST, READ_RESP_ONLY):
        syn, m1, m2 = struct.unpack_from("!BBH", ib, 12)
        r["syn"], r["msn"] = syn, (m1 << 16) | m2
        r["body"] = ib[16:]
    if op == ATOMIC_ACK:
        r["orig"] = struct.unpack_from("!Q", ib, 16)[0]
    pad = (ib[1] >> 4) & 3
    if pad:
        r["body"] = r["body"][:-pad]
    return r


def describe(r):
    if r is None:
        return "silence"
    if r["op"] == ACK:
        kind = "ACK" if r["syn"] >> 5 == 0 else "NAK 0x%02x" % r["syn"]
        return f"{kind} psn {r['psn']} msn {r['msn']}"
    return "opcode 0x%02x psn %d" % (r["op"], r["psn"])


class Conn:
    """One connection: this peer's QP (a number only) and a victim QP (RC, UC or UD)."""

    def __init__(self, suite, victim=None, pd="pd1", access=ALL, nrecv=2, recv_len=256, kind="rc",
                 psn=None):
        self.s, self.v = suite, victim or suite.victim
        self.qpn = suite.next_qpn()
        # The next PSN this peer sends (`psn`: a chosen start, e.g. near the wrap).
        self.psn = (self.qpn * 7919) & 0xFFFFFF if psn is None else psn & 0xFFFFFF
        r = self.v.call(f"qp {pd} {access} {self.qpn} {self.psn} {suite.gid_hex} {nrecv} {recv_len}"
                        f" {kind}")
        self.id, self.vqpn, self.vpsn = r["id"], r["qpn"], r["psn"]
        self.q = suite.wire.queue_for(self.qpn)
        self.nrecv = nrecv

    def tx(self, opcode, rest=b"", psn=None, ackreq=True, icrc_xor=0, pkey=0xFFFF, src=None):
        """Sends BTH(opcode, psn) + rest (padded to 4 bytes); returns the PSN used."""
        psn = self.psn if psn is None else psn
        pad = (-len(rest)) % 4
        self.s.wire.send(bth(opcode, self.vqpn, psn, ackreq, pad, pkey) + rest + b"\0" * pad,
                         icrc_xor, src)
        return psn

    def counters(self):
        """The victim QP's transport counters (uroce-ctl qps --json)."""
        return self.s.qp_counters(self.vqpn)

    def rx(self, timeout=RESPONSE_TIMEOUT):
        try:
            return parse(self.q.get(timeout=timeout))
        except queue.Empty:
            return None

    def write(self, rkey, va, data, **kw):
        return self.tx(WRITE_ONLY, reth(va, rkey, len(data)) + data, **kw)

    def read(self, rkey, va, length, **kw):
        return self.tx(READ_REQUEST, reth(va, rkey, length), **kw)

    def atomic(self, op, rkey, va, swap_add, compare=0, **kw):
        return self.tx(op, atomic_eth(va, rkey, swap_add, compare), **kw)

    def expect_nak(self, syn, psn, msn):
        r = self.rx()
        expect(r is not None and r["op"] == ACK and r["syn"] == syn and r["psn"] == psn
               and r["msn"] == msn,
               f"wanted NAK 0x{syn:02x} psn {psn} msn {msn}, got {describe(r)}")
        return f"NAK 0x{syn:02x} psn {psn} msn {msn}"

    def expect_ack(self, psn, msn):
        r = self.rx()
        expect(r is not None and r["op"] == ACK and r["syn"] >> 5 == 0 and r["psn"] == psn
               and r["msn"] == msn, f"wanted ACK psn {psn} msn {msn}, got {describe(r)}")
        return f"ACK psn {psn} msn {msn}"

    def probe(self, msn):
        """A zero-length WRITE at the expected PSN: its ACK is the next response
        only if nothing before it was answered or executed (silence, proven)."""
        psn = self.write(0, 0, b"")
        got = self.expect_ack(psn, msn)
        self.psn = (psn + 1) & 0xFFFFFF
        return got

    def finish(self):
        r = self.v.call(f"finish {self.id}")
        expect(r["not_completed"] == 0, f"{r['not_completed']} WRs never completed")
        return r["wc"]


def statuses(wcs):
    return [(w["wr_id"], w["status"]) for w in wcs]


def flushed(n, first=1000):
    return [(first + i, WC_WR_FLUSH_ERR) for i in range(n)]


class Suite:
    def __init__(self, a):
        self.wire = Wire(a.iface, a.ip, a.dev_mac, a.dev_ip)
        self.gid_hex = (b"\0" * 10 + b"\xff\xff" + socket.inet_aton(a.ip)).hex()
        # Another address on the peer's subnet, for frames that must not pass
        # a connected QP's source check.
        self.spoof_ip = socket.inet_ntoa(socket.inet_aton(a.ip)[:3]
                                         + bytes([socket.inet_aton(a.ip)[3] ^ 1]))
        # No --ctl: the responder is not uroce (hostile_rxe.sh); counters are not checked.
        self.ctl = shlex.split(a.ctl)
        tcp = [(h, int(p)) for h, p in (x.rsplit(":", 1) for x in a.victim_tcp.split(","))] \
            if a.victim_tcp else [None, None]
        self.victim = Victim(a.victim, "main", tcp[0])
        self.tenant = Victim(a.victim, "tenant", tcp[1])
        self._qpn = 0x000100
        self.results = []
        self.model = {}
        for v in (self.victim, self.tenant):
            for name in v.regions:
                self.model[(v, name)] = v.dump(name)
        self.allow = {}

    def next_qpn(self):
        self._qpn += 1
        return self._qpn

    def reg(self, name, v=None):
        return (v or self.victim).regions[name]

    def put(self, name, off, data, v=None):
        """The model: DATA now lives at target offset OFF of region NAME."""
        g = self.reg(name, v)["guard"]
        self.model[(v or self.victim, name)][g + off:g + off + len(data)] = data

    def get(self, name, off, n, v=None):
        g = self.reg(name, v)["guard"]
        return bytes(self.model[(v or self.victim, name)][g + off:g + off + n])

    def dont_care(self, name, off, n, v=None):
        """Bytes the case may leave in any state (a receive buffer that failed)."""
        self.allow.setdefault((v or self.victim, name), []).append((off, n))

    def check_memory(self):
        bad = []
        for (v, name), want in self.model.items():
            got = v.dump(name)
            g = v.regions[name]["guard"]
            for off, n in self.allow.get((v, name), []):
                want[g + off:g + off + n] = got[g + off:g + off + n]
            if got != want:
                diff = [i for i in range(len(got)) if got[i] != want[i]]
                where = "guard" if diff[0] < g or diff[0] >= g + v.regions[name]["len"] else "target"
                bad.append(f"{name}: {len(diff)} bytes changed, first at buffer offset {diff[0]} ({where})")
            # The next case is judged on its own changes only.
            self.model[(v, name)] = got
        self.allow = {}
        expect(not bad, "; ".join(bad))

    def qp_status(self, qpn):
        """The victim QP's object in uroce-ctl qps --json (transport counters,
        and for RC sr_peer and the selective-repeat counters sr)."""
        out = subprocess.run(self.ctl + ["qps", "--json"], check=True, capture_output=True,
                             text=True).stdout
        found = []

        def walk(x):
            if isinstance(x, dict):
                if x.get("qpn") == qpn and isinstance(x.get("transport"), dict):
                    found.append(x)
                for val in x.values():
                    walk(val)
            elif isinstance(x, list):
                for val in x:
                    walk(val)
        walk(json.loads(out))
        expect(len(found) == 1, f"QP {qpn} appears {len(found)} times in uroce-ctl qps")
        return found[0]

    def qp_counters(self, qpn):
        if not self.ctl:
            return None
        return self.qp_status(qpn)["transport"]

    def counters(self):
        if not self.ctl:
            return None
        out = subprocess.run(self.ctl + ["counters", "--json"], check=True, capture_output=True,
                             text=True).stdout
        flat = {}

        def walk(x, path):
            if isinstance(x, dict):
                for k, val in x.items():
                    walk(val, f"{path}.{k}" if path else k)
            elif isinstance(x, list):
                for i, val in enumerate(x):
                    walk(val, f"{path}[{i}]")
            elif isinstance(x, (int, float)) and not isinstance(x, bool):
                flat[path] = x
        walk(json.loads(out), "")
        return flat

    def run(self, name, expected, fn):
        try:
            observed, ok = fn(), True
        except CaseFailed as e:
            observed, ok = f"FAILED: {e}", False
        except Exception as e:   # the victim died or refused a verb: a failure too
            observed, ok = f"FAILED: {type(e).__name__}: {e}", False
        try:
            # Also after a failure: the model follows the memory, so that the
            # next case is judged on its own changes.
            self.check_memory()
        except CaseFailed as e:
            observed = (observed + "; " if not ok else "FAILED: ") + str(e)
            ok = False
        except Exception as e:
            observed, ok = f"FAILED: {type(e).__name__}: {e}", False
        self.results.append({"case": name, "expected": expected, "observed": observed, "ok": ok})
        print(f"{'ok' if ok else 'FAILED'}: {name}: expected {expected}; observed {observed}",
              flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--iface", required=True)
    ap.add_argument("--ip", required=True)
    ap.add_argument("--dev-mac", required=True)
    ap.add_argument("--dev-ip", required=True)
    ap.add_argument("--ctl", default="", help="uroce-ctl and its arguments (none: not uroce)")
    ap.add_argument("--victim-tcp", default="",
                    help="HOST:PORT,HOST:PORT of the main and the tenant victim, served elsewhere")
    ap.add_argument("--results", required=True)
    ap.add_argument("--only", default="", help="run only cases whose name contains this")
    ap.add_argument("--cases", default="hostile_cases",
                    help="the module of cases (hostile_sr_cases: a device with lossy=on)")
    ap.add_argument("victim", nargs="*")
    a = ap.parse_args()
    # hostile_cases imports this module by name: let it find this instance
    # (the one whose CaseFailed Suite.run catches), not load a second one.
    sys.modules.setdefault("hostile_peer", sys.modules[__name__])
    import importlib
    cases = importlib.import_module(a.cases)
    s = Suite(a)
    if a.only:
        run = s.run
        s.run = lambda name, exp, fn: run(name, exp, fn) if a.only in name else None
    cases.all_cases(s)
    expect_ok = s.wire.bad_icrc == 0
    for v in (s.victim, s.tenant):
        if v.close() != 0:
            expect_ok = False
    with open(a.results, "w") as f:
        json.dump(s.results, f, indent=1)
    failed = [r["case"] for r in s.results if not r["ok"]]
    print(f"{len(s.results) - len(failed)} of {len(s.results)} cases as expected; "
          f"{s.wire.bad_icrc} frames from the daemon with a bad ICRC", flush=True)
    return 0 if not failed and expect_ok else 1


if __name__ == "__main__":
    sys.exit(main())
