// QP1 (datapath/engine/vnic/gsi.h): a MAD sent from one Vnic's QP1 arrives
// in the other's GsiQueue with its sender; datagrams to QP1 with the wrong
// opcode, Q_Key or length are dropped and counted by reason.
#include <gtest/gtest.h>

#include "datapath/wire/builder.h"
#include "tests/datapath/engine/vnic_test_support.h"

namespace uroce::engine::test {
namespace {

using Mad = std::array<std::uint8_t, wire::kMadBytes>;

Mad sample_mad() {
  Mad m{};
  for (std::size_t i = 0; i < m.size(); ++i) m[i] = static_cast<std::uint8_t>(i);
  return m;
}

struct Gsi : TwoHosts {};

TEST_F(Gsi, GsiSend_MadArrivesInThePeersQueueWithItsSender) {
  const Mad m = sample_mad();
  ASSERT_EQ(a.vnic.gsi_send(kIpB, kMacB, m), 0);
  ASSERT_EQ(a.vnic.gsi_send(kIpB, kMacB, m), 0);
  run(6);
  std::vector<GsiMad> got;
  EXPECT_EQ(b.vnic.gsi_drain(&got), 2u);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].peer_ip, kIpA);
  EXPECT_EQ(got[0].peer_mac, kMacA);
  EXPECT_EQ(got[0].src_qp, wire::kGsiQpn);
  EXPECT_EQ(got[0].mad, m);
  EXPECT_EQ(a.vnic.counters().tx_gsi, 2u);
  EXPECT_EQ(b.vnic.counters().rx_gsi, 2u);
  EXPECT_EQ(b.vnic.counters().rx_no_qp, 0u);
  EXPECT_EQ(b.vnic.gsi_drain(&got), 0u);
}

// Injects a frame into B's port as if A had sent it.
void inject(TwoHosts& t, const wire::PacketSpec& spec) {
  std::vector<std::uint8_t> f(wire::kMaxRoceFrame);
  const int n = wire::build_roce(spec, f);
  ASSERT_GT(n, 0);
  f.resize(static_cast<std::size_t>(n));
  auto tx = t.a.io.tx().tx_alloc(f.size());
  ASSERT_GE(tx.size(), f.size());
  std::memcpy(tx.data(), f.data(), f.size());
  t.a.io.tx().tx_commit(f.size());
  t.a.io.flush();
}

wire::PacketSpec to_qp1(std::span<const std::uint8_t> payload) {
  wire::PacketSpec s;
  s.eth_src = kMacA;
  s.eth_dst = kMacB;
  s.ip_src = kIpA;
  s.ip_dst = kIpB;
  s.opcode = wire::op::kUdSendOnly;
  s.dest_qp = wire::kGsiQpn;
  s.deth = wire::DethHdr::make(wire::kGsiQkey, 1);
  s.payload = payload;
  return s;
}

TEST_F(Gsi, GsiRx_BadQkeyOpcodeAndLengthAreCountedNotQueued) {
  const Mad m = sample_mad();
  wire::PacketSpec s = to_qp1(m);
  s.deth = wire::DethHdr::make(0x1234, 1);
  inject(*this, s);
  s = to_qp1(std::span<const std::uint8_t>(m.data(), 100));
  inject(*this, s);
  s = to_qp1(m);
  s.opcode = wire::op::kUdSendOnlyImm;
  s.immdt = wire::ImmDtHdr{};
  inject(*this, s);
  run(6);
  std::vector<GsiMad> got;
  EXPECT_EQ(b.vnic.gsi_drain(&got), 0u);
  EXPECT_EQ(b.vnic.counters().rx_gsi_bad_qkey, 1u);
  EXPECT_EQ(b.vnic.counters().rx_gsi_bad_length, 1u);
  EXPECT_EQ(b.vnic.counters().rx_gsi_bad_opcode, 1u);
  EXPECT_EQ(b.vnic.counters().rx_gsi, 0u);
}

TEST_F(Gsi, GsiRx_FullQueueDropsAndCounts) {
  const Mad m = sample_mad();
  const int extra = 3;
  for (int i = 0; i < 64 + extra; ++i) {
    ASSERT_EQ(a.vnic.gsi_send(kIpB, kMacB, m), 0);
    run(1);
  }
  run(6);
  EXPECT_EQ(b.vnic.counters().rx_gsi, 64u);
  EXPECT_EQ(b.vnic.counters().rx_gsi_full, static_cast<std::uint64_t>(extra));
}

}  // namespace
}  // namespace uroce::engine::test
