#include "datapath/engine/engine_loop.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <vector>

#include "datapath/engine/sim_port_io.h"
#include "datapath/port/sim_link.h"
#include "tests/datapath/transport/rc_test_support.h"

namespace uroce::engine {
namespace {

using transport::RcQp;
using transport::RcQpConfig;
using transport::rctest::ConnectParams;
using transport::rctest::kIpA;
using transport::rctest::kIpB;
using transport::rctest::kMacA;
using transport::rctest::kMacB;
using transport::rctest::VecCq;
using Loop = EngineLoop<SimPortIo, RcQp, VecCq>;

constexpr std::uint64_t kVa = 0x40000000;
constexpr std::size_t kMem = 64 * 1024;

// One host: memory, an RC QP, its CQs, and an engine on one end of the link.
struct Host {
  Host(port::SimLink& link, unsigned ep, std::uint32_t qpn,
       const wire::MacAddr& mac, wire::Ipv4Addr ip)
      : port(link, ep), io(port), loop(io, 8), mem(kMem) {
    int err = 0;
    key = mrs.reg({1, kVa, mem.size(),
                   transport::access::kLocalWrite | transport::access::kRemoteAny,
                   mem.data()},
                  &err);
    RcQpConfig c;
    c.qpn = qpn;
    c.pd = 1;
    c.local = {mac, ip};
    qp = std::make_unique<RcQp>(c, mrs);
  }
  port::SimPort port;
  SimPortIo io;
  Loop loop;
  transport::MrTable mrs{4};
  std::vector<std::uint8_t> mem;
  std::uint32_t key = 0;
  std::unique_ptr<RcQp> qp;
  VecCq scq, rcq;
};

struct EngineLoopTest : ::testing::Test {
  port::SimLinkConfig cfg = [] {
    port::SimDirectionConfig d;
    d.propagation_ns = 1000;
    return port::SimLinkConfig::symmetric(d, 3);
  }();
  port::SimLink link{cfg};
  Host a{link, 0, 0x101, kMacA, kIpA};
  Host b{link, 1, 0x202, kMacB, kIpB};
  VirtualClock clock;

  void connect_both() {
    ConnectParams cp;
    cp.mtu = wire::PathMtu::k1024;
    transport::rctest::connect(*a.qp, 0x202, kMacB, kIpB, cp);
    ConnectParams cb = cp;
    std::swap(cb.sq_psn, cb.rq_psn);
    transport::rctest::connect(*b.qp, 0x101, kMacA, kIpA, cb);
  }
  // Both engines, alternately, `n` iterations, 500 ns apart.
  void run(int n) {
    for (int i = 0; i < n; ++i) {
      a.loop.run_once(clock.now());
      b.loop.run_once(clock.now());
      clock.advance_by(500);
    }
  }
  transport::SendWr wr(std::uint64_t id, transport::WrOpcode op,
                       std::uint64_t off, std::uint32_t len) const {
    transport::SendWr w;
    w.wr_id = id;
    w.opcode = op;
    w.flags = transport::send_flag::kSignaled;
    w.num_sge = 1;
    w.sge[0] = {kVa + off, len, a.key};
    w.remote_addr = kVa + off;
    w.rkey = b.key;
    return w;
  }
};

TEST_F(EngineLoopTest, RunOnce_WriteAndSendCompleteBetweenTwoEngines) {
  connect_both();
  ASSERT_EQ(a.loop.add_qp(*a.qp, a.scq, a.rcq), 0);
  ASSERT_EQ(b.loop.add_qp(*b.qp, b.scq, b.rcq), 0);
  for (std::size_t i = 0; i < kMem; ++i) a.mem[i] = static_cast<std::uint8_t>(i * 7 + 1);
  transport::RecvWr r;
  r.wr_id = 9;
  r.num_sge = 1;
  r.sge[0] = {kVa + 32768, 4096, b.key};
  ASSERT_EQ(b.qp->post_recv(r), 0);
  ASSERT_EQ(a.qp->post_send(wr(1, transport::WrOpcode::kRdmaWrite, 0, 8192)), 0);
  ASSERT_EQ(a.qp->post_send(wr(2, transport::WrOpcode::kSend, 16384, 100)), 0);
  run(50);
  ASSERT_EQ(a.scq.wc.size(), 2u);
  EXPECT_EQ(a.scq.wc[0].wr_id, 1u);
  EXPECT_EQ(a.scq.wc[1].wr_id, 2u);
  EXPECT_EQ(a.scq.wc[0].status, 0u);
  ASSERT_EQ(b.rcq.wc.size(), 1u);
  EXPECT_EQ(b.rcq.wc[0].wr_id, 9u);
  EXPECT_EQ(b.rcq.wc[0].byte_len, 100u);
  EXPECT_EQ(std::memcmp(a.mem.data(), b.mem.data(), 8192), 0);
  EXPECT_EQ(std::memcmp(a.mem.data() + 16384, b.mem.data() + 32768, 100), 0);
  // 8 WRITE packets + 1 SEND left A; B received them all and dispatched them.
  EXPECT_EQ(b.loop.counters().rx_dispatched, 9u);
  EXPECT_EQ(a.loop.counters().tx_pumped, 9u);
  EXPECT_EQ(b.loop.counters().rx_parse_errors, 0u);
  EXPECT_EQ(a.qp->counters().tx_retransmits, 0u);
}

TEST_F(EngineLoopTest, RxPhase_FrameForAnUnknownQpnIsCounted) {
  connect_both();
  ASSERT_EQ(a.loop.add_qp(*a.qp, a.scq, a.rcq), 0);
  // B's engine has no QP: the request arrives for nobody.
  ASSERT_EQ(a.qp->post_send(wr(1, transport::WrOpcode::kRdmaWrite, 0, 64)), 0);
  run(10);
  EXPECT_EQ(b.loop.counters().rx_frames, 1u);
  EXPECT_EQ(b.loop.counters().rx_no_qp, 1u);
  EXPECT_EQ(b.loop.counters().rx_dispatched, 0u);
}

TEST_F(EngineLoopTest, RxPhase_MalformedFrameIsCountedByParseError) {
  ASSERT_EQ(b.loop.add_qp(*b.qp, b.scq, b.rcq), 0);
  const std::vector<std::uint8_t> junk(10, 0xff);
  ASSERT_EQ(link.send(0, junk, 0), port::SimSendResult::kQueued);
  run(5);
  EXPECT_EQ(b.loop.counters().rx_parse_errors, 1u);
  EXPECT_EQ(b.loop.counters().parse_error[static_cast<std::size_t>(
                wire::ParseError::kTruncatedEth)],
            1u);
}

TEST_F(EngineLoopTest, TimerPhase_UnansweredRequestIsRetransmittedAfterTimeout) {
  connect_both();
  ASSERT_EQ(a.loop.add_qp(*a.qp, a.scq, a.rcq), 0);
  ASSERT_EQ(a.qp->post_send(wr(1, transport::WrOpcode::kRdmaWrite, 0, 64)), 0);
  run(4);
  const TimeNs due = a.loop.deadline(0x101);
  ASSERT_NE(due, 0u);
  EXPECT_EQ(a.loop.counters().timer_fires, 0u);
  // B's QP appears only now: the first request was lost to rx_no_qp.
  ASSERT_EQ(b.loop.add_qp(*b.qp, b.scq, b.rcq), 0);
  clock.advance_to(due);
  run(10);
  EXPECT_EQ(a.loop.counters().timer_fires, 1u);
  EXPECT_EQ(a.qp->counters().tx_retransmits, 1u);
  ASSERT_EQ(a.scq.wc.size(), 1u);
  EXPECT_EQ(a.scq.wc[0].status, 0u);
}

TEST_F(EngineLoopTest, TimerPhase_NoScanBeforeTheEarliestDeadline) {
  connect_both();
  ASSERT_EQ(a.loop.add_qp(*a.qp, a.scq, a.rcq), 0);
  run(20);
  EXPECT_EQ(a.loop.counters().timer_scans, 0u);
}

TEST_F(EngineLoopTest, AddQp_ClashAndCapacityAreRefused) {
  RcQpConfig c;
  c.qpn = 0x109;  // same low 3 bits as 0x101 in a table of 8
  transport::MrTable mrs(1);
  RcQp clash(c, mrs);
  ASSERT_EQ(a.loop.add_qp(*a.qp, a.scq, a.rcq), 0);
  EXPECT_EQ(a.loop.add_qp(clash, a.scq, a.rcq), EEXIST);
  EXPECT_EQ(a.loop.add_qp(*a.qp, a.scq, a.rcq), EEXIST);
  std::vector<std::unique_ptr<RcQp>> more;
  for (std::uint32_t q = 2; q < 9; ++q) {
    c.qpn = 0x100 | q;
    more.push_back(std::make_unique<RcQp>(c, mrs));
    ASSERT_EQ(a.loop.add_qp(*more.back(), a.scq, a.rcq), 0) << q;
  }
  EXPECT_EQ(a.loop.qp_count(), 8u);
  c.qpn = 0x300;
  RcQp extra(c, mrs);
  EXPECT_EQ(a.loop.add_qp(extra, a.scq, a.rcq), ENOSPC);
}

// A valid RC SEND_ONLY frame from A to `qpn`, put on the link at time 0.
void send_request_to(port::SimLink& link, std::uint32_t qpn) {
  wire::PacketSpec s;
  s.eth_src = kMacA;
  s.eth_dst = kMacB;
  s.ip_src = kIpA;
  s.ip_dst = kIpB;
  s.opcode = wire::op::kRcSendOnly;
  s.dest_qp = qpn;
  std::vector<std::uint8_t> f(wire::roce_frame_size(s));
  ASSERT_GT(wire::build_roce(s, f), 0);
  ASSERT_EQ(link.send(0, f, 0), port::SimSendResult::kQueued);
}

TEST_F(EngineLoopTest, RemoveQp_KeepsTheOtherQpsReachable) {
  RcQpConfig c;
  transport::MrTable mrs(1);
  c.qpn = 0x105;
  RcQp second(c, mrs);
  c.qpn = 0x106;
  RcQp third(c, mrs);
  ASSERT_EQ(b.loop.add_qp(*b.qp, b.scq, b.rcq), 0);
  ASSERT_EQ(b.loop.add_qp(second, b.scq, b.rcq), 0);
  ASSERT_EQ(b.loop.add_qp(third, b.scq, b.rcq), 0);
  // Removing the first entry moves the last one (0x106) into its place.
  EXPECT_EQ(b.loop.remove_qp(0x202), 0);
  EXPECT_EQ(b.loop.remove_qp(0x202), ENOENT);
  EXPECT_EQ(b.loop.qp_count(), 2u);
  send_request_to(link, 0x106);
  send_request_to(link, 0x202);
  run(5);
  EXPECT_EQ(b.loop.counters().rx_dispatched, 1u);
  EXPECT_EQ(b.loop.counters().rx_no_qp, 1u);
  // The QP in RESET drops the request: it reached the right QP.
  EXPECT_EQ(third.counters().drop_state + third.counters().drop_qpn, 1u);
  EXPECT_EQ(third.counters().drop_qpn, 0u);
}

}  // namespace
}  // namespace uroce::engine
