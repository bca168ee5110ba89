// Soak test support (not a source mirror): payload patterns a receiver can
// check without being told the bytes, exactly-sized registered regions, and a
// FIFO arena that hands out pieces of a region to work requests that retire
// in posting order.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <deque>
#include <optional>
#include <span>
#include <vector>

#include "datapath/transport/mr_table.h"

namespace uroce::transport::soak {

// Byte `i` of the message tagged `tag`. Every message gets its own tag, so a
// byte from the wrong message, the wrong offset or a stale buffer shows up.
inline std::uint8_t pattern_byte(std::uint64_t tag, std::uint64_t i) {
  const std::uint64_t h = (tag + 1) * 0x9E3779B97F4A7C15ull;
  return static_cast<std::uint8_t>((h >> 29) + i * 0x3b + (i >> 8) * 7 + (i >> 16) * 3);
}

inline void fill_pattern(std::span<std::uint8_t> dst, std::uint64_t tag, std::uint64_t first) {
  for (std::size_t i = 0; i < dst.size(); ++i) {
    dst[i] = pattern_byte(tag, first + i);
  }
}

// Index of the first byte that differs from the pattern, or -1.
inline std::int64_t check_pattern(std::span<const std::uint8_t> got, std::uint64_t tag,
                                  std::uint64_t first) {
  for (std::size_t i = 0; i < got.size(); ++i) {
    if (got[i] != pattern_byte(tag, first + i)) return static_cast<std::int64_t>(i);
  }
  return -1;
}

// Bytes a test never writes as payload: guards around buffers must keep it.
inline constexpr std::uint8_t kSentinel = 0xA5;

inline std::int64_t check_fill(std::span<const std::uint8_t> got, std::uint8_t v) {
  for (std::size_t i = 0; i < got.size(); ++i) {
    if (got[i] != v) return static_cast<std::int64_t>(i);
  }
  return -1;
}

// One registered region backed by a heap block of exactly its length, so
// AddressSanitizer reports any access past its end.
struct Region {
  Region(MrTable& mrs, PdHandle pd, std::uint64_t iova, std::size_t len, std::uint32_t access_flags)
      : mem(len, kSentinel), va(iova) {
    int err = 0;
    key = mrs.reg({pd, iova, len, access_flags, mem.data()}, &err);
  }
  std::uint8_t* at(std::uint64_t off) { return mem.data() + off; }
  std::span<std::uint8_t> span(std::uint64_t off, std::uint64_t len) {
    return {mem.data() + off, static_cast<std::size_t>(len)};
  }
  std::vector<std::uint8_t> mem;
  std::uint64_t va = 0;
  std::uint32_t key = 0;
};

// Hands out [offset, offset + len) pieces of a buffer of `cap` bytes;
// pieces are released oldest first (the order RC completes work). A piece
// never wraps: when the end is too close, allocation restarts at 0.
class FifoArena {
 public:
  explicit FifoArena(std::uint64_t cap) : cap_(cap) {}

  std::optional<std::uint64_t> alloc(std::uint64_t len) {
    if (len > cap_) return std::nullopt;
    std::uint64_t start = tail_;
    if (start % cap_ + len > cap_) start = (start / cap_ + 1) * cap_;
    if (start + len - head_ > cap_) return std::nullopt;
    live_.push_back(start);
    tail_ = start + len;
    return start % cap_;
  }
  // Whether alloc(len) would succeed now.
  bool fits(std::uint64_t len) const {
    if (len > cap_) return false;
    std::uint64_t start = tail_;
    if (start % cap_ + len > cap_) start = (start / cap_ + 1) * cap_;
    return start + len - head_ <= cap_;
  }
  void release() {
    live_.pop_front();
    head_ = live_.empty() ? tail_ : live_.front();
  }
  std::size_t live() const { return live_.size(); }
  std::uint64_t cap() const { return cap_; }

 private:
  std::uint64_t cap_;
  std::uint64_t head_ = 0;
  std::uint64_t tail_ = 0;
  std::deque<std::uint64_t> live_;
};

}  // namespace uroce::transport::soak
