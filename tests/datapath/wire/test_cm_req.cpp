#include "datapath/wire/cm_req.h"

#include <gtest/gtest.h>

namespace uroce::wire {
namespace {

CmReq sample() {
  CmReq m;
  m.set_local_comm_id(0x11223344);
  m.set_service_id(0x0000000001060000ull | 7174);
  m.set_local_ca_guid(0x0200000000000001ull);
  m.set_local_qkey(0);
  m.set_local_qpn(0x000011);
  m.set_responder_resources(16);
  m.set_initiator_depth(16);
  m.set_remote_cm_response_timeout(20);
  m.set_transport_type(kCmTransportRc);
  m.set_flow_control(true);
  m.set_starting_psn(0xabcdef);
  m.set_local_cm_response_timeout(20);
  m.set_retry_count(7);
  m.set_pkey(0xffff);
  m.set_path_mtu(5);
  m.set_rnr_retry_count(7);
  m.set_max_cm_retries(15);
  m.set_srq(false);
  m.set_primary_local_lid(0xffff);
  m.set_primary_remote_lid(0xffff);
  m.set_primary_flow_label(0xfffff);
  m.set_primary_packet_rate(3);
  m.set_primary_hop_limit(64);
  m.set_primary_sl(0);
  m.set_primary_subnet_local(true);
  m.set_primary_local_ack_timeout(18);
  return m;
}

TEST(CmReq_Accessors, RoundTripEveryField) {
  const CmReq r = CmReq::read(sample().raw);
  EXPECT_EQ(r.local_comm_id(), 0x11223344u);
  EXPECT_EQ(r.service_id(), 0x0000000001060000ull | 7174);
  EXPECT_EQ(r.local_ca_guid(), 0x0200000000000001ull);
  EXPECT_EQ(r.local_qpn(), 0x11u);
  EXPECT_EQ(r.responder_resources(), 16);
  EXPECT_EQ(r.initiator_depth(), 16);
  EXPECT_EQ(r.remote_cm_response_timeout(), 20);
  EXPECT_EQ(r.transport_type(), kCmTransportRc);
  EXPECT_TRUE(r.flow_control());
  EXPECT_EQ(r.starting_psn(), 0xabcdefu);
  EXPECT_EQ(r.local_cm_response_timeout(), 20);
  EXPECT_EQ(r.retry_count(), 7);
  EXPECT_EQ(r.pkey(), 0xffff);
  EXPECT_EQ(r.path_mtu(), 5);
  EXPECT_FALSE(r.rdc_exists());
  EXPECT_EQ(r.rnr_retry_count(), 7);
  EXPECT_EQ(r.max_cm_retries(), 15);
  EXPECT_FALSE(r.srq());
  EXPECT_EQ(r.primary_local_lid(), 0xffff);
  EXPECT_EQ(r.primary_flow_label(), 0xfffffu);
  EXPECT_EQ(r.primary_packet_rate(), 3);
  EXPECT_EQ(r.primary_hop_limit(), 64);
  EXPECT_TRUE(r.primary_subnet_local());
  EXPECT_EQ(r.primary_local_ack_timeout(), 18);
}

TEST(CmReq_Layout, BitFieldsSitWhereIbtaPutsThem) {
  const CmReq m = sample();
  // 40..43: remote EECN 0 | timeout 20 (10100) | RC (00) | flow control 1.
  EXPECT_EQ(m.raw[43], 0xa1);
  // 44..47: PSN | local timeout 20 | retry 7.
  EXPECT_EQ(m.raw[44], 0xab);
  EXPECT_EQ(m.raw[47], 0xa7);
  // 50: MTU 5 | RDC 0 | RNR 7; 51: max retries 15 | SRQ 0 | ext 0.
  EXPECT_EQ(m.raw[50], 0x57);
  EXPECT_EQ(m.raw[51], 0xf0);
  // 88..91: flow label 0xfffff << 12 | rate 3.
  EXPECT_EQ(m.raw[88], 0xff);
  EXPECT_EQ(m.raw[90], 0xf0);
  EXPECT_EQ(m.raw[91], 0x03);
  EXPECT_EQ(m.raw[94], 0x08);
  EXPECT_EQ(m.raw[95], 18 << 3);
}

TEST(CmReq_SetPrivateData, TruncatesToTheField) {
  CmReq m;
  std::uint8_t big[200];
  for (std::size_t i = 0; i < sizeof(big); ++i) big[i] = static_cast<std::uint8_t>(i + 1);
  m.set_private_data(big, sizeof(big));
  EXPECT_EQ(m.private_data()[0], 1);
  EXPECT_EQ(m.private_data()[CmReq::kPrivateBytes - 1], CmReq::kPrivateBytes);
  EXPECT_EQ(m.raw[CmReq::kPrivateOffset - 1], 0);
}

TEST(CmReq_Gids, RoundTrip) {
  CmReq m;
  std::array<std::uint8_t, 16> g{};
  g[10] = 0xff;
  g[11] = 0xff;
  g[15] = 9;
  m.set_primary_remote_gid(g);
  EXPECT_EQ(m.primary_remote_gid(), g);
  EXPECT_EQ(m.raw[72 + 15], 9);
}

}  // namespace
}  // namespace uroce::wire
