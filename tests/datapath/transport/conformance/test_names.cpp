#include "tests/datapath/transport/conformance/names.h"

#include <gtest/gtest.h>

#include "datapath/wire/opcodes.h"

namespace uroce::transport::conformance {
namespace {

TEST(OpcodeByName, SpecNamesInAnyCase) {
  EXPECT_EQ(opcode_by_name("rc_send_only"), wire::op::kRcSendOnly);
  EXPECT_EQ(opcode_by_name("RC_RDMA_WRITE_FIRST"), wire::op::kRcWriteFirst);
  EXPECT_EQ(opcode_by_name("ud_send_only_with_immediate"), wire::op::kUdSendOnlyImm);
  EXPECT_EQ(opcode_by_name("uc_send_middle"), wire::op::kUcSendMiddle);
}

TEST(OpcodeByName, ShortForms) {
  EXPECT_EQ(opcode_by_name("rc_ack"), wire::op::kRcAck);
  EXPECT_EQ(opcode_by_name("rc_atomic_ack"), wire::op::kRcAtomicAck);
  EXPECT_EQ(opcode_by_name("rc_write_only_imm"), wire::op::kRcWriteOnlyImm);
  EXPECT_EQ(opcode_by_name("uc_write_last"), wire::op::kUcWriteLast);
  EXPECT_EQ(opcode_by_name("rc_read_request"), wire::op::kRcReadRequest);
  EXPECT_EQ(opcode_by_name("rc_read_response_middle"), wire::op::kRcReadResponseMiddle);
  EXPECT_EQ(opcode_by_name("rc_send_last_inv"), wire::op::kRcSendLastInv);
}

TEST(OpcodeByName, HomaExtensions) {
  EXPECT_EQ(opcode_by_name("homa_grant"), wire::op::kHomaGrant);
  EXPECT_EQ(opcode_by_name("homa_cutoffs"), wire::op::kHomaCutoffs);
  EXPECT_EQ(opcode_by_name("homa_mlen"), wire::op::kHomaMlen);
  EXPECT_EQ(opcode_by_name("uroce_homa_mlen"), wire::op::kHomaMlen);
  EXPECT_EQ(packet_name(wire::opcode_info(wire::op::kHomaMlen)), "homa_mlen");
  EXPECT_EQ(packet_name(wire::opcode_info(wire::op::kRcSendOnly)), "rc_send_only");
}

TEST(OpcodeByName, UnknownIsEmpty) {
  EXPECT_FALSE(opcode_by_name("rc_send"));
  EXPECT_FALSE(opcode_by_name("rd_send_only"));
  EXPECT_FALSE(opcode_by_name(""));
}

TEST(Snake, CamelToSnake) {
  EXPECT_EQ(snake("DropQkey"), "drop_qkey");
  EXPECT_EQ(snake("Delivered"), "delivered");
}

TEST(AethText, ReadsLikeAScriptLine) {
  EXPECT_EQ(aeth_text(wire::AethHdr::make(wire::aeth_ack_syndrome(), 3)), "ack credits=31 msn=3");
  EXPECT_EQ(aeth_text(wire::AethHdr::make(wire::aeth_rnr_nak_syndrome(12), 0)),
            "nak=rnr timer=12 msn=0");
  EXPECT_EQ(aeth_text(
                wire::AethHdr::make(wire::aeth_nak_syndrome(wire::NakCode::kRemoteAccessError), 1)),
            "nak=access msn=1");
}

TEST(StatusName, KnownAndUnknown) {
  EXPECT_EQ(status_name(12), "retry_exc_err");
  EXPECT_EQ(status_name(99), "status_99");
  EXPECT_EQ(wc_op_name(129), "recv_rdma_with_imm");
  EXPECT_EQ(state_name(QpState::kSqe), "sqe");
}

}  // namespace
}  // namespace uroce::transport::conformance
