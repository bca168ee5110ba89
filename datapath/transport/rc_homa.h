// The sender's side of the Homa-like scheduler in an RC QP (issue 15;
// docs/homa.md): what the requester (rc_requester.h) asks before each SEND
// or WRITE data packet once the engine found that the QP's peer runs the
// scheduler too (datapath/policy/homa.h attaches an RcHomaTx to the
// QP's RcCore; without one, nothing here runs and the QP is plain RC).
//
// Per message: a message longer than the gate's unsched_bytes gets a
// GrantGate (grant_gate.h) when its first packet is sent, and the
// requester sends an MLEN (its length, wire/homa_mlen.h) just before the
// first packet, so the receiver can grant while the unscheduled bytes are
// still on their way. A new
// packet (a PSN never sent) of that message may start only below the
// offset granted so far; retransmissions are never held (their bytes were
// allowed once). Every data packet goes out at the DSCP of its network
// priority: the receiver's unscheduled level for the message's length, or
// the priority of the latest grant for scheduled bytes, but no higher than
// the lowest priority sent since the QP was last idle (the priority floor,
// admit()). Reliability stays RC's: PSNs, ACKs, go-back-N and retry counts
// do not change.
//
// While the next packet waits for a grant the QP reports no output
// (rc_qp.cpp has_output), and its timer covers the gate's deadline: a
// receiver that lost the message gets MLEN again at each grant timeout,
// and after max_timeouts the gate opens for the rest of the message.
// Engine thread only; no allocation.
#pragma once

#include <array>
#include <cstdint>

#include "datapath/base/counter_fields.h"
#include "datapath/base/time.h"
#include "datapath/transport/grant_gate.h"
#include "datapath/transport/rc_core.h"
#include "datapath/transport/rc_counters.h"
#include "datapath/transport/seq24.h"
#include "datapath/wire/builder.h"

namespace uroce::transport {

struct RcHomaTx {
  GrantGateConfig gate_cfg{};
  // The receiver's unscheduled levels (its CUTOFFS).
  PeerCutoffs peer{};
  // DSCP of each network priority (the device's PFC priority map).
  std::array<std::uint8_t, 8> dscp{};
  // DSCP of our control packets (MLEN): the top priority.
  std::uint8_t ctl_dscp = 0;
  // Our top priority (that of ctl_dscp): a READ or atomic request's.
  std::uint8_t top_prio = 7;
  // The message at gate.psn() is gated (a longer than unscheduled one).
  GrantGate gate{};
  bool gated = false;
  // The engine owes the receiver an MLEN for `gate` again (set at a grant
  // timeout; the engine sends it and clears this).
  bool announce = false;
  // The priority the gate gave scheduled bytes when a later message took
  // it over: a go-back-N into an earlier message resends its scheduled
  // bytes at this, never at an unscheduled priority.
  std::uint8_t prev_sched_prio = 0;
  // The priority of the last data packet admitted (the engine's TX class
  // for the QP follows it: sender-side priority, datapath/policy/homa.h).
  std::uint8_t last_prio = 0;
  // The lowest priority of the packets sent since the QP last had nothing
  // unacknowledged (admit: no packet goes higher while they may be in the
  // network).
  std::uint8_t floor_prio = 7;
  RcHomaCounters ctr{};

  // Forget the message in flight (the QP was reset or failed).
  void reset() {
    gated = false;
    announce = false;
    prev_sched_prio = 0;
    floor_prio = 7;
  }

  // A fresh message of `total` bytes needs an MLEN before its first packet.
  bool needs_mlen(std::uint64_t total) const { return total > gate_cfg.unsched_bytes; }

  // Before a SEND/WRITE data packet at `offset` of a message of `total`
  // bytes whose first PSN is `first`: false when it must wait for a grant.
  // Otherwise sets spec->dscp to the packet's priority and records the send.
  // `outstanding`: earlier packets of the QP are not acknowledged yet.
  bool admit(bool fresh, bool new_psn, Psn first, std::uint64_t offset, std::size_t payload,
             std::uint64_t total, bool outstanding, TimeNs now, wire::PacketSpec* spec) {
    if (fresh) {
      if (gated) prev_sched_prio = gate.priority(gate_cfg.unsched_bytes);
      gated = total > gate_cfg.unsched_bytes;
      if (gated) {
        gate = GrantGate(gate_cfg, first.value(), total, peer);
        ++ctr.gated;
      }
    }
    std::uint8_t prio;
    if (gated && gate.psn() == first.value()) {
      if (new_psn) {
        if (offset >= gate.allowed()) {
          gate.on_sent(offset, now);
          ++ctr.wait_grant;
          return false;
        }
        gate.on_sent(offset + payload, now);
      }
      prio = gate.priority(offset);
    } else if (total > gate_cfg.unsched_bytes && offset >= gate_cfg.unsched_bytes) {
      prio = prev_sched_prio;
    } else {
      prio = peer.priority_of(total);
    }
    // RC needs the QP's packets in PSN order, and a strict-priority switch
    // lets a higher priority overtake a lower one (a receiver whose grant
    // priorities rise mid-message would see its own PSNs reordered, NAK and
    // go back N). So while earlier packets may still be in the network, a
    // packet goes no higher than the lowest priority used since the QP was
    // last idle.
    last_prio = in_order(prio, outstanding);
    spec->dscp = dscp[last_prio];
    return true;
  }

  // A READ or atomic request (one small packet, never gated) at the top
  // priority, under the same floor: a SEND behind it must not overtake it.
  void admit_request(bool outstanding, wire::PacketSpec* spec) {
    spec->dscp = dscp[in_order(top_prio, outstanding)];
  }

  // The floor rule above: `prio`, or the floor when that is lower.
  std::uint8_t in_order(std::uint8_t prio, bool outstanding) {
    prio &= 7;
    if (!outstanding) floor_prio = 7;
    if (prio > floor_prio) {
      prio = floor_prio;
      ++ctr.prio_capped;
    }
    floor_prio = prio;
    return prio;
  }

  // The priority of the QP's next data packet as far as the gate knows:
  // the gated message's next byte, else the last packet's.
  std::uint8_t next_priority() const {
    if (gated && !gate.done()) return gate.priority(gate.sent());
    return last_prio;
  }

  // The next new packet of the gated message starting at `offset` must
  // wait for a grant.
  bool holds(Psn first, std::uint64_t offset) const {
    return gated && gate.psn() == first.value() && !gate.fallen_back() && offset >= gate.allowed();
  }

  // A GRANT: true when it allowed more (the QP has output again).
  bool on_grant(std::uint32_t psn, std::uint64_t offset, std::uint8_t prio, TimeNs now) {
    if (gated && gate.on_grant(psn, offset, prio, now)) {
      ++ctr.grants;
      return true;
    }
    ++ctr.grant_stale;
    return false;
  }

  // The gate's deadline, or 0 when none.
  TimeNs deadline() const {
    if (!gated) return 0;
    const std::uint64_t d = gate.deadline();
    return d == UINT64_MAX ? 0 : d;
  }

  // The QP's timer fired at `now`: a grant timeout announces again; the
  // last one opens the gate.
  void on_timer(TimeNs now) {
    if (!gated) return;
    const std::uint32_t before = gate.timeouts();
    if (gate.on_timer(now)) {
      ++ctr.fallbacks;
      ++ctr.timeouts;
    } else if (gate.timeouts() != before) {
      ++ctr.timeouts;
      announce = true;
    }
  }
};

// The DSCP of a scheduled QP's ACKs and control packets (rc_responder.h).
inline std::uint8_t homa_ctl_dscp(const RcCore& c) { return c.homa->ctl_dscp; }

}  // namespace uroce::transport
