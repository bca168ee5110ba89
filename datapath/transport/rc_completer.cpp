#include "datapath/transport/rc_completer.h"

namespace uroce::transport {

void RcCompleter::on_timer(TimeNs now) {
  if (c_.state != QpState::kRts && c_.state != QpState::kSqd) return;
  if (sq_.rnr_wait && now >= sq_.rnr_deadline) {
    sq_.rnr_wait = false;
    // ACKs may have passed the NAKed PSN while we waited (a stale RNR NAK,
    // or a copy of the packet executed after all): resume at the oldest
    // unacknowledged PSN then, never at one no queued WQE holds.
    sq_.rewind(sq_.rnr_psn.before(sq_.comp_psn) ? sq_.comp_psn : sq_.rnr_psn);
  }
  if (sq_.rto_deadline == 0 || now < sq_.rto_deadline) return;
  sq_.rto_deadline = 0;
  if (!sq_.outstanding() || sq_.rnr_wait) return;
  if (sq_.retry_left == 0) {
    ++c_.ctr.retry_exceeded;
    if (!sq_.q.empty()) fail_wqe(sq_.q.front(), WcStatus::kRetryExcErr);
    return;
  }
  --sq_.retry_left;
  ++c_.ctr.timeouts;
  // Selective repeat: only what the responder does not hold (and, of a
  // READ, the responses not placed) goes again (rc_sr_tx.h), unless the
  // oldest WQE is RC's to recover (an atomic; every WQE started while
  // tx_on is SR's, rc_sr.h).
  if (c_.sr != nullptr && c_.sr->tx_on && !sq_.q.empty() && sq_.q.front().started &&
      !is_atomic(sq_.q.front().wr.opcode)) [[unlikely]] {
    c_.sr->tx.on_rto();
    sq_.rewind_pending = false;
    return;
  }
  sq_.rewind(sq_.comp_psn);
  // A timeout starts a fresh rewind: later NAKs may rewind again.
  sq_.rewind_pending = false;
}

TimeNs RcCompleter::next_deadline() const {
  TimeNs t = 0;
  if (sq_.rnr_wait) t = sq_.rnr_deadline;
  if (sq_.rto_deadline != 0 && (t == 0 || sq_.rto_deadline < t)) {
    t = sq_.rto_deadline;
  }
  return t;
}

}  // namespace uroce::transport
