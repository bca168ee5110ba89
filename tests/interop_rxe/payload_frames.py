#!/usr/bin/python3
"""Writes a pcap of valid RoCEv2 frames whose SEND payloads tshark's
InfiniBand payload heuristics would take for something else: two bytes
that read as an ethertype (IPv4, IPv6, ARP, RoCE, EAPOL) followed by the
pad's zeros look like an IPoIB header. Each SEND from IP_A is answered by
an ACK from IP_B; the ICRC is computed here (IBTA A17.8: over 64 one-bits,
the IPv4 header with TOS, TTL and checksum masked, the UDP header with its
checksum masked, and the BTH with its reserved byte masked), so that
roce_pcap_check accepts every frame.

  payload_frames.py OUT.pcap IP_A IP_B
"""
import struct
import sys
import zlib

from scapy.all import IP, UDP, Ether, Raw, wrpcap

SEND_ONLY, ACKNOWLEDGE = 0x04, 0x11


def roce(src, dst, opcode, body, psn):
    pad = (-len(body)) % 4 if opcode == SEND_ONLY else 0
    bth = bytes([opcode, pad << 4, 0xFF, 0xFF, 0, 0, 0, 0x20,
                 0x80 if opcode == SEND_ONLY else 0,
                 (psn >> 16) & 0xFF, (psn >> 8) & 0xFF, psn & 0xFF])
    pkt = IP(src=src, dst=dst, ttl=64, tos=0x02) / UDP(sport=49152, dport=4791, chksum=0) / Raw(
        bth + body + bytes(pad) + bytes(4))
    raw = bytearray(bytes(pkt))
    masked = bytearray(raw[:-4])
    masked[1] = 0xFF  # TOS
    masked[8] = 0xFF  # TTL
    masked[10:12] = b"\xff\xff"  # IPv4 checksum
    masked[26:28] = b"\xff\xff"  # UDP checksum
    masked[32] = 0xFF  # BTH reserved byte
    raw[-4:] = struct.pack("<I", zlib.crc32(b"\xff" * 8 + bytes(masked)) & 0xFFFFFFFF)
    return Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02") / IP(bytes(raw))


def main():
    out, ip_a, ip_b = sys.argv[1:4]
    frames = []
    for psn, payload in enumerate([b"\x08\x00", b"\x86\xdd", b"\x08\x06", b"\x89\x15", b"\x88\x8e"]):
        frames.append(roce(ip_a, ip_b, SEND_ONLY, payload, psn))
        frames.append(roce(ip_b, ip_a, ACKNOWLEDGE, b"\x00\x00\x00\x01", psn))
    wrpcap(out, frames)


if __name__ == "__main__":
    main()
