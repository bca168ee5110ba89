// 24-bit sequence numbers: PSN (IBTA Vol1 9.7.1) and MSN (9.7.5.1.2).
//
// Both live in a 24-bit space that wraps from 0xFFFFFF to 0. The one rule for
// ordering them is here and nowhere else: a is "before" b when the forward
// distance from a to b, modulo 2^24, is in (0, 2^23). Distances of exactly
// 2^23 are ambiguous and count as "not before" either way; the transport keeps
// its windows far smaller (IBTA limits outstanding PSNs to 2^23), so the case
// never arises for valid traffic and is treated as out of window.
#pragma once

#include <compare>
#include <cstdint>

namespace uroce::transport {

template <typename Tag>
class Seq24 {
 public:
  static constexpr std::uint32_t kMask = 0xFFFFFF;
  static constexpr std::uint32_t kHalf = 0x800000;

  constexpr Seq24() = default;
  // Only the low 24 bits of v are kept.
  constexpr explicit Seq24(std::uint32_t v) : v_(v & kMask) {}

  constexpr std::uint32_t value() const { return v_; }

  constexpr Seq24 operator+(std::uint32_t n) const { return Seq24(v_ + n); }
  constexpr Seq24 operator-(std::uint32_t n) const { return Seq24(v_ - n); }
  constexpr Seq24& operator+=(std::uint32_t n) {
    v_ = (v_ + n) & kMask;
    return *this;
  }
  constexpr Seq24& operator++() { return *this += 1; }

  // Forward distance from `from` to `to`, in [0, 2^24).
  static constexpr std::uint32_t forward(Seq24 from, Seq24 to) { return (to.v_ - from.v_) & kMask; }
  // Signed distance from `from` to `to`, in [-2^23, 2^23).
  static constexpr std::int32_t diff(Seq24 to, Seq24 from) {
    const std::uint32_t f = forward(from, to);
    return f >= kHalf ? static_cast<std::int32_t>(f) - (1 << 24) : static_cast<std::int32_t>(f);
  }

  // a.before(b): a precedes b in sequence space (see the header comment).
  constexpr bool before(Seq24 b) const {
    const std::uint32_t f = forward(*this, b);
    return f != 0 && f < kHalf;
  }
  constexpr bool after(Seq24 b) const { return b.before(*this); }
  // True when this lies in the half-open window [lo, lo + len).
  constexpr bool in_window(Seq24 lo, std::uint32_t len) const { return forward(lo, *this) < len; }

  friend constexpr bool operator==(Seq24, Seq24) = default;

 private:
  std::uint32_t v_ = 0;
};

struct PsnTag {};
struct MsnTag {};
using Psn = Seq24<PsnTag>;
using Msn = Seq24<MsnTag>;

}  // namespace uroce::transport
