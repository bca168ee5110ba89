// How RoCEv2 packets reach the lcore that owns their destination QP, with
// nothing but plain RSS: no flow rules, no rte_flow, no per-QP steering
// entries. Like Machnet's "least common denominator" vNIC, the only NIC
// feature assumed is a Toeplitz hash over (IP src, IP dst, UDP sport, UDP
// dport) with a settable 40-byte key and redirection table (RETA), which
// every multi-queue NIC and most virtual NICs offer.
//
// The scheme, with N engine lcores each owning one RX queue per port:
//   1. uroced programs kRssKey and a RETA whose entry i names queue
//      reta_queue(i, N) = (i & 127) % N. The RETA size may be any power of
//      two >= 128; the NIC indexes it by hash & (size - 1), so only the low
//      kSteerBits bits of the hash choose the queue.
//   2. The engine allocates QPNs so that QP q lives on shard
//      shard_of_qpn(q, N) = (q & 127) % N.
//   3. A sender picks the UDP source port (per connected QP, or per UD/DC
//      packet) so that the low kSteerBits bits of the receiver's hash equal
//      the low kSteerBits bits of the destination QPN. Then
//      RETA[hash & (size - 1)] = (dqpn & 127) % N = shard_of_qpn(dqpn, N):
//      the packet lands on the owner's queue whatever the receiver's N and
//      RETA size, which the sender never learns.
// The receiver still checks the QPN: a packet on the wrong lcore (a peer
// that does not steer, or a port no search could find) is handed off to the
// owner, so steering is a fast path, never a correctness condition.
//
// Source ports stay in 0xC000..0xFFFF, the range RoCEv2 senders customarily
// use: 14 free bits for 7 target bits. Toeplitz is linear over GF(2): the
// hash is the address part XOR one term per set port bit, so a port's term
// costs two table look-ups, not a full hash. Seven free bits whose terms
// are independent ("steer bits"; kRssKey has them for both tuple layouts)
// reach every target in 128 combinations, exactly one each, so a 128-entry
// table indexed by the missing term gives the steer bits: one hash and a
// few look-ups per port. The other seven free bits start out as a fold of
// the local QPN and are never changed by the steering, so
// different QPs to the same peer QP spread over its 128 matching ports
// (ECMP paths).
//
// With N > 128 queues, queues 128.. are never named; with N not dividing
// 128, the first 128 % N queues get one more of the 128 buckets.
#pragma once

#include <array>
#include <cassert>
#include <cstdint>

#include "datapath/wire/addr.h"

namespace uroce::port {

// The widely used default RSS key (Microsoft's RSS verification key, the
// default of several NIC drivers). 40 bytes covers an IPv6 4-tuple: 36
// bytes of input need 36 + 4 bytes of key. Aligned to 4 because
// rte_softrss reads it as 32-bit words.
alignas(4) inline constexpr std::array<std::uint8_t, 40> kRssKey = {
    0x6d, 0x5a, 0x56, 0xda, 0x25, 0x5b, 0x0e, 0xc2, 0x41, 0x67, 0x25, 0x3d, 0x43, 0xa3,
    0x8f, 0xb0, 0xd0, 0xca, 0x2b, 0xcb, 0xae, 0x7b, 0x30, 0xb4, 0x77, 0xcb, 0x2d, 0xa3,
    0x80, 0x30, 0xf2, 0x0c, 0x6a, 0x42, 0xb7, 0x3b, 0xbe, 0xac, 0x01, 0xfa,
};

// Low hash bits a sender controls, and the matching QPN bits: 128 buckets,
// the smallest RETA size the scheme allows.
inline constexpr unsigned kSteerBits = 7;
inline constexpr std::uint32_t kSteerMask = (1u << kSteerBits) - 1;

// RoCEv2 source ports a steering sender uses: kSteerPortBase..0xFFFF, the
// low kSteerPortFreeBits bits free.
inline constexpr std::uint16_t kSteerPortBase = 0xC000;
inline constexpr unsigned kSteerPortFreeBits = 14;

// The engine shard (of `shards`, >= 1) that owns QP `qpn`.
constexpr std::uint16_t shard_of_qpn(std::uint32_t qpn, std::uint16_t shards) {
  assert(shards >= 1);
  return static_cast<std::uint16_t>((qpn & kSteerMask) % shards);
}

// The queue (of `queues`, >= 1) that RETA entry `entry` names; the same
// function of the low kSteerBits bits as shard_of_qpn, which is the point.
constexpr std::uint16_t reta_queue(std::uint32_t entry, std::uint16_t queues) {
  assert(queues >= 1);
  return static_cast<std::uint16_t>((entry & kSteerMask) % queues);
}

// The 32-bit Toeplitz hash over kRssKey a NIC computes for a UDP packet
// from src:sport to dst:dport (input order: src address, dst address,
// sport, dport, each in network byte order; the order of Microsoft's RSS
// verification suite). Computed by DPDK's rte_softrss.
std::uint32_t rss_hash_v4(wire::Ipv4Addr src, wire::Ipv4Addr dst, std::uint16_t sport,
                          std::uint16_t dport);
std::uint32_t rss_hash_v6(const wire::Ipv6Addr& src, const wire::Ipv6Addr& dst, std::uint16_t sport,
                          std::uint16_t dport);

// The UDP source port, in 0xC000..0xFFFF, for a RoCEv2 packet (destination
// port 4791) from QP `local_qpn` at `src` to QP `dest_qpn` at `dst`, chosen
// so that rss_hash(src, dst, port, 4791) & kSteerMask ==
// dest_qpn & kSteerMask. The same inputs always give the same port. If no
// port matches (impossible for kRssKey: only a key whose 14 port
// terms did not span the 7 target bits could cause it), the start port is
// returned: the receiver then hands the packet off, slower but correct.
std::uint16_t steered_src_port_v4(wire::Ipv4Addr src, wire::Ipv4Addr dst, std::uint32_t local_qpn,
                                  std::uint32_t dest_qpn);
std::uint16_t steered_src_port_v6(const wire::Ipv6Addr& src, const wire::Ipv6Addr& dst,
                                  std::uint32_t local_qpn, std::uint32_t dest_qpn);

// Path `path` (0..127) of a connection whose own UDP source port is `base`
// (docs/lossy.md, "Spraying"): the ECMP entropy of a selective-repeat
// connection that sprays its packets over several ports. Path 0 is `base`;
// path i is base XOR d_i, where d_i sets spread bits (the bits of i) and the
// steer bits whose Toeplitz term cancels theirs, so d_i's term is 0: every
// path of a connection gives the receiver the same low kSteerBits hash bits
// as `base`, hence the same RX queue (the owner's lcore when `base` was
// steered). Only free port bits change, so a port in kSteerPortBase..0xFFFF
// stays there, and distinct paths give distinct ports. `ipv6`: the tuple
// layout the peer hashes.
std::uint16_t path_src_port(std::uint16_t base, std::uint32_t path, bool ipv6);

}  // namespace uroce::port
