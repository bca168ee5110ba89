// Selective repeat for DC connections (docs/lossy.md "DC"): what a DCI
// stream needs beyond RC's selective repeat (rc_sr.h) to run it over DC's
// short connections.
//
// A DC connection cannot afford RC's HELLO round trip: it often carries one
// message. So an initiator whose device runs selective repeat starts every
// connection in it, from its first request (DCETH flag R), and a target
// whose device does not answers that opening request NO_SR (dc_aeth.h):
// nothing ran, and the stream starts the connection again with go-back-N.
// The initiator remembers the targets that declined (DcSrDeclined, by
// address: whether a device runs selective repeat is its `lossy` key, the
// same for all its DCTs), so each costs one round trip per DCI until it
// falls out of the table.
//
// Engine thread only; no allocation after construction.
#pragma once

#include <array>
#include <cstdint>

#include "datapath/transport/dc_stream.h"
#include "datapath/transport/wr.h"

namespace uroce::transport {

// A WR of this opcode consumes a receive WQE at the responder: selective
// repeat numbers it (RSN, docs/lossy.md).
constexpr bool sr_consumes_rsn(WrOpcode op) {
  return op == WrOpcode::kSend || op == WrOpcode::kSendImm || op == WrOpcode::kSendInv ||
         op == WrOpcode::kRdmaWriteImm;
}

// The targets that answered NO_SR, the most recent kSlots of them (oldest
// replaced first).
class DcSrDeclined {
 public:
  static constexpr std::uint32_t kSlots = 16;

  bool has(const DcDest& d) const {
    for (std::uint32_t i = 0; i < used_; ++i) {
      if (transport::same_host(slot_[i], d)) return true;
    }
    return false;
  }
  void add(const DcDest& d) {
    if (has(d)) return;
    slot_[next_] = d;
    next_ = (next_ + 1) % kSlots;
    if (used_ < kSlots) ++used_;
  }
  std::uint32_t size() const { return used_; }

 private:
  std::array<DcDest, kSlots> slot_{};
  std::uint32_t next_ = 0;
  std::uint32_t used_ = 0;
};

}  // namespace uroce::transport
