#include "datapath/transport/unreliable_qp_core.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <cstdint>
#include <vector>

#include "datapath/transport/uc_qp.h"
#include "datapath/transport/ud_qp.h"

namespace uroce::transport {
namespace {

struct FakeCq {
  std::vector<Cqe> wcs;
  std::size_t cap = 1000;
  bool push(const Cqe& c) {
    if (wcs.size() >= cap) return false;
    wcs.push_back(c);
    return true;
  }
};
static_assert(CqSink<FakeCq>);

constexpr std::uint32_t kQpn = 0x000033;

using UdCore = UnreliableQpCore<UdQpConfig, UdCounters>;
using UcCore = UnreliableQpCore<UcQpConfig, UcCounters>;

UdQpConfig ud_config() {
  UdQpConfig c;
  c.qpn = kQpn;
  c.max_send_wr = 4;
  c.max_recv_wr = 4;
  return c;
}

SendWr send_wr(std::uint64_t id) {
  SendWr w;
  w.wr_id = id;
  w.opcode = WrOpcode::kSend;
  return w;
}

RecvWr recv_wr(std::uint64_t id) {
  RecvWr w;
  w.wr_id = id;
  return w;
}

TEST(UnreliableQpCore_Construct, ClampsSgeAndInlineLimits) {
  UdQpConfig c = ud_config();
  c.max_send_sge = kMaxSge + 5;
  c.max_recv_sge = kMaxSge + 1;
  c.max_inline = kMaxInline + 100;
  MrTable mrs{4};
  const UdCore core(c, mrs);
  EXPECT_EQ(core.cfg.max_send_sge, kMaxSge);
  EXPECT_EQ(core.cfg.max_recv_sge, kMaxSge);
  EXPECT_EQ(core.cfg.max_inline, kMaxInline);
  EXPECT_EQ(core.sq.capacity(), 4u);
  EXPECT_EQ(core.rq.capacity(), 4u);
}

TEST(UnreliableQpCore_CheckPostSend, StateAndLimitsGiveEinval) {
  UdQpConfig c = ud_config();
  c.max_send_sge = 2;
  c.max_inline = 8;
  MrTable mrs{4};
  UdCore core(c, mrs);
  SendWr w = send_wr(1);
  for (QpState s : {QpState::kReset, QpState::kInit, QpState::kRtr}) {
    core.state = s;
    EXPECT_EQ(core.check_post_send(w), EINVAL);
  }
  core.state = QpState::kRts;
  EXPECT_EQ(core.check_post_send(w), 0);
  w.num_sge = 3;
  EXPECT_EQ(core.check_post_send(w), EINVAL);
  w.num_sge = 0;
  w.flags = send_flag::kInline;
  w.inline_len = 9;
  EXPECT_EQ(core.check_post_send(w), EINVAL);
  w.inline_len = 8;
  EXPECT_EQ(core.check_post_send(w), 0);
}

TEST(UnreliableQpCore_PostRecv, SrqAttachedGivesEinval) {
  UdQpConfig c = ud_config();
  Srq srq(SrqConfig{});
  c.srq = &srq;
  MrTable mrs{4};
  UdCore core(c, mrs);
  core.state = QpState::kRtr;
  EXPECT_EQ(core.post_recv(recv_wr(1)), EINVAL);
  EXPECT_TRUE(core.rq.empty());
}

TEST(UnreliableQpCore_Reset, ClearsQueuesPkeyIndexAndPsn) {
  MrTable mrs{4};
  UdCore core(ud_config(), mrs);
  QpAttrValues a;
  a.pkey_index = 0;
  a.sq_psn = 0x1234;
  core.apply_common_attrs(qp_attr::kSqPsn, a);
  EXPECT_EQ(core.psn, Psn(0x1234));
  core.state = QpState::kRts;
  ASSERT_EQ(core.enqueue_send(send_wr(1)), 0);
  ASSERT_EQ(core.post_recv(recv_wr(2)), 0);
  core.reset();
  EXPECT_TRUE(core.sq.empty());
  EXPECT_TRUE(core.rq.empty());
  EXPECT_EQ(core.psn, Psn(0));
  EXPECT_EQ(core.pkey_index, 0);
}

TEST(UnreliableQpCore_Flush, SqeFlushesOnlySendQueueAndRunsCallback) {
  MrTable mrs{4};
  UcQpConfig c;
  c.qpn = kQpn;
  UcCore core(c, mrs);
  core.state = QpState::kRts;
  ASSERT_EQ(core.enqueue_send(send_wr(1)), 0);
  ASSERT_EQ(core.enqueue_send(send_wr(2)), 0);
  ASSERT_EQ(core.post_recv(recv_wr(3)), 0);
  core.state = QpState::kSqe;
  FakeCq scq;
  FakeCq rcq;
  int send_pops = 0;
  int recv_pops = 0;
  EXPECT_EQ(core.flush(
                scq, rcq, [&] { ++send_pops; }, [&] { ++recv_pops; }),
            2u);
  ASSERT_EQ(scq.wcs.size(), 2u);
  EXPECT_EQ(scq.wcs[0].wr_id, 1u);
  EXPECT_EQ(scq.wcs[0].status, static_cast<std::uint32_t>(WcStatus::kWrFlushErr));
  EXPECT_EQ(send_pops, 2);
  EXPECT_EQ(recv_pops, 0);
  EXPECT_TRUE(rcq.wcs.empty());
  EXPECT_EQ(core.rq.size(), 1u);
}

TEST(UnreliableQpCore_Flush, FullCqStopsAndNextCallResumes) {
  MrTable mrs{4};
  UdCore core(ud_config(), mrs);
  core.state = QpState::kRts;
  ASSERT_EQ(core.enqueue_send(send_wr(1)), 0);
  ASSERT_EQ(core.post_recv(recv_wr(2)), 0);
  ASSERT_EQ(core.post_recv(recv_wr(3)), 0);
  core.state = QpState::kErr;
  FakeCq scq;
  FakeCq rcq;
  rcq.cap = 1;
  EXPECT_EQ(core.flush(
                scq, rcq, [] {}, [] {}),
            2u);
  EXPECT_EQ(core.counters.cq_overflow, 1u);
  EXPECT_EQ(core.rq.size(), 1u);
  EXPECT_EQ(core.ev.pending().size(), 2u);  // CQ_ERR and QP_FATAL
  rcq.cap = 10;
  EXPECT_EQ(core.flush(
                scq, rcq, [] {}, [] {}),
            1u);
  ASSERT_EQ(rcq.wcs.size(), 2u);
  EXPECT_EQ(rcq.wcs[1].wr_id, 3u);
  EXPECT_TRUE(core.rq.empty());
}

TEST(UnreliableQpCore_FinishRx, RefusedCompletionBecomesCqOverflow) {
  MrTable mrs{4};
  UdCore core(ud_config(), mrs);
  core.state = QpState::kRts;
  FakeCq rcq;
  rcq.cap = 0;
  const Cqe wc = error_wc(7, kQpn, WcStatus::kLocLenErr);
  EXPECT_EQ(core.finish_rx(UdRx::kLenErr, true, wc, rcq), UdRx::kCqOverflow);
  EXPECT_EQ(core.counters.rx_count(UdRx::kCqOverflow), 1u);
  EXPECT_EQ(core.counters.rx_count(UdRx::kLenErr), 0u);
  EXPECT_EQ(core.counters.cq_overflow, 1u);
  EXPECT_EQ(core.state, QpState::kErr);
  EXPECT_TRUE(core.ev.parked(CqRole::kRecv));
  EXPECT_EQ(core.finish_rx(UdRx::kDropQkey, false, wc, rcq), UdRx::kDropQkey);
  EXPECT_EQ(core.counters.rx_count(UdRx::kDropQkey), 1u);
}

}  // namespace
}  // namespace uroce::transport
