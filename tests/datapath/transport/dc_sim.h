// Test harness (not a source mirror): a DC initiator host (one or more
// DCIs) and a DC target host (a DcTargetPool, DCTs on one SRQ) joined by a
// port::SimLink under a VirtualClock, with the event loop of rc_sim_pair.h:
// pump -> deliver arrived frames (by BTH DestQP) -> fire due timers -> jump
// the clock when nothing moved.
#pragma once

#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <vector>

#include "datapath/base/time.h"
#include "datapath/port/sim_link.h"
#include "datapath/transport/dci_qp.h"
#include "datapath/transport/dct_qp.h"
#include "datapath/transport/srq.h"
#include "datapath/wire/parser.h"
#include "tests/datapath/transport/rc_sim_pair.h"
#include "tests/datapath/transport/rc_test_support.h"

namespace uroce::transport::dctest {

using rctest::kIpA;
using rctest::kIpB;
using rctest::kMacA;
using rctest::kMacB;
using rctest::LinkTx;
using rctest::status;
using rctest::VecCq;

struct EventLog {
  std::vector<AsyncEventType> types;
  void event(const AsyncEvent& e) { types.push_back(e.type); }
};

struct DcSim {
  static constexpr std::uint64_t kVa = 0x40000000;
  static constexpr PdHandle kPd = 1;
  static constexpr std::uint64_t kKey = 0x1122334455667788ull;

  // `target_sr`: the target's device runs selective repeat (dc_sr.h), its
  // answers sprayed over `target_spray`'s paths (dc_spray.h).
  explicit DcSim(const port::SimLinkConfig& link_cfg, std::size_t mem = 1 << 20,
                 DcTargetLimits limits = {}, bool target_sr = false,
                 const DcSprayConfig& target_spray = {})
      : link(link_cfg), mem_a(mem), mem_b(mem) {
    int err = 0;
    key_a =
        mrs_a.reg({kPd, kVa, mem_a.size(), access::kLocalWrite | access::kRemoteAny, mem_a.data()},
                  &err);
    key_b =
        mrs_b.reg({kPd, kVa, mem_b.size(), access::kLocalWrite | access::kRemoteAny, mem_b.data()},
                  &err);
    tx_a = {&link, 0, &clock};
    tx_b = {&link, 1, &clock};
    pool = std::make_unique<DcTargetPool>(limits, mrs_b, LocalPort{kMacB, kIpB}, target_sr,
                                          target_spray);
    SrqConfig sc;
    sc.srq_num = 1;
    sc.pd = kPd;
    sc.max_wr = 4096;
    srq = std::make_unique<Srq>(sc);
  }

  // A DCI on host A in RTS; `sr`: its device runs selective repeat
  // (dc_sr.h) over a 1500-byte Ethernet MTU, spraying over `spray_a`'s
  // paths.
  DciQp& add_dci(std::uint32_t qpn, std::uint8_t log_streams = 0, std::uint8_t log_errored = 0,
                 std::uint8_t retry = 7, std::uint8_t timeout = 10, bool sr = false) {
    DciQpConfig c;
    c.sr = sr;
    c.sr_eth_mtu = 1500;
    c.spray = spray_a;
    c.rc.qpn = qpn;
    c.rc.pd = kPd;
    c.rc.local = {kMacA, kIpA};
    c.rc.max_send_wr = 1024;
    c.log_streams = log_streams;
    c.log_errored = log_errored;
    auto d = std::make_unique<DciQp>(c, mrs_a, clock_a);
    using namespace qp_attr;
    QpAttrValues a;
    a.qp_state = QpState::kInit;
    EXPECT_EQ(d->modify(kState | kPkeyIndex | kPort, a), 0);
    a.qp_state = QpState::kRtr;
    a.path_mtu = wire::PathMtu::k1024;
    EXPECT_EQ(d->modify(kState | kPathMtu, a), 0);
    a.qp_state = QpState::kRts;
    a.timeout = timeout;
    a.retry_cnt = retry;
    a.rnr_retry = 7;
    a.sq_psn = 0;
    a.max_rd_atomic = 16;
    EXPECT_EQ(d->modify(kState | kTimeout | kRetryCnt | kRnrRetry | kSqPsn | kMaxQpRdAtomic, a), 0);
    DciQp& ref = *d;
    dcis[qpn] = std::move(d);
    return ref;
  }

  // A DCT on host B in RTR, taking receives from the SRQ. `min_rnr_timer`
  // (IBTA table 45 code) is also how long a BUSY answer tells the initiator
  // to wait.
  DctQp& add_dct(std::uint32_t qpn, std::uint64_t key = kKey, std::uint8_t min_rnr_timer = 1) {
    RcQpConfig c;
    c.qpn = qpn;
    c.pd = kPd;
    c.local = {kMacB, kIpB};
    c.srq = srq.get();
    auto d = std::make_unique<DctQp>(c, key, *pool);
    using namespace qp_attr;
    QpAttrValues a;
    a.qp_state = QpState::kInit;
    a.qp_access_flags = access::kRemoteAny;
    EXPECT_EQ(d->modify(kState | kPkeyIndex | kPort | kAccessFlags, a), 0);
    a.qp_state = QpState::kRtr;
    a.min_rnr_timer = min_rnr_timer;
    a.path_mtu = wire::PathMtu::k1024;
    EXPECT_EQ(d->modify(kState | kMinRnrTimer | kAv | kPathMtu, a), 0);
    DctQp& ref = *d;
    dcts[qpn] = std::move(d);
    return ref;
  }

  // A WR from host A's memory at `off` to DCT `dctn`'s host memory at
  // `roff`, on `stream`.
  SendWr wr(std::uint64_t id, WrOpcode op, std::uint32_t dctn, std::uint64_t off, std::uint32_t len,
            std::uint64_t roff = 0, std::uint16_t stream = 0, std::uint64_t key = kKey) const {
    SendWr w;
    w.wr_id = id;
    w.opcode = op;
    w.flags = send_flag::kSignaled;
    w.num_sge = 1;
    w.sge[0] = {kVa + off, len, key_a};
    w.remote_addr = kVa + roff;
    w.rkey = key_b;
    w.ud.dmac = kMacB;
    w.ud.dip = kIpB;
    w.ud.remote_qpn = dctn;
    w.ud.ah_num = 1;
    w.ud.dc_key = key;
    w.ud.dc_stream = stream;
    return w;
  }
  void post_recv(std::uint64_t id, std::uint64_t off, std::uint32_t len) {
    RecvWr r;
    r.wr_id = id;
    r.num_sge = 1;
    r.sge[0] = {kVa + off, len, key_b};
    ASSERT_EQ(srq->post_recv(r), 0);
  }

  bool run(const std::function<bool()>& done, TimeNs limit) {
    while (clock.now() <= limit) {
      bool moved = false;
      auto ioa = rc_io(tx_a, scq_a, rcq_a, timer_a);
      auto iob = rc_io(tx_b, scq_b, rcq_b, timer_b);
      for (auto& [q, d] : dcis) {
        if (d->has_output() && d->pump_tx(clock.now(), ioa, 64) != 0) moved = true;
        d->drain_events(events_a);
      }
      for (auto& [q, d] : dcts) {
        if (d->has_output() && d->pump_tx(clock.now(), iob, 64) != 0) moved = true;
        d->drain_events(events_b);
      }
      for (unsigned ep = 0; ep < 2; ++ep) {
        const std::size_t n = link.receive(
            ep, clock.now(),
            [&](const port::SimDelivery& d) {
              wire::ParsedPacket p;
              if (wire::parse_roce(d.frame, p) != wire::ParseError::kOk) {
                ++parse_errors;
                return;
              }
              ++rx[ep];
              ++src_ports[ep][p.udp.src_port()];
              if (drop_rx && drop_rx(ep, p)) return;
              if (ep == 0) {
                auto it = dcis.find(p.bth.dest_qp());
                if (it != dcis.end()) it->second->on_packet(p, clock.now(), ioa);
              } else {
                auto it = dcts.find(p.bth.dest_qp());
                if (it != dcts.end()) it->second->on_packet(p, clock.now(), iob);
              }
            },
            256);
        if (n != 0) moved = true;
      }
      for (auto& [q, d] : dcis) {
        auto it = timer_a.at.find(q);
        if (it != timer_a.at.end() && it->second <= clock.now()) {
          timer_a.at.erase(it);
          d->on_timer(clock.now(), ioa);
          moved = true;
        }
      }
      if (done()) return true;
      if (moved) continue;
      TimeNs next = 0;
      if (auto t = link.next_arrival()) next = *t;
      for (auto& [q, t] : timer_a.at) {
        if (next == 0 || t < next) next = t;
      }
      if (next == 0) return done();
      clock.advance_to(std::max(next, clock.now() + 1));
    }
    return done();
  }

  VirtualClock clock;
  port::SimLink link;
  MrTable mrs_a{16};
  MrTable mrs_b{16};
  std::vector<std::uint8_t> mem_a;
  std::vector<std::uint8_t> mem_b;
  std::uint32_t key_a = 0;
  std::uint32_t key_b = 0;
  LinkTx tx_a;
  LinkTx tx_b;
  VecCq scq_a, rcq_a, scq_b, rcq_b;
  rctest::FakeTimer timer_a, timer_b;
  EventLog events_a, events_b;
  DcConnClock clock_a;
  std::unique_ptr<DcTargetPool> pool;
  std::unique_ptr<Srq> srq;
  std::map<std::uint32_t, std::unique_ptr<DciQp>> dcis;
  std::map<std::uint32_t, std::unique_ptr<DctQp>> dcts;
  std::uint64_t parse_errors = 0;
  std::uint64_t rx[2] = {0, 0};
  // Frames that arrived at endpoint ep (0: A, 1: B), by UDP source port.
  std::map<std::uint16_t, std::uint64_t> src_ports[2];
  // Frames for which this returns true are lost on arrival (a dead path).
  std::function<bool(unsigned ep, const wire::ParsedPacket&)> drop_rx;
  DcSprayConfig spray_a{};
};

inline port::SimLinkConfig clean_link() {
  port::SimDirectionConfig d;
  d.propagation_ns = 1000;
  d.bandwidth_bps = 10'000'000'000;
  return port::SimLinkConfig::symmetric(d, 7);
}

}  // namespace uroce::transport::dctest
