#include "datapath/wire/addr.h"

#include <arpa/inet.h>

#include <charconv>
#include <cstdio>

namespace uroce::wire {

namespace {

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

std::optional<MacAddr> MacAddr::parse(std::string_view s) {
  if (s.size() != 17) return std::nullopt;
  MacAddr m;
  for (std::size_t i = 0; i < 6; ++i) {
    const std::size_t at = i * 3;
    const int hi = hex_digit(s[at]);
    const int lo = hex_digit(s[at + 1]);
    if (hi < 0 || lo < 0) return std::nullopt;
    if (i < 5 && s[at + 2] != ':') return std::nullopt;
    m.b[i] = static_cast<std::uint8_t>(hi << 4 | lo);
  }
  return m;
}

std::string MacAddr::to_string() const {
  char buf[18];
  std::snprintf(buf, sizeof(buf), "%02x:%02x:%02x:%02x:%02x:%02x", b[0], b[1], b[2], b[3], b[4],
                b[5]);
  return buf;
}

std::optional<Ipv4Addr> Ipv4Addr::parse(std::string_view s) {
  std::uint32_t v = 0;
  const char* p = s.data();
  const char* end = s.data() + s.size();
  for (int octet = 0; octet < 4; ++octet) {
    if (octet > 0) {
      if (p == end || *p != '.') return std::nullopt;
      ++p;
    }
    if (p == end || *p < '0' || *p > '9') return std::nullopt;
    unsigned value = 0;
    auto [next, ec] = std::from_chars(p, end, value);
    if (ec != std::errc{} || value > 255 || next - p > 3) return std::nullopt;
    p = next;
    v = (v << 8) | value;
  }
  if (p != end) return std::nullopt;
  return Ipv4Addr{v};
}

std::string Ipv4Addr::to_string() const {
  char buf[16];
  std::snprintf(buf, sizeof(buf), "%u.%u.%u.%u", v >> 24, (v >> 16) & 0xff, (v >> 8) & 0xff,
                v & 0xff);
  return buf;
}

MacAddr Ipv4Addr::multicast_mac() const {
  return MacAddr{{0x01, 0x00, 0x5e, static_cast<std::uint8_t>((v >> 16) & 0x7f),
                  static_cast<std::uint8_t>(v >> 8), static_cast<std::uint8_t>(v)}};
}

bool Ipv6Addr::is_ipv4_mapped() const {
  for (std::size_t i = 0; i < 10; ++i) {
    if (b[i] != 0) return false;
  }
  return b[10] == 0xff && b[11] == 0xff;
}

Ipv6Addr Ipv6Addr::solicited_node() const {
  Ipv6Addr a;
  a.b[0] = 0xff;
  a.b[1] = 0x02;
  a.b[11] = 0x01;
  a.b[12] = 0xff;
  a.b[13] = b[13];
  a.b[14] = b[14];
  a.b[15] = b[15];
  return a;
}

MacAddr Ipv6Addr::multicast_mac() const {
  return MacAddr{{0x33, 0x33, b[12], b[13], b[14], b[15]}};
}

Ipv6Addr Ipv6Addr::link_local(const MacAddr& mac) {
  Ipv6Addr a;
  a.b[0] = 0xfe;
  a.b[1] = 0x80;
  a.b[8] = static_cast<std::uint8_t>(mac.b[0] ^ 0x02);
  a.b[9] = mac.b[1];
  a.b[10] = mac.b[2];
  a.b[11] = 0xff;
  a.b[12] = 0xfe;
  a.b[13] = mac.b[3];
  a.b[14] = mac.b[4];
  a.b[15] = mac.b[5];
  return a;
}

std::optional<Ipv6Addr> Ipv6Addr::parse(std::string_view s) {
  if (s.size() >= INET6_ADDRSTRLEN) return std::nullopt;
  char buf[INET6_ADDRSTRLEN];
  std::memcpy(buf, s.data(), s.size());
  buf[s.size()] = '\0';
  Ipv6Addr a;
  if (inet_pton(AF_INET6, buf, a.b.data()) != 1) return std::nullopt;
  return a;
}

std::string Ipv6Addr::to_string() const {
  char buf[INET6_ADDRSTRLEN];
  if (inet_ntop(AF_INET6, b.data(), buf, sizeof(buf)) == nullptr) return {};
  return buf;
}

}  // namespace uroce::wire
