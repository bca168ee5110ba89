#include "datapath/wire/icrc.h"

#include <isa-l/crc.h>

#include <algorithm>
#include <cstring>

#include "datapath/wire/byteorder.h"

namespace uroce::wire {

namespace {

constexpr std::size_t kLrhStandIn = 8;

void mask_ipv4(std::uint8_t* ip) {
  ip[1] = 0xff;   // TOS (DSCP + ECN)
  ip[8] = 0xff;   // TTL
  ip[10] = 0xff;  // header checksum
  ip[11] = 0xff;
}

void mask_ipv6(std::uint8_t* ip) {
  ip[0] |= 0x0f;  // traffic class, high nibble (the version nibble stays)
  ip[1] = 0xff;   // traffic class low nibble, flow label
  ip[2] = 0xff;
  ip[3] = 0xff;
  ip[7] = 0xff;  // hop limit
}

// Masks the UDP checksum and BTH byte 4, which follow an IP header of
// kIpSize bytes at `ip`.
template <std::size_t kIpSize>
void mask_udp_bth(std::uint8_t* ip) {
  ip[kIpSize + 6] = 0xff;  // UDP checksum
  ip[kIpSize + 7] = 0xff;
  ip[kIpSize + UdpHdr::kSize + BthHdr::kIcrcMaskedByte] = 0xff;
}

// The ICRC's value over the LRH stand-in and a masked copy of the kPrefix
// header bytes at `ip`. From CRC-32's all-ones initial register, the first
// four 0xff bytes leave the register at zero, and zero bytes leave a zero
// register unchanged: zeros inserted after them do not change the CRC. They
// pad the head to whole 16-byte blocks (64 bytes over IPv4, 80 over IPv6),
// so the folding takes it in one piece, without a tail.
template <std::size_t kIpSize, std::size_t kPrefix>
std::uint32_t head_crc(const std::uint8_t* ip, void (*mask_ip)(std::uint8_t*)) {
  constexpr std::size_t kHead = (kLrhStandIn + kPrefix + 15) / 16 * 16;
  constexpr std::size_t kZeros = kHead - kLrhStandIn - kPrefix;
  alignas(16) std::uint8_t head[kHead];
  std::memset(head, 0xff, 4);
  std::memset(head + 4, 0, kZeros);
  std::memset(head + 4 + kZeros, 0xff, 4);
  std::uint8_t* const copy = head + kLrhStandIn + kZeros;
  std::memcpy(copy, ip, kPrefix);
  mask_ip(copy);
  mask_udp_bth<kIpSize>(copy);
  return crc32_zlib(0, std::span<const std::uint8_t>(head, kHead));
}

// The ICRC of `ip_packet`, masked by `mask_ip` (the IP header's variant
// fields) and mask_udp_bth, the rest taken in place. A packet shorter than
// the masked headers gets the same treatment on what there is (a
// meaningless value, but no read outside the span).
template <std::size_t kIpSize, std::size_t kPrefix>
std::uint32_t masked_icrc(std::span<const std::uint8_t> ip_packet, void (*mask_ip)(std::uint8_t*)) {
  if (ip_packet.size() >= kPrefix) [[likely]] {
    const std::uint32_t crc = head_crc<kIpSize, kPrefix>(ip_packet.data(), mask_ip);
    return crc32_zlib(crc, ip_packet.subspan(kPrefix));
  }
  std::uint8_t head[kLrhStandIn + kPrefix];
  const std::size_t n = ip_packet.size();
  std::memset(head, 0xff, kLrhStandIn);
  std::memcpy(head + kLrhStandIn, ip_packet.data(), n);
  std::uint8_t* ip = head + kLrhStandIn;
  mask_ip(ip);
  mask_udp_bth<kIpSize>(ip);
  return crc32_zlib(0, std::span<const std::uint8_t>(head, kLrhStandIn + n));
}

bool is_ipv6(std::span<const std::uint8_t> ip_packet) {
  return !ip_packet.empty() && (ip_packet[0] >> 4) == 6;
}

std::uint32_t icrc_any(std::span<const std::uint8_t> ip_packet) {
  return is_ipv6(ip_packet) ? compute_icrc_ipv6(ip_packet) : compute_icrc(ip_packet);
}

}  // namespace

std::uint32_t crc32_zlib(std::uint32_t crc, std::span<const std::uint8_t> data) {
  if (data.empty()) return crc;
  return crc32_gzip_refl(crc, data.data(), data.size());
}

std::uint32_t compute_icrc(std::span<const std::uint8_t> ip_packet) {
  return masked_icrc<Ipv4Hdr::kSize, kIcrcMaskedPrefix>(ip_packet, mask_ipv4);
}

std::uint32_t compute_icrc_ipv6(std::span<const std::uint8_t> ip_packet) {
  return masked_icrc<Ipv6Hdr::kSize, kIcrcMaskedPrefixIpv6>(ip_packet, mask_ipv6);
}

std::uint32_t icrc_prefix(const std::uint8_t* ip_packet, bool ipv6) {
  return ipv6 ? head_crc<Ipv6Hdr::kSize, kIcrcMaskedPrefixIpv6>(ip_packet, mask_ipv6)
              : head_crc<Ipv4Hdr::kSize, kIcrcMaskedPrefix>(ip_packet, mask_ipv4);
}

std::uint32_t read_icrc(std::span<const std::uint8_t> ip_packet) {
  if (ip_packet.size() < kIcrcSize) return 0;
  return load_le32(ip_packet.data() + ip_packet.size() - kIcrcSize);
}

bool icrc_ok(std::span<const std::uint8_t> ip_packet) {
  const std::size_t prefix = is_ipv6(ip_packet) ? kIcrcMaskedPrefixIpv6 : kIcrcMaskedPrefix;
  if (ip_packet.size() < prefix + kIcrcSize) return false;
  return icrc_any(ip_packet.first(ip_packet.size() - kIcrcSize)) == read_icrc(ip_packet);
}

void write_icrc(std::span<std::uint8_t> ip_packet) {
  if (ip_packet.size() < kIcrcSize) return;
  const std::size_t body = ip_packet.size() - kIcrcSize;
  store_le32(ip_packet.data() + body,
             icrc_any(std::span<const std::uint8_t>(ip_packet.data(), body)));
}

}  // namespace uroce::wire
