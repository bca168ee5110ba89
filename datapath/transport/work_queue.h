// A fixed-capacity FIFO of work requests (send queue, receive queue, SRQ).
//
// Storage is allocated once at construction; push/pop/peek never allocate.
// Entries are addressed by a free-running 32-bit index so that a requester
// can keep cursors into the queue (the oldest unacknowledged WQE, the next to
// send) that stay valid while older entries are retired.
//
// Threading: owned by one engine lcore; not thread-safe.
#pragma once

#include <cstdint>
#include <vector>

namespace uroce::transport {

template <typename T>
class WorkQueue {
 public:
  explicit WorkQueue(std::uint32_t capacity) : slots_(capacity == 0 ? 1 : capacity) {}

  std::uint32_t capacity() const { return static_cast<std::uint32_t>(slots_.size()); }
  std::uint32_t size() const { return tail_ - head_; }
  bool empty() const { return head_ == tail_; }
  bool full() const { return size() == capacity(); }

  // Appends a copy; false when full.
  bool push(const T& v) {
    if (full()) return false;
    slots_[tail_ % capacity()] = v;
    ++tail_;
    return true;
  }
  // Oldest entry; the queue must not be empty.
  T& front() { return slots_[head_ % capacity()]; }
  const T& front() const { return slots_[head_ % capacity()]; }
  void pop() {
    if (!empty()) ++head_;
  }

  // Index-based access for cursors: valid for head() <= i < tail().
  std::uint32_t head() const { return head_; }
  std::uint32_t tail() const { return tail_; }
  bool contains(std::uint32_t i) const { return i - head_ < tail_ - head_; }
  T& at(std::uint32_t i) { return slots_[i % capacity()]; }
  const T& at(std::uint32_t i) const { return slots_[i % capacity()]; }

  void clear() { head_ = tail_; }

 private:
  std::vector<T> slots_;
  std::uint32_t head_ = 0;  // free-running; wraps modulo 2^32 harmlessly
  std::uint32_t tail_ = 0;
};

}  // namespace uroce::transport
