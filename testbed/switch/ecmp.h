// Equal-cost multipath in the testbed's switches: which member of a route's
// port group a packet leaves by.
//
// A packet carries the entropy of its flow (SwitchPacket::entropy): for an
// engine frame a hash of its IPv4/UDP 5-tuple (source and destination
// address, UDP ports, protocol), so the UDP source port a RoCEv2 sender
// varies is what moves a packet to another path; for a constant-rate flow a
// hash of its index. Each switch mixes it with its own salt before taking
// it modulo the group's size, as real switches seed their hash per box:
// without a salt every tier would pick the same member index for a flow
// (polarisation), and a two-tier fabric would use only some of its paths.
//
// Pure functions: the same entropy and salt always give the same member.
#pragma once

#include <cstdint>

namespace uroce::testbed {

// Ports in one route group: at most a 16-way ECMP (the switch model stores
// groups inline).
inline constexpr std::uint32_t kMaxRoutePorts = 16;

// A 64-bit finaliser (splitmix64's): every input bit moves every output bit.
constexpr std::uint64_t ecmp_mix(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// The entropy of an IPv4/UDP 5-tuple (addresses and ports as numbers).
constexpr std::uint32_t five_tuple_entropy(std::uint32_t src_ip, std::uint32_t dst_ip,
                                           std::uint16_t src_port, std::uint16_t dst_port,
                                           std::uint8_t proto) {
  const std::uint64_t a = (std::uint64_t{src_ip} << 32) | dst_ip;
  const std::uint64_t b = (std::uint64_t{src_port} << 24) | (std::uint64_t{dst_port} << 8) | proto;
  return static_cast<std::uint32_t>(ecmp_mix(ecmp_mix(a) ^ b));
}

// The member (0..n-1) of an n-port group a packet of `entropy` takes at a
// switch salted `salt`. Precondition: n >= 1.
constexpr std::uint32_t ecmp_member(std::uint32_t entropy, std::uint64_t salt, std::uint32_t n) {
  const std::uint64_t h = ecmp_mix(salt ^ entropy);
  return static_cast<std::uint32_t>(((h >> 32) * n) >> 32);
}

}  // namespace uroce::testbed
