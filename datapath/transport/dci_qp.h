// A DC initiator (docs/dc.md, "Initiator"): one QP that reaches any number
// of DC targets. It holds one RC requester and completer per stream (a
// lane: an RcQp whose RcCore::dc is the lane's DcLane), so each stream has
// its own PSNs, window, timers and retries, and its WRs complete in post
// order; streams are independent. A WR names its stream in
// SendWr::ud.dc_stream and its target in the rest of `ud` (the engine
// resolved the AH there).
//
// Errors: without errored streams (log_errored 0) a lane that moves to ERR
// takes the whole DCI to ERR, as an RC QP; with them, the lane's WRs
// complete (the failing one with its error, the rest IBV_WC_WR_FLUSH_ERR)
// and the lane starts again from RESET to the DCI's state, the other
// streams untouched.
//
// The interface is RcQp's (the engine drives both the same way). I/O-free;
// owned by one engine lcore.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "datapath/base/counter_fields.h"
#include "datapath/transport/dc_counters.h"
#include "datapath/transport/dc_lane.h"
#include "datapath/transport/dc_sr.h"
#include "datapath/transport/rc_qp.h"
#include "datapath/transport/rc_sr.h"

namespace uroce::transport {

struct DciQpConfig {
  RcQpConfig rc{};
  std::uint8_t log_streams = 0;
  std::uint8_t log_errored = 0;
  // A stream with nothing outstanding for this long sends DC_DISCONNECT,
  // so its target may give the context to another initiator (a target
  // retires only contexts whose initiator has seen a response: docs/dc.md).
  TimeNs idle_disconnect_ns = 100 * kNsPerUs;
  // Selective repeat (dc_sr.h, docs/lossy.md "DC"): each stream gets its
  // state and starts its connections with it where SR's headers fit
  // `sr_eth_mtu` beside a full payload; `sr_cap` packets in flight at most
  // (the device's lossy_cap).
  bool sr = false;
  std::uint32_t sr_eth_mtu = 0;
  std::uint16_t sr_cap = kSrWindow;
  // With `sr`: the paths each connection sprays over (dc_spray.h).
  DcSprayConfig spray{};
};

class DciQp {
 public:
  static constexpr QpType kType = QpType::kDci;
  static constexpr QpAddressing kAddressing = QpAddressing::kPerWr;
  static constexpr bool kSendCq = true;
  static constexpr bool kRecvCq = false;

  DciQp(const DciQpConfig& cfg, MrTable& mrs, DcConnClock& clock);
  DciQp(const DciQp&) = delete;
  DciQp& operator=(const DciQp&) = delete;

  std::uint32_t qpn() const { return cfg_.rc.qpn; }
  QpState state() const { return state_; }
  std::uint32_t streams() const { return static_cast<std::uint32_t>(lanes_.size()); }
  const RcQp& lane(std::uint32_t i) const { return *lanes_[i].qp; }
  const DcLane& dc_lane(std::uint32_t i) const { return *lanes_[i].dc; }
  const DciCounters& counters() const { return ctr_; }
  // The lanes' RC counters summed.
  RcCounters rc_counters() const;
  // The lanes' selective-repeat counters summed (0 without it).
  RcSrCounters sr_counters() const;
  // The targets that declined selective repeat (dc_sr.h).
  const DcSrDeclined& sr_declined() const { return declined_; }
  // Its streams' spray paths (dc_spray.h).
  const DcSpray& spray() const { return spray_; }

  // The DCI transitions of docs/dc.md (qp_modify_rules): 0 or EINVAL.
  int modify(std::uint32_t mask, const QpAttrValues& attr);
  QpAttrValues query() const;

  // EINVAL: a stream the DCI lacks, or what RcQp::post_send refuses.
  int post_send(const SendWr& wr);
  // A DCI has no receive queue.
  int post_recv(const RecvWr&) { return EINVAL; }

  // `acks`: no plain ACK waits for a pump here (qp_concept.h).
  template <class Io>
  void on_packet(const wire::ParsedPacket& pkt, TimeNs now, Io& io,
                 AckTiming acks = AckTiming::kNow);
  template <class Io>
  void on_timer(TimeNs now, Io& io);
  template <class Io>
  std::uint32_t pump_tx(TimeNs now, Io& io, std::uint32_t budget);
  // pump_tx, and whether output is left (qp_concept.h).
  template <class Io>
  PumpResult pump(TimeNs now, Io& io, std::uint32_t budget) {
    const std::uint32_t sent = pump_tx(now, io, budget);
    return PumpResult{sent, has_output()};
  }
  template <CqSink SendCq, CqSink RecvCq>
  std::uint32_t flush(SendCq& send_cq, RecvCq& recv_cq);

  bool has_output() const;
  TimeNs timer_deadline() const;
  std::uint32_t send_queue_depth() const;
  std::uint32_t recv_queue_depth() const { return 0; }

  bool has_events() const;
  template <EventSink S>
  std::uint32_t drain_events(S& sink);

 private:
  struct Lane {
    std::unique_ptr<DcLane> dc;
    std::unique_ptr<RcQp> qp;
    std::unique_ptr<RcSr> sr;  // with DciQpConfig::sr
    // When the lane last drained while connected (0: busy or unbound).
    TimeNs idle_since = 0;
  };
  // The lanes' timers are the DCI's one: after a lane call, the earliest
  // lane deadline is armed (lanes arm nothing themselves).
  struct NoTimer {
    void arm(std::uint32_t, TimeNs) {}
  };
  template <class Io>
  struct LaneIo {
    decltype(Io::tx)& tx;
    decltype(Io::send_cq)& send_cq;
    decltype(Io::recv_cq)& recv_cq;
    NoTimer& timer;
  };
  template <class Io>
  LaneIo<Io> lane_io(Io& io) {
    return LaneIo<Io>{io.tx, io.send_cq, io.recv_cq, no_timer_};
  }
  template <class Io>
  void after(Io& io, TimeNs now);
  // The lane's idle-disconnect deadline, or 0.
  TimeNs idle_deadline(const Lane& l) const {
    return l.idle_since == 0 ? 0 : l.idle_since + cfg_.idle_disconnect_ns;
  }
  // A lane in ERR: with errored streams, flushed and started again.
  template <class Io>
  void recover(Lane& l, Io& io);
  // Moves lane `l` through RESET to the DCI's current state with its
  // attributes.
  void restart_lane(Lane& l);

  DciQpConfig cfg_;
  QpState state_ = QpState::kReset;
  QpAttrValues attr_{};
  std::vector<Lane> lanes_;
  std::uint32_t rr_ = 0;  // the lane pump_tx serves first
  TimeNs armed_ = 0;
  NoTimer no_timer_;
  DciCounters ctr_{};
  DcSrDeclined declined_;
  DcSpray spray_;
};

template <class Io>
void DciQp::on_packet(const wire::ParsedPacket& pkt, TimeNs now, Io& io, AckTiming) {
  if (pkt.info == nullptr || !pkt.has(wire::ExtHdr::kDcAeth)) {
    ++ctr_.bad_status;
    return;
  }
  const wire::DcAethHdr& h = pkt.dc_aeth;
  if (h.lane() >= lanes_.size()) {
    ++ctr_.bad_lane;
    return;
  }
  Lane& l = lanes_[h.lane()];
  auto lio = lane_io(io);
  DcClosing& closing = l.dc->closing;
  if (closing.active && h.conn() == closing.conn &&
      (h.status() == wire::DcStatus::kGone || h.status() == wire::DcStatus::kUnknown)) {
    // The target answered the DISCONNECT of the connection the stream left.
    closing.active = false;
    after(io, now);
    return;
  }
  const DcStream& st = l.dc->stream;
  const bool other_conn = !st.bound() || h.conn() != st.conn();
  switch (h.status()) {
    case wire::DcStatus::kOk:
    case wire::DcStatus::kBusy:
    case wire::DcStatus::kKeyViolation:
      // An answer about another connection (an earlier one's late
      // response, or one of a target the stream left) says nothing about
      // this one's PSNs (docs/dc.md, "Wire").
      if (other_conn) {
        ++ctr_.other_conn;
        after(io, now);
        return;
      }
      break;
    default: break;
  }
  switch (h.status()) {
    case wire::DcStatus::kBusy:  // an RNR NAK in the AETH
      l.dc->stream.count(DcAnswer::kBusy);
      l.qp->on_packet(pkt, now, lio);
      l.qp->dc_peer_alive();
      break;
    case wire::DcStatus::kKeyViolation:  // a NAK remote access error
      l.dc->stream.count(DcAnswer::kKeyViolation);
      l.qp->on_packet(pkt, now, lio);
      break;
    case wire::DcStatus::kOk: l.qp->on_packet(pkt, now, lio); break;
    case wire::DcStatus::kGone:
      l.qp->dc_answer(DcAnswer::kGone, h.conn(), h.value(), now, lio);
      break;
    case wire::DcStatus::kUnknown:
      l.qp->dc_answer(DcAnswer::kUnknown, h.conn(), h.value(), now, lio);
      break;
    case wire::DcStatus::kNoSr:
      l.qp->dc_answer(DcAnswer::kNoSr, h.conn(), h.value(), now, lio);
      break;
    default: ++ctr_.bad_status; return;
  }
  if (l.qp->state() == QpState::kErr) recover(l, io);
  after(io, now);
}

template <class Io>
void DciQp::on_timer(TimeNs now, Io& io) {
  auto lio = lane_io(io);
  for (Lane& l : lanes_) {
    const TimeNs d = l.qp->timer_deadline();
    if (d != 0 && d <= now) {
      l.qp->on_timer(now, lio);
      if (l.qp->state() == QpState::kErr) recover(l, io);
    }
    const TimeNs idle = idle_deadline(l);
    if (idle != 0 && idle <= now && l.qp->dc_disconnect(io.tx, now)) l.idle_since = 0;
    l.qp->dc_closing_timer(io.tx, now);
  }
  armed_ = 0;
  after(io, now);
}

template <class Io>
std::uint32_t DciQp::pump_tx(TimeNs now, Io& io, std::uint32_t budget) {
  auto lio = lane_io(io);
  std::uint32_t n = 0;
  const auto k = static_cast<std::uint32_t>(lanes_.size());
  for (std::uint32_t i = 0; i < k && n < budget; ++i) {
    Lane& l = lanes_[(rr_ + i) % k];
    if (!l.qp->has_output()) continue;
    n += l.qp->pump_tx(now, lio, budget - n);
    if (l.qp->state() == QpState::kErr) recover(l, io);
  }
  rr_ = (rr_ + 1) % k;
  after(io, now);
  return n;
}

template <class Io>
void DciQp::recover(Lane& l, Io& io) {
  if (cfg_.log_errored == 0) {
    // No errored streams: the DCI as a whole fails, as an RC QP does.
    state_ = QpState::kErr;
    for (Lane& o : lanes_) {
      if (o.qp->state() != QpState::kErr) {
        QpAttrValues a{};
        a.qp_state = QpState::kErr;
        o.qp->modify(qp_attr::kState, a);
      }
    }
    return;
  }
  // The failing WR and the rest of the stream complete; once all are out
  // the lane starts again (a full CQ leaves it in ERR until the next call).
  l.qp->flush(io.send_cq, io.recv_cq);
  if (l.qp->send_queue_depth() == 0) {
    ++ctr_.stream_recoveries;
    restart_lane(l);
  }
}

template <class Io>
void DciQp::after(Io& io, TimeNs now) {
  for (Lane& l : lanes_) {
    const bool idle = l.qp->send_queue_depth() == 0 && l.dc->stream.bound();
    if (!idle) {
      l.idle_since = 0;
    } else if (l.idle_since == 0) {
      l.idle_since = now;
    }
  }
  const TimeNs d = state_ == QpState::kErr ? 0 : timer_deadline();
  if (d != armed_) {
    armed_ = d;
    if (d != 0) io.timer.arm(cfg_.rc.qpn, d);
  }
}

template <CqSink SendCq, CqSink RecvCq>
std::uint32_t DciQp::flush(SendCq& send_cq, RecvCq& recv_cq) {
  std::uint32_t n = 0;
  for (Lane& l : lanes_) n += l.qp->flush(send_cq, recv_cq);
  return n;
}

template <EventSink S>
std::uint32_t DciQp::drain_events(S& sink) {
  std::uint32_t n = 0;
  for (Lane& l : lanes_) n += l.qp->drain_events(sink);
  return n;
}

static_assert(Qp<DciQp>);

}  // namespace uroce::transport
