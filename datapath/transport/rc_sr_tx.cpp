#include "datapath/transport/rc_sr_tx.h"

#include <algorithm>

namespace uroce::transport {

void SrTx::reset(Psn start) {
  // A new connection (the state comes from the device's pool, where the
  // last connection left its RTT and reordering estimates: another peer's).
  srtt_ = min_rtt_ = 0;
  reo_mult_ = 1;
  base_ = high_ = start;
  held_ = {};
  lost_ = {};
  exempt_ = {};
  read_ = {};
  rack_valid_ = false;
  rack_ts_ = rack_rtt_ = 0;
  reo_at_ = pto_at_ = 0;
  probes_ = 0;
}

TimeNs SrTx::reo_wnd() const {
  const TimeNs w = min_rtt_ / 4 * reo_mult_;
  return srtt_ != 0 ? std::min(w, srtt_) : w;
}

TimeNs SrTx::pto() const { return std::max<TimeNs>(2 * srtt_, kMinPto); }

void SrTx::on_sent(Psn p, TimeNs now, Kind kind) {
  // Acknowledged already (a go-back-N of RC's rules): nothing to track.
  if (p.before(base_)) return;
  if (!outstanding(p)) {
    // A new PSN: the requester sends them in order and its cap keeps them
    // within the window; past it (no correct requester) tracking restarts.
    if (Psn::forward(base_, p) >= kSrWindow) reset(p);
    for (Psn q = high_; q != p + 1; ++q) {
      clear(held_, q);
      clear(lost_, q);
      clear(exempt_, q);
      clear(read_, q);
      clear(sent_, q);
      clear(resent_, q);
    }
    high_ = p + 1;
  }
  const std::uint32_t s = slot(p);
  sent_at_[s] = now;
  if (bit(sent_, p)) {
    set(resent_, p);
  } else {
    set(sent_, p);
  }
  clear(lost_, p);
  if (kind == Kind::kAtomic) set(exempt_, p);
  if (kind == Kind::kReadResponse) set(read_, p);
  pto_at_ = now + (pto() << probes_);
}

bool SrTx::on_response(Psn p, TimeNs now) {
  if (!outstanding(p) || !bit(read_, p) || bit(held_, p)) return false;
  set(held_, p);
  clear(lost_, p);
  delivered(p, now);
  pto_at_ = now + (pto() << probes_);
  detect(now);
  return true;
}

void SrTx::on_dup_response(Psn p) {
  if (!outstanding(p) || !bit(read_, p) || !bit(resent_, p)) return;
  // Once per re-request: the next copy of p is not counted again.
  clear(resent_, p);
  count(&RcSrCounters::sr_tx_spurious);
  reo_mult_ = std::min(reo_mult_ * 2, kMaxReoMult);
}

void SrTx::on_ack_beyond(Psn upto, TimeNs now) {
  if (upto.before(base_)) return;
  const std::uint32_t n = std::min(Psn::forward(base_, upto), in_flight());
  for (std::uint32_t i = 0; i < n; ++i) {
    const Psn q = base_ + i;
    if (bit(held_, q) || bit(read_, q) || bit(exempt_, q)) continue;
    set(held_, q);
    clear(lost_, q);
    delivered(q, now);
  }
  detect(now);
}

void SrTx::delivered(Psn q, TimeNs now) {
  const std::uint32_t s = slot(q);
  const TimeNs at = sent_at_[s];
  if (now < at) return;
  const TimeNs rtt = now - at;
  // A PSN sent more than once may have been delivered by its first copy.
  if (bit(resent_, q) && rtt < min_rtt_) return;
  min_rtt_ = min_rtt_ == 0 ? rtt : std::min(min_rtt_, rtt);
  srtt_ = srtt_ == 0 ? rtt : srtt_ - srtt_ / 8 + rtt / 8;
  if (!rack_valid_ || at > rack_ts_ || (at == rack_ts_ && rack_psn_.before(q))) {
    rack_valid_ = true;
    rack_ts_ = at;
    rack_psn_ = q;
    rack_rtt_ = rtt;
  }
}

void SrTx::on_ack(Psn cum, const wire::SrSackEthHdr* sack, TimeNs now) {
  // A stale acknowledgement moves nothing; none reaches past what was sent
  // (the completer drops ACKs for PSNs never sent).
  Psn to = cum;
  if (to.before(base_)) {
    to = base_;
  } else if (Psn::forward(base_, to) > in_flight()) {
    to = high_;
  }
  // A SACK's cumulative PSN passes a READ's response PSNs once the READ
  // ran; base stops at the first one not placed, and the request PSNs
  // after it count as delivered (on_ack_beyond).
  const Psn old = base_;
  for (; base_ != to && !(bit(read_, base_) && !bit(held_, base_)); ++base_) {
    if (!bit(held_, base_) && !bit(exempt_, base_)) delivered(base_, now);
    clear(held_, base_);
    clear(lost_, base_);
  }
  const bool progress = base_ != old;
  for (Psn q = base_; q != to; ++q) {
    if (bit(held_, q) || bit(read_, q) || bit(exempt_, q)) continue;
    set(held_, q);
    clear(lost_, q);
    delivered(q, now);
  }
  if (sack != nullptr) {
    for (std::uint32_t i = 1; i < wire::SrSackEthHdr::kBitmapBits; ++i) {
      const Psn q = cum + i;
      // A READ response PSN lies before the responder's ePSN once its READ
      // ran: only its response delivers it.
      if (!sack->bit(i) || !outstanding(q) || bit(held_, q) || bit(read_, q)) continue;
      set(held_, q);
      clear(lost_, q);
      if (!bit(exempt_, q)) delivered(q, now);
    }
    if (sack->dup()) {
      count(&RcSrCounters::sr_tx_spurious);
      reo_mult_ = std::min(reo_mult_ * 2, kMaxReoMult);
    }
    // ECE: a request packet arrived marked CE. Its path is charged while
    // the spray still knows it (sent within the last kSrWindow PSNs).
    if (sack->ece() && spray_ != nullptr && spray_->ecn()) {
      // The offset is from the BTH PSN, cum - 1 (modulo 2^24, a negative
      // offset included).
      const Psn q = (cum - 1) + static_cast<std::uint32_t>(sack->ce_offset());
      if (q.before(high_) && Psn::forward(q, high_) <= kSrWindow &&
          !(outstanding(q) && bit(read_, q))) {
        spray_->congested(q);
      }
    }
  }
  if (progress) probes_ = 0;
  pto_at_ = in_flight() != 0 ? now + (pto() << probes_) : 0;
  detect(now);
}

void SrTx::detect(TimeNs now) {
  reo_at_ = 0;
  if (!rack_valid_) return;
  const TimeNs wnd = reo_wnd();
  const std::uint32_t n = in_flight();
  for (std::uint32_t i = 0; i < n; ++i) {
    const Psn p = base_ + i;
    if (bit(held_, p) || bit(lost_, p) || bit(exempt_, p)) continue;
    const TimeNs at = sent_at_[slot(p)];
    const bool before = at < rack_ts_ || (at == rack_ts_ && p.before(rack_psn_));
    if (!before) continue;
    const TimeNs when = at + rack_rtt_ + wnd;
    if (now >= when) {
      lose(p);
    } else if (reo_at_ == 0 || when < reo_at_) {
      reo_at_ = when;
    }
  }
}

void SrTx::on_timer(TimeNs now) {
  detect(now);
  if (pto_at_ == 0 || now < pto_at_ || probes_ >= kMaxProbes || in_flight() == 0) return;
  // The tail-loss probe: the newest outstanding PSN not held goes again.
  for (std::uint32_t i = in_flight(); i-- > 0;) {
    const Psn p = base_ + i;
    if (bit(held_, p) || bit(exempt_, p)) continue;
    if (bit(read_, p)) {
      probe_read();
    } else if (!bit(lost_, p)) {
      set(lost_, p);
    }
    count(&RcSrCounters::sr_tx_probes);
    ++probes_;
    if (spray_ != nullptr) spray_->silent();
    break;
  }
  pto_at_ = 0;
}

void SrTx::probe_read() {
  const std::uint32_t n = in_flight();
  std::uint32_t i = 0;
  while (i < n && !(bit(read_, base_ + i) && !bit(held_, base_ + i))) ++i;
  if (i == n) return;
  const TimeNs at = sent_at_[slot(base_ + i)];
  for (; i < n; ++i) {
    const Psn p = base_ + i;
    if (bit(read_, p) && !bit(held_, p) && sent_at_[slot(p)] == at) set(lost_, p);
  }
}

void SrTx::on_rto() {
  const std::uint32_t n = in_flight();
  for (std::uint32_t i = 0; i < n; ++i) {
    const Psn p = base_ + i;
    if (bit(held_, p) || bit(exempt_, p)) continue;
    // Charged once: a PSN already deemed lost was charged then.
    if (!bit(lost_, p) && spray_ != nullptr && !bit(read_, p)) spray_->charge(p);
    set(lost_, p);
  }
  // The timeout's resends start a new round of probes.
  probes_ = 0;
  pto_at_ = 0;
}

TimeNs SrTx::deadline() const {
  TimeNs d = reo_at_;
  if (pto_at_ != 0 && probes_ < kMaxProbes && (d == 0 || pto_at_ < d)) d = pto_at_;
  return d;
}

bool SrTx::next_lost(Psn* p) const {
  const std::uint32_t n = in_flight();
  for (std::uint32_t i = 0; i < n; ++i) {
    const Psn q = base_ + i;
    if (bit(lost_, q) && !bit(held_, q)) {
      *p = q;
      return true;
    }
  }
  return false;
}

}  // namespace uroce::transport
