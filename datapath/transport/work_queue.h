// A fixed-capacity FIFO of work requests (send queue, receive queue, SRQ).
//
// Storage is allocated once at construction; push/pop/peek never allocate.
// Entries are addressed by a free-running 32-bit index so that a requester
// can keep cursors into the queue (the oldest unacknowledged WQE, the next to
// send) that stay valid while older entries are retired.
//
// Threading: owned by one engine lcore; not thread-safe.
#pragma once

#include <bit>
#include <cstdint>
#include <vector>

namespace uroce::transport {

template <typename T>
class WorkQueue {
 public:
  // Storage is the next power of two above `capacity`, so that a slot is
  // `index & mask` (no division) and the free-running indices stay
  // consistent when they wrap at 2^32 (2^32 is a multiple of the slot
  // count). At most `capacity` entries are held. `start_index` is the first
  // index handed out (tests use it to cross the 2^32 wrap).
  explicit WorkQueue(std::uint32_t capacity, std::uint32_t start_index = 0)
      : cap_(capacity == 0 ? 1 : capacity),
        slots_(std::bit_ceil(cap_)),
        mask_(static_cast<std::uint32_t>(slots_.size()) - 1),
        head_(start_index),
        tail_(start_index) {}

  std::uint32_t capacity() const { return cap_; }
  std::uint32_t size() const { return tail_ - head_; }
  bool empty() const { return head_ == tail_; }
  bool full() const { return size() == capacity(); }

  // Appends a copy; false when full.
  bool push(const T& v) {
    if (full()) return false;
    slots_[tail_ & mask_] = v;
    ++tail_;
    return true;
  }
  // Appends the entry in its slot as the slot holds it (an older, retired
  // entry or a default-constructed one) and returns it for the caller to
  // overwrite what it uses; nullptr when full. Saves the copy of a whole T
  // when T is large or cannot be copied as a whole (a WR slot bound to its
  // own area, wr_queue.h).
  T* push_slot() {
    if (full()) return nullptr;
    T* slot = &slots_[tail_ & mask_];
    ++tail_;
    return slot;
  }
  // Oldest entry; the queue must not be empty.
  T& front() { return slots_[head_ & mask_]; }
  const T& front() const { return slots_[head_ & mask_]; }
  void pop() {
    if (!empty()) ++head_;
  }

  // Index-based access for cursors: valid for head() <= i < tail().
  std::uint32_t head() const { return head_; }
  std::uint32_t tail() const { return tail_; }
  bool contains(std::uint32_t i) const { return i - head_ < tail_ - head_; }
  T& at(std::uint32_t i) { return slots_[i & mask_]; }
  const T& at(std::uint32_t i) const { return slots_[i & mask_]; }

  void clear() { head_ = tail_; }

  // The storage slots themselves, by position (not by index): what a
  // derived queue binds per-slot storage to at construction.
  std::uint32_t slot_count() const { return mask_ + 1; }
  T& slot(std::uint32_t k) { return slots_[k]; }

 private:
  std::uint32_t cap_;
  std::vector<T> slots_;
  std::uint32_t mask_;
  std::uint32_t head_;  // free-running indices, modulo 2^32
  std::uint32_t tail_;
};

}  // namespace uroce::transport
