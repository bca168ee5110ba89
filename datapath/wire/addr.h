// Link and network addresses as values: MAC (6 bytes), IPv4 (host-order
// integer for arithmetic and comparisons), and their text forms.
#pragma once

#include <array>
#include <cstdint>
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
  friend bool operator==(const MacAddr&, const MacAddr&) = default;

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

  // Dotted quad, exactly four decimal octets 0..255; nullopt otherwise.
  static std::optional<Ipv4Addr> parse(std::string_view s);
  std::string to_string() const;
};

}  // namespace uroce::wire
