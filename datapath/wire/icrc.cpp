#include "datapath/wire/icrc.h"

#include <immintrin.h>
#include <isa-l/crc.h>

#include <algorithm>
#include <array>
#include <cstring>

#include "datapath/wire/byteorder.h"

namespace uroce::wire {

namespace {

constexpr std::size_t kLrhStandIn = 8;

constexpr void mask_ipv4(std::uint8_t* ip) {
  ip[1] = 0xff;   // TOS (DSCP + ECN)
  ip[8] = 0xff;   // TTL
  ip[10] = 0xff;  // header checksum
  ip[11] = 0xff;
}

constexpr void mask_ipv6(std::uint8_t* ip) {
  ip[0] |= 0x0f;  // traffic class, high nibble (the version nibble stays)
  ip[1] = 0xff;   // traffic class low nibble, flow label
  ip[2] = 0xff;
  ip[3] = 0xff;
  ip[7] = 0xff;  // hop limit
}

// Masks the UDP checksum and BTH byte 4, which follow an IP header of
// kIpSize bytes at `ip`.
template <std::size_t kIpSize>
constexpr void mask_udp_bth(std::uint8_t* ip) {
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

// What the ICRC ORs into each of a packet's first kMaskTable bytes: 0xff
// over a field it replaces by all ones, 0x0f over IPv6's first byte (its
// version nibble stays), 0 elsewhere (the mask functions above, applied to
// zeros; every masked field is ORed with ones, none cleared). Every masked
// byte lies in the first kIcrcMaskedPrefixIpv6 bytes, so the table's entries
// from there on are 0 and a 16-byte load from any offset up to
// kMaskTable - 16 stays in the table.
constexpr std::size_t kMaskTable = 96;
static_assert(kIcrcMaskedPrefix <= kIcrcMaskedPrefixIpv6);
static_assert(kIcrcMaskedPrefixIpv6 <= kMaskTable - 16);
using MaskTable = std::array<std::uint8_t, kMaskTable>;

template <std::size_t kIpSize>
constexpr MaskTable make_mask_table(void (*mask_ip)(std::uint8_t*)) {
  MaskTable t{};
  mask_ip(t.data());
  mask_udp_bth<kIpSize>(t.data());
  return t;
}

alignas(16) constexpr MaskTable kMaskIpv4 = make_mask_table<Ipv4Hdr::kSize>(mask_ipv4);
alignas(16) constexpr MaskTable kMaskIpv6 = make_mask_table<Ipv6Hdr::kSize>(mask_ipv6);

// The packet's 16 bytes at `ip + at`, with the masks of the table's 16
// bytes at `m` ORed in.
__m128i masked_block(const std::uint8_t* ip, std::size_t at, const MaskTable& mask, std::size_t m) {
  const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(ip + at));
  return _mm_or_si128(b, _mm_loadu_si128(reinterpret_cast<const __m128i*>(mask.data() + m)));
}

// The ICRC of an n-byte packet (kPrefix <= n <= kIcrcOneCall) in one ISA-L
// call: the LRH stand-in block (head_crc's zeros pad it to 16 bytes) and a
// masked copy of the whole packet go into one stack buffer. The copy is made
// of 16-byte stores at the buffer's 16-byte boundaries, where ISA-L's folding
// loads its blocks, so each load is forwarded from one store instead of
// waiting for several narrower ones to reach the cache. A last partial block
// is the packet's last 16 bytes (n >= kPrefix >= 16: inside the span),
// stored first so that the whole blocks written after it overwrite its
// overlap with the same bytes. Whole blocks from kMaskedEnd on (past every
// masked byte) are copied without a mask.
template <std::size_t kPrefix>
std::uint32_t one_call_icrc(const std::uint8_t* ip, std::size_t n, const MaskTable& mask) {
  constexpr std::size_t kMaskedEnd = (kPrefix + 15) / 16 * 16;
  static_assert(kMaskedEnd <= kMaskTable - 16);
  alignas(16) std::uint8_t buf[16 + kIcrcOneCall];
  _mm_store_si128(reinterpret_cast<__m128i*>(buf), _mm_setr_epi32(-1, 0, 0, -1));
  std::uint8_t* const copy = buf + 16;
  const std::size_t whole = n & ~std::size_t{15};
  if (whole != n) {
    const std::size_t at = n - 16;
    _mm_storeu_si128(reinterpret_cast<__m128i*>(copy + at),
                     masked_block(ip, at, mask, std::min(at, kMaskedEnd)));
  }
  std::size_t at = 0;
  for (const std::size_t end = std::min(whole, kMaskedEnd); at < end; at += 16) {
    _mm_store_si128(reinterpret_cast<__m128i*>(copy + at), masked_block(ip, at, mask, at));
  }
  for (; at < whole; at += 16) {
    _mm_store_si128(reinterpret_cast<__m128i*>(copy + at),
                    _mm_loadu_si128(reinterpret_cast<const __m128i*>(ip + at)));
  }
  return crc32_gzip_refl(0, buf, 16 + n);
}

// The ICRC of `ip_packet`, masked by `mask_ip` (the IP header's variant
// fields) and mask_udp_bth: up to kIcrcOneCall bytes in one ISA-L call over
// a masked copy, longer ones with a masked copy of the headers and the rest
// taken in place. A packet shorter than the masked headers gets the same
// treatment on what there is (a meaningless value, but no read outside the
// span).
template <std::size_t kIpSize, std::size_t kPrefix>
std::uint32_t masked_icrc(std::span<const std::uint8_t> ip_packet, void (*mask_ip)(std::uint8_t*),
                          const MaskTable& mask) {
  const std::size_t n = ip_packet.size();
  if (n >= kPrefix && n <= kIcrcOneCall) [[likely]] {
    return one_call_icrc<kPrefix>(ip_packet.data(), n, mask);
  }
  if (n >= kPrefix) {
    const std::uint32_t crc = head_crc<kIpSize, kPrefix>(ip_packet.data(), mask_ip);
    return crc32_zlib(crc, ip_packet.subspan(kPrefix));
  }
  std::uint8_t head[kLrhStandIn + kPrefix];
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
  return masked_icrc<Ipv4Hdr::kSize, kIcrcMaskedPrefix>(ip_packet, mask_ipv4, kMaskIpv4);
}

std::uint32_t compute_icrc_ipv6(std::span<const std::uint8_t> ip_packet) {
  return masked_icrc<Ipv6Hdr::kSize, kIcrcMaskedPrefixIpv6>(ip_packet, mask_ipv6, kMaskIpv6);
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
