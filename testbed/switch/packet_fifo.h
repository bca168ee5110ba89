// A FIFO of values in a power-of-two ring that doubles when full. Used for
// the switch model's egress and control queues, whose depth is bounded by
// the shared buffer (and the control queue by one frame per priority
// change), so after warm-up it no longer allocates.
//
// Invariant: count_ <= slots_.size(), and slots_.size() is 0 or a power of
// two; the live elements are slots_[(head_ + i) & mask] for i < count_.
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

namespace uroce::testbed {

template <class T>
class PacketFifo {
 public:
  bool empty() const { return count_ == 0; }
  std::size_t size() const { return count_; }

  void push(const T& v) {
    if (count_ == slots_.size()) grow();
    slots_[(head_ + count_) & (slots_.size() - 1)] = v;
    ++count_;
  }
  // Precondition: !empty().
  T& front() { return slots_[head_]; }
  const T& front() const { return slots_[head_]; }
  // Precondition: i < size().
  const T& at(std::size_t i) const { return slots_[(head_ + i) & (slots_.size() - 1)]; }
  // Precondition: !empty().
  T pop() {
    T v = std::move(slots_[head_]);
    head_ = (head_ + 1) & (slots_.size() - 1);
    --count_;
    return v;
  }
  void clear() {
    head_ = 0;
    count_ = 0;
  }

 private:
  void grow() {
    const std::size_t cap = slots_.empty() ? 16 : slots_.size() * 2;
    std::vector<T> next(cap);
    const std::size_t mask = slots_.empty() ? 0 : slots_.size() - 1;
    for (std::size_t i = 0; i < count_; ++i) next[i] = std::move(slots_[(head_ + i) & mask]);
    slots_ = std::move(next);
    head_ = 0;
  }

  std::vector<T> slots_;
  std::size_t head_ = 0;
  std::size_t count_ = 0;
};

}  // namespace uroce::testbed
