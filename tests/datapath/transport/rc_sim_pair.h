// Test harness (not a source mirror): two RC QPs, each with its own memory
// and MR table, joined by a port::SimLink (seeded delay, loss, reorder,
// duplication) under a VirtualClock, driven by a small event loop:
//   pump both QPs -> deliver every frame that has arrived -> fire due timers
//   -> when nothing moved, jump the clock to the next arrival or deadline.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <random>
#include <vector>

#include "datapath/base/time.h"
#include "datapath/port/sim_link.h"
#include "datapath/transport/rc_qp.h"
#include "datapath/wire/parser.h"
#include "tests/datapath/transport/rc_test_support.h"

namespace uroce::transport::rctest {

// A TxSink that hands each committed frame to one end of a SimLink.
// lossy_port: one lossy path of a multipath fabric (spraying tests):
// IPv4 frames from that UDP source port are lost with probability
// lossy_rate before they reach the link, drawn from `rng`.
struct LinkTx {
  port::SimLink* link = nullptr;
  unsigned ep = 0;
  const VirtualClock* clock = nullptr;
  std::uint64_t refused = 0;
  std::uint16_t lossy_port = 0;
  double lossy_rate = 0;
  std::uint64_t lossy_sent = 0;
  std::uint64_t lossy_lost = 0;
  std::mt19937_64 rng{1};
  // READ requests (RC or SR) this end sent that ask again for response
  // PSNs it had asked for already, and how many PSNs they ask for at path
  // MTU `mtu` (set by SimPair): how much READs are asked for again. A
  // request starting at or after every PSN asked for so far is a first ask.
  std::uint32_t mtu = 0;
  std::uint64_t read_rereqs = 0;
  std::uint64_t read_rereq_psns = 0;
  bool read_seen = false;
  transport::Psn read_high{};
  std::vector<std::uint8_t> buf = std::vector<std::uint8_t>(wire::kMaxRoceFrame);
  std::span<std::uint8_t> tx_alloc(std::size_t n) {
    if (n > buf.size()) return {};
    return {buf.data(), n};
  }
  void tx_commit(std::size_t n) {
    if (mtu != 0) count_read_request(n);
    constexpr std::size_t kUdpSrc = wire::EthHdr::kSize + wire::Ipv4Hdr::kSize;
    if (lossy_port != 0 && n > kUdpSrc + 2 &&
        (buf[kUdpSrc] << 8 | buf[kUdpSrc + 1]) == lossy_port) {
      ++lossy_sent;
      if (std::uniform_real_distribution<double>(0, 1)(rng) < lossy_rate) {
        ++lossy_lost;
        return;
      }
    }
    const port::SimSendResult r = link->send(ep, {buf.data(), n}, clock->now());
    if (r != port::SimSendResult::kQueued && r != port::SimSendResult::kDroppedLoss) {
      ++refused;  // queue/pool full: behaves as a loss for the transport
    }
  }
  void count_read_request(std::size_t n) {
    wire::ParsedPacket p;
    if (wire::parse_roce({buf.data(), n}, p) != wire::ParseError::kOk) return;
    if (p.info->op != wire::OpClass::kReadRequest) return;
    const std::uint64_t len = p.reth.dma_len();
    const auto npkts = static_cast<std::uint32_t>(len == 0 ? 1 : (len + mtu - 1) / mtu);
    const transport::Psn psn(p.bth.psn());
    if (!read_seen || !psn.before(read_high)) {
      read_seen = true;
      read_high = psn + npkts;
      return;
    }
    ++read_rereqs;
    read_rereq_psns += npkts;
  }
};

struct SimSide {
  SimSide(std::uint32_t qpn, const wire::MacAddr& mac, wire::Ipv4Addr ip, std::size_t mem_bytes,
          const RcQpConfig& base)
      : mem(mem_bytes) {
    int err = 0;
    key = mrs.reg({1, kVa, mem.size(), access::kLocalWrite | access::kRemoteAny, mem.data()}, &err);
    RcQpConfig c = base;
    c.qpn = qpn;
    c.pd = 1;
    c.local = {mac, ip};
    qp = std::make_unique<RcQp>(c, mrs);
  }
  static constexpr std::uint64_t kVa = 0x40000000;
  MrTable mrs{16};
  std::vector<std::uint8_t> mem;
  std::uint32_t key = 0;
  std::unique_ptr<RcQp> qp;
  LinkTx tx;
  VecCq scq;
  VecCq rcq;
  FakeTimer timer;
  std::uint64_t parse_errors = 0;
};

class SimPair {
 public:
  SimPair(const port::SimLinkConfig& link_cfg, std::size_t mem_bytes, const ConnectParams& cp,
          const RcQpConfig& base = {})
      : link_(link_cfg),
        a_(0x101, kMacA, kIpA, mem_bytes, base),
        b_(0x202, kMacB, kIpB, mem_bytes, base) {
    a_.tx = {&link_, 0, &clock_};
    b_.tx = {&link_, 1, &clock_};
    a_.tx.mtu = b_.tx.mtu = wire::path_mtu_bytes(cp.mtu);
    connect(*a_.qp, 0x202, kMacB, kIpB, cp);
    ConnectParams cb = cp;
    std::swap(cb.sq_psn, cb.rq_psn);
    connect(*b_.qp, 0x101, kMacA, kIpA, cb);
  }

  SimSide& a() { return a_; }
  SimSide& b() { return b_; }
  VirtualClock& clock() { return clock_; }
  port::SimLink& link() { return link_; }

  // Runs until done() or virtual time passes `limit`; returns done().
  bool run(const std::function<bool()>& done, TimeNs limit) {
    while (clock_.now() <= limit) {
      bool moved = false;
      for (SimSide* s : {&a_, &b_}) {
        auto io = rc_io(s->tx, s->scq, s->rcq, s->timer);
        if (s->qp->pump_tx(clock_.now(), io, 64) != 0) moved = true;
      }
      for (unsigned ep = 0; ep < 2; ++ep) {
        SimSide& s = ep == 0 ? a_ : b_;
        auto io = rc_io(s.tx, s.scq, s.rcq, s.timer);
        const std::size_t n = link_.receive(
            ep, clock_.now(),
            [&](const port::SimDelivery& d) {
              wire::ParsedPacket p;
              if (wire::parse_roce(d.frame, p) != wire::ParseError::kOk) {
                ++s.parse_errors;
                return;
              }
              s.qp->on_packet(p, clock_.now(), io);
            },
            256);
        if (n != 0) moved = true;
      }
      for (SimSide* s : {&a_, &b_}) {
        auto it = s->timer.at.find(s->qp->qpn());
        if (it != s->timer.at.end() && it->second <= clock_.now()) {
          s->timer.at.erase(it);
          auto io = rc_io(s->tx, s->scq, s->rcq, s->timer);
          s->qp->on_timer(clock_.now(), io);
          moved = true;
        }
      }
      if (done()) return true;
      if (moved) continue;
      TimeNs next = 0;
      if (auto t = link_.next_arrival()) next = *t;
      for (SimSide* s : {&a_, &b_}) {
        auto it = s->timer.at.find(s->qp->qpn());
        if (it != s->timer.at.end() && (next == 0 || it->second < next)) {
          next = it->second;
        }
      }
      if (next == 0) return done();
      clock_.advance_to(next);
    }
    return done();
  }

 private:
  VirtualClock clock_;
  port::SimLink link_;
  SimSide a_;
  SimSide b_;
};

}  // namespace uroce::transport::rctest
