// Selective repeat for an RC connection between uroce peers (docs/lossy.md):
// the state an RC QP has once its peer answered the handshake. The engine
// owns it (a device pool, so no allocation per packet and a bound on
// memory) and attaches it with RcQp::set_sr; a QP without it pays one null
// test per packet and behaves as plain RC, byte for byte.
#pragma once

#include <algorithm>

#include "datapath/transport/rc_counters.h"
#include "datapath/transport/rc_sr_rx.h"
#include "datapath/transport/rc_sr_spray.h"
#include "datapath/transport/rc_sr_tx.h"

namespace uroce::transport {

// The response PSNs one SR READ request asks for at most (docs/lossy.md
// "READ responses"): half the requester's cap `window` (min(window_psns,
// sr_cap_psns, kSrWindow)), so that a READ's responses never pass the cap
// and the next part is asked for while the previous one still arrives.
// Part c of a READ covers its response PSNs [c * chunk, (c + 1) * chunk).
constexpr std::uint32_t sr_read_chunk(std::uint32_t window) { return window > 1 ? window / 2 : 1; }
// The cap on PSNs in flight of a selective-repeat connection, from
// RcTuning's window_psns and sr_cap_psns and the device's cap (RcSr::cap).
constexpr std::uint32_t sr_window(std::uint32_t window_psns, std::uint32_t sr_cap_psns,
                                  std::uint32_t cap) {
  return std::min({window_psns, sr_cap_psns, cap, kSrWindow});
}
// The end (exclusive, an index into the READ's response PSNs) of the part
// of an SR READ of `npkts` responses that holds response `idx`.
constexpr std::uint32_t sr_read_part_end(std::uint32_t idx, std::uint32_t npkts,
                                         std::uint32_t window) {
  const std::uint32_t chunk = sr_read_chunk(window);
  return std::min((idx / chunk + 1) * chunk, npkts);
}

struct RcSr {
  RcSrCounters ctr{};
  // The responder's window (rc_sr_rx.h): it accepts SR opcodes only while
  // this is attached.
  SrRx rx;
  // The requester's scoreboard (rc_sr_tx.h), in use once tx_on. The peer
  // answered the handshake (tx_pending); the requester turns tx_on when
  // every WQE it started before has completed, so that no SR message is
  // ever overtaken by a plain one and both ends number SR's messages from
  // 0 at that point (next_rsn here, SrRx::rsn_head at the responder).
  SrTx tx;
  bool tx_pending = false;
  bool tx_on = false;
  // Packets in flight at most (the device's lossy_cap, 1..256, set by the
  // engine when it attaches this; docs/lossy.md "The cap"): one
  // bandwidth-delay product of the fabric. The requester also keeps its
  // window and kSrWindow. 16 bits, beside the flags: RcSr stays within
  // 4 KiB.
  std::uint16_t cap = kSrWindow;
  // The RSN of the next SEND / WRITE with immediate (docs/lossy.md), 24 bits.
  std::uint32_t next_rsn = 0;
  // The UDP source ports its SEND and WRITE packets are sprayed over
  // (rc_sr_spray.h); off (one path) until the engine configures it.
  SrSpray spray;

  // Points the scoreboard and the spray at this state's own counters (and
  // the scoreboard at its spray): once the state is at its final address.
  void bind_counters() {
    tx.bind(&ctr, &spray);
    spray.bind(&ctr);
  }
};

}  // namespace uroce::transport
