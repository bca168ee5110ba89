// Link and network addresses as values: MAC (6 bytes), IPv4 (host-order
// integer for arithmetic and comparisons), IPv6 (16 bytes in network order,
// as on the wire and in a GID), and their text forms.
#pragma once

#include <array>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>

namespace uroce::wire {

struct MacAddr {
  std::array<std::uint8_t, 6> b{};

  static constexpr MacAddr broadcast() { return MacAddr{{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}}; }
  bool is_broadcast() const { return *this == broadcast(); }
  bool is_multicast() const { return (b[0] & 0x01) != 0; }
  bool is_zero() const { return *this == MacAddr{}; }
  // Six bytes as one 4-byte and one 2-byte load: the defaulted comparison
  // called memcmp, and MACs are compared for every frame received.
  friend bool operator==(const MacAddr& x, const MacAddr& y) {
    std::uint32_t x4 = 0, y4 = 0;
    std::uint16_t x2 = 0, y2 = 0;
    std::memcpy(&x4, x.b.data(), 4);
    std::memcpy(&y4, y.b.data(), 4);
    std::memcpy(&x2, x.b.data() + 4, 2);
    std::memcpy(&y2, y.b.data() + 4, 2);
    return ((x4 ^ y4) | static_cast<std::uint32_t>(x2 ^ y2)) == 0;
  }

  // "aa:bb:cc:dd:ee:ff" (case-insensitive); nullopt on any other form.
  static std::optional<MacAddr> parse(std::string_view s);
  std::string to_string() const;
};

// IPv4 address held in host order (a.b.c.d == a << 24 | ...); converted to
// network order only by the header accessors.
struct Ipv4Addr {
  std::uint32_t v = 0;

  friend bool operator==(const Ipv4Addr&, const Ipv4Addr&) = default;
  friend auto operator<=>(const Ipv4Addr&, const Ipv4Addr&) = default;

  bool is_multicast() const { return (v >> 28) == 0xe; }  // 224.0.0.0/4
  // The Ethernet address of a multicast IPv4 address (RFC 1112 section
  // 6.4): 01:00:5e followed by the address's low 23 bits.
  MacAddr multicast_mac() const;

  // Dotted quad, exactly four decimal octets 0..255; nullopt otherwise.
  static std::optional<Ipv4Addr> parse(std::string_view s);
  std::string to_string() const;
};

// IPv6 address (RFC 4291), the 16 bytes in network order.
struct Ipv6Addr {
  std::array<std::uint8_t, 16> b{};

  friend bool operator==(const Ipv6Addr&, const Ipv6Addr&) = default;

  bool is_zero() const { return *this == Ipv6Addr{}; }
  bool is_multicast() const { return b[0] == 0xff; }                            // ff00::/8
  bool is_link_local() const { return b[0] == 0xfe && (b[1] & 0xc0) == 0x80; }  // fe80::/10
  bool is_ipv4_mapped() const;                                                  // ::ffff:0:0/96
  // Solicited-node multicast address ff02::1:ffXX:XXXX of this address
  // (RFC 4291 2.7.1): the low 24 bits appended to ff02::1:ff00:0/104.
  Ipv6Addr solicited_node() const;
  // The Ethernet address of a multicast IPv6 address (RFC 2464 section 7):
  // 33:33 followed by the last four bytes.
  MacAddr multicast_mac() const;
  // fe80::/64 + the modified EUI-64 of `mac` (RFC 4291 appendix A: ff:fe
  // inserted in the middle, the universal/local bit flipped).
  static Ipv6Addr link_local(const MacAddr& mac);

  // Any IPv6 text form inet_pton accepts; nullopt otherwise.
  static std::optional<Ipv6Addr> parse(std::string_view s);
  // The compressed RFC 5952 form inet_ntop gives ("fe80::1").
  std::string to_string() const;
};

}  // namespace uroce::wire
