// Soak test support (not a source mirror): two hosts joined by one
// port::SimLink (endpoint 0 = host A, endpoint 1 = host B) under one
// VirtualClock. Each host has one MR table and any number of RC, UD and UC
// QPs; every QP of a host sends through the host's one TX sink, and frames
// arriving at a host are handed to the QP named by the BTH destination QPN,
// as a NIC demultiplexes them.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <unordered_map>
#include <vector>

#include "datapath/base/time.h"
#include "datapath/port/sim_link.h"
#include "datapath/transport/rc_qp.h"
#include "datapath/transport/uc_qp.h"
#include "datapath/transport/ud_qp.h"
#include "datapath/wire/parser.h"
#include "tests/datapath/transport/rc_test_support.h"

namespace uroce::transport::soak {

using rctest::VecCq;

// The TX sink every QP of a host shares: hands committed frames to the
// link. Like a NIC's TX ring it fills up: while `max_in_flight` frames are
// on their way to the peer it offers no buffer, and the QPs try again later
// (without this, a READ responder could emit a whole 1 GiB response stream
// at one virtual instant and lose most of it to a full link).
struct HostTx {
  port::SimLink* link = nullptr;
  unsigned ep = 0;
  const VirtualClock* clock = nullptr;
  std::size_t max_in_flight = 4096;
  std::uint64_t ring_full = 0;  // tx_alloc calls refused for back-pressure
  std::uint64_t refused = 0;    // frames the link did not take (not loss)
  std::vector<std::uint8_t> buf = std::vector<std::uint8_t>(wire::kMaxRoceFrame);
  std::span<std::uint8_t> tx_alloc(std::size_t n) {
    if (n > buf.size()) return {};
    if (link->in_flight_to(1 - ep) >= max_in_flight) {
      ++ring_full;
      return {};
    }
    return {buf.data(), n};
  }
  void tx_commit(std::size_t n) {
    const port::SimSendResult r = link->send(ep, {buf.data(), n}, clock->now());
    if (r != port::SimSendResult::kQueued && r != port::SimSendResult::kDroppedLoss) {
      ++refused;
    }
  }
};

// One deadline per QP (the QP re-arms after every call).
struct TimerSlot {
  TimeNs at = 0;
  void arm(std::uint32_t, TimeNs t) { at = t; }
};

struct RcEnd {
  std::unique_ptr<RcQp> qp;
  VecCq scq;
  VecCq rcq;
  TimerSlot timer;
  // Frames the host delivered to this QP, and the last few of them (BTH
  // opcode, PSN, payload length, state after) for failure messages.
  std::uint64_t rx_frames = 0;
  struct Seen {
    TimeNs at;
    std::uint8_t opcode;
    std::uint32_t psn;
    std::uint32_t len;
    std::uint32_t epsn_after;
  };
  std::array<Seen, 48> last{};
};

struct UdEnd {
  std::unique_ptr<UdQp> qp;
  VecCq scq;
  VecCq rcq;
};

struct UcEnd {
  std::unique_ptr<UcQp> qp;
  VecCq scq;
  VecCq rcq;
};

struct Host {
  static constexpr PdHandle kPd = 3;
  Host(unsigned endpoint, const wire::MacAddr& m, wire::Ipv4Addr a) : ep(endpoint), mac(m), ip(a) {}
  unsigned ep;
  wire::MacAddr mac;
  wire::Ipv4Addr ip;
  MrTable mrs{1024};
  HostTx tx;
  std::vector<std::unique_ptr<RcEnd>> rc;
  std::vector<std::unique_ptr<UdEnd>> ud;
  std::vector<std::unique_ptr<UcEnd>> uc;
  // QPN -> (kind, index).
  enum class Kind : std::uint8_t { kRc, kUd, kUc };
  struct Target {
    Kind kind;
    std::uint32_t idx;
  };
  std::unordered_map<std::uint32_t, Target> by_qpn;
  std::uint64_t parse_errors = 0;
  std::uint64_t unknown_qpn = 0;
};

class World {
 public:
  explicit World(const port::SimLinkConfig& cfg)
      : link_(cfg), a_(0, rctest::kMacA, rctest::kIpA), b_(1, rctest::kMacB, rctest::kIpB) {
    a_.tx.link = b_.tx.link = &link_;
    a_.tx.clock = b_.tx.clock = &clock_;
    a_.tx.ep = 0;
    b_.tx.ep = 1;
  }

  Host& host(unsigned i) { return i == 0 ? a_ : b_; }
  Host& peer(const Host& h) { return h.ep == 0 ? b_ : a_; }
  VirtualClock& clock() { return clock_; }
  port::SimLink& link() { return link_; }
  // Frames longer than `bytes` arrive as chains of `bytes`-long segments
  // (a port whose RX buffers are that small, wire/payload.h); 0 = whole.
  void set_rx_buf(std::size_t bytes) { rx_buf_ = bytes; }
  // Frames delivered as chains.
  std::uint64_t chained() const { return chained_; }

  RcEnd& add_rc(Host& h, std::uint32_t qpn, RcQpConfig cfg) {
    cfg.qpn = qpn;
    cfg.pd = Host::kPd;
    cfg.local = {h.mac, h.ip};
    auto e = std::make_unique<RcEnd>();
    e->qp = std::make_unique<RcQp>(cfg, h.mrs);
    h.by_qpn[qpn] = {Host::Kind::kRc, static_cast<std::uint32_t>(h.rc.size())};
    h.rc.push_back(std::move(e));
    return *h.rc.back();
  }
  UdEnd& add_ud(Host& h, UdQpConfig cfg) {
    cfg.pd = Host::kPd;
    cfg.local = {h.mac, h.ip};
    auto e = std::make_unique<UdEnd>();
    e->qp = std::make_unique<UdQp>(cfg, h.mrs);
    h.by_qpn[cfg.qpn] = {Host::Kind::kUd, static_cast<std::uint32_t>(h.ud.size())};
    h.ud.push_back(std::move(e));
    return *h.ud.back();
  }
  UcEnd& add_uc(Host& h, UcQpConfig cfg) {
    cfg.pd = Host::kPd;
    cfg.local = {h.mac, h.ip};
    auto e = std::make_unique<UcEnd>();
    e->qp = std::make_unique<UcQp>(cfg, h.mrs);
    h.by_qpn[cfg.qpn] = {Host::Kind::kUc, static_cast<std::uint32_t>(h.uc.size())};
    h.uc.push_back(std::move(e));
    return *h.uc.back();
  }

  // Lets every QP transmit (RC: up to `budget` packets each). True if any
  // frame left.
  bool pump(std::uint32_t budget) {
    bool moved = false;
    const TimeNs now = clock_.now();
    for (Host* h : {&a_, &b_}) {
      for (auto& e : h->rc) {
        auto io = rc_io(h->tx, e->scq, e->rcq, e->timer);
        if (e->qp->pump_tx(now, io, budget) != 0) moved = true;
      }
      for (auto& e : h->ud) {
        if (e->qp->process_send(h->tx, e->scq, budget) != 0) moved = true;
      }
      for (auto& e : h->uc) {
        if (e->qp->process_send(h->tx, e->scq, budget) != 0) moved = true;
      }
    }
    return moved;
  }

  // Hands every frame that has arrived by now to its QP. True if any did.
  bool deliver(std::size_t max_per_host) {
    bool moved = false;
    const TimeNs now = clock_.now();
    for (Host* h : {&a_, &b_}) {
      const std::size_t n = link_.receive(
          h->ep, now,
          [&](const port::SimDelivery& d) {
            wire::ParsedPacket p;
            if (parse(d.frame, p) != wire::ParseError::kOk) {
              ++h->parse_errors;
              return;
            }
            const auto it = h->by_qpn.find(p.bth.dest_qp());
            if (it == h->by_qpn.end()) {
              ++h->unknown_qpn;
              return;
            }
            switch (it->second.kind) {
              case Host::Kind::kRc: {
                RcEnd& e = *h->rc[it->second.idx];
                auto io = rc_io(h->tx, e.scq, e.rcq, e.timer);
                e.qp->on_packet(p, now, io);
                e.last[e.rx_frames++ % e.last.size()] = {now, p.bth.opcode(), p.bth.psn(),
                                                         static_cast<std::uint32_t>(
                                                             p.payload.size()),
                                                         e.qp->expected_psn().value()};
                break;
              }
              case Host::Kind::kUd: {
                UdEnd& e = *h->ud[it->second.idx];
                e.qp->on_packet(p, e.rcq);
                break;
              }
              case Host::Kind::kUc: {
                UcEnd& e = *h->uc[it->second.idx];
                e.qp->on_packet(p, e.rcq);
                break;
              }
            }
          },
          max_per_host);
      if (n != 0) moved = true;
    }
    return moved;
  }

  // Fires every RC timer that is due. True if any fired.
  bool fire_timers() {
    bool moved = false;
    const TimeNs now = clock_.now();
    for (Host* h : {&a_, &b_}) {
      for (auto& e : h->rc) {
        if (e->timer.at != 0 && e->timer.at <= now) {
          e->timer.at = 0;
          auto io = rc_io(h->tx, e->scq, e->rcq, e->timer);
          e->qp->on_timer(now, io);
          moved = true;
        }
      }
    }
    return moved;
  }

  // Pump, deliver and fire timers until done() or until nothing is left to
  // happen before virtual time `limit`; returns done().
  template <class Done>
  bool run_until(Done&& done, TimeNs limit) {
    for (;;) {
      bool moved = pump(64);
      moved |= deliver(512);
      moved |= fire_timers();
      if (done()) return true;
      if (moved) continue;
      const std::optional<TimeNs> next = next_event();
      if (!next || *next > limit) return false;
      clock_.advance_to(*next);
    }
  }

  // The next frame arrival or timer deadline after now, if any.
  std::optional<TimeNs> next_event() const {
    std::optional<TimeNs> next = link_.next_arrival();
    for (const Host* h : {&a_, &b_}) {
      for (const auto& e : h->rc) {
        if (e->timer.at != 0 && (!next || e->timer.at < *next)) next = e->timer.at;
      }
    }
    return next;
  }

 private:
  wire::ParseError parse(std::span<const std::uint8_t> f, wire::ParsedPacket& p) {
    if (rx_buf_ == 0 || f.size() <= rx_buf_) return wire::parse_roce(f, p);
    ++chained_;
    // Cut first: the tail's span is taken from segs_ after it has grown.
    const std::span<const std::uint8_t> head = wire::cut_frame(f, rx_buf_, rx_buf_, segs_);
    return wire::parse_roce(head, segs_, p);
  }

  std::size_t rx_buf_ = 0;
  std::uint64_t chained_ = 0;
  std::vector<std::span<const std::uint8_t>> segs_;
  VirtualClock clock_;
  port::SimLink link_;
  Host a_;
  Host b_;
};

}  // namespace uroce::transport::soak
