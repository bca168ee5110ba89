#include "datapath/wire/opcodes.h"

#include <gtest/gtest.h>

#include <vector>

namespace uroce::wire {
namespace {

TEST(OpcodeTable, ValidOpcodesAreExactlyTheSupportedSet) {
  int n = 0;
  for (int o = 0; o < 256; ++o) {
    const bool want = (o <= 0x14) || o == 0x16 || o == 0x17 || (o >= 0x20 && o <= 0x2b) ||
                      o == 0x64 || o == 0x65 || o == 0x81 || (o >= 0xc0 && o <= 0xc2);
    EXPECT_EQ(opcode_info(static_cast<std::uint8_t>(o)).valid, want) << o;
    n += want;
  }
  EXPECT_EQ(n, 23 + 12 + 2 + 1 + 3);
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
    // uroce's control packets carry their header where a payload would be.
    const bool want = i.op == OpClass::kSend || i.op == OpClass::kWrite ||
                      i.op == OpClass::kReadResponse || i.op == OpClass::kControl;
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
  EXPECT_EQ(n, 3);
  EXPECT_EQ(opcode_name(op::kHomaGrant), "UROCE_HOMA_GRANT");
  EXPECT_EQ(opcode_name(op::kHomaCutoffs), "UROCE_HOMA_CUTOFFS");
  EXPECT_EQ(opcode_name(op::kHomaMlen), "UROCE_HOMA_MLEN");
  EXPECT_EQ(transport_name(Transport::kExt), "UROCE");
}

TEST(OpcodeName, NamesAndUnknown) {
  EXPECT_EQ(opcode_name(op::kRcSendLastInv), "RC_SEND_LAST_WITH_INVALIDATE");
  EXPECT_EQ(opcode_name(op::kUcWriteOnlyImm), "UC_RDMA_WRITE_ONLY_WITH_IMMEDIATE");
  EXPECT_EQ(opcode_name(op::kUdSendOnlyImm), "UD_SEND_ONLY_WITH_IMMEDIATE");
  EXPECT_EQ(opcode_name(0x15), "UNKNOWN");
  EXPECT_EQ(opcode_name(0x40), "UNKNOWN");
  EXPECT_EQ(transport_name(Transport::kUd), "UD");
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
TEST(PathMtu, OverheadIsTheLargestPayloadOpcodeHeaders) {
  std::size_t max_ext = 0;
  std::vector<std::uint8_t> at_max;
  for (int o = 0; o < 256; ++o) {
    const OpcodeInfo& i = opcode_info(static_cast<std::uint8_t>(o));
    if (!i.valid || !i.payload) continue;
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
