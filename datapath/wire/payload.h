// A received packet's payload, which may run across the segments of a
// chained frame.
//
// A port whose receive buffers are smaller than its largest frame (a 4096-MTU
// path over a PMD's 2 KiB mbufs, docs/nic.md) hands a long frame over as
// a chain: the first segment holds the headers and the payload's start, the
// later segments (the frame's tail) hold the rest, and the pad and ICRC end
// the last one or straddle the last two. The parser (parser.h) reads the
// headers from the first segment only and describes the payload as a
// Payload; the transports copy it into WQE memory piece by piece
// (sge_copy.h), so a chained frame is never gathered into one buffer.
//
// Invariants: size() = head().size() + the bytes taken from the tail, which
// never exceed the tail's bytes; contiguous() exactly when nothing is taken
// from the tail. The spans point into the frame's buffers, valid while the
// frame is (during the port's RX callback).
#pragma once

#include <algorithm>
#include <cassert>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

namespace uroce::wire {

// The segments after the first one of a chained frame, in order; empty for
// a frame in one buffer.
using FrameTail = std::span<const std::span<const std::uint8_t>>;

// The bytes in a tail.
inline std::size_t tail_bytes(FrameTail tail) {
  std::size_t n = 0;
  for (const std::span<const std::uint8_t> s : tail) n += s.size();
  return n;
}

// Calls fn(std::span<const std::uint8_t>) for each non-empty piece of the
// byte range [from, from + n) of the frame whose first segment is `head` and
// whose later ones are `tail`, in order. The range must lie inside the frame.
template <class Fn>
void for_each_piece(std::span<const std::uint8_t> head, FrameTail tail, std::size_t from,
                    std::size_t n, Fn&& fn) {
  std::span<const std::uint8_t> seg = head;
  std::size_t next = 0;
  while (n != 0) {
    if (from >= seg.size()) {
      from -= seg.size();
      assert(next < tail.size());
      seg = tail[next++];
      continue;
    }
    const std::size_t take = std::min(seg.size() - from, n);
    fn(seg.subspan(from, take));
    n -= take;
    from = 0;
    if (n == 0) break;
    assert(next < tail.size());
    seg = tail[next++];
  }
}

// Copies the byte range [from, from + n) of such a frame to dst.
inline void copy_range(std::span<const std::uint8_t> head, FrameTail tail, std::size_t from,
                       std::size_t n, std::uint8_t* dst) {
  for_each_piece(head, tail, from, n, [&](std::span<const std::uint8_t> p) {
    std::memcpy(dst, p.data(), p.size());
    dst += p.size();
  });
}

// Cuts `frame` as a port with RX buffers of `seg` bytes would hand it over
// (a first segment of `head` bytes, `seg` for a port's own buffers, and a
// tail of `seg`-byte segments): returns the first segment and leaves the
// tail in `tail` (cleared first; empty when the frame fits the head). For
// simulated ports and tests; the vector allocates only as it grows.
inline std::span<const std::uint8_t> cut_frame(std::span<const std::uint8_t> frame,
                                               std::size_t head, std::size_t seg,
                                               std::vector<std::span<const std::uint8_t>>& tail) {
  assert(seg != 0);
  tail.clear();
  head = std::min(head, frame.size());
  for (std::size_t at = head; at < frame.size(); at += seg) {
    tail.push_back(frame.subspan(at, std::min(seg, frame.size() - at)));
  }
  return frame.first(head);
}

class Payload {
 public:
  Payload() = default;
  // A payload in one buffer.
  Payload(std::span<const std::uint8_t> bytes) : head_(bytes), size_(bytes.size()) {}  // NOLINT
  // `head` (the payload's bytes in the first segment), then the first
  // size - head.size() bytes of `tail`.
  Payload(std::span<const std::uint8_t> head, FrameTail tail, std::size_t size)
      : head_(head), tail_(tail), size_(size) {
    assert(size >= head.size());
    assert(size - head.size() <= tail_bytes(tail));
  }

  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  // All of it in one buffer (always so for a frame that was not chained).
  bool contiguous() const { return size_ == head_.size(); }
  // The bytes in the first segment: the whole payload when contiguous().
  std::span<const std::uint8_t> head() const { return head_; }

  // Only for a contiguous payload (callers check contiguous() or know the
  // frame was short: control packets are never chained).
  const std::uint8_t* data() const {
    assert(contiguous());
    return head_.data();
  }
  std::span<const std::uint8_t> span() const {
    assert(contiguous());
    return head_;
  }
  const std::uint8_t* begin() const { return data(); }
  const std::uint8_t* end() const { return data() + size_; }
  std::uint8_t operator[](std::size_t i) const {
    assert(i < size_);
    return i < head_.size() ? head_[i] : byte_in_tail(i - head_.size());
  }

  // Calls fn(std::span<const std::uint8_t>) for each piece of the bytes
  // [from, from + n), in order; from + n <= size().
  template <class Fn>
  void for_each_piece(std::size_t from, std::size_t n, Fn&& fn) const {
    assert(from + n <= size_);
    wire::for_each_piece(head_, tail_, from, n, fn);
  }
  // Copies the bytes [from, from + n) to dst; from + n <= size().
  void copy_out(std::size_t from, std::uint8_t* dst, std::size_t n) const {
    // An empty copy may come with a null dst (an empty buffer's data()), and
    // memcpy's pointers must not be null even for 0 bytes.
    if (n == 0) [[unlikely]]
      return;
    if (from + n <= head_.size()) [[likely]] {
      std::memcpy(dst, head_.data() + from, n);
      return;
    }
    copy_range(head_, tail_, from, n, dst);
  }

 private:
  std::uint8_t byte_in_tail(std::size_t i) const {
    for (const std::span<const std::uint8_t> s : tail_) {
      if (i < s.size()) return s[i];
      i -= s.size();
    }
    assert(false);
    return 0;
  }

  std::span<const std::uint8_t> head_;
  FrameTail tail_;
  std::size_t size_ = 0;
};

}  // namespace uroce::wire
