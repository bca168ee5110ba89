#include "testbed/frame_store.h"

namespace uroce::testbed {

std::uint32_t FrameStore::put(std::span<const std::uint8_t> frame) {
  std::uint32_t s;
  if (!free_.empty()) {
    s = free_.back();
    free_.pop_back();
  } else {
    s = static_cast<std::uint32_t>(slots_.size());
    slots_.emplace_back();
  }
  slots_[s].assign(frame.begin(), frame.end());
  ++live_;
  ++stored_;
  if (live_ > peak_) peak_ = live_;
  return s;
}

std::span<std::uint8_t> FrameStore::get(std::uint32_t slot) {
  return {slots_[slot].data(), slots_[slot].size()};
}

void FrameStore::release(std::uint32_t slot) {
  free_.push_back(slot);
  --live_;
}

}  // namespace uroce::testbed
