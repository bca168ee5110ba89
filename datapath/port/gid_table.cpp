#include "datapath/port/gid_table.h"

#include <arpa/inet.h>

#include <cstdio>
#include <cstring>

#include "datapath/wire/byteorder.h"

namespace uroce::port {

Gid Gid::link_local(const wire::MacAddr& mac) {
  Gid g;
  g.raw[0] = 0xfe;
  g.raw[1] = 0x80;
  // Modified EUI-64: OUI half, ff:fe, NIC half; then flip the
  // universal/local bit (bit 1 of the first octet).
  g.raw[8] = static_cast<std::uint8_t>(mac.b[0] ^ 0x02);
  g.raw[9] = mac.b[1];
  g.raw[10] = mac.b[2];
  g.raw[11] = 0xff;
  g.raw[12] = 0xfe;
  g.raw[13] = mac.b[3];
  g.raw[14] = mac.b[4];
  g.raw[15] = mac.b[5];
  return g;
}

Gid Gid::ipv4_mapped(wire::Ipv4Addr ip) {
  Gid g;
  g.raw[10] = 0xff;
  g.raw[11] = 0xff;
  wire::store_be32(g.raw.data() + 12, ip.v);
  return g;
}

bool Gid::is_ipv4_mapped() const {
  for (int i = 0; i < 10; ++i)
    if (raw[i] != 0) return false;
  return raw[10] == 0xff && raw[11] == 0xff;
}

std::optional<wire::Ipv4Addr> Gid::ipv4() const {
  if (!is_ipv4_mapped()) return std::nullopt;
  return wire::Ipv4Addr{wire::load_be32(raw.data() + 12)};
}

std::string Gid::to_string() const {
  char buf[40];
  std::snprintf(buf, sizeof(buf),
                "%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x:"
                "%02x%02x:%02x%02x",
                raw[0], raw[1], raw[2], raw[3], raw[4], raw[5], raw[6], raw[7], raw[8], raw[9],
                raw[10], raw[11], raw[12], raw[13], raw[14], raw[15]);
  return buf;
}

std::optional<Gid> Gid::parse(std::string_view s) {
  // inet_pton needs a NUL-terminated string; the longest IPv6 text form
  // (with an embedded IPv4 part) is 45 characters.
  char buf[64];
  if (s.empty() || s.size() >= sizeof(buf)) return std::nullopt;
  std::memcpy(buf, s.data(), s.size());
  buf[s.size()] = '\0';
  Gid g;
  if (inet_pton(AF_INET6, buf, g.raw.data()) != 1) return std::nullopt;
  return g;
}

const char* to_string(GidType t) {
  switch (t) {
    case GidType::kRoceV2: return "RoCE v2";
  }
  return "?";
}

GidTable::GidTable(const wire::MacAddr& mac, wire::Ipv4Addr ip) {
  set_mac(mac);
  set_ipv4(ip);
}

std::optional<GidEntry> GidTable::at(std::uint32_t index) const {
  if (index >= kEntries) return std::nullopt;
  return entries_[index];
}

std::optional<std::uint32_t> GidTable::find(const Gid& gid, GidType type) const {
  for (std::uint32_t i = 0; i < kEntries; ++i) {
    if (entries_[i] && entries_[i]->gid == gid && entries_[i]->type == type) return i;
  }
  return std::nullopt;
}

void GidTable::set_ipv4(wire::Ipv4Addr ip) {
  if (ip.v == 0) {
    entries_[kIpv4Index].reset();
  } else {
    entries_[kIpv4Index] = GidEntry{Gid::ipv4_mapped(ip), GidType::kRoceV2};
  }
}

void GidTable::set_mac(const wire::MacAddr& mac) {
  entries_[kLinkLocalIndex] = GidEntry{Gid::link_local(mac), GidType::kRoceV2};
}

}  // namespace uroce::port
