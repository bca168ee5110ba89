#include "datapath/port/rss.h"

#include <rte_ip.h>
#include <rte_thash.h>

#include <bit>
#include <cstring>

#include "datapath/wire/udp.h"

namespace uroce::port {
namespace {

// rte_softrss reads the tuple as 32-bit words. DPDK's tuple structs fix the
// layout and byte order it expects (host order, ports in one word); copying
// the struct into words gives rte_softrss its input without reading the
// union's 16-bit port members through a 32-bit pointer.
template <typename Tuple>
std::uint32_t softrss(const Tuple& tuple) {
  static_assert(sizeof(Tuple) % 4 == 0);
  std::array<std::uint32_t, sizeof(Tuple) / 4> words;
  std::memcpy(words.data(), &tuple, sizeof(Tuple));
  return rte_softrss(words.data(), static_cast<std::uint32_t>(words.size()), kRssKey.data());
}

// The whole tuple, ports included, is hashed; the key must reach one word
// past its end.
static_assert(sizeof(rte_ipv4_tuple) / 4 == RTE_THASH_V4_L4_LEN);
static_assert(sizeof(rte_ipv6_tuple) / 4 == RTE_THASH_V6_L4_LEN);
static_assert(sizeof(rte_ipv6_tuple) + 4 <= kRssKey.size());

// What the search needs of one address family (the source port sits at a
// different key offset in the IPv4 and IPv6 tuples). Toeplitz is linear
// over GF(2), so for any addresses and destination port
//   (hash(p) ^ hash(0)) & kSteerMask == term(p) == hi[p >> 8] ^ lo[p & 0xff],
// and the term of a port alone is the hash of a tuple that is zero but for
// that port.
//
// Of the 14 free port bits, the "steer bits" are 7 whose terms are linearly
// independent (chosen greedily from bit 0 up): their 128 combinations reach
// every 7-bit target exactly once, so a table indexed by the term gives the
// combination. The other 7 free bits, the "spread bits", never change the
// target-matching and carry the local QPN.
struct PortTerms {
  // No combination of steer bits has this term (only with fewer than 7 steer
  // bits; a combination uses port bits below 14 only, so it is never this).
  static constexpr std::uint16_t kNone = 0xffff;
  std::array<std::uint8_t, 256> hi{};
  std::array<std::uint8_t, 256> lo{};
  // steer_for[t]: the steer-bit combination whose term is t, or kNone.
  std::array<std::uint16_t, 128> steer_for{};
  // spread[v]: the bits of v deposited into the spread bits, in order.
  std::array<std::uint16_t, 128> spread{};

  std::uint32_t term(std::uint32_t port) const { return hi[port >> 8] ^ lo[port & 0xff]; }
};

// The bits of `v` placed, lowest first, at the positions listed in `bits`.
using FreeBitList = std::array<std::uint8_t, kSteerPortFreeBits>;

std::uint16_t deposit(std::uint32_t v, const FreeBitList& bits, unsigned count) {
  std::uint32_t out = 0;
  for (unsigned k = 0; k < count; ++k) out |= ((v >> k) & 1u) << bits[k];
  return static_cast<std::uint16_t>(out);
}

template <typename HashOfPort>
PortTerms make_port_terms(HashOfPort hash_of_port) {
  PortTerms t;
  for (std::uint32_t b = 0; b < 256; ++b) {
    t.hi[b] =
        static_cast<std::uint8_t>(hash_of_port(static_cast<std::uint16_t>(b << 8)) & kSteerMask);
    t.lo[b] = static_cast<std::uint8_t>(hash_of_port(static_cast<std::uint16_t>(b)) & kSteerMask);
  }
  // Gaussian elimination over GF(2): basis[k] is the kept vector whose
  // highest set bit is k (0 when none is kept yet).
  std::array<std::uint32_t, kSteerBits> basis{};
  FreeBitList steer_bits{}, spread_bits{};
  unsigned n_steer = 0, n_spread = 0;  // n_steer + n_spread == kSteerPortFreeBits
  for (std::uint8_t bit = 0; bit < kSteerPortFreeBits; ++bit) {
    std::uint32_t v = t.term(1u << bit);
    for (int k = kSteerBits - 1; k >= 0; --k) {
      if (((v >> k) & 1u) != 0 && basis[k] != 0) v ^= basis[k];
    }
    if (v != 0) {  // independent of the steer bits so far
      basis[std::bit_width(v) - 1] = v;
      steer_bits[n_steer++] = bit;
    } else {
      spread_bits[n_spread++] = bit;
    }
  }
  // At most 7 vectors of 7 bits are independent, so n_spread >= 7. With
  // fewer than 7 steer bits (not so for kRssKey) some terms have no
  // combination; the caller then keeps its start port.
  static_assert(kSteerPortFreeBits >= 2 * kSteerBits);
  t.steer_for.fill(PortTerms::kNone);
  for (std::uint32_t m = 0; m <= kSteerMask; ++m) {
    const std::uint16_t steer = deposit(m, steer_bits, n_steer);
    t.steer_for[t.term(steer)] = steer;
    t.spread[m] = deposit(m, spread_bits, kSteerBits);
  }
  return t;
}

const PortTerms& v4_port_terms() {
  static const PortTerms terms =
      make_port_terms([](std::uint16_t p) { return rss_hash_v4({}, {}, p, 0); });
  return terms;
}

const PortTerms& v6_port_terms() {
  static const PortTerms terms =
      make_port_terms([](std::uint16_t p) { return rss_hash_v6({}, {}, p, 0); });
  return terms;
}

// `base_hash` is the hash with source port 0. The start port has the local
// QPN's 24 bits XOR-folded to 7 in its spread bits (one-to-one on the QPNs
// of any 128-aligned range, so consecutive or strided QPs get distinct
// ports) and zero steer bits; the steer bits then add the term still
// missing (terms add by XOR), found in one lookup: the one port of that
// start whose hash matches when there are 7 steer bits.
std::uint16_t search_port(std::uint32_t base_hash, std::uint32_t local_qpn, std::uint32_t dest_qpn,
                          const PortTerms& terms) {
  const std::uint32_t need = (base_hash ^ dest_qpn) & kSteerMask;
  const std::uint32_t fold =
      (local_qpn ^ (local_qpn >> 7) ^ (local_qpn >> 14) ^ (local_qpn >> 21)) & kSteerMask;
  const std::uint32_t start = kSteerPortBase | terms.spread[fold];
  const std::uint16_t steer = terms.steer_for[need ^ terms.term(start)];
  return static_cast<std::uint16_t>(steer == PortTerms::kNone ? start : start ^ steer);
}

}  // namespace

std::uint32_t rss_hash_v4(wire::Ipv4Addr src, wire::Ipv4Addr dst, std::uint16_t sport,
                          std::uint16_t dport) {
  rte_ipv4_tuple t{};
  t.src_addr = src.v;  // Ipv4Addr holds host order, as the tuple wants
  t.dst_addr = dst.v;
  t.sport = sport;
  t.dport = dport;
  return softrss(t);
}

std::uint32_t rss_hash_v6(const wire::Ipv6Addr& src, const wire::Ipv6Addr& dst, std::uint16_t sport,
                          std::uint16_t dport) {
  // rte_thash_load_v6_addrs takes the addresses as they are in a header
  // (network order, like Ipv6Addr) and turns each 4-byte chunk to host order.
  rte_ipv6_hdr hdr{};
  std::memcpy(hdr.src_addr, src.b.data(), sizeof(hdr.src_addr));
  std::memcpy(hdr.dst_addr, dst.b.data(), sizeof(hdr.dst_addr));
  rte_thash_tuple t{};
  rte_thash_load_v6_addrs(&hdr, &t);
  t.v6.sport = sport;
  t.v6.dport = dport;
  return softrss(t.v6);
}

std::uint16_t steered_src_port_v4(wire::Ipv4Addr src, wire::Ipv4Addr dst, std::uint32_t local_qpn,
                                  std::uint32_t dest_qpn) {
  return search_port(rss_hash_v4(src, dst, 0, wire::kRoceV2Port), local_qpn, dest_qpn,
                     v4_port_terms());
}

std::uint16_t steered_src_port_v6(const wire::Ipv6Addr& src, const wire::Ipv6Addr& dst,
                                  std::uint32_t local_qpn, std::uint32_t dest_qpn) {
  return search_port(rss_hash_v6(src, dst, 0, wire::kRoceV2Port), local_qpn, dest_qpn,
                     v6_port_terms());
}

std::uint16_t path_src_port(std::uint16_t base, std::uint32_t path, bool ipv6) {
  const PortTerms& terms = ipv6 ? v6_port_terms() : v4_port_terms();
  const std::uint16_t spread = terms.spread[path & kSteerMask];
  const std::uint16_t steer = terms.steer_for[terms.term(spread)];
  // Without a cancelling combination (not so for kRssKey) the spread bits
  // alone still give a distinct port; the receiver hands off what lands
  // elsewhere.
  const std::uint16_t d = steer == PortTerms::kNone ? spread : spread ^ steer;
  return static_cast<std::uint16_t>(base ^ d);
}

}  // namespace uroce::port
