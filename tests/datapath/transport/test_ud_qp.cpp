#include "datapath/transport/ud_qp.h"

#include <gtest/gtest.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <numeric>
#include <vector>

#include "datapath/wire/builder.h"
#include "datapath/wire/parser.h"
#include "tests/datapath/transport/recv_refill_support.h"

namespace uroce::transport {
namespace {

using wire::ParsedPacket;
using wire::ParseError;

// A TX sink that keeps a copy of every committed frame; `room` = false
// models a TX ring with no free buffer.
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
  std::size_t cap = 1000;
  bool push(const Cqe& c) {
    if (wcs.size() >= cap) return false;
    wcs.push_back(c);
    return true;
  }
};

static_assert(TxSink<FakeTx>);
static_assert(CqSink<FakeCq>);

constexpr std::uint32_t kQpnA = 0x000011;
constexpr std::uint32_t kQpnB = 0x000022;
constexpr std::uint32_t kQkey = 0x11111111;  // ibv_ud_pingpong's
constexpr std::uint32_t kSqPsn = 0x000100;
constexpr PdHandle kPd = 1;

const wire::MacAddr kMacA{{0x02, 0, 0, 0, 0, 0x0a}};
const wire::MacAddr kMacB{{0x02, 0, 0, 0, 0, 0x0b}};
const wire::Ipv4Addr kIpA{0x0a000001};
const wire::Ipv4Addr kIpB{0x0a000002};

ParsedPacket parse(const std::vector<std::uint8_t>& f) {
  ParsedPacket p;
  EXPECT_EQ(wire::parse_roce(f, p), ParseError::kOk);
  return p;
}

struct UdFixture : ::testing::Test {
  MrTable mrs{16};
  std::vector<std::uint8_t> src = std::vector<std::uint8_t>(8192);
  std::vector<std::uint8_t> dst = std::vector<std::uint8_t>(8192, 0xee);
  std::uint32_t src_key = 0, dst_key = 0;
  static constexpr std::uint64_t kSrcVa = 0x10000;
  static constexpr std::uint64_t kDstVa = 0x20000;
  FakeTx tx;
  FakeCq a_scq, a_rcq, b_scq, b_rcq;
  UdQp a{config(kQpnA, kMacA, kIpA), mrs};
  // B's owner holds receives back until B asks (recv_refill.h); it posts
  // nothing unless a test gives it WRs.
  test::HeldRecvs<UdQp> held;
  UdQp b{with_refill(config(kQpnB, kMacB, kIpB), held), mrs};

  static UdQpConfig with_refill(UdQpConfig c, test::HeldRecvs<UdQp>& h) {
    c.recv_refill = h.refill(5);
    return c;
  }

  static UdQpConfig config(std::uint32_t qpn, wire::MacAddr mac, wire::Ipv4Addr ip) {
    UdQpConfig c;
    c.qpn = qpn;
    c.pd = kPd;
    c.local = {mac, ip};
    c.port_mtu = wire::PathMtu::k1024;
    c.max_send_wr = 8;
    c.max_recv_wr = 8;
    return c;
  }

  void SetUp() override {
    held.q = &b;
    std::iota(src.begin(), src.end(), 0);
    int err = 0;
    src_key = mrs.reg({kPd, kSrcVa, src.size(), access::kLocalWrite, src.data()}, &err);
    dst_key = mrs.reg({kPd, kDstVa, dst.size(), access::kLocalWrite, dst.data()}, &err);
    ASSERT_NE(src_key, 0u);
    ASSERT_NE(dst_key, 0u);
    to_rts(a);
    to_rts(b);
  }

  static void to_rts(UdQp& q) {
    QpAttrValues v;
    v.qp_state = QpState::kInit;
    v.qkey = kQkey;
    ASSERT_EQ(q.modify(qp_attr::kState | qp_attr::kPkeyIndex | qp_attr::kPort | qp_attr::kQkey, v),
              0);
    v.qp_state = QpState::kRtr;
    ASSERT_EQ(q.modify(qp_attr::kState, v), 0);
    v.qp_state = QpState::kRts;
    v.sq_psn = kSqPsn;
    ASSERT_EQ(q.modify(qp_attr::kState | qp_attr::kSqPsn, v), 0);
  }

  SendWr send_wr(std::uint64_t wr_id, std::uint32_t len, std::uint32_t remote_qkey = kQkey) const {
    SendWr w;
    w.wr_id = wr_id;
    w.opcode = WrOpcode::kSend;
    w.flags = send_flag::kSignaled;
    w.num_sge = 1;
    w.sge[0] = {kSrcVa, len, src_key};
    w.ud.dmac = kMacB;
    w.ud.dip = kIpB;
    w.ud.remote_qpn = kQpnB;
    w.ud.remote_qkey = remote_qkey;
    w.ud.dscp = 26;
    w.ud.ttl = 17;
    return w;
  }

  RecvWr recv_wr(std::uint64_t wr_id, std::uint32_t len, std::uint64_t offset = 0) const {
    RecvWr r;
    r.wr_id = wr_id;
    r.num_sge = 1;
    r.sge[0] = {kDstVa + offset, len, dst_key};
    return r;
  }

  // Sends everything A has queued and returns the frames.
  const std::vector<std::vector<std::uint8_t>>& pump() {
    a.process_send(tx, a_scq, 100);
    return tx.frames;
  }
};

TEST_F(UdFixture, Send_EmitsUdSendOnlyWithDethAndWrDestination) {
  ASSERT_EQ(a.post_send(send_wr(7, 100)), 0);
  const auto& frames = pump();
  ASSERT_EQ(frames.size(), 1u);
  const ParsedPacket p = parse(frames[0]);
  EXPECT_EQ(p.eth.dst(), kMacB);
  EXPECT_EQ(p.eth.src(), kMacA);
  EXPECT_EQ(p.ip.src(), kIpA);
  EXPECT_EQ(p.ip.dst(), kIpB);
  EXPECT_EQ(p.ip.dscp(), 26);
  EXPECT_EQ(p.ip.ttl(), 17);
  EXPECT_EQ(p.udp.src_port(), rxe_udp_src_port(kQpnA));
  EXPECT_EQ(p.bth.opcode(), wire::op::kUdSendOnly);
  EXPECT_EQ(p.bth.dest_qp(), kQpnB);
  EXPECT_EQ(p.bth.psn(), kSqPsn);
  EXPECT_EQ(p.bth.pkey(), wire::kDefaultPKey);
  EXPECT_EQ(p.deth.qkey(), kQkey);
  EXPECT_EQ(p.deth.src_qp(), kQpnA);
  ASSERT_EQ(p.payload.size(), 100u);
  EXPECT_TRUE(std::equal(p.payload.begin(), p.payload.end(), src.begin()));
  EXPECT_EQ(a.next_psn(), Psn(kSqPsn + 1));

  ASSERT_EQ(a_scq.wcs.size(), 1u);
  const Cqe& wc = a_scq.wcs[0];
  EXPECT_EQ(wc.wr_id, 7u);
  EXPECT_EQ(wc.status, static_cast<std::uint32_t>(WcStatus::kSuccess));
  EXPECT_EQ(wc.opcode, static_cast<std::uint32_t>(WcOpcode::kSend));
  EXPECT_EQ(wc.byte_len, 100u);
  EXPECT_EQ(wc.qp_num, kQpnA);
  EXPECT_EQ(a.counters().tx_packets, 1u);
}

TEST_F(UdFixture, Send_UnsignaledCompletesNothing) {
  SendWr w = send_wr(1, 10);
  w.flags = 0;
  ASSERT_EQ(a.post_send(w), 0);
  EXPECT_EQ(pump().size(), 1u);
  EXPECT_TRUE(a_scq.wcs.empty());
}

TEST_F(UdFixture, Receive_PlacesGrhThenPayloadAndCompletes) {
  ASSERT_EQ(b.post_recv(recv_wr(42, 1024)), 0);
  ASSERT_EQ(a.post_send(send_wr(7, 100)), 0);
  const auto& f = pump()[0];
  EXPECT_EQ(b.on_packet(parse(f), b_rcq), UdRx::kDelivered);

  // GRH area: 20 zero bytes, then the IPv4 header exactly as received.
  for (int i = 0; i < 20; ++i) EXPECT_EQ(dst[i], 0) << i;
  EXPECT_TRUE(std::equal(dst.begin() + 20, dst.begin() + 40, f.begin() + wire::EthHdr::kSize));
  EXPECT_EQ(dst[20], 0x45);
  EXPECT_TRUE(std::equal(dst.begin() + 40, dst.begin() + 140, src.begin()));
  EXPECT_EQ(dst[140], 0xee);

  ASSERT_EQ(b_rcq.wcs.size(), 1u);
  Cqe want{};
  want.wr_id = 42;
  want.status = 0;
  want.opcode = static_cast<std::uint32_t>(WcOpcode::kRecv);
  want.byte_len = 140;
  want.qp_num = kQpnB;
  want.src_qp = kQpnA;
  want.wc_flags = wc_flag::kGrh;
  want.sl = kWcSlRoceIpv4;  // the L3 type: where the GRH area holds the IPv4 header
  want.port_num = 1;
  EXPECT_EQ(std::memcmp(&b_rcq.wcs[0], &want, sizeof(Cqe)), 0);
  EXPECT_EQ(b.counters().rx_count(UdRx::kDelivered), 1u);
}

TEST_F(UdFixture, SendImm_CarriesImmediateToTheReceiveCompletion) {
  ASSERT_EQ(b.post_recv(recv_wr(1, 1024)), 0);
  SendWr w = send_wr(2, 8);
  w.opcode = WrOpcode::kSendImm;
  const std::uint8_t imm_bytes[4] = {0xde, 0xad, 0xbe, 0xef};
  std::memcpy(&w.imm_or_inv, imm_bytes, 4);
  ASSERT_EQ(a.post_send(w), 0);
  const ParsedPacket p = parse(pump()[0]);
  EXPECT_EQ(p.bth.opcode(), wire::op::kUdSendOnlyImm);
  EXPECT_EQ(p.immdt.imm(), 0xdeadbeefu);
  EXPECT_EQ(b.on_packet(p, b_rcq), UdRx::kDelivered);
  ASSERT_EQ(b_rcq.wcs.size(), 1u);
  EXPECT_EQ(b_rcq.wcs[0].wc_flags, wc_flag::kGrh | wc_flag::kWithImm);
  EXPECT_EQ(std::memcmp(&b_rcq.wcs[0].ex.imm_data, imm_bytes, 4), 0);
  EXPECT_EQ(b_rcq.wcs[0].byte_len, 48u);
}

TEST_F(UdFixture, Solicited_SeReachesTheReceiveCompletion) {
  ASSERT_EQ(b.post_recv(recv_wr(1, 1024)), 0);
  ASSERT_EQ(b.post_recv(recv_wr(2, 1024)), 0);
  SendWr w = send_wr(1, 8);
  w.flags |= send_flag::kSolicited;
  ASSERT_EQ(a.post_send(w), 0);
  ASSERT_EQ(a.post_send(send_wr(2, 8)), 0);
  const auto frames = pump();
  ASSERT_EQ(frames.size(), 2u);
  const ParsedPacket p0 = parse(frames[0]);
  const ParsedPacket p1 = parse(frames[1]);
  EXPECT_TRUE(p0.bth.se());
  EXPECT_FALSE(p1.bth.se());
  EXPECT_EQ(b.on_packet(p0, b_rcq), UdRx::kDelivered);
  EXPECT_EQ(b.on_packet(p1, b_rcq), UdRx::kDelivered);
  ASSERT_EQ(b_rcq.wcs.size(), 2u);
  EXPECT_TRUE(is_solicited(b_rcq.wcs[0]));
  EXPECT_FALSE(is_solicited(b_rcq.wcs[1]));
}

TEST_F(UdFixture, Receive_QkeyMismatchDroppedSilentlyAndCounted) {
  ASSERT_EQ(b.post_recv(recv_wr(1, 1024)), 0);
  ASSERT_EQ(a.post_send(send_wr(1, 16, 0x22222222)), 0);
  const ParsedPacket p = parse(pump()[0]);
  EXPECT_EQ(p.deth.qkey(), 0x22222222u);
  EXPECT_EQ(b.on_packet(p, b_rcq), UdRx::kDropQkey);
  EXPECT_TRUE(b_rcq.wcs.empty());
  EXPECT_EQ(b.counters().rx_count(UdRx::kDropQkey), 1u);
  EXPECT_EQ(dst[0], 0xee);
  // The receive WR is still there for the next good datagram.
  ASSERT_EQ(a.post_send(send_wr(2, 16)), 0);
  EXPECT_EQ(b.on_packet(parse(pump()[1]), b_rcq), UdRx::kDelivered);
  ASSERT_EQ(b_rcq.wcs.size(), 1u);
  EXPECT_EQ(b_rcq.wcs[0].wr_id, 1u);
}

TEST_F(UdFixture, Send_ControlledQkeyInWrSendsTheQpsQkey) {
  // High bit set in the WR: the QP's own Q_Key goes on the wire (C10-15).
  ASSERT_EQ(a.post_send(send_wr(1, 4, 0x80000005)), 0);
  // High bit clear: the WR's Q_Key as given.
  ASSERT_EQ(a.post_send(send_wr(2, 4, 0x7fffffff)), 0);
  const auto& frames = pump();
  ASSERT_EQ(frames.size(), 2u);
  EXPECT_EQ(parse(frames[0]).deth.qkey(), kQkey);
  EXPECT_EQ(parse(frames[1]).deth.qkey(), 0x7fffffffu);
}

TEST_F(UdFixture, Receive_NoRecvWrDroppedAndCounted) {
  ASSERT_EQ(a.post_send(send_wr(1, 16)), 0);
  EXPECT_EQ(b.on_packet(parse(pump()[0]), b_rcq), UdRx::kDropNoRecvWqe);
  EXPECT_TRUE(b_rcq.wcs.empty());
  EXPECT_EQ(b.counters().rx_count(UdRx::kDropNoRecvWqe), 1u);
}

TEST_F(UdFixture, Receive_EmptyRqAsksTheRefillBeforeDropping) {
  held.wrs = {recv_wr(42, 1024)};
  ASSERT_EQ(a.post_send(send_wr(7, 100)), 0);
  EXPECT_EQ(b.on_packet(parse(pump()[0]), b_rcq), UdRx::kDelivered);
  EXPECT_EQ(held.asks, 1);
  EXPECT_EQ(held.last_tag, 5u);
  ASSERT_EQ(b_rcq.wcs.size(), 1u);
  EXPECT_EQ(b_rcq.wcs[0].wr_id, 42u);
  EXPECT_EQ(b_rcq.wcs[0].byte_len, 140u);
  EXPECT_TRUE(std::equal(dst.begin() + 40, dst.begin() + 140, src.begin()));
  EXPECT_EQ(b.counters().rx_count(UdRx::kDropNoRecvWqe), 0u);
}

TEST_F(UdFixture, Receive_RefillWithNothingDropsAndCounts) {
  ASSERT_EQ(a.post_send(send_wr(1, 16)), 0);
  EXPECT_EQ(b.on_packet(parse(pump()[0]), b_rcq), UdRx::kDropNoRecvWqe);
  EXPECT_EQ(held.asks, 1);
  EXPECT_EQ(b.counters().rx_count(UdRx::kDropNoRecvWqe), 1u);
}

TEST_F(UdFixture, Receive_PostedRecvAsksNoRefill) {
  ASSERT_EQ(b.post_recv(recv_wr(42, 1024)), 0);
  ASSERT_EQ(a.post_send(send_wr(7, 100)), 0);
  EXPECT_EQ(b.on_packet(parse(pump()[0]), b_rcq), UdRx::kDelivered);
  EXPECT_EQ(held.asks, 0);
}

TEST_F(UdFixture, Send_MessageOverPortMtuSendsNothingAndSucceeds) {
  ASSERT_EQ(a.post_send(send_wr(9, 1025)), 0);
  ASSERT_EQ(a.post_send(send_wr(10, 1024)), 0);
  const auto& frames = pump();
  // C10-93.1.1, as rxe: no packet, no error; the PSN is consumed.
  ASSERT_EQ(frames.size(), 1u);
  EXPECT_EQ(parse(frames[0]).payload.size(), 1024u);
  EXPECT_EQ(parse(frames[0]).bth.psn(), kSqPsn + 1);
  ASSERT_EQ(a_scq.wcs.size(), 2u);
  EXPECT_EQ(a_scq.wcs[0].wr_id, 9u);
  EXPECT_EQ(a_scq.wcs[0].status, static_cast<std::uint32_t>(WcStatus::kSuccess));
  EXPECT_EQ(a_scq.wcs[1].wr_id, 10u);
  EXPECT_EQ(a.counters().tx_too_long, 1u);
  EXPECT_EQ(a.counters().tx_packets, 1u);
}

TEST_F(UdFixture, Receive_BufferTooSmallCompletesLocLenErr) {
  // 40 bytes of GRH + 99 < 40 + 100.
  ASSERT_EQ(b.post_recv(recv_wr(5, 139)), 0);
  ASSERT_EQ(b.post_recv(recv_wr(6, 140)), 0);
  ASSERT_EQ(a.post_send(send_wr(1, 100)), 0);
  ASSERT_EQ(a.post_send(send_wr(2, 100)), 0);
  const auto& frames = pump();
  EXPECT_EQ(b.on_packet(parse(frames[0]), b_rcq), UdRx::kLenErr);
  EXPECT_EQ(dst[0], 0xee);  // nothing written
  ASSERT_EQ(b_rcq.wcs.size(), 1u);
  const Cqe want = error_wc(5, kQpnB, WcStatus::kLocLenErr);
  EXPECT_EQ(std::memcmp(&b_rcq.wcs[0], &want, sizeof(Cqe)), 0);
  // The QP keeps receiving; an exactly-fitting buffer is fine.
  EXPECT_EQ(b.state(), QpState::kRts);
  EXPECT_EQ(b.on_packet(parse(frames[1]), b_rcq), UdRx::kDelivered);
  EXPECT_EQ(b_rcq.wcs[1].byte_len, 140u);
}

TEST_F(UdFixture, Flush_ErrCompletesEveryWrWithFlushErr) {
  ASSERT_EQ(a.post_send(send_wr(1, 8)), 0);
  ASSERT_EQ(a.post_send(send_wr(2, 8)), 0);
  ASSERT_EQ(a.post_recv(recv_wr(3, 64)), 0);
  ASSERT_EQ(a.post_recv(recv_wr(4, 64)), 0);
  QpAttrValues v;
  v.qp_state = QpState::kErr;
  ASSERT_EQ(a.modify(qp_attr::kState, v), 0);
  // Nothing is sent in ERR; a WR posted now is flushed as well.
  EXPECT_EQ(a.process_send(tx, a_scq, 10), 0u);
  ASSERT_EQ(a.post_send(send_wr(5, 8)), 0);
  EXPECT_EQ(a.flush(a_scq, a_rcq), 5u);
  EXPECT_TRUE(tx.frames.empty());
  ASSERT_EQ(a_scq.wcs.size(), 3u);
  ASSERT_EQ(a_rcq.wcs.size(), 2u);
  const std::uint64_t send_ids[] = {1, 2, 5};
  for (int i = 0; i < 3; ++i) {
    const Cqe want = error_wc(send_ids[i], kQpnA, WcStatus::kWrFlushErr);
    EXPECT_EQ(std::memcmp(&a_scq.wcs[i], &want, sizeof(Cqe)), 0) << i;
  }
  EXPECT_EQ(a_rcq.wcs[0].wr_id, 3u);
  EXPECT_EQ(a_rcq.wcs[1].wr_id, 4u);
  EXPECT_EQ(a_rcq.wcs[1].status, static_cast<std::uint32_t>(WcStatus::kWrFlushErr));
  EXPECT_EQ(a.flush(a_scq, a_rcq), 0u);
}

TEST_F(UdFixture, Receive_ErrStateDropsPackets) {
  ASSERT_EQ(b.post_recv(recv_wr(1, 1024)), 0);
  QpAttrValues v;
  v.qp_state = QpState::kErr;
  ASSERT_EQ(b.modify(qp_attr::kState, v), 0);
  ASSERT_EQ(a.post_send(send_wr(1, 8)), 0);
  EXPECT_EQ(b.on_packet(parse(pump()[0]), b_rcq), UdRx::kDropState);
}

TEST_F(UdFixture, Receive_WrongQpnAndPkeyDropped) {
  ASSERT_EQ(b.post_recv(recv_wr(1, 1024)), 0);
  wire::PacketSpec s;
  s.opcode = wire::op::kUdSendOnly;
  s.dest_qp = kQpnB + 1;
  s.deth = wire::DethHdr::make(kQkey, kQpnA);
  std::vector<std::uint8_t> f(256);
  f.resize(static_cast<std::size_t>(wire::build_roce(s, f)));
  EXPECT_EQ(b.on_packet(parse(f), b_rcq), UdRx::kDropQpn);

  s.dest_qp = kQpnB;
  s.pkey = 0x7fff;  // limited member of our partition: matches our full 0xFFFF
  f.assign(256, 0);
  f.resize(static_cast<std::size_t>(wire::build_roce(s, f)));
  EXPECT_EQ(b.on_packet(parse(f), b_rcq), UdRx::kDelivered);

  s.pkey = 0x8001;  // another partition
  f.assign(256, 0);
  f.resize(static_cast<std::size_t>(wire::build_roce(s, f)));
  EXPECT_EQ(b.on_packet(parse(f), b_rcq), UdRx::kDropPkey);

  s.opcode = wire::op::kUcSendOnly;
  s.deth.reset();
  f.assign(256, 0);
  f.resize(static_cast<std::size_t>(wire::build_roce(s, f)));
  EXPECT_EQ(b.on_packet(parse(f), b_rcq), UdRx::kDropOpcode);
  EXPECT_EQ(b.counters().rx_count(UdRx::kDropQpn), 1u);
  EXPECT_EQ(b.counters().rx_count(UdRx::kDropPkey), 1u);
  EXPECT_EQ(b.counters().rx_count(UdRx::kDropOpcode), 1u);
}

TEST_F(UdFixture, Modify_IllegalTransitionsAndValuesAreEinval) {
  UdQp q(config(0x33, kMacA, kIpA), mrs);
  QpAttrValues v;
  v.qp_state = QpState::kRtr;
  EXPECT_EQ(q.modify(qp_attr::kState, v), EINVAL);  // RESET -> RTR
  v.qp_state = QpState::kInit;
  EXPECT_EQ(q.modify(qp_attr::kState | qp_attr::kPkeyIndex | qp_attr::kPort, v),
            EINVAL);  // no Q_Key
  v.pkey_index = 1;
  EXPECT_EQ(q.modify(qp_attr::kState | qp_attr::kPkeyIndex | qp_attr::kPort | qp_attr::kQkey, v),
            EINVAL);  // past the P_Key table
  EXPECT_EQ(q.state(), QpState::kReset);
  EXPECT_EQ(q.post_recv(recv_wr(1, 8)), EINVAL);  // RESET
  v.pkey_index = 0;
  ASSERT_EQ(q.modify(qp_attr::kState | qp_attr::kPkeyIndex | qp_attr::kPort | qp_attr::kQkey, v),
            0);
  EXPECT_EQ(q.post_send(send_wr(1, 8)), EINVAL);  // INIT
  EXPECT_EQ(q.post_recv(recv_wr(1, 8)), 0);
}

TEST_F(UdFixture, PostSend_RejectsNonSendOpcodesAndFullQueue) {
  SendWr w = send_wr(1, 8);
  w.opcode = WrOpcode::kRdmaWrite;
  EXPECT_EQ(a.post_send(w), EINVAL);
  w = send_wr(1, 8);
  w.num_sge = kMaxSge + 1;
  EXPECT_EQ(a.post_send(w), EINVAL);
  for (int i = 0; i < 8; ++i) ASSERT_EQ(a.post_send(send_wr(i, 8)), 0);
  EXPECT_EQ(a.post_send(send_wr(9, 8)), ENOMEM);
}

TEST_F(UdFixture, Send_BadLkeyCompletesLocProtErrAndStopsSendQueue) {
  SendWr bad = send_wr(1, 8);
  bad.sge[0].lkey = 0xdead00;
  bad.flags = 0;  // errors complete even when unsignalled
  ASSERT_EQ(a.post_send(bad), 0);
  ASSERT_EQ(a.post_send(send_wr(2, 8)), 0);
  pump();
  EXPECT_TRUE(tx.frames.empty());
  EXPECT_EQ(a.state(), QpState::kSqe);
  ASSERT_EQ(a_scq.wcs.size(), 1u);
  const Cqe want = error_wc(1, kQpnA, WcStatus::kLocProtErr);
  EXPECT_EQ(std::memcmp(&a_scq.wcs[0], &want, sizeof(Cqe)), 0);
  EXPECT_EQ(a.flush(a_scq, a_rcq), 1u);
  EXPECT_EQ(a_scq.wcs[1].status, static_cast<std::uint32_t>(WcStatus::kWrFlushErr));
  // SQE -> RTS resumes sending.
  QpAttrValues v;
  v.qp_state = QpState::kRts;
  ASSERT_EQ(a.modify(qp_attr::kState, v), 0);
  ASSERT_EQ(a.post_send(send_wr(3, 8)), 0);
  EXPECT_EQ(pump().size(), 1u);
}

TEST_F(UdFixture, Send_NoTxRoomKeepsTheWrQueued) {
  ASSERT_EQ(a.post_send(send_wr(1, 8)), 0);
  tx.room = false;
  EXPECT_EQ(a.process_send(tx, a_scq, 10), 0u);
  EXPECT_EQ(a.counters().tx_no_buffer, 1u);
  tx.room = true;
  EXPECT_EQ(a.process_send(tx, a_scq, 10), 1u);
  EXPECT_EQ(parse(tx.frames[0]).bth.psn(), kSqPsn);
}

TEST_F(UdFixture, Receive_CqFullIsOverflowAndMovesQpToErr) {
  b_rcq.cap = 0;
  ASSERT_EQ(b.post_recv(recv_wr(1, 1024)), 0);
  ASSERT_EQ(a.post_send(send_wr(1, 8)), 0);
  EXPECT_EQ(b.on_packet(parse(pump()[0]), b_rcq), UdRx::kCqOverflow);
  EXPECT_EQ(b.counters().cq_overflow, 1u);
  EXPECT_EQ(b.state(), QpState::kErr);
}

TEST_F(UdFixture, Send_InlineDataNeedsNoMr) {
  SendWr w = send_wr(1, 0);
  w.flags = send_flag::kInline | send_flag::kSignaled;
  w.num_sge = 0;
  w.inline_len = 5;
  std::memcpy(w.inline_data.data(), "hello", 5);
  ASSERT_EQ(a.post_send(w), 0);
  const ParsedPacket p = parse(pump()[0]);
  ASSERT_EQ(p.payload.size(), 5u);
  EXPECT_EQ(std::memcmp(p.payload.data(), "hello", 5), 0);
  w.inline_len = kMaxInline + 1;
  EXPECT_EQ(a.post_send(w), EINVAL);
}

}  // namespace
}  // namespace uroce::transport
