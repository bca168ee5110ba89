// Vnic definitions (vnic.h): phase 1, RX, and the frame sinks every phase
// sends through (QP frames with loopback, loss injection and the PFC hold;
// ARP frames).
#pragma once

#include "datapath/engine/vnic/entries.h"
#include "datapath/wire/byteorder.h"
#include "datapath/wire/eth.h"
#include "datapath/wire/mad.h"

namespace uroce::engine {

// A received frame's bytes, over all of its segments.
[[gnu::always_inline]] inline std::size_t frame_bytes(std::span<const std::uint8_t> f,
                                                      wire::FrameTail tail) {
  return tail.empty() ? f.size() : f.size() + wire::tail_bytes(tail);
}

// One port burst, then the frames looped back since the last RX phase
// (frames they cause to loop back wait for the next one). With PFC on
// (pfc_endpoint.h): MAC Control frames go to the pause gate, frames of
// lossless priorities are staged and processed after the burst within the
// per-iteration budget. Loss injection (impairment.h) applies to the port
// burst only. A port may hand a long frame over chained (its first segment
// and a tail, eth_port_io.h); a port adapter that never does calls fn with
// the frame alone. Only RoCE frames are read past the first segment (the
// parser's Payload); PFC staging stores a chained frame as one.
//
// Every frame received, from the port or the loopback queue, is counted once
// in rx_frames as it arrives, and then in exactly one of: rx_unreadable,
// rx_impair_drop, rx_mac_control, rx_pfc_drop, rx_arp, rx_nd,
// rx_parse_errors, rx_roce, rx_handoff, rx_handoff_drop, except the frames
// PFC holds staged (counted in one of those after rx_pfc_drop once
// drained): rx_frames_accounted() (vnic.h). A frame handed to another
// shard is received there again, as that shard's port frame.
template <class PortIo, sched::TxScheduler Sched>
[[gnu::always_inline]] inline std::uint32_t Vnic<PortIo, Sched>::rx_phase(TimeNs now) {
  PfcTx ptx{this};
  pfc_.poll(now, ptx);
  // The stage stamps' RX burst: taken as the phase asks for it.
  if (stages_ != nullptr) [[unlikely]]
    rx_stamp_ = stage_now();
  std::uint32_t n =
      io_.rx_burst([&](std::span<const std::uint8_t> f, wire::FrameTail tail = wire::FrameTail{}) {
        ++ctr_.rx_frames;
        ctr_.rx_bytes += frame_bytes(f, tail);
        // The port could not present it as one span (eth_port_io.h).
        if (f.empty()) [[unlikely]] {
          ++ctr_.rx_unreadable;
          return;
        }
        if (impair_.drop_rx(f)) {
          ++ctr_.rx_impair_drop;
          return;
        }
        if (pfc_.on_mac_control(f, now)) {
          ++ctr_.rx_mac_control;
          return;
        }
        if (pfc_.staging()) {
          const PfcEndpoint::Stage s = pfc_.stage(f, tail, now, ptx);
          if (s == PfcEndpoint::Stage::kDropped) {
            ++ctr_.rx_pfc_drop;
            return;
          }
          if (s == PfcEndpoint::Stage::kStaged) return;
        }
        on_frame(f, tail, now, true);
      });
  // Staged frames (lossless priorities), within the per-iteration budget.
  if (pfc_.staged() != 0) {
    n += pfc_.drain(now, ptx, [&](std::span<const std::uint8_t> f) { on_frame(f, {}, now, true); });
  }
  const std::uint32_t looped = loop_.size();
  for (std::uint32_t i = 0; i < looped; ++i) {
    ++ctr_.rx_loopback;
    ++ctr_.rx_frames;
    ctr_.rx_bytes += loop_.front().size();
    on_frame(loop_.front(), {}, now, false);
    loop_.pop();
  }
  if (stages_ != nullptr) [[unlikely]]
    rx_stamp_ = 0;
  return n + looped;
}

// A connected QP whose priority the peer has paused is not served (it stays
// queued); UD QPs and DCIs are (each WR has its own DSCP: frames of a paused
// priority wait in the hold queue). A DCT's responses take its AV's DSCP.
template <class PortIo, sched::TxScheduler Sched>
inline bool Vnic<PortIo, Sched>::pfc_paused(const QpEntry& e, TimeNs now) {
  return e.addressing() != transport::QpAddressing::kPerWr &&
         pfc_.tx_paused_dscp(e.attr.av.dscp, now);
}

// `from_port`: false for looped-back frames (our own QPs' packets, which the
// TTL monitor must not take for a loop). The caller counted it in rx_frames.
// `tail`: the later segments of a chained frame (empty for most).
template <class PortIo, sched::TxScheduler Sched>
inline void Vnic<PortIo, Sched>::on_frame(std::span<const std::uint8_t> f, wire::FrameTail tail,
                                          TimeNs now, bool from_port) {
  if (f.size() >= wire::EthHdr::kSize && wire::load_be16(f.data() + 12) == wire::kEtherTypeArp) {
    // Neighbours are shard 0's (docs/engine.md "Several lcores"): it sent
    // the requests whose replies these may be.
    if (cfg_.shard != 0) [[unlikely]] {
      hand_off_to(0, f, tail);
      return;
    }
    ++ctr_.rx_arp;
    ArpTx sink{this};
    arp_.on_frame(f, now, sink);
    return;
  }
  // On a device of several lcores, a RoCE frame for another shard's QP (and
  // neighbour discovery, shard 0's) goes to that shard (shard_links.h)
  // before it is parsed here: the owner checks it. One branch for a device
  // of one.
  if (cfg_.shards > 1) [[unlikely]] {
    if (hand_off_foreign(f, tail)) return;
  }
  const wire::ParseError err = wire::parse_roce(f, tail, pkt_);
  if (err != wire::ParseError::kOk) {
    // IPv6 neighbour discovery is ICMPv6, which the RoCE parser stops at
    // (next header not UDP): looked at only here, off the RoCE path.
    if (err == wire::ParseError::kNotUdp && pkt_.ipv6 &&
        pkt_.ip6.next_header() == wire::kIpProtoIcmpv6) {
      ++ctr_.rx_nd;
      ArpTx sink{this};
      nd_.on_frame(f, now, sink);
      return;
    }
    ++ctr_.rx_parse_errors;
    ++ctr_.parse_error[static_cast<std::size_t>(err)];
    return;
  }
  ++ctr_.rx_roce;
  if (from_port) pfc_.on_roce_rx(pkt_, now);
  if (!(pkt_.eth.dst() == cfg_.mac)) {
    // A group's frames (mcast.h), once a QP has joined one.
    if (pkt_.eth.dst().is_multicast() && !mcast_.empty()) [[unlikely]] {
      mcast_rx(now, frame_bytes(f, tail));
      return;
    }
    ++ctr_.rx_not_our_mac;
    return;
  }
  // RoCEv2 over IPv6 takes this one branch off the IPv4 path.
  if (pkt_.ipv6) {
    ++ctr_.rx_roce_ipv6;
    if (!nd_.is_ours(pkt_.ip6.dst())) {
      ++ctr_.rx_not_our_ip;
      return;
    }
    if (pkt_.bth.dest_qp() == wire::kGsiQpn) {
      ++ctr_.rx_gsi_ipv6;
      return;
    }
  } else if (pkt_.ip.dst() != cfg_.ip) {
    ++ctr_.rx_not_our_ip;
    return;
  }
  if (pkt_.bth.dest_qp() == wire::kGsiQpn) {
    gsi_rx();
    return;
  }
  // DC packets (docs/dc.md) go only to a DC QP of their kind (dc.h),
  // before the demux below, so that one whose DestQP happens to be an
  // RC/UC/UD QP's reaches neither that QP nor its DCQCN/Homa hooks.
  if (pkt_.info->transport == wire::Transport::kDc) [[unlikely]] {
    dc_rx(now, frame_bytes(f, tail));
    return;
  }
  QpEntry* e = demux_.find(pkt_.bth.dest_qp());
  if (e == nullptr) {
    ++ctr_.rx_no_qp;
    return;
  }
  assert(e->used && e->qpn == pkt_.bth.dest_qp());
  // The QP extensions (datapath/policy/): DCQCN answers CE marks with
  // CNPs and consumes CNPs, the Homa-like scheduler its extension packets.
  if ((hooks_ & policy::hook::kRx) != 0) [[unlikely]] {
    if (policy_rx(*e, now)) return;
  }
  ++ctr_.rx_dispatched;
  ++e->ctr.rx_packets;
  e->ctr.rx_bytes += frame_bytes(f, tail);
  if (io_.tx_room() == 0) ctr_.tx_flushed += io_.flush();
  qp_packet(*e, now);
  drain_qp_events(*e);
}

// True when frame f (tail) looks like RoCE for a QP of another shard
// (wire::peek_dest_qp): handed to that shard through the port adapter
// (counted rx_handoff), or dropped when the adapter refuses or cannot hand
// off (rx_handoff_drop). QP1 is shard 0's, and so are ICMPv6 frames
// (wire::peek_icmpv6): the only other frames it hands off.
template <class PortIo, sched::TxScheduler Sched>
inline bool Vnic<PortIo, Sched>::hand_off_foreign(std::span<const std::uint8_t> f,
                                                  wire::FrameTail tail) {
  const std::uint32_t q = wire::peek_dest_qp(f);
  if (q == wire::kNoDestQp) {
    // Not RoCE: neighbour discovery goes to shard 0 as ARP does.
    if (cfg_.shard == 0 || !wire::peek_icmpv6(f)) return false;
    hand_off_to(0, f, tail);
    return true;
  }
  const std::uint16_t owner =
      q == wire::kGsiQpn ? 0 : shard_of_low_[q & (shard_of_low_.size() - 1)];
  if (owner == cfg_.shard) return false;
  hand_off_to(owner, f, tail);
  return true;
}

// The frame to shard `owner`'s lcore (through the port adapter), counted.
template <class PortIo, sched::TxScheduler Sched>
inline void Vnic<PortIo, Sched>::hand_off_to(std::uint16_t owner, std::span<const std::uint8_t> f,
                                             wire::FrameTail tail) {
  assert(owner != cfg_.shard);
  if constexpr (requires { io_.hand_off(owner, f, tail); }) {
    if (io_.hand_off(owner, f, tail)) {
      ++ctr_.rx_handoff;
      return;
    }
  }
  ++ctr_.rx_handoff_drop;
}

// The packet in pkt_ to QP `e`, whichever kind it is; a QP with output
// afterwards joins the pump. With the plain pump an RC QP is served in this
// iteration's pump phase (it is activated below while its ACK waits), so its
// ACK waits for it: one ACK for all of the QP's requests in this RX phase,
// in the same TX burst as before. A pump with classes, pacing, a port limit
// or Homa could hold the QP back: there ACKs leave from here. The lambdas
// here and in serve() and timer_phase() are forced inline: the code is the
// per-kind branch the type switch had, not a call more per packet.
template <class PortIo, sched::TxScheduler Sched>
inline void Vnic<PortIo, Sched>::qp_packet(QpEntry& e, TimeNs now) {
  QpTx tx{this, e.ctr};
  // With the plain pump this QP is served in this iteration's pump phase
  // (it is activated below while its ACK waits), so its ACK waits for it:
  // one ACK for all of the QP's requests in this RX phase, in the same TX
  // burst as before. A pump with classes, pacing, a port limit or an
  // extension that holds QPs back (Homa) could hold the QP back: there ACKs
  // leave from here.
  const auto acks = acks_at_pump_ ? transport::AckTiming::kPump : transport::AckTiming::kNow;
  visit(
      e, [&](auto& q) __attribute__((always_inline)) {
        using Q = std::remove_reference_t<decltype(q)>;
        with_io<Q>(
            e,
            tx, [&](auto& io) __attribute__((always_inline)) { q.on_packet(pkt_, now, io, acks); });
        if constexpr (std::is_same_v<Q, transport::RcQp>) {
          if ((hooks_ & policy::hook::kDelivered) != 0) [[unlikely]]
            policy_delivered(e, now);
        }
        if (q.has_output()) sched_.activate(e.slot);
      });
}

// A frame built in the port's staged TX buffer: committed to the port, or,
// when addressed to our own MAC, copied to the loopback queue and the buffer
// left uncommitted (the port reuses it for the next frame).
template <class PortIo, sched::TxScheduler Sched>
inline void Vnic<PortIo, Sched>::commit_frame(std::span<const std::uint8_t> f) {
  if (f.size() >= 6 && std::memcmp(f.data(), cfg_.mac.b.data(), 6) == 0) {
    if (loop_.push(f)) {
      ++ctr_.tx_loopback;
    } else {
      ++ctr_.tx_loopback_drop;
    }
    return;
  }
  // Left uncommitted, as a looped-back frame: the port reuses the buffer.
  if (impair_.drop_tx(f)) {
    ++ctr_.tx_impair_drop;
    return;
  }
  // A paused priority's frame is copied to its hold queue (or dropped when
  // stormed with action drop); the buffer is reused likewise.
  if (pfc_.on_tx(f, now_) != PfcEndpoint::Hold::kSend) return;
  io_.tx().tx_commit(f.size());
  ++ctr_.tx_frames;
  ctr_.tx_bytes += f.size();
}

template <class PortIo, sched::TxScheduler Sched>
void Vnic<PortIo, Sched>::emit_arp(std::span<const std::uint8_t> f) {
  if (io_.tx_room() == 0) ctr_.tx_flushed += io_.flush();
  const std::span<std::uint8_t> b = io_.tx().tx_alloc(f.size());
  if (b.size() < f.size()) {
    ++ctr_.tx_arp_no_buffer;
    return;
  }
  std::memcpy(b.data(), f.data(), f.size());
  io_.tx().tx_commit(f.size());
  ++ctr_.tx_arp;
  ++ctr_.tx_frames;
  ctr_.tx_bytes += f.size();
}

}  // namespace uroce::engine
