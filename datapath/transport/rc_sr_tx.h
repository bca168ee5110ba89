// The requester's scoreboard of an RC connection in selective-repeat mode
// (docs/lossy.md "Requester"): which outstanding PSNs the responder holds
// (SACKs), when each was last sent, which are deemed lost, and the timers
// of the loss signal. I/O-free: the requester tells it what it sent, the
// completer what came back, and it says which PSNs to send again and when
// it next needs the timer.
//
// The loss signal is RACK's (RFC 8985), per PSN: p is lost once a PSN sent
// after it (later, or at the same instant with a higher PSN) was delivered
// and RTT + reo_wnd has passed since p was sent. RTT is that delivered
// PSN's; a PSN sent more than once gives no sample until min_rtt has
// passed since its last sending (the ACK may be the first copy's).
// reo_wnd = min_rtt / 4 x mult, at most srtt; a SACK with DUP (a
// retransmission that was not needed) doubles mult, up to 16.
// Tail-loss probe: with PSNs outstanding and no acknowledgement making
// progress for PTO = max(2 srtt, kMinPto) since the last send, the newest
// outstanding PSN not held is marked to go again. Up to kMaxProbes probes
// until progress, each waiting twice as long as the one before (PTO x 2^k
// after the k-th): a probe whose packet or answer is lost too (a dead
// path) is followed by another instead of the retransmission timeout.
//
// Invariants: outstanding PSNs are [base, high), at most kSrWindow of them
// (the requester's cap); slot psn & (kSrWindow - 1) is a PSN's. PSNs the
// requester marked exempt (a READ's or atomic's: their responses, not
// SACKs, deliver them; RC's rules recover them) are never deemed lost.
// A PSN deemed lost by the loss signal or the timeout (not by the probe)
// charges its path when the connection sprays (rc_sr_spray.h).
#pragma once

#include <array>
#include <cstdint>

#include "datapath/base/time.h"
#include "datapath/transport/rc_counters.h"
#include "datapath/transport/rc_sr_rx.h"
#include "datapath/transport/rc_sr_spray.h"
#include "datapath/transport/seq24.h"
#include "datapath/wire/sr_sack_eth.h"

namespace uroce::transport {

class SrTx {
 public:
  static constexpr TimeNs kMinPto = 100 * kNsPerUs;
  static constexpr std::uint32_t kMaxReoMult = 16;
  static constexpr std::uint32_t kMaxProbes = 4;

  // Where it counts sr_tx_lost, sr_tx_probes and sr_tx_spurious (RcSr's),
  // and the paths it charges losses to (RcSr's; null: none).
  void bind(RcSrCounters* ctr, SrSpray* spray = nullptr) {
    ctr_ = ctr;
    spray_ = spray;
  }
  // Nothing outstanding; the next PSN sent is `start`.
  void reset(Psn start);

  // The requester sent PSN p at `now`: a new one (p == high) or again.
  // `exempt`: a READ's or atomic's PSN, recovered by RC's rules.
  void on_sent(Psn p, TimeNs now, bool exempt = false);
  // An acknowledgement: every PSN before `cum` delivered; with a SACKETH,
  // bit i = PSN cum + i held. Then the loss signal runs at `now`.
  void on_ack(Psn cum, const wire::SrSackEthHdr* sack, TimeNs now);
  // The loss signal and the tail-loss probe at `now` (the timer fired).
  void on_timer(TimeNs now);
  // The retransmission timeout fired: every outstanding PSN not held (and
  // not exempt) is deemed lost, so only those go again.
  void on_rto();
  // The earliest instant on_timer has work: the reorder timer of a PSN not
  // yet lost, or the probe; 0 when none.
  TimeNs deadline() const;

  // The oldest PSN deemed lost and not sent again since; false when none.
  bool next_lost(Psn* p) const;
  // p will not be sent again by itself (RC's rules recover it).
  void forget(Psn p) {
    if (outstanding(p)) clear(lost_, p);
  }
  bool lost(Psn p) const { return outstanding(p) && bit(lost_, p); }
  bool held(Psn p) const { return outstanding(p) && bit(held_, p); }
  Psn base() const { return base_; }
  Psn high() const { return high_; }
  std::uint32_t in_flight() const { return Psn::forward(base_, high_); }

  TimeNs srtt() const { return srtt_; }
  TimeNs min_rtt() const { return min_rtt_; }
  TimeNs reo_wnd() const;
  TimeNs pto() const;
  // Probes sent since the last progress (0..kMaxProbes).
  std::uint32_t probes() const { return probes_; }

 private:
  using Bits = std::array<std::uint64_t, kSrWindow / 64>;
  static std::uint32_t slot(Psn p) { return p.value() & (kSrWindow - 1); }
  static bool bit(const Bits& b, Psn p) { return (b[slot(p) / 64] >> (slot(p) % 64)) & 1; }
  static void set(Bits& b, Psn p) { b[slot(p) / 64] |= std::uint64_t{1} << (slot(p) % 64); }
  static void clear(Bits& b, Psn p) { b[slot(p) / 64] &= ~(std::uint64_t{1} << (slot(p) % 64)); }
  bool outstanding(Psn p) const { return p.in_window(base_, in_flight()); }
  // PSN q reached the responder (or the requester: cumulatively): an RTT
  // sample and the newest delivered transmission for RACK.
  void delivered(Psn q, TimeNs now);
  void detect(TimeNs now);
  void count(std::uint64_t RcSrCounters::*field) {
    if (ctr_ != nullptr) ++(ctr_->*field);
  }
  // p deemed lost (not by the probe).
  void lose(Psn p) {
    set(lost_, p);
    count(&RcSrCounters::sr_tx_lost);
    if (spray_ != nullptr) spray_->charge(p);
  }

  Psn base_{};
  Psn high_{};
  Bits held_{};
  Bits lost_{};
  Bits exempt_{};
  std::array<TimeNs, kSrWindow> sent_at_{};
  // Sent at least once; sent more than once (its ACK may be an earlier
  // copy's).
  Bits sent_{};
  Bits resent_{};
  // RACK: the newest delivered transmission (time, then PSN) and its RTT.
  bool rack_valid_ = false;
  TimeNs rack_ts_ = 0;
  Psn rack_psn_{};
  TimeNs rack_rtt_ = 0;
  TimeNs srtt_ = 0;
  TimeNs min_rtt_ = 0;
  std::uint32_t reo_mult_ = 1;
  TimeNs reo_at_ = 0;
  TimeNs pto_at_ = 0;
  std::uint8_t probes_ = 0;
  RcSrCounters* ctr_ = nullptr;
  SrSpray* spray_ = nullptr;
};

}  // namespace uroce::transport
