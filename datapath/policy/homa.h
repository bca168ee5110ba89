// The Homa-like scheduler between uroce peers (issue 15; docs/homa.md), when
// VnicConfig::homa.enabled: a QP extension (qp_extension.h). The policies
// are sched/grant_scheduler.h (receiver), transport/grant_gate.h through
// transport/rc_homa.h (sender) and sched/unsched_cutoffs.h; this file is
// where the engine meets them:
//   - Discovery (on_modified and on_rx): a connected RC QP moving to RTR
//     sends CUTOFFS with PROBE to its peer's QP; a peer with the scheduler
//     on answers with its own, and from then on both sides schedule the
//     connection (the QP's RcHomaTx is attached). rxe, an RNIC or a uroce
//     device with it off drop the probe: the QP stays plain RC. A probe the
//     peer could not answer yet (its QP had no address) is answered at its
//     own RTR; a lost one is sent again, at most kMaxProbes times, when the
//     connection carries traffic (on_delivered).
//   - Sender (transport/rc_homa.h): the requester sends a long message's
//     MLEN (its length) before its first packet and holds its bytes beyond
//     the unscheduled ones until GRANTs allow them; at each grant timeout
//     the timer phase sends the MLEN again (on_timer).
//   - Receiver (on_delivered, after the transport): each accepted data
//     packet of a QP whose message was announced counts the bytes below
//     the QP's expected PSN into the device's one GrantScheduler (all QPs,
//     all peers); the lengths of the messages seen feed the unscheduled
//     cutoffs, recomputed every cutoffs_every messages and sent to a peer
//     with the next packet it sends us.
//   - Sender-side priority (on_post, on_served, on_round_end): the TX
//     classes are the network priorities, all strict (tx_policy), and a
//     scheduled QP's class follows the priority of its next data packet
//     (set at post, at a grant and after its turns), so a host sends its
//     shortest message first.
//   - Grants (on_poll, phase 3b: after the timers, before the pump): when
//     data arrived or a resend is due, the scheduler's grants leave as
//     GRANT packets at the top priority, ahead of this iteration's data.
// Extension packets carry their header where a payload would be
// (wire/opcodes.h); a short or malformed one is counted (homa_rx_bad).
// RC ACKs leave from the RX phase (kAcksNow): the pump may hold a QP back.
// A device with it off pays one test of the Vnic's hook mask per received
// RoCEv2 frame and per RC frame, and its QPs none of this state. Counters:
// HomaCounters below (the device's status shows them among its counters,
// under the same names); per QP, QpStatus::homa.
//
// State: one Qp per QP slot and the scheduler, allocated at construction
// when enabled; nothing here allocates afterwards. Engine thread only.
#pragma once

#include <algorithm>
#include <array>
#include <cassert>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "datapath/base/counter_fields.h"
#include "datapath/policy/qp_extension.h"
#include "datapath/transport/qp_common.h"
#include "datapath/transport/rc_homa.h"
#include "datapath/transport/rc_send_queue.h"
#include "datapath/wire/builder.h"
#include "datapath/wire/homa_cutoffs.h"
#include "datapath/wire/homa_grant.h"
#include "datapath/wire/homa_mlen.h"
#include "datapath/wire/parser.h"
#include "sched/grant_scheduler.h"
#include "sched/homa_settings.h"
#include "sched/unsched_cutoffs.h"

namespace uroce::policy {

// The device's Homa counters (all 0 with it off).
struct HomaCounters {
  std::uint64_t homa_rx_grants = 0;
  std::uint64_t homa_rx_cutoffs = 0;
  std::uint64_t homa_rx_mlen = 0;
  std::uint64_t homa_rx_bad = 0;
  std::uint64_t homa_tx_grants = 0;
  std::uint64_t homa_tx_cutoffs = 0;
  std::uint64_t homa_tx_no_buffer = 0;
  std::uint64_t homa_grant_no_qp = 0;
  std::uint64_t homa_peers = 0;
  std::uint64_t homa_cutoffs_updates = 0;
};

inline constexpr counters::FieldList<HomaCounters, 10> kHomaCounterFields{{
    {"homa_rx_grants", &HomaCounters::homa_rx_grants, "GRANTs received"},
    {"homa_rx_cutoffs", &HomaCounters::homa_rx_cutoffs, "CUTOFFS received (probes and answers)"},
    {"homa_rx_mlen", &HomaCounters::homa_rx_mlen, "MLENs received"},
    {"homa_rx_bad", &HomaCounters::homa_rx_bad,
     "extension packets dropped: short, invalid, not RC, not the peer's"},
    {"homa_tx_grants", &HomaCounters::homa_tx_grants, "GRANTs sent (resends included)"},
    {"homa_tx_cutoffs", &HomaCounters::homa_tx_cutoffs, "CUTOFFS sent"},
    {"homa_tx_no_buffer", &HomaCounters::homa_tx_no_buffer,
     "extension packets not sent: no TX buffer"},
    {"homa_grant_no_qp", &HomaCounters::homa_grant_no_qp,
     "grants for a QP that is gone (the message dropped)"},
    {"homa_peers", &HomaCounters::homa_peers,
     "QPs whose peer answered: scheduled connections, ever"},
    {"homa_cutoffs_updates", &HomaCounters::homa_cutoffs_updates,
     "times the receiver's cutoffs changed"},
}};
static_assert(counters::covers(kHomaCounterFields));
constexpr const auto& counter_fields(const HomaCounters&) { return kHomaCounterFields; }

class Homa : public NoHooks {
 public:
  static constexpr std::uint32_t kHooks =
      hook::kRx | hook::kDelivered | hook::kPost | hook::kTimer | hook::kPoll | hook::kServed |
      hook::kRoundEnd | hook::kModified | hook::kSlots | hook::kClass | hook::kStatus |
      hook::kDeadline | hook::kAcksNow;
  static constexpr std::uint8_t kMaxProbes = 4;
  static constexpr TimeNs kProbeGapNs = 1'000'000;

  Homa(const engine::VnicConfig& c, std::uint32_t slots) : cfg_(c.homa), on_(c.homa.enabled) {
    if (!on_) return;
    assert(cfg_.first_bad_field().empty());
    qps_.assign(slots, Qp{});
    grants_ = std::make_unique<sched::homa::GrantScheduler>(cfg_.grant_config());
    grant_out_.reserve(cfg_.max_messages + cfg_.overcommit + 1);
    for (std::uint8_t p = 0; p < 8; ++p) dscp_[p] = c.pfc.map.dscp_of_priority(p);
    reclass_.reserve(slots);
    cutoffs_.levels = cfg_.unsched_levels();
    cutoffs_.max_length.fill(UINT64_MAX);
  }
  bool enabled() const { return on_; }
  using Counters = HomaCounters;
  const Counters& counters() const { return ctr_; }

  // The receiver's scheduler (null when off), our current unscheduled
  // cutoffs and their generation.
  const sched::homa::GrantScheduler* grant_scheduler() const { return grants_.get(); }
  const sched::homa::Cutoffs& cutoffs() const { return cutoffs_; }
  std::uint32_t generation() const { return gen_; }

  // The scheduler's key of a message: the receiving QP and its first PSN.
  static std::uint64_t key(std::uint32_t qpn, std::uint32_t psn) {
    return std::uint64_t{qpn} << 24 | (psn & 0xFFFFFFu);
  }

  // The TX classes are the network priorities, all strict: a QP's class is
  // the priority of its next packet.
  static void tx_policy(const engine::VnicConfig& c, sched::TxPolicyConfig* t) {
    if (!c.homa.enabled) return;
    t->isolation = sched::Isolation::kClasses;
    for (auto& k : t->classes.classes) k.mode = sched::ClassMode::kStrict;
  }

  // A QP takes or leaves the slot: no peer known, nothing in flight.
  template <class H, class Q>
  void on_created(H&, Q& e) {
    reset(e);
  }
  template <class H, class Q>
  void on_destroyed(H&, Q& e) {
    reset(e);
  }

  // RESET forgets the peer (the QP may be connected anew), ERR the message
  // being received; RTR probes (or answers).
  template <class H, class Q>
  void on_modified(H& h, Q& e, transport::QpState before) {
    using transport::QpState;
    if (H::type(e) != transport::QpType::kRc) return;
    Qp& q = qps_[e.slot];
    const QpState s = H::state(e);
    if (s == QpState::kReset) {
      H::rc(e).set_homa(nullptr);
      reset(e);
      return;
    }
    if (s == QpState::kErr) {
      if (q.rx_active) grants_->drop(key(e.qpn, q.rx_psn));
      q.rx_active = false;
      return;
    }
    const bool connected = (s == QpState::kRtr || s == QpState::kRts) && s != before;
    if (!connected) return;
    // One probe per connection here (at RTR, or at RTS for a QP that
    // skipped it); a lost one is sent again as traffic flows (on_delivered).
    if (!q.peer && q.probes == 0) {
      send_cutoffs(h, e, true);
    } else if (q.peer && q.owe_answer) {
      send_cutoffs(h, e, false);
    }
    q.owe_answer = false;
  }

  // Before the transport: an extension packet is consumed here.
  template <class H, class Q>
  bool on_rx(H& h, Q& e, TimeNs now) {
    if (h.packet().info->transport != wire::Transport::kExt) return false;
    return control(h, e, now);
  }

  // After the RC transport took a packet: counts what the receiver got,
  // feeds the size histogram, sends the peer newer cutoffs, probes a silent
  // peer again.
  template <class H, class Q>
  [[gnu::noinline]] void on_delivered(H& h, Q& e, TimeNs now) {
    Qp& q = qps_[e.slot];
    const wire::ParsedPacket& pkt = h.packet();
    const wire::OpcodeInfo& i = *pkt.info;
    if (!q.peer) {
      if (q.probes < kMaxProbes && now >= q.probe_ns + kProbeGapNs &&
          i.transport == wire::Transport::kRc) {
        send_cutoffs(h, e, true);
      }
      return;
    }
    if (i.dir != wire::Direction::kRequest ||
        (i.op != wire::OpClass::kSend && i.op != wire::OpClass::kWrite)) {
      return;
    }
    const std::uint32_t psn = pkt.bth.psn();
    const bool accepted = H::rc(e).expected_psn() == transport::Psn(psn + 1);
    if (accepted) {
      using wire::Position;
      std::uint64_t len = 0;
      if (i.op == wire::OpClass::kWrite &&
          (i.pos == Position::kFirst || i.pos == Position::kOnly)) {
        len = pkt.reth.dma_len();
      } else if (i.pos == Position::kOnly) {
        len = pkt.payload.size();
      } else if (i.pos == Position::kFirst) {
        q.send_open = true;
        q.send_psn = psn;
      } else if (i.pos == Position::kLast && q.send_open) {
        q.send_open = false;
        const std::uint32_t mtu = wire::path_mtu_bytes(e.attr.path_mtu);
        len = std::uint64_t{transport::Psn::forward(transport::Psn(q.send_psn),
                                                    transport::Psn(psn))} *
                  mtu +
              pkt.payload.size();
      }
      if (len != 0) observe(len);
    }
    if (q.gen_sent != gen_) send_cutoffs(h, e, false);
    if (q.rx_active) count(h, e, q, now);
  }

  // A send WR on a scheduled QP with nothing else queued starts in the
  // class its message's length gives (a READ or atomic, whose request is
  // one small packet, at the top).
  template <class H, class Q>
  [[gnu::noinline]] void on_post(H& h, Q& e) {
    if (H::type(e) != transport::QpType::kRc || !qps_[e.slot].peer) return;
    if (H::rc(e).send_queue_depth() != 1) return;
    const transport::SendWr& wr = h.posted();
    const bool data = !transport::is_rd_atomic(wr.opcode) && !transport::is_local_op(wr.opcode);
    set_class(h, e, data ? qps_[e.slot].tx.peer.priority_of(wr.length()) : cfg_.top_priority());
  }

  // After the QP's timer ran: the MLEN a grant timeout asked for again.
  template <class H, class Q>
  void on_timer(H& h, Q& e, TimeNs) {
    if (H::type(e) != transport::QpType::kRc) return;
    transport::RcHomaTx& t = qps_[e.slot].tx;
    if (!t.announce) return;
    t.announce = false;
    const std::uint64_t len = t.gate.length();
    const wire::HomaMlenHdr m =
        wire::HomaMlenHdr::make(static_cast<std::uint32_t>(len),
                                static_cast<std::uint32_t>(
                                    std::min<std::uint64_t>(cfg_.unsched_bytes, len)));
    send(h, e, wire::op::kHomaMlen, t.gate.psn(), {m.raw, sizeof m.raw});
    ++t.ctr.mlen;
  }

  // Phase 3b: the grants due (new data since the last, or a resend).
  template <class H>
  [[gnu::noinline]] std::uint32_t on_poll(H& h, TimeNs now) {
    if (!dirty_ && now < grants_->next_timer()) return 0;
    dirty_ = false;
    grants_->poll(now, &grant_out_);
    for (const sched::homa::Grant& g : grant_out_) {
      typename H::Qp* e = h.find(static_cast<std::uint32_t>(g.key >> 24));
      if (e == nullptr || H::type(*e) != transport::QpType::kRc) {
        ++ctr_.homa_grant_no_qp;
        grants_->drop(g.key);
        continue;
      }
      std::uint8_t flags = 0;
      if (g.resend) flags |= wire::HomaGrantHdr::kFlagResend;
      if (g.fifo) flags |= wire::HomaGrantHdr::kFlagFifo;
      const wire::HomaGrantHdr hdr =
          wire::HomaGrantHdr::make(g.offset, cfg_.scheduled_priority(g.priority), flags, gen_);
      send(h, *e, wire::op::kHomaGrant, static_cast<std::uint32_t>(g.key & 0xFFFFFFu),
           {hdr.raw, sizeof hdr.raw});
      ++ctr_.homa_tx_grants;
    }
    return static_cast<std::uint32_t>(grant_out_.size());
  }

  // After a scheduled QP's turn, inside the pump's round: a class that must
  // change (the next packet's priority moved) changes once the round ends.
  template <class H, class Q>
  void on_served(H& h, Q& e) {
    Qp& q = qps_[e.slot];
    if (!q.peer || q.reclass) return;
    auto& s = h.scheduler();
    if constexpr (requires { s.class_of(e.slot); }) {
      if (s.class_of(e.slot) == q.tx.next_priority()) return;
      q.reclass = true;
      reclass_.push_back(e.slot);
    }
  }

  template <class H>
  void on_round_end(H& h) {
    for (const std::uint32_t slot : reclass_) {
      typename H::Qp& e = h.qp(slot);
      Qp& q = qps_[slot];
      q.reclass = false;
      if (e.used && H::type(e) == transport::QpType::kRc && q.peer) {
        set_class(h, e, q.tx.next_priority());
      }
    }
    reclass_.clear();
  }

  // A scheduled QP's class is its next packet's priority, not its address
  // vector's.
  template <class H, class Q>
  bool owns_class(const H&, const Q& e) const {
    return qps_[e.slot].peer;
  }

  template <class H, class Q>
  void status(const H&, const Q& e, engine::QpStatus* s) const {
    if (H::type(e) != transport::QpType::kRc) return;
    s->homa_peer = qps_[e.slot].peer;
    s->homa = qps_[e.slot].tx.ctr;
  }

  // Grant resends; grants for new data are due at once.
  template <class H>
  TimeNs next_deadline(const H& h) const {
    return dirty_ ? h.now() : grants_->next_timer();
  }

 private:
  struct Qp {
    transport::RcHomaTx tx;
    // The peer answered or probed: tx is attached to the QP.
    bool peer = false;
    // A probe came before this QP had an address: answer at its RTR.
    bool owe_answer = false;
    std::uint8_t probes = 0;
    TimeNs probe_ns = 0;
    // The generation of our cutoffs the peer last got; and of the peer's
    // that a GRANT said we lack (asked once per generation).
    std::uint32_t gen_sent = 0;
    std::uint32_t gen_asked = 0;
    // Receiver: the announced message being counted (first PSN, length,
    // bytes reported to the scheduler).
    bool rx_active = false;
    std::uint32_t rx_psn = 0;
    std::uint64_t rx_len = 0;
    std::uint64_t rx_counted = 0;
    // Receiver: the first PSN of the multi-packet SEND being received (its
    // length joins the size histogram at its last packet).
    bool send_open = false;
    std::uint32_t send_psn = 0;
    // Queued in reclass_ (its class changes when the round ends).
    bool reclass = false;
  };

  template <class Q>
  void reset(const Q& e) {
    Qp& q = qps_[e.slot];
    if (q.rx_active) grants_->drop(key(e.qpn, q.rx_psn));
    q = Qp{};
    q.tx.gate_cfg =
        transport::GrantGateConfig{cfg_.unsched_bytes, cfg_.grant_timeout_ns, cfg_.max_timeouts};
    q.tx.dscp = dscp_;
    q.tx.ctl_dscp = dscp_[cfg_.top_priority()];
    q.tx.top_prio = cfg_.top_priority();
    q.tx.peer.cutoffs.levels = 1;
    q.tx.peer.cutoffs.max_length.fill(UINT64_MAX);
    q.tx.peer.top_priority = cfg_.top_priority();
  }

  template <class H, class Q>
  bool control(H& h, Q& e, TimeNs now);

  // The bytes of q's announced message below the QP's expected PSN,
  // reported once each to the scheduler.
  template <class H, class Q>
  void count(H&, Q& e, Qp& q, TimeNs now) {
    const std::int32_t pkts =
        transport::Psn::diff(H::rc(e).expected_psn(), transport::Psn(q.rx_psn));
    if (pkts <= 0) return;
    const std::uint64_t mtu = wire::path_mtu_bytes(e.attr.path_mtu);
    const std::uint64_t bytes = std::min<std::uint64_t>(q.rx_len, std::uint64_t(pkts) * mtu);
    if (bytes <= q.rx_counted) return;
    const sched::homa::DataResult r =
        grants_->on_data(key(e.qpn, q.rx_psn), peer_id(e), q.rx_len, bytes - q.rx_counted, now);
    q.rx_counted = bytes;
    dirty_ = true;
    if (r != sched::homa::DataResult::kTracked) q.rx_active = false;
  }

  // A message length the receiver saw; every cutoffs_every of them the
  // unscheduled cutoffs are recomputed (and the histogram aged). The first
  // come sooner: after 32 messages, then after twice as many each time up
  // to cutoffs_every (aging only from then on), so a receiver that just
  // started does not keep every message at the top level for its first
  // cutoffs_every messages (docs/homa-testbed.md: W4 at 80 % saw one update
  // per receiver, and its short messages waited behind long messages'
  // unscheduled bytes at the top level).
  void observe(std::uint64_t len) {
    hist_.add(len);
    const std::uint32_t every = std::min(interval_, cfg_.cutoffs_every);
    if (++seen_ < every) return;
    seen_ = 0;
    const sched::homa::Cutoffs c =
        sched::homa::compute_cutoffs(hist_, cfg_.unsched_bytes, cfg_.unsched_levels());
    if (every == cfg_.cutoffs_every) {
      hist_.age();
    } else {
      interval_ = every * 2;
    }
    if (c.levels == cutoffs_.levels && c.max_length == cutoffs_.max_length) return;
    cutoffs_ = c;
    ++gen_;
    ++ctr_.homa_cutoffs_updates;
  }

  // Sender-side priority (Homa's sender sends its most urgent message
  // first). A QP pinned through set_qp_sched keeps its class.
  template <class H, class Q>
  static void set_class(H& h, Q& e, std::uint8_t prio) {
    auto& s = h.scheduler();
    if constexpr (requires { s.set_class(e.slot, std::uint8_t{0}); }) {
      if (!e.class_pinned && s.class_of(e.slot) != prio) s.set_class(e.slot, prio);
    }
  }

  template <class H, class Q>
  void send_cutoffs(H& h, Q& e, bool probe) {
    Qp& q = qps_[e.slot];
    wire::HomaCutoffsHdr c;
    c.set_generation(gen_);
    c.set_levels(static_cast<std::uint8_t>(cutoffs_.levels));
    c.set_top_priority(cfg_.top_priority());
    c.set_flags(probe ? wire::HomaCutoffsHdr::kFlagProbe : 0);
    for (std::uint32_t j = 0; j < cutoffs_.levels; ++j) {
      const std::uint64_t m = cutoffs_.max_length[j];
      const bool any = j + 1 == cutoffs_.levels || m >= wire::HomaCutoffsHdr::kAnyLength;
      c.set_max_length(j, any ? wire::HomaCutoffsHdr::kAnyLength : static_cast<std::uint32_t>(m));
    }
    if (!c.valid()) {
      // Cutoffs that collapsed (two levels with one bound): publish one
      // level.
      c.set_levels(1);
      c.set_max_length(0, wire::HomaCutoffsHdr::kAnyLength);
      for (std::uint32_t j = 1; j < wire::HomaCutoffsHdr::kMaxLevels; ++j) c.set_max_length(j, 0);
    }
    send(h, e, wire::op::kHomaCutoffs, 0, {c.raw, sizeof c.raw});
    ++ctr_.homa_tx_cutoffs;
    q.gen_sent = gen_;
    if (probe) {
      ++q.probes;
      q.probe_ns = h.now();
    }
  }

  // One extension packet to e's peer QP at the top priority (the engine's
  // builder: not ECN-capable, ahead of the pump's frames).
  template <class H, class Q>
  void send(H& h, Q& e, std::uint8_t opcode, std::uint32_t psn, std::span<const std::uint8_t> hdr) {
    wire::PacketSpec s = h.to_peer(e);
    s.dscp = dscp_[cfg_.top_priority()];
    s.udp_src = transport::rxe_connected_udp_src_port(0, e.qpn, e.attr.dest_qp_num);
    s.opcode = opcode;
    s.psn = psn & 0xFFFFFFu;
    s.payload = hdr;
    if (!h.originate(e, s)) ++ctr_.homa_tx_no_buffer;
  }

  // The peer's identity for "one message per peer first": its IPv4
  // address, or a hash of its IPv6 one.
  template <class Q>
  static std::uint32_t peer_id(const Q& e) {
    const transport::PathAddr& a = e.attr.av;
    if (!a.ipv6) return a.dip.v;
    std::uint32_t x = 2166136261u;
    for (const std::uint8_t b : a.route6.dst.b) x = (x ^ b) * 16777619u;
    return x;
  }

  sched::homa::HomaSettings cfg_;
  bool on_;
  bool dirty_ = false;  // data counted since the last grant poll
  std::vector<Qp> qps_;
  std::unique_ptr<sched::homa::GrantScheduler> grants_;
  std::vector<sched::homa::Grant> grant_out_;
  // DSCP of each network priority (the PFC map).
  std::array<std::uint8_t, 8> dscp_{};
  sched::homa::SizeHistogram hist_;
  sched::homa::Cutoffs cutoffs_{};
  std::uint32_t seen_ = 0;
  // Messages between cutoff recomputations: 32 at first, doubling up to
  // HomaSettings::cutoffs_every (observe).
  std::uint32_t interval_ = 32;
  // QPs whose TX class must follow their next packet's priority once the
  // current round ends (on_round_end).
  std::vector<std::uint32_t> reclass_;
  std::uint32_t gen_ = 1;
  HomaCounters ctr_{};
};

// An extension packet (GRANT, CUTOFFS, MLEN) for QP e: consumed, counted
// as received or as bad.
template <class H, class Q>
bool Homa::control(H& h, Q& e, TimeNs now) {
  using transport::QpState;
  HomaCounters& ctr = ctr_;
  const engine::VnicConfig& vc = h.config();
  const wire::ParsedPacket& pkt = h.packet();
  const QpState s = H::state(e);
  const bool has_peer = s != QpState::kReset && s != QpState::kInit;
  const transport::LocalPort local{vc.mac, vc.ip, {}, vc.ip6};
  if (H::type(e) != transport::QpType::kRc || s == QpState::kReset ||
      (has_peer && !transport::from_peer(pkt, e.attr.av, local))) {
    ++ctr.homa_rx_bad;
    return true;
  }
  Qp& q = qps_[e.slot];
  // Each header's reader checks the length: the bytes in the first segment
  // (all of them, as these packets are never chained).
  const std::span<const std::uint8_t> b = pkt.payload.head();
  const std::uint32_t psn = pkt.bth.psn();
  switch (pkt.bth.opcode()) {
    case wire::op::kHomaGrant: {
      if (b.size() < wire::HomaGrantHdr::kSize || !has_peer) break;
      const wire::HomaGrantHdr g = wire::HomaGrantHdr::read(b.data());
      ++ctr.homa_rx_grants;
      if (H::rc(e).homa_grant(psn, g.offset(), g.priority() & 7, now)) {
        set_class(h, e, q.tx.next_priority());
        h.scheduler().activate(e.slot);
      }
      // The receiver's cutoffs changed: ask for them (once per generation).
      if (q.peer && g.generation() != q.tx.peer.generation && g.generation() != q.gen_asked) {
        q.gen_asked = g.generation();
        send_cutoffs(h, e, true);
      }
      return true;
    }
    case wire::op::kHomaCutoffs: {
      if (b.size() < wire::HomaCutoffsHdr::kSize) break;
      const wire::HomaCutoffsHdr c = wire::HomaCutoffsHdr::read(b.data());
      if (!c.valid()) break;
      ++ctr.homa_rx_cutoffs;
      transport::PeerCutoffs& pc = q.tx.peer;
      pc.generation = c.generation();
      pc.top_priority = c.top_priority();
      pc.cutoffs.levels = c.levels();
      for (std::uint32_t j = 0; j < wire::HomaCutoffsHdr::kMaxLevels; ++j) {
        const std::uint32_t m = c.max_length(j);
        pc.cutoffs.max_length[j] = m == wire::HomaCutoffsHdr::kAnyLength || j >= c.levels()
                                       ? UINT64_MAX
                                       : std::uint64_t{m};
      }
      if (!q.peer) {
        q.peer = true;
        H::rc(e).set_homa(&q.tx);
        ++ctr.homa_peers;
      }
      if ((c.flags() & wire::HomaCutoffsHdr::kFlagProbe) != 0) {
        if (has_peer) {
          send_cutoffs(h, e, false);
        } else {
          q.owe_answer = true;
        }
      }
      return true;
    }
    case wire::op::kHomaMlen: {
      if (b.size() < wire::HomaMlenHdr::kSize || !has_peer) break;
      const wire::HomaMlenHdr m = wire::HomaMlenHdr::read(b.data());
      ++ctr.homa_rx_mlen;
      if (m.length() <= cfg_.unsched_bytes) return true;  // needs no grant
      const std::uint64_t k = key(e.qpn, psn);
      // A repeated MLEN is the sender's grant timeout: a message still
      // tracked is only waiting behind shorter ones, so the answer is its
      // grant again (RESEND), which restarts the sender's timeouts instead
      // of letting it fall back to unscheduled sending.
      const std::uint64_t had = q.rx_active && q.rx_psn == psn ? grants_->granted(k) : 0;
      if (had != 0) {
        const wire::HomaGrantHdr g =
            wire::HomaGrantHdr::make(had, 0, wire::HomaGrantHdr::kFlagResend, gen_);
        send(h, e, wire::op::kHomaGrant, psn, {g.raw, sizeof g.raw});
        ++ctr.homa_tx_grants;
      }
      if (q.rx_active && q.rx_psn != psn) grants_->drop(key(e.qpn, q.rx_psn));
      if (!q.rx_active || q.rx_psn != psn) {
        q.rx_psn = psn;
        q.rx_len = m.length();
        q.rx_counted = 0;
      }
      q.rx_active = true;
      // Tracked from now (a repeated MLEN re-inserts a message the
      // scheduler no longer holds), then the bytes already here.
      if (grants_->on_data(k, peer_id(e), q.rx_len, 0, now) != sched::homa::DataResult::kTracked) {
        q.rx_active = false;
        return true;
      }
      dirty_ = true;
      count(h, e, q, now);
      return true;
    }
    default: break;
  }
  ++ctr.homa_rx_bad;
  return true;
}

}  // namespace uroce::policy
