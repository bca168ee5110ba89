#include "testbed/pcap_tap.h"

#include <gtest/gtest.h>

#include <unistd.h>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "datapath/wire/parser.h"
#include "tests/testbed/test_support.h"

namespace uroce::testbed {
namespace {

Topology topo_of(const Scenario& sc) {
  Topology t;
  EXPECT_EQ(resolve(sc, t), "");
  return t;
}

SwitchPacket packet(std::uint32_t bytes) {
  SwitchPacket p;
  p.src = 0;
  p.dst = 1;
  p.flow = 4;
  p.seq = 0x1234567;
  p.prio = 3;
  p.ttl = 41;
  p.ecn = kEcnCe;
  p.bytes = bytes;
  return p;
}

TEST(PcapTap_Frame, IsAValidRoceV2FrameOfTheModelledLength) {
  const Topology t = topo_of(testing::line());
  std::vector<std::uint8_t> buf(8192);
  for (const std::uint32_t len : {66u, 1000u, 1001u, 1027u, 4162u}) {
    const std::size_t n = build_data_frame(t, 2, 1, packet(len), buf);
    ASSERT_EQ(n, len);
    wire::ParsedPacket pp;
    ASSERT_EQ(wire::parse_roce(std::span<const std::uint8_t>(buf.data(), n), pp),
              wire::ParseError::kOk)
        << len;
    EXPECT_EQ(pp.eth.src(), t.macs[2]);
    EXPECT_EQ(pp.eth.dst(), t.macs[1]);
    EXPECT_EQ(pp.ip.src(), t.ips[0]);
    EXPECT_EQ(pp.ip.dst(), t.ips[1]);
    EXPECT_EQ(pp.ip.ttl(), 41);
    EXPECT_EQ(pp.ip.dscp(), 24);
    EXPECT_EQ(pp.ip.ecn(), 3);
    EXPECT_EQ(pp.bth.opcode(), wire::op::kUdSendOnly);
    EXPECT_EQ(pp.bth.dest_qp(), 5u);
    EXPECT_EQ(pp.bth.psn(), 0x234567u);
    EXPECT_LE(len - pp.frame_len, 3u);  // Ethernet trailer for alignment
  }
  EXPECT_EQ(build_data_frame(t, 2, 1, packet(65), buf), 0u);
  EXPECT_EQ(build_data_frame(t, 2, 1, packet(1000), std::span<std::uint8_t>(buf.data(), 999)), 0u);
}

TEST(PcapTap_Files, OneFilePerTappedLinkWithEveryFrame) {
  Scenario sc = testing::line();
  sc.output.pcap_links = {"s1-h2"};
  const Topology t = topo_of(sc);
  const std::string dir =
      (std::filesystem::temp_directory_path() / ("uroce-pcaptap-" + std::to_string(::getpid())))
          .string();
  std::filesystem::create_directories(dir);
  PcapTap tap;
  ASSERT_EQ(tap.open(t, dir, 128), "");
  tap.write_data(1, 1000, 2, 1, packet(1000));
  ControlFrame c;
  c.len = static_cast<std::uint8_t>(
      wire::build_pfc_pause(std::span<std::uint8_t>(c.bytes.data(), c.bytes.size()), t.macs[1],
                            0x08, 7));
  tap.write_control(1, 2000, c);
  tap.write_data(0, 3000, 0, 2, packet(1000));  // h1-s1 is not tapped
  EXPECT_EQ(tap.close(), "");
  EXPECT_EQ(tap.frames(), 2u);
  EXPECT_FALSE(std::filesystem::exists(dir + "/h1-s1.pcap"));
  std::ifstream in(dir + "/s1-h2.pcap", std::ios::binary);
  const std::vector<char> bytes{std::istreambuf_iterator<char>(in), {}};
  // Global header 24 + (16 + 128 snapped) + (16 + 60).
  EXPECT_EQ(bytes.size(), 24u + 16u + 128u + 16u + 60u);
  std::filesystem::remove_all(dir);
  PcapTap bad;
  EXPECT_EQ(bad.open(t, "/nonexistent-dir-uroce", 128),
            "/nonexistent-dir-uroce/s1-h2.pcap: No such file or directory");
}

}  // namespace
}  // namespace uroce::testbed
