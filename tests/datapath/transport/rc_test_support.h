// Test support for the RC transport tests (not a source mirror): sinks that
// record what a QP emits, a fake peer that builds the packets the far end
// would send, and a fixture with one RC QP connected and in RTS.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <vector>

#include "datapath/transport/rc_qp.h"
#include "datapath/wire/builder.h"
#include "datapath/wire/parser.h"

namespace uroce::transport::rctest {

// A built frame and its parse (the parse points into `bytes`).
struct Pkt {
  std::vector<std::uint8_t> bytes;
  wire::ParsedPacket p;
  wire::ParseError err = wire::ParseError::kOk;
};
using PktPtr = std::unique_ptr<Pkt>;

inline PktPtr parse_frame(std::vector<std::uint8_t> bytes) {
  auto k = std::make_unique<Pkt>();
  k->bytes = std::move(bytes);
  k->err = wire::parse_roce(k->bytes, k->p);
  return k;
}

inline PktPtr build(const wire::PacketSpec& s) {
  std::vector<std::uint8_t> b(wire::roce_frame_size(s));
  const int n = wire::build_roce(s, b);
  EXPECT_GT(n, 0) << "build_roce " << n;
  return parse_frame(std::move(b));
}

// Records every frame; `limit` frames at most (then tx_alloc gives none).
struct CaptureTx {
  std::vector<PktPtr> frames;
  std::size_t limit = SIZE_MAX;
  std::vector<std::uint8_t> buf = std::vector<std::uint8_t>(wire::kMaxRoceFrame);
  std::span<std::uint8_t> tx_alloc(std::size_t n) {
    if (frames.size() >= limit || n > buf.size()) return {};
    return {buf.data(), n};
  }
  void tx_commit(std::size_t n) {
    frames.push_back(parse_frame({buf.begin(), buf.begin() + n}));
    EXPECT_EQ(frames.back()->err, wire::ParseError::kOk);
  }
  const wire::ParsedPacket& at(std::size_t i) const { return frames.at(i)->p; }
  std::size_t size() const { return frames.size(); }
  void clear() { frames.clear(); }
};

struct VecCq {
  std::vector<Cqe> wc;
  std::size_t limit = SIZE_MAX;
  bool push(const Cqe& c) {
    if (wc.size() >= limit) return false;
    wc.push_back(c);
    return true;
  }
};

struct FakeTimer {
  std::map<std::uint32_t, TimeNs> at;
  void arm(std::uint32_t qpn, TimeNs t) { at[qpn] = t; }
};

inline WcStatus status(const Cqe& c) { return static_cast<WcStatus>(c.status); }
inline WcOpcode wc_op(const Cqe& c) { return static_cast<WcOpcode>(c.opcode); }

inline const wire::MacAddr kMacA{{2, 0, 0, 0, 0, 0xa}};
inline const wire::MacAddr kMacB{{2, 0, 0, 0, 0, 0xb}};
inline const wire::Ipv4Addr kIpA{0x0a000001};
inline const wire::Ipv4Addr kIpB{0x0a000002};

struct ConnectParams {
  wire::PathMtu mtu = wire::PathMtu::k1024;
  std::uint32_t sq_psn = 100;
  std::uint32_t rq_psn = 500;
  std::uint8_t timeout = 10;  // 4.19 ms
  std::uint8_t retry_cnt = 3;
  std::uint8_t rnr_retry = 3;
  std::uint8_t min_rnr_timer = 1;
  std::uint8_t max_rd_atomic = 4;
  std::uint8_t max_dest_rd_atomic = 4;
  std::uint32_t access = access::kRemoteAny;
};

// RESET -> INIT -> RTR -> RTS with the given values; asserts each step.
inline void connect(RcQp& qp, std::uint32_t peer_qpn, const wire::MacAddr& dmac, wire::Ipv4Addr dip,
                    const ConnectParams& cp) {
  using namespace qp_attr;
  QpAttrValues a;
  a.qp_state = QpState::kInit;
  a.qp_access_flags = cp.access;
  ASSERT_EQ(qp.modify(kState | kPkeyIndex | kPort | kAccessFlags, a), 0);
  a.qp_state = QpState::kRtr;
  a.av.dmac = dmac;
  a.av.dip = dip;
  a.path_mtu = cp.mtu;
  a.dest_qp_num = peer_qpn;
  a.rq_psn = cp.rq_psn;
  a.max_dest_rd_atomic = cp.max_dest_rd_atomic;
  a.min_rnr_timer = cp.min_rnr_timer;
  ASSERT_EQ(qp.modify(kState | kAv | kPathMtu | kDestQpn | kRqPsn | kMaxDestRdAtomic | kMinRnrTimer,
                      a),
            0);
  a.qp_state = QpState::kRts;
  a.sq_psn = cp.sq_psn;
  a.timeout = cp.timeout;
  a.retry_cnt = cp.retry_cnt;
  a.rnr_retry = cp.rnr_retry;
  a.max_rd_atomic = cp.max_rd_atomic;
  ASSERT_EQ(qp.modify(kState | kSqPsn | kTimeout | kRetryCnt | kRnrRetry | kMaxQpRdAtomic, a), 0);
}

// One QP (qpn kQpn, "A") in RTS talking to a scripted peer (kPeerQpn, "B").
struct RcFixture : ::testing::Test {
  static constexpr std::uint32_t kQpn = 0x11;
  static constexpr std::uint32_t kPeerQpn = 0x22;
  static constexpr PdHandle kPd = 7;

  MrTable mrs{64};
  std::vector<std::uint8_t> local = std::vector<std::uint8_t>(1 << 20);
  std::vector<std::uint8_t> remote = std::vector<std::uint8_t>(1 << 20);
  std::uint32_t lkey = 0;  // local memory, local write
  std::uint32_t rkey = 0;  // "remote" memory exposed to the peer, all access
  static constexpr std::uint64_t kLocalVa = 0x10000000;
  static constexpr std::uint64_t kRemoteVa = 0x20000000;

  CaptureTx tx;
  VecCq scq;
  VecCq rcq;
  FakeTimer timer;
  RcIo<CaptureTx, VecCq, VecCq, FakeTimer> io{tx, scq, rcq, timer};
  std::unique_ptr<RcQp> qp;
  ConnectParams cp;
  RcQpConfig cfg;

  void SetUp() override {
    for (std::size_t i = 0; i < local.size(); ++i) {
      local[i] = static_cast<std::uint8_t>(i * 7 + 3);
      remote[i] = static_cast<std::uint8_t>(i * 13 + 1);
    }
    int err = 0;
    lkey = mrs.reg({kPd, kLocalVa, local.size(), access::kLocalWrite, local.data()}, &err);
    rkey = mrs.reg({kPd, kRemoteVa, remote.size(), access::kLocalWrite | access::kRemoteAny,
                    remote.data()},
                   &err);
    cfg.qpn = kQpn;
    cfg.pd = kPd;
    cfg.local = {kMacA, kIpA};
  }
  // Creates and connects the QP (call after adjusting cfg / cp).
  void make_qp() {
    qp = std::make_unique<RcQp>(cfg, mrs);
    connect(*qp, kPeerQpn, kMacB, kIpB, cp);
  }
  std::uint32_t mtu() const { return wire::path_mtu_bytes(cp.mtu); }

  // A packet from the peer to this QP.
  wire::PacketSpec peer_spec(std::uint8_t opcode, std::uint32_t psn) const {
    wire::PacketSpec s;
    s.eth_src = kMacB;
    s.eth_dst = kMacA;
    s.ip_src = kIpB;
    s.ip_dst = kIpA;
    s.opcode = opcode;
    s.dest_qp = kQpn;
    s.psn = psn & 0xffffff;
    s.pmtu = cp.mtu;
    return s;
  }
  PktPtr ack(std::uint32_t psn, std::uint8_t syndrome = wire::aeth_ack_syndrome(),
             std::uint32_t msn = 0) const {
    wire::PacketSpec s = peer_spec(wire::op::kRcAck, psn);
    s.aeth = wire::AethHdr::make(syndrome, msn);
    return build(s);
  }
  void deliver(const PktPtr& k, TimeNs now = 0) { qp->on_packet(k->p, now, io); }
  std::uint32_t pump(TimeNs now = 0, std::uint32_t budget = 1000) {
    return qp->pump_tx(now, io, budget);
  }
  // Fires the QP's timer at each instant it is armed for, from `t` on, and
  // sends what each firing asks (tx keeps the last firing's frames only),
  // until the retransmission timeout has fired or twice its time has
  // passed; returns the last firing's instant.
  TimeNs run_to_timeout(TimeNs t) {
    const TimeNs rto = local_ack_timeout_ns(cp.timeout);
    while (qp->counters().timeouts == 0 && t < 2 * rto) {
      t = timer.at.at(kQpn);
      qp->on_timer(t, io);
      tx.clear();
      pump(t);
    }
    return t;
  }

  SendWr send_wr(std::uint64_t id, WrOpcode op, std::uint64_t off, std::uint32_t len,
                 bool signaled = true) const {
    SendWr w;
    w.wr_id = id;
    w.opcode = op;
    w.flags = signaled ? send_flag::kSignaled : 0;
    w.num_sge = 1;
    w.sge[0] = {kLocalVa + off, len, lkey};
    w.remote_addr = kRemoteVa + off;
    w.rkey = rkey;
    return w;
  }
  RecvWr recv_wr(std::uint64_t id, std::uint64_t off, std::uint32_t len) const {
    RecvWr r;
    r.wr_id = id;
    r.num_sge = 1;
    r.sge[0] = {kLocalVa + off, len, lkey};
    return r;
  }
};

}  // namespace uroce::transport::rctest
