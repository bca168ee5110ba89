#include "datapath/port/gid_table.h"

#include <cstdio>
#include <cstring>

#include "datapath/wire/byteorder.h"

namespace uroce::port {

Gid Gid::link_local(const wire::MacAddr& mac) { return from_ipv6(wire::Ipv6Addr::link_local(mac)); }

Gid Gid::ipv4_mapped(wire::Ipv4Addr ip) {
  Gid g;
  g.raw[10] = 0xff;
  g.raw[11] = 0xff;
  wire::store_be32(g.raw.data() + 12, ip.v);
  return g;
}

bool Gid::is_ipv4_mapped() const { return ipv6().is_ipv4_mapped(); }

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
  const auto a = wire::Ipv6Addr::parse(s);
  if (!a) return std::nullopt;
  return from_ipv6(*a);
}

const char* to_string(GidType t) {
  switch (t) {
    case GidType::kRoceV2: return "RoCE v2";
  }
  return "?";
}

GidTable::GidTable(const wire::MacAddr& mac, wire::Ipv4Addr ip, const wire::Ipv6Addr& ipv6)
    : mac_(mac), ipv4_(ip), ipv6_(ipv6) {
  layout();
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

std::optional<std::uint32_t> GidTable::ipv6_index() const {
  if (ipv6_.is_zero()) return std::nullopt;
  return ipv4_.v != 0 ? kIpv4Index + 1 : kIpv4Index;
}

void GidTable::layout() {
  entries_ = {};
  entries_[kLinkLocalIndex] = GidEntry{Gid::link_local(mac_), GidType::kRoceV2};
  if (ipv4_.v != 0) entries_[kIpv4Index] = GidEntry{Gid::ipv4_mapped(ipv4_), GidType::kRoceV2};
  if (const auto i = ipv6_index()) entries_[*i] = GidEntry{Gid::from_ipv6(ipv6_), GidType::kRoceV2};
}

void GidTable::set_ipv4(wire::Ipv4Addr ip) {
  ipv4_ = ip;
  layout();
}

void GidTable::set_ipv6(const wire::Ipv6Addr& ipv6) {
  ipv6_ = ipv6;
  layout();
}

void GidTable::set_mac(const wire::MacAddr& mac) {
  mac_ = mac;
  layout();
}

}  // namespace uroce::port
