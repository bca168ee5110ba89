#include "datapath/transport/qp_concept.h"

#include <gtest/gtest.h>

#include <array>
#include <cerrno>
#include <memory>
#include <vector>

#include "datapath/transport/dci_qp.h"
#include "datapath/transport/dct_qp.h"
#include "datapath/transport/rc_qp.h"
#include "datapath/transport/uc_qp.h"
#include "datapath/transport/ud_qp.h"
#include "datapath/wire/parser.h"

namespace uroce::transport {
namespace {

// ---- The shape, at compile time ------------------------------------------

static_assert(Qp<RcQp>);
static_assert(Qp<UcQp>);
static_assert(Qp<UdQp>);
static_assert(Qp<DciQp>);
static_assert(Qp<DctQp>);

// Everything the shape asks for; the variants below each lose one part.
struct Shaped {
  static constexpr QpType kType = QpType::kRc;
  static constexpr QpAddressing kAddressing = QpAddressing::kConnected;
  static constexpr bool kSendCq = true;
  static constexpr bool kRecvCq = true;
  template <class Io>
  void on_packet(const wire::ParsedPacket&, TimeNs, Io&, AckTiming) {}
  template <class Io>
  void on_timer(TimeNs, Io&) {}
  template <class Io>
  PumpResult pump(TimeNs, Io&, std::uint32_t) {
    return {};
  }
  template <class S, class R>
  std::uint32_t flush(S&, R&) {
    return 0;
  }
  bool has_output() const { return false; }
  QpState state() const { return QpState::kReset; }
  std::uint32_t qpn() const { return 0; }
  std::uint32_t send_queue_depth() const { return 0; }
  std::uint32_t recv_queue_depth() const { return 0; }
  int counters() const { return 0; }
  bool has_events() const { return false; }
  template <class S>
  std::uint32_t drain_events(S&) {
    return 0;
  }
  int modify(std::uint32_t, const QpAttrValues&) { return 0; }
  int post_send(const SendWr&) { return 0; }
  int post_recv(const RecvWr&) { return 0; }
};
static_assert(Qp<Shaped>);

// RC's shape before the concept: pump_tx's count, no PumpResult.
struct CountingPump : Shaped {
  template <class Io>
  std::uint32_t pump(TimeNs, Io&, std::uint32_t) {
    return 0;
  }
};
static_assert(!Qp<CountingPump>);

// UC/UD's shape before the concept: the receive CQ alone, no `now` or io.
struct CqOnlyPacket : Shaped {
  template <class Io>
  void on_packet(const wire::ParsedPacket&, TimeNs, Io&, AckTiming) = delete;
};
static_assert(!Qp<CqOnlyPacket>);

struct NoFacts {
  template <class Io>
  void on_packet(const wire::ParsedPacket&, TimeNs, Io&, AckTiming) {}
};
static_assert(!Qp<NoFacts>);

TEST(Qp, Facts_EveryKind) {
  EXPECT_EQ(RcQp::kType, QpType::kRc);
  EXPECT_EQ(UcQp::kType, QpType::kUc);
  EXPECT_EQ(UdQp::kType, QpType::kUd);
  EXPECT_EQ(DciQp::kType, QpType::kDci);
  EXPECT_EQ(DctQp::kType, QpType::kDct);
  EXPECT_EQ(RcQp::kAddressing, QpAddressing::kConnected);
  EXPECT_EQ(UcQp::kAddressing, QpAddressing::kConnected);
  EXPECT_EQ(UdQp::kAddressing, QpAddressing::kPerWr);
  EXPECT_EQ(DciQp::kAddressing, QpAddressing::kPerWr);
  EXPECT_EQ(DctQp::kAddressing, QpAddressing::kReplies);
  // A DCI only sends, a DCT only receives (docs/dc.md).
  EXPECT_TRUE(DciQp::kSendCq);
  EXPECT_FALSE(DciQp::kRecvCq);
  EXPECT_FALSE(DctQp::kSendCq);
  EXPECT_TRUE(DctQp::kRecvCq);
  EXPECT_TRUE(RcQp::kSendCq && RcQp::kRecvCq && UcQp::kSendCq && UcQp::kRecvCq && UdQp::kSendCq &&
              UdQp::kRecvCq);
}

// ---- Sinks ---------------------------------------------------------------

struct FakeTx {
  std::array<std::uint8_t, wire::kMaxRoceFrame> buf{};
  std::uint32_t frames = 0;
  bool room = true;
  std::span<std::uint8_t> tx_alloc(std::size_t n) {
    if (!room || n > buf.size()) return {};
    return {buf.data(), n};
  }
  void tx_commit(std::size_t) { ++frames; }
};
struct FakeCq {
  std::vector<Cqe> wcs;
  std::size_t cap = 100;
  bool push(const Cqe& c) {
    if (wcs.size() >= cap) return false;
    wcs.push_back(c);
    return true;
  }
};
struct FakeTimer {
  std::uint32_t arms = 0;
  void arm(std::uint32_t, TimeNs) { ++arms; }
};

struct Sinks {
  FakeTx tx;
  FakeCq scq;
  FakeCq rcq;
  FakeTimer timer;
  auto io() { return qp_io(tx, scq, rcq, timer); }
};

// ---- Every kind, driven through the shape alone ----------------------------

constexpr PdHandle kPd = 1;
const LocalPort kLocal{wire::MacAddr{{0x02, 0, 0, 0, 0, 0x0a}}, wire::Ipv4Addr{0x0a000001}};

template <class C>
C base_config(std::uint32_t qpn) {
  C c;
  c.qpn = qpn;
  c.pd = kPd;
  c.local = kLocal;
  c.max_send_wr = 8;
  c.max_recv_wr = 8;
  return c;
}

// Builds one QP of each kind, in RESET.
struct Kinds {
  MrTable mrs{16};
  DcConnClock clock;
  DcTargetPool pool{DcTargetLimits{4, 8, kNsPerSec}, mrs, kLocal};
  RcQp rc{base_config<RcQpConfig>(0x11), mrs};
  UcQp uc{base_config<UcQpConfig>(0x12), mrs};
  UdQp ud{base_config<UdQpConfig>(0x13), mrs};
  DciQp dci{dci_config(), mrs, clock};
  DctQp dct{base_config<RcQpConfig>(0x15), 0x1234, pool};

  static DciQpConfig dci_config() {
    DciQpConfig d;
    d.rc = base_config<RcQpConfig>(0x14);
    return d;
  }
};

// The calls of one engine turn, through nothing but the shape.
template <Qp Q>
void expect_idle_in_reset(Q& q, Sinks& s) {
  auto io = s.io();
  EXPECT_EQ(q.state(), QpState::kReset) << static_cast<int>(Q::kType);
  EXPECT_FALSE(q.has_output()) << static_cast<int>(Q::kType);
  const PumpResult r = q.pump(0, io, 16);
  EXPECT_EQ(r.sent, 0u) << static_cast<int>(Q::kType);
  EXPECT_FALSE(r.more) << static_cast<int>(Q::kType);
  q.on_timer(0, io);
  EXPECT_EQ(q.flush(io.send_cq, io.recv_cq), 0u) << static_cast<int>(Q::kType);
  EXPECT_EQ(q.send_queue_depth(), 0u) << static_cast<int>(Q::kType);
  EXPECT_EQ(q.recv_queue_depth(), 0u) << static_cast<int>(Q::kType);
  EXPECT_EQ(q.post_send(SendWr{}), EINVAL) << static_cast<int>(Q::kType);
  EXPECT_EQ(s.tx.frames, 0u);
  EXPECT_TRUE(s.scq.wcs.empty());
  EXPECT_TRUE(s.rcq.wcs.empty());
}

TEST(Qp, Pump_EveryKindInResetHasNothingToDo) {
  Kinds k;
  Sinks s;
  expect_idle_in_reset(k.rc, s);
  expect_idle_in_reset(k.uc, s);
  expect_idle_in_reset(k.ud, s);
  expect_idle_in_reset(k.dci, s);
  expect_idle_in_reset(k.dct, s);
}

// ---- The unreliable pump (unreliable_qp_core.h), through UD ---------------

struct UdPump : ::testing::Test {
  MrTable mrs{16};
  std::vector<std::uint8_t> src = std::vector<std::uint8_t>(4096, 0x5a);
  std::uint32_t key = 0;
  UdQp q{ud_config(), mrs};
  Sinks s;

  static UdQpConfig ud_config() {
    UdQpConfig c = base_config<UdQpConfig>(0x13);
    c.port_mtu = wire::PathMtu::k1024;
    return c;
  }

  void SetUp() override {
    int err = 0;
    key = mrs.reg({kPd, 0x10000, src.size(), access::kLocalWrite, src.data()}, &err);
    ASSERT_NE(key, 0u);
    QpAttrValues v;
    v.qp_state = QpState::kInit;
    v.qkey = 0x11111111;
    ASSERT_EQ(q.modify(qp_attr::kState | qp_attr::kPkeyIndex | qp_attr::kPort | qp_attr::kQkey, v),
              0);
    v.qp_state = QpState::kRtr;
    ASSERT_EQ(q.modify(qp_attr::kState, v), 0);
    v.qp_state = QpState::kRts;
    ASSERT_EQ(q.modify(qp_attr::kState | qp_attr::kSqPsn, v), 0);
  }

  SendWr send(std::uint64_t id) const {
    SendWr w;
    w.wr_id = id;
    w.opcode = WrOpcode::kSend;
    w.flags = send_flag::kSignaled;
    w.num_sge = 1;
    w.sge[0] = {0x10000, 64, key};
    w.ud.dmac = wire::MacAddr{{0x02, 0, 0, 0, 0, 0x0b}};
    w.ud.dip = wire::Ipv4Addr{0x0a000002};
    w.ud.remote_qpn = 0x22;
    w.ud.remote_qkey = 0x11111111;
    return w;
  }

  void to_err() {
    QpAttrValues v;
    v.qp_state = QpState::kErr;
    ASSERT_EQ(q.modify(qp_attr::kState, v), 0);
  }
};

TEST_F(UdPump, Pump_BudgetUsedWantsAnotherTurnUntilTheQueueIsEmpty) {
  for (std::uint64_t i = 1; i <= 3; ++i) ASSERT_EQ(q.post_send(send(i)), 0);
  EXPECT_TRUE(q.has_output());
  auto io = s.io();
  PumpResult r = q.pump(0, io, 2);
  EXPECT_EQ(r.sent, 2u);
  EXPECT_TRUE(r.more);
  r = q.pump(0, io, 2);
  EXPECT_EQ(r.sent, 1u);
  EXPECT_FALSE(r.more);
  EXPECT_FALSE(q.has_output());
  EXPECT_EQ(s.tx.frames, 3u);
  EXPECT_EQ(s.scq.wcs.size(), 3u);
}

TEST_F(UdPump, Pump_NoTxBufferWantsAnotherTurn) {
  ASSERT_EQ(q.post_send(send(1)), 0);
  s.tx.room = false;
  auto io = s.io();
  const PumpResult r = q.pump(0, io, 4);
  EXPECT_EQ(r.sent, 0u);
  EXPECT_TRUE(r.more);
  EXPECT_EQ(q.counters().tx_no_buffer, 1u);
  EXPECT_TRUE(q.has_output());
}

TEST_F(UdPump, Pump_ErrFlushesBothQueues) {
  ASSERT_EQ(q.post_send(send(1)), 0);
  RecvWr rw;
  rw.wr_id = 9;
  ASSERT_EQ(q.post_recv(rw), 0);
  to_err();
  EXPECT_TRUE(q.has_output());
  auto io = s.io();
  const PumpResult r = q.pump(0, io, 4);
  EXPECT_EQ(r.sent, 0u);
  EXPECT_FALSE(r.more);
  ASSERT_EQ(s.scq.wcs.size(), 1u);
  EXPECT_EQ(s.scq.wcs[0].status, static_cast<std::uint32_t>(WcStatus::kWrFlushErr));
  ASSERT_EQ(s.rcq.wcs.size(), 1u);
  EXPECT_EQ(s.rcq.wcs[0].wr_id, 9u);
  EXPECT_EQ(q.send_queue_depth(), 0u);
  EXPECT_EQ(q.recv_queue_depth(), 0u);
}

TEST_F(UdPump, Pump_FlushStoppedAtAFullCqWantsAnotherTurn) {
  ASSERT_EQ(q.post_send(send(1)), 0);
  to_err();
  s.scq.cap = 0;
  auto io = s.io();
  PumpResult r = q.pump(0, io, 4);
  EXPECT_TRUE(r.more);
  EXPECT_EQ(q.counters().cq_overflow, 1u);
  // Room again: the parked completion goes first, and the turn after finds
  // nothing more to flush.
  s.scq.cap = 100;
  r = q.pump(0, io, 4);
  EXPECT_FALSE(r.more);
  EXPECT_FALSE(s.scq.wcs.empty());
  EXPECT_EQ(q.send_queue_depth(), 0u);
}

}  // namespace
}  // namespace uroce::transport
