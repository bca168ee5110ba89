// Fixed, fully populated packet specs for tests: every extension header an
// opcode needs is set to a distinctive value, so tests can check that each
// field lands in the right bytes.
#pragma once

#include <cstdint>
#include <span>

#include "datapath/wire/builder.h"

namespace uroce::wire::testing {

inline constexpr std::uint64_t kSampleVa = 0x0011223344556677ull;
inline constexpr std::uint32_t kSampleRkey = 0x89abcdefu;
inline constexpr std::uint32_t kSampleDmaLen = 0x00012345u;
inline constexpr std::uint32_t kSampleQkey = 0x11111111u;
inline constexpr std::uint32_t kSampleSrcQp = 0x00abcdefu;
inline constexpr std::uint64_t kSampleSwapAdd = 0x0102030405060708ull;
inline constexpr std::uint64_t kSampleCompare = 0x1112131415161718ull;
inline constexpr std::uint64_t kSampleOrig = 0x2122232425262728ull;
inline constexpr std::uint32_t kSampleImm = 0xdeadbeefu;
inline constexpr std::uint32_t kSampleInvRkey = 0x0badcafeu;
inline constexpr std::uint32_t kSampleMsn = 0x00654321u;
inline constexpr std::uint32_t kSampleQpn = 0x00123456u;
inline constexpr std::uint32_t kSamplePsn = 0x00fedcbau;
inline constexpr std::uint64_t kSampleDcKey = 0x8877665544332211ull;
inline constexpr std::uint32_t kSampleDciQpn = 0x00c0ffeeu;
inline constexpr std::uint16_t kSampleLane = 0xa55au;
inline constexpr std::uint32_t kSampleConn = 0xf00dbabeu;
inline constexpr std::uint32_t kSampleFirstPsn = 0x00fedcb0u;
inline constexpr DcStatus kSampleDcStatus = DcStatus::kOk;
inline constexpr std::uint8_t kSampleFethSel = kFethSelWholeMr;
inline constexpr std::uint8_t kSampleFethPlt = kFethPltPersistence;
inline constexpr std::uint32_t kSampleRsn = 0x00a1b2c3u;
inline constexpr std::uint32_t kSampleOffset = 0x01020304u;
inline constexpr std::uint32_t kSampleTriggerPsn = 0x00fedcb9u;
inline constexpr std::uint16_t kSampleWindow = 256;
// Bits set in the sample SACK bitmap.
inline constexpr std::size_t kSampleSackBits[] = {1, 7, 8, 63, 64, 200, 255};

inline PacketSpec sample_spec(std::uint8_t opcode, std::span<const std::uint8_t> payload = {}) {
  PacketSpec s;
  s.eth_src = MacAddr{{0x02, 0x00, 0x00, 0x00, 0x00, 0x01}};
  s.eth_dst = MacAddr{{0x02, 0x00, 0x00, 0x00, 0x00, 0x02}};
  s.ip_src = Ipv4Addr{0x0a000001};
  s.ip_dst = Ipv4Addr{0x0a000002};
  s.dscp = 26;
  s.ecn = 2;
  s.ip_id = 0x1234;
  s.udp_src = 0xc123;
  s.opcode = opcode;
  s.pkey = 0xffff;
  s.dest_qp = kSampleQpn;
  s.psn = kSamplePsn;
  s.ack_req = true;
  const OpcodeInfo& info = opcode_info(opcode);
  if (info.has(ExtHdr::kDeth)) s.deth = DethHdr::make(kSampleQkey, kSampleSrcQp);
  if (info.has(ExtHdr::kDcEth)) {
    s.dc_eth = DcEthHdr::make(kSampleDcKey, true, kSampleDciQpn, kSampleLane, kSampleConn,
                              kSampleFirstPsn);
  }
  if (info.has(ExtHdr::kDcAeth)) {
    s.dc_aeth = DcAethHdr::make(kSampleLane, kSampleDcStatus, kSampleConn);
  }
  if (info.has(ExtHdr::kFeth)) s.feth = FethHdr::make(kSampleFethSel, kSampleFethPlt);
  if (info.has(ExtHdr::kReth)) {
    s.reth = RethHdr::make(kSampleVa, kSampleRkey, kSampleDmaLen);
  }
  if (info.has(ExtHdr::kAtomicEth)) {
    s.atomic_eth = AtomicEthHdr::make(kSampleVa, kSampleRkey, kSampleSwapAdd, kSampleCompare);
  }
  if (info.has(ExtHdr::kAeth)) {
    s.aeth = AethHdr::make(aeth_ack_syndrome(), kSampleMsn);
  }
  if (info.has(ExtHdr::kAtomicAckEth)) {
    s.atomic_ack_eth = AtomicAckEthHdr::make(kSampleOrig);
  }
  if (info.has(ExtHdr::kImmDt)) s.immdt = ImmDtHdr::make(kSampleImm);
  if (info.has(ExtHdr::kIeth)) s.ieth = IethHdr::make(kSampleInvRkey);
  if (info.has(ExtHdr::kSrEth)) s.sr_eth = SrEthHdr::make(kSampleRsn, kSampleOffset);
  if (info.has(ExtHdr::kSackEth)) {
    SrSackEthHdr k = SrSackEthHdr::make(SrSackEthHdr::kFlagDup, kSampleTriggerPsn, kSampleWindow);
    for (std::size_t b : kSampleSackBits) k.set_bit(b);
    s.sack_eth = k;
  }
  if (info.op == OpClass::kCnp) {
    s.becn = true;
    s.psn = 0;
    s.ack_req = false;
  }
  s.payload = info.payload ? payload : std::span<const std::uint8_t>{};
  return s;
}

// Addresses of sample_spec_ipv6: a link-local source (from eth_src) and a
// global destination.
inline const Ipv6Addr kSampleIp6Src = Ipv6Addr::link_local(MacAddr{{2, 0, 0, 0, 0, 1}});
inline const Ipv6Addr kSampleIp6Dst = *Ipv6Addr::parse("2001:db8::2");
inline constexpr std::uint32_t kSampleFlowLabel = 0x9abcd;
inline const Ipv6Route kSampleRoute{kSampleIp6Src, kSampleIp6Dst, kSampleFlowLabel};

// sample_spec over IPv6 (traffic class 26 << 2 | 2, hop limit 64).
inline PacketSpec sample_spec_ipv6(std::uint8_t opcode,
                                   std::span<const std::uint8_t> payload = {}) {
  PacketSpec s = sample_spec(opcode, payload);
  s.ip6 = &kSampleRoute;
  return s;
}

}  // namespace uroce::wire::testing
