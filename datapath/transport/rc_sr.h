// Selective repeat for an RC connection between uroce peers (docs/lossy.md):
// the state an RC QP has once its peer answered the handshake. The engine
// owns it (a device pool, so no allocation per packet and a bound on
// memory) and attaches it with RcQp::set_sr; a QP without it pays one null
// test per packet and behaves as plain RC, byte for byte.
#pragma once

#include "datapath/transport/rc_counters.h"
#include "datapath/transport/rc_sr_rx.h"
#include "datapath/transport/rc_sr_tx.h"

namespace uroce::transport {

struct RcSr {
  RcSrCounters ctr{};
  // The responder's window (rc_sr_rx.h): it accepts SR opcodes only while
  // this is attached.
  SrRx rx;
  // The requester's scoreboard (rc_sr_tx.h), in use once tx_on: the peer
  // answered the handshake, so WQEs started from then on use SR opcodes.
  SrTx tx;
  bool tx_on = false;
};

}  // namespace uroce::transport
