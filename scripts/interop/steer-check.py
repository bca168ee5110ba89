#!/usr/bin/python3
"""Whether a peer's RoCEv2 frames reached the engine lcore owning their QP.

One phase of scripts/interop/steer.sh: a peer sent RC traffic to QPs on both
shards of a uroced whose port spreads frames over its queues with RSS. This
reads the device's status before and after the phase (uroce-ctl status
--json) and the phase's capture (the frames as they went to the port), and
checks two things, independently:

  the engine's own account: the frames each shard's queue received
  (shards[].queue_frames) and those it handed to the owning shard
  (shards[].rx_handoff, handed_in);
  the capture, hashed here: for every RoCEv2 frame from SRC_IP to DST_IP,
  the Toeplitz hash of (src, dst, sport, dport) under the key the port
  reports (port_info.rss_key), the queue the programmed redirection table
  names for it, and the shard owning its destination QP. The table and the
  owner follow datapath/port/rss.h: RETA entry i names queue
  reta_queue(i) = (i & 127) % queues, QP q lives on shard
  shard_of_qpn(q) = (q & 127) % queues, and the NIC indexes the table by
  hash & (reta_size - 1).

  steer-check.py BEFORE.json AFTER.json CAPTURE.pcap SRC_IP DST_IP steered|unsteered

The shards' hand-offs also count ARP and IPv6 ND frames that landed on a
queue other than shard 0's (they are served there; IPv6 frames hash by
address): at most the device's rx_arp + rx_nd of the phase.

steered (the peer chooses its source ports, device key steer_src_port): every
captured frame must hash to its owner's queue, every queue must have
received frames, and the shards may have handed off at most 1 % of them
beyond those ARP/ND frames.
unsteered (rxe, which picks its own ports): the shards may have handed off
no more frames than the capture says landed on the wrong queue (plus the
ARP/ND frames), and some if any did. Prints one line of figures; exits 1
with the reason on a failed check.
"""
import json
import subprocess
import sys

# Microsoft's RSS verification suite, IPv4 with TCP ports (the first row):
# checks the hash below before it judges anything with it.
VERIFY_KEY = bytes.fromhex("6d5a56da255b0ec24167253d43a38fb0d0ca2bcbae7b30b477cb2da38030f20c"
                           "6a42b73bbeac01fa")
VERIFY = (("66.9.149.187", "161.142.100.80", 2794, 1766), 0x51CCC178)


def toeplitz(key, data):
    k = int.from_bytes(key, "big")
    kbits = len(key) * 8
    h = 0
    for i in range(len(data) * 8):
        if (data[i // 8] >> (7 - i % 8)) & 1:
            h ^= (k >> (kbits - 32 - i)) & 0xFFFFFFFF
    return h


def tuple_bytes(src, dst, sport, dport):
    ip = lambda a: bytes(int(x) for x in a.split("."))
    return ip(src) + ip(dst) + sport.to_bytes(2, "big") + dport.to_bytes(2, "big")


def device(path):
    with open(path) as f:
        j = json.load(f)
    devs = [d for d in j["devices"] if d["name"] == "uroce0"]
    if not devs:
        sys.exit(f"steer-check: no device uroce0 in {path}")
    return devs[0]


def fail(msg, figures):
    print(figures)
    print(f"FAIL: {msg}")
    sys.exit(1)


def main():
    if len(sys.argv) != 7 or sys.argv[6] not in ("steered", "unsteered"):
        sys.exit(__doc__)
    before, after, pcap, src, dst, expect = sys.argv[1:]
    if toeplitz(VERIFY_KEY, tuple_bytes(*VERIFY[0])) != VERIFY[1]:
        sys.exit("steer-check: the Toeplitz hash here fails Microsoft's verification vector")
    b, a = device(before), device(after)
    info = a["port_info"]
    queues, reta_size = info["queues"], info["reta_size"]
    if info["rss"] != "programmed" or not info["rss_key"] or reta_size == 0:
        sys.exit(f"steer-check: the port is not programmed: rss {info['rss']}, "
                 f"key '{info['rss_key']}', RETA {reta_size}")
    key = bytes.fromhex(info["rss_key"])
    shards = len(a["shards"])
    delta = {k: [a["shards"][s][k] - b["shards"][s][k] for s in range(shards)]
             for k in ("queue_frames", "rx_handoff", "handed_in")}
    not_roce = sum(a["counters"][k] - b["counters"][k] for k in ("rx_arp", "rx_nd"))

    out = subprocess.run(
        ["tshark", "-r", pcap, "-Y", f"ip.src == {src} && ip.dst == {dst} && udp.dstport == 4791",
         "-T", "fields", "-e", "udp.srcport", "-e", "udp.dstport", "-e", "infiniband.bth.destqp"],
        capture_output=True, text=True, check=True).stdout
    predicted = [0] * queues
    owned = [0] * queues
    elsewhere = 0
    frames = 0
    for line in out.splitlines():
        sport, dport, dqp = line.split("\t")
        h = toeplitz(key, tuple_bytes(src, dst, int(sport), int(dport)))
        queue = ((h & (reta_size - 1)) & 127) % queues
        owner = (int(dqp, 0) & 127) % queues
        frames += 1
        predicted[queue] += 1
        owned[owner] += 1
        if queue != owner:
            elsewhere += 1
    handed = sum(delta["rx_handoff"])
    figures = (f"{frames} RoCE frames {src} -> {dst} (capture: for the QPs of shards "
               f"{'/'.join(map(str, owned))}, hashed to queues "
               f"{'/'.join(map(str, predicted))}, {elsewhere} to a queue not their QP's); "
               f"status: queue_frames +{'/+'.join(map(str, delta['queue_frames']))}, "
               f"handed off +{'/+'.join(map(str, delta['rx_handoff']))}, "
               f"handed in +{'/+'.join(map(str, delta['handed_in']))}, ARP/ND +{not_roce}")
    if frames == 0:
        fail(f"no RoCE frame from {src} to {dst} in the capture", figures)
    if expect == "steered":
        if elsewhere != 0:
            fail(f"{elsewhere} of {frames} steered frames hash to a queue not their QP's",
                 figures)
        if min(owned) == 0 or min(delta["queue_frames"]) == 0:
            fail("a shard's queue received none of the traffic", figures)
        if handed > not_roce + frames // 100:
            fail(f"the shards handed off {handed} frames ({not_roce} ARP/ND at most), over 1 % "
                 f"of {frames} steered frames", figures)
    else:
        if handed > elsewhere + not_roce:
            fail(f"the shards handed off {handed} frames, more than the {elsewhere} the "
                 f"capture hashes to a queue not their QP's and {not_roce} ARP/ND", figures)
        if elsewhere > 0 and handed == 0:
            fail(f"{elsewhere} frames hash to a queue not their QP's, yet none was handed off",
                 figures)
    print(figures)


main()
