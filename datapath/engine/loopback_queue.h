// Frames a Vnic sends to its own MAC address (two QPs of one device talking
// to each other, e.g. a client and a server on the same uroce0): they never
// reach the wire, whose far end would drop them, so the Vnic copies them
// here at TX commit and receives them at the next RX phase, as if the link
// had looped them back (rxe loops such packets back the same way).
//
// A FIFO of fixed-size slots allocated at construction; push copies the
// frame (one memcpy; the port's TX buffer is left uncommitted and reused),
// front/pop hand them back in order. A full queue or a frame longer than a
// slot refuses the push: the caller counts a drop, which the transport
// treats as a loss on the wire (RC retransmits).
//
// Engine lcore only; not thread-safe.
#pragma once

#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

#include "datapath/wire/payload.h"

namespace uroce::engine {

class LoopbackQueue {
 public:
  LoopbackQueue(std::uint32_t slots, std::uint32_t slot_bytes)
      : slots_(slots == 0 ? 1 : slots),
        slot_bytes_(slot_bytes),
        buf_(static_cast<std::size_t>(slots_) * slot_bytes),
        len_(slots_, 0) {}

  bool push(std::span<const std::uint8_t> f) {
    if (count_ == slots_ || f.size() > slot_bytes_) return false;
    const std::uint32_t i = (head_ + count_) % slots_;
    if (!f.empty()) std::memcpy(slot(i), f.data(), f.size());
    len_[i] = static_cast<std::uint32_t>(f.size());
    ++count_;
    return true;
  }
  // A chained frame (`head`, then `tail`'s segments), stored as one.
  bool push(std::span<const std::uint8_t> head, wire::FrameTail tail) {
    if (tail.empty()) return push(head);
    const std::size_t n = head.size() + wire::tail_bytes(tail);
    if (count_ == slots_ || n > slot_bytes_) return false;
    const std::uint32_t i = (head_ + count_) % slots_;
    wire::copy_range(head, tail, 0, n, slot(i));
    len_[i] = static_cast<std::uint32_t>(n);
    ++count_;
    return true;
  }
  // The oldest frame; valid until pop(). The queue must not be empty.
  std::span<const std::uint8_t> front() const { return {slot(head_), len_[head_]}; }
  void pop() {
    if (count_ == 0) return;
    head_ = (head_ + 1) % slots_;
    --count_;
  }
  std::uint32_t size() const { return count_; }
  bool empty() const { return count_ == 0; }
  std::uint32_t slot_bytes() const { return slot_bytes_; }

 private:
  std::uint8_t* slot(std::uint32_t i) {
    return buf_.data() + static_cast<std::size_t>(i) * slot_bytes_;
  }
  const std::uint8_t* slot(std::uint32_t i) const {
    return buf_.data() + static_cast<std::size_t>(i) * slot_bytes_;
  }

  std::uint32_t slots_;
  std::uint32_t slot_bytes_;
  std::vector<std::uint8_t> buf_;
  std::vector<std::uint32_t> len_;
  std::uint32_t head_ = 0;
  std::uint32_t count_ = 0;
};

}  // namespace uroce::engine
