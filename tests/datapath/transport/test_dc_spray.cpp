#include "datapath/transport/dc_spray.h"

#include <gtest/gtest.h>

#include <cstring>
#include <set>

#include "datapath/port/rss.h"
#include "tests/datapath/transport/dc_sim.h"

namespace uroce::transport::dctest {
namespace {

constexpr std::uint32_t kDci = 0x10;
constexpr std::uint32_t kDct = 0x20;

// A path function whose ports show their inputs: base, path in bits 4..7,
// the IP version in bit 0.
std::uint16_t fake_path_port(std::uint16_t base, std::uint32_t path, bool ipv6) {
  return static_cast<std::uint16_t>(base ^ (path << 4) ^ (ipv6 ? 1u : 0u));
}

TEST(DcSpray_Begin, OffBelowTwoPathsOrWithoutAPathFunction) {
  SrSpray s;
  s.configure(std::array<std::uint16_t, 2>{1, 2});
  DcSpray one({1, false, &fake_path_port});
  one.begin(s, 0xC000, false);
  EXPECT_FALSE(s.on());
  s.configure(std::array<std::uint16_t, 2>{1, 2});
  DcSpray no_fn({4, false, nullptr});
  no_fn.begin(s, 0xC000, false);
  EXPECT_FALSE(s.on());
}

TEST(DcSpray_Begin, PortsOfTheBaseAndIpVersionComputedOnce) {
  DcSpray d({4, true, &fake_path_port});
  SrSpray s;
  d.begin(s, 0xC100, false);
  ASSERT_TRUE(s.on());
  ASSERT_EQ(s.paths(), 4u);
  for (std::uint32_t i = 0; i < 4; ++i) EXPECT_EQ(s.port(i), fake_path_port(0xC100, i, false));
  EXPECT_TRUE(s.ecn());
  EXPECT_EQ(d.computed(), 1u);
  // The same base again: copied, with every path usable again.
  s.sent(Psn(0), 1);
  s.charge(Psn(0));
  ASSERT_EQ(s.avoided_now(), 1u);
  d.begin(s, 0xC100, false);
  EXPECT_EQ(d.computed(), 1u);
  EXPECT_EQ(s.avoided_now(), 0u);
  // The other IP version is hashed over another tuple: its own ports.
  d.begin(s, 0xC100, true);
  EXPECT_EQ(d.computed(), 2u);
  EXPECT_EQ(s.port(3), fake_path_port(0xC100, 3, true));
  // IPv4 from the same base still copies; a new base computes.
  d.begin(s, 0xC100, false);
  EXPECT_EQ(d.computed(), 2u);
  d.begin(s, 0xC200, false);
  EXPECT_EQ(d.computed(), 3u);
  EXPECT_EQ(s.port(1), fake_path_port(0xC200, 1, false));
}

TEST(DcSpray_Begin, PathsCappedAtTheSprayMaximum) {
  DcSpray d({100, false, &fake_path_port});
  EXPECT_EQ(d.config().paths, SrSpray::kMaxPaths);
  SrSpray s;
  d.begin(s, 0xC000, false);
  EXPECT_EQ(s.paths(), SrSpray::kMaxPaths);
}

DcTargetLimits small_pool() {
  DcTargetLimits l;
  l.contexts = 16;
  l.records_log2 = 8;
  return l;
}

constexpr DcSprayConfig kFourPaths{4, false, &port::path_src_port};

// Both devices spray over 4 paths: a DCI's requests leave from its port's
// 4 paths (each keeping the receiver's RX queue: port::path_src_port), the
// target's answers (one per WRITE here, each waited for) rotate over its
// DCT port's paths, and the bytes arrive.
TEST(DcSr_Spray, RequestsAndAnswersRotateOverThePaths) {
  DcSim s(clean_link(), 2 << 20, small_pool(), true, kFourPaths);
  s.spray_a = kFourPaths;
  DciQp& dci = s.add_dci(kDci, 0, 0, 7, 10, true);
  DctQp& dct = s.add_dct(kDct);
  constexpr std::uint32_t kWrite = 64 * 1024;
  for (std::size_t i = 0; i < kWrite; ++i) s.mem_a[i] = static_cast<std::uint8_t>(i * 7);
  for (std::size_t i = 0; i < 4; ++i) {
    ASSERT_EQ(dci.post_send(s.wr(i, WrOpcode::kRdmaWrite, kDct, 0, kWrite / 4, i * kWrite / 4)), 0);
    ASSERT_TRUE(s.run([&] { return s.scq_a.wc.size() == i + 1; }, 10 * kNsPerMs));
    EXPECT_EQ(s.scq_a.wc[i].status, 0u);
  }
  for (std::size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(std::memcmp(s.mem_a.data(), s.mem_b.data() + i * kWrite / 4, kWrite / 4), 0) << i;
  }
  const std::uint16_t dci_base = dci.lane(0).udp_src();
  std::set<std::uint16_t> want_req;
  for (std::uint32_t i = 0; i < 4; ++i) want_req.insert(port::path_src_port(dci_base, i, false));
  std::set<std::uint16_t> got_req;
  for (const auto& [p, n] : s.src_ports[1]) got_req.insert(p);
  EXPECT_EQ(got_req, want_req);
  // 64 packets at path MTU 1024, 16 on each path.
  for (const auto& [p, n] : s.src_ports[1]) EXPECT_EQ(n, 16u) << p;
  const std::uint16_t dct_base = rxe_udp_src_port(kDct);
  std::set<std::uint16_t> want_ack;
  for (std::uint32_t i = 0; i < 4; ++i) want_ack.insert(port::path_src_port(dct_base, i, false));
  EXPECT_EQ(s.src_ports[0].size(), 4u);
  for (const auto& [p, n] : s.src_ports[0]) EXPECT_TRUE(want_ack.count(p) == 1) << p;
  EXPECT_EQ(dci.sr_counters().sr_spray_tx, 64u);
  EXPECT_GT(dct.sr_counters().sr_spray_acks, 0u);
}

// One of the DCI's 4 paths is dead (every request frame on it lost): the
// holes it leaves are charged to it and it is avoided, so it carries less
// than its round-robin share, and every WRITE completes with its bytes
// without a retransmission timeout.
TEST(DcSr_Spray, DeadPathAvoidedWithoutTimeouts) {
  DcSim s(clean_link(), 2 << 20, small_pool(), true, kFourPaths);
  s.spray_a = kFourPaths;
  DciQp& dci = s.add_dci(kDci, 0, 0, 7, 12, true);
  s.add_dct(kDct);
  const std::uint16_t dead = port::path_src_port(dci.lane(0).udp_src(), 2, false);
  s.drop_rx = [&](unsigned ep, const wire::ParsedPacket& p) {
    return ep == 1 && p.udp.src_port() == dead;
  };
  constexpr std::uint32_t kWrite = 64 * 1024;
  for (std::size_t i = 0; i < kWrite; ++i) s.mem_a[i] = static_cast<std::uint8_t>(i * 13);
  for (std::uint64_t i = 0; i < 8; ++i) {
    ASSERT_EQ(dci.post_send(s.wr(i, WrOpcode::kRdmaWrite, kDct, 0, kWrite, i * kWrite)), 0);
  }
  ASSERT_TRUE(s.run([&] { return s.scq_a.wc.size() == 8; }, kNsPerSec));
  for (const auto& wc : s.scq_a.wc) EXPECT_EQ(wc.status, 0u) << wc.wr_id;
  for (std::uint64_t i = 0; i < 8; ++i) {
    EXPECT_EQ(std::memcmp(s.mem_a.data(), s.mem_b.data() + i * kWrite, kWrite), 0) << i;
  }
  std::uint64_t total = 0;
  for (const auto& [p, n] : s.src_ports[1]) total += n;
  EXPECT_LT(s.src_ports[1][dead] * 4, total);
  const RcSrCounters sr = dci.sr_counters();
  EXPECT_GT(sr.sr_spray_losses, 0u);
  EXPECT_GT(sr.sr_spray_avoided, 0u);
  EXPECT_EQ(dci.rc_counters().timeouts, 0u);
  EXPECT_EQ(dci.rc_counters().go_back_n, 0u);
}

// Without `lossy` the spray keys do nothing: a DC connection in go-back-N
// keeps the DCI's one port.
TEST(DcSr_Spray, GoBackNKeepsOnePort) {
  DcSim s(clean_link(), 1 << 20, small_pool(), false, kFourPaths);
  s.spray_a = kFourPaths;
  DciQp& dci = s.add_dci(kDci, 0, 0, 7, 10, false);
  s.add_dct(kDct);
  ASSERT_EQ(dci.post_send(s.wr(1, WrOpcode::kRdmaWrite, kDct, 0, 16 * 1024)), 0);
  ASSERT_TRUE(s.run([&] { return s.scq_a.wc.size() == 1; }, 10 * kNsPerMs));
  EXPECT_EQ(s.scq_a.wc[0].status, 0u);
  ASSERT_EQ(s.src_ports[1].size(), 1u);
  EXPECT_EQ(s.src_ports[1].begin()->first, dci.lane(0).udp_src());
  EXPECT_EQ(s.src_ports[0].size(), 1u);
}

}  // namespace
}  // namespace uroce::transport::dctest
