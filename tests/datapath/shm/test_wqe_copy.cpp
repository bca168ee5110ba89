#include "datapath/shm/wqe_copy.h"

#include <gtest/gtest.h>

#include <array>
#include <cstring>
#include <initializer_list>

#include "datapath/shm/ring.h"
#include "datapath/shm/rxe_layout.h"
#include "tests/datapath/shm/shm_test_support.h"

namespace uroce::shm {
namespace {

using transport::QpType;
using transport::RecvWr;
using transport::SendWr;
using transport::WcStatus;
using transport::WrOpcode;
namespace send_flag = transport::send_flag;

// One SQ slot as the provider writes it: the fixed part in the C ABI layout,
// then the SGE list or inline data at kSendWqeFlexOffset.
struct SendSlot {
  static constexpr std::size_t kElem = 1024;
  alignas(64) std::array<std::byte, kElem> bytes{};
  rxe_send_wqe w{};

  SendSlot(std::uint32_t opcode, std::uint64_t wr_id = 0x1122334455667788ull) {
    w.wr.wr_id = wr_id;
    w.wr.opcode = opcode;
    w.wr.send_flags = send_flag::kSignaled;
  }
  void sges(std::initializer_list<rxe_sge> list) {
    std::size_t i = 0;
    for (const rxe_sge& s : list) {
      std::memcpy(bytes.data() + kSendWqeFlexOffset + i * kRxeSgeBytes, &s, kRxeSgeBytes);
      ++i;
    }
    w.dma.num_sge = static_cast<std::uint32_t>(i);
  }
  void inline_bytes(std::uint32_t len) {
    w.wr.send_flags |= send_flag::kInline;
    for (std::uint32_t i = 0; i < len && kSendWqeFlexOffset + i < kElem; ++i) {
      bytes[kSendWqeFlexOffset + i] = static_cast<std::byte>(i * 7 + 1);
    }
    w.dma.length = len;
    w.dma.num_sge = 1;
  }
  std::span<const std::byte> elem(std::size_t n = kElem) {
    std::memcpy(bytes.data(), &w, kSendWqeFlexOffset);
    return {bytes.data(), n};
  }
};

struct Copied {
  WqeError err;
  SendWr wr;
  std::uint32_t ah = 0xFFFFFFFF;
};

Copied copy(SendSlot& s, SqLimits lim = {}, std::size_t elem = SendSlot::kElem) {
  Copied c{};
  c.err = copy_send_wqe(s.elem(elem), lim, &c.wr, &c.ah);
  return c;
}

constexpr SqLimits kRc{QpType::kRc, 32, 256};
constexpr SqLimits kUc{QpType::kUc, 32, 256};
constexpr SqLimits kUd{QpType::kUd, 32, 256};

TEST(CopySendWqe_Opcodes, RdmaWrite) {
  SendSlot s(IB_UVERBS_WR_RDMA_WRITE);
  s.w.wr.wr.rdma.remote_addr = 0xABCDEF0012345678ull;
  s.w.wr.wr.rdma.rkey = 0x77;
  s.sges({{0x1000, 100, 5}, {0x2000, 28, 6}});
  const Copied c = copy(s, kRc);
  ASSERT_EQ(c.err, WqeError::kOk);
  EXPECT_EQ(c.wr.wr_id, 0x1122334455667788ull);
  EXPECT_EQ(c.wr.opcode, WrOpcode::kRdmaWrite);
  EXPECT_EQ(c.wr.flags, send_flag::kSignaled);
  EXPECT_EQ(c.wr.remote_addr, 0xABCDEF0012345678ull);
  EXPECT_EQ(c.wr.rkey, 0x77u);
  ASSERT_EQ(c.wr.num_sge, 2u);
  EXPECT_EQ(c.wr.sge[0].addr, 0x1000u);
  EXPECT_EQ(c.wr.sge[0].length, 100u);
  EXPECT_EQ(c.wr.sge[0].lkey, 5u);
  EXPECT_EQ(c.wr.sge[1].addr, 0x2000u);
  EXPECT_EQ(c.wr.sge[1].lkey, 6u);
  EXPECT_EQ(c.wr.length(), 128u);
  EXPECT_EQ(c.wr.inline_len, 0u);
  EXPECT_EQ(c.ah, 0u);
}

TEST(CopySendWqe_Opcodes, RdmaWriteWithImm) {
  SendSlot s(IB_UVERBS_WR_RDMA_WRITE_WITH_IMM);
  s.w.wr.ex.imm_data = 0x01020304;
  s.w.wr.wr.rdma.remote_addr = 0x5000;
  s.w.wr.wr.rdma.rkey = 9;
  s.sges({{0x1000, 8, 1}});
  const Copied c = copy(s, kUc);
  ASSERT_EQ(c.err, WqeError::kOk);
  EXPECT_EQ(c.wr.opcode, WrOpcode::kRdmaWriteImm);
  EXPECT_EQ(c.wr.imm_or_inv, 0x01020304u);
  EXPECT_EQ(c.wr.remote_addr, 0x5000u);
  EXPECT_EQ(c.wr.rkey, 9u);
}

TEST(CopySendWqe_Opcodes, Send) {
  SendSlot s(IB_UVERBS_WR_SEND);
  s.sges({{0x1000, 4096, 3}});
  const Copied c = copy(s, kRc);
  ASSERT_EQ(c.err, WqeError::kOk);
  EXPECT_EQ(c.wr.opcode, WrOpcode::kSend);
  EXPECT_EQ(c.wr.length(), 4096u);
  EXPECT_EQ(c.wr.remote_addr, 0u);
}

TEST(CopySendWqe_Opcodes, SendWithImm) {
  SendSlot s(IB_UVERBS_WR_SEND_WITH_IMM);
  s.w.wr.ex.imm_data = 0xCAFEBABE;
  const Copied c = copy(s, kRc);
  ASSERT_EQ(c.err, WqeError::kOk);
  EXPECT_EQ(c.wr.opcode, WrOpcode::kSendImm);
  EXPECT_EQ(c.wr.imm_or_inv, 0xCAFEBABEu);
  EXPECT_EQ(c.wr.num_sge, 0u);
}

TEST(CopySendWqe_Opcodes, RdmaRead) {
  SendSlot s(IB_UVERBS_WR_RDMA_READ);
  s.w.wr.wr.rdma.remote_addr = 0x7000;
  s.w.wr.wr.rdma.rkey = 0x1234;
  s.sges({{0x9000, 65536, 2}});
  const Copied c = copy(s, kRc);
  ASSERT_EQ(c.err, WqeError::kOk);
  EXPECT_EQ(c.wr.opcode, WrOpcode::kRdmaRead);
  EXPECT_EQ(c.wr.remote_addr, 0x7000u);
  EXPECT_EQ(c.wr.rkey, 0x1234u);
  EXPECT_EQ(c.wr.length(), 65536u);
}

TEST(CopySendWqe_Opcodes, CompareAndSwap) {
  SendSlot s(IB_UVERBS_WR_ATOMIC_CMP_AND_SWP);
  s.w.wr.wr.atomic.remote_addr = 0x8008;
  s.w.wr.wr.atomic.compare_add = 11;
  s.w.wr.wr.atomic.swap = 22;
  s.w.wr.wr.atomic.rkey = 33;
  s.sges({{0x100, 8, 4}});
  const Copied c = copy(s, kRc);
  ASSERT_EQ(c.err, WqeError::kOk);
  EXPECT_EQ(c.wr.opcode, WrOpcode::kCmpSwap);
  EXPECT_EQ(c.wr.remote_addr, 0x8008u);
  EXPECT_EQ(c.wr.compare_add, 11u);
  EXPECT_EQ(c.wr.swap, 22u);
  EXPECT_EQ(c.wr.rkey, 33u);
}

TEST(CopySendWqe_Opcodes, FetchAndAdd) {
  SendSlot s(IB_UVERBS_WR_ATOMIC_FETCH_AND_ADD);
  s.w.wr.wr.atomic.remote_addr = 0x10;
  s.w.wr.wr.atomic.compare_add = 5;
  s.w.wr.wr.atomic.rkey = 6;
  s.sges({{0x100, 8, 4}});
  const Copied c = copy(s, kRc);
  ASSERT_EQ(c.err, WqeError::kOk);
  EXPECT_EQ(c.wr.opcode, WrOpcode::kFetchAdd);
  EXPECT_EQ(c.wr.compare_add, 5u);
  EXPECT_EQ(c.wr.rkey, 6u);
}

TEST(CopySendWqe_Opcodes, LocalInvalidate) {
  SendSlot s(IB_UVERBS_WR_LOCAL_INV);
  s.w.wr.ex.invalidate_rkey = 0x4242;
  const Copied c = copy(s, kRc);
  ASSERT_EQ(c.err, WqeError::kOk);
  EXPECT_EQ(c.wr.opcode, WrOpcode::kLocalInv);
  EXPECT_EQ(c.wr.imm_or_inv, 0x4242u);
}

TEST(CopySendWqe_Opcodes, SendWithInvalidate) {
  SendSlot s(IB_UVERBS_WR_SEND_WITH_INV);
  s.w.wr.ex.invalidate_rkey = 0x99;
  s.sges({{0x1000, 10, 1}});
  const Copied c = copy(s, kRc);
  ASSERT_EQ(c.err, WqeError::kOk);
  EXPECT_EQ(c.wr.opcode, WrOpcode::kSendInv);
  EXPECT_EQ(c.wr.imm_or_inv, 0x99u);
}

TEST(CopySendWqe_Ud, SendTakesQpnQkeyAndAhNumber) {
  SendSlot s(IB_UVERBS_WR_SEND_WITH_IMM);
  s.w.wr.ex.imm_data = 0x55;
  s.w.wr.wr.ud.remote_qpn = 0xABCDEF;
  s.w.wr.wr.ud.remote_qkey = 0x11111111;
  s.w.wr.wr.ud.ah_num = 7;
  // An address vector written by the application is ignored.
  s.w.wr.wr.ud.av.dmac[0] = 0xFF;
  s.sges({{0x1000, 64, 1}});
  const Copied c = copy(s, kUd);
  ASSERT_EQ(c.err, WqeError::kOk);
  EXPECT_EQ(c.wr.ud.remote_qpn, 0xABCDEFu);
  EXPECT_EQ(c.wr.ud.remote_qkey, 0x11111111u);
  EXPECT_EQ(c.wr.imm_or_inv, 0x55u);
  EXPECT_EQ(c.ah, 7u);
  EXPECT_EQ(c.wr.ud.dmac, transport::UdDest{}.dmac);
}

TEST(CopySendWqe_Ud, MissingAhGivesNoAh) {
  SendSlot s(IB_UVERBS_WR_SEND);
  s.w.wr.wr.ud.remote_qpn = 1;
  EXPECT_EQ(copy(s, kUd).err, WqeError::kNoAh);
}

TEST(CopySendWqe_Ud, WideRemoteQpnGivesBadRemoteQpn) {
  SendSlot s(IB_UVERBS_WR_SEND);
  s.w.wr.wr.ud.remote_qpn = 0x1000000;
  s.w.wr.wr.ud.ah_num = 1;
  EXPECT_EQ(copy(s, kUd).err, WqeError::kBadRemoteQpn);
}

// A DCI WQE's target in the DC block (rxe_layout.h), written straight into
// the slot's fixed part.
void dc_target(SendSlot& s, std::uint32_t ah, std::uint32_t dctn, std::uint64_t key,
               std::uint16_t stream) {
  auto* w = reinterpret_cast<std::byte*>(&s.w);
  std::memcpy(w + kDcAhNumOffset, &ah, 4);
  std::memcpy(w + kDcDctnOffset, &dctn, 4);
  std::memcpy(w + kDcKeyOffset, &key, 8);
  std::memcpy(w + kDcStreamOffset, &stream, 2);
}

SqLimits dci(std::uint8_t log_streams) {
  SqLimits l{QpType::kDci, 32, 256};
  l.dci_log_streams = log_streams;
  return l;
}

TEST(CopySendWqe_Dci, AtomicTakesItsFieldsAndTheTarget) {
  SendSlot s(IB_UVERBS_WR_ATOMIC_CMP_AND_SWP);
  s.w.wr.wr.atomic.remote_addr = 0x8000;
  s.w.wr.wr.atomic.compare_add = 0x1111;
  s.w.wr.wr.atomic.swap = 0x2222;
  s.w.wr.wr.atomic.rkey = 0x33;
  dc_target(s, 9, 0x123456, 0xFEEDFACECAFEBEEFull, 1);
  s.sges({{0x1000, 8, 1}});
  const Copied c = copy(s, dci(1));
  ASSERT_EQ(c.err, WqeError::kOk);
  EXPECT_EQ(c.wr.remote_addr, 0x8000u);
  EXPECT_EQ(c.wr.compare_add, 0x1111u);
  EXPECT_EQ(c.wr.swap, 0x2222u);
  EXPECT_EQ(c.wr.rkey, 0x33u);
  EXPECT_EQ(c.ah, 9u);
  EXPECT_EQ(c.wr.ud.ah_num, 9u);
  EXPECT_EQ(c.wr.ud.remote_qpn, 0x123456u);
  EXPECT_EQ(c.wr.ud.dc_key, 0xFEEDFACECAFEBEEFull);
  EXPECT_EQ(c.wr.ud.dc_stream, 1u);
  EXPECT_EQ(c.wr.ud.remote_qkey, 0u);
}

TEST(CopySendWqe_Dci, MissingAhGivesNoAh) {
  SendSlot s(IB_UVERBS_WR_SEND);
  dc_target(s, 0, 5, 1, 0);
  EXPECT_EQ(copy(s, dci(0)).err, WqeError::kNoAh);
}

// wr.ud's fields are not a DCI's target: only the DC block is.
TEST(CopySendWqe_Dci, UdFieldsAreNotTheTarget) {
  SendSlot s(IB_UVERBS_WR_SEND);
  s.w.wr.wr.ud.ah_num = 4;
  s.w.wr.wr.ud.remote_qpn = 5;
  EXPECT_EQ(copy(s, dci(0)).err, WqeError::kNoAh);
}

TEST(CopySendWqe_Dci, WideDctnGivesBadRemoteQpn) {
  SendSlot s(IB_UVERBS_WR_RDMA_WRITE);
  dc_target(s, 1, 0x1000000, 0, 0);
  EXPECT_EQ(copy(s, dci(0)).err, WqeError::kBadRemoteQpn);
}

TEST(CopySendWqe_Dci, StreamOutsideTheDcisGivesBadDcStream) {
  SendSlot s(IB_UVERBS_WR_SEND);
  dc_target(s, 1, 2, 3, 3);
  EXPECT_EQ(copy(s, dci(2)).err, WqeError::kOk);
  dc_target(s, 1, 2, 3, 4);
  EXPECT_EQ(copy(s, dci(2)).err, WqeError::kBadDcStream);
  dc_target(s, 1, 2, 3, 1);
  EXPECT_EQ(copy(s, dci(0)).err, WqeError::kBadDcStream);
  dc_target(s, 1, 2, 3, 15);
  EXPECT_EQ(copy(s, dci(4)).err, WqeError::kOk);
  dc_target(s, 1, 2, 3, 16);
  EXPECT_EQ(copy(s, dci(4)).err, WqeError::kBadDcStream);
}

TEST(CopySendWqe_Dci, LocalInvalidateNeedsNoTarget) {
  SendSlot s(IB_UVERBS_WR_LOCAL_INV);
  s.w.wr.ex.invalidate_rkey = 0x42;
  const Copied c = copy(s, dci(0));
  ASSERT_EQ(c.err, WqeError::kOk);
  EXPECT_EQ(c.wr.imm_or_inv, 0x42u);
  EXPECT_EQ(c.ah, 0u);
}

TEST(CopySendWqe_Dct, HasNoSendQueue) {
  for (std::uint32_t op : {IB_UVERBS_WR_SEND, IB_UVERBS_WR_RDMA_WRITE, IB_UVERBS_WR_LOCAL_INV}) {
    SendSlot s(op);
    dc_target(s, 1, 2, 3, 0);
    EXPECT_EQ(copy(s, SqLimits{QpType::kDct, 32, 256}).err, WqeError::kOpcodeForQpType) << op;
  }
}

TEST(CopySendWqe_Opcodes, UnknownOpcodesGiveBadOpcodeWithWrId) {
  for (std::uint32_t op : {10u /* TSO */, 11u, 12u, 13u, 14u, 0xFFFFFFFFu}) {
    SendSlot s(op, 0xFEED);
    const Copied c = copy(s, kRc);
    EXPECT_EQ(c.err, WqeError::kBadOpcode) << op;
    EXPECT_EQ(c.wr.wr_id, 0xFEEDu) << op;
    EXPECT_EQ(c.wr.flags, send_flag::kSignaled) << op;
  }
}

// BIND_MW (rxe_send_wr.wr.mw) lands in the fields wr.h names; RC only.
TEST(CopySendWqe_Opcodes, BindMwFields) {
  SendSlot s(IB_UVERBS_WR_BIND_MW);
  s.w.wr.wr.mw.addr = 0x1000;
  s.w.wr.wr.mw.length = 0x200;
  s.w.wr.wr.mw.mr_lkey = 0x1234;
  s.w.wr.wr.mw.mw_rkey = 0x5678;
  s.w.wr.wr.mw.rkey = 0x5679;
  s.w.wr.wr.mw.access = 2u;  // IBV_ACCESS_REMOTE_WRITE
  const Copied c = copy(s, kRc);
  ASSERT_EQ(c.err, WqeError::kOk);
  EXPECT_EQ(c.wr.opcode, WrOpcode::kBindMw);
  EXPECT_EQ(c.wr.imm_or_inv, 0x5678u);
  EXPECT_EQ(c.wr.rkey, 0x5679u);
  EXPECT_EQ(c.wr.remote_addr, 0x1000u);
  EXPECT_EQ(c.wr.compare_add, 0x200u);
  EXPECT_EQ(c.wr.swap, transport::pack_mw_lkey_access(0x1234, 2u /* IBV_ACCESS_REMOTE_WRITE */));
  EXPECT_EQ(copy(s, kUc).err, WqeError::kOk);  // UC binds windows too, as rxe
  EXPECT_EQ(copy(s, kUd).err, WqeError::kOpcodeForQpType);
}

TEST(CopySendWqe_Opcodes, OpcodeNotValidForQpType) {
  SendSlot write(IB_UVERBS_WR_RDMA_WRITE);
  EXPECT_EQ(copy(write, kUd).err, WqeError::kOpcodeForQpType);
  SendSlot read(IB_UVERBS_WR_RDMA_READ);
  const Copied c = copy(read, kUc);
  EXPECT_EQ(c.err, WqeError::kOpcodeForQpType);
  EXPECT_EQ(c.wr.opcode, WrOpcode::kRdmaRead);
  SendSlot atomic(IB_UVERBS_WR_ATOMIC_FETCH_AND_ADD);
  EXPECT_EQ(copy(atomic, kUc).err, WqeError::kOpcodeForQpType);
  SendSlot inv(IB_UVERBS_WR_SEND_WITH_INV);
  EXPECT_EQ(copy(inv, kUd).err, WqeError::kOpcodeForQpType);
}

TEST(CopySendWqe_Flags, UnknownBitGivesBadFlags) {
  SendSlot s(IB_UVERBS_WR_SEND);
  s.w.wr.send_flags = send_flag::kSignaled | (1u << 4);
  EXPECT_EQ(copy(s, kRc).err, WqeError::kBadFlags);
  s.w.wr.send_flags = send_flag::kFence | send_flag::kSolicited | send_flag::kSignaled;
  EXPECT_EQ(copy(s, kRc).err, WqeError::kOk);
}

TEST(CopySendWqe_Inline, CopiesPayload) {
  SendSlot s(IB_UVERBS_WR_SEND);
  s.inline_bytes(200);
  const Copied c = copy(s, kRc);
  ASSERT_EQ(c.err, WqeError::kOk);
  EXPECT_EQ(c.wr.inline_len, 200u);
  EXPECT_EQ(c.wr.num_sge, 0u);
  EXPECT_EQ(c.wr.length(), 200u);
  for (std::uint32_t i = 0; i < 200; ++i) {
    ASSERT_EQ(c.wr.inline_data[i], static_cast<std::uint8_t>(i * 7 + 1)) << i;
  }
}

TEST(CopySendWqe_Inline, OverMaxInlineGivesInlineTooLong) {
  SendSlot s(IB_UVERBS_WR_RDMA_WRITE);
  s.inline_bytes(65);
  EXPECT_EQ(copy(s, SqLimits{QpType::kRc, 32, 64}).err, WqeError::kInlineTooLong);
  EXPECT_EQ(copy(s, SqLimits{QpType::kRc, 32, 65}).err, WqeError::kOk);
  // Limits above the transport's are clamped to kMaxInline.
  SendSlot big(IB_UVERBS_WR_SEND);
  big.inline_bytes(transport::kMaxInline + 1);
  EXPECT_EQ(copy(big, SqLimits{QpType::kRc, 32, 4096}).err, WqeError::kInlineTooLong);
  big.w.dma.length = 0xFFFFFFFF;
  EXPECT_EQ(copy(big, SqLimits{QpType::kRc, 32, 4096}).err, WqeError::kInlineTooLong);
}

TEST(CopySendWqe_Inline, PastTheSlotGivesInlineTooLong) {
  // A 256-byte slot has 48 bytes after the fixed part.
  SendSlot s(IB_UVERBS_WR_SEND);
  s.inline_bytes(49);
  EXPECT_EQ(copy(s, kRc, 256).err, WqeError::kInlineTooLong);
  s.inline_bytes(48);
  EXPECT_EQ(copy(s, kRc, 256).err, WqeError::kOk);
}

TEST(CopySendWqe_Inline, OnReadOrAtomicGivesInlineForOpcode) {
  SendSlot read(IB_UVERBS_WR_RDMA_READ);
  read.inline_bytes(8);
  EXPECT_EQ(copy(read, kRc).err, WqeError::kInlineForOpcode);
  SendSlot cas(IB_UVERBS_WR_ATOMIC_CMP_AND_SWP);
  cas.inline_bytes(8);
  EXPECT_EQ(copy(cas, kRc).err, WqeError::kInlineForOpcode);
}

TEST(CopySendWqe_Sge, OverMaxSgeGivesTooManySge) {
  SendSlot s(IB_UVERBS_WR_SEND);
  s.sges({{1, 1, 1}, {2, 1, 1}, {3, 1, 1}});
  EXPECT_EQ(copy(s, SqLimits{QpType::kRc, 2, 0}).err, WqeError::kTooManySge);
  EXPECT_EQ(copy(s, SqLimits{QpType::kRc, 3, 0}).err, WqeError::kOk);
  s.w.dma.num_sge = 0xFFFFFFFF;
  EXPECT_EQ(copy(s, SqLimits{QpType::kRc, 0xFFFFFFFF, 0}).err, WqeError::kTooManySge);
  s.w.dma.num_sge = transport::kMaxSge + 1;
  EXPECT_EQ(copy(s, SqLimits{QpType::kRc, 1000, 0}).err, WqeError::kTooManySge);
}

TEST(CopySendWqe_Sge, PastTheSlotGivesTooManySge) {
  // 256-byte slot: 48 bytes of tail hold 3 SGEs.
  SendSlot s(IB_UVERBS_WR_SEND);
  s.sges({{1, 1, 1}, {2, 1, 1}, {3, 1, 1}, {4, 1, 1}});
  EXPECT_EQ(copy(s, kRc, 256).err, WqeError::kTooManySge);
  s.sges({{1, 1, 1}, {2, 1, 1}, {3, 1, 1}});
  EXPECT_EQ(copy(s, kRc, 256).err, WqeError::kOk);
}

TEST(CopySendWqe_Sge, TotalOver2To31GivesMessageTooLong) {
  SendSlot s(IB_UVERBS_WR_RDMA_WRITE);
  s.sges({{0, 0x80000000u, 1}, {0, 1, 1}});
  EXPECT_EQ(copy(s, kRc).err, WqeError::kMessageTooLong);
  s.sges({{0, 0x80000000u, 1}});
  EXPECT_EQ(copy(s, kRc).err, WqeError::kOk);
  s.sges({{0, 0xFFFFFFFFu, 1}, {0, 0xFFFFFFFFu, 1}});
  EXPECT_EQ(copy(s, kRc).err, WqeError::kMessageTooLong);
}

TEST(CopySendWqe_Atomic, ShortSgeGivesAtomicLength) {
  SendSlot s(IB_UVERBS_WR_ATOMIC_FETCH_AND_ADD);
  s.sges({{0x100, 4, 1}});
  EXPECT_EQ(copy(s, kRc).err, WqeError::kAtomicLength);
  s.sges({});
  EXPECT_EQ(copy(s, kRc).err, WqeError::kAtomicLength);
}

TEST(CopySendWqe_Atomic, MisalignedAddressGivesAtomicAlign) {
  SendSlot s(IB_UVERBS_WR_ATOMIC_CMP_AND_SWP);
  s.w.wr.wr.atomic.remote_addr = 0x1004;
  s.sges({{0x100, 8, 1}});
  EXPECT_EQ(copy(s, kRc).err, WqeError::kAtomicAlign);
}

TEST(CopySendWqe_Slot, ShorterThanFixedPartGivesElemTooSmall) {
  SendSlot s(IB_UVERBS_WR_SEND, 42);
  const Copied c = copy(s, kRc, kSendWqeFlexOffset - 1);
  EXPECT_EQ(c.err, WqeError::kElemTooSmall);
}

TEST(CopySendWqe_Ring, ThroughSqRing) {
  RingGeometry g;
  ASSERT_EQ(make_geometry(sq_elem_bytes(4, 64), 8, &g), RingError::kOk);
  testing::GuardedBuffer buf(g.bytes());
  ASSERT_EQ(ring_init(buf.data(), buf.size(), g), RingError::kOk);
  SqProducer app;
  SqConsumer daemon;
  ASSERT_EQ(app.attach(buf.data(), buf.size(), g), RingError::kOk);
  ASSERT_EQ(daemon.attach(buf.data(), buf.size(), g), RingError::kOk);
  rxe_send_wqe* w = app.slot();
  w->wr.wr_id = 77;
  w->wr.opcode = IB_UVERBS_WR_SEND;
  w->dma.num_sge = 2;
  const rxe_sge sge[2] = {{0x10, 3, 9}, {0x20, 4, 9}};
  std::memcpy(app.slot_bytes() + kSendWqeFlexOffset, sge, sizeof sge);
  app.publish();
  ASSERT_EQ(daemon.ready(), 1u);
  SendWr wr;
  std::uint32_t ah = 0;
  ASSERT_EQ(copy_send_wqe(daemon.element(), SqLimits{QpType::kRc, 4, 64}, &wr, &ah), WqeError::kOk);
  daemon.release();
  EXPECT_EQ(wr.wr_id, 77u);
  EXPECT_EQ(wr.num_sge, 2u);
  EXPECT_EQ(wr.length(), 7u);
  EXPECT_TRUE(buf.guards_intact());
}

// One RQ slot: rxe_recv_wqe fixed part, SGEs at kRecvWqeFlexOffset.
struct RecvSlot {
  static constexpr std::size_t kElem = 128;  // room for 5 SGEs
  alignas(64) std::array<std::byte, kElem> bytes{};
  void set(std::uint64_t wr_id, std::uint32_t num_sge, std::initializer_list<rxe_sge> list) {
    rxe_recv_wqe w{};
    w.wr_id = wr_id;
    w.dma.num_sge = num_sge;
    std::memcpy(bytes.data(), &w, kRecvWqeFlexOffset);
    std::size_t i = 0;
    for (const rxe_sge& s : list) {
      std::memcpy(bytes.data() + kRecvWqeFlexOffset + i++ * kRxeSgeBytes, &s, kRxeSgeBytes);
    }
  }
};

TEST(CopyRecvWqe_Copy, TakesWrIdAndSges) {
  RecvSlot s;
  s.set(0xAB, 3, {{0x1000, 10, 1}, {0x2000, 20, 2}, {0x3000, 30, 3}});
  RecvWr wr;
  ASSERT_EQ(copy_recv_wqe({s.bytes.data(), RecvSlot::kElem}, 4, &wr), WqeError::kOk);
  EXPECT_EQ(wr.wr_id, 0xABu);
  ASSERT_EQ(wr.num_sge, 3u);
  EXPECT_EQ(wr.sge[2].addr, 0x3000u);
  EXPECT_EQ(wr.sge[2].lkey, 3u);
  EXPECT_EQ(wr.length(), 60u);
}

TEST(CopyRecvWqe_Copy, OverMaxSgeGivesTooManySge) {
  RecvSlot s;
  s.set(1, 3, {{1, 1, 1}, {2, 1, 1}, {3, 1, 1}});
  RecvWr wr;
  EXPECT_EQ(copy_recv_wqe({s.bytes.data(), RecvSlot::kElem}, 2, &wr), WqeError::kTooManySge);
  EXPECT_EQ(wr.wr_id, 1u);
  s.set(1, 6, {});  // 6 SGEs do not fit a 128-byte slot
  EXPECT_EQ(copy_recv_wqe({s.bytes.data(), RecvSlot::kElem}, 32, &wr), WqeError::kTooManySge);
  s.set(1, 0x80000000u, {});
  EXPECT_EQ(copy_recv_wqe({s.bytes.data(), RecvSlot::kElem}, 0xFFFFFFFF, &wr),
            WqeError::kTooManySge);
}

TEST(CopyRecvWqe_Copy, TotalOver2To31GivesMessageTooLong) {
  RecvSlot s;
  s.set(1, 2, {{0, 0xFFFFFFFFu, 1}, {0, 1, 1}});
  RecvWr wr;
  EXPECT_EQ(copy_recv_wqe({s.bytes.data(), RecvSlot::kElem}, 4, &wr), WqeError::kMessageTooLong);
}

TEST(CopyRecvWqe_Copy, ShortSlotGivesElemTooSmall) {
  RecvSlot s;
  RecvWr wr;
  EXPECT_EQ(copy_recv_wqe({s.bytes.data(), kRecvWqeFlexOffset - 1}, 4, &wr),
            WqeError::kElemTooSmall);
}

TEST(WcStatusFor_Map, LengthErrorsAreLocLenOthersLocQpOp) {
  EXPECT_EQ(wc_status_for(WqeError::kOk), WcStatus::kSuccess);
  EXPECT_EQ(wc_status_for(WqeError::kTooManySge), WcStatus::kLocLenErr);
  EXPECT_EQ(wc_status_for(WqeError::kInlineTooLong), WcStatus::kLocLenErr);
  EXPECT_EQ(wc_status_for(WqeError::kMessageTooLong), WcStatus::kLocLenErr);
  EXPECT_EQ(wc_status_for(WqeError::kAtomicLength), WcStatus::kLocLenErr);
  EXPECT_EQ(wc_status_for(WqeError::kBadOpcode), WcStatus::kLocQpOpErr);
  EXPECT_EQ(wc_status_for(WqeError::kNoAh), WcStatus::kLocQpOpErr);
  EXPECT_EQ(wc_status_for(WqeError::kAtomicAlign), WcStatus::kLocQpOpErr);
  EXPECT_EQ(wc_status_for(WqeError::kBadDcStream), WcStatus::kLocQpOpErr);
}

TEST(WqeError_ToString, NamesTheDcErrors) {
  EXPECT_STREQ(to_string(WqeError::kNoAh), "send without AH");
  EXPECT_STREQ(to_string(WqeError::kBadDcStream), "DCI stream out of range");
  EXPECT_EQ(kNumWqeErrors, static_cast<std::size_t>(WqeError::kBadDcStream) + 1);
}

}  // namespace
}  // namespace uroce::shm
