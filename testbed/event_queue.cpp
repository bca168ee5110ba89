#include "testbed/event_queue.h"

#include <utility>

namespace uroce::testbed {

void EventQueue::push(TimeNs at, EventKind kind, std::uint32_t a, std::uint32_t b) {
  heap_.push_back(Event{at, next_seq_++, kind, a, b});
  // Sift up.
  std::size_t i = heap_.size() - 1;
  while (i > 0) {
    const std::size_t parent = (i - 1) / 2;
    if (!before(heap_[i], heap_[parent])) break;
    std::swap(heap_[i], heap_[parent]);
    i = parent;
  }
}

Event EventQueue::pop() {
  const Event top = heap_.front();
  heap_.front() = heap_.back();
  heap_.pop_back();
  // Sift down.
  const std::size_t n = heap_.size();
  std::size_t i = 0;
  for (;;) {
    const std::size_t l = 2 * i + 1;
    const std::size_t r = l + 1;
    std::size_t m = i;
    if (l < n && before(heap_[l], heap_[m])) m = l;
    if (r < n && before(heap_[r], heap_[m])) m = r;
    if (m == i) break;
    std::swap(heap_[i], heap_[m]);
    i = m;
  }
  return top;
}

}  // namespace uroce::testbed
