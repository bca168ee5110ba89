// Selective repeat between uroce peers (issue 33; docs/lossy.md), when
// VnicConfig::lossy: a QP extension (qp_extension.h). The transport's rules
// are transport/rc_sr*.h, attached per RC QP with RcQp::set_sr; this file is
// the HELLO handshake that decides, per connection, whether to attach them,
// and the device pool their state comes from:
//   - Pool (constructor): lossy_qps RcSr states made when the device starts;
//     a connection takes one at its RTR and gives it back when its QP is
//     reset or destroyed. Nothing allocates afterwards; memory is bounded
//     by the pool whatever the number of QPs.
//   - Probe (on_modified): an RC QP reaching RTR (or RTS without it) whose
//     path MTU leaves room for SR's headers (wire::sr_fits) takes a state,
//     attaches it (its responder accepts SR opcodes from then on) and sends
//     a HELLO probe to its peer QP. A silent peer is probed again as the
//     connection carries traffic (on_delivered), at most kMaxProbes HELLOs
//     in all, kProbeGapNs apart; then the QP stays go-back-N.
//   - Spray (start): when spray_paths > 1, a connection whose peer accepted
//     gets its paths then, fixed for its life: its own UDP source port and
//     spray_paths - 1 more with the same receiver RX queue
//     (port::path_src_port); transport/rc_sr_spray.h chooses per packet.
//     Its cap of packets in flight (RcSr::cap) becomes the device's
//     lossy_cap then too.
//   - Answer (on_rx): a probe from the peer is answered with our window, or
//     with 0 (declined) when the pool is empty or the path MTU does not fit;
//     a probe that finds the QP without an address yet is answered at its
//     RTR. A HELLO with a window (probe or answer) tells the requester that
//     the peer's responder takes SR opcodes: RcQp::sr_tx_start.
// Invariant: a QP sends a HELLO with a window only while it has a state
// attached, and keeps it until RESET or destroy, so a peer that saw one may
// send SR opcodes for the connection's whole life (even when this side
// never saw the peer's answer).
// A device with it off never calls any of this: its transport drops HELLOs
// and SR opcodes (drop_not_rc). A window below kSrWindow is taken as
// declining: version 1 of the protocol keeps the requester's cap at 256.
// Counters: LossyCounters below, the handshake's and the sum of every
// connection's RcSrCounters (those returned to the pool and those in use);
// per QP, QpStatus::sr_peer and sr.
//
// State: one Qp per QP slot and the pool, allocated at construction when
// enabled. Engine thread only.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <vector>

#include "datapath/base/counter_fields.h"
#include "datapath/policy/qp_extension.h"
#include "datapath/port/rss.h"
#include "datapath/transport/qp_common.h"
#include "datapath/transport/rc_qp.h"
#include "datapath/transport/rc_sr.h"
#include "datapath/wire/builder.h"
#include "datapath/wire/opcodes.h"
#include "datapath/wire/parser.h"
#include "datapath/wire/sr_hello.h"

namespace uroce::policy {

// The device's selective-repeat counters (all 0 with it off): the
// connections' RcSrCounters summed, and the handshake's own.
struct LossyCounters : transport::RcSrCounters {
  std::uint64_t sr_hello_tx_probes = 0;
  std::uint64_t sr_hello_tx_answers = 0;
  std::uint64_t sr_hello_tx_declined = 0;
  std::uint64_t sr_hello_rx = 0;
  std::uint64_t sr_hello_rx_declined = 0;
  std::uint64_t sr_hello_bad = 0;
  std::uint64_t sr_hello_no_buffer = 0;
  std::uint64_t sr_pool_empty = 0;
  std::uint64_t sr_connections = 0;
  std::uint64_t sr_qps = 0;
  std::uint64_t sr_pool_free = 0;
};

inline constexpr counters::FieldList<LossyCounters, 11> kLossyOwnFields{{
    {"sr_hello_tx_probes", &LossyCounters::sr_hello_tx_probes,
     "HELLO probes sent (at RTR, and again to a silent peer)"},
    {"sr_hello_tx_answers", &LossyCounters::sr_hello_tx_answers,
     "HELLOs sent answering a probe with a window (selective repeat accepted)"},
    {"sr_hello_tx_declined", &LossyCounters::sr_hello_tx_declined,
     "HELLOs sent answering a probe with window 0: pool empty or no room in the path MTU"},
    {"sr_hello_rx", &LossyCounters::sr_hello_rx, "HELLOs received (probes and answers)"},
    {"sr_hello_rx_declined", &LossyCounters::sr_hello_rx_declined,
     "HELLOs received with a window below 256: the peer declined"},
    {"sr_hello_bad", &LossyCounters::sr_hello_bad,
     "HELLOs dropped: short, another version, not an RC QP, not from its peer"},
    {"sr_hello_no_buffer", &LossyCounters::sr_hello_no_buffer, "HELLOs not sent: no TX buffer"},
    {"sr_pool_empty", &LossyCounters::sr_pool_empty,
     "RC connections that found the selective-repeat pool empty (go-back-N)"},
    {"sr_connections", &LossyCounters::sr_connections,
     "RC QPs whose peer accepted selective repeat, ever"},
    {"sr_qps", &LossyCounters::sr_qps, "RC QPs using selective repeat now", counters::Kind::kLevel},
    {"sr_pool_free", &LossyCounters::sr_pool_free, "selective-repeat states free in the pool",
     counters::Kind::kLevel},
}};
inline constexpr auto kLossyCounterFields =
    counters::extend(transport::kRcSrCounterFields, kLossyOwnFields);
static_assert(counters::covers_extended(kLossyCounterFields, transport::kRcSrCounterFields));
constexpr const auto& counter_fields(const LossyCounters&) { return kLossyCounterFields; }

class Lossy : public NoHooks {
 public:
  static constexpr std::uint32_t kHooks =
      hook::kRx | hook::kDelivered | hook::kModified | hook::kSlots | hook::kStatus;
  static constexpr std::uint8_t kMaxProbes = 4;
  static constexpr TimeNs kProbeGapNs = 1'000'000;

  Lossy(const engine::VnicConfig& c, std::uint32_t slots)
      : on_(c.lossy),
        eth_mtu_(c.eth_mtu),
        spray_paths_(std::min(c.spray_paths, transport::SrSpray::kMaxPaths)),
        spray_ecn_(c.spray_ecn),
        cap_(std::clamp<std::uint32_t>(c.lossy_cap, 1, transport::kSrWindow)) {
    if (!on_) return;
    qps_.assign(slots, Qp{});
    pool_ = std::vector<transport::RcSr>(c.lossy_qps);
    free_.reserve(c.lossy_qps);
    for (std::uint32_t i = c.lossy_qps; i > 0; --i) free_.push_back(i - 1);
  }
  bool enabled() const { return on_; }
  using Counters = LossyCounters;
  // A sum over the pool (the status path, never the packet path).
  LossyCounters counters() const {
    LossyCounters c = ctr_;
    counters::add(static_cast<transport::RcSrCounters&>(c), retired_);
    for (const Qp& q : qps_) {
      if (q.sr >= 0) counters::add(static_cast<transport::RcSrCounters&>(c), pool_[q.sr].ctr);
    }
    c.sr_pool_free = free_.size();
    return c;
  }
  template <class H, class Q>
  void status(const H&, const Q& e, engine::QpStatus* s) const {
    const Qp& q = qps_[e.slot];
    s->sr_peer = q.peer;
    if (q.sr < 0) return;
    const transport::RcSr& r = pool_[q.sr];
    s->sr = r.ctr;
    s->sr_paths = r.spray.paths();
    s->sr_avoided = r.spray.avoided_now();
  }

  // The state attached to the QP in `slot` (null: plain RC), for tests.
  const transport::RcSr* state_of(std::uint32_t slot) const {
    return on_ && qps_[slot].sr >= 0 ? &pool_[qps_[slot].sr] : nullptr;
  }

  template <class H, class Q>
  void on_created(H& h, Q& e) {
    release(h, e);
  }
  template <class H, class Q>
  void on_destroyed(H& h, Q& e) {
    release(h, e);
  }

  // RESET returns the state (a new connection negotiates again); RTR (or
  // RTS without it) takes one and probes, or answers a probe that came
  // before the QP had an address.
  template <class H, class Q>
  void on_modified(H& h, Q& e, transport::QpState before) {
    using transport::QpState;
    if (H::type(e) != transport::QpType::kRc) return;
    const QpState s = H::state(e);
    if (s == QpState::kReset) {
      release(h, e);
      return;
    }
    if ((s != QpState::kRtr && s != QpState::kRts) || s == before) return;
    Qp& q = qps_[e.slot];
    if (q.sr < 0 && !q.tried) attach(h, e);
    if (q.owe_answer) {
      q.owe_answer = false;
      answer(h, e);
      if (q.peer_ok) start(h, e);
    } else if (q.sr >= 0 && !q.peer && q.probes == 0) {
      hello(h, e, false);
    }
  }

  // Before the transport: a HELLO is consumed here.
  template <class H, class Q>
  bool on_rx(H& h, Q& e, TimeNs) {
    if (h.packet().bth.opcode() != wire::op::kSrHello) return false;
    control(h, e);
    return true;
  }

  // After the RC transport took a packet: a silent peer is probed again.
  template <class H, class Q>
  void on_delivered(H& h, Q& e, TimeNs now) {
    Qp& q = qps_[e.slot];
    if (q.sr < 0 || q.peer || q.declined || q.probes >= kMaxProbes) return;
    if (now >= q.probe_ns + kProbeGapNs) hello(h, e, false);
  }

 private:
  struct Qp {
    // The pool index of the attached state; -1: none.
    std::int32_t sr = -1;
    // The peer's HELLO with a window came: the requester was told.
    bool peer = false;
    // A probe came before this QP had an address: answer at its RTR;
    // peer_ok: that probe had a window.
    bool owe_answer = false;
    bool peer_ok = false;
    // The peer declined: no more probes.
    bool declined = false;
    // This connection asked the pool already (at its RTR).
    bool tried = false;
    std::uint8_t probes = 0;
    TimeNs probe_ns = 0;
  };

  // Takes a state for e's connection when its path MTU fits; false (and
  // counted when the pool is empty) otherwise.
  template <class H, class Q>
  bool attach(H& h, Q& e) {
    Qp& q = qps_[e.slot];
    q.tried = true;
    if (!wire::sr_fits(e.attr.path_mtu, eth_mtu_)) return false;
    if (free_.empty()) {
      ++ctr_.sr_pool_empty;
      return false;
    }
    q.sr = static_cast<std::int32_t>(free_.back());
    free_.pop_back();
    transport::RcSr& s = pool_[q.sr];
    s.ctr = {};
    H::rc(e).set_sr(&s);
    static_cast<void>(h);
    return true;
  }

  template <class H, class Q>
  void release(H&, Q& e) {
    Qp& q = qps_[e.slot];
    if (q.sr >= 0) {
      H::rc(e).set_sr(nullptr);
      counters::add(retired_, pool_[q.sr].ctr);
      free_.push_back(static_cast<std::uint32_t>(q.sr));
      if (q.peer) --ctr_.sr_qps;
    }
    q = Qp{};
  }

  // The peer's responder takes SR opcodes: the requester switches once its
  // earlier WQEs completed.
  template <class H, class Q>
  void start(H&, Q& e) {
    Qp& q = qps_[e.slot];
    if (q.peer || q.sr < 0) return;
    q.peer = true;
    pool_[q.sr].cap = cap_;
    spray<H>(e, pool_[q.sr].spray);
    H::rc(e).sr_tx_start();
    ++ctr_.sr_connections;
    ++ctr_.sr_qps;
  }

  // The connection's paths, from its own UDP source port (steered or
  // rxe's): each keeps the receiver's RX queue of that port.
  template <class H, class Q>
  void spray(Q& e, transport::SrSpray& s) const {
    if (spray_paths_ < 2) return;
    std::array<std::uint16_t, transport::SrSpray::kMaxPaths> ports{};
    const std::uint16_t base = H::rc(e).udp_src();
    for (std::uint32_t i = 0; i < spray_paths_; ++i) {
      ports[i] = port::path_src_port(base, i, e.attr.av.ipv6);
    }
    s.configure({ports.data(), spray_paths_});
    s.set_ecn(spray_ecn_);
  }

  // Answers the peer's probe: our window, or 0 when this QP has no state
  // (a connection that did not ask the pool yet asks now).
  template <class H, class Q>
  void answer(H& h, Q& e) {
    Qp& q = qps_[e.slot];
    if (q.sr < 0 && !q.tried) attach(h, e);
    hello(h, e, true);
  }

  template <class H, class Q>
  void control(H& h, Q& e);

  // A HELLO to e's peer QP, in the QP's class (its DSCP, its UDP source
  // port), ahead of this iteration's pump.
  template <class H, class Q>
  void hello(H& h, Q& e, bool is_answer) {
    Qp& q = qps_[e.slot];
    const std::uint16_t window = q.sr >= 0 ? static_cast<std::uint16_t>(transport::kSrWindow) : 0;
    const wire::SrHelloHdr m =
        wire::SrHelloHdr::make(is_answer, window,
                               window == 0 ? 0
                                           : static_cast<std::uint16_t>(transport::kSrRecvHeld));
    wire::PacketSpec s = h.to_peer(e);
    s.dscp = e.attr.av.dscp;
    s.udp_src = H::rc(e).udp_src();
    s.opcode = wire::op::kSrHello;
    s.psn = 0;
    s.payload = {m.raw, sizeof m.raw};
    if (!h.originate(e, s)) {
      ++ctr_.sr_hello_no_buffer;
    } else if (!is_answer) {
      ++ctr_.sr_hello_tx_probes;
    } else if (window != 0) {
      ++ctr_.sr_hello_tx_answers;
    } else {
      ++ctr_.sr_hello_tx_declined;
    }
    if (!is_answer) {
      ++q.probes;
      q.probe_ns = h.now();
    }
  }

  bool on_;
  std::uint32_t eth_mtu_;
  std::uint32_t spray_paths_;
  bool spray_ecn_;
  std::uint32_t cap_;
  std::vector<Qp> qps_;
  std::vector<transport::RcSr> pool_;
  std::vector<std::uint32_t> free_;
  // The counters of the states returned to the pool.
  transport::RcSrCounters retired_{};
  LossyCounters ctr_{};
};

// A HELLO for QP e: counted, answered, or dropped as bad.
template <class H, class Q>
void Lossy::control(H& h, Q& e) {
  using transport::QpState;
  const engine::VnicConfig& vc = h.config();
  const wire::ParsedPacket& pkt = h.packet();
  const QpState s = H::state(e);
  const bool addressed = s != QpState::kReset && s != QpState::kInit;
  const transport::LocalPort local{vc.mac, vc.ip, {}, vc.ip6};
  const auto m = wire::SrHelloHdr::from_payload(pkt.payload.head());
  if (H::type(e) != transport::QpType::kRc || s == QpState::kReset ||
      (addressed && !transport::from_peer(pkt, e.attr.av, local)) || !m ||
      m->version() != wire::SrHelloHdr::kVersion) {
    ++ctr_.sr_hello_bad;
    return;
  }
  ++ctr_.sr_hello_rx;
  Qp& q = qps_[e.slot];
  const bool ok = m->window() >= transport::kSrWindow;
  if (!ok) {
    ++ctr_.sr_hello_rx_declined;
    q.declined = true;
    return;
  }
  if (!m->answer()) {
    if (!addressed) {
      q.owe_answer = true;
      q.peer_ok = true;
      return;
    }
    if (s != QpState::kErr) answer(h, e);
  } else if (!addressed) {
    // An answer to a probe this connection never sent.
    ++ctr_.sr_hello_bad;
    return;
  }
  start(h, e);
}

}  // namespace uroce::policy
