#include "datapath/transport/qp_common.h"
#include "datapath/transport/wr_queue.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <cstring>
#include <vector>

namespace uroce::transport {
namespace {

using namespace qp_attr;

TEST(RxeUdpSrcPort, IsTheKernelHashAboveC000) {
  EXPECT_EQ(rxe_udp_src_port(0), 0xC000);
  // hash_32(1, 14) = 0x61C88647 >> 18 = 0x1872.
  EXPECT_EQ(rxe_udp_src_port(1), 0xC000 + 0x1872);
  // (17 * 0x61C88647) mod 2^32 = 0x7E50EAB7, >> 18 = 0x1F94.
  EXPECT_EQ(rxe_udp_src_port(17), 0xC000 + 0x1F94);
}

TEST(RxeConnectedUdpSrcPort, FoldsQpnProductOrUsesFlowLabel) {
  // 0x11 * 0x22 = 0x242: nothing to fold.
  EXPECT_EQ(rxe_connected_udp_src_port(0, 0x11, 0x22), 0xC242);
  // Symmetric: both ends compute the same port.
  EXPECT_EQ(rxe_connected_udp_src_port(0, 0x22, 0x11), 0xC242);
  // 0x123456 * 0xabcdef folded to 20 bits, then to 14.
  EXPECT_EQ(rxe_connected_udp_src_port(0, 0x123456, 0xabcdef), 0xC3C8);
  EXPECT_EQ(rxe_connected_udp_src_port(0, 0xffffff, 0xffffff), 0xFF21);
  // A flow label is used as it is: 0xfc001 -> 0x0001 ^ 0x3f.
  EXPECT_EQ(rxe_connected_udp_src_port(0xfc001, 0x11, 0x22), 0xC03E);
}

TEST(PkeyMatch, LowBitsEqualAndOneFullMember) {
  EXPECT_TRUE(pkey_match(0xffff, 0xffff));
  EXPECT_TRUE(pkey_match(0x7fff, 0xffff));
  EXPECT_FALSE(pkey_match(0x7fff, 0x7fff));  // two limited members
  EXPECT_FALSE(pkey_match(0x8001, 0xffff));  // other partition
}

TEST(CheckModifyValues, RejectsUnsupportedValues) {
  QpAttrValues v;
  v.qp_state = QpState::kInit;
  const std::uint32_t init = kState | kPkeyIndex | kPort | kAccessFlags;
  EXPECT_EQ(check_modify_values(QpType::kUc, QpState::kReset, init, v), 0);
  v.port_num = 2;
  EXPECT_EQ(check_modify_values(QpType::kUc, QpState::kReset, init, v), EINVAL);
  v.port_num = 1;
  v.pkey_index = 1;
  EXPECT_EQ(check_modify_values(QpType::kUc, QpState::kReset, init, v), EINVAL);
  v.pkey_index = 0;

  v.qp_state = QpState::kRtr;
  const std::uint32_t rtr = kState | kAv | kPathMtu | kDestQpn | kRqPsn;
  EXPECT_EQ(check_modify_values(QpType::kUc, QpState::kInit, rtr, v), 0);
  v.path_mtu = static_cast<wire::PathMtu>(6);
  EXPECT_EQ(check_modify_values(QpType::kUc, QpState::kInit, rtr, v), EINVAL);
  v.path_mtu = wire::PathMtu::k256;
  v.rq_psn = 0x1000000;
  EXPECT_EQ(check_modify_values(QpType::kUc, QpState::kInit, rtr, v), EINVAL);
  v.rq_psn = 0;
  v.dest_qp_num = 0x1000000;
  EXPECT_EQ(check_modify_values(QpType::kUc, QpState::kInit, rtr, v), EINVAL);
  v.dest_qp_num = 5;
  v.av.dscp = 64;
  EXPECT_EQ(check_modify_values(QpType::kUc, QpState::kInit, rtr, v), EINVAL);
  v.av.dscp = 63;
  v.av.ecn = 4;
  EXPECT_EQ(check_modify_values(QpType::kUc, QpState::kInit, rtr, v), EINVAL);
  v.av.ecn = 3;
  v.av.ipv6 = true;
  v.av.route6.flow_label = 0x100000;
  EXPECT_EQ(check_modify_values(QpType::kUc, QpState::kInit, rtr, v), EINVAL);
  v.av.route6.flow_label = 0xfffff;
  EXPECT_EQ(check_modify_values(QpType::kUc, QpState::kInit, rtr, v), 0);
  v.av = {};
  // Missing required attribute: the transition table says no.
  EXPECT_EQ(check_modify_values(QpType::kUc, QpState::kInit, rtr & ~kAv, v), EINVAL);
}

TEST(CheckModifyValues, CurStateMustBeTheQpsState) {
  QpAttrValues v;
  v.qp_state = QpState::kRts;
  v.cur_qp_state = QpState::kRtr;
  EXPECT_EQ(check_modify_values(QpType::kUd, QpState::kRtr, kState | kSqPsn | kCurState, v), 0);
  v.cur_qp_state = QpState::kInit;
  EXPECT_EQ(check_modify_values(QpType::kUd, QpState::kRtr, kState | kSqPsn | kCurState, v),
            EINVAL);
}

// `w` as a send queue holds it (wr_queue.h), in a one-slot queue.
WrQueue<QueuedSendWr> queued(const SendWr& w) {
  WrQueue<QueuedSendWr> q(1, send_area_sges(kMaxSge, kMaxInline));
  assign_used(q.push_slot(), w);
  return q;
}

TEST(GatherWr, InlineAndSgeAtAnOffset) {
  MrTable mrs(4);
  std::vector<std::uint8_t> mem = {1, 2, 3, 4, 5, 6, 7, 8};
  int err = 0;
  const std::uint32_t key = mrs.reg({1, 0x100, mem.size(), 0, mem.data()}, &err);
  SendWr w;
  w.num_sge = 1;
  w.sge[0] = {0x100, 8, key};
  std::uint8_t out[3] = {};
  EXPECT_EQ(gather_wr(mrs, 1, queued(w).front(), 4, out).err, MrError::kOk);
  EXPECT_EQ(out[0], 5);
  EXPECT_EQ(out[2], 7);
  EXPECT_EQ(check_send_sges(mrs, 1, queued(w).front()), MrError::kOk);
  EXPECT_EQ(check_send_sges(mrs, 2, queued(w).front()), MrError::kWrongPd);

  w.flags = send_flag::kInline;
  w.inline_len = 4;
  std::memcpy(w.inline_data.data(), "abcd", 4);
  EXPECT_EQ(gather_wr(mrs, 1, queued(w).front(), 1, out).err, MrError::kOk);
  EXPECT_EQ(std::memcmp(out, "bcd", 3), 0);
  EXPECT_TRUE(gather_wr(mrs, 1, queued(w).front(), 2, out).too_long);
}

TEST(ImmData, RoundTripsByteForByte) {
  const std::uint8_t bytes[4] = {0x01, 0x02, 0x03, 0x04};
  std::uint32_t imm = 0;
  std::memcpy(&imm, bytes, 4);
  const wire::ImmDtHdr h = immdt_from_wr(imm);
  EXPECT_EQ(h.imm(), 0x01020304u);
  EXPECT_EQ(imm_to_wc(h), imm);
}

}  // namespace
}  // namespace uroce::transport
