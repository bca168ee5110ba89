#include "datapath/wire/opcodes.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

namespace uroce::wire {
namespace {

TEST(OpcodeTable, ValidOpcodesAreExactlyTheSupportedSet) {
  int n = 0;
  for (int o = 0; o < 256; ++o) {
    const bool want = (o <= 0x14) || o == 0x16 || o == 0x17 || o == 0x1c || o == 0x1d ||
                      (o >= 0x20 && o <= 0x2b) || o == 0x64 || o == 0x65 || o == 0x81 ||
                      (o >= 0xc0 && o <= 0xc4) || (o >= 0xc8 && o <= 0xd4) || o == 0xdb ||
                      o == 0xdc || o == 0xde || o == 0xdf || (o >= 0xe0 && o <= 0xf8 && o != 0xf5);
    EXPECT_EQ(opcode_info(static_cast<std::uint8_t>(o)).valid, want) << o;
    n += want;
  }
  EXPECT_EQ(n, 25 + 12 + 2 + 1 + 3 + 2 + 17 + 23 + 1);
}

TEST(OpcodeTable, ExtensionHeadersPerIbtaTable) {
  auto ext = [](std::uint8_t o) { return opcode_info(o).ext; };
  const ExtMask reth = ext_bit(ExtHdr::kReth), imm = ext_bit(ExtHdr::kImmDt),
                aeth = ext_bit(ExtHdr::kAeth), deth = ext_bit(ExtHdr::kDeth);
  EXPECT_EQ(ext(op::kRcSendFirst), 0);
  EXPECT_EQ(ext(op::kRcSendLastImm), imm);
  EXPECT_EQ(ext(op::kRcSendOnlyImm), imm);
  EXPECT_EQ(ext(op::kRcWriteFirst), reth);
  EXPECT_EQ(ext(op::kRcWriteMiddle), 0);
  EXPECT_EQ(ext(op::kRcWriteLastImm), imm);
  EXPECT_EQ(ext(op::kRcWriteOnly), reth);
  EXPECT_EQ(ext(op::kRcWriteOnlyImm), reth | imm);
  EXPECT_EQ(ext(op::kRcReadRequest), reth);
  EXPECT_EQ(ext(op::kRcReadResponseFirst), aeth);
  EXPECT_EQ(ext(op::kRcReadResponseMiddle), 0);
  EXPECT_EQ(ext(op::kRcReadResponseLast), aeth);
  EXPECT_EQ(ext(op::kRcReadResponseOnly), aeth);
  EXPECT_EQ(ext(op::kRcAck), aeth);
  EXPECT_EQ(ext(op::kRcAtomicAck), aeth | ext_bit(ExtHdr::kAtomicAckEth));
  EXPECT_EQ(ext(op::kRcCompareSwap), ext_bit(ExtHdr::kAtomicEth));
  EXPECT_EQ(ext(op::kRcFetchAdd), ext_bit(ExtHdr::kAtomicEth));
  EXPECT_EQ(ext(op::kRcSendLastInv), ext_bit(ExtHdr::kIeth));
  EXPECT_EQ(ext(op::kRcSendOnlyInv), ext_bit(ExtHdr::kIeth));
  EXPECT_EQ(ext(op::kUcWriteOnlyImm), reth | imm);
  EXPECT_EQ(ext(op::kUdSendOnly), deth);
  EXPECT_EQ(ext(op::kUdSendOnlyImm), deth | imm);
  EXPECT_EQ(ext(op::kCnp), ext_bit(ExtHdr::kCnp));
}

TEST(OpcodeTable, ExtLenIsSumOfHeaderSizes) {
  EXPECT_EQ(opcode_info(op::kRcWriteOnlyImm).ext_len, 20);
  EXPECT_EQ(opcode_info(op::kRcAtomicAck).ext_len, 12);
  EXPECT_EQ(opcode_info(op::kRcCompareSwap).ext_len, 28);
  EXPECT_EQ(opcode_info(op::kUdSendOnlyImm).ext_len, 12);
  EXPECT_EQ(opcode_info(op::kCnp).ext_len, 16);
  EXPECT_EQ(opcode_info(op::kRcSendMiddle).ext_len, 0);
}

TEST(OpcodeTable, PayloadOnlyForSendWriteAndReadResponse) {
  for (int o = 0; o < 256; ++o) {
    const OpcodeInfo& i = opcode_info(static_cast<std::uint8_t>(o));
    if (!i.valid) continue;
    // uroce's Homa packets carry their header where a payload would be;
    // DC_DISCONNECT carries none; ATOMIC_WRITE's 8 bytes are its payload.
    const bool want = i.op == OpClass::kSend || i.op == OpClass::kWrite ||
                      i.op == OpClass::kReadResponse || i.op == OpClass::kAtomicWrite ||
                      (i.op == OpClass::kControl && i.transport == Transport::kExt);
    EXPECT_EQ(i.payload, want) << i.name;
  }
}

TEST(OpcodeTable, PositionsAndDirections) {
  EXPECT_EQ(opcode_info(op::kUcSendFirst).pos, Position::kFirst);
  EXPECT_EQ(opcode_info(op::kUcSendMiddle).pos, Position::kMiddle);
  EXPECT_EQ(opcode_info(op::kRcReadResponseLast).pos, Position::kLast);
  EXPECT_EQ(opcode_info(op::kRcSendOnlyInv).pos, Position::kOnly);
  EXPECT_EQ(opcode_info(op::kRcReadResponseMiddle).dir, Direction::kResponse);
  EXPECT_EQ(opcode_info(op::kRcAtomicAck).dir, Direction::kResponse);
  EXPECT_EQ(opcode_info(op::kRcAck).dir, Direction::kAck);
  EXPECT_EQ(opcode_info(op::kRcFetchAdd).dir, Direction::kRequest);
  EXPECT_EQ(opcode_info(op::kCnp).dir, Direction::kCnp);
  EXPECT_EQ(opcode_info(op::kUcWriteLast).transport, Transport::kUc);
  EXPECT_EQ(opcode_info(op::kUdSendOnly).transport, Transport::kUd);
}

TEST(OpcodeTable, ExtensionsInManufacturerRange) {
  int n = 0;
  for (int o = 0; o < 256; ++o) {
    const OpcodeInfo& i = opcode_info(static_cast<std::uint8_t>(o));
    if (!i.valid || i.transport != Transport::kExt) continue;
    ++n;
    EXPECT_EQ(o & 0xF8, 0xC0) << i.name;  // 0xC0..0xC7, bits 7..5 = 110
    EXPECT_EQ(i.dir, Direction::kControl) << i.name;
    EXPECT_EQ(i.ext, 0) << i.name;
  }
  EXPECT_EQ(n, 4);
  EXPECT_EQ(opcode_name(op::kSrHello), "UROCE_SR_HELLO");
  EXPECT_EQ(opcode_name(op::kHomaGrant), "UROCE_HOMA_GRANT");
  EXPECT_EQ(opcode_name(op::kHomaCutoffs), "UROCE_HOMA_CUTOFFS");
  EXPECT_EQ(opcode_name(op::kHomaMlen), "UROCE_HOMA_MLEN");
  EXPECT_EQ(transport_name(Transport::kExt), "UROCE");
}

// Every DC opcode is 0xE0 + an RC opcode with that opcode's class,
// position, direction and payload rule, its headers plus DCETH (requests)
// or DCAETH (responses and ACKs) right after the BTH, and its name with DC_
// for RC_.
TEST(OpcodeTable, DcOpcodesMirrorRc) {
  int n = 0;
  // 0x00..0x17: the RC opcodes; 0xE0 + 0x18 is DC_DISCONNECT (below).
  for (int o = 0; o < 0x18; ++o) {
    const OpcodeInfo& rc = opcode_info(static_cast<std::uint8_t>(o));
    const std::uint8_t d = dc_opcode(static_cast<std::uint8_t>(o));
    const OpcodeInfo& dc = opcode_info(d);
    EXPECT_EQ(d, 0xe0 + o);
    if (!rc.valid) {
      EXPECT_FALSE(dc.valid) << o;
      EXPECT_FALSE(is_dc_opcode(d)) << o;
      continue;
    }
    ++n;
    ASSERT_TRUE(dc.valid) << rc.name;
    EXPECT_TRUE(is_dc_opcode(d)) << rc.name;
    EXPECT_EQ(rc_opcode_of_dc(d), o);
    EXPECT_EQ(dc.transport, Transport::kDc) << rc.name;
    EXPECT_EQ(dc.op, rc.op) << rc.name;
    EXPECT_EQ(dc.pos, rc.pos) << rc.name;
    EXPECT_EQ(dc.dir, rc.dir) << rc.name;
    EXPECT_EQ(dc.payload, rc.payload) << rc.name;
    const ExtHdr hdr = rc.dir == Direction::kRequest ? ExtHdr::kDcEth : ExtHdr::kDcAeth;
    EXPECT_EQ(dc.ext, rc.ext | ext_bit(hdr)) << rc.name;
    EXPECT_EQ(dc.ext_len, rc.ext_len + ext_hdr_size(hdr)) << rc.name;
    EXPECT_EQ(std::string(dc.name), "DC_" + std::string(rc.name.substr(3))) << rc.name;
  }
  EXPECT_EQ(n, 23);
  EXPECT_EQ(opcode_info(op::kDcAck).ext, ext_bit(ExtHdr::kDcAeth) | ext_bit(ExtHdr::kAeth));
  EXPECT_EQ(opcode_info(op::kDcAtomicAck).ext_len, 12 + 4 + 8);
  EXPECT_EQ(opcode_info(op::kDcReadResponseMiddle).ext, ext_bit(ExtHdr::kDcAeth));
  EXPECT_EQ(opcode_info(op::kDcReadRequest).ext, ext_bit(ExtHdr::kDcEth) | ext_bit(ExtHdr::kReth));
  EXPECT_EQ(opcode_info(op::kDcCompareSwap).ext_len, 28 + 28);
  EXPECT_EQ(opcode_info(op::kDcSendMiddle).ext, ext_bit(ExtHdr::kDcEth));
  EXPECT_EQ(opcode_name(op::kDcSendFirst), "DC_SEND_FIRST");
  EXPECT_EQ(opcode_name(op::kDcSendOnlyInv), "DC_SEND_ONLY_WITH_INVALIDATE");
  EXPECT_EQ(opcode_name(0xf5), "UNKNOWN");
}

TEST(OpcodeTable, DcDisconnect) {
  const OpcodeInfo& i = opcode_info(op::kDcDisconnect);
  ASSERT_TRUE(i.valid);
  EXPECT_EQ(op::kDcDisconnect, 0xf8);
  EXPECT_EQ(i.name, "DC_DISCONNECT");
  EXPECT_EQ(i.transport, Transport::kDc);
  EXPECT_EQ(i.op, OpClass::kControl);
  EXPECT_EQ(i.pos, Position::kOnly);
  EXPECT_EQ(i.dir, Direction::kRequest);
  EXPECT_EQ(i.ext, ext_bit(ExtHdr::kDcEth));
  EXPECT_EQ(i.ext_len, DcEthHdr::kSize);
  EXPECT_FALSE(i.payload);
  EXPECT_TRUE(is_dc_opcode(op::kDcDisconnect));
}

// The DC opcodes are exactly 0xE0..0xF8 less 0xF5, in the manufacturer-
// specific range (bits 7..5 = 111), clear of the Homa extensions'
// 0xC0..0xC7; is_dc_opcode agrees with the table.
TEST(OpcodeTable, DcRangeIsClearOfHoma) {
  int n = 0;
  for (int o = 0; o < 256; ++o) {
    const auto b = static_cast<std::uint8_t>(o);
    const OpcodeInfo& i = opcode_info(b);
    const bool dc = i.valid && i.transport == Transport::kDc;
    EXPECT_EQ(is_dc_opcode(b), dc) << o;
    if (!dc) continue;
    ++n;
    EXPECT_EQ(o >> 5, 0b111) << i.name;
    EXPECT_FALSE(o >= 0xc0 && o <= 0xc7) << i.name;
  }
  EXPECT_EQ(n, 24);
  for (int o = 0xc0; o <= 0xc7; ++o) {
    EXPECT_NE(opcode_info(static_cast<std::uint8_t>(o)).transport, Transport::kDc) << o;
  }
  EXPECT_EQ(op::kDcBase, 0xe0);
  EXPECT_EQ(op::kDcFetchAdd, 0xf4);
  EXPECT_EQ(op::kDcSendOnlyInv, 0xf7);
  EXPECT_FALSE(is_dc_opcode(0xdf));
  EXPECT_FALSE(is_dc_opcode(0xf9));
  EXPECT_FALSE(is_dc_opcode(0xff));
}

// DETH, DCETH, DCAETH, RETH, ...: the DC headers come right after the BTH
// (no opcode has DETH with them), ahead of every RC header.
TEST(ExtHdr, CanonicalOrderSizesAndNames) {
  EXPECT_EQ(static_cast<int>(ExtHdr::kDeth), 0);
  EXPECT_EQ(static_cast<int>(ExtHdr::kDcEth), 1);
  EXPECT_EQ(static_cast<int>(ExtHdr::kDcAeth), 2);
  EXPECT_EQ(static_cast<int>(ExtHdr::kFeth), 3);
  EXPECT_EQ(static_cast<int>(ExtHdr::kReth), 4);
  EXPECT_EQ(static_cast<std::size_t>(ExtHdr::kCnp), 10u);
  EXPECT_EQ(ext_bit(ExtHdr::kCnp), 0x400);
  // uroce's selective-repeat headers follow every IBTA header.
  EXPECT_EQ(static_cast<std::size_t>(ExtHdr::kSrEth), 11u);
  EXPECT_EQ(static_cast<std::size_t>(ExtHdr::kSackEth), kNumExtHdrs - 1);
  EXPECT_EQ(ext_hdr_size(ExtHdr::kSrEth), 8u);
  EXPECT_EQ(ext_hdr_size(ExtHdr::kSackEth), 40u);
  EXPECT_EQ(ext_hdr_name(ExtHdr::kSrEth), "SRETH");
  EXPECT_EQ(ext_hdr_name(ExtHdr::kSackEth), "SACKETH");
  EXPECT_EQ(ext_hdr_size(ExtHdr::kFeth), 4u);
  EXPECT_EQ(ext_hdr_name(ExtHdr::kFeth), "FETH");
  EXPECT_EQ(ext_hdr_size(ExtHdr::kDcEth), 28u);
  EXPECT_EQ(ext_hdr_size(ExtHdr::kDcAeth), 12u);
  EXPECT_EQ(ext_hdr_size(ExtHdr::kCnp), 16u);
  EXPECT_EQ(ext_hdr_name(ExtHdr::kDcEth), "DCETH");
  EXPECT_EQ(ext_hdr_name(ExtHdr::kDcAeth), "DCAETH");
  EXPECT_EQ(ext_hdr_name(ExtHdr::kCnp), "CNP");
  for (int o = 0; o < 256; ++o) {
    const OpcodeInfo& i = opcode_info(static_cast<std::uint8_t>(o));
    EXPECT_FALSE(i.has(ExtHdr::kDeth) && (i.has(ExtHdr::kDcEth) || i.has(ExtHdr::kDcAeth))) << o;
    EXPECT_FALSE(i.has(ExtHdr::kDcEth) && i.has(ExtHdr::kDcAeth)) << o;
  }
}

// Annex A19's RC FLUSH and ATOMIC_WRITE, laid out as rxe sends them.
TEST(OpcodeInfo, FlushAndAtomicWrite) {
  const OpcodeInfo& f = opcode_info(op::kRcFlush);
  EXPECT_TRUE(f.valid);
  EXPECT_EQ(f.name, "RC_FLUSH");
  EXPECT_EQ(f.transport, Transport::kRc);
  EXPECT_EQ(f.op, OpClass::kFlush);
  EXPECT_EQ(f.pos, Position::kOnly);
  EXPECT_EQ(f.dir, Direction::kRequest);
  EXPECT_EQ(f.ext, ext_bit(ExtHdr::kFeth) | ext_bit(ExtHdr::kReth));
  EXPECT_EQ(f.ext_len, 20u);
  EXPECT_FALSE(f.payload);
  const OpcodeInfo& a = opcode_info(op::kRcAtomicWrite);
  EXPECT_TRUE(a.valid);
  EXPECT_EQ(a.name, "RC_ATOMIC_WRITE");
  EXPECT_EQ(a.op, OpClass::kAtomicWrite);
  EXPECT_EQ(a.pos, Position::kOnly);
  EXPECT_EQ(a.dir, Direction::kRequest);
  EXPECT_EQ(a.ext, ext_bit(ExtHdr::kReth));
  EXPECT_TRUE(a.payload);
  // Neither has a UC or DC form.
  EXPECT_FALSE(opcode_info(0x3c).valid);
  EXPECT_FALSE(opcode_info(0x3d).valid);
  EXPECT_FALSE(opcode_info(0xfc).valid);
  EXPECT_FALSE(opcode_info(0xfd).valid);
}

TEST(OpcodeName, NamesAndUnknown) {
  EXPECT_EQ(opcode_name(op::kRcSendLastInv), "RC_SEND_LAST_WITH_INVALIDATE");
  EXPECT_EQ(opcode_name(op::kUcWriteOnlyImm), "UC_RDMA_WRITE_ONLY_WITH_IMMEDIATE");
  EXPECT_EQ(opcode_name(op::kUdSendOnlyImm), "UD_SEND_ONLY_WITH_IMMEDIATE");
  EXPECT_EQ(opcode_name(0x15), "UNKNOWN");
  EXPECT_EQ(opcode_name(0x40), "UNKNOWN");
  EXPECT_EQ(transport_name(Transport::kUd), "UD");
  EXPECT_EQ(transport_name(Transport::kDc), "DC");
  EXPECT_EQ(ext_hdr_name(ExtHdr::kAtomicAckEth), "AtomicAckETH");
}

TEST(PathMtu, BytesAndValidation) {
  EXPECT_EQ(path_mtu_bytes(PathMtu::k256), 256u);
  EXPECT_EQ(path_mtu_bytes(PathMtu::k1024), 1024u);
  EXPECT_EQ(path_mtu_bytes(PathMtu::k4096), 4096u);
  EXPECT_FALSE(path_mtu_valid(0));
  EXPECT_TRUE(path_mtu_valid(1));
  EXPECT_TRUE(path_mtu_valid(5));
  EXPECT_FALSE(path_mtu_valid(6));
  EXPECT_EQ(path_mtu_from_bytes(2048), PathMtu::k2048);
  EXPECT_EQ(path_mtu_from_bytes(1500), std::nullopt);
  EXPECT_EQ(path_mtu_from_bytes(0), std::nullopt);
}

TEST(PathMtu, ForEthMtuMatchesRxe) {
  EXPECT_EQ(path_mtu_for_eth_mtu(1500), PathMtu::k1024);
  EXPECT_EQ(path_mtu_for_eth_mtu(9000), PathMtu::k4096);
  EXPECT_EQ(path_mtu_for_eth_mtu(3504), PathMtu::k2048);
  EXPECT_EQ(path_mtu_for_eth_mtu(320), PathMtu::k256);
  EXPECT_EQ(path_mtu_for_eth_mtu(319), std::nullopt);
}

// The overhead from the header sizes and the opcode table, independently of
// max_payload_ext_len(): the largest extension headers of any opcode that
// may carry payload are RETH 16 + ImmDt 4 = 20 (RC/UC RDMA WRITE ONLY with
// immediate); a READ request (RETH 16) and the atomics (AtomicETH 28) carry
// more or as much but no payload. The Ethernet MTU counts the IP packet:
//   IPv4 20 + UDP 8 + BTH 12 + 20 + ICRC 4 = 64.
// DC's opcodes, with 24 more bytes, have their own overhead (below).
TEST(PathMtu, OverheadIsTheLargestPayloadOpcodeHeaders) {
  std::size_t max_ext = 0;
  std::vector<std::uint8_t> at_max;
  for (int o = 0; o < 256; ++o) {
    const OpcodeInfo& i = opcode_info(static_cast<std::uint8_t>(o));
    if (!i.valid || !i.payload || i.transport == Transport::kDc || i.transport == Transport::kSr) {
      continue;
    }
    std::size_t ext = 0;
    for (std::size_t h = 0; h < kNumExtHdrs; ++h) {
      if (i.has(static_cast<ExtHdr>(h))) ext += ext_hdr_size(static_cast<ExtHdr>(h));
    }
    if (ext > max_ext) at_max.clear();
    if (ext >= max_ext) {
      max_ext = ext;
      at_max.push_back(static_cast<std::uint8_t>(o));
    }
  }
  EXPECT_EQ(max_ext, RethHdr::kSize + ImmDtHdr::kSize);
  EXPECT_EQ(at_max, (std::vector<std::uint8_t>{op::kRcWriteOnlyImm, op::kUcWriteOnlyImm}));
  EXPECT_EQ(max_payload_ext_len(), max_ext);
  EXPECT_GT(opcode_info(op::kRcCompareSwap).ext_len, max_ext);
  EXPECT_FALSE(opcode_info(op::kRcCompareSwap).payload);
  EXPECT_EQ(kPathMtuOverhead, Ipv4Hdr::kSize + UdpHdr::kSize + BthHdr::kSize + max_ext + kIcrcSize);
  EXPECT_EQ(kPathMtuOverhead, 64u);
  EXPECT_EQ(kMinRoceEthMtu, 320u);
}

// Path MTU m fits exactly from Ethernet MTU m + 64 up. A 4096-byte RDMA WRITE
// ONLY with immediate is a 4096 + 64 = 4160-byte IP packet, so 4154..4159
// (which 58 bytes of overhead took for 4096) give 2048; likewise 2048 needs
// 2112, 1024 needs 1088, 512 needs 576 and 256 needs 320.
TEST(PathMtu, ForEthMtuBoundaries) {
  for (std::uint32_t e = 4154; e <= 4159; ++e) {
    EXPECT_EQ(path_mtu_for_eth_mtu(e), PathMtu::k2048) << e;
  }
  EXPECT_EQ(path_mtu_for_eth_mtu(4160), PathMtu::k4096);
  EXPECT_EQ(path_mtu_for_eth_mtu(2111), PathMtu::k1024);
  EXPECT_EQ(path_mtu_for_eth_mtu(2112), PathMtu::k2048);
  EXPECT_EQ(path_mtu_for_eth_mtu(1087), PathMtu::k512);
  EXPECT_EQ(path_mtu_for_eth_mtu(1088), PathMtu::k1024);
  EXPECT_EQ(path_mtu_for_eth_mtu(575), PathMtu::k256);
  EXPECT_EQ(path_mtu_for_eth_mtu(576), PathMtu::k512);
  EXPECT_EQ(path_mtu_for_eth_mtu(kMinRoceEthMtu), PathMtu::k256);
  EXPECT_EQ(path_mtu_for_eth_mtu(kMinRoceEthMtu - 1), std::nullopt);
  for (std::uint8_t c = 1; c <= 5; ++c) {
    const auto m = static_cast<PathMtu>(c);
    EXPECT_EQ(path_mtu_for_eth_mtu(path_mtu_bytes(m) + kPathMtuOverhead), m);
  }
  static_assert(path_mtu_for_eth_mtu(9000) == PathMtu::k4096);
}

// DC RDMA WRITE ONLY with immediate: DCETH 28 + RETH 16 + ImmDt 4 = 48,
// so 20 + 8 + 12 + 48 + 4 = 92 bytes beside a full payload.
TEST(PathMtu, DcOverheadIsTheLargestDcPayloadOpcodeHeaders) {
  std::size_t max_ext = 0;
  std::vector<std::uint8_t> at_max;
  for (int o = 0; o < 256; ++o) {
    const OpcodeInfo& i = opcode_info(static_cast<std::uint8_t>(o));
    if (!i.valid || !i.payload || i.transport != Transport::kDc) continue;
    if (i.ext_len > max_ext) at_max.clear();
    if (i.ext_len >= max_ext) {
      max_ext = i.ext_len;
      at_max.push_back(static_cast<std::uint8_t>(o));
    }
  }
  EXPECT_EQ(max_ext, DcEthHdr::kSize + RethHdr::kSize + ImmDtHdr::kSize);
  EXPECT_EQ(at_max, (std::vector<std::uint8_t>{op::kDcWriteOnlyImm}));
  EXPECT_EQ(max_dc_payload_ext_len(), max_ext);
  EXPECT_EQ(kDcPathMtuOverhead, 92u);
  EXPECT_EQ(kDcPathMtuOverhead, kPathMtuOverhead + DcEthHdr::kSize);
  EXPECT_EQ(kMinDcEthMtu, 348u);
}

// Path MTU m fits a DC QP from Ethernet MTU m + 92 up.
TEST(PathMtu, DcForEthMtu) {
  EXPECT_EQ(dc_path_mtu_for_eth_mtu(1500), PathMtu::k1024);
  EXPECT_EQ(dc_path_mtu_for_eth_mtu(9000), PathMtu::k4096);
  EXPECT_EQ(dc_path_mtu_for_eth_mtu(4159), PathMtu::k2048);
  EXPECT_EQ(dc_path_mtu_for_eth_mtu(4160), PathMtu::k2048);  // RC's 4096
  EXPECT_EQ(dc_path_mtu_for_eth_mtu(4187), PathMtu::k2048);
  EXPECT_EQ(dc_path_mtu_for_eth_mtu(4188), PathMtu::k4096);
  EXPECT_EQ(dc_path_mtu_for_eth_mtu(1115), PathMtu::k512);
  EXPECT_EQ(dc_path_mtu_for_eth_mtu(1116), PathMtu::k1024);
  EXPECT_EQ(dc_path_mtu_for_eth_mtu(kMinDcEthMtu), PathMtu::k256);
  EXPECT_EQ(dc_path_mtu_for_eth_mtu(kMinDcEthMtu - 1), std::nullopt);
  EXPECT_EQ(dc_path_mtu_for_eth_mtu(kMinRoceEthMtu), std::nullopt);
  for (std::uint8_t c = 1; c <= 5; ++c) {
    const auto m = static_cast<PathMtu>(c);
    EXPECT_EQ(dc_path_mtu_for_eth_mtu(path_mtu_bytes(m) + kDcPathMtuOverhead), m);
    // RC's threshold is 28 bytes lower: there DC gets the next smaller one.
    const std::uint32_t rc_min = path_mtu_bytes(m) + kPathMtuOverhead;
    EXPECT_EQ(path_mtu_for_eth_mtu(rc_min), m);
    if (c > 1) {
      EXPECT_EQ(dc_path_mtu_for_eth_mtu(rc_min), static_cast<PathMtu>(c - 1));
    }
  }
  static_assert(dc_path_mtu_for_eth_mtu(1500) == PathMtu::k1024);
}

// Every SR opcode is 0xC8 + an RC request opcode with that opcode's class,
// position, direction and payload rule, its headers plus SRETH (SEND,
// WRITE) and a RETH on every WRITE packet, and its name with SR_ for RC_.
TEST(OpcodeTable, SrOpcodesMirrorRcRequests) {
  int n = 0;
  for (int o = 0; o < 0x18; ++o) {
    const OpcodeInfo& rc = opcode_info(static_cast<std::uint8_t>(o));
    const std::uint8_t s = sr_opcode(static_cast<std::uint8_t>(o));
    const OpcodeInfo& sr = opcode_info(s);
    EXPECT_EQ(s, 0xc8 + o);
    if (!rc.valid || rc.dir != Direction::kRequest) {
      EXPECT_FALSE(sr.valid) << o;
      continue;
    }
    ++n;
    ASSERT_TRUE(sr.valid) << rc.name;
    EXPECT_EQ(rc_opcode_of_sr(s), o);
    EXPECT_EQ(sr.transport, Transport::kSr) << rc.name;
    EXPECT_EQ(sr.op, rc.op) << rc.name;
    EXPECT_EQ(sr.pos, rc.pos) << rc.name;
    EXPECT_EQ(sr.dir, rc.dir) << rc.name;
    EXPECT_EQ(sr.payload, rc.payload) << rc.name;
    ExtMask want = rc.ext;
    if (rc.op == OpClass::kSend || rc.op == OpClass::kWrite) {
      want = static_cast<ExtMask>(want | ext_bit(ExtHdr::kSrEth));
    }
    if (rc.op == OpClass::kWrite) want = static_cast<ExtMask>(want | ext_bit(ExtHdr::kReth));
    EXPECT_EQ(sr.ext, want) << rc.name;
    EXPECT_EQ(std::string(sr.name), "SR_" + std::string(rc.name.substr(3))) << rc.name;
  }
  EXPECT_EQ(n, 17);
  EXPECT_EQ(opcode_info(op::kSrWriteMiddle).ext, ext_bit(ExtHdr::kReth) | ext_bit(ExtHdr::kSrEth));
  EXPECT_EQ(opcode_info(op::kSrWriteLastImm).ext_len, 16 + 4 + 8);
  EXPECT_EQ(opcode_info(op::kSrSendMiddle).ext_len, 8);
  EXPECT_EQ(opcode_info(op::kSrSendOnlyInv).ext, ext_bit(ExtHdr::kIeth) | ext_bit(ExtHdr::kSrEth));
  EXPECT_EQ(opcode_info(op::kSrReadRequest).ext, ext_bit(ExtHdr::kReth));
  EXPECT_EQ(opcode_info(op::kSrFetchAdd).ext, ext_bit(ExtHdr::kAtomicEth));
  EXPECT_EQ(opcode_name(op::kSrSendFirst), "SR_SEND_FIRST");
  EXPECT_EQ(opcode_name(op::kSrSendOnlyInv), "SR_SEND_ONLY_WITH_INVALIDATE");
  EXPECT_EQ(transport_name(Transport::kSr), "SR");
}

// SR_SACK is an RC ACK with the SACKETH after its AETH; SR_HELLO a control
// packet like Homa's.
TEST(OpcodeTable, SrSackAndHello) {
  const OpcodeInfo& k = opcode_info(op::kSrSack);
  ASSERT_TRUE(k.valid);
  EXPECT_EQ(op::kSrSack, 0xc3);
  EXPECT_EQ(k.name, "SR_SACK");
  EXPECT_EQ(k.transport, Transport::kSr);
  EXPECT_EQ(k.op, OpClass::kAck);
  EXPECT_EQ(k.dir, Direction::kAck);
  EXPECT_EQ(k.pos, Position::kOnly);
  EXPECT_EQ(k.ext, ext_bit(ExtHdr::kAeth) | ext_bit(ExtHdr::kSackEth));
  EXPECT_EQ(k.ext_len, 4 + 40);
  EXPECT_FALSE(k.payload);
  const OpcodeInfo& h = opcode_info(op::kSrHello);
  ASSERT_TRUE(h.valid);
  EXPECT_EQ(op::kSrHello, 0xc4);
  EXPECT_EQ(h.transport, Transport::kExt);
  EXPECT_EQ(h.dir, Direction::kControl);
  EXPECT_EQ(h.ext, 0);
  EXPECT_TRUE(h.payload);
}

// The SR opcodes sit in the manufacturer-specific range (bits 7..5 = 110),
// SR_SACK and SR_HELLO among uroce's 0xC0..0xC7, the data opcodes at
// 0xC8..0xDF: clear of Homa's and DC's.
TEST(OpcodeTable, SrRangeIsClearOfHomaAndDc) {
  int n = 0;
  for (int o = 0; o < 256; ++o) {
    const OpcodeInfo& i = opcode_info(static_cast<std::uint8_t>(o));
    if (!i.valid || i.transport != Transport::kSr) continue;
    ++n;
    EXPECT_EQ(o >> 5, 0b110) << i.name;
    EXPECT_TRUE(o == op::kSrSack || (o >= op::kSrBase && o <= 0xdf)) << i.name;
    EXPECT_FALSE(is_dc_opcode(static_cast<std::uint8_t>(o))) << i.name;
  }
  EXPECT_EQ(n, 18);
  for (std::uint8_t o : {op::kHomaGrant, op::kHomaCutoffs, op::kHomaMlen}) {
    EXPECT_EQ(opcode_info(o).transport, Transport::kExt);
  }
}

// SR WRITE LAST/ONLY with immediate: RETH 16 + ImmDt 4 + SRETH 8 = 28, so
// 72 bytes beside a full payload; sr_fits says which path MTU may use SR.
TEST(PathMtu, SrOverheadAndFit) {
  std::size_t max_ext = 0;
  for (int o = 0; o < 256; ++o) {
    const OpcodeInfo& i = opcode_info(static_cast<std::uint8_t>(o));
    if (i.valid && i.payload && i.transport == Transport::kSr) {
      max_ext = std::max<std::size_t>(max_ext, i.ext_len);
    }
  }
  EXPECT_EQ(max_ext, RethHdr::kSize + ImmDtHdr::kSize + SrEthHdr::kSize);
  EXPECT_EQ(max_sr_payload_ext_len(), max_ext);
  EXPECT_EQ(kSrPathMtuOverhead, 72u);
  EXPECT_TRUE(sr_fits(PathMtu::k1024, 1500));
  EXPECT_TRUE(sr_fits(PathMtu::k4096, 9000));
  EXPECT_FALSE(sr_fits(PathMtu::k4096, 4167));
  EXPECT_TRUE(sr_fits(PathMtu::k4096, 4168));
  EXPECT_FALSE(sr_fits(PathMtu::k4096, 4160));  // RC's 4096 fits there
  EXPECT_EQ(path_mtu_for_eth_mtu(4160), PathMtu::k4096);
}

TEST(PadCount, RoundsUpToFour) {
  EXPECT_EQ(pad_count(0), 0);
  EXPECT_EQ(pad_count(1), 3);
  EXPECT_EQ(pad_count(2), 2);
  EXPECT_EQ(pad_count(3), 1);
  EXPECT_EQ(pad_count(4), 0);
  EXPECT_EQ(pad_count(4095), 1);
}

}  // namespace
}  // namespace uroce::wire
