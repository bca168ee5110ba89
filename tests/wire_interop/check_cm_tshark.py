#!/usr/bin/python3
"""CM MADs against tshark: cm_vectors writes REQ, MRA, REP, RTU, REJ, DREQ
and DREP in GSI datagrams (datapath/cm/messages.cpp, datapath/wire/cm_*.h);
tshark (Wireshark's InfiniBand dissector, an independent decoder) must
decode every field back to the value it was built from.

Usage: check_cm_tshark.py CM_VECTORS
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

TSHARK = shutil.which("tshark")
if TSHARK is None:
    sys.exit("FAIL: tshark is required")

# JSON key -> tshark field, per message ("*" for every message).
FIELDS = {
    "*": {"attr": "infiniband.mad.attributeid", "class": "infiniband.mad.mgmtclass"},
    "req": {
        "tid": "infiniband.mad.transactionid",
        "dport": "infiniband.cm.req.serviceid.dport",
        "localqpn": "infiniband.cm.req.localqpn",
        "startpsn": "infiniband.cm.req.startpsn",
        "respres": "infiniband.cm.req.responderres",
        "initdepth": "infiniband.cm.req.initdepth",
        "remoteresptout": "infiniband.cm.req.remoteresptout",
        "localresptout": "infiniband.cm.req.localresptout",
        "maxcmretr": "infiniband.cm.req.maxcmretr",
        "pppmtu": "infiniband.cm.req.pppmtu",
        "rnrretrcount": "infiniband.cm.req.rnrretrcount",
        "sport": "infiniband.cm.req.ip_cm.sport",
        "sip4": "infiniband.cm.req.ip_cm.sip4",
        "dip4": "infiniband.cm.req.ip_cm.dip4",
    },
    # tshark 4.0 names no MRA field but the attribute.
    "mra": {},
    "rep": {
        "remotecommid": "infiniband.cm.rep.remotecommid",
        "localqpn": "infiniband.cm.rep.localqpn",
        "startpsn": "infiniband.cm.rep.startpsn",
        "respres": "infiniband.cm.rep.respres",
        "initdepth": "infiniband.cm.rep.initdepth",
    },
    "rtu": {
        "localcommid": "infiniband.cm.rtu.localcommid",
        "remotecommid": "infiniband.cm.rtu.remotecommid",
    },
    "rej": {
        "localcommid": "infiniband.cm.rej.localcommid",
        "remotecommid": "infiniband.cm.rej.remotecommid",
        "reason": "infiniband.cm.rej.reason",
        "msgrej": "infiniband.cm.rej.msgrej",
    },
    "dreq": {
        "localcommid": "infiniband.cm.dreq.localcommid",
        "remotecommid": "infiniband.cm.dreq.remotecommid",
    },
    "drep": {
        "localcommid": "infiniband.cm.drsp.localcommid",
        "remotecommid": "infiniband.cm.drsp.remotecommid",
    },
}


def as_value(s):
    """tshark prints numbers in decimal or 0x-hex; addresses as text."""
    try:
        return int(s, 0)
    except ValueError:
        return s


def main():
    gen = sys.argv[1]
    with tempfile.TemporaryDirectory() as d:
        pcap = os.path.join(d, "cm.pcap")
        out = subprocess.run([gen, pcap], check=True, capture_output=True, text=True).stdout
        vectors = [json.loads(line) for line in out.splitlines()]
        names = sorted({f for m in FIELDS.values() for f in m.values()})
        cmd = [TSHARK, "-r", pcap, "-T", "fields", "-E", "separator=\t", "-E", "occurrence=f"]
        for n in names:
            cmd += ["-e", n]
        rows = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout.splitlines()
    if len(rows) != len(vectors):
        sys.exit(f"FAIL: tshark read {len(rows)} frames, we wrote {len(vectors)}")
    failures = 0
    for v, row in zip(vectors, rows):
        got = dict(zip(names, row.split("\t")))
        want = dict(v)
        want["class"] = 7
        for key, field in {**FIELDS["*"], **FIELDS[v["msg"]]}.items():
            if as_value(got.get(field, "")) != want[key]:
                print(f"FAIL: {v['msg']}: {field} = {got.get(field)!r}, want {want[key]!r}")
                failures += 1
        print(f"{v['msg']}: {len(FIELDS[v['msg']]) + 2} fields decoded as built")
    if failures:
        sys.exit(f"FAIL: {failures} field(s) differ")
    print(f"PASS: tshark decodes {len(vectors)} CM MADs field for field")


if __name__ == "__main__":
    main()
