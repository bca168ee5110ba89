// A pool of fixed-size frame buffers, allocated once at construction. The
// simulated link copies every frame in flight into one slot, so a run moves
// any number of frames without touching the heap after setup.
//
// Invariants: a slot index is either on the free stack or owned by exactly
// one caller; in_use() + free slots == capacity(). Single-threaded.
#pragma once

#include <cassert>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace uroce::port {

class FramePool {
 public:
  static constexpr std::uint32_t kInvalidSlot = UINT32_MAX;

  // `capacity` slots of `slot_bytes` bytes each. A zero capacity gives a
  // pool whose every alloc() fails, which tests use to force drops.
  FramePool(std::uint32_t capacity, std::uint32_t slot_bytes);

  FramePool(const FramePool&) = delete;
  FramePool& operator=(const FramePool&) = delete;

  // Takes a free slot, or returns kInvalidSlot when none is left. The most
  // recently freed slot is handed out first (keeps the working set warm and
  // the slot sequence deterministic).
  std::uint32_t alloc() {
    if (free_top_ == 0) return kInvalidSlot;
    const std::uint32_t slot = free_[--free_top_];
    assert(owned_[slot] == 0);  // a free slot is owned by nobody
    owned_[slot] = 1;
    if (in_use() > high_water_) high_water_ = in_use();
    return slot;
  }
  // Returns a slot taken by alloc(). Freeing a slot twice or an index out of
  // range is a caller bug; it is ignored and counted rather than corrupting
  // the free stack.
  void free(std::uint32_t slot);

  std::uint8_t* data(std::uint32_t slot) {
    return storage_.get() + static_cast<std::size_t>(slot) * slot_bytes_;
  }
  const std::uint8_t* data(std::uint32_t slot) const {
    return storage_.get() + static_cast<std::size_t>(slot) * slot_bytes_;
  }

  std::uint32_t capacity() const { return capacity_; }
  std::uint32_t slot_bytes() const { return slot_bytes_; }
  std::uint32_t in_use() const { return capacity_ - free_top_; }
  std::uint32_t high_water() const { return high_water_; }
  std::uint64_t bad_frees() const { return bad_frees_; }

 private:
  std::uint32_t capacity_;
  std::uint32_t slot_bytes_;
  // Left uninitialised: a large pool costs no page faults until its slots
  // are first used, which matters for a testbed with many links.
  std::unique_ptr<std::uint8_t[]> storage_;
  // Free slot indices as a stack; owned_[i] tells whether slot i is out.
  std::vector<std::uint32_t> free_;
  std::vector<std::uint8_t> owned_;
  std::uint32_t free_top_ = 0;
  std::uint32_t high_water_ = 0;
  std::uint64_t bad_frees_ = 0;
};

}  // namespace uroce::port
