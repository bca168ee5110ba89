#include "datapath/transport/uc_qp.h"

#include <gtest/gtest.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <numeric>
#include <optional>
#include <vector>

#include "datapath/wire/builder.h"
#include "datapath/wire/parser.h"
#include "tests/datapath/transport/recv_refill_support.h"

namespace uroce::transport {
namespace {

using wire::ParsedPacket;
using wire::ParseError;
namespace op = wire::op;

struct FakeTx {
  std::array<std::uint8_t, wire::kMaxRoceFrame> buf{};
  std::vector<std::vector<std::uint8_t>> frames;
  bool room = true;
  std::span<std::uint8_t> tx_alloc(std::size_t n) {
    if (!room || n > buf.size()) return {};
    return {buf.data(), n};
  }
  void tx_commit(std::size_t n) { frames.emplace_back(buf.begin(), buf.begin() + n); }
};

struct FakeCq {
  std::vector<Cqe> wcs;
  bool push(const Cqe& c) {
    wcs.push_back(c);
    return true;
  }
};

constexpr std::uint32_t kQpnA = 0x000031;
constexpr std::uint32_t kQpnB = 0x000042;
constexpr std::uint32_t kPsnA = 0x000500;  // A's sq_psn = B's rq_psn
constexpr std::uint32_t kPsnB = 0x000900;
constexpr PdHandle kPd = 1;
constexpr std::uint32_t kMtu = 256;

const wire::MacAddr kMacA{{0x02, 0, 0, 0, 0, 0x0a}};
const wire::MacAddr kMacB{{0x02, 0, 0, 0, 0, 0x0b}};
const wire::Ipv4Addr kIpA{0x0a000001};
const wire::Ipv4Addr kIpB{0x0a000002};

ParsedPacket parse(const std::vector<std::uint8_t>& f) {
  ParsedPacket p;
  EXPECT_EQ(wire::parse_roce(f, p), ParseError::kOk);
  return p;
}

struct UcFixture : ::testing::Test {
  MrTable mrs{16};
  std::vector<std::uint8_t> src = std::vector<std::uint8_t>(8192);
  std::vector<std::uint8_t> dst = std::vector<std::uint8_t>(8192, 0xee);
  std::uint32_t src_key = 0, dst_key = 0;
  static constexpr std::uint64_t kSrcVa = 0x10000;
  static constexpr std::uint64_t kDstVa = 0x20000;
  FakeTx tx;
  FakeCq a_scq, a_rcq, b_scq, b_rcq;
  UcQp a{config(kQpnA, kMacA, kIpA), mrs};
  // B's owner holds receives back until B asks (recv_refill.h); it posts
  // nothing unless a test gives it WRs.
  test::HeldRecvs<UcQp> held;
  UcQp b{with_refill(config(kQpnB, kMacB, kIpB), held), mrs};

  static UcQpConfig with_refill(UcQpConfig c, test::HeldRecvs<UcQp>& h) {
    c.recv_refill = h.refill(5);
    return c;
  }

  static UcQpConfig config(std::uint32_t qpn, wire::MacAddr mac, wire::Ipv4Addr ip) {
    UcQpConfig c;
    c.qpn = qpn;
    c.pd = kPd;
    c.local = {mac, ip};
    c.max_send_wr = 8;
    c.max_recv_wr = 8;
    return c;
  }

  void SetUp() override {
    held.q = &b;
    std::iota(src.begin(), src.end(), 0);
    int err = 0;
    src_key = mrs.reg({kPd, kSrcVa, src.size(), access::kLocalWrite, src.data()}, &err);
    dst_key =
        mrs.reg({kPd, kDstVa, dst.size(), access::kLocalWrite | access::kRemoteWrite, dst.data()},
                &err);
    ASSERT_NE(src_key, 0u);
    ASSERT_NE(dst_key, 0u);
    connect(a, kQpnB, {kMacB, kIpB, 10, 64}, kPsnA, kPsnB);
    connect(b, kQpnA, {kMacA, kIpA, 10, 64}, kPsnB, kPsnA);
  }

  static void connect(UcQp& q, std::uint32_t dest, PathAddr path, std::uint32_t sq_psn,
                      std::uint32_t rq_psn) {
    QpAttrValues v;
    v.qp_state = QpState::kInit;
    v.qp_access_flags = access::kRemoteWrite;
    ASSERT_EQ(q.modify(qp_attr::kState | qp_attr::kPkeyIndex | qp_attr::kPort |
                           qp_attr::kAccessFlags,
                       v),
              0);
    v.qp_state = QpState::kRtr;
    v.av = path;
    v.path_mtu = wire::PathMtu::k256;
    v.dest_qp_num = dest;
    v.rq_psn = rq_psn;
    ASSERT_EQ(q.modify(qp_attr::kState | qp_attr::kAv | qp_attr::kPathMtu | qp_attr::kDestQpn |
                           qp_attr::kRqPsn,
                       v),
              0);
    v.qp_state = QpState::kRts;
    v.sq_psn = sq_psn;
    ASSERT_EQ(q.modify(qp_attr::kState | qp_attr::kSqPsn, v), 0);
  }

  SendWr send_wr(std::uint64_t wr_id, std::uint32_t len, std::uint64_t src_off = 0) const {
    SendWr w;
    w.wr_id = wr_id;
    w.opcode = WrOpcode::kSend;
    w.flags = send_flag::kSignaled;
    w.num_sge = 1;
    w.sge[0] = {kSrcVa + src_off, len, src_key};
    return w;
  }
  SendWr write_wr(std::uint64_t wr_id, std::uint32_t len, std::uint64_t dst_off,
                  std::uint32_t rkey) const {
    SendWr w = send_wr(wr_id, len);
    w.opcode = WrOpcode::kRdmaWrite;
    w.remote_addr = kDstVa + dst_off;
    w.rkey = rkey;
    return w;
  }
  RecvWr recv_wr(std::uint64_t wr_id, std::uint32_t len, std::uint64_t off = 0) const {
    RecvWr r;
    r.wr_id = wr_id;
    r.num_sge = 1;
    r.sge[0] = {kDstVa + off, len, dst_key};
    return r;
  }

  // Sends all of A's queue; returns the frames sent by this call.
  std::vector<std::vector<std::uint8_t>> pump() {
    const std::size_t before = tx.frames.size();
    a.process_send(tx, a_scq, 1000);
    return {tx.frames.begin() + static_cast<std::ptrdiff_t>(before), tx.frames.end()};
  }
  // A UC packet to B built by hand (what a peer, not our requester, sends).
  std::vector<std::uint8_t> frame(std::uint8_t opcode, std::uint32_t psn, std::size_t len,
                                  std::optional<wire::RethHdr> reth = std::nullopt) const {
    wire::PacketSpec s;
    s.ip_src = kIpA;  // from B's connected peer, as check_addr requires
    s.ip_dst = kIpB;
    s.reth = reth;
    s.opcode = opcode;
    s.dest_qp = kQpnB;
    s.psn = psn;
    s.pmtu = wire::PathMtu::k256;
    const std::vector<std::uint8_t> body(len, 7);
    s.payload = body;
    std::vector<std::uint8_t> f(512);
    f.resize(static_cast<std::size_t>(wire::build_roce(s, f)));
    return f;
  }
  std::vector<UcRx> deliver(const std::vector<std::vector<std::uint8_t>>& fs) {
    std::vector<UcRx> out;
    for (const auto& f : fs) out.push_back(b.on_packet(parse(f), b_rcq));
    return out;
  }
};

TEST_F(UcFixture, Send_SegmentsByPathMtuWithConsecutivePsns) {
  ASSERT_EQ(b.post_recv(recv_wr(100, 1024)), 0);
  ASSERT_EQ(a.post_send(send_wr(1, 600)), 0);
  const auto frames = pump();
  ASSERT_EQ(frames.size(), 3u);
  const std::uint8_t want_ops[] = {op::kUcSendFirst, op::kUcSendMiddle, op::kUcSendLast};
  const std::size_t want_len[] = {256, 256, 88};
  for (std::size_t i = 0; i < 3; ++i) {
    const ParsedPacket p = parse(frames[i]);
    EXPECT_EQ(p.bth.opcode(), want_ops[i]) << i;
    EXPECT_EQ(p.bth.psn(), kPsnA + i) << i;
    EXPECT_EQ(p.bth.dest_qp(), kQpnB);
    EXPECT_FALSE(p.bth.ack_req());
    EXPECT_EQ(p.payload.size(), want_len[i]) << i;
    EXPECT_EQ(p.ip.dst(), kIpB);
    EXPECT_EQ(p.ip.dscp(), 10);
    EXPECT_EQ(p.eth.dst(), kMacB);
    EXPECT_EQ(p.udp.src_port(), rxe_udp_src_port(kQpnA));
  }
  // Completes on transmission: there is no ACK on UC.
  ASSERT_EQ(a_scq.wcs.size(), 1u);
  EXPECT_EQ(a_scq.wcs[0].wr_id, 1u);
  EXPECT_EQ(a_scq.wcs[0].opcode, static_cast<std::uint32_t>(WcOpcode::kSend));
  EXPECT_EQ(a_scq.wcs[0].byte_len, 600u);
  EXPECT_EQ(a.next_psn(), Psn(kPsnA + 3));

  EXPECT_EQ(deliver(frames),
            (std::vector<UcRx>{UcRx::kAccepted, UcRx::kAccepted, UcRx::kCompleted}));
  EXPECT_TRUE(std::equal(dst.begin(), dst.begin() + 600, src.begin()));
  EXPECT_EQ(dst[600], 0xee);
  ASSERT_EQ(b_rcq.wcs.size(), 1u);
  Cqe want{};
  want.wr_id = 100;
  want.opcode = static_cast<std::uint32_t>(WcOpcode::kRecv);
  want.byte_len = 600;
  want.qp_num = kQpnB;
  want.port_num = 1;
  EXPECT_EQ(std::memcmp(&b_rcq.wcs[0], &want, sizeof(Cqe)), 0);
  EXPECT_EQ(b.expected_psn(), Psn(kPsnA + 3));
}

TEST_F(UcFixture, Write_MultiPacketRethOnFirstOnlyAndNoReceiveWr) {
  ASSERT_EQ(a.post_send(write_wr(2, 520, 64, dst_key)), 0);
  const auto frames = pump();
  ASSERT_EQ(frames.size(), 3u);
  const ParsedPacket first = parse(frames[0]);
  EXPECT_EQ(first.bth.opcode(), op::kUcWriteFirst);
  EXPECT_EQ(first.reth.va(), kDstVa + 64);
  EXPECT_EQ(first.reth.rkey(), dst_key);
  EXPECT_EQ(first.reth.dma_len(), 520u);
  EXPECT_EQ(parse(frames[1]).bth.opcode(), op::kUcWriteMiddle);
  EXPECT_EQ(parse(frames[2]).bth.opcode(), op::kUcWriteLast);
  EXPECT_EQ(parse(frames[2]).payload.size(), 8u);
  ASSERT_EQ(a_scq.wcs.size(), 1u);
  EXPECT_EQ(a_scq.wcs[0].opcode, static_cast<std::uint32_t>(WcOpcode::kRdmaWrite));

  EXPECT_EQ(deliver(frames), (std::vector<UcRx>(3, UcRx::kAccepted)));
  EXPECT_EQ(dst[63], 0xee);
  EXPECT_TRUE(std::equal(dst.begin() + 64, dst.begin() + 584, src.begin()));
  EXPECT_EQ(dst[584], 0xee);
  EXPECT_TRUE(b_rcq.wcs.empty());
}

TEST_F(UcFixture, WriteImm_ConsumesAReceiveWrWithTheImmediate) {
  ASSERT_EQ(b.post_recv(recv_wr(77, 0)), 0);
  SendWr w = write_wr(3, 300, 0, dst_key);
  w.opcode = WrOpcode::kRdmaWriteImm;
  const std::uint8_t imm_bytes[4] = {1, 2, 3, 4};
  std::memcpy(&w.imm_or_inv, imm_bytes, 4);
  ASSERT_EQ(a.post_send(w), 0);
  const auto frames = pump();
  ASSERT_EQ(frames.size(), 2u);
  EXPECT_EQ(parse(frames[0]).bth.opcode(), op::kUcWriteFirst);
  const ParsedPacket last = parse(frames[1]);
  EXPECT_EQ(last.bth.opcode(), op::kUcWriteLastImm);
  EXPECT_EQ(last.immdt.imm(), 0x01020304u);
  EXPECT_EQ(deliver(frames), (std::vector<UcRx>{UcRx::kAccepted, UcRx::kCompleted}));
  ASSERT_EQ(b_rcq.wcs.size(), 1u);
  Cqe want{};
  want.wr_id = 77;
  want.opcode = static_cast<std::uint32_t>(WcOpcode::kRecvRdmaWithImm);
  want.byte_len = 300;
  want.qp_num = kQpnB;
  want.wc_flags = wc_flag::kWithImm;
  std::memcpy(&want.ex.imm_data, imm_bytes, 4);
  want.port_num = 1;
  EXPECT_EQ(std::memcmp(&b_rcq.wcs[0], &want, sizeof(Cqe)), 0);
  EXPECT_TRUE(std::equal(dst.begin(), dst.begin() + 300, src.begin()));
}

TEST_F(UcFixture, Solicited_SeOnLastPacketReachesTheReceiveCompletion) {
  ASSERT_EQ(b.post_recv(recv_wr(1, 1024)), 0);
  ASSERT_EQ(b.post_recv(recv_wr(2, 1024)), 0);
  ASSERT_EQ(b.post_recv(recv_wr(3, 1024)), 0);
  SendWr sol = send_wr(1, 600);
  sol.flags |= send_flag::kSolicited;
  ASSERT_EQ(a.post_send(sol), 0);
  auto frames = pump();
  ASSERT_EQ(frames.size(), 3u);
  EXPECT_FALSE(parse(frames[0]).bth.se());
  EXPECT_FALSE(parse(frames[1]).bth.se());
  EXPECT_TRUE(parse(frames[2]).bth.se());
  deliver(frames);
  ASSERT_EQ(a.post_send(send_wr(2, 10)), 0);
  frames = pump();
  ASSERT_EQ(frames.size(), 1u);
  EXPECT_FALSE(parse(frames[0]).bth.se());
  deliver(frames);
  SendWr wimm = write_wr(3, 8, 0, dst_key);
  wimm.opcode = WrOpcode::kRdmaWriteImm;
  wimm.flags |= send_flag::kSolicited;
  ASSERT_EQ(a.post_send(wimm), 0);
  frames = pump();
  ASSERT_EQ(frames.size(), 1u);
  EXPECT_TRUE(parse(frames[0]).bth.se());
  EXPECT_EQ(deliver(frames), (std::vector<UcRx>{UcRx::kCompleted}));
  ASSERT_EQ(b_rcq.wcs.size(), 3u);
  EXPECT_TRUE(is_solicited(b_rcq.wcs[0]));
  EXPECT_FALSE(is_solicited(b_rcq.wcs[1]));
  EXPECT_TRUE(is_solicited(b_rcq.wcs[2]));
  // A plain WRITE never asks: it consumes no receive WR.
  SendWr w = write_wr(4, 8, 0, dst_key);
  w.flags |= send_flag::kSolicited;
  ASSERT_EQ(a.post_send(w), 0);
  frames = pump();
  ASSERT_EQ(frames.size(), 1u);
  EXPECT_FALSE(parse(frames[0]).bth.se());
}

TEST_F(UcFixture, Receive_LostMiddleDropsMessageAndNextIsIntact) {
  ASSERT_EQ(b.post_recv(recv_wr(100, 2048)), 0);
  ASSERT_EQ(b.post_recv(recv_wr(101, 2048, 4096)), 0);
  ASSERT_EQ(a.post_send(send_wr(1, 700)), 0);        // 3 packets
  ASSERT_EQ(a.post_send(send_wr(2, 300, 1000)), 0);  // 2 packets
  auto frames = pump();
  ASSERT_EQ(frames.size(), 5u);
  frames.erase(frames.begin() + 1);  // the MIDDLE of message 1 is lost
  EXPECT_EQ(deliver(frames), (std::vector<UcRx>{UcRx::kAccepted, UcRx::kDropPsnGap, UcRx::kAccepted,
                                                UcRx::kCompleted}));
  // Message 1 never completes; its half-filled WR (100) takes message 2.
  ASSERT_EQ(b_rcq.wcs.size(), 1u);
  EXPECT_EQ(b_rcq.wcs[0].wr_id, 100u);
  EXPECT_EQ(b_rcq.wcs[0].byte_len, 300u);
  EXPECT_EQ(b_rcq.wcs[0].status, static_cast<std::uint32_t>(WcStatus::kSuccess));
  EXPECT_TRUE(std::equal(dst.begin(), dst.begin() + 300, src.begin() + 1000));
  EXPECT_EQ(b.counters().rx_abandoned, 1u);
  EXPECT_EQ(b.counters().rx_count(UcRx::kDropPsnGap), 1u);
  EXPECT_EQ(b.expected_psn(), Psn(kPsnA + 5));
  // Both sends completed at the sender regardless.
  EXPECT_EQ(a_scq.wcs.size(), 2u);
}

TEST_F(UcFixture, Receive_LostLastResyncsOnNextFirst) {
  ASSERT_EQ(b.post_recv(recv_wr(100, 2048)), 0);
  ASSERT_EQ(a.post_send(send_wr(1, 600)), 0);        // 3 packets
  ASSERT_EQ(a.post_send(send_wr(2, 512, 2000)), 0);  // FIRST + LAST
  auto frames = pump();
  ASSERT_EQ(frames.size(), 5u);
  frames.erase(frames.begin() + 2);  // LAST of message 1 lost
  EXPECT_EQ(deliver(frames), (std::vector<UcRx>{UcRx::kAccepted, UcRx::kAccepted, UcRx::kAccepted,
                                                UcRx::kCompleted}));
  ASSERT_EQ(b_rcq.wcs.size(), 1u);
  EXPECT_EQ(b_rcq.wcs[0].wr_id, 100u);
  EXPECT_EQ(b_rcq.wcs[0].byte_len, 512u);
  EXPECT_TRUE(std::equal(dst.begin(), dst.begin() + 512, src.begin() + 2000));
  EXPECT_EQ(b.counters().rx_abandoned, 1u);
}

TEST_F(UcFixture, Send_PsnWrapsAt24Bits) {
  QpAttrValues v;
  v.qp_state = QpState::kReset;
  ASSERT_EQ(a.modify(qp_attr::kState, v), 0);
  ASSERT_EQ(b.modify(qp_attr::kState, v), 0);
  connect(a, kQpnB, {kMacB, kIpB, 0, 64}, 0xfffffe, 0);
  connect(b, kQpnA, {kMacA, kIpA, 0, 64}, 0, 0xfffffe);
  ASSERT_EQ(b.post_recv(recv_wr(1, 2048)), 0);
  ASSERT_EQ(a.post_send(send_wr(1, 1000)), 0);  // 4 packets
  const auto frames = pump();
  ASSERT_EQ(frames.size(), 4u);
  const std::uint32_t want_psn[] = {0xfffffe, 0xffffff, 0, 1};
  for (int i = 0; i < 4; ++i) EXPECT_EQ(parse(frames[i]).bth.psn(), want_psn[i]) << i;
  EXPECT_EQ(deliver(frames).back(), UcRx::kCompleted);
  ASSERT_EQ(b_rcq.wcs.size(), 1u);
  EXPECT_EQ(b_rcq.wcs[0].byte_len, 1000u);
  EXPECT_TRUE(std::equal(dst.begin(), dst.begin() + 1000, src.begin()));
  EXPECT_EQ(b.expected_psn(), Psn(2));
}

// BIND_MW on UC (a local operation, as rxe's UC runs it): in send-queue
// order after the SEND before it, nothing on the wire, IBV_WC_BIND_MW; the
// window then admits a WRITE at its new key. A bind the table refuses
// completes IBV_WC_MW_BIND_ERR, the QP goes to ERR and flushes what follows.
TEST_F(UcFixture, BindMw_BindsInOrderThenAWriteUsesTheWindow) {
  int err = 0;
  const std::uint32_t mr =
      mrs.reg({kPd, 0x40000, 4096, access::kLocalWrite | access::kRemoteWrite | access::kMwBind,
               dst.data()},
              &err);
  ASSERT_NE(mr, 0u);
  const std::uint32_t mw = mrs.alloc_mw(kPd, MwType::kType2, &err);
  ASSERT_NE(mw, 0u);
  ASSERT_EQ(a.post_send(send_wr(1, 16)), 0);
  SendWr b;
  b.wr_id = 2;
  b.opcode = WrOpcode::kBindMw;
  b.flags = send_flag::kSignaled;
  b.imm_or_inv = mw;
  b.rkey = (mw & ~0xFFu) | ((mw + 1) & 0xFFu);
  b.remote_addr = 0x40100;
  b.compare_add = 64;
  b.swap = pack_mw_lkey_access(mr, access::kRemoteWrite);
  ASSERT_EQ(a.post_send(b), 0);
  EXPECT_EQ(pump().size(), 1u);  // the SEND's one packet; the bind sends nothing
  ASSERT_EQ(a_scq.wcs.size(), 2u);
  EXPECT_EQ(a_scq.wcs[0].wr_id, 1u);
  EXPECT_EQ(a_scq.wcs[1].wr_id, 2u);
  EXPECT_EQ(a_scq.wcs[1].status, static_cast<std::uint32_t>(WcStatus::kSuccess));
  EXPECT_EQ(a_scq.wcs[1].opcode, static_cast<std::uint32_t>(WcOpcode::kBindMw));
  EXPECT_EQ(a.counters().mw_binds, 1u);
  std::uint8_t* h = nullptr;
  EXPECT_EQ(mrs.resolve_remote(b.rkey, kPd, kQpnA, 0x40100, 64, access::kRemoteWrite, &h),
            MrError::kOk);
  EXPECT_EQ(h, dst.data() + 0x100);
  // Bound already: a second bind of a type-2 window is refused.
  b.wr_id = 3;
  ASSERT_EQ(a.post_send(b), 0);
  ASSERT_EQ(a.post_send(send_wr(4, 16)), 0);
  EXPECT_TRUE(pump().empty());
  ASSERT_EQ(a_scq.wcs.size(), 3u);
  EXPECT_EQ(a_scq.wcs[2].wr_id, 3u);
  EXPECT_EQ(a_scq.wcs[2].status, static_cast<std::uint32_t>(WcStatus::kMwBindErr));
  EXPECT_EQ(a.state(), QpState::kErr);
  EXPECT_EQ(a.counters().mw_bind_errors, 1u);
  a.flush(a_scq, a_rcq);
  ASSERT_EQ(a_scq.wcs.size(), 4u);
  EXPECT_EQ(a_scq.wcs[3].wr_id, 4u);
  EXPECT_EQ(a_scq.wcs[3].status, static_cast<std::uint32_t>(WcStatus::kWrFlushErr));
}

TEST_F(UcFixture, Write_BadRkeyDroppedSilentlyAndCounted) {
  ASSERT_EQ(a.post_send(write_wr(1, 600, 0, dst_key ^ 0x100)), 0);  // wrong slot
  ASSERT_EQ(a.post_send(write_wr(2, 16, 8190, dst_key)), 0);        // out of bounds
  ASSERT_EQ(a.post_send(write_wr(3, 16, 0, dst_key)), 0);           // good
  const auto frames = pump();
  ASSERT_EQ(frames.size(), 5u);
  EXPECT_EQ(deliver(frames),
            (std::vector<UcRx>{UcRx::kDropRkey, UcRx::kDropRestOfMessage, UcRx::kDropRestOfMessage,
                               UcRx::kDropRkey, UcRx::kAccepted}));
  EXPECT_EQ(b.counters().rx_count(UcRx::kDropRkey), 2u);
  EXPECT_EQ(b.counters().rx_count(UcRx::kDropRestOfMessage), 2u);
  EXPECT_TRUE(b_rcq.wcs.empty());
  EXPECT_EQ(dst[8190], 0xee);
  EXPECT_TRUE(std::equal(dst.begin(), dst.begin() + 16, src.begin()));
  EXPECT_EQ(dst[16], 0xee);
  EXPECT_EQ(b.state(), QpState::kRts);
}

TEST_F(UcFixture, Write_WithoutRemoteWriteAccessDropped) {
  QpAttrValues v;
  v.qp_state = QpState::kRts;
  v.qp_access_flags = 0;
  ASSERT_EQ(b.modify(qp_attr::kState | qp_attr::kAccessFlags, v), 0);
  ASSERT_EQ(a.post_send(write_wr(1, 16, 0, dst_key)), 0);
  EXPECT_EQ(deliver(pump()), (std::vector<UcRx>{UcRx::kDropAccess}));
  EXPECT_EQ(dst[0], 0xee);
}

TEST_F(UcFixture, Receive_NoRecvWrDropsTheWholeSend) {
  ASSERT_EQ(a.post_send(send_wr(1, 300)), 0);
  EXPECT_EQ(deliver(pump()), (std::vector<UcRx>{UcRx::kDropNoRecvWqe, UcRx::kDropRestOfMessage}));
  ASSERT_EQ(b.post_recv(recv_wr(9, 64)), 0);
  ASSERT_EQ(a.post_send(send_wr(2, 10)), 0);
  EXPECT_EQ(deliver(pump()), (std::vector<UcRx>{UcRx::kCompleted}));
  EXPECT_EQ(b_rcq.wcs[0].wr_id, 9u);
}

TEST_F(UcFixture, Receive_EmptyRqAsksTheRefillAtTheFirstPacket) {
  held.wrs = {recv_wr(9, 512)};
  ASSERT_EQ(a.post_send(send_wr(1, 300)), 0);
  EXPECT_EQ(deliver(pump()), (std::vector<UcRx>{UcRx::kAccepted, UcRx::kCompleted}));
  EXPECT_EQ(held.asks, 1);
  EXPECT_EQ(held.last_tag, 5u);
  ASSERT_EQ(b_rcq.wcs.size(), 1u);
  EXPECT_EQ(b_rcq.wcs[0].wr_id, 9u);
  EXPECT_EQ(b_rcq.wcs[0].byte_len, 300u);
  EXPECT_TRUE(std::equal(dst.begin(), dst.begin() + 300, src.begin()));
  EXPECT_EQ(b.counters().rx_count(UcRx::kDropNoRecvWqe), 0u);
}

TEST_F(UcFixture, WriteImm_EmptyRqAsksTheRefillAtTheLastPacket) {
  held.wrs = {recv_wr(77, 0)};
  SendWr w = write_wr(3, 300, 0, dst_key);
  w.opcode = WrOpcode::kRdmaWriteImm;
  ASSERT_EQ(a.post_send(w), 0);
  EXPECT_EQ(deliver(pump()), (std::vector<UcRx>{UcRx::kAccepted, UcRx::kCompleted}));
  EXPECT_EQ(held.asks, 1);
  ASSERT_EQ(b_rcq.wcs.size(), 1u);
  EXPECT_EQ(b_rcq.wcs[0].wr_id, 77u);
}

TEST_F(UcFixture, Receive_RefillWithNothingDropsTheWholeSend) {
  ASSERT_EQ(a.post_send(send_wr(1, 300)), 0);
  EXPECT_EQ(deliver(pump()), (std::vector<UcRx>{UcRx::kDropNoRecvWqe, UcRx::kDropRestOfMessage}));
  EXPECT_EQ(held.asks, 1);
  EXPECT_TRUE(b_rcq.wcs.empty());
}

TEST_F(UcFixture, Receive_SendLongerThanRecvWrIsLocLenErr) {
  ASSERT_EQ(b.post_recv(recv_wr(5, 300)), 0);
  ASSERT_EQ(b.post_recv(recv_wr(6, 300, 1024)), 0);
  ASSERT_EQ(a.post_send(send_wr(1, 700)), 0);
  ASSERT_EQ(a.post_send(send_wr(2, 20)), 0);
  EXPECT_EQ(deliver(pump()), (std::vector<UcRx>{UcRx::kAccepted, UcRx::kLenErr,
                                                UcRx::kDropRestOfMessage, UcRx::kCompleted}));
  ASSERT_EQ(b_rcq.wcs.size(), 2u);
  const Cqe want = error_wc(5, kQpnB, WcStatus::kLocLenErr);
  EXPECT_EQ(std::memcmp(&b_rcq.wcs[0], &want, sizeof(Cqe)), 0);
  EXPECT_EQ(b_rcq.wcs[1].wr_id, 6u);
  EXPECT_EQ(b_rcq.wcs[1].byte_len, 20u);
}

TEST_F(UcFixture, Receive_ShortMiddlePacketDropsMessage) {
  ASSERT_EQ(b.post_recv(recv_wr(1, 2048)), 0);
  EXPECT_EQ(deliver({frame(op::kUcSendFirst, kPsnA, kMtu), frame(op::kUcSendMiddle, kPsnA + 1, 100),
                     frame(op::kUcSendLast, kPsnA + 2, 10)}),
            (std::vector<UcRx>{UcRx::kAccepted, UcRx::kDropBadLength, UcRx::kDropRestOfMessage}));
  EXPECT_EQ(b.counters().rx_abandoned, 1u);
  EXPECT_TRUE(b_rcq.wcs.empty());
}

TEST_F(UcFixture, Receive_MiddleWithoutFirstIsOpSequenceDrop) {
  EXPECT_EQ(deliver({frame(op::kUcSendMiddle, kPsnA, kMtu)}),
            (std::vector<UcRx>{UcRx::kDropOpSequence}));
}

TEST_F(UcFixture, Receive_InOrderFirstWithoutLastStartsANewMessage) {
  // The sender gave up on a message (e.g. a local error) and started the
  // next one with the following PSN: the receive WR is reused for it.
  ASSERT_EQ(b.post_recv(recv_wr(1, 2048)), 0);
  EXPECT_EQ(deliver({frame(op::kUcSendFirst, kPsnA, kMtu), frame(op::kUcSendOnly, kPsnA + 1, 12)}),
            (std::vector<UcRx>{UcRx::kAccepted, UcRx::kCompleted}));
  ASSERT_EQ(b_rcq.wcs.size(), 1u);
  EXPECT_EQ(b_rcq.wcs[0].wr_id, 1u);
  EXPECT_EQ(b_rcq.wcs[0].byte_len, 12u);
  EXPECT_EQ(b.counters().rx_abandoned, 1u);
}

TEST_F(UcFixture, Receive_SendMiddleInsideWriteIsOpSequenceDrop) {
  const auto reth = wire::RethHdr::make(kDstVa, dst_key, 2 * kMtu);
  EXPECT_EQ(deliver({frame(op::kUcWriteFirst, kPsnA, kMtu, reth),
                     frame(op::kUcSendMiddle, kPsnA + 1, kMtu)}),
            (std::vector<UcRx>{UcRx::kAccepted, UcRx::kDropOpSequence}));
  EXPECT_EQ(b.counters().rx_abandoned, 1u);
}

TEST_F(UcFixture, Send_ZeroLengthIsOneEmptyOnlyPacket) {
  ASSERT_EQ(b.post_recv(recv_wr(1, 0)), 0);
  SendWr w = send_wr(1, 0);
  w.num_sge = 0;
  ASSERT_EQ(a.post_send(w), 0);
  const auto frames = pump();
  ASSERT_EQ(frames.size(), 1u);
  EXPECT_EQ(parse(frames[0]).bth.opcode(), op::kUcSendOnly);
  EXPECT_TRUE(parse(frames[0]).payload.empty());
  EXPECT_EQ(deliver(frames), (std::vector<UcRx>{UcRx::kCompleted}));
  EXPECT_EQ(b_rcq.wcs[0].byte_len, 0u);
}

TEST_F(UcFixture, Flush_ErrCompletesSendsAndReceives) {
  ASSERT_EQ(a.post_send(send_wr(1, 600)), 0);
  ASSERT_EQ(a.post_recv(recv_wr(2, 64)), 0);
  // One packet of the message leaves, then the QP goes to ERR.
  EXPECT_EQ(a.process_send(tx, a_scq, 1), 1u);
  QpAttrValues v;
  v.qp_state = QpState::kErr;
  ASSERT_EQ(a.modify(qp_attr::kState, v), 0);
  EXPECT_EQ(a.process_send(tx, a_scq, 10), 0u);
  EXPECT_EQ(a.flush(a_scq, a_rcq), 2u);
  ASSERT_EQ(a_scq.wcs.size(), 1u);
  const Cqe s_want = error_wc(1, kQpnA, WcStatus::kWrFlushErr);
  EXPECT_EQ(std::memcmp(&a_scq.wcs[0], &s_want, sizeof(Cqe)), 0);
  ASSERT_EQ(a_rcq.wcs.size(), 1u);
  const Cqe r_want = error_wc(2, kQpnA, WcStatus::kWrFlushErr);
  EXPECT_EQ(std::memcmp(&a_rcq.wcs[0], &r_want, sizeof(Cqe)), 0);
  EXPECT_EQ(tx.frames.size(), 1u);
}

TEST_F(UcFixture, Sqd_FinishesTheMessageInProgressOnly) {
  ASSERT_EQ(a.post_send(send_wr(1, 600)), 0);
  ASSERT_EQ(a.post_send(send_wr(2, 10)), 0);
  EXPECT_EQ(a.process_send(tx, a_scq, 1), 1u);
  QpAttrValues v;
  v.qp_state = QpState::kSqd;
  ASSERT_EQ(a.modify(qp_attr::kState, v), 0);
  EXPECT_EQ(a.process_send(tx, a_scq, 10), 2u);
  EXPECT_EQ(parse(tx.frames.back()).bth.opcode(), op::kUcSendLast);
  ASSERT_EQ(a_scq.wcs.size(), 1u);
  v.qp_state = QpState::kRts;
  ASSERT_EQ(a.modify(qp_attr::kState, v), 0);
  EXPECT_EQ(a.process_send(tx, a_scq, 10), 1u);
  EXPECT_EQ(parse(tx.frames.back()).bth.opcode(), op::kUcSendOnly);
}

TEST_F(UcFixture, PostSend_RejectsReadAtomicAndBadStates) {
  SendWr w = send_wr(1, 8);
  w.opcode = WrOpcode::kRdmaRead;
  EXPECT_EQ(a.post_send(w), EINVAL);
  w.opcode = WrOpcode::kFetchAdd;
  EXPECT_EQ(a.post_send(w), EINVAL);
  UcQp q(config(0x55, kMacA, kIpA), mrs);
  EXPECT_EQ(q.post_send(send_wr(1, 8)), EINVAL);  // RESET
  QpAttrValues v;
  v.qp_state = QpState::kRtr;
  EXPECT_EQ(q.modify(qp_attr::kState, v), EINVAL);  // RESET -> RTR
}

TEST_F(UcFixture, Send_BadLkeyFailsBeforeAnyPacket) {
  SendWr w = send_wr(1, 600);
  w.sge[0].length = 9000;  // past the end of the source MR
  ASSERT_EQ(a.post_send(w), 0);
  pump();
  EXPECT_TRUE(tx.frames.empty());
  EXPECT_EQ(a.state(), QpState::kSqe);
  ASSERT_EQ(a_scq.wcs.size(), 1u);
  EXPECT_EQ(a_scq.wcs[0].status, static_cast<std::uint32_t>(WcStatus::kLocProtErr));
}

}  // namespace
}  // namespace uroce::transport
