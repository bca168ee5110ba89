#!/usr/bin/python3
"""The Homa-like scheduler seen through uroce-ctl (netns_homa.sh).

  homa_check.py sample PREFIX CTL RUN_DIR...
      Until killed, every 0.2 s: `CTL --run-dir RUN_DIR --json qps` for each
      daemon; a reply that holds a connected RC QP (RTR, RTS) is kept as PREFIX.N.json (N:
      the daemon's position), so the files hold each daemon's last view of the
      connection while it carried traffic (perftest destroys its QPs before it
      exits, and the per-QP counters go with them).

  homa_check.py check EXPECT SENDER_QPS RECEIVER_QPS SENDER_STATUS RECEIVER_STATUS
      EXPECT: "scheduled" (both daemons run the scheduler), "sender-only" or
      "receiver-only" (one does). The QPS files are the sampler's, the STATUS
      files `uroce-ctl --json status` after the run. Prints one summary line;
      exit 1 with the reason on stdout when the counters do not show what
      EXPECT says.
"""
import json
import os
import subprocess
import sys
import time


def rc_qp(doc):
    """The connected RC QP (RTR or RTS) of a status document, or None."""
    for q in doc.get("qps", []):
        if q.get("type") == "RC" and q.get("state") in ("RTR", "RTS"):
            return q
    return None


def sample(prefix, ctl, runs):
    while True:
        for i, run in enumerate(runs):
            try:
                out = subprocess.run([ctl, "--run-dir", run, "--json", "qps"],
                                     capture_output=True, text=True, timeout=5).stdout
                doc = json.loads(out)
            except (subprocess.TimeoutExpired, json.JSONDecodeError):
                continue
            if rc_qp(doc) is None:
                continue
            tmp = f"{prefix}.{i}.json.tmp"
            with open(tmp, "w") as f:
                f.write(out)
            os.replace(tmp, f"{prefix}.{i}.json")
        time.sleep(0.2)


def load(path):
    with open(path) as f:
        return json.load(f)


class Failed(Exception):
    pass


def need(cond, why):
    if not cond:
        raise Failed(why)


def check(expect, sender_qps, receiver_qps, sender_status, receiver_status):
    sq, rq = rc_qp(load(sender_qps)), rc_qp(load(receiver_qps))
    need(sq is not None and rq is not None, "no connected RC QP was sampled on both daemons")
    sc = load(sender_status)["devices"][0]["counters"]
    rc = load(receiver_status)["devices"][0]["counters"]
    sh = sq["homa"]
    for side, c in (("sender", sc), ("receiver", rc)):
        need(c["homa_rx_bad"] == 0, f"{side}: homa_rx_bad {c['homa_rx_bad']}")
    need(sh["fallbacks"] == 0, f"sender QP: {sh['fallbacks']} fallbacks")
    if expect == "scheduled":
        need(sq["homa_peer"] and rq["homa_peer"],
             f"homa_peer sender {sq['homa_peer']} receiver {rq['homa_peer']} (both must be true)")
        need(sh["gated"] > 0 and sh["mlen"] > 0 and sh["grants"] > 0,
             f"sender QP: gated {sh['gated']} mlen {sh['mlen']} grants {sh['grants']}")
        need(rc["homa_tx_grants"] > 0 and rc["homa_rx_mlen"] > 0,
             f"receiver: GRANTs sent {rc['homa_tx_grants']}, MLENs received {rc['homa_rx_mlen']}")
        need(sc["homa_rx_grants"] > 0, f"sender: GRANTs received {sc['homa_rx_grants']}")
        need(sc["homa_peers"] >= 1 and rc["homa_peers"] >= 1,
             f"homa_peers sender {sc['homa_peers']} receiver {rc['homa_peers']}")
        print(f"scheduled: sender qpn {sq['qpn']} gated {sh['gated']} mlen {sh['mlen']} "
              f"wait_grant {sh['wait_grant']} grants {sh['grants']} timeouts {sh['timeouts']} "
              f"fallbacks 0; receiver GRANTs sent {rc['homa_tx_grants']}, "
              f"MLENs received {rc['homa_rx_mlen']}")
        return
    on, off = (sq, rq) if expect == "sender-only" else (rq, sq)
    on_c = sc if expect == "sender-only" else rc
    need(not sq["homa_peer"] and not rq["homa_peer"],
         f"homa_peer sender {sq['homa_peer']} receiver {rq['homa_peer']} (both must be false)")
    need(on["homa"]["gated"] == 0 and on["homa"]["mlen"] == 0,
         f"the scheduler's side gated {on['homa']['gated']} messages, sent {on['homa']['mlen']} MLENs")
    need(on_c["homa_peers"] == 0 and on_c["homa_tx_grants"] == 0,
         f"the scheduler's side: homa_peers {on_c['homa_peers']}, GRANTs sent "
         f"{on_c['homa_tx_grants']}")
    need(on_c["homa_tx_cutoffs"] >= 1, "the scheduler's side sent no probe (homa_tx_cutoffs 0)")
    # The probe reached the other QP, whose RC transport dropped it.
    dropped = off["transport"]["drop_not_rc"]
    need(dropped >= 1, "the plain side's QP counted no dropped probe (drop_not_rc 0)")
    print(f"{expect}: plain RC both ways; the scheduler's device has sent "
          f"{on_c['homa_tx_cutoffs']} probe(s) so far, the plain QP dropped {dropped} "
          f"(drop_not_rc)")


def main(argv):
    if len(argv) >= 4 and argv[1] == "sample":
        sample(argv[2], argv[3], argv[4:])
        return 0
    if len(argv) == 7 and argv[1] == "check" and argv[2] in ("scheduled", "sender-only",
                                                             "receiver-only"):
        try:
            check(*argv[2:])
        except Failed as e:
            print(e)
            return 1
        except (OSError, KeyError, json.JSONDecodeError) as e:
            print(f"unreadable status: {e!r}")
            return 1
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
