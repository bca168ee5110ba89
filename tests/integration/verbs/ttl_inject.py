#!/usr/bin/python3
"""Writes RoCEv2 frames that carry TTL loop signals into the veth end facing
a uroced device's af_packet port (used by netns_ttl.sh; run in the
namespace of that veth end).

  ttl_inject.py IFACE PCAP OWN_MAC OWN_IP PEER_MAC PEER_IP

PCAP holds one RoCEv2 frame the peer sent to the device (captured on the
device's side of the veth while a QP of the device was in use). Steps:
  own      a SEND with the device's own source MAC and IP ("our packet
           came back"), TTL 60, to an unused QPN;
  replay   the captured frame again with TTL 64, then at once with TTL 60:
           the same (source, QPN, PSN) with a lower TTL (the TTL is masked
           out of the ICRC, so only the IPv4 header checksum changes);
  outlier  two SENDs from the peer's address to an unused QPN with fresh
           PSNs, TTL 50 then TTL 100 (the peer's usual TTL is 64), sent
           1.1 s after the replay so that the outlier kind is logged again.
Prints one "name ..." line per step. Exit 0; 1 when nothing was captured
within 20 s; 2 on bad usage."""
import struct
import socket
import sys
import time

from scapy.all import Ether, IP, UDP, Raw, raw, rdpcap
from scapy.contrib.roce import BTH

UNUSED_QPN = 0xabcde0  # never allocated by a daemon of the test


def ip_checksum(hdr):
    s = 0
    for i in range(0, len(hdr), 2):
        s += (hdr[i] << 8) | hdr[i + 1]
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return (~s) & 0xffff


def with_ttl(frame, ttl):
    """The frame with IPv4 TTL `ttl` and a fixed header checksum."""
    f = bytearray(frame)
    ihl = (f[14] & 0x0f) * 4
    f[14 + 8] = ttl
    f[14 + 10:14 + 12] = b"\x00\x00"
    f[14 + 10:14 + 12] = struct.pack("!H", ip_checksum(bytes(f[14:14 + ihl])))
    return bytes(f)


def send_only(src_mac, dst_mac, src_ip, dst_ip, ttl, qpn, psn):
    """An RC SEND Only (opcode 4) with a 16-byte payload; scapy's BTH
    computes the ICRC. DSCP 24 (priority 3), UDP checksum 0."""
    p = (Ether(src=src_mac, dst=dst_mac) /
         IP(src=src_ip, dst=dst_ip, tos=24 << 2, ttl=ttl, flags="DF") /
         UDP(sport=49152, dport=4791, chksum=0) /
         BTH(opcode=4, pkey=0xffff, dqpn=qpn, psn=psn) /
         Raw(b"\x5a" * 16))
    return raw(p)


def captured(pcap, secs=20):
    """The first frame of PCAP once the capture wrote it (None after secs)."""
    deadline = time.monotonic() + secs
    while time.monotonic() < deadline:
        try:
            pkts = rdpcap(pcap)
            if len(pkts) > 0:
                return bytes(pkts[0])
        except Exception:  # not written yet, or only partly
            pass
        time.sleep(0.05)
    return None


def main():
    if len(sys.argv) != 7:
        print(__doc__, file=sys.stderr)
        return 2
    iface, pcap, own_mac, own_ip, peer_mac, peer_ip = sys.argv[1:]
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    s.bind((iface, 0))

    s.send(send_only(own_mac, own_mac, own_ip, own_ip, 60, UNUSED_QPN, 1))
    print(f"own src={own_ip} mac={own_mac} ttl=60")

    frame = captured(pcap)
    if frame is None:
        print("replay no_capture")
        return 1
    qpn = int.from_bytes(frame[14 + 20 + 8 + 5:14 + 20 + 8 + 8], "big")
    psn = int.from_bytes(frame[14 + 20 + 8 + 9:14 + 20 + 8 + 12], "big") & 0xffffff
    s.send(with_ttl(frame, 64))
    s.send(with_ttl(frame, 60))
    print(f"replay qpn=0x{qpn:06x} psn={psn} ttl=64,60 captured_ttl={frame[14 + 8]}")

    time.sleep(1.1)
    s.send(send_only(peer_mac, own_mac, peer_ip, own_ip, 50, UNUSED_QPN, 0x100000))
    s.send(send_only(peer_mac, own_mac, peer_ip, own_ip, 100, UNUSED_QPN, 0x100001))
    print("outlier ttl=50,100")
    return 0


if __name__ == "__main__":
    sys.exit(main())
