// Link and network addresses as values: MAC (6 bytes), IPv4 (host-order
// integer for arithmetic and comparisons), and their text forms.
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

  // Dotted quad, exactly four decimal octets 0..255; nullopt otherwise.
  static std::optional<Ipv4Addr> parse(std::string_view s);
  std::string to_string() const;
};

}  // namespace uroce::wire
