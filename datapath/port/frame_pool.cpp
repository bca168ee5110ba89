#include "datapath/port/frame_pool.h"

namespace uroce::port {

FramePool::FramePool(std::uint32_t capacity, std::uint32_t slot_bytes)
    : capacity_(capacity),
      slot_bytes_(slot_bytes),
      storage_(std::make_unique_for_overwrite<std::uint8_t[]>(static_cast<std::size_t>(capacity) *
                                                              slot_bytes)),
      free_(capacity),
      owned_(capacity, 0),
      free_top_(capacity) {
  // Slot 0 ends on top of the stack so a fresh pool hands out 0, 1, 2, ...
  for (std::uint32_t i = 0; i < capacity; ++i) free_[i] = capacity - 1 - i;
}

void FramePool::free(std::uint32_t slot) {
  if (slot >= capacity_ || owned_[slot] == 0) {
    ++bad_frees_;
    return;
  }
  owned_[slot] = 0;
  free_[free_top_++] = slot;
}

}  // namespace uroce::port
