#!/usr/bin/python3
"""Wire interop check of uroce's RoCEv2 builder and parser.

usage: check_scapy.py WIRE_VECTORS

1. `WIRE_VECTORS gen PCAP` builds one frame per opcode class with our builder
   and prints the field values it used.
2. scapy (scapy.contrib.roce: BTH, AETH, CNPPadding and its own ICRC; the
   other IBTA extension headers, and uroce's DC and selective-repeat headers
   (docs/dc.md, docs/lossy.md), packed here with struct as raw bytes) builds
   the same
   packets from those field values: the bytes must be identical, ICRC
   included. Over IPv6, where scapy has no RoCE ICRC, icrc_ipv6() below
   computes it from scapy's decoded fields (the IBTA annex's masking, as
   Linux rxe applies it) and scapy computes the UDP checksum.
3. scapy's frames are fed to `WIRE_VECTORS parse`: every field must decode
   to the value it was built from; the same frames with a flipped ICRC bit
   must give BadIcrc.
4. tshark (an independent decoder) reads our pcap: opcode, DestQP, PSN,
   each extension header field it knows, and over IPv6 the addresses,
   traffic class, flow label and hop limit must match. uroce's own packets
   (DC's 0xE0-0xF8, selective repeat's 0xC3 and 0xC8-0xDF: manufacturer-
   specific) are checked up to the BTH only: tshark does not know their
   headers.

Runs under Debian's /usr/bin/python3 (scapy); fails, never skips, when scapy
or tshark is missing.
"""
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import zlib
from ipaddress import ip_address

try:
    from scapy.all import Ether, IP, IPv6, UDP, Raw, raw
    from scapy.contrib.roce import BTH, AETH, CNPPadding
except ImportError as e:  # a missing oracle is a failure, not a skip
    sys.exit(f"FAIL: scapy with scapy.contrib.roce is required: {e}")

TSHARK = shutil.which("tshark")
if TSHARK is None:
    sys.exit("FAIL: tshark is required")

CNP_OPCODE = 0x81
DC_OPCODES = range(0xE0, 0xF9)
# uroce's own opcodes (docs/homa.md, docs/dc.md, docs/lossy.md): tshark
# knows their BTH only.
UROCE_OPCODES = range(0xC0, 0x100)

failures = []


def fail(msg):
    failures.append(msg)
    print("FAIL:", msg)


def ext_bytes_after_aeth(f):
    """IBTA layouts (Vol.1 9.3) of the headers scapy has no layer for, in
    wire order. Returns (before_aeth, after_aeth)."""
    before = b""
    if "deth" in f:
        d = f["deth"]
        before += struct.pack("!IB", d["qkey"], 0) + d["src_qp"].to_bytes(3, "big")
    if "dc_eth" in f:  # datapath/wire/dc_eth.h
        d = f["dc_eth"]
        before += (struct.pack("!QB", d["key"], d["flags"]) + d["dci_qpn"].to_bytes(3, "big") +
                   struct.pack("!HHIB", d["lane"], 0, d["conn"], 0) +
                   d["first_psn"].to_bytes(3, "big") + b"\x00" +
                   d["acked_psn"].to_bytes(3, "big"))
    if "dc_aeth" in f:  # datapath/wire/dc_aeth.h
        d = f["dc_aeth"]
        before += struct.pack("!HBBII", d["lane"], d["status"], 0, d["conn"], d["value"])
    if "reth" in f:
        r = f["reth"]
        before += struct.pack("!QII", r["va"], r["rkey"], r["dma_len"])
    if "atomic_eth" in f:
        a = f["atomic_eth"]
        before += struct.pack("!QIQQ", a["va"], a["rkey"], a["swap_add"], a["compare"])
    after = b""
    if "atomic_ack_eth" in f:
        after += struct.pack("!Q", f["atomic_ack_eth"]["orig"])
    if "imm" in f:
        after += struct.pack("!I", f["imm"])
    if "ieth_rkey" in f:
        after += struct.pack("!I", f["ieth_rkey"])
    if "sr_eth" in f:  # datapath/wire/sr_eth.h, after every IBTA header
        d = f["sr_eth"]
        after += b"\x00" + d["rsn"].to_bytes(3, "big") + struct.pack("!I", d["offset"])
    if "sack_eth" in f:  # datapath/wire/sr_sack_eth.h, after the AETH
        d = f["sack_eth"]
        after += (struct.pack("!B", d["flags"]) + d["trigger_psn"].to_bytes(3, "big") +
                  struct.pack("!HH", d["window"], d["ce_offset"]) + bytes.fromhex(d["bitmap"]))
    return before, after


def icrc_ipv6(frame):
    """ICRC of an Ethernet/IPv6/UDP/BTH frame (IBTA Annex A17.4, as Linux
    rxe computes it): CRC-32 over 8 bytes of 0xff, then the IP packet up to
    the ICRC with the IPv6 traffic class, flow label and hop limit, the UDP
    checksum and BTH FECN/BECN/resv6 set to all ones."""
    ip = Ether(frame)[IPv6].copy()
    ip.tc, ip.fl, ip.hlim = 0xff, 0xfffff, 0xff
    ip[UDP].chksum = 0xffff
    ip[BTH].fecn, ip[BTH].becn, ip[BTH].resv6 = 1, 1, 0x3f
    return zlib.crc32(b"\xff" * 8 + raw(ip)[:-4]) & 0xffffffff


def scapy_frame(f):
    payload = bytes.fromhex(f["payload"])
    pad = (-len(payload)) % 4
    v6 = f["ipv6"]
    if v6:
        l3 = IPv6(src=f["ip_src"], dst=f["ip_dst"], tc=(f["dscp"] << 2) | f["ecn"],
                  fl=f["flow_label"], hlim=f["ttl"])
    else:
        l3 = IP(src=f["ip_src"], dst=f["ip_dst"], tos=(f["dscp"] << 2) | f["ecn"],
                id=f["ip_id"], flags="DF" if f["df"] else 0, ttl=f["ttl"])
    # Over IPv6 the ICRC is filled in below (icrc=0 as a placeholder), and
    # the UDP checksum after it, since it covers the ICRC.
    pkt = (Ether(src=f["eth_src"], dst=f["eth_dst"]) / l3 /
           UDP(sport=f["udp_src"], dport=4791,
               chksum=None if f["udp_checksum"] and not v6 else 0) /
           BTH(opcode=f["opcode"], solicited=int(f["se"]), migreq=int(f["mig_req"]),
               padcount=pad, version=0, pkey=f["pkey"], fecn=int(f["fecn"]),
               becn=int(f["becn"]), dqpn=f["dest_qp"], ackreq=int(f["ack_req"]),
               psn=f["psn"], icrc=0 if v6 else None))
    if f["opcode"] == CNP_OPCODE:
        pkt = pkt / CNPPadding()
    else:
        before, after = ext_bytes_after_aeth(f)
        if before:
            pkt = pkt / Raw(before)
        if "aeth" in f:
            pkt = pkt / AETH(syndrome=f["aeth"]["syndrome"], msn=f["aeth"]["msn"])
        rest = after + payload + b"\x00" * pad
        if rest:
            pkt = pkt / Raw(rest)
    b = raw(pkt)
    if not v6:
        return b
    b = b[:-4] + struct.pack("<I", icrc_ipv6(b))
    if f["udp_checksum"]:
        q = Ether(b)
        del q[UDP].chksum
        b = raw(q)
    return b


def run_parse(tool, frames):
    out = subprocess.run([tool, "parse"], input="".join(h + "\n" for h in frames),
                         capture_output=True, text=True, check=True).stdout
    return [json.loads(line) for line in out.splitlines()]


def compare_fields(name, want, got):
    if got.get("error") != "Ok":
        fail(f"{name}: our parser says {got.get('error')} on scapy's frame")
        return
    for k, v in want.items():
        if got.get(k) != v:
            fail(f"{name}: field {k}: built {v!r}, parsed {got.get(k)!r}")
    extra = set(got) - set(want) - {"error", "name"}
    if extra:
        fail(f"{name}: parser reports headers the opcode lacks: {sorted(extra)}")


def tshark_rows(pcap):
    fields = ["infiniband.bth.opcode", "infiniband.bth.destqp", "infiniband.bth.psn",
              "infiniband.reth.va", "infiniband.reth.r_key", "infiniband.reth.dmalen",
              "infiniband.aeth.syndrome", "infiniband.aeth.msn",
              "infiniband.deth.q_key", "infiniband.deth.srcqp",
              "infiniband.atomiceth.swapdt", "infiniband.atomiceth.cmpdt",
              "infiniband.atomicacketh.origremdt", "infiniband.immdt", "infiniband.ieth",
              "ipv6.src", "ipv6.dst", "ipv6.tclass", "ipv6.flow", "ipv6.hlim"]
    cmd = [TSHARK, "-r", pcap, "-T", "fields", "-E", "separator=|", "-E", "occurrence=f"]
    for fl in fields:
        cmd += ["-e", fl]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    return [dict(zip(fields, line.split("|"))) for line in out.splitlines()]


def num(s):
    return int(s, 0) if s.startswith("0x") else int(s)


def check_tshark(vectors, rows):
    if len(rows) != len(vectors):
        fail(f"tshark saw {len(rows)} packets, we wrote {len(vectors)}")
        return
    for v, r in zip(vectors, rows):
        f, name = v["fields"], v["name"]
        checks = [("infiniband.bth.opcode", f["opcode"]),
                  ("infiniband.bth.destqp", f["dest_qp"]),
                  ("infiniband.bth.psn", f["psn"])]
        dc = f["opcode"] in UROCE_OPCODES
        if "reth" in f and not dc:
            checks += [("infiniband.reth.va", f["reth"]["va"]),
                       ("infiniband.reth.r_key", f["reth"]["rkey"]),
                       ("infiniband.reth.dmalen", f["reth"]["dma_len"])]
        if "aeth" in f and not dc:
            checks += [("infiniband.aeth.syndrome", f["aeth"]["syndrome"]),
                       ("infiniband.aeth.msn", f["aeth"]["msn"])]
        if "deth" in f and not dc:
            checks += [("infiniband.deth.q_key", f["deth"]["qkey"]),
                       ("infiniband.deth.srcqp", f["deth"]["src_qp"])]
        if "atomic_eth" in f and not dc:
            checks += [("infiniband.atomiceth.swapdt", f["atomic_eth"]["swap_add"]),
                       ("infiniband.atomiceth.cmpdt", f["atomic_eth"]["compare"])]
        if "atomic_ack_eth" in f and not dc:
            checks += [("infiniband.atomicacketh.origremdt", f["atomic_ack_eth"]["orig"])]
        if f["ipv6"]:
            checks += [("ipv6.tclass", (f["dscp"] << 2) | f["ecn"]),
                       ("ipv6.flow", f["flow_label"]), ("ipv6.hlim", f["ttl"])]
            for key in ("src", "dst"):
                s = r.get(f"ipv6.{key}", "")
                if s == "" or ip_address(s) != ip_address(f[f"ip_{key}"]):
                    fail(f"{name}: tshark ipv6.{key} = {s!r}, want {f['ip_' + key]}")
        for key, want in checks:
            s = r.get(key, "")
            if s == "" or num(s) != want:
                fail(f"{name}: tshark {key} = {s!r}, want {want}")
        if "imm" in f and not dc and r.get("infiniband.immdt", "") != f"{f['imm']:08x}":
            fail(f"{name}: tshark immdt = {r.get('infiniband.immdt')!r}")
        if "ieth_rkey" in f and not dc and r.get("infiniband.ieth", "") != f"{f['ieth_rkey']:08x}":
            fail(f"{name}: tshark ieth = {r.get('infiniband.ieth')!r}")
    return len(vectors)


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    tool = sys.argv[1]
    with tempfile.TemporaryDirectory(prefix=f"wire-interop-{os.getpid()}-") as tmp:
        pcap = os.path.join(tmp, "vectors.pcap")
        out = subprocess.run([tool, "gen", pcap], capture_output=True, text=True,
                             check=True).stdout
        vectors = [json.loads(line) for line in out.splitlines()]
        if len(vectors) < 40:
            fail(f"only {len(vectors)} vectors")
        opcodes = {v["fields"]["opcode"] for v in vectors}
        n6 = sum(1 for v in vectors if v["fields"]["ipv6"])
        print(f"{len(vectors)} vectors ({n6} over IPv6), {len(opcodes)} distinct opcodes")
        if n6 * 2 != len(vectors):
            fail(f"{n6} of {len(vectors)} vectors over IPv6, want half")

        # 2. byte-identical to scapy
        scapy_hex = []
        same = 0
        for v in vectors:
            ours = v["hex"]
            theirs = scapy_frame(v["fields"]).hex()
            scapy_hex.append(theirs)
            if ours == theirs:
                same += 1
            else:
                fail(f"{v['name']}: bytes differ\n  ours  {ours}\n  scapy {theirs}")
        print(f"scapy: {same}/{len(vectors)} frames byte-identical (ICRC included)")

        # 3. our parser on scapy's frames, then with a broken ICRC
        parsed = run_parse(tool, scapy_hex)
        for v, got in zip(vectors, parsed):
            compare_fields(v["name"], v["fields"], got)
        corrupted = []
        for h in scapy_hex:
            b = bytearray.fromhex(h)
            b[-1] ^= 0x01
            corrupted.append(b.hex())
        for v, got in zip(vectors, run_parse(tool, corrupted)):
            # A non-zero UDP checksum also covers the ICRC and is checked first.
            want = "BadUdpChecksum" if v["fields"]["udp_checksum"] else "BadIcrc"
            if got.get("error") != want:
                fail(f"{v['name']}: flipped ICRC bit gave {got.get('error')}, want {want}")
        print(f"parser: {len(parsed)} scapy frames decoded, {len(corrupted)} "
              f"corrupted frames rejected")

        # 4. tshark on our pcap
        n = check_tshark(vectors, tshark_rows(pcap))
        print(f"tshark: {n} packets checked")

    if failures:
        print(f"{len(failures)} failure(s)")
        return 1
    print("OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
