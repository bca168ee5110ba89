// The RoCEv2 GID table of one port, in the order Linux rdma_rxe fills it
// (rxe is RoCE v2 only: its port advertises RDMA_CORE_PORT_IBA_ROCE_UDP_ENCAP
// alone, so the core adds no RoCE v1 entries):
//   index 0: the default GID, fe80::/64 + the modified EUI-64 of the MAC
//            (RFC 4291 appendix A: insert ff:fe in the middle, flip the U/L
//            bit), type "RoCE v2";
//   index 1: the IPv4-mapped address ::ffff:a.b.c.d (RFC 4291 2.5.5.2),
//            type "RoCE v2", present only while the port has an IPv4 address;
//   next:    the port's global IPv6 address (device key ipv6), type "RoCE
//            v2": index 2, or 1 without an IPv4 address. The kernel adds a
//            port's IPv4 addresses before its IPv6 ones into the first free
//            entries, and leaves the interface's own fe80:: address out (the
//            default GID is the same address), so rxe shows this order.
// Index 0 and the global entry carry RoCEv2 over IPv6, the IPv4-mapped entry
// RoCEv2 over IPv4.
// Text forms are what the kernel's sysfs `ports/N/gids/I` shows (printk %pI6:
// eight groups of four lowercase hex digits, never compressed) and what
// `gid_attrs/types/I` shows.
//
// Control-path object: read by the device registration and the verbs
// handlers (query_gid, AH creation), changed when the port's address changes.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "datapath/wire/addr.h"

namespace uroce::port {

struct Gid {
  std::array<std::uint8_t, 16> raw{};

  // fe80::/64 + modified EUI-64 of `mac`.
  static Gid link_local(const wire::MacAddr& mac);
  // ::ffff:<ip>.
  static Gid ipv4_mapped(wire::Ipv4Addr ip);
  // The same 16 bytes.
  static Gid from_ipv6(const wire::Ipv6Addr& a) { return Gid{a.b}; }
  wire::Ipv6Addr ipv6() const { return wire::Ipv6Addr{raw}; }

  bool is_zero() const { return *this == Gid{}; }
  bool is_ipv4_mapped() const;
  // The IPv4 address of an IPv4-mapped GID.
  std::optional<wire::Ipv4Addr> ipv4() const;

  // "fe80:0000:0000:0000:0200:5eff:fe00:5301" (the sysfs form).
  std::string to_string() const;
  // Any IPv6 text form (the sysfs form, "fe80::1", "::ffff:10.0.0.1");
  // nullopt otherwise.
  static std::optional<Gid> parse(std::string_view s);

  friend bool operator==(const Gid&, const Gid&) = default;
};

enum class GidType : std::uint8_t { kRoceV2 };

// "RoCE v2", as sysfs gid_attrs/types shows it.
const char* to_string(GidType t);

struct GidEntry {
  Gid gid;
  GidType type = GidType::kRoceV2;
};

class GidTable {
 public:
  static constexpr std::uint32_t kLinkLocalIndex = 0;
  static constexpr std::uint32_t kIpv4Index = 1;
  // Entries this table can hold (the rest of the advertised table is empty).
  static constexpr std::uint32_t kEntries = 3;

  // `ip` 0.0.0.0 means "no IPv4 address": index 1 is empty (or holds the
  // global IPv6 address); `ipv6` all zero means no global IPv6 address.
  GidTable(const wire::MacAddr& mac, wire::Ipv4Addr ip, const wire::Ipv6Addr& ipv6 = {});

  // The entry at `index`, or nullopt for an empty or out-of-range index.
  std::optional<GidEntry> at(std::uint32_t index) const;
  // The index of `gid` with `type`, or nullopt.
  std::optional<std::uint32_t> find(const Gid& gid, GidType type = GidType::kRoceV2) const;

  // The port's address changed: index 1 follows (0.0.0.0 empties it).
  void set_ipv4(wire::Ipv4Addr ip);
  // The port's global IPv6 address changed (all zero: none).
  void set_ipv6(const wire::Ipv6Addr& ipv6);
  // The port's MAC changed: index 0 follows.
  void set_mac(const wire::MacAddr& mac);
  // The index of the global IPv6 entry, or nullopt without one.
  std::optional<std::uint32_t> ipv6_index() const;

 private:
  // Lays the entries out from mac_, ipv4_ and ipv6_ in the order above.
  void layout();

  wire::MacAddr mac_{};
  wire::Ipv4Addr ipv4_{};
  wire::Ipv6Addr ipv6_{};
  std::array<std::optional<GidEntry>, kEntries> entries_{};
};

}  // namespace uroce::port
