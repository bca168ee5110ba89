"""The UD and UC cases of the hostile-peer suite (hostile_cases.all_cases runs them).

Neither transport answers on the wire, so silence cannot be proven by a
probe's ACK as for RC. Instead each case ends with a frame that must get
through on the same QP after the attack (a UD SEND, or a UC WRITE and SEND),
and the victim's completions show that the attack took no receive and that
the good frame did: the victim QP processes its frames in order, so once the
good frame's completion is there, the attack has been judged. Every drop
must show in the QP's counters (uroce-ctl qps: transport.rx by reason).
"""
import struct

from hostile_peer import (CMP_SWAP, LOCAL_WRITE, REMOTE_WRITE, READ_REQUEST, SEND_ONLY,
                          UC_SEND_ONLY, UC_WRITE_FIRST, UC_WRITE_LAST, UC_WRITE_MIDDLE,
                          UC_WRITE_ONLY, UD_SEND_ONLY, VICTIM_QKEY, WC_LOC_LEN_ERR, WC_SUCCESS,
                          WC_WR_FLUSH_ERR, Conn, atomic_eth, deth, expect, reth, statuses)

RECV_LEN = 256
GRH = 40
UC_ACCESS = LOCAL_WRITE | REMOTE_WRITE


def rx_counter(c, reason):
    """The victim QP's count of received frames of `reason` (None: not uroce)."""
    ctr = c.counters()
    return None if ctr is None else ctr.get("rx", {}).get(reason, 0)


def expect_counter(c, reason, want):
    got = rx_counter(c, reason)
    if got is None:
        return ""
    expect(got == want, f"QP counter rx.{reason} = {got}, wanted {want}")
    return f" (rx.{reason} {got})"


def no_response(c):
    """Nothing came back on the wire (UC and UD answer nothing). Checked once
    the good frame after the attack has completed, so any answer to the
    attack would have been sent by then."""
    r = c.rx(timeout=0.1)
    expect(r is None, f"the victim answered on the wire: opcode 0x{r['op']:02x}" if r else "")


def wait_wcs(c, n, what):
    wcs = c.v.call(f"poll {c.id} {n} 5000")["wc"]
    expect(len(wcs) == n, f"{what}: {len(wcs)} completions in 5 s, wanted {n}")
    return wcs


# ---- UD ---------------------------------------------------------------------

def ud_send(c, payload, qkey=VICTIM_QKEY, op=UD_SEND_ONLY, **kw):
    return c.tx(op, deth(qkey, c.qpn) + payload, ackreq=False, **kw)


def ud_delivered(s, c, wr_id, payload, what):
    """A good UD SEND lands in receive `wr_id`: its completion, then the GRH
    (20 zero bytes and the IPv4 header as sent) and the payload in the model."""
    ud_send(c, payload)
    wcs = wait_wcs(c, 1, what)
    expect([(w["wr_id"], w["status"], w.get("byte_len")) for w in wcs]
           == [(wr_id, WC_SUCCESS, GRH + len(payload))], f"{what}: completions {wcs}")
    off = (wr_id - 1000) * RECV_LEN
    g = s.reg("recv")["guard"]
    grh = bytes(s.victim.dump("recv")[g + off:g + off + GRH])
    expect(grh[:20] == bytes(20) and grh[20] == 0x45 and grh[32:36] == s.wire.ip
           and grh[36:40] == s.wire.dev_ip, f"{what}: GRH {grh.hex()}")
    s.put("recv", off, grh + payload)


def ud_dropped(s, label, reasons, attack):
    """`attack(c)` must be dropped without a completion, counted as `reasons`
    ({reason: count}); a good SEND after it lands in the first receive."""
    def body():
        c = Conn(s, kind="ud", access=LOCAL_WRITE, nrecv=2, recv_len=RECV_LEN)
        attack(c)
        ud_delivered(s, c, 1000, b"good UD datagram", "the SEND after the attack")
        got = "".join(expect_counter(c, r, n) for r, n in reasons.items())
        got += expect_counter(c, "Delivered", 1)
        no_response(c)
        wcs = c.finish()
        expect(statuses(wcs) == [(1001, WC_WR_FLUSH_ERR)], f"victim completions {statuses(wcs)}")
        return f"dropped, no completion; the next SEND landed in receive 1000{got}"
    s.run(label, "dropped silently (no completion, no byte changed, counted); the next good "
          "SEND lands in the first receive", body)


def ud_cases(s):
    payload = bytes(range(32))
    ud_dropped(s, "UD SEND with a wrong Q_Key", {"DropQkey": 1},
               lambda c: ud_send(c, payload, qkey=VICTIM_QKEY ^ 1))
    ud_dropped(s, "UD SEND with a controlled Q_Key (bit 31) that is not the QP's",
               {"DropQkey": 1},
               lambda c: ud_send(c, payload, qkey=0x80000000 | VICTIM_QKEY))
    # Another partition (0x7FFF would match: the membership bit is not compared).
    ud_dropped(s, "UD SEND with the P_Key of another partition", {"DropPkey": 1},
               lambda c: ud_send(c, payload, pkey=0x8123))
    ud_dropped(s, "RC SEND_ONLY opcode to a UD QP", {"DropOpcode": 1},
               lambda c: ud_send(c, payload, op=SEND_ONLY))
    # Cut inside the DETH: the parser refuses it before any QP sees it.
    ud_dropped(s, "UD SEND cut inside its DETH", {},
               lambda c: c.tx(UD_SEND_ONLY, struct.pack("!I", VICTIM_QKEY), ackreq=False))

    def too_long():
        c = Conn(s, kind="ud", access=LOCAL_WRITE, nrecv=2, recv_len=RECV_LEN)
        ud_send(c, bytes(RECV_LEN - GRH + 4))
        wcs = wait_wcs(c, 1, "the datagram longer than the receive")
        expect(statuses(wcs) == [(1000, WC_LOC_LEN_ERR)], f"victim completions {statuses(wcs)}")
        got = expect_counter(c, "LenErr", 1)
        ud_delivered(s, c, 1001, b"fits", "the SEND after it")
        c.finish()
        return f"receive 1000 LOC_LEN_ERR, nothing written; the next SEND landed in 1001{got}"
    s.run("UD SEND longer than the receive buffer",
          "receive completes LOC_LEN_ERR (the verbs text; rxe 6.1: LOC_QP_OP_ERR) and nothing is "
          "written; the QP keeps receiving", too_long)


# ---- UC ---------------------------------------------------------------------

def uc_tx(c, op, rest=b"", **kw):
    """One UC packet at the next PSN (UC asks for no ACK)."""
    psn = c.tx(op, rest, ackreq=False, **kw)
    c.psn = (psn + 1) & 0xFFFFFF
    return psn


def uc_landed(s, c, wr_id, what):
    """A good UC WRITE into "rw" and then a SEND: the SEND's completion in
    receive `wr_id` shows the WRITE before it was placed (one QP, in order)."""
    rw = s.reg("rw")
    data = bytes([wr_id & 0xFF]) * 16
    uc_tx(c, UC_WRITE_ONLY, reth(rw["addr"] + 1024, rw["key"], 16) + data)
    uc_tx(c, UC_SEND_ONLY, b"after")
    wcs = wait_wcs(c, 1, what)
    expect([(w["wr_id"], w["status"], w.get("byte_len")) for w in wcs]
           == [(wr_id, WC_SUCCESS, 5)], f"{what}: completions {wcs}")
    s.put("rw", 1024, data)
    s.put("recv", (wr_id - 1000) * RECV_LEN, b"after")


def uc_dropped(s, label, reasons, attack):
    """`attack(c)` must be dropped, counted as `reasons` ({reason: count}); a
    good WRITE and SEND after it land."""
    def body():
        c = Conn(s, kind="uc", access=UC_ACCESS, nrecv=2, recv_len=RECV_LEN)
        attack(c)
        uc_landed(s, c, 1000, "the WRITE and SEND after the attack")
        got = "".join(expect_counter(c, r, n) for r, n in reasons.items())
        no_response(c)
        wcs = c.finish()
        expect(statuses(wcs) == [(1001, WC_WR_FLUSH_ERR)], f"victim completions {statuses(wcs)}")
        return f"dropped, no completion, no byte changed{got}; the next WRITE and SEND landed"
    s.run(label, "dropped silently (UC has no NAK; no completion, no byte changed, counted); the "
          "next WRITE and SEND land", body)


def uc_cases(s):
    rw, ro, o = s.reg("rw"), s.reg("ro"), s.reg("otherpd")
    t = s.reg("t", s.tenant)
    data = bytes(range(0xA0, 0xB0))
    uc_dropped(s, "UC WRITE with va+len beyond the MR", {"DropRkey": 1},
               lambda c: uc_tx(c, UC_WRITE_ONLY, reth(rw["addr"] + rw["len"] - 8, rw["key"], 16)
                               + data))
    uc_dropped(s, "UC WRITE with the key of an MR in another PD of the same process", {"DropRkey": 1},
               lambda c: uc_tx(c, UC_WRITE_ONLY, reth(o["addr"], o["key"], 16) + data))
    uc_dropped(s, "UC WRITE with the key of another process's MR", {"DropRkey": 1},
               lambda c: uc_tx(c, UC_WRITE_ONLY, reth(t["addr"], t["key"], 16) + data))
    uc_dropped(s, "UC WRITE to an MR without REMOTE_WRITE", {"DropRkey": 1},
               lambda c: uc_tx(c, UC_WRITE_ONLY, reth(ro["addr"], ro["key"], 16) + data))

    def orphans(c):
        uc_tx(c, UC_WRITE_MIDDLE, bytes(1024))
        uc_tx(c, UC_WRITE_LAST, data)
    # The MIDDLE starts a dropped message; its LAST is the rest of it.
    uc_dropped(s, "UC WRITE_MIDDLE and WRITE_LAST that continue no message",
               {"DropOpSequence": 1, "DropRestOfMessage": 1}, orphans)

    def cut_write(c):
        # A FIRST whose RETH promises 2048 bytes, then the peer skips a PSN:
        # the rest of the message is lost, nothing past the first MTU lands.
        uc_tx(c, UC_WRITE_FIRST, reth(o["addr"], o["key"], 2048) + bytes(1024))
        c.psn = (c.psn + 1) & 0xFFFFFF
        uc_tx(c, UC_WRITE_LAST, bytes(1024))
    uc_dropped(s, "UC WRITE_FIRST with another PD's key, then a PSN gap and its LAST",
               {"DropRkey": 1, "DropRestOfMessage": 1}, cut_write)
    uc_dropped(s, "RC READ request opcode to a UC QP", {"DropOpcode": 1},
               lambda c: uc_tx(c, READ_REQUEST, reth(rw["addr"], rw["key"], 16)))
    uc_dropped(s, "RC atomic opcode to a UC QP", {"DropOpcode": 1},
               lambda c: uc_tx(c, CMP_SWAP, atomic_eth(rw["addr"], rw["key"], 1)))
    uc_dropped(s, "UC WRITE from a spoofed source address", {"DropAddr": 1},
               lambda c: uc_tx(c, UC_WRITE_ONLY, reth(rw["addr"], rw["key"], 16) + data,
                               src=s.spoof_ip))

    def too_long():
        c = Conn(s, kind="uc", access=UC_ACCESS, nrecv=2, recv_len=RECV_LEN)
        uc_tx(c, UC_SEND_ONLY, bytes(RECV_LEN + 4))
        wcs = wait_wcs(c, 1, "the SEND longer than the receive")
        expect(statuses(wcs) == [(1000, WC_LOC_LEN_ERR)], f"victim completions {statuses(wcs)}")
        got = expect_counter(c, "LenErr", 1)
        s.dont_care("recv", 0, RECV_LEN)
        uc_landed(s, c, 1001, "the WRITE and SEND after it")
        c.finish()
        return f"receive 1000 LOC_LEN_ERR{got}; the next WRITE and SEND landed (1001)"
    s.run("UC SEND longer than the receive buffer",
          "receive completes LOC_LEN_ERR (the verbs text; rxe 6.1: LOC_QP_OP_ERR), no byte "
          "outside it changes; the QP keeps receiving", too_long)


def dgram_cases(s):
    ud_cases(s)
    uc_cases(s)
