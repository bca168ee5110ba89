#!/usr/bin/python3
"""Judges selective repeat (docs/lossy.md) from two daemons' status.

  lossy_check.py sr SENDER.json RECEIVER.json
      Both devices negotiated selective repeat (sr_connections) and used it
      under the injected loss: the receiver dropped frames (rx_impair_drop),
      held packets beyond a gap and sent SACKs; the sender received SACKs
      and sent lost packets again alone (sr_tx_resends); no HELLO was bad.
  lossy_check.py spray SENDER.json RECEIVER.json
      As sr, and the sender sprayed its packets over several UDP source
      ports (spray_paths, docs/lossy.md "Spraying"): sr_spray_tx counted, and
      the injected losses were charged to paths (sr_spray_losses).
  lossy_check.py read READER.json RESPONDER.json
      Both devices negotiated selective repeat, and the reader (the device
      whose requester READs, and whose injected drops hit the READ
      responses) placed responses out of order (sr_rd_placed) and asked
      again for missing responses alone (sr_rd_rereqs, sr_rd_rereq_psns;
      docs/lossy.md "READ responses").
  lossy_check.py dc A.json B.json
      DC (docs/lossy-dc.md): both devices dropped frames, and their DC
      streams recovered losses with selective repeat (the device's dc.sr:
      tail-loss probes or packets sent again alone) and sprayed (spray_paths:
      sr_spray_tx and sr_spray_acks on both), no RC connection was involved
      (sr_connections 0 on both).
  lossy_check.py plain ON.json OFF.json CONNECTIONS
      One device with lossy on, the other off: no connection negotiated it,
      the device that has it on probed, at most 4 times for each of its
      CONNECTIONS RC connections, and was never answered; the other counted
      nothing of it.
  lossy_check.py show STATUS.json
      Prints the device's selective-repeat use and frames sent (for the
      measurements of netns_lossy.sh --measure).

The JSON files are `uroce-ctl --json status` outputs; the counters are the
first device's (the daemons have one each). Prints what it found; exits 1
with the reason on stderr when a check fails.
"""
import json
import sys

MAX_PROBES = 4


def counters(path):
    with open(path) as f:
        return json.load(f)["devices"][0]["counters"]


def fail(why):
    print(why, file=sys.stderr)
    sys.exit(1)


def negotiated(sides):
    """Fails unless each (name, counters) side has a selective-repeat connection."""
    for name, c in sides:
        if c["sr_connections"] < 1:
            fail(f"{name}: no connection negotiated selective repeat (sr_connections 0)")


def sr(sender, receiver):
    s, r = counters(sender), counters(receiver)
    negotiated((("sender", s), ("receiver", r)))
    for name, c in (("sender", s), ("receiver", r)):
        if c["sr_hello_bad"] != 0:
            fail(f"{name}: {c['sr_hello_bad']} bad HELLOs")
    if r["rx_impair_drop"] == 0:
        fail("receiver: loss injection dropped nothing (rx_impair_drop 0)")
    if r["sr_rx_held"] == 0 or r["tx_sacks"] == 0:
        fail(f"receiver: nothing held out of order (sr_rx_held {r['sr_rx_held']}, "
             f"tx_sacks {r['tx_sacks']})")
    if s["sr_rx_sacks"] == 0 or s["sr_tx_resends"] == 0:
        fail(f"sender: no SACK or resend (sr_rx_sacks {s['sr_rx_sacks']}, "
             f"sr_tx_resends {s['sr_tx_resends']})")
    print(f"sr: connections {s['sr_connections']}/{r['sr_connections']}; receiver dropped "
          f"{r['rx_impair_drop']}, held {r['sr_rx_held']}, sent {r['tx_sacks']} SACKs; sender "
          f"resent {s['sr_tx_resends']} alone ({s['sr_tx_lost']} deemed lost, "
          f"{s['sr_tx_probes']} tail probes, {s['sr_tx_spurious']} spurious)")


def spray(sender, receiver):
    sr(sender, receiver)
    s = counters(sender)
    if s["sr_spray_tx"] == 0:
        fail("sender: nothing sprayed (sr_spray_tx 0)")
    if s["sr_spray_losses"] == 0:
        fail("sender: no loss charged to a path (sr_spray_losses 0)")
    print(f"spray: sender sprayed {s['sr_spray_tx']} packets, charged {s['sr_spray_losses']} "
          f"losses to paths, began avoiding a path {s['sr_spray_avoided']} times")


def read(reader, responder):
    d, r = counters(reader), counters(responder)
    negotiated((("reader", d), ("responder", r)))
    if d["rx_impair_drop"] == 0:
        fail("reader: loss injection dropped nothing (rx_impair_drop 0)")
    if d["sr_rd_placed"] == 0 or d["sr_rd_rereqs"] == 0:
        fail(f"reader: no READ response placed out of order or asked for again "
             f"(sr_rd_placed {d['sr_rd_placed']}, sr_rd_rereqs {d['sr_rd_rereqs']})")
    print(f"read: connections {d['sr_connections']}/{r['sr_connections']}; reader dropped "
          f"{d['rx_impair_drop']} frames, placed {d['sr_rd_placed']} READ responses out of "
          f"order, asked again {d['sr_rd_rereqs']} times for {d['sr_rd_rereq_psns']} response "
          f"PSNs, dropped {d['sr_rd_dup']} duplicate and {d['sr_rd_drop_window']} unasked "
          f"responses")


def dc(a_path, b_path):
    used = 0
    parts = []
    for name, path in (("a", a_path), ("b", b_path)):
        with open(path) as f:
            dev = json.load(f)["devices"][0]
        c, d = dev["counters"], dev["dc"]["sr"]
        if c["rx_impair_drop"] == 0:
            fail(f"{name}: loss injection dropped nothing (rx_impair_drop 0)")
        if c["sr_connections"] != 0:
            fail(f"{name}: an RC connection negotiated selective repeat ({c['sr_connections']})")
        used += d["sr_tx_probes"] + d["sr_tx_resends"]
        # spray_paths=4 on both: each side's DCI sprays its requests, its
        # DCT's contexts rotate their answers (docs/lossy-dc.md "Spraying").
        if d["sr_spray_tx"] == 0 or d["sr_spray_acks"] == 0:
            fail(f"{name}: DC did not spray (sr_spray_tx {d['sr_spray_tx']}, "
                 f"sr_spray_acks {d['sr_spray_acks']})")
        parts.append(f"{name} dropped {c['rx_impair_drop']}, DC streams probed "
                     f"{d['sr_tx_probes']} and resent {d['sr_tx_resends']} alone, "
                     f"{d['sr_rx_sacks']} SACKs in, {d['tx_sacks']} out, sprayed "
                     f"{d['sr_spray_tx']} packets and {d['sr_spray_acks']} answers")
    if used == 0:
        fail("no DC stream recovered a loss with selective repeat (dc.sr: no probe, no resend)")
    print("dc: " + "; ".join(parts))


def plain(on, off):
    a, b = counters(on), counters(off)
    if a["sr_connections"] != 0 or b["sr_connections"] != 0:
        fail(f"a connection negotiated selective repeat with a peer that has it off "
             f"({a['sr_connections']}, {b['sr_connections']})")
    if a["sr_hello_rx"] != 0:
        fail(f"the device with it on got {a['sr_hello_rx']} HELLOs from one with it off")
    if a["sr_hello_tx_probes"] < 1:
        fail("the device with it on never probed")
    lossy_b = {k: v for k, v in b.items() if k.startswith("sr_") and k != "sr_pool_free"}
    if any(lossy_b.values()) or b["tx_sacks"] != 0:
        fail(f"the device with it off counted selective repeat: {lossy_b}")
    print(f"plain: {a['sr_hello_tx_probes']} probes sent, none answered; nothing negotiated")
    return a["sr_hello_tx_probes"]


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "sr":
        sr(sys.argv[2], sys.argv[3])
    elif len(sys.argv) == 4 and sys.argv[1] == "spray":
        spray(sys.argv[2], sys.argv[3])
    elif len(sys.argv) == 4 and sys.argv[1] == "read":
        read(sys.argv[2], sys.argv[3])
    elif len(sys.argv) == 4 and sys.argv[1] == "dc":
        dc(sys.argv[2], sys.argv[3])
    elif len(sys.argv) == 5 and sys.argv[1] == "plain":
        probes = plain(sys.argv[2], sys.argv[3])
        conns = int(sys.argv[4])
        if probes > MAX_PROBES * conns:
            fail(f"{probes} probes for {conns} connections: more than {MAX_PROBES} each")
    elif len(sys.argv) == 3 and sys.argv[1] == "show":
        c = counters(sys.argv[2])
        print(" ".join(f"{k} {c[k]}" for k in ("sr_connections", "sr_tx_resends", "sr_tx_lost",
                                                  "sr_tx_probes", "sr_rd_placed", "sr_rd_rereqs",
                                                  "sr_rd_rereq_psns", "sr_rd_dup", "tx_frames",
                                                  "rx_impair_drop")))
    else:
        fail(__doc__)


if __name__ == "__main__":
    main()
