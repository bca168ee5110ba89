#include <gtest/gtest.h>

#include "tests/verbs-provider/fake_daemon.h"
#include "verbs-provider/cq.h"

namespace uroce::provider {
namespace {

using testing::FakeContext;

ib_uverbs_wc cqe(std::uint64_t wr_id) {
  ib_uverbs_wc wc{};
  wc.wr_id = wr_id;
  wc.status = wr_id == 2 ? IBV_WC_REM_ACCESS_ERR : IBV_WC_SUCCESS;
  wc.opcode = IBV_WC_RECV_RDMA_WITH_IMM;
  wc.vendor_err = 0x33;
  wc.byte_len = 64 + static_cast<std::uint32_t>(wr_id);
  wc.ex.imm_data = 0xABCD0000u + static_cast<std::uint32_t>(wr_id);
  wc.qp_num = 0x22;
  wc.src_qp = 0x44;
  wc.wc_flags = IBV_WC_WITH_IMM;
  wc.slid = 0;
  wc.sl = 3;
  wc.dlid_path_bits = 0;
  return wc;
}

struct ExRig {
  explicit ExRig(std::uint64_t wc_flags = supported_wc_flags()) {
    ibv_cq_init_attr_ex a{};
    a.cqe = 8;
    a.wc_flags = wc_flags;
    cq = create_cq_ex(fc.ctx(), &a);
    if (cq == nullptr) std::abort();
    fc.init_cq(ibv_cq_ex_to_cq(cq), nullptr);
    std::lock_guard<std::mutex> g(fc.daemon.mu);
    engine = testing::engine_end<shm::CqProducer>(*fc.daemon.cqs.at(cq->handle));
  }
  ~ExRig() { destroy_cq(ibv_cq_ex_to_cq(cq)); }
  FakeContext fc;
  ibv_cq_ex* cq = nullptr;
  shm::CqProducer engine;
};

TEST(CreateCqEx_Flags, UnsupportedFlagsAndMasksGiveEopnotsupp) {
  FakeContext fc;
  ibv_cq_init_attr_ex a{};
  a.cqe = 4;
  a.wc_flags = IBV_WC_EX_WITH_COMPLETION_TIMESTAMP;
  errno = 0;
  EXPECT_EQ(create_cq_ex(fc.ctx(), &a), nullptr);
  EXPECT_EQ(errno, EOPNOTSUPP);
  a.wc_flags = IBV_WC_EX_WITH_BYTE_LEN;
  a.comp_mask = IBV_CQ_INIT_ATTR_MASK_PD;
  EXPECT_EQ(create_cq_ex(fc.ctx(), &a), nullptr);
  EXPECT_EQ(errno, EOPNOTSUPP);
  a.comp_mask = IBV_CQ_INIT_ATTR_MASK_FLAGS;
  a.flags = IBV_CREATE_CQ_ATTR_IGNORE_OVERRUN;
  EXPECT_EQ(create_cq_ex(fc.ctx(), &a), nullptr);
  EXPECT_EQ(errno, EOPNOTSUPP);
}

TEST(CreateCqEx_Flags, ReadersInstalledOnlyForRequestedFlags) {
  ExRig rig(IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_QP_NUM);
  EXPECT_NE(rig.cq->read_byte_len, nullptr);
  EXPECT_NE(rig.cq->read_qp_num, nullptr);
  EXPECT_NE(rig.cq->read_opcode, nullptr);
  EXPECT_NE(rig.cq->read_wc_flags, nullptr);
  EXPECT_EQ(rig.cq->read_imm_data, nullptr);
  EXPECT_EQ(rig.cq->read_src_qp, nullptr);
  EXPECT_EQ(rig.cq->read_completion_ts, nullptr);
}

TEST(StartPoll_Empty, GivesEnoentAndLeavesTheCqUnlocked) {
  ExRig rig;
  ibv_poll_cq_attr attr{};
  EXPECT_EQ(ibv_start_poll(rig.cq, &attr), ENOENT);
  EXPECT_EQ(ibv_start_poll(rig.cq, &attr), ENOENT);  // would deadlock if still locked
  ibv_wc wc;
  EXPECT_EQ(poll_cq(ibv_cq_ex_to_cq(rig.cq), 1, &wc), 0);
}

TEST(StartPoll_Walk, StartNextEndReadEveryField) {
  ExRig rig;
  for (std::uint64_t i = 1; i <= 3; ++i) ASSERT_TRUE(rig.engine.try_push(cqe(i)));
  ibv_poll_cq_attr attr{};
  ASSERT_EQ(ibv_start_poll(rig.cq, &attr), 0);
  EXPECT_EQ(rig.cq->wr_id, 1u);
  EXPECT_EQ(rig.cq->status, IBV_WC_SUCCESS);
  EXPECT_EQ(ibv_wc_read_opcode(rig.cq), IBV_WC_RECV_RDMA_WITH_IMM);
  EXPECT_EQ(ibv_wc_read_vendor_err(rig.cq), 0x33u);
  EXPECT_EQ(ibv_wc_read_byte_len(rig.cq), 65u);
  EXPECT_EQ(ibv_wc_read_imm_data(rig.cq), 0xABCD0001u);
  EXPECT_EQ(ibv_wc_read_qp_num(rig.cq), 0x22u);
  EXPECT_EQ(ibv_wc_read_src_qp(rig.cq), 0x44u);
  EXPECT_EQ(ibv_wc_read_wc_flags(rig.cq), static_cast<unsigned>(IBV_WC_WITH_IMM));
  EXPECT_EQ(ibv_wc_read_sl(rig.cq), 3u);
  EXPECT_EQ(ibv_wc_read_slid(rig.cq), 0u);
  EXPECT_EQ(ibv_wc_read_dlid_path_bits(rig.cq), 0u);
  ASSERT_EQ(ibv_next_poll(rig.cq), 0);
  EXPECT_EQ(rig.cq->wr_id, 2u);
  EXPECT_EQ(rig.cq->status, IBV_WC_REM_ACCESS_ERR);
  ASSERT_EQ(ibv_next_poll(rig.cq), 0);
  EXPECT_EQ(rig.cq->wr_id, 3u);
  EXPECT_EQ(ibv_next_poll(rig.cq), ENOENT);
  ibv_end_poll(rig.cq);
  EXPECT_EQ(ibv_start_poll(rig.cq, &attr), ENOENT);  // all three released
  EXPECT_EQ(rig.engine.free_slots(), 15u);
}

TEST(EndPoll_Release, OnlyWhatWasTakenIsReleased) {
  ExRig rig;
  for (std::uint64_t i = 1; i <= 3; ++i) ASSERT_TRUE(rig.engine.try_push(cqe(i)));
  ibv_poll_cq_attr attr{};
  ASSERT_EQ(ibv_start_poll(rig.cq, &attr), 0);
  ibv_end_poll(rig.cq);
  ibv_wc wc[4];
  ASSERT_EQ(poll_cq(ibv_cq_ex_to_cq(rig.cq), 4, wc), 2);
  EXPECT_EQ(wc[0].wr_id, 2u);
  EXPECT_EQ(wc[1].wr_id, 3u);
}

TEST(StartPoll_Dead, EmptyRingOfADeadDaemonGivesEio) {
  ExRig rig;
  ASSERT_TRUE(rig.engine.try_push(cqe(1)));
  rig.fc.st()->ctl.mark_dead();
  ibv_poll_cq_attr attr{};
  ASSERT_EQ(ibv_start_poll(rig.cq, &attr), 0);  // what is there is still delivered
  ibv_end_poll(rig.cq);
  errno = 0;
  EXPECT_EQ(ibv_start_poll(rig.cq, &attr), EIO);
  EXPECT_EQ(errno, EIO);
}

TEST(StartPoll_Args, NonZeroCompMaskGivesEinval) {
  ExRig rig;
  ibv_poll_cq_attr attr{};
  attr.comp_mask = 1;
  EXPECT_EQ(ibv_start_poll(rig.cq, &attr), EINVAL);
}

}  // namespace
}  // namespace uroce::provider
