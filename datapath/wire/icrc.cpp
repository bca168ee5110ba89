#include "datapath/wire/icrc.h"

#include <isa-l/crc.h>

#include <algorithm>
#include <cstring>

#include "datapath/wire/byteorder.h"

namespace uroce::wire {

namespace {

constexpr std::size_t kLrhStandIn = 8;
constexpr std::size_t kUdpOffset = Ipv4Hdr::kSize;
constexpr std::size_t kBthOffset = Ipv4Hdr::kSize + UdpHdr::kSize;

}  // namespace

std::uint32_t crc32_zlib(std::uint32_t crc, std::span<const std::uint8_t> data) {
  if (data.empty()) return crc;
  return crc32_gzip_refl(crc, data.data(), data.size());
}

std::uint32_t compute_icrc(std::span<const std::uint8_t> ip_packet) {
  std::uint8_t head[kLrhStandIn + kIcrcMaskedPrefix];
  const std::size_t n = std::min(ip_packet.size(), kIcrcMaskedPrefix);
  std::memset(head, 0xff, kLrhStandIn);
  std::memcpy(head + kLrhStandIn, ip_packet.data(), n);
  std::uint8_t* ip = head + kLrhStandIn;
  ip[1] = 0xff;   // TOS (DSCP + ECN)
  ip[8] = 0xff;   // TTL
  ip[10] = 0xff;  // header checksum
  ip[11] = 0xff;
  ip[kUdpOffset + 6] = 0xff;  // UDP checksum
  ip[kUdpOffset + 7] = 0xff;
  ip[kBthOffset + BthHdr::kIcrcMaskedByte] = 0xff;
  std::uint32_t crc = crc32_zlib(0, std::span<const std::uint8_t>(head, kLrhStandIn + n));
  return crc32_zlib(crc, ip_packet.subspan(n));
}

std::uint32_t read_icrc(std::span<const std::uint8_t> ip_packet) {
  if (ip_packet.size() < kIcrcSize) return 0;
  return load_le32(ip_packet.data() + ip_packet.size() - kIcrcSize);
}

bool icrc_ok(std::span<const std::uint8_t> ip_packet) {
  if (ip_packet.size() < kIcrcMaskedPrefix + kIcrcSize) return false;
  return compute_icrc(ip_packet.first(ip_packet.size() - kIcrcSize)) == read_icrc(ip_packet);
}

void write_icrc(std::span<std::uint8_t> ip_packet) {
  if (ip_packet.size() < kIcrcSize) return;
  const std::size_t body = ip_packet.size() - kIcrcSize;
  store_le32(ip_packet.data() + body,
             compute_icrc(std::span<const std::uint8_t>(ip_packet.data(), body)));
}

}  // namespace uroce::wire
