"""The cases of the hostile-peer suite (hostile_peer.py runs them; docs/security.md lists them).

Each case uses fresh QPs, says what IBTA/Linux rxe require (`expected`) and
returns what it saw; any difference raises CaseFailed. After each case every
buffer of both victim processes is compared with the model.
"""
import struct

from hostile_peer import (ACK, ATOMIC_ACK, ATOMIC_WRITE, CMP_SWAP, FETCH_ADD, FLUSH,
                          LOCAL_WRITE, MTU, NAK_INV_REQ, NAK_PSN_SEQ, NAK_REM_ACCESS,
                          READ_REQUEST, READ_RESP_LAST, READ_RESP_ONLY, REMOTE_READ,
                          REMOTE_WRITE, SEND_FIRST, SEND_LAST, SEND_MIDDLE, SEND_ONLY,
                          SEND_ONLY_INV, UD_SEND_ONLY, WC_LOC_LEN_ERR, WC_REM_INV_REQ_ERR, WC_REM_OP_ERR,
                          WC_SUCCESS, WC_WR_FLUSH_ERR, WRITE_FIRST, WRITE_LAST, WRITE_MIDDLE,
                          Conn, csum16, describe, expect, flushed, reth, statuses)

from hostile_dgram_cases import dgram_cases

NAK_NAMES = {NAK_PSN_SEQ: "NAK PSN sequence error", NAK_INV_REQ: "NAK invalid request",
             NAK_REM_ACCESS: "NAK remote access error"}
NAK_COUNTERS = {NAK_INV_REQ: "tx_nak_invalid_request", NAK_REM_ACCESS: "tx_nak_remote_access"}
DATA16 = bytes(range(0xE0, 0xF0))


def fatal(s, label, syn, send, nrecv=2, **conn):
    """A request that must get one class-C NAK at its PSN (MSN 0); the victim's
    receives then flush and no byte changes."""
    def body():
        c = Conn(s, nrecv=nrecv, **conn)
        psn = send(c)
        got = c.expect_nak(syn, psn, 0)
        ctr = c.counters()
        name = NAK_COUNTERS[syn]
        if ctr is not None:
            expect(ctr.get(name) == 1, f"QP counter {name} = {ctr.get(name)}, wanted 1")
            got += f" ({name} 1)"
        wcs = c.finish()
        expect(statuses(wcs) == flushed(nrecv), f"victim completions {statuses(wcs)}")
        return f"{got}; {nrecv} receives WR_FLUSH_ERR"
    s.run(label, f"{NAK_NAMES[syn]} at its PSN, MSN 0; receives WR_FLUSH_ERR; no byte changed", body)


def bounds_cases(s):
    rw = s.reg("rw")
    a, n, k = rw["addr"], rw["len"], rw["key"]
    for what, va in (("va+len beyond the MR", a + n - 8), ("va below the MR", a - 8),
                     ("va+len wrapping 2^64", 2**64 - 8)):
        fatal(s, f"WRITE {what}", NAK_REM_ACCESS, lambda c, va=va: c.write(k, va, DATA16))
        fatal(s, f"READ {what}", NAK_REM_ACCESS, lambda c, va=va: c.read(k, va, 16))
    fatal(s, "atomic at the first byte past the MR", NAK_REM_ACCESS,
          lambda c: c.atomic(FETCH_ADD, k, a + n, 1))
    fatal(s, "atomic at va 2^64-8 (its 8 bytes end at 2^64)", NAK_REM_ACCESS,
          lambda c: c.atomic(FETCH_ADD, k, 2**64 - 8, 1))
    fatal(s, "WRITE length 2^32-1 from the MR's start", NAK_REM_ACCESS,
          lambda c: c.tx(WRITE_FIRST, reth(a, k, 0xFFFFFFFF) + bytes(MTU)))


def key_cases(s):
    o = s.reg("otherpd")
    t = s.reg("t", s.tenant)
    fatal(s, "WRITE with the key of an MR in another PD of the same process", NAK_REM_ACCESS,
          lambda c: c.write(o["key"], o["addr"], DATA16))
    fatal(s, "READ with the key of an MR in another PD of the same process", NAK_REM_ACCESS,
          lambda c: c.read(o["key"], o["addr"], 16))
    fatal(s, "WRITE with the key of another process's MR", NAK_REM_ACCESS,
          lambda c: c.write(t["key"], t["addr"], DATA16))
    fatal(s, "atomic with the key of another process's MR", NAK_REM_ACCESS,
          lambda c: c.atomic(FETCH_ADD, t["key"], t["addr"], 1))
    st = s.reg("stale")
    s.victim.call("dereg stale")
    fatal(s, "WRITE with a deregistered (stale) key", NAK_REM_ACCESS,
          lambda c: c.write(st["key"], st["addr"], DATA16))
    fatal(s, "READ with a deregistered (stale) key", NAK_REM_ACCESS,
          lambda c: c.read(st["key"], st["addr"], 16))

    def guesses():
        # The four secrets were registered right after "rw" in the same PD,
        # so a sequential allocator puts them in the next slots. For each, the
        # peer tries the next slot with rw's variant byte and with the variant
        # counting up too (the two sequential patterns), each on its own QP.
        hit, seen = set(), []
        k = s.reg("rw")["key"]
        for i in range(4):
            sec = s.reg(f"secret{i}")
            slot = ((k >> 8) + i + 1) & 0xFFFFFF
            for guess in sorted({(slot << 8) | (k & 0xFF), (slot << 8) | ((k + i + 1) & 0xFF)}):
                c = Conn(s)
                psn = c.write(guess, sec["addr"], DATA16)
                r = c.rx()
                if guess == sec["key"]:
                    # The guess named the key: the WRITE lands, as on rxe
                    # when its random variant byte happens to match.
                    expect(r is not None and r["op"] == ACK and r["syn"] >> 5 == 0,
                           f"guess 0x{guess:08x} is the key but got {describe(r)}")
                    s.put(f"secret{i}", 0, DATA16)
                    hit.add(i)
                else:
                    expect(r is not None and r["op"] == ACK and r["syn"] == NAK_REM_ACCESS
                           and r["psn"] == psn, f"guess 0x{guess:08x}: {describe(r)}")
                seen.append(f"0x{guess:08x}")
                c.finish()
        keys = ", ".join(f"0x{s.reg(f'secret{i}')['key']:08x}" for i in range(4))
        expect(len(hit) < 4, f"every secret's key was guessed (keys {keys}; guesses {', '.join(seen)})")
        return (f"{len(hit)} of 4 secret MRs reached by {len(seen)} guesses "
                f"({', '.join(seen)}; rw 0x{k:08x}, secrets {keys}); wrong guesses NAK 0x62")
    s.run("guessed keys (the sequential successors of a key the peer holds)",
          "NAK remote access error for each wrong guess; keys not predictable (not all 4 secret MRs hit; "
          "a random 8-bit variant gives each secret a 2-in-256 chance)",
          guesses)


def access_cases(s):
    ro, na, rw = s.reg("ro"), s.reg("noatomic"), s.reg("rw")
    fatal(s, "WRITE into a read-only MR (REMOTE_READ only)", NAK_REM_ACCESS,
          lambda c: c.write(ro["key"], ro["addr"], DATA16))
    fatal(s, "atomic on an MR without REMOTE_ATOMIC", NAK_REM_ACCESS,
          lambda c: c.atomic(FETCH_ADD, na["key"], na["addr"], 1))
    fatal(s, "READ on a QP without REMOTE_READ", NAK_INV_REQ,
          lambda c: c.read(rw["key"], rw["addr"], 16), access=LOCAL_WRITE | REMOTE_WRITE)
    fatal(s, "atomic on a QP without REMOTE_ATOMIC", NAK_INV_REQ,
          lambda c: c.atomic(FETCH_ADD, rw["key"], rw["addr"], 1),
          access=LOCAL_WRITE | REMOTE_WRITE | REMOTE_READ)
    fatal(s, "WRITE on a QP without REMOTE_WRITE", NAK_INV_REQ,
          lambda c: c.write(rw["key"], rw["addr"], DATA16), access=LOCAL_WRITE | REMOTE_READ)
    fatal(s, "misaligned atomic (va % 8 == 4)", NAK_INV_REQ,
          lambda c: c.atomic(CMP_SWAP, rw["key"], rw["addr"] + 4, 1, 0))


def replay_cases(s):
    rw = s.reg("rw")
    k, a = rw["key"], rw["addr"]

    def dup_write():
        c = Conn(s)
        psn = c.write(k, a + 64, DATA16)
        c.expect_ack(psn, 1)
        s.put("rw", 64, DATA16)
        c.write(k, a + 64, bytes(16), psn=psn)
        got = c.expect_ack(psn, 1)
        wcs = c.finish()
        expect(statuses(wcs) == flushed(2), f"victim completions {statuses(wcs)}")
        return f"{got} twice; the second WRITE's bytes not placed"
    s.run("duplicate WRITE (same PSN, other data)",
          "ACK again with the original PSN and MSN; not executed again", dup_write)

    def dup_send():
        c = Conn(s)
        psn = c.tx(SEND_ONLY, b"A" * 100)
        c.expect_ack(psn, 1)
        c.tx(SEND_ONLY, b"B" * 60, psn=psn)
        c.expect_ack(psn, 1)
        c.tx(SEND_ONLY, b"C" * 40, psn=psn + 1)
        c.expect_ack(psn + 1, 2)
        s.put("recv", 0, b"A" * 100)
        s.put("recv", 256, b"C" * 40)
        wcs = c.finish()
        got = [(w["wr_id"], w["status"], w.get("byte_len")) for w in wcs]
        expect(got == [(1000, WC_SUCCESS, 100), (1001, WC_SUCCESS, 40)],
               f"victim completions {got}")
        return "ACK psn p msn 1 twice, then ACK p+1 msn 2; receives: 100 B, then 40 B"
    s.run("duplicate SEND", "ACK again; no second receive consumed", dup_send)

    def dup_read():
        c = Conn(s)
        psn = c.read(k, a + 128, 64)
        want = s.get("rw", 128, 64)
        for i in range(2):
            if i:
                c.read(k, a + 128, 64, psn=psn)
            r = c.rx()
            expect(r is not None and r["op"] == READ_RESP_ONLY and r["psn"] == psn
                   and r["msn"] == 1 and r["body"] == want,
                   f"response {i + 1}: {describe(r)}")
        c.finish()
        return f"READ_RESPONSE_ONLY psn {psn} msn 1 with the MR's 64 bytes, twice"
    s.run("duplicate READ", "the READ is answered again with the same bytes", dup_read)

    def dup_atomic():
        c = Conn(s)
        orig = struct.unpack("<Q", s.get("rw", 256, 8))[0]
        psn = c.atomic(FETCH_ADD, k, a + 256, 5)
        for i in range(2):
            if i:
                c.atomic(FETCH_ADD, k, a + 256, 5, psn=psn)
            r = c.rx()
            expect(r is not None and r["op"] == ATOMIC_ACK and r["psn"] == psn
                   and r["msn"] == 1 and r["orig"] == orig, f"response {i + 1}: {describe(r)}"
                   + (f" orig {r['orig']:#x}" if r and "orig" in r else ""))
        s.put("rw", 256, struct.pack("<Q", (orig + 5) % 2**64))
        c.finish()
        return f"ATOMIC_ACK psn {psn} orig {orig:#x} twice; memory = orig + 5 (one execution)"
    s.run("duplicate FETCH_ADD", "the original value again; executed once", dup_atomic)

    def dup_cmp_swap():
        c = Conn(s)
        orig = struct.unpack("<Q", s.get("rw", 264, 8))[0]
        new = (orig + 1) % 2**64
        psn = c.atomic(CMP_SWAP, k, a + 264, new, orig)
        for i in range(2):
            if i:
                c.atomic(CMP_SWAP, k, a + 264, new, orig, psn=psn)
            r = c.rx()
            # A second execution would find `new` in memory and return it.
            expect(r is not None and r["op"] == ATOMIC_ACK and r["psn"] == psn
                   and r["msn"] == 1 and r["orig"] == orig, f"response {i + 1}: {describe(r)}"
                   + (f" orig {r['orig']:#x}" if r and "orig" in r else ""))
        s.put("rw", 264, struct.pack("<Q", new))
        c.finish()
        return f"ATOMIC_ACK psn {psn} orig {orig:#x} twice; memory = the swap value"
    s.run("duplicate CMP_SWAP", "the original value again (not the swapped one); executed once",
          dup_cmp_swap)

    def psn_ahead():
        c = Conn(s)
        p = c.psn
        c.write(k, a + 320, DATA16, psn=p + 1000)
        got = c.expect_nak(NAK_PSN_SEQ, p, 0)
        c.write(k, a + 320, DATA16, psn=p + 1001)
        c.probe(1)
        c.finish()
        return f"{got}; the second far-ahead WRITE: silence (probe at psn {p} ACKed first)"
    s.run("PSN far ahead (ePSN + 1000, then + 1001)",
          "one NAK PSN sequence error with ePSN, then silence; nothing executed", psn_ahead)


def length_cases(s):
    rw = s.reg("rw")
    k, a = rw["key"], rw["addr"]
    fatal(s, "WRITE_ONLY with a payload > path MTU (1028 B)", NAK_INV_REQ,
          lambda c: c.write(k, a, bytes(MTU + 4)))

    def send_too_big():
        c = Conn(s)
        psn = c.tx(SEND_ONLY, bytes(MTU + 4))
        got = c.expect_nak(NAK_INV_REQ, psn, 0)
        wcs = c.finish()
        expect(all(w["status"] != WC_SUCCESS for w in wcs) and len(wcs) == 2,
               f"victim completions {statuses(wcs)}")
        s.dont_care("recv", 0, 256)
        return f"{got}; receives {statuses(wcs)}"
    s.run("SEND_ONLY with a payload > path MTU (1028 B)",
          "NAK invalid request; no receive completes successfully", send_too_big)

    def send_longer_than_recv():
        c = Conn(s)
        psn = c.tx(SEND_ONLY, b"L" * 512)
        got = c.expect_nak(NAK_INV_REQ, psn, 0)
        wcs = c.finish()
        expect(statuses(wcs) == [(1000, WC_LOC_LEN_ERR), (1001, WC_WR_FLUSH_ERR)],
               f"victim completions {statuses(wcs)}")
        s.dont_care("recv", 0, 256)   # the failed receive's own buffer
        return f"{got}; receive 1000 LOC_LEN_ERR, 1001 WR_FLUSH_ERR; nothing past its 256 B"
    s.run("SEND of 512 B into a 256 B receive",
          "NAK invalid request; the receive LOC_LEN_ERR; no byte past the receive buffer",
          send_longer_than_recv)


def malformed_cases(s):
    rw = s.reg("rw")
    k, a = rw["key"], rw["addr"]

    def body():
        c = Conn(s)
        p = c.psn
        w = s.wire
        before = s.counters()
        req = c.vqpn
        write = (struct.pack("!BBHII", 0x0A, 0, 0xFFFF, req, 0x80000000 | p)
                 + reth(a + 384, k, 16) + DATA16)

        def edit(offset, value, fix_ip_csum=False):
            pkt = bytearray(w.ip_packet(write))
            struct.pack_into("!H", pkt, offset, value)
            if fix_ip_csum:
                struct.pack_into("!H", pkt, 10, 0)
                struct.pack_into("!H", pkt, 10, csum16(bytes(pkt[:20])))
            return bytes(pkt)
        send_pad3 = struct.pack("!BBHII", SEND_ONLY, 3 << 4, 0xFFFF, req, 0x80000000 | p)
        n = len(w.ip_packet(write))
        # label: (IPv4 packet, the parse_errors counter that must count it)
        frames = {
            "UDP payload shorter than a BTH": (w.ip_packet(write[:6]), "TruncatedBth"),
            "WRITE_ONLY cut inside its RETH": (w.ip_packet(write[:12 + 10]), "TruncatedReth"),
            "WRITE_ONLY with a bad ICRC": (w.ip_packet(write, icrc_xor=0x1), "BadIcrc"),
            "pad count beyond the payload": (w.ip_packet(send_pad3), "PadExceedsPayload"),
            "IPv4 header checksum wrong": (edit(10, 0x1234), "BadIpChecksum"),
            "IPv4 total length beyond the frame": (edit(2, n + 100, True), "BadIpTotalLength"),
            "UDP checksum non-zero and wrong": (edit(26, 0x1234), "BadUdpChecksum"),
            "frame 2 bytes shorter than its IPv4 total length": (w.ip_packet(write)[:-2],
                                                                 "BadIpTotalLength"),
            "UDP length beyond the IP payload": (edit(24, n - 20 + 64), "BadUdpLength"),
            "UDP length shorter than a BTH": (edit(24, 8 + 6), "BadUdpLength"),
        }
        for f, _ in frames.values():
            w.send_ip(f)
        c.probe(1)
        after = s.counters()
        if after is None:
            c.finish()
            return f"{len(frames)} frames ({'; '.join(frames)}): silence, probe ACKed"
        want = {}
        for _, name in frames.values():
            want[name] = want.get(name, 0) + 1
        pre = "devices[0].counters.parse_errors."
        got = {name: after.get(pre + name, 0) - before.get(pre + name, 0) for name in want}
        total = (after.get("devices[0].counters.rx_parse_errors", 0)
                 - before.get("devices[0].counters.rx_parse_errors", 0))
        expect(got == want and total == len(frames),
               f"parse_errors moved {got} (rx_parse_errors +{total}), wanted {want}")
        c.finish()
        return (f"{len(frames)} frames ({'; '.join(frames)}): silence, probe ACKed; counted "
                + ", ".join(f"{k} +{v}" for k, v in sorted(got.items())))

    def fragment():
        c = Conn(s)
        p = c.psn
        before = s.counters()
        pkt = bytearray(s.wire.ip_packet(
            struct.pack("!BBHII", 0x0A, 0, 0xFFFF, c.vqpn, 0x80000000 | p)
            + reth(a + 384, k, 16) + DATA16))
        struct.pack_into("!H", pkt, 6, 0x2000)   # MF set, offset 0
        struct.pack_into("!H", pkt, 10, 0)
        struct.pack_into("!H", pkt, 10, csum16(bytes(pkt[:20])))
        s.wire.send_ip(bytes(pkt))
        c.probe(1)
        after = s.counters()
        c.finish()
        if after is None:
            return "silence, probe ACKed"
        d = {n.split(".")[-1]: after.get(n, 0) - before.get(n, 0)
             for n in ("devices[0].counters.rx_frames", "devices[0].counters.parse_errors.IpFragment")}
        # rx_frames also counts the probe.
        return (f"silence, probe ACKed; rx_frames +{d['rx_frames']} (the probe included), "
                f"IpFragment +{d['IpFragment']}")
    s.run("IPv4 fragment (MF set) of a valid WRITE",
          "never executed; the QP keeps working", fragment)

    s.run("truncated and malformed frames",
          "silently dropped and counted; nothing executed; the QP keeps working", body)


def sequence_cases(s):
    rw = s.reg("rw")
    k, a = rw["key"], rw["addr"]
    fatal(s, "lone WRITE_MIDDLE without FIRST", NAK_INV_REQ,
          lambda c: c.tx(WRITE_MIDDLE, bytes(MTU)))
    fatal(s, "lone WRITE_LAST without FIRST", NAK_INV_REQ,
          lambda c: c.tx(WRITE_LAST, DATA16))

    def lone_send(op, payload):
        def body():
            c = Conn(s)
            psn = c.tx(op, payload)
            got = c.expect_nak(NAK_INV_REQ, psn, 0)
            wcs = c.finish()
            expect(len(wcs) == 2 and all(w["status"] != WC_SUCCESS for w in wcs),
                   f"victim completions {statuses(wcs)}")
            return f"{got}; receives {statuses(wcs)}"
        return body
    s.run("lone SEND_MIDDLE without FIRST", "NAK invalid request; no receive succeeds",
          lone_send(SEND_MIDDLE, bytes(MTU)))
    s.run("lone SEND_LAST without FIRST", "NAK invalid request; no receive succeeds",
          lone_send(SEND_LAST, DATA16))

    def write_lengths_disagree():
        c = Conn(s)
        p = c.tx(WRITE_FIRST, reth(a + 1024, k, MTU + 16) + bytes(MTU), ackreq=False)
        c.tx(WRITE_LAST, bytes(32), psn=p + 1)
        got = c.expect_nak(NAK_INV_REQ, (p + 1) & 0xFFFFFF, 0)
        wcs = c.finish()
        expect(statuses(wcs) == flushed(2), f"victim completions {statuses(wcs)}")
        s.dont_care("rw", 1024, MTU)   # the FIRST packet's bytes, inside the RETH range
        return f"{got}; receives WR_FLUSH_ERR; nothing past the RETH range"
    s.run("WRITE_FIRST + WRITE_LAST adding up to more than the RETH length",
          "NAK invalid request at the LAST's PSN; nothing written past the RETH range",
          write_lengths_disagree)

    def first_inside_message():
        c = Conn(s, recv_len=2048)
        p = c.tx(SEND_FIRST, bytes(MTU), ackreq=False)
        c.tx(SEND_ONLY, DATA16, psn=p + 1)
        got = c.expect_nak(NAK_INV_REQ, (p + 1) & 0xFFFFFF, 0)
        wcs = c.finish()
        expect(len(wcs) == 2 and all(w["status"] != WC_SUCCESS for w in wcs),
               f"victim completions {statuses(wcs)}")
        s.dont_care("recv", 0, 2048)
        return f"{got}; receives {statuses(wcs)}"
    s.run("SEND_ONLY inside a SEND (after a FIRST)",
          "NAK invalid request at its PSN; no receive succeeds", first_inside_message)

    def rnr():
        c = Conn(s, nrecv=0)
        p = c.tx(SEND_ONLY, DATA16)
        r = c.rx()
        # min_rnr_timer 1 (the victim's RTR): syndrome 001 00001.
        expect(r is not None and r["op"] == ACK and r["syn"] == 0x21 and r["psn"] == p
               and r["msn"] == 0, f"wanted RNR NAK 0x21 psn {p} msn 0, got {describe(r)}")
        c.probe(1)
        c.finish()
        return f"RNR NAK 0x21 psn {p} msn 0; the QP keeps working (probe ACKed)"
    s.run("SEND with no receive posted",
          "RNR NAK carrying the QP's min_rnr_timer; the QP stays usable", rnr)

    def not_from_peer():
        c = Conn(s)
        p = c.psn
        c.write(k, a + 448, DATA16, src=s.spoof_ip)
        c.write(k, a + 448, DATA16, pkey=0x1234)
        c.probe(1)
        ctr = c.counters()
        c.finish()
        if ctr is None:
            return f"silence, probe at psn {p} ACKed"
        expect(ctr.get("drop_addr") == 1 and ctr.get("drop_pkey") == 1,
               f"drop_addr {ctr.get('drop_addr')}, drop_pkey {ctr.get('drop_pkey')}, wanted 1 each")
        return f"silence, probe at psn {p} ACKed; QP counters drop_addr 1, drop_pkey 1"
    s.run("WRITE at ePSN from another source address; WRITE with a foreign P_Key (0x1234)",
          "silently dropped (rxe's check_addr and P_Key check) and counted; nothing executed",
          not_from_peer)

    def reserved():
        c = Conn(s)
        ops = [0x15, 0x18, 0x1B, 0x1E, 0x1F, UD_SEND_ONLY, 0xC0]
        for op in ops:
            c.tx(op, reth(a + 448, k, 16) + DATA16)
        c.probe(1)
        c.finish()
        return f"opcodes {', '.join(hex(o) for o in ops)}: silence, probe ACKed"
    s.run("reserved and foreign opcodes at ePSN",
          "silently dropped (rxe drops opcodes it has no entry for); QP keeps working", reserved)


def new_opcode_cases(s):
    rw = s.reg("rw")
    k, a = rw["key"], rw["addr"]

    def atomic_write():
        c = Conn(s)
        val = struct.pack("!Q", 0x1122334455667788)
        psn = c.tx(ATOMIC_WRITE, reth(a + 512, k, 8) + val)
        r = c.rx()
        if r is not None and r["op"] == ACK and r["syn"] >> 5 == 0:
            expect(r["psn"] == psn and r["msn"] == 1, describe(r))
            s.put("rw", 512, val)
            seen = f"implemented: {describe(r)}, 8 bytes placed"
        else:
            expect(r is not None and r["op"] == ACK and r["syn"] == NAK_INV_REQ
                   and r["psn"] == psn, f"got {describe(r)}")
            seen = describe(r)
        c.finish()
        return seen
    s.run("ATOMIC_WRITE (0x1D)",
          "implemented (ACK, 8 bytes placed) or NAK invalid request at once; never silence",
          atomic_write)

    def flush():
        c = Conn(s)
        psn = c.tx(FLUSH, struct.pack("!I", 1) + reth(a, k, 64))
        r = c.rx()
        expect(r is not None and ((r["op"] == READ_RESP_ONLY and r["psn"] == psn
                                   and not r["body"])
                                  or (r["op"] == ACK and r["psn"] == psn
                                      and r["syn"] in (NAK_INV_REQ, NAK_REM_ACCESS))),
               f"got {describe(r)}")
        c.finish()
        return describe(r)
    s.run("FLUSH (0x1C)",
          "implemented (zero-length READ_RESPONSE_ONLY) or NAKed at once; never silence", flush)


def requester_cases(s):
    def reserved_nak(syn):
        def body():
            c = Conn(s)
            s.victim.call(f"send {c.id} 1 local 0 64")
            r = c.rx()
            expect(r is not None and r["op"] == SEND_ONLY and r["psn"] == c.vpsn,
                   f"wanted the victim's SEND_ONLY at psn {c.vpsn}, got {describe(r)}")
            c.tx(ACK, struct.pack("!BBH", syn, 0, 0), psn=c.vpsn, ackreq=False)
            wcs = s.victim.call(f"poll {c.id} 1 5000")["wc"]
            expect(statuses(wcs) == [(1, WC_REM_OP_ERR)],
                   f"victim SEND completed {statuses(wcs)}")
            c.finish()
            return "the victim's SEND completes REM_OP_ERR"
        return body
    for syn in (0x64, 0x65, 0x6A, 0x7F):
        s.run(f"NAK code {syn & 0x1F} (syndrome 0x{syn:02x}, not one the requester knows) to "
              "the victim's SEND", "the WR completes IBV_WC_REM_OP_ERR (rxe)", reserved_nak(syn))

    def lone_read_last():
        c = Conn(s)
        s.victim.call(f"read {c.id} 2 local 0 64 {1 << 20} 4660")
        r = c.rx()
        expect(r is not None and r["op"] == READ_REQUEST and r["psn"] == c.vpsn,
               f"wanted the victim's READ request at psn {c.vpsn}, got {describe(r)}")
        c.tx(READ_RESP_LAST, struct.pack("!BBH", 0x1F, 0, 1) + b"\xee" * 64, psn=c.vpsn,
             ackreq=False)
        wcs = s.victim.call(f"poll {c.id} 1 5000")["wc"]
        expect(len(wcs) == 1 and wcs[0]["status"] not in (WC_SUCCESS, WC_WR_FLUSH_ERR),
               f"victim READ completed {statuses(wcs)}")
        c.finish()
        return f"the READ completes {wcs[0]['status_str']}; no byte placed"
    s.run("lone READ_RESPONSE_LAST for a one-packet READ",
          "rejected: the READ completes in error, its buffer unchanged", lone_read_last)


def invalidate_cases(s):
    rw = s.reg("rw")
    t = s.reg("t", s.tenant)

    def still_works(v, region):
        """The MR's rkey (a WRITE from the peer) and lkey (a SEND by its owner) work."""
        r = v.regions[region]
        c = Conn(s, victim=v)
        psn = c.write(r["key"], r["addr"] + 576, DATA16)
        c.expect_ack(psn, 1)
        s.put(region, 576, DATA16, v)
        v.call(f"send {c.id} 7 {region} 576 16")
        p = c.rx()
        expect(p is not None and p["op"] == SEND_ONLY and p["body"] == DATA16,
               f"wanted the owner's SEND of 16 B, got {describe(p)}")
        c.tx(ACK, struct.pack("!BBH", 0x1F, 0, 1), psn=p["psn"], ackreq=False)
        wcs = v.call(f"poll {c.id} 1 5000")["wc"]
        expect(statuses(wcs) == [(7, WC_SUCCESS)], f"owner's SEND completed {statuses(wcs)}")
        c.finish()

    def inv(label, v_key, owner, region):
        def body():
            c = Conn(s)
            psn = c.tx(SEND_ONLY_INV, struct.pack("!I", v_key) + bytes(32))
            r = c.rx()
            # IBTA class J: NAK invalid request. rxe (6.1) answers the AckReq
            # with an ACK that does not count the message (MSN unchanged) and
            # moves its QP to ERR; either refuses the invalidation.
            expect(r is not None and r["op"] == ACK and r["psn"] == psn and r["msn"] == 0
                   and r["syn"] in (NAK_INV_REQ,) + ((r["syn"],) if r["syn"] >> 5 == 0 else ()),
                   f"wanted NAK 0x61 (or rxe's ACK) psn {psn} msn 0, got {describe(r)}")
            got = describe(r)
            wcs = c.finish()
            expect(statuses(wcs) == [(1000, WC_REM_INV_REQ_ERR), (1001, WC_WR_FLUSH_ERR)],
                   f"victim completions {statuses(wcs)}")
            s.dont_care("recv", 0, 256)
            still_works(owner, region)
            return f"{got}; receive {statuses(wcs)[0]}; the MR's rkey and lkey still work"
        s.run(label, "refused (IBTA class J): NAK invalid request (rxe: an ACK with the MSN "
              "unchanged), the receive completes REM_INV_REQ_ERR (rxe's status); the MR's rkey "
              "and lkey keep working (rxe invalidates only MWs and fast-registration MRs)", body)
    inv("SEND_WITH_INVALIDATE naming an ordinary MR of the QP's PD", rw["key"], s.victim, "rw")
    inv("SEND_WITH_INVALIDATE naming another process's MR", t["key"], s.tenant, "t")


def all_cases(s):
    bounds_cases(s)
    key_cases(s)
    access_cases(s)
    replay_cases(s)
    length_cases(s)
    malformed_cases(s)
    sequence_cases(s)
    new_opcode_cases(s)
    requester_cases(s)
    invalidate_cases(s)
    dgram_cases(s)
