#include "datapath/transport/responder_resources.h"

#include <algorithm>

namespace uroce::transport {

ResponderResources::ResponderResources(std::uint32_t capacity)
    : slots_(capacity), limit_(capacity) {}

void ResponderResources::reserve(std::uint32_t n) {
  if (n <= capacity()) return;
  std::vector<RdAtomicRes> grown(n);
  for (std::uint32_t i = 0; i < count_; ++i) grown[i] = at(i);
  slots_ = std::move(grown);
  head_ = 0;
}

void ResponderResources::set_limit(std::uint32_t n) {
  limit_ = std::min(n, capacity());
  while (count_ > limit_) {
    head_ = (head_ + 1) % capacity();
    --count_;
  }
}

RdAtomicRes* ResponderResources::alloc() {
  if (limit_ == 0) return nullptr;
  if (count_ == limit_) {
    if (at(0).pending) return nullptr;
    head_ = (head_ + 1) % capacity();
    --count_;
  }
  RdAtomicRes& r = at(count_);
  ++count_;
  r = RdAtomicRes{};
  r.pending = true;
  r.seq = next_seq_++;
  return &r;
}

RdAtomicRes* ResponderResources::find(Psn p) {
  for (std::uint32_t i = count_; i > 0; --i) {
    RdAtomicRes& r = at(i - 1);
    if (r.contains(p)) return &r;
  }
  return nullptr;
}

RdAtomicRes* ResponderResources::next_pending() {
  RdAtomicRes* best = nullptr;
  for (std::uint32_t i = 0; i < count_; ++i) {
    RdAtomicRes& r = at(i);
    if (r.pending && (best == nullptr || static_cast<std::int32_t>(r.seq - best->seq) < 0)) {
      best = &r;
    }
  }
  return best;
}

bool ResponderResources::any_pending() const {
  for (std::uint32_t i = 0; i < count_; ++i) {
    if (slots_[(head_ + i) % slots_.size()].pending) return true;
  }
  return false;
}

bool ResponderResources::cancel_after(const RdAtomicRes* r) {
  bool after = false;
  bool cancelled = false;
  for (std::uint32_t i = 0; i < count_; ++i) {
    RdAtomicRes& x = at(i);
    if (after && x.pending) {
      x.pending = false;
      cancelled = true;
    }
    if (&x == r) after = true;
  }
  return cancelled;
}

void ResponderResources::clear() {
  head_ = 0;
  count_ = 0;
}

}  // namespace uroce::transport
