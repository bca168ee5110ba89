#include "datapath/wire/icrc.h"

#include <isa-l/crc.h>

#include <algorithm>
#include <cstring>

#include "datapath/wire/byteorder.h"

namespace uroce::wire {

namespace {

constexpr std::size_t kLrhStandIn = 8;

// The ICRC over a copy of the first `kPrefix` bytes of the packet, masked by
// `mask_ip` (the IP header's variant fields) and here (the UDP checksum and
// BTH byte 4, which follow an IP header of `kIpSize` bytes), then over the
// rest in place.
template <std::size_t kIpSize, std::size_t kPrefix, typename MaskIp>
std::uint32_t masked_icrc(std::span<const std::uint8_t> ip_packet, MaskIp mask_ip) {
  std::uint8_t head[kLrhStandIn + kPrefix];
  const std::size_t n = std::min(ip_packet.size(), kPrefix);
  std::memset(head, 0xff, kLrhStandIn);
  std::memcpy(head + kLrhStandIn, ip_packet.data(), n);
  std::uint8_t* ip = head + kLrhStandIn;
  mask_ip(ip);
  ip[kIpSize + 6] = 0xff;  // UDP checksum
  ip[kIpSize + 7] = 0xff;
  ip[kIpSize + UdpHdr::kSize + BthHdr::kIcrcMaskedByte] = 0xff;
  std::uint32_t crc = crc32_zlib(0, std::span<const std::uint8_t>(head, kLrhStandIn + n));
  return crc32_zlib(crc, ip_packet.subspan(n));
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
  return masked_icrc<Ipv4Hdr::kSize, kIcrcMaskedPrefix>(ip_packet, [](std::uint8_t* ip) {
    ip[1] = 0xff;   // TOS (DSCP + ECN)
    ip[8] = 0xff;   // TTL
    ip[10] = 0xff;  // header checksum
    ip[11] = 0xff;
  });
}

std::uint32_t compute_icrc_ipv6(std::span<const std::uint8_t> ip_packet) {
  return masked_icrc<Ipv6Hdr::kSize, kIcrcMaskedPrefixIpv6>(ip_packet, [](std::uint8_t* ip) {
    ip[0] |= 0x0f;  // traffic class, high nibble (the version nibble stays)
    ip[1] = 0xff;   // traffic class low nibble, flow label
    ip[2] = 0xff;
    ip[3] = 0xff;
    ip[7] = 0xff;  // hop limit
  });
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
