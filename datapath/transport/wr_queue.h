// A queue of work requests sized by what the QP was created with.
//
// A WR's SGE list (or its inline bytes) is kept beside the slots, in one
// array of `sges_per_slot` Sge entries per slot, instead of in every slot at
// the most any QP may use (32 SGEs, 256 inline bytes: ~1 KiB per send slot).
// A QP created with one SGE and no inline data then holds 16 bytes of
// descriptors per slot. Each slot is bound to its own area once, at
// construction; moving the queue moves both vectors' buffers, so the
// bindings stay valid. Slots are filled in place (push_slot + assign_used).
//
// Threading: owned by one engine lcore; not thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "datapath/transport/work_queue.h"
#include "datapath/transport/wr.h"

namespace uroce::transport {

template <class T>
class WrQueue : public WorkQueue<T> {
 public:
  WrQueue(std::uint32_t capacity, std::uint32_t sges_per_slot)
      : WorkQueue<T>(capacity),
        sges_per_slot_(sges_per_slot),
        area_(static_cast<std::size_t>(this->slot_count()) * sges_per_slot) {
    for (std::uint32_t k = 0; k < this->slot_count(); ++k) {
      this->slot(k).bind(area_.data() + static_cast<std::size_t>(k) * sges_per_slot, sges_per_slot);
    }
  }
  WrQueue(WrQueue&&) = default;
  WrQueue& operator=(WrQueue&&) = default;

  std::uint32_t sges_per_slot() const { return sges_per_slot_; }

 private:
  std::uint32_t sges_per_slot_;
  std::vector<Sge> area_;
};

}  // namespace uroce::transport
