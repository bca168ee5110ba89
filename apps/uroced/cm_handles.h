// The numbers the rdma_cm service hands out: file tokens, and the handles
// of ids and multicast joins (one space for both, as their commands name
// either by the same field).
//
// A 32-bit counter wraps after 2^32 takes. A client that creates and
// destroys ids in a loop gets there within hours on a daemon that runs for
// months, and then the plain counter gives out a handle another client's
// live id still has: the new id's state overwrites it, and the two clients'
// commands reach each other's id. So a take skips every number still in
// use, and 0 (never given: a handle of 0 would look unset).
//
// Invariant: take() never returns 0 nor a number `in_use` reports. It
// terminates while fewer than 2^32 - 1 numbers are in use (the limits on
// clients and ids keep that far away).
#pragma once

#include <cstdint>

namespace uroce::daemon {

class CmHandles {
 public:
  // The first number to try (1 in the service; a test starts near the wrap).
  explicit CmHandles(std::uint32_t first = 1) : next_(first) {}

  // The next number that is not 0 and for which in_use(number) is false.
  template <class InUse>
  std::uint32_t take(const InUse& in_use) {
    for (;;) {
      const std::uint32_t h = next_++;
      if (h != 0 && !in_use(h)) return h;
    }
  }

 private:
  std::uint32_t next_;
};

}  // namespace uroce::daemon
