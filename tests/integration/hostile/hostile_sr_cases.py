"""Selective-repeat conformance cases (issue 33; docs/lossy.md), run by
hostile_peer.py --cases hostile_sr_cases against a uroced whose device has
`lossy=on` (hostile.sh with HOSTILE_SR=1).

The raw peer plays a uroce peer with selective repeat on: it answers the
daemon's HELLO, sends SR opcodes (SRETH on every packet, the RETH on every
WRITE packet) out of order and checks the SACKs (SACKETH) it gets back, and
as the victim's responder it loses packets on purpose and checks that only
those are sent again, and that a lost tail is probed before the
retransmission timeout. Wire formats: datapath/wire/sr_eth.h,
sr_sack_eth.h, sr_hello.h. Each case also checks the victim's completions
and that no byte outside the case's target changed.
"""
import struct
import time

from hostile_peer import (ACK, MTU, NAK_REM_ACCESS, WC_SUCCESS, Conn, describe, expect,
                          flushed, reth, statuses)

SR_SACK, SR_HELLO, SR_BASE = 0xC3, 0xC4, 0xC8
SR_SEND_FIRST, SR_SEND_MIDDLE, SR_SEND_LAST = SR_BASE + 0x00, SR_BASE + 0x01, SR_BASE + 0x02
SR_WRITE_FIRST, SR_WRITE_MIDDLE = SR_BASE + 0x06, SR_BASE + 0x07
SR_WRITE_LAST, SR_WRITE_ONLY = SR_BASE + 0x08, SR_BASE + 0x0A
HELLO_VERSION, HELLO_ANSWER = 1, 0x01
SACK_DUP = 0x01
# The responder's window (kSrWindow) and receive completions it holds
# beyond the RQ head (64), as the daemon announces them; the peer
# announces the same (a window of 0 would decline).
WINDOW, HELD = 256, 64
# The AETH syndrome of an ACK with credits "none" (RC's and SR's).
ACK_NO_CREDITS = 0x1F
# Tail-loss probes before only the retransmission timeout is left
# (SrTx::kMaxProbes); at the 100 us floor, doubling, they take 25.5 ms.
MAX_PROBES = 8


def sreth(rsn, offset):
    return struct.pack("!II", rsn & 0xFFFFFF, offset)


def psn_add(p, n):
    return (p + n) & 0xFFFFFF


def rx_data(c, timeout=5.0):
    """The next packet from the victim's QP that is not a HELLO."""
    deadline = time.monotonic() + timeout
    while True:
        r = c.rx(max(0.0, deadline - time.monotonic()))
        if r is None or r["op"] != SR_HELLO:
            return r


def parse_sack(r):
    """A parsed SR_SACK (hostile_peer.parse keeps the AETH in body): the
    cumulative PSN, MSN, flags, trigger PSN, window and the held PSNs."""
    b = r["body"]
    syn, m1, m2 = struct.unpack_from("!BBH", b, 0)
    flags, t1, t2, window, ce = struct.unpack_from("!BBHHh", b, 4)
    bitmap = b[12:44]
    held = [psn_add(r["psn"], 1 + i) for i in range(256) if bitmap[i // 8] & (0x80 >> (i % 8))]
    return {"psn": r["psn"], "syn": syn, "msn": (m1 << 16) | m2, "flags": flags,
            "trigger": (t1 << 16) | t2, "window": window, "ce": ce, "held": held}


def sack_text(k):
    return (f"SACK psn {k['psn']} msn {k['msn']} trigger {k['trigger']} held {k['held']}"
            + (" DUP" if k["flags"] & SACK_DUP else ""))


def expect_sack(c, psn, msn, trigger, held, dup=False):
    r = rx_data(c)
    expect(r is not None and r["op"] == SR_SACK, f"wanted an SR_SACK, got {describe(r)}")
    k = parse_sack(r)
    expect(k["syn"] == ACK_NO_CREDITS and k["psn"] == psn and k["msn"] == msn
           and k["trigger"] == trigger and k["held"] == held and k["window"] == WINDOW
           and k["ce"] == 0 and k["flags"] == (SACK_DUP if dup else 0),
           f"wanted SACK syndrome 0x1f psn {psn} msn {msn} trigger {trigger} held {held} window "
           f"{WINDOW}{' DUP' if dup else ''}, got syndrome 0x{k['syn']:02x} window {k['window']} "
           f"CE offset {k['ce']} flags {k['flags']}: {sack_text(k)}")
    return sack_text(k)


def handshake(s, **conn):
    """A connection whose victim QP saw this peer's HELLO: the daemon's probe
    arrives at the victim's RTR and is answered as a uroce peer answers it;
    returns once the victim's QP shows the peer as selective-repeat
    (sr_peer), so that a WR posted next is sent with SR opcodes."""
    c = Conn(s, **conn)
    r = c.rx()
    expect(r is not None and r["op"] == SR_HELLO, f"wanted the daemon's HELLO, got {describe(r)}")
    version, flags, window, held = struct.unpack_from("!BBHH", r["body"], 0)
    expect(r["psn"] == 0 and version == HELLO_VERSION and flags == 0 and window == WINDOW
           and held == HELD,
           f"HELLO psn {r['psn']} version {version} flags {flags} window {window} held {held}")
    c.tx(SR_HELLO, struct.pack("!BBHHH", HELLO_VERSION, HELLO_ANSWER, WINDOW, HELD, 0), psn=0,
         ackreq=False)
    deadline = time.monotonic() + 5
    while not s.qp_status(c.vqpn).get("sr_peer"):
        expect(time.monotonic() < deadline, "the victim's QP never took the HELLO answer")
        time.sleep(0.01)
    return c


def handshake_case(s):
    def body():
        c = handshake(s)
        wcs = c.finish()
        expect(statuses(wcs) == flushed(2), f"victim completions {statuses(wcs)}")
        return f"HELLO probe at RTR: version 1, window {WINDOW}, {HELD} held; the answer taken"
    s.run("HELLO at RTR", "the daemon probes the peer QP: HELLO version 1, not an answer, PSN 0, "
          f"window {WINDOW}, {HELD} receive messages held; the peer's answer makes it sr_peer",
          body)


def write_reorder_case(s, start=None):
    """start: the peer's first PSN (None: the suite's; 0xFFFFFE: the SACK
    bitmap and the window cross the 24-bit wrap)."""
    rw = s.reg("rw")
    data = bytes((i * 7 + 3) & 0xFF for i in range(4 * MTU))

    def pkt(c, op, i, ackreq=True):
        c.tx(op, reth(rw["addr"], rw["key"], len(data)) + sreth(0, i * MTU)
             + data[i * MTU:(i + 1) * MTU], psn=psn_add(c.psn, i), ackreq=ackreq)

    def body():
        c = handshake(s, psn=start)
        p, prev = c.psn, psn_add(c.psn, -1)
        seen = []
        pkt(c, SR_WRITE_MIDDLE, 2)
        seen.append(expect_sack(c, prev, 0, psn_add(p, 2), [psn_add(p, 2)]))
        pkt(c, SR_WRITE_LAST, 3)
        seen.append(expect_sack(c, prev, 0, psn_add(p, 3), [psn_add(p, 2), psn_add(p, 3)]))
        pkt(c, SR_WRITE_LAST, 3)
        seen.append(expect_sack(c, prev, 0, psn_add(p, 3), [psn_add(p, 2), psn_add(p, 3)],
                                dup=True))
        pkt(c, SR_WRITE_FIRST, 0)
        seen.append(expect_sack(c, p, 0, p, [psn_add(p, 2), psn_add(p, 3)]))
        pkt(c, SR_WRITE_MIDDLE, 1)
        seen.append(c.expect_ack(psn_add(p, 3), 1))
        s.put("rw", 0, data)
        sr = s.qp_status(c.vqpn)["sr"]
        expect(sr.get("sr_rx_held") == 2 and sr.get("sr_rx_dup") == 1,
               f"QP sr_rx_held {sr.get('sr_rx_held')}, sr_rx_dup {sr.get('sr_rx_dup')}")
        c.psn = psn_add(p, 4)
        wcs = c.finish()
        expect(statuses(wcs) == flushed(2), f"victim completions {statuses(wcs)}")
        return "; ".join(seen) + "; 4 KiB placed; sr_rx_held 2, sr_rx_dup 1"
    where = "" if start is None else f" from PSN 0x{start:06x} (across the wrap)"
    s.run(f"SR WRITE of 4 packets in the order 2, 3, 3 again, 0, 1{where}",
          "a SACK for each out-of-order packet naming what is held (the duplicate with DUP), "
          "then RC's ACK once nothing is held; every byte placed, none outside the target",
          body)


def unplaced_case(s):
    rw = s.reg("rw")
    good = bytes(range(0x40, 0x50))

    def body():
        c = handshake(s)
        p = c.psn
        # PSN p+1 first, with an R_Key the QP does not have: dropped unheld.
        # With nothing held the answer is RC's ACK of what it has (not a
        # sequence NAK, which would ask for everything from p again).
        c.tx(SR_WRITE_ONLY, reth(rw["addr"] + 64, rw["key"] ^ 0x5A5A00, 16) + sreth(0, 0)
             + bytes(16), psn=psn_add(p, 1))
        first = c.expect_ack(psn_add(p, -1), 0)
        c.tx(SR_WRITE_ONLY, reth(rw["addr"], rw["key"], 16) + sreth(0, 0) + good, psn=p)
        second = c.expect_ack(p, 1)
        s.put("rw", 0, good)
        # In order now: RC's checks NAK it (remote access), in PSN order.
        c.tx(SR_WRITE_ONLY, reth(rw["addr"] + 64, rw["key"] ^ 0x5A5A00, 16) + sreth(0, 0)
             + bytes(16), psn=psn_add(p, 1))
        third = c.expect_nak(NAK_REM_ACCESS, psn_add(p, 1), 1)
        sr = s.qp_status(c.vqpn)["sr"]
        expect(sr.get("sr_drop_unplaced") == 1 and sr.get("sr_rx_held") == 0,
               f"QP sr_drop_unplaced {sr.get('sr_drop_unplaced')}, sr_rx_held "
               f"{sr.get('sr_rx_held')}")
        wcs = c.finish()
        expect(statuses(wcs) == flushed(2), f"victim completions {statuses(wcs)}")
        return f"{first}; {second}; {third}; sr_drop_unplaced 1"
    s.run("SR WRITE with a foreign R_Key ahead of the expected PSN",
          "dropped unheld, answered by an ACK of the PSN before it, memory untouched; once in "
          "order NAK remote access error at its PSN, as RC", body)


def victim_send(s, c, nbytes):
    """The victim SENDs nbytes from region "local"; returns its SR packets
    (opcode, PSN, SRETH offset), checked against the message's shape."""
    s.victim.call(f"send {c.id} 5 local 0 {nbytes}")
    want = (nbytes + MTU - 1) // MTU
    got = []
    for i in range(want):
        r = rx_data(c)
        expect(r is not None, f"packet {i} of the victim's SEND never came")
        op = SR_SEND_FIRST if i == 0 else SR_SEND_LAST if i == want - 1 else SR_SEND_MIDDLE
        rsn, off = struct.unpack_from("!II", r["body"], 0)
        expect(r["op"] == op and r["psn"] == psn_add(c.vpsn, i) and rsn & 0xFFFFFF == 0
               and off == i * MTU,
               f"packet {i}: wanted opcode 0x{op:02x} psn {psn_add(c.vpsn, i)} RSN 0 offset "
               f"{i * MTU}, got {describe(r)} RSN {rsn & 0xFFFFFF} offset {off}")
        got.append(r)
    return got


def sack_to_victim(c, cum, held, trigger):
    bm = bytearray(32)
    for q in held:
        i = (q - cum - 1) & 0xFFFFFF
        bm[i // 8] |= 0x80 >> (i % 8)
    c.tx(SR_SACK, struct.pack("!BBH", ACK_NO_CREDITS, 0, 0)
         + struct.pack("!BBHHh", 0, trigger >> 16, trigger & 0xFFFF, WINDOW, 0) + bytes(bm),
         psn=cum, ackreq=False)


def ack_to_victim(c, psn, msn):
    """RC's ACK of everything up to `psn` (MSN `msn`, credits none)."""
    c.tx(ACK, struct.pack("!BBH", ACK_NO_CREDITS, msn >> 16, msn & 0xFFFF), psn=psn, ackreq=False)


def tail_probes(s, c, v, last):
    """Lets the victim's tail-loss probes of PSN `last` run out (nothing is
    answered): every packet seen is a copy of it, exactly MAX_PROBES of
    them, long before the 4.3 s timeout; returns how many."""
    n = 0
    while (r := rx_data(c, 1.0)) is not None:
        expect(r["op"] == SR_SEND_LAST and r["psn"] == last,
               f"while probing: wanted SR_SEND_LAST psn {last}, got {describe(r)}")
        n += 1
    st = s.qp_status(c.vqpn)
    expect(n == MAX_PROBES and st["sr"].get("sr_tx_probes") == MAX_PROBES
           and st["transport"]["timeouts"] == 0,
           f"{n} copies of psn {last} seen, sr_tx_probes {st['sr'].get('sr_tx_probes')}, "
           f"timeouts {st['transport']['timeouts']}; wanted {MAX_PROBES}, {MAX_PROBES}, 0")
    return n


def resend_case(s):
    def body():
        c = handshake(s)
        v = c.vpsn
        victim_send(s, c, 4 * MTU)
        probes = tail_probes(s, c, v, psn_add(v, 3))
        # PSN v+1 "lost": v acknowledged, v+2 and v+3 held. From here only
        # v+1 may go again.
        sack_to_victim(c, v, [psn_add(v, 2), psn_add(v, 3)], psn_add(v, 3))
        r = rx_data(c)
        expect(r is not None and r["op"] == SR_SEND_MIDDLE and r["psn"] == psn_add(v, 1),
               f"wanted SR_SEND_MIDDLE psn {psn_add(v, 1)} again, got {describe(r)}")
        ack_to_victim(c, psn_add(v, 3), 1)
        wcs = s.victim.call(f"poll {c.id} 1 5000")["wc"]
        expect(statuses(wcs) == [(5, WC_SUCCESS)], f"victim SEND completed {statuses(wcs)}")
        # The daemon's count first, then the copies still on their way (a
        # probe of the hole before the ACK arrived: v+1 too).
        ctr = s.qp_status(c.vqpn)["transport"]
        resent = 1
        deadline = time.monotonic() + 5
        while probes + resent < ctr["tx_retransmits"] and time.monotonic() < deadline:
            r = rx_data(c, max(0.0, deadline - time.monotonic()))
            expect(r is not None, "a retransmission the daemon counted never came")
            expect(r["psn"] == psn_add(v, 1), f"also sent again: {describe(r)}")
            resent += 1
        expect(ctr["tx_retransmits"] == probes + resent and ctr["timeouts"] == 0,
               f"tx_retransmits {ctr['tx_retransmits']} (seen {probes} + {resent}), timeouts "
               f"{ctr['timeouts']}")
        wcs = c.finish()
        expect(statuses(wcs) == flushed(2), f"victim completions {statuses(wcs)}")
        return (f"{probes} tail probes of PSN {psn_add(v, 3)}; after the SACK only PSN "
                f"{psn_add(v, 1)} sent again ({resent} time(s)); SUCCESS; no timeout")
    s.run("SACK to the victim's 4-packet SEND holding the last two, the second missing",
          f"first {MAX_PROBES} tail-loss probes of the last packet (nothing answered); after the "
          "SACK only the missing packet is sent again, no timeout; the SEND completes SUCCESS",
          body)


def tail_probe_case(s):
    def body():
        c = handshake(s)
        v = c.vpsn
        pkts = victim_send(s, c, 4 * MTU)
        probes = tail_probes(s, c, v, psn_add(v, 3))
        ack_to_victim(c, psn_add(v, 3), 1)
        wcs = s.victim.call(f"poll {c.id} 1 5000")["wc"]
        expect(statuses(wcs) == [(5, WC_SUCCESS)], f"victim SEND completed {statuses(wcs)}")
        wcs = c.finish()
        expect(statuses(wcs) == flushed(2), f"victim completions {statuses(wcs)}")
        return (f"{len(pkts)} packets unanswered; {probes} probes of the last one, then silence "
                "(timeouts 0); SUCCESS once ACKed")
    s.run("the victim's 4-packet SEND left unanswered (a lost tail)",
          f"exactly {MAX_PROBES} tail-loss probes of the last packet, each waiting twice as long, "
          "then nothing until the retransmission timeout (raised to 4.3 s by min_ack_timeout); "
          "the SEND completes SUCCESS once ACKed", body)


def all_cases(s):
    handshake_case(s)
    write_reorder_case(s)
    write_reorder_case(s, start=0xFFFFFE)
    unplaced_case(s)
    resend_case(s)
    tail_probe_case(s)
