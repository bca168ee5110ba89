// The per-lcore run-to-completion loop, first version: one port, a set of
// QPs of one type, their CQ sinks and timers. It grows into the daemon's
// engine (doorbells of shared-memory rings, sched/, timed TX drain).
//
// One iteration, run_once(now), in this fixed order:
//   0. begin     the caller takes ONE timestamp (TscClock, or a
//                VirtualClock under simulation) and passes it as `now`;
//                every phase of the iteration uses that value.
//   1. rx        one RX burst; each frame is parsed (wire::parse_roce,
//                ICRC included) and handed to the QP its BTH dest QP names
//                (QpDemux). Responder output (ACKs, NAKs, READ responses)
//                may leave from inside on_packet.
//   2. timers    on_timer of every QP whose deadline has passed (before
//                the pump, so a retransmission a timer starts leaves in the
//                same iteration; docs/design-notes.md, "Phase order").
//   3. pump      pump_tx of every QP with output (has_output), round-robin
//                from a rotating start, each within the room left in the
//                TX burst (flushing when the burst fills). This is where
//                sched/ will plug in.
//   4. flush     one TX burst of whatever is pending.
// The phases are public so that a benchmark can measure them one by one;
// calling them in another order is allowed but is no longer the engine.
//
// Dropped frames are counted by reason: parse errors (one counter per
// wire::ParseError; frames that are not RoCEv2, e.g. ARP, land in kNotIpv4
// or kNotRoceV2Port until the daemon's ARP agent takes them) and frames for
// a QPN with no QP here (rx_no_qp).
//
// Timers: one deadline per QP (TimerSink: a later arm replaces the earlier
// one) and a lower bound of all deadlines; the scan over the QPs runs only
// when `now` passes that bound, so an iteration without due timers costs one
// compare. A QP may be called on_timer after its deadline was cancelled
// (RcQp ignores such calls).
//
// PortIo provides: begin(now); rx_burst(fn) calling fn(span<const u8>) per
// frame; tx() -> a transport::TxSink; tx_room(); flush(). See
// eth_port_io.h (DPDK) and sim_port_io.h (simulated link).
// Qp provides RcQp's engine-facing calls: qpn(), has_output(), on_packet,
// on_timer, pump_tx.
//
// No allocation after construction, no lock, no virtual call. One lcore.
#pragma once

#include <array>
#include <cerrno>
#include <cstdint>
#include <limits>
#include <span>
#include <vector>

#include "datapath/base/time.h"
#include "datapath/engine/qp_demux.h"
#include "datapath/transport/rc_qp.h"
#include "datapath/transport/sinks.h"
#include "datapath/wire/parser.h"

namespace uroce::engine {

struct EngineCounters {
  std::uint64_t iterations = 0;
  std::uint64_t rx_frames = 0;
  std::uint64_t rx_dispatched = 0;  // frames handed to a QP
  std::uint64_t rx_parse_errors = 0;
  std::uint64_t rx_no_qp = 0;
  std::array<std::uint64_t, wire::kNumParseErrors> parse_error{};
  std::uint64_t tx_pumped = 0;      // frames emitted by pump_tx
  std::uint64_t tx_flushed = 0;     // frames the port accepted
  std::uint64_t timer_scans = 0;
  std::uint64_t timer_fires = 0;    // on_timer calls
};

template <class PortIo, class Qp, transport::CqSink Cq>
class EngineLoop {
 public:
  // Largest number of frames one QP may emit per pump phase.
  static constexpr std::uint32_t kPumpBudget = 32;

  // Room for `max_qps` QPs; the QPN table is the next power of two.
  EngineLoop(PortIo& io, std::uint32_t max_qps)
      : io_(io), demux_(max_qps), max_qps_(max_qps) {
    entries_.reserve(max_qps);
  }
  EngineLoop(const EngineLoop&) = delete;
  EngineLoop& operator=(const EngineLoop&) = delete;

  // Registers a QP and the CQ sinks of its send and receive queues; all
  // three must outlive the registration. 0, ENOSPC (max_qps reached), or the
  // QpDemux error (EEXIST: a QPN clash in the table, EINVAL).
  int add_qp(Qp& qp, Cq& send_cq, Cq& recv_cq) {
    if (entries_.size() == max_qps_) return ENOSPC;
    if (!demux_.slot_free(qp.qpn())) {
      return qp.qpn() > wire::kQpnMask ? EINVAL : EEXIST;
    }
    entries_.push_back({&qp, &send_cq, &recv_cq, 0});
    return demux_.insert(qp.qpn(), &entries_.back());
  }
  // 0 or ENOENT. The QP's pending timer is forgotten.
  int remove_qp(std::uint32_t qpn) {
    Entry* e = demux_.find(qpn);
    if (e == nullptr) return ENOENT;
    demux_.erase(qpn);
    Entry& last = entries_.back();
    if (e != &last) {
      *e = last;
      demux_.update(e->qp->qpn(), e);
    }
    entries_.pop_back();
    return 0;
  }

  // One iteration in the documented order; returns the frames received
  // plus the frames emitted by pump_tx (0: the iteration found no work).
  std::uint32_t run_once(TimeNs now) {
    begin(now);
    std::uint32_t work = rx_phase(now);
    timer_phase(now);
    work += pump_phase(now);
    flush_phase();
    return work;
  }

  void begin(TimeNs now) {
    ++ctr_.iterations;
    io_.begin(now);
  }

  std::uint32_t rx_phase(TimeNs now) {
    return io_.rx_burst([&](std::span<const std::uint8_t> frame) {
      ++ctr_.rx_frames;
      const wire::ParseError err = wire::parse_roce(frame, pkt_);
      if (err != wire::ParseError::kOk) {
        ++ctr_.rx_parse_errors;
        ++ctr_.parse_error[static_cast<std::size_t>(err)];
        return;
      }
      Entry* e = demux_.find(pkt_.bth.dest_qp());
      if (e == nullptr) {
        ++ctr_.rx_no_qp;
        return;
      }
      ++ctr_.rx_dispatched;
      if (io_.tx_room() == 0) ctr_.tx_flushed += io_.flush();
      auto rio = transport::rc_io(io_.tx(), *e->send_cq, *e->recv_cq, timers_);
      e->qp->on_packet(pkt_, now, rio);
    });
  }

  std::uint32_t pump_phase(TimeNs now) {
    const std::size_t n = entries_.size();
    std::uint32_t total = 0;
    for (std::size_t k = 0; k < n; ++k) {
      Entry& e = entries_[(rr_ + k) % n];
      if (!e.qp->has_output()) continue;
      std::uint32_t room = io_.tx_room();
      if (room == 0) {
        ctr_.tx_flushed += io_.flush();
        room = io_.tx_room();
        if (room == 0) break;  // the port refuses everything: try next time
      }
      auto rio = transport::rc_io(io_.tx(), *e.send_cq, *e.recv_cq, timers_);
      total += e.qp->pump_tx(now, rio, room < kPumpBudget ? room : kPumpBudget);
    }
    if (n != 0) rr_ = (rr_ + 1) % n;
    ctr_.tx_pumped += total;
    return total;
  }

  void timer_phase(TimeNs now) {
    if (now < earliest_) return;
    ++ctr_.timer_scans;
    earliest_ = kNever;
    for (Entry& e : entries_) {
      if (e.deadline == 0) continue;
      if (e.deadline > now) {
        if (e.deadline < earliest_) earliest_ = e.deadline;
        continue;
      }
      e.deadline = 0;
      ++ctr_.timer_fires;
      auto rio = transport::rc_io(io_.tx(), *e.send_cq, *e.recv_cq, timers_);
      // May re-arm through timers_, which lowers earliest_ as needed.
      e.qp->on_timer(now, rio);
    }
  }

  std::uint16_t flush_phase() {
    const std::uint16_t n = io_.flush();
    ctr_.tx_flushed += n;
    return n;
  }

  const EngineCounters& counters() const { return ctr_; }
  std::uint32_t qp_count() const { return static_cast<std::uint32_t>(entries_.size()); }
  // The deadline armed for `qpn` (0: none or unknown QPN).
  TimeNs deadline(std::uint32_t qpn) const {
    const Entry* e = demux_.find(qpn);
    return e == nullptr ? 0 : e->deadline;
  }
  PortIo& io() { return io_; }

 private:
  static constexpr TimeNs kNever = std::numeric_limits<TimeNs>::max();

  struct Entry {
    Qp* qp;
    Cq* send_cq;
    Cq* recv_cq;
    TimeNs deadline;
  };

  // The TimerSink every QP of this loop arms.
  struct Timers {
    EngineLoop* loop;
    void arm(std::uint32_t qpn, TimeNs at) {
      Entry* e = loop->demux_.find(qpn);
      if (e == nullptr) return;
      e->deadline = at;
      if (at < loop->earliest_) loop->earliest_ = at;
    }
  };

  PortIo& io_;
  QpDemux<Entry> demux_;
  std::uint32_t max_qps_;
  std::vector<Entry> entries_;
  std::size_t rr_ = 0;
  TimeNs earliest_ = kNever;
  Timers timers_{this};
  wire::ParsedPacket pkt_{};
  EngineCounters ctr_{};
};

}  // namespace uroce::engine
