// Vnic definitions (vnic.h): the Homa-like scheduler between uroce peers
// (issue 15; docs/homa.md), when VnicConfig::homa.enabled. The policies are
// sched/grant_scheduler.h (receiver), sched/grant_gate.h through
// transport/rc_homa.h (sender) and sched/unsched_cutoffs.h; this file is
// where the engine meets them:
//   - Discovery (control path and RX): a connected RC QP moving to RTR
//     sends CUTOFFS with PROBE to its peer's QP; a peer with the
//     scheduler on answers with its own, and from then on both sides
//     schedule the connection (the QP's RcHomaTx is attached). rxe, an RNIC
//     or a uroce device with it off drop the probe: the QP stays plain RC.
//     A probe the peer could not answer yet (its QP had no address) is
//     answered at its own RTR; a lost one is sent again, at most
//     kMaxProbes times, when the connection carries traffic.
//   - Sender (transport/rc_homa.h): the requester sends a long message's
//     MLEN (its length) before its first packet and holds its bytes beyond
//     the unscheduled ones until GRANTs allow them; at each grant timeout
//     the timer phase sends the MLEN again (homa_announce).
//   - Receiver (RX, after the transport): each accepted data packet of a
//     QP whose message was announced counts the bytes below the QP's
//     expected PSN into the device's one GrantScheduler (all QPs, all
//     peers); the lengths of the messages seen feed the unscheduled
//     cutoffs, recomputed every cutoffs_every messages and sent to a peer
//     with the next packet it sends us.
//   - Sender-side priority (pump): the TX classes are the network
//     priorities, all strict, and a scheduled QP's class follows the
//     priority of its next data packet (set at post, at a grant and after
//     its turns), so a host sends its shortest message first.
//   - Grants (phase 3b, after the timers, before the pump): when data
//     arrived or a resend is due, the scheduler's grants leave as GRANT
//     packets at the top priority, ahead of this iteration's data.
// Extension packets carry their header where a payload would be
// (wire/opcodes.h); a short or malformed one is counted (homa_rx_bad).
// A device with it off pays one test per received RoCEv2 frame (shared
// with DCQCN's) and one per RC frame, and its QPs none of this state.
//
// State: one HomaQp per QP slot and the scheduler, allocated at
// construction when enabled; nothing here allocates afterwards.
// Engine thread only.
#pragma once

#include "datapath/engine/vnic/entries.h"
#include "datapath/transport/rc_homa.h"
#include "datapath/wire/builder.h"
#include "datapath/wire/homa_cutoffs.h"
#include "datapath/wire/homa_grant.h"
#include "datapath/wire/homa_mlen.h"

namespace uroce::engine {

template <class PortIo, sched::TxScheduler Sched>
struct Vnic<PortIo, Sched>::HomaQp {
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
  // Queued in homa_reclass_ (its class changes when the round ends).
  bool reclass = false;
};

namespace detail {
inline constexpr std::uint8_t kHomaMaxProbes = 4;
inline constexpr TimeNs kHomaProbeGapNs = 1'000'000;
// The scheduler's key of a message: the receiving QP and its first PSN.
inline std::uint64_t homa_key(std::uint32_t qpn, std::uint32_t psn) {
  return std::uint64_t{qpn} << 24 | (psn & 0xFFFFFFu);
}
}  // namespace detail

template <class PortIo, sched::TxScheduler Sched>
void Vnic<PortIo, Sched>::homa_init() {
  homa_on_ = cfg_.homa.enabled;
  rx_hooks_ = cc_on_ || homa_on_;
  if (!homa_on_) return;
  assert(cfg_.homa.first_bad_field().empty());
  homa_.assign(qps_.size(), HomaQp{});
  grants_ = std::make_unique<sched::homa::GrantScheduler>(cfg_.homa.grant_config());
  grant_out_.reserve(cfg_.homa.max_messages + cfg_.homa.overcommit + 1);
  for (std::uint8_t p = 0; p < 8; ++p) homa_dscp_[p] = cfg_.pfc.map.dscp_of_priority(p);
  homa_reclass_.reserve(qps_.size());
  homa_cutoffs_.levels = cfg_.homa.unsched_levels();
  homa_cutoffs_.max_length.fill(UINT64_MAX);
}

// A new RC QP in `slot`: no peer known, nothing in flight.
template <class PortIo, sched::TxScheduler Sched>
void Vnic<PortIo, Sched>::homa_reset(std::uint32_t slot) {
  if (!homa_on_) return;
  HomaQp& h = homa_[slot];
  if (h.rx_active) grants_->drop(detail::homa_key(qps_[slot].qpn, h.rx_psn));
  h = HomaQp{};
  h.tx.gate_cfg = cfg_.homa.gate_config();
  h.tx.dscp = homa_dscp_;
  h.tx.ctl_dscp = homa_dscp_[cfg_.homa.top_priority()];
  h.tx.top_prio = cfg_.homa.top_priority();
  h.tx.peer.cutoffs.levels = 1;
  h.tx.peer.cutoffs.max_length.fill(UINT64_MAX);
  h.tx.peer.top_priority = cfg_.homa.top_priority();
}

// After modify_qp: RESET forgets the peer (the QP may be connected anew),
// ERR the message being received; RTR probes (or answers).
template <class PortIo, sched::TxScheduler Sched>
void Vnic<PortIo, Sched>::homa_modified(QpEntry& e, transport::QpState before) {
  using transport::QpState;
  if (!homa_on_ || detail::qp_if<transport::RcQp>(e) == nullptr) return;
  HomaQp& h = homa_[e.slot];
  const QpState s = qp_state(e);
  if (s == QpState::kReset) {
    detail::qp_if<transport::RcQp>(e)->set_homa(nullptr);
    homa_reset(e.slot);
    return;
  }
  if (s == QpState::kErr) {
    if (h.rx_active) grants_->drop(detail::homa_key(e.qpn, h.rx_psn));
    h.rx_active = false;
    return;
  }
  const bool connected = (s == QpState::kRtr || s == QpState::kRts) && s != before;
  if (!connected) return;
  // One probe per connection here (at RTR, or at RTS for a QP that skipped
  // it); a lost one is sent again as traffic flows (homa_data).
  if (!h.peer && h.probes == 0) {
    homa_send_cutoffs(e, true);
  } else if (h.peer && h.owe_answer) {
    homa_send_cutoffs(e, false);
  }
  h.owe_answer = false;
}

// RX hook, before the transport: an extension packet is consumed here.
template <class PortIo, sched::TxScheduler Sched>
bool Vnic<PortIo, Sched>::homa_control(QpEntry& e, TimeNs now) {
  using transport::QpState;
  if (pkt_.info->transport != wire::Transport::kExt) return false;
  // Not ours to take: the transport counts it (drop_not_rc and the like).
  if (!homa_on_) return false;
  const transport::QpState s = qp_state(e);
  const bool has_peer = s != QpState::kReset && s != QpState::kInit;
  const transport::LocalPort local{cfg_.mac, cfg_.ip, {}, cfg_.ip6};
  if (detail::qp_if<transport::RcQp>(e) == nullptr || s == QpState::kReset ||
      (has_peer && !transport::from_peer(pkt_, e.attr.av, local))) {
    ++ctr_.homa_rx_bad;
    return true;
  }
  HomaQp& h = homa_[e.slot];
  const std::span<const std::uint8_t> b = pkt_.payload;
  const std::uint32_t psn = pkt_.bth.psn();
  switch (pkt_.bth.opcode()) {
    case wire::op::kHomaGrant: {
      if (b.size() < wire::HomaGrantHdr::kSize || !has_peer) break;
      const wire::HomaGrantHdr g = wire::HomaGrantHdr::read(b.data());
      ++ctr_.homa_rx_grants;
      if (detail::qp_if<transport::RcQp>(e)->homa_grant(psn, g.offset(), g.priority() & 7, now)) {
        homa_set_class(e, h.tx.next_priority());
        sched_.activate(e.slot);
      }
      // The receiver's cutoffs changed: ask for them (once per generation).
      if (h.peer && g.generation() != h.tx.peer.generation && g.generation() != h.gen_asked) {
        h.gen_asked = g.generation();
        homa_send_cutoffs(e, true);
      }
      return true;
    }
    case wire::op::kHomaCutoffs: {
      if (b.size() < wire::HomaCutoffsHdr::kSize) break;
      const wire::HomaCutoffsHdr c = wire::HomaCutoffsHdr::read(b.data());
      if (!c.valid()) break;
      ++ctr_.homa_rx_cutoffs;
      sched::homa::PeerCutoffs& pc = h.tx.peer;
      pc.generation = c.generation();
      pc.top_priority = c.top_priority();
      pc.cutoffs.levels = c.levels();
      for (std::uint32_t j = 0; j < sched::homa::kMaxLevels; ++j) {
        const std::uint32_t m = c.max_length(j);
        pc.cutoffs.max_length[j] = m == wire::HomaCutoffsHdr::kAnyLength || j >= c.levels()
                                       ? UINT64_MAX
                                       : std::uint64_t{m};
      }
      if (!h.peer) {
        h.peer = true;
        detail::qp_if<transport::RcQp>(e)->set_homa(&h.tx);
        ++ctr_.homa_peers;
      }
      if ((c.flags() & wire::HomaCutoffsHdr::kFlagProbe) != 0) {
        if (has_peer) {
          homa_send_cutoffs(e, false);
        } else {
          h.owe_answer = true;
        }
      }
      return true;
    }
    case wire::op::kHomaMlen: {
      if (b.size() < wire::HomaMlenHdr::kSize || !has_peer) break;
      const wire::HomaMlenHdr m = wire::HomaMlenHdr::read(b.data());
      ++ctr_.homa_rx_mlen;
      if (m.length() <= cfg_.homa.unsched_bytes) return true;  // needs no grant
      const std::uint64_t key = detail::homa_key(e.qpn, psn);
      // A repeated MLEN is the sender's grant timeout: a message still
      // tracked is only waiting behind shorter ones, so the answer is its
      // grant again (RESEND), which restarts the sender's timeouts instead
      // of letting it fall back to unscheduled sending.
      const std::uint64_t had = h.rx_active && h.rx_psn == psn ? grants_->granted(key) : 0;
      if (had != 0) {
        const wire::HomaGrantHdr g =
            wire::HomaGrantHdr::make(had, 0, wire::HomaGrantHdr::kFlagResend, homa_gen_);
        homa_send(e, wire::op::kHomaGrant, psn, {g.raw, sizeof g.raw});
        ++ctr_.homa_tx_grants;
      }
      if (h.rx_active && h.rx_psn != psn) grants_->drop(detail::homa_key(e.qpn, h.rx_psn));
      if (!h.rx_active || h.rx_psn != psn) {
        h.rx_psn = psn;
        h.rx_len = m.length();
        h.rx_counted = 0;
      }
      h.rx_active = true;
      // Tracked from now (a repeated MLEN re-inserts a message the
      // scheduler no longer holds), then the bytes already here.
      if (grants_->on_data(key, homa_peer_id(e), h.rx_len, 0, now) !=
          sched::homa::DataResult::kTracked) {
        h.rx_active = false;
        return true;
      }
      homa_dirty_ = true;
      homa_count(e, h, now);
      return true;
    }
    default: break;
  }
  ++ctr_.homa_rx_bad;
  return true;
}

// RX hook, after the RC transport took a packet: counts what the receiver
// got, feeds the size histogram, sends the peer newer cutoffs, probes a
// silent peer again.
template <class PortIo, sched::TxScheduler Sched>
[[gnu::noinline]] void Vnic<PortIo, Sched>::homa_data(QpEntry& e, TimeNs now) {
  HomaQp& h = homa_[e.slot];
  const wire::OpcodeInfo& i = *pkt_.info;
  if (!h.peer) {
    if (h.probes < detail::kHomaMaxProbes && now >= h.probe_ns + detail::kHomaProbeGapNs &&
        i.transport == wire::Transport::kRc) {
      homa_send_cutoffs(e, true);
    }
    return;
  }
  if (i.dir != wire::Direction::kRequest ||
      (i.op != wire::OpClass::kSend && i.op != wire::OpClass::kWrite)) {
    return;
  }
  const std::uint32_t psn = pkt_.bth.psn();
  const bool accepted =
      detail::qp_if<transport::RcQp>(e)->expected_psn() == transport::Psn(psn + 1);
  if (accepted) {
    using wire::Position;
    std::uint64_t len = 0;
    if (i.op == wire::OpClass::kWrite && (i.pos == Position::kFirst || i.pos == Position::kOnly)) {
      len = pkt_.reth.dma_len();
    } else if (i.pos == Position::kOnly) {
      len = pkt_.payload.size();
    } else if (i.pos == Position::kFirst) {
      h.send_open = true;
      h.send_psn = psn;
    } else if (i.pos == Position::kLast && h.send_open) {
      h.send_open = false;
      const std::uint32_t mtu = wire::path_mtu_bytes(e.attr.path_mtu);
      len =
          std::uint64_t{transport::Psn::forward(transport::Psn(h.send_psn), transport::Psn(psn))} *
              mtu +
          pkt_.payload.size();
    }
    if (len != 0) homa_observe(len);
  }
  if (h.gen_sent != homa_gen_) homa_send_cutoffs(e, false);
  if (h.rx_active) homa_count(e, h, now);
}

// The bytes of h's announced message below the QP's expected PSN, reported
// once each to the scheduler.
template <class PortIo, sched::TxScheduler Sched>
void Vnic<PortIo, Sched>::homa_count(QpEntry& e, HomaQp& h, TimeNs now) {
  const std::int32_t pkts = transport::Psn::diff(detail::qp_if<transport::RcQp>(e)->expected_psn(),
                                                 transport::Psn(h.rx_psn));
  if (pkts <= 0) return;
  const std::uint64_t mtu = wire::path_mtu_bytes(e.attr.path_mtu);
  const std::uint64_t bytes = std::min<std::uint64_t>(h.rx_len, std::uint64_t(pkts) * mtu);
  if (bytes <= h.rx_counted) return;
  const sched::homa::DataResult r =
      grants_->on_data(detail::homa_key(e.qpn, h.rx_psn), homa_peer_id(e), h.rx_len,
                       bytes - h.rx_counted, now);
  h.rx_counted = bytes;
  homa_dirty_ = true;
  if (r != sched::homa::DataResult::kTracked) h.rx_active = false;
}

// A message length the receiver saw; every cutoffs_every of them the
// unscheduled cutoffs are recomputed (and the histogram aged). The first
// come sooner: after 32 messages, then after twice as many each time up to
// cutoffs_every (aging only from then on), so a receiver that just started
// does not keep every message at the top level for its first
// cutoffs_every messages (docs/homa-testbed.md: W4 at 80 % saw one update
// per receiver, and its short messages waited behind long messages'
// unscheduled bytes at the top level).
template <class PortIo, sched::TxScheduler Sched>
void Vnic<PortIo, Sched>::homa_observe(std::uint64_t len) {
  homa_hist_.add(len);
  const std::uint32_t every = std::min(homa_interval_, cfg_.homa.cutoffs_every);
  if (++homa_seen_ < every) return;
  homa_seen_ = 0;
  const sched::homa::Cutoffs c =
      sched::homa::compute_cutoffs(homa_hist_, cfg_.homa.unsched_bytes, cfg_.homa.unsched_levels());
  if (every == cfg_.homa.cutoffs_every) {
    homa_hist_.age();
  } else {
    homa_interval_ = every * 2;
  }
  if (c.levels == homa_cutoffs_.levels && c.max_length == homa_cutoffs_.max_length) return;
  homa_cutoffs_ = c;
  ++homa_gen_;
  ++ctr_.homa_cutoffs_updates;
}

// Phase 3b: the grants due (new data since the last, or a resend).
template <class PortIo, sched::TxScheduler Sched>
[[gnu::noinline]] std::uint32_t Vnic<PortIo, Sched>::homa_phase(TimeNs now) {
  if (!homa_dirty_ && now < grants_->next_timer()) return 0;
  homa_dirty_ = false;
  grants_->poll(now, &grant_out_);
  for (const sched::homa::Grant& g : grant_out_) {
    QpEntry* e = demux_.find(static_cast<std::uint32_t>(g.key >> 24));
    if (e == nullptr || detail::qp_if<transport::RcQp>(*e) == nullptr) {
      ++ctr_.homa_grant_no_qp;
      grants_->drop(g.key);
      continue;
    }
    std::uint8_t flags = 0;
    if (g.resend) flags |= wire::HomaGrantHdr::kFlagResend;
    if (g.fifo) flags |= wire::HomaGrantHdr::kFlagFifo;
    const wire::HomaGrantHdr hdr =
        wire::HomaGrantHdr::make(g.offset, cfg_.homa.scheduled_priority(g.priority), flags,
                                 homa_gen_);
    homa_send(*e, wire::op::kHomaGrant, static_cast<std::uint32_t>(g.key & 0xFFFFFFu),
              {hdr.raw, sizeof hdr.raw});
    ++ctr_.homa_tx_grants;
  }
  return static_cast<std::uint32_t>(grant_out_.size());
}

// After the QP's timer ran: the MLEN a grant timeout asked for again.
template <class PortIo, sched::TxScheduler Sched>
void Vnic<PortIo, Sched>::homa_announce(QpEntry& e) {
  if (detail::qp_if<transport::RcQp>(e) == nullptr) return;
  transport::RcHomaTx& t = homa_[e.slot].tx;
  if (!t.announce) return;
  t.announce = false;
  const std::uint64_t len = t.gate.length();
  const wire::HomaMlenHdr m =
      wire::HomaMlenHdr::make(static_cast<std::uint32_t>(len),
                              static_cast<std::uint32_t>(
                                  std::min<std::uint64_t>(cfg_.homa.unsched_bytes, len)));
  homa_send(e, wire::op::kHomaMlen, t.gate.psn(), {m.raw, sizeof m.raw});
  ++t.ctr.mlen;
}

// Sender-side priority (Homa's sender sends its most urgent message
// first): with the scheduler on, the TX classes are the network priorities,
// all strict (sched.h), and a scheduled QP's class is the priority of its
// next data packet. A QP pinned through set_qp_sched keeps its class.
template <class PortIo, sched::TxScheduler Sched>
void Vnic<PortIo, Sched>::homa_set_class(QpEntry& e, std::uint8_t prio) {
  if constexpr (requires { sched_.set_class(e.slot, std::uint8_t{0}); }) {
    if (!e.class_pinned && sched_.class_of(e.slot) != prio) sched_.set_class(e.slot, prio);
  }
}

// Doorbell phase: a send WR on a scheduled QP with nothing else queued
// starts in the class its message's length gives (a READ or atomic, whose
// request is one small packet, at the top).
template <class PortIo, sched::TxScheduler Sched>
void Vnic<PortIo, Sched>::homa_posted(QpEntry& e) {
  if (detail::qp_if<transport::RcQp>(e) == nullptr || !homa_[e.slot].peer) return;
  if (detail::qp_if<transport::RcQp>(e)->send_queue_depth() != 1) return;
  const transport::WrOpcode op = swr_.opcode;
  const bool data = !transport::is_rd_atomic(op) && !transport::is_local_op(op);
  homa_set_class(e, data ? homa_[e.slot].tx.peer.priority_of(swr_.length())
                         : cfg_.homa.top_priority());
}

// After a scheduled QP's turn, inside the pump's round: a class that must
// change (the next packet's priority moved) changes once the round ends.
template <class PortIo, sched::TxScheduler Sched>
void Vnic<PortIo, Sched>::homa_served(QpEntry& e) {
  HomaQp& h = homa_[e.slot];
  if (!h.peer || h.reclass) return;
  if constexpr (requires { sched_.class_of(e.slot); }) {
    if (sched_.class_of(e.slot) == h.tx.next_priority()) return;
    h.reclass = true;
    homa_reclass_.push_back(e.slot);
  }
}

template <class PortIo, sched::TxScheduler Sched>
void Vnic<PortIo, Sched>::homa_classes() {
  for (const std::uint32_t slot : homa_reclass_) {
    QpEntry& e = qps_[slot];
    HomaQp& h = homa_[slot];
    h.reclass = false;
    if (e.used && detail::qp_if<transport::RcQp>(e) != nullptr && h.peer) {
      homa_set_class(e, h.tx.next_priority());
    }
  }
  homa_reclass_.clear();
}

template <class PortIo, sched::TxScheduler Sched>
void Vnic<PortIo, Sched>::homa_send_cutoffs(QpEntry& e, bool probe) {
  HomaQp& h = homa_[e.slot];
  wire::HomaCutoffsHdr c;
  c.set_generation(homa_gen_);
  c.set_levels(static_cast<std::uint8_t>(homa_cutoffs_.levels));
  c.set_top_priority(cfg_.homa.top_priority());
  c.set_flags(probe ? wire::HomaCutoffsHdr::kFlagProbe : 0);
  for (std::uint32_t j = 0; j < homa_cutoffs_.levels; ++j) {
    const std::uint64_t m = homa_cutoffs_.max_length[j];
    const bool any = j + 1 == homa_cutoffs_.levels || m >= wire::HomaCutoffsHdr::kAnyLength;
    c.set_max_length(j, any ? wire::HomaCutoffsHdr::kAnyLength : static_cast<std::uint32_t>(m));
  }
  if (!c.valid()) {
    // Cutoffs that collapsed (two levels with one bound): publish one level.
    c.set_levels(1);
    c.set_max_length(0, wire::HomaCutoffsHdr::kAnyLength);
    for (std::uint32_t j = 1; j < wire::HomaCutoffsHdr::kMaxLevels; ++j) c.set_max_length(j, 0);
  }
  homa_send(e, wire::op::kHomaCutoffs, 0, {c.raw, sizeof c.raw});
  ++ctr_.homa_tx_cutoffs;
  h.gen_sent = homa_gen_;
  if (probe) {
    ++h.probes;
    h.probe_ns = now_;
  }
}

// One extension packet to e's peer QP at the top priority, not
// ECN-capable, ahead of the pump's frames in this iteration's burst.
template <class PortIo, sched::TxScheduler Sched>
void Vnic<PortIo, Sched>::homa_send(QpEntry& e, std::uint8_t opcode, std::uint32_t psn,
                                    std::span<const std::uint8_t> hdr) {
  const transport::PathAddr& a = e.attr.av;
  wire::PacketSpec s;
  s.eth_src = cfg_.mac;
  s.eth_dst = a.dmac;
  s.ip_src = cfg_.ip;
  s.ip_dst = a.dip;
  if (a.ipv6) s.ip6 = &a.route6;
  s.dscp = homa_dscp_[cfg_.homa.top_priority()];
  s.ecn = wire::kEcnNotEct;
  s.ttl = a.ttl;
  s.udp_src = transport::rxe_connected_udp_src_port(0, e.qpn, e.attr.dest_qp_num);
  s.opcode = opcode;
  s.dest_qp = e.attr.dest_qp_num;
  s.psn = psn & 0xFFFFFFu;
  s.payload = hdr;
  const std::size_t len = wire::roce_frame_size(s);
  if (io_.tx_room() == 0) ctr_.tx_flushed += io_.flush();
  QpTx tx{this, e.ctr};
  const std::span<std::uint8_t> b = tx.tx_alloc(len);
  if (b.size() < len) {
    ++ctr_.homa_tx_no_buffer;
    return;
  }
  const int n = wire::build_roce(s, b);
  assert(n > 0);
  tx.tx_commit(static_cast<std::size_t>(n));
}

// The peer's identity for "one message per peer first": its IPv4 address,
// or a hash of its IPv6 one.
template <class PortIo, sched::TxScheduler Sched>
std::uint32_t Vnic<PortIo, Sched>::homa_peer_id(const QpEntry& e) const {
  const transport::PathAddr& a = e.attr.av;
  if (!a.ipv6) return a.dip.v;
  std::uint32_t h = 2166136261u;
  for (const std::uint8_t x : a.route6.dst.b) h = (h ^ x) * 16777619u;
  return h;
}

}  // namespace uroce::engine
