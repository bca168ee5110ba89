// Selective repeat for an RC connection between uroce peers (docs/lossy.md):
// the state an RC QP has once its peer answered the handshake. The engine
// owns it (a device pool, so no allocation per packet and a bound on
// memory) and attaches it with RcQp::set_sr; a QP without it pays one null
// test per packet and behaves as plain RC, byte for byte.
#pragma once

#include "datapath/transport/rc_counters.h"
#include "datapath/transport/rc_sr_rx.h"
#include "datapath/transport/rc_sr_spray.h"
#include "datapath/transport/rc_sr_tx.h"

namespace uroce::transport {

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
  // The RSN of the next SEND / WRITE with immediate (docs/lossy.md), 24 bits.
  std::uint32_t next_rsn = 0;
  // The UDP source ports its SEND and WRITE packets are sprayed over
  // (rc_sr_spray.h); off (one path) until the engine configures it.
  SrSpray spray;
  // Packets in flight at most (the device's lossy_cap, set by the engine
  // when it attaches this; docs/lossy.md "The cap"): one bandwidth-delay
  // product of the fabric. The requester also keeps its window and kSrWindow.
  std::uint32_t cap = kSrWindow;
};

}  // namespace uroce::transport
