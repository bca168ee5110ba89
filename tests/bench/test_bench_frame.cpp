#include "bench/bench_frame.h"

#include <gtest/gtest.h>

#include <vector>

namespace uroce::bench {
namespace {

FrameSpec spec(std::uint32_t payload) {
  return FrameSpec{wire::MacAddr{{2, 0, 0, 0, 0, 1}},
                   wire::MacAddr{{2, 0, 0, 0, 0, 2}},
                   wire::Ipv4Addr{0x0a000001},
                   wire::Ipv4Addr{0x0a000002},
                   7000,
                   7001,
                   payload};
}

TEST(FrameTemplate_Write, HeadersMatchSpecAndLengths) {
  const FrameTemplate t(spec(64));
  ASSERT_EQ(t.frame_bytes(), 106u);
  std::vector<std::uint8_t> f(t.frame_bytes());
  t.write(f.data(), 42, BenchKind::kData);
  const auto eth = wire::EthHdr::read(f.data());
  EXPECT_EQ(eth.dst(), (wire::MacAddr{{2, 0, 0, 0, 0, 2}}));
  EXPECT_EQ(eth.ether_type(), wire::kEtherTypeIpv4);
  const auto ip = wire::Ipv4Hdr::read(f.data() + 14);
  EXPECT_EQ(ip.total_length(), 20 + 8 + 64);
  EXPECT_TRUE(ip.checksum_ok());
  const auto udp = wire::UdpHdr::read(f.data() + 34);
  EXPECT_EQ(udp.length(), 8 + 64);
  EXPECT_EQ(udp.dst_port(), 7001);
  const auto hdr = BenchPayloadHdr::read(f.data() + 42);
  EXPECT_EQ(hdr.magic(), kBenchMagic);
  EXPECT_EQ(hdr.seq(), 42u);
}

TEST(FrameTemplate_Write, PayloadBelowMinimumIsClamped) {
  const FrameTemplate t(spec(1));
  EXPECT_EQ(t.frame_bytes(), kFrameHeaderBytes + kMinPayload);
}

TEST(Classify_Frame, DataAndStopCarrySeq) {
  const FrameTemplate t(spec(4096));
  std::vector<std::uint8_t> f(t.frame_bytes());
  std::uint64_t seq = 0;
  t.write(f.data(), 7, BenchKind::kData);
  EXPECT_EQ(classify(f.data(), t.frame_bytes(), 7001, &seq), FrameClass::kData);
  EXPECT_EQ(seq, 7u);
  t.write(f.data(), 9, BenchKind::kStop);
  EXPECT_EQ(classify(f.data(), t.frame_bytes(), 7001, &seq), FrameClass::kStop);
  EXPECT_EQ(seq, 9u);
}

TEST(Classify_Frame, OtherPortTruncatedOrBadMagicIsForeign) {
  const FrameTemplate t(spec(64));
  std::vector<std::uint8_t> f(t.frame_bytes());
  std::uint64_t seq = 0;
  t.write(f.data(), 1, BenchKind::kData);
  EXPECT_EQ(classify(f.data(), t.frame_bytes(), 7000, &seq), FrameClass::kForeign);
  EXPECT_EQ(classify(f.data(), 57, 7001, &seq), FrameClass::kForeign);
  f[42] ^= 0xff;
  EXPECT_EQ(classify(f.data(), t.frame_bytes(), 7001, &seq), FrameClass::kForeign);
}

TEST(SwapForEcho_Frame, SwapsAddressesAndPortsKeepsChecksum) {
  const FrameTemplate t(spec(64));
  std::vector<std::uint8_t> f(t.frame_bytes());
  t.write(f.data(), 3, BenchKind::kData);
  swap_for_echo(f.data());
  const auto eth = wire::EthHdr::read(f.data());
  EXPECT_EQ(eth.src(), (wire::MacAddr{{2, 0, 0, 0, 0, 2}}));
  EXPECT_EQ(eth.dst(), (wire::MacAddr{{2, 0, 0, 0, 0, 1}}));
  const auto ip = wire::Ipv4Hdr::read(f.data() + 14);
  EXPECT_EQ(ip.src(), wire::Ipv4Addr{0x0a000002});
  EXPECT_EQ(ip.dst(), wire::Ipv4Addr{0x0a000001});
  EXPECT_TRUE(ip.checksum_ok());
  std::uint64_t seq = 0;
  EXPECT_EQ(classify(f.data(), t.frame_bytes(), 7000, &seq), FrameClass::kData);
  EXPECT_EQ(seq, 3u);
}

}  // namespace
}  // namespace uroce::bench
