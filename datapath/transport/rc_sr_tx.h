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
// retransmission that was not needed) doubles mult, up to kMaxReoMult:
// high enough that srtt is the bound that holds (under PFC pauses or a
// deep queue the reordering of sprayed paths is many min_rtts; a cap of
// 16, 4 min_rtt, left spurious resends feeding the congestion).
// Tail-loss probe: with PSNs outstanding and no acknowledgement making
// progress for PTO = max(2 srtt, kMinPto) since the last send, the newest
// outstanding PSN not held is marked to go again. Up to kMaxProbes probes
// until progress, each waiting twice as long as the one before (PTO x 2^k
// after the k-th): a probe whose packet or answer is lost too (a dead
// path) is followed by another instead of the retransmission timeout.
// Eight: at the 100 us floor the last leaves 25.5 ms after the silence
// began, so a path back within that (a flapping link, routes
// reconverging) is found before a 67 ms timeout (local ACK timeout 14, the
// testbed's and perftest's); with four (1.5 ms) a
// connection whose answers crossed a flapping link waited for its timeout
// (docs/lossy-fabrics.md "A flapping link"). A
// READ response PSN's probe asks again for the oldest READ response not
// placed (probe_read).
//
// READ response PSNs (docs/lossy.md "READ responses") are tracked like
// request PSNs, sent when their READ request (or a re-request) left:
// their responses, never a SACK bit or an ACK, deliver them (on_response:
// the requester placed one), and the same loss signal, probe and timeout
// deem them lost, so the requester asks for them again. Responses leave the
// responder in PSN order, so "sent after" is the PSN order within one
// request, and a re-request's PSNs count as sent after everything the
// responder answered before it.
//
// Invariants: outstanding PSNs are [base, high), at most kSrWindow of them
// (the requester's cap); slot psn & (kSrWindow - 1) is a PSN's. PSNs the
// requester marked exempt (an atomic's: its ACK, not SACKs, delivers it;
// RC's rules recover it) are never deemed lost. A PSN deemed lost by the
// loss signal or the timeout (not by the probe) charges its path when the
// connection sprays (rc_sr_spray.h); READ response PSNs have no path.
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
  static constexpr std::uint32_t kMaxReoMult = 1024;
  static constexpr std::uint32_t kMaxProbes = 8;

  // Where it counts sr_tx_lost, sr_tx_probes and sr_tx_spurious (RcSr's),
  // and the paths it charges losses to (RcSr's; null: none).
  void bind(RcSrCounters* ctr, SrSpray* spray = nullptr) {
    ctr_ = ctr;
    spray_ = spray;
  }
  // Nothing outstanding, no RTT or reordering seen; the next PSN sent is
  // `start`.
  void reset(Psn start);
  // reset(start) for a new connection to the same peer: its RTT estimates
  // (srtt, min_rtt) stay, so its first probe waits for that peer's RTT
  // rather than the floor alone.
  void restart(Psn start) {
    const TimeNs srtt = srtt_;
    const TimeNs min_rtt = min_rtt_;
    reset(start);
    srtt_ = srtt;
    min_rtt_ = min_rtt;
  }

  // What a PSN stands for: a request packet, a READ response (asked for by
  // a READ request), or an atomic's ACK (exempt: recovered by RC's rules).
  enum class Kind : std::uint8_t { kRequest, kReadResponse, kAtomic };
  // The requester sent PSN p at `now` (for a READ response: asked for it):
  // a new one (p == high) or again.
  void on_sent(Psn p, TimeNs now, Kind kind = Kind::kRequest);
  // The requester placed the READ response PSN p at `now`: delivered, then
  // the loss signal runs. False (and nothing changes) when p is not an
  // outstanding READ response PSN or was placed already.
  bool on_response(Psn p, TimeNs now);
  // A cumulative acknowledgement up to `upto` that cannot move base yet (a
  // READ before it still misses responses): the request PSNs before it are
  // delivered, then the loss signal runs.
  void on_ack_beyond(Psn upto, TimeNs now);
  // A READ response PSN p arrived that was placed already. If the
  // requester had asked for it again, that re-request was not needed (the
  // first copy was only late): the reordering window widens, as for a SACK
  // with DUP.
  void on_dup_response(Psn p);
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
  bool outstanding(Psn p) const { return p.in_window(base_, in_flight()); }
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
  // PSN q reached the responder (or the requester: cumulatively): an RTT
  // sample and the newest delivered transmission for RACK.
  void delivered(Psn q, TimeNs now);
  void detect(TimeNs now);
  void count(std::uint64_t RcSrCounters::*field) {
    if (ctr_ != nullptr) ++(ctr_->*field);
  }
  // The probe when the newest PSN not held is a READ response's: a READ
  // request runs only in order at the responder, so a later one is dropped
  // there while an earlier one never ran (its request was lost) and nothing
  // comes back to show it. The oldest READ response PSN not held goes
  // again, with every PSN not held that the same request asked for.
  void probe_read();
  // p deemed lost (not by the probe).
  void lose(Psn p) {
    set(lost_, p);
    count(&RcSrCounters::sr_tx_lost);
    if (spray_ != nullptr && !bit(read_, p)) spray_->charge(p);
  }

  Psn base_{};
  Psn high_{};
  Bits held_{};
  Bits lost_{};
  Bits exempt_{};
  // READ response PSNs.
  Bits read_{};
  std::array<TimeNs, kSrWindow> sent_at_{};
  // Sent at least once; sent more than once (its ACK may be an earlier
  // copy's).
  Bits sent_{};
  Bits resent_{};
  // RACK: the newest delivered transmission (time, then PSN) and its RTT.
  // (The small members together: RcSr stays within 4 KiB.)
  TimeNs rack_ts_ = 0;
  TimeNs rack_rtt_ = 0;
  TimeNs srtt_ = 0;
  TimeNs min_rtt_ = 0;
  TimeNs reo_at_ = 0;
  TimeNs pto_at_ = 0;
  Psn rack_psn_{};
  std::uint32_t reo_mult_ = 1;
  bool rack_valid_ = false;
  std::uint8_t probes_ = 0;
  RcSrCounters* ctr_ = nullptr;
  SrSpray* spray_ = nullptr;
};

}  // namespace uroce::transport
