#include "datapath/shm/wqe_write.h"

#include <gtest/gtest.h>

#include <array>
#include <cstring>
#include <vector>

#include "datapath/shm/ring.h"
#include "datapath/shm/rxe_layout.h"
#include "datapath/shm/wqe_copy.h"
#include "tests/datapath/shm/shm_test_support.h"

// The provider's writer checked by reading every WQE back with the daemon's
// validated copy-out (wqe_copy.h): what one side writes the other must take
// field for field.
namespace uroce::shm {
namespace {

using transport::QpType;
using transport::RecvWr;
using transport::SendWr;
using transport::WrOpcode;
namespace send_flag = transport::send_flag;

constexpr std::uint32_t kInline = send_flag::kInline;

struct Slot {
  static constexpr std::size_t kElem = 512;  // 208 fixed + 304 tail: 19 SGEs
  alignas(64) std::array<std::byte, kElem> bytes{};
  std::span<std::byte> span(std::size_t n = kElem) { return {bytes.data(), n}; }
};

struct ReadBack {
  WqeError err;
  SendWr wr;
  std::uint32_t ah;
};

ReadBack read_back(Slot& s, QpType type = QpType::kRc, std::uint32_t max_sge = 32,
                   std::uint32_t max_inline = 256) {
  ReadBack r{};
  r.err = copy_send_wqe(s.bytes, SqLimits{type, max_sge, max_inline}, &r.wr, &r.ah);
  return r;
}

SendWqeFields fields(std::uint32_t opcode, std::uint64_t wr_id = 0x0102030405060708ull) {
  SendWqeFields f;
  f.wr_id = wr_id;
  f.opcode = opcode;
  f.send_flags = send_flag::kSignaled;
  return f;
}

TEST(WriteSendFixed_RoundTrip, SendWithSges) {
  Slot s;
  ASSERT_EQ(write_send_fixed(s.span(), fields(IB_UVERBS_WR_SEND)), WqeWriteError::kOk);
  const WqeSge sges[] = {{0x1000, 100, 7}, {0x2000, 28, 8}, {0x3000, 1, 9}};
  ASSERT_EQ(set_send_sges(s.span(), sges, 4), WqeWriteError::kOk);
  const ReadBack r = read_back(s);
  ASSERT_EQ(r.err, WqeError::kOk);
  EXPECT_EQ(r.wr.wr_id, 0x0102030405060708ull);
  EXPECT_EQ(r.wr.opcode, WrOpcode::kSend);
  EXPECT_EQ(r.wr.flags, send_flag::kSignaled);
  ASSERT_EQ(r.wr.num_sge, 3u);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(r.wr.sge[i].addr, sges[i].addr);
    EXPECT_EQ(r.wr.sge[i].length, sges[i].length);
    EXPECT_EQ(r.wr.sge[i].lkey, sges[i].lkey);
  }
  EXPECT_EQ(r.wr.length(), 129u);
  EXPECT_EQ(r.ah, 0u);
  // rxe's dma header: length and resid are the total, as the kernel expects.
  rxe_send_wqe w;
  std::memcpy(&w, s.bytes.data(), kSendWqeFlexOffset);
  EXPECT_EQ(w.dma.length, 129u);
  EXPECT_EQ(w.dma.resid, 129u);
  EXPECT_EQ(w.dma.num_sge, 3u);
}

TEST(WriteSendFixed_RoundTrip, RdmaWriteWithImm) {
  Slot s;
  SendWqeFields f = fields(IB_UVERBS_WR_RDMA_WRITE_WITH_IMM);
  f.imm_or_inv = 0xA1B2C3D4;
  f.remote_addr = 0xFEDCBA9876543210ull;
  f.rkey = 0x4242;
  ASSERT_EQ(write_send_fixed(s.span(), f), WqeWriteError::kOk);
  const WqeSge sge{0x1000, 64, 3};
  ASSERT_EQ(set_send_sges(s.span(), {&sge, 1}, 1), WqeWriteError::kOk);
  const ReadBack r = read_back(s, QpType::kUc);
  ASSERT_EQ(r.err, WqeError::kOk);
  EXPECT_EQ(r.wr.opcode, WrOpcode::kRdmaWriteImm);
  EXPECT_EQ(r.wr.imm_or_inv, 0xA1B2C3D4u);
  EXPECT_EQ(r.wr.remote_addr, 0xFEDCBA9876543210ull);
  EXPECT_EQ(r.wr.rkey, 0x4242u);
  rxe_send_wqe w;
  std::memcpy(&w, s.bytes.data(), kSendWqeFlexOffset);
  EXPECT_EQ(w.iova, 0xFEDCBA9876543210ull);  // rxe keeps the remote address there too
}

TEST(WriteSendFixed_RoundTrip, RdmaRead) {
  Slot s;
  SendWqeFields f = fields(IB_UVERBS_WR_RDMA_READ);
  f.remote_addr = 0x7000;
  f.rkey = 0x99;
  ASSERT_EQ(write_send_fixed(s.span(), f), WqeWriteError::kOk);
  const WqeSge sge{0x9000, 65536, 2};
  ASSERT_EQ(set_send_sges(s.span(), {&sge, 1}, 1), WqeWriteError::kOk);
  const ReadBack r = read_back(s);
  ASSERT_EQ(r.err, WqeError::kOk);
  EXPECT_EQ(r.wr.opcode, WrOpcode::kRdmaRead);
  EXPECT_EQ(r.wr.remote_addr, 0x7000u);
  EXPECT_EQ(r.wr.rkey, 0x99u);
  EXPECT_EQ(r.wr.length(), 65536u);
}

TEST(WriteSendFixed_RoundTrip, CompareAndSwapAndFetchAdd) {
  for (std::uint32_t op : {IB_UVERBS_WR_ATOMIC_CMP_AND_SWP, IB_UVERBS_WR_ATOMIC_FETCH_AND_ADD}) {
    Slot s;
    SendWqeFields f = fields(op);
    f.remote_addr = 0x10008;
    f.rkey = 0x55;
    f.compare_add = 0x1111222233334444ull;
    f.swap = 0x5555666677778888ull;
    ASSERT_EQ(write_send_fixed(s.span(), f), WqeWriteError::kOk);
    const WqeSge sge{0x4000, 8, 1};
    ASSERT_EQ(set_send_sges(s.span(), {&sge, 1}, 1), WqeWriteError::kOk);
    const ReadBack r = read_back(s);
    ASSERT_EQ(r.err, WqeError::kOk) << op;
    EXPECT_EQ(r.wr.remote_addr, 0x10008u);
    EXPECT_EQ(r.wr.rkey, 0x55u);
    EXPECT_EQ(r.wr.compare_add, 0x1111222233334444ull);
    EXPECT_EQ(r.wr.swap, 0x5555666677778888ull);
  }
}

TEST(WriteSendFixed_RoundTrip, SendWithInvalidateAndLocalInvalidate) {
  Slot s;
  SendWqeFields f = fields(IB_UVERBS_WR_SEND_WITH_INV);
  f.imm_or_inv = 0xBEEF01;
  ASSERT_EQ(write_send_fixed(s.span(), f), WqeWriteError::kOk);
  ReadBack r = read_back(s);
  ASSERT_EQ(r.err, WqeError::kOk);
  EXPECT_EQ(r.wr.opcode, WrOpcode::kSendInv);
  EXPECT_EQ(r.wr.imm_or_inv, 0xBEEF01u);
  EXPECT_EQ(r.wr.num_sge, 0u);

  f.opcode = IB_UVERBS_WR_LOCAL_INV;
  ASSERT_EQ(write_send_fixed(s.span(), f), WqeWriteError::kOk);
  r = read_back(s);
  ASSERT_EQ(r.err, WqeError::kOk);
  EXPECT_EQ(r.wr.opcode, WrOpcode::kLocalInv);
  EXPECT_EQ(r.wr.imm_or_inv, 0xBEEF01u);
}

TEST(WriteSendFixed_RoundTrip, BindMw) {
  Slot s;
  SendWqeFields f = fields(IB_UVERBS_WR_BIND_MW);
  f.imm_or_inv = 0x4400;   // the window's key
  f.rkey = 0x4401;         // its new key
  f.remote_addr = 0x9000;  // the window's start and length
  f.compare_add = 64;
  f.mr_lkey = 0x7700;
  f.mw_access = 4u;  // IBV_ACCESS_REMOTE_READ
  ASSERT_EQ(write_send_fixed(s.span(), f), WqeWriteError::kOk);
  const ReadBack r = read_back(s);
  ASSERT_EQ(r.err, WqeError::kOk);
  EXPECT_EQ(r.wr.opcode, WrOpcode::kBindMw);
  EXPECT_EQ(r.wr.imm_or_inv, 0x4400u);
  EXPECT_EQ(r.wr.rkey, 0x4401u);
  EXPECT_EQ(r.wr.remote_addr, 0x9000u);
  EXPECT_EQ(r.wr.compare_add, 64u);
  EXPECT_EQ(r.wr.swap, transport::pack_mw_lkey_access(0x7700, 4u));
}

TEST(WriteSendFixed_RoundTrip, UdSendFromFieldsAndFromSetSendUd) {
  Slot s;
  SendWqeFields f = fields(IB_UVERBS_WR_SEND_WITH_IMM);
  f.imm_or_inv = 0x01000000;
  f.remote_qpn = 0x123456;
  f.remote_qkey = 0x11111111;
  f.ah_num = 7;
  ASSERT_EQ(write_send_fixed(s.span(), f), WqeWriteError::kOk);
  ReadBack r = read_back(s, QpType::kUd);
  ASSERT_EQ(r.err, WqeError::kOk);
  EXPECT_EQ(r.wr.ud.remote_qpn, 0x123456u);
  EXPECT_EQ(r.wr.ud.remote_qkey, 0x11111111u);
  EXPECT_EQ(r.ah, 7u);
  EXPECT_EQ(r.wr.imm_or_inv, 0x01000000u);

  // The ibv_wr_* order: build the send, then set the address on that slot.
  ASSERT_EQ(write_send_fixed(s.span(), fields(IB_UVERBS_WR_SEND)), WqeWriteError::kOk);
  r = read_back(s, QpType::kUd);
  EXPECT_EQ(r.err, WqeError::kNoAh);
  ASSERT_EQ(set_send_ud(s.span(), 0x42, 0x8000, 9), WqeWriteError::kOk);
  r = read_back(s, QpType::kUd);
  ASSERT_EQ(r.err, WqeError::kOk);
  EXPECT_EQ(r.wr.ud.remote_qpn, 0x42u);
  EXPECT_EQ(r.wr.ud.remote_qkey, 0x8000u);
  EXPECT_EQ(r.ah, 9u);
}

// A DCI's target, every field distinct from the opcode fields below.
constexpr WqeDcAddr kTarget{0x42, 0xABCDEF, 0x0123456789ABCDEFull, 3};

ReadBack read_back_dci(Slot& s, std::uint8_t log_streams = 2) {
  ReadBack r{};
  SqLimits lim{QpType::kDci, 32, 256};
  lim.dci_log_streams = log_streams;
  r.err = copy_send_wqe(s.bytes, lim, &r.wr, &r.ah);
  return r;
}

void expect_target(const ReadBack& r) {
  EXPECT_EQ(r.ah, kTarget.ah_num);
  EXPECT_EQ(r.wr.ud.ah_num, kTarget.ah_num);
  EXPECT_EQ(r.wr.ud.remote_qpn, kTarget.dctn);
  EXPECT_EQ(r.wr.ud.dc_key, kTarget.key);
  EXPECT_EQ(r.wr.ud.dc_stream, kTarget.stream);
}

// Every opcode a DCI posts, with all its own fields set: the DC block
// overlaps none of them, and the engine reads both back.
TEST(SetSendDc_RoundTrip, EveryDciOpcodeKeepsItsFieldsAndTheTarget) {
  const std::uint32_t ops[] = {IB_UVERBS_WR_SEND,
                               IB_UVERBS_WR_SEND_WITH_IMM,
                               IB_UVERBS_WR_SEND_WITH_INV,
                               IB_UVERBS_WR_RDMA_WRITE,
                               IB_UVERBS_WR_RDMA_WRITE_WITH_IMM,
                               IB_UVERBS_WR_RDMA_READ,
                               IB_UVERBS_WR_ATOMIC_CMP_AND_SWP,
                               IB_UVERBS_WR_ATOMIC_FETCH_AND_ADD};
  for (const std::uint32_t op : ops) {
    SCOPED_TRACE(op);
    Slot s;
    SendWqeFields f = fields(op);
    f.imm_or_inv = 0xA1B2C3D4;
    f.remote_addr = 0x1122334455667780ull;
    f.rkey = 0x5566;
    f.compare_add = 0xCCCCCCCCCCCCCCCCull;
    f.swap = 0xDDDDDDDDDDDDDDDDull;
    ASSERT_EQ(write_send_fixed(s.span(), f), WqeWriteError::kOk);
    ASSERT_EQ(set_send_dc(s.span(), kTarget), WqeWriteError::kOk);
    const WqeSge sge{0x9000, 8, 5};
    ASSERT_EQ(set_send_sges(s.span(), {&sge, 1}, 4), WqeWriteError::kOk);
    const ReadBack r = read_back_dci(s);
    ASSERT_EQ(r.err, WqeError::kOk);
    EXPECT_EQ(static_cast<std::uint32_t>(r.wr.opcode), op);
    EXPECT_EQ(r.wr.wr_id, f.wr_id);
    EXPECT_EQ(r.wr.flags, send_flag::kSignaled);
    ASSERT_EQ(r.wr.num_sge, 1u);
    EXPECT_EQ(r.wr.sge[0].addr, 0x9000u);
    const WrOpcode o = r.wr.opcode;
    const bool imm = o == WrOpcode::kSendImm || o == WrOpcode::kRdmaWriteImm;
    EXPECT_EQ(r.wr.imm_or_inv, imm || o == WrOpcode::kSendInv ? f.imm_or_inv : 0u);
    const bool remote = o == WrOpcode::kRdmaWrite || o == WrOpcode::kRdmaWriteImm ||
                        o == WrOpcode::kRdmaRead || transport::is_atomic(o);
    EXPECT_EQ(r.wr.remote_addr, remote ? f.remote_addr : 0u);
    EXPECT_EQ(r.wr.rkey, remote ? f.rkey : 0u);
    EXPECT_EQ(r.wr.compare_add, transport::is_atomic(o) ? f.compare_add : 0u);
    EXPECT_EQ(r.wr.swap, transport::is_atomic(o) ? f.swap : 0u);
    expect_target(r);
  }
}

TEST(SetSendDc_RoundTrip, InlineSendKeepsTheTarget) {
  Slot s;
  ASSERT_EQ(write_send_fixed(s.span(), fields(IB_UVERBS_WR_SEND_WITH_IMM)), WqeWriteError::kOk);
  ASSERT_EQ(set_send_dc(s.span(), kTarget), WqeWriteError::kOk);
  const InlineBuf b{"payload", 7};
  ASSERT_EQ(set_send_inline(s.span(), {&b, 1}, 64), WqeWriteError::kOk);
  const ReadBack r = read_back_dci(s);
  ASSERT_EQ(r.err, WqeError::kOk);
  EXPECT_EQ(r.wr.inline_len, 7u);
  EXPECT_EQ(std::memcmp(r.wr.inline_data.data(), "payload", 7), 0);
  expect_target(r);
}

TEST(SetSendDc_RoundTrip, LocalInvalidateHasNoTarget) {
  Slot s;
  SendWqeFields f = fields(IB_UVERBS_WR_LOCAL_INV);
  f.imm_or_inv = 0x777;
  ASSERT_EQ(write_send_fixed(s.span(), f), WqeWriteError::kOk);
  const ReadBack r = read_back_dci(s);
  ASSERT_EQ(r.err, WqeError::kOk);
  EXPECT_EQ(r.wr.imm_or_inv, 0x777u);
  EXPECT_EQ(r.ah, 0u);
  EXPECT_EQ(r.wr.ud.ah_num, 0u);
}

TEST(SetSendDc_Block, FieldsAtTheDocumentedOffsets) {
  Slot s;
  ASSERT_EQ(write_send_fixed(s.span(), fields(IB_UVERBS_WR_RDMA_WRITE)), WqeWriteError::kOk);
  ASSERT_EQ(set_send_dc(s.span(), kTarget), WqeWriteError::kOk);
  const std::byte* b = s.bytes.data();
  std::uint32_t ah, dctn;
  std::uint64_t key;
  std::uint16_t stream;
  std::memcpy(&ah, b + 56, 4);
  std::memcpy(&dctn, b + 60, 4);
  std::memcpy(&key, b + 64, 8);
  std::memcpy(&stream, b + 72, 2);
  EXPECT_EQ(ah, kTarget.ah_num);
  EXPECT_EQ(dctn, kTarget.dctn);
  EXPECT_EQ(key, kTarget.key);
  EXPECT_EQ(stream, kTarget.stream);
  for (std::size_t i = 74; i < 80; ++i) EXPECT_EQ(b[i], std::byte{0}) << i;
  // The next WQE written into the slot starts without a target.
  ASSERT_EQ(write_send_fixed(s.span(), fields(IB_UVERBS_WR_SEND)), WqeWriteError::kOk);
  EXPECT_EQ(read_back_dci(s).err, WqeError::kNoAh);
}

TEST(SetSendDc_Slot, ShorterThanFixedPartGivesSlotTooSmall) {
  Slot s;
  EXPECT_EQ(set_send_dc(s.span(kSendWqeFlexOffset - 1), kTarget), WqeWriteError::kSlotTooSmall);
}

TEST(WriteSendFixed_Slot, ClearsStaleBytesOfThePreviousWqe) {
  Slot s;
  std::memset(s.bytes.data(), 0xFF, s.bytes.size());
  ASSERT_EQ(write_send_fixed(s.span(), fields(IB_UVERBS_WR_SEND, 1)), WqeWriteError::kOk);
  // Kernel bookkeeping (status .. has_rd_atomic) and the dma header are zero.
  for (std::size_t i = sizeof(rxe_send_wr); i < kSendWqeFlexOffset; ++i) {
    ASSERT_EQ(s.bytes[i], std::byte{0}) << i;
  }
  const ReadBack r = read_back(s);
  ASSERT_EQ(r.err, WqeError::kOk);
  EXPECT_EQ(r.wr.num_sge, 0u);
  EXPECT_EQ(r.wr.flags, send_flag::kSignaled);
}

TEST(WriteSendFixed_Slot, ShorterThanFixedPartGivesSlotTooSmall) {
  Slot s;
  const auto small = s.span(kSendWqeFlexOffset - 1);
  EXPECT_EQ(write_send_fixed(small, fields(IB_UVERBS_WR_SEND)), WqeWriteError::kSlotTooSmall);
  EXPECT_EQ(set_send_ud(small, 1, 1, 1), WqeWriteError::kSlotTooSmall);
  EXPECT_EQ(set_send_sges(small, {}, 4), WqeWriteError::kSlotTooSmall);
  EXPECT_EQ(set_send_inline(small, {}, 4), WqeWriteError::kSlotTooSmall);
  for (std::byte b : s.bytes) ASSERT_EQ(b, std::byte{0});
}

TEST(SetSendSges_Limits, OverMaxSgeGivesTooManySge) {
  Slot s;
  ASSERT_EQ(write_send_fixed(s.span(), fields(IB_UVERBS_WR_SEND)), WqeWriteError::kOk);
  const WqeSge sges[3] = {};
  EXPECT_EQ(set_send_sges(s.span(), sges, 2), WqeWriteError::kTooManySge);
}

TEST(SetSendSges_Limits, PastTheSlotGivesTooManySge) {
  Slot s;
  ASSERT_EQ(write_send_fixed(s.span(), fields(IB_UVERBS_WR_SEND)), WqeWriteError::kOk);
  EXPECT_EQ(send_sge_room(Slot::kElem), 19u);
  std::vector<WqeSge> sges(20);
  EXPECT_EQ(set_send_sges(s.span(), sges, 32), WqeWriteError::kTooManySge);
  sges.resize(19);
  EXPECT_EQ(set_send_sges(s.span(), sges, 32), WqeWriteError::kOk);
  EXPECT_EQ(read_back(s).wr.num_sge, 19u);
}

TEST(SetSendInline_RoundTrip, GathersBuffersInOrderAndSetsTheFlag) {
  Slot s;
  ASSERT_EQ(write_send_fixed(s.span(), fields(IB_UVERBS_WR_SEND)), WqeWriteError::kOk);
  const char a[] = "hello, ";
  const char b[] = "inline";
  const InlineBuf bufs[] = {{a, 7}, {nullptr, 0}, {b, 6}};
  ASSERT_EQ(set_send_inline(s.span(), bufs, 64), WqeWriteError::kOk);
  const ReadBack r = read_back(s);
  ASSERT_EQ(r.err, WqeError::kOk);
  EXPECT_EQ(r.wr.flags, send_flag::kSignaled | kInline);
  ASSERT_EQ(r.wr.inline_len, 13u);
  EXPECT_EQ(std::memcmp(r.wr.inline_data.data(), "hello, inline", 13), 0);
  EXPECT_EQ(r.wr.num_sge, 0u);
}

TEST(SetSendInline_Limits, OverMaxInlineGivesInlineTooLongAndNoPayload) {
  Slot s;
  ASSERT_EQ(write_send_fixed(s.span(), fields(IB_UVERBS_WR_SEND)), WqeWriteError::kOk);
  std::array<char, 40> data{};
  const InlineBuf bufs[] = {{data.data(), 30}, {data.data(), 10}};
  EXPECT_EQ(set_send_inline(s.span(), bufs, 39), WqeWriteError::kInlineTooLong);
  const ReadBack r = read_back(s);
  ASSERT_EQ(r.err, WqeError::kOk);
  EXPECT_EQ(r.wr.flags & kInline, 0u);
  EXPECT_EQ(r.wr.length(), 0u);
  EXPECT_EQ(set_send_inline(s.span(), bufs, 40), WqeWriteError::kOk);
  EXPECT_EQ(read_back(s).wr.inline_len, 40u);
}

TEST(SetSendInline_Limits, PastTheSlotGivesInlineTooLong) {
  Slot s;
  ASSERT_EQ(write_send_fixed(s.span(), fields(IB_UVERBS_WR_SEND)), WqeWriteError::kOk);
  std::array<char, 512> data{};
  const std::size_t room = Slot::kElem - kSendWqeFlexOffset;
  InlineBuf buf{data.data(), room + 1};
  EXPECT_EQ(set_send_inline(s.span(), {&buf, 1}, 4096), WqeWriteError::kInlineTooLong);
  buf.length = room;
  EXPECT_EQ(set_send_inline(s.span(), {&buf, 1}, 4096), WqeWriteError::kOk);
}

TEST(SetSendSges_Flags, ReplacingInlineWithSgesClearsTheInlineFlag) {
  Slot s;
  ASSERT_EQ(write_send_fixed(s.span(), fields(IB_UVERBS_WR_RDMA_WRITE)), WqeWriteError::kOk);
  const char x[4] = {1, 2, 3, 4};
  const InlineBuf buf{x, 4};
  ASSERT_EQ(set_send_inline(s.span(), {&buf, 1}, 16), WqeWriteError::kOk);
  const WqeSge sge{0x1000, 4, 1};
  ASSERT_EQ(set_send_sges(s.span(), {&sge, 1}, 1), WqeWriteError::kOk);
  const ReadBack r = read_back(s);
  ASSERT_EQ(r.err, WqeError::kOk);
  EXPECT_EQ(r.wr.flags & kInline, 0u);
  EXPECT_EQ(r.wr.num_sge, 1u);
}

struct RecvSlot {
  static constexpr std::size_t kElem = 128;  // 40 fixed + 88: 5 SGEs
  alignas(64) std::array<std::byte, kElem> bytes{};
  std::span<std::byte> span(std::size_t n = kElem) { return {bytes.data(), n}; }
};

TEST(WriteRecvWqe_RoundTrip, WrIdAndSges) {
  RecvSlot s;
  std::memset(s.bytes.data(), 0xFF, s.bytes.size());
  const WqeSge sges[] = {{0x1000, 10, 1}, {0x2000, 20, 2}};
  ASSERT_EQ(write_recv_wqe(s.span(), 0xAB, sges, 4), WqeWriteError::kOk);
  RecvWr wr;
  ASSERT_EQ(copy_recv_wqe(s.bytes, 4, &wr), WqeError::kOk);
  EXPECT_EQ(wr.wr_id, 0xABu);
  ASSERT_EQ(wr.num_sge, 2u);
  EXPECT_EQ(wr.sge[1].addr, 0x2000u);
  EXPECT_EQ(wr.sge[1].length, 20u);
  EXPECT_EQ(wr.sge[1].lkey, 2u);
  EXPECT_EQ(wr.length(), 30u);
  rxe_recv_wqe w;
  std::memcpy(&w, s.bytes.data(), kRecvWqeFlexOffset);
  EXPECT_EQ(w.dma.length, 30u);
  EXPECT_EQ(w.dma.cur_sge, 0u);
  EXPECT_EQ(w.dma.sge_offset, 0u);
  // The slot's stale 0xFF bytes are gone from every field the writer does
  // not set.
  EXPECT_EQ(w.reserved, 0u);
  EXPECT_EQ(w.padding, 0u);
  EXPECT_EQ(w.dma.reserved, 0u);
}

TEST(WriteRecvWqe_Limits, TooManySgesAndShortSlot) {
  RecvSlot s;
  const WqeSge sges[6] = {};
  EXPECT_EQ(write_recv_wqe(s.span(), 1, {sges, 3}, 2), WqeWriteError::kTooManySge);
  EXPECT_EQ(write_recv_wqe(s.span(), 1, {sges, 6}, 32), WqeWriteError::kTooManySge);
  EXPECT_EQ(write_recv_wqe(s.span(), 1, {sges, 5}, 32), WqeWriteError::kOk);
  EXPECT_EQ(write_recv_wqe(s.span(kRecvWqeFlexOffset - 1), 1, {}, 32),
            WqeWriteError::kSlotTooSmall);
}

TEST(ToWqeSges_Convert, CopiesFieldsOfAnSgeLikeType) {
  struct AppSge {
    std::uint64_t addr;
    std::uint32_t length;
    std::uint32_t lkey;
  };
  const AppSge in[3] = {{1, 2, 3}, {4, 5, 6}, {7, 8, 9}};
  std::array<WqeSge, 2> out{};
  EXPECT_EQ(to_wqe_sges(in, 3, out), 2u);
  EXPECT_EQ(out[1].addr, 4u);
  EXPECT_EQ(out[1].length, 5u);
  EXPECT_EQ(out[1].lkey, 6u);
}

TEST(WriteSendFixed_Ring, ThroughTheSqRingInBothDirections) {
  RingGeometry g;
  ASSERT_EQ(make_geometry(sq_elem_bytes(2, 32), 4, &g), RingError::kOk);
  testing::GuardedBuffer buf(g.bytes());
  ASSERT_EQ(ring_init(buf.data(), buf.size(), g), RingError::kOk);
  SqProducer app;
  SqConsumer daemon;
  ASSERT_EQ(app.attach(buf.data(), buf.size(), g), RingError::kOk);
  ASSERT_EQ(daemon.attach(buf.data(), buf.size(), g), RingError::kOk);
  // Enough WQEs to wrap the 8-slot ring twice.
  for (std::uint64_t i = 0; i < 20; ++i) {
    ASSERT_GT(app.free_slots(), 0u);
    const std::span<std::byte> slot{app.slot_bytes(), app.elem_size()};
    ASSERT_EQ(write_send_fixed(slot, fields(IB_UVERBS_WR_SEND, i)), WqeWriteError::kOk);
    const WqeSge sge{0x1000 + i, static_cast<std::uint32_t>(i), 1};
    ASSERT_EQ(set_send_sges(slot, {&sge, 1}, 2), WqeWriteError::kOk);
    app.publish();
    ASSERT_EQ(daemon.ready(), 1u);
    SendWr wr;
    std::uint32_t ah;
    ASSERT_EQ(copy_send_wqe(daemon.element(), SqLimits{QpType::kRc, 2, 32}, &wr, &ah),
              WqeError::kOk);
    daemon.release();
    EXPECT_EQ(wr.wr_id, i);
    EXPECT_EQ(wr.sge[0].addr, 0x1000 + i);
  }
  EXPECT_TRUE(buf.guards_intact());
}

TEST(WqeWriteError_ToString, NamesEveryValue) {
  EXPECT_STREQ(to_string(WqeWriteError::kOk), "ok");
  EXPECT_STREQ(to_string(WqeWriteError::kTooManySge), "too many SGEs");
  EXPECT_STREQ(to_string(WqeWriteError::kInlineTooLong), "inline data too long");
  EXPECT_STREQ(to_string(WqeWriteError::kSlotTooSmall), "slot smaller than a WQE");
}

}  // namespace
}  // namespace uroce::shm
