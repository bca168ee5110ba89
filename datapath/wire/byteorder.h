// Explicit big-endian (network order) loads and stores on byte buffers.
//
// Every wire header in this folder reads and writes its fields only through
// these functions: no bitfields, no host-order structs overlaid on packets, no
// reliance on the host's endianness.
#pragma once

#include <bit>
#include <cstdint>
#include <cstring>

namespace uroce::wire {

namespace detail {

// Network order <-> host order: a byte swap on little-endian hosts, nothing
// on big-endian ones. One unaligned load or store plus bswap: GCC does not
// merge the byte-at-a-time form of these into that on its own.
inline std::uint16_t to_be(std::uint16_t v) {
  if constexpr (std::endian::native == std::endian::little) return __builtin_bswap16(v);
  return v;
}
inline std::uint32_t to_be(std::uint32_t v) {
  if constexpr (std::endian::native == std::endian::little) return __builtin_bswap32(v);
  return v;
}
inline std::uint64_t to_be(std::uint64_t v) {
  if constexpr (std::endian::native == std::endian::little) return __builtin_bswap64(v);
  return v;
}
template <typename T>
T load_raw(const std::uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
template <typename T>
void store_raw(std::uint8_t* p, T v) {
  std::memcpy(p, &v, sizeof v);
}

}  // namespace detail

inline std::uint16_t load_be16(const std::uint8_t* p) {
  return detail::to_be(detail::load_raw<std::uint16_t>(p));
}
inline std::uint32_t load_be24(const std::uint8_t* p) {
  return (std::uint32_t{load_be16(p)} << 8) | p[2];
}
inline std::uint32_t load_be32(const std::uint8_t* p) {
  return detail::to_be(detail::load_raw<std::uint32_t>(p));
}
inline std::uint64_t load_be64(const std::uint8_t* p) {
  return detail::to_be(detail::load_raw<std::uint64_t>(p));
}

inline void store_be16(std::uint8_t* p, std::uint16_t v) { detail::store_raw(p, detail::to_be(v)); }
// Stores the low 24 bits of v.
inline void store_be24(std::uint8_t* p, std::uint32_t v) {
  store_be16(p, static_cast<std::uint16_t>(v >> 8));
  p[2] = static_cast<std::uint8_t>(v);
}
inline void store_be32(std::uint8_t* p, std::uint32_t v) { detail::store_raw(p, detail::to_be(v)); }
inline void store_be64(std::uint8_t* p, std::uint64_t v) { detail::store_raw(p, detail::to_be(v)); }

// Little-endian, used only by the ICRC trailer (IBTA appends it LSB first).
inline std::uint32_t load_le32(const std::uint8_t* p) {
  const std::uint32_t v = detail::load_raw<std::uint32_t>(p);
  if constexpr (std::endian::native == std::endian::big) return __builtin_bswap32(v);
  return v;
}
inline void store_le32(std::uint8_t* p, std::uint32_t v) {
  if constexpr (std::endian::native == std::endian::big) v = __builtin_bswap32(v);
  detail::store_raw(p, v);
}

}  // namespace uroce::wire
