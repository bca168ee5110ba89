// MRA, REJ, REP, RTU, DREQ, DREP and the IP private-data header: each field
// at its IBTA offset, and back.
#include <gtest/gtest.h>

#include "datapath/wire/cm_drep.h"
#include "datapath/wire/cm_dreq.h"
#include "datapath/wire/cm_ip_private.h"
#include "datapath/wire/cm_mra.h"
#include "datapath/wire/cm_rej.h"
#include "datapath/wire/cm_rep.h"
#include "datapath/wire/cm_rtu.h"
#include "datapath/wire/cm_sidr_rep.h"
#include "datapath/wire/cm_sidr_req.h"

namespace uroce::wire {
namespace {

TEST(CmMra_Accessors, LayoutAndRoundTrip) {
  CmMra m;
  m.set_local_comm_id(1);
  m.set_remote_comm_id(2);
  m.set_message_mraed(kCmMsgRep);
  m.set_service_timeout(23);
  EXPECT_EQ(m.raw[3], 1);
  EXPECT_EQ(m.raw[7], 2);
  EXPECT_EQ(m.raw[8], 0x40);
  EXPECT_EQ(m.raw[9], 23 << 3);
  const CmMra r = CmMra::read(m.raw);
  EXPECT_EQ(r.message_mraed(), kCmMsgRep);
  EXPECT_EQ(r.service_timeout(), 23);
}

TEST(CmRej_Accessors, LayoutAndRoundTrip) {
  CmRej m;
  m.set_local_comm_id(0xa);
  m.set_remote_comm_id(0xb);
  m.set_message_rejected(kCmMsgReq);
  m.set_reject_info_length(3);
  m.set_reason(kRejInvalidServiceId);
  const char pd[] = "no";
  m.set_private_data(pd, sizeof(pd));
  EXPECT_EQ(m.raw[9], 3 << 1);
  EXPECT_EQ(m.raw[11], 8);
  EXPECT_EQ(m.raw[84], 'n');
  const CmRej r = CmRej::read(m.raw);
  EXPECT_EQ(r.local_comm_id(), 0xau);
  EXPECT_EQ(r.remote_comm_id(), 0xbu);
  EXPECT_EQ(r.message_rejected(), kCmMsgReq);
  EXPECT_EQ(r.reject_info_length(), 3);
  EXPECT_EQ(r.reason(), kRejInvalidServiceId);
}

TEST(CmRep_Accessors, LayoutAndRoundTrip) {
  CmRep m;
  m.set_local_comm_id(5);
  m.set_remote_comm_id(6);
  m.set_local_qkey(0x12345678);
  m.set_local_qpn(0x123456);
  m.set_starting_psn(0x654321);
  m.set_responder_resources(4);
  m.set_initiator_depth(8);
  m.set_target_ack_delay(31);
  m.set_failover_accepted(2);
  m.set_flow_control(true);
  m.set_rnr_retry_count(5);
  m.set_srq(true);
  m.set_local_ca_guid(0x0102030405060708ull);
  EXPECT_EQ(m.raw[12], 0x12);
  EXPECT_EQ(m.raw[15], 0);
  EXPECT_EQ(m.raw[26], 0xfd);
  EXPECT_EQ(m.raw[27], 0xb0);
  EXPECT_EQ(m.raw[28], 1);
  const CmRep r = CmRep::read(m.raw);
  EXPECT_EQ(r.local_qkey(), 0x12345678u);
  EXPECT_EQ(r.local_qpn(), 0x123456u);
  EXPECT_EQ(r.starting_psn(), 0x654321u);
  EXPECT_EQ(r.responder_resources(), 4);
  EXPECT_EQ(r.initiator_depth(), 8);
  EXPECT_EQ(r.target_ack_delay(), 31);
  EXPECT_EQ(r.failover_accepted(), 2);
  EXPECT_TRUE(r.flow_control());
  EXPECT_EQ(r.rnr_retry_count(), 5);
  EXPECT_TRUE(r.srq());
  EXPECT_EQ(r.local_ca_guid(), 0x0102030405060708ull);
}

TEST(CmRtu_Accessors, RoundTrip) {
  CmRtu m;
  m.set_local_comm_id(7);
  m.set_remote_comm_id(8);
  const CmRtu r = CmRtu::read(m.raw);
  EXPECT_EQ(r.local_comm_id(), 7u);
  EXPECT_EQ(r.remote_comm_id(), 8u);
}

TEST(CmDreq_Accessors, RoundTrip) {
  CmDreq m;
  m.set_local_comm_id(9);
  m.set_remote_comm_id(10);
  m.set_remote_qpn(0xfedcba);
  EXPECT_EQ(m.raw[8], 0xfe);
  EXPECT_EQ(m.raw[11], 0);
  EXPECT_EQ(CmDreq::read(m.raw).remote_qpn(), 0xfedcbau);
}

TEST(CmDrep_Accessors, RoundTrip) {
  CmDrep m;
  m.set_local_comm_id(11);
  m.set_remote_comm_id(12);
  const CmDrep r = CmDrep::read(m.raw);
  EXPECT_EQ(r.local_comm_id(), 11u);
  EXPECT_EQ(r.remote_comm_id(), 12u);
}

TEST(CmIpPrivate_MakeV4, Layout) {
  const CmIpPrivate h = CmIpPrivate::make_v4(0x1234, 0x0a000001, 0x0a000002);
  EXPECT_EQ(h.raw[0], 0);
  EXPECT_EQ(h.raw[1], 0x40);
  EXPECT_EQ(h.raw[2], 0x12);
  EXPECT_EQ(h.raw[19], 1);
  EXPECT_EQ(h.raw[35], 2);
  EXPECT_EQ(h.ip_version(), 4);
  EXPECT_EQ(h.src_port(), 0x1234);
  EXPECT_EQ(h.src_v4(), 0x0a000001u);
  EXPECT_EQ(h.dst_v4(), 0x0a000002u);
}

TEST(CmIpPrivate_ServiceId, TcpPortRoundTripAndForeignIdRefused) {
  EXPECT_EQ(ip_service_id(kIpProtoTcp, 7174), 0x0000000001061c06ull);
  std::uint8_t proto = 0;
  std::uint16_t port = 0;
  ASSERT_TRUE(parse_ip_service_id(0x0000000001061c06ull, &proto, &port));
  EXPECT_EQ(proto, kIpProtoTcp);
  EXPECT_EQ(port, 7174);
  EXPECT_FALSE(parse_ip_service_id(0x1000000001061c06ull, &proto, &port));
}

TEST(CmSidrReq_Accessors, LayoutAndRoundTrip) {
  CmSidrReq m;
  m.set_request_id(0x01020304);
  m.set_pkey(0xffff);
  m.set_service_id(0x0000000001110000ull | 7174);
  EXPECT_EQ(m.raw[3], 4);
  EXPECT_EQ(m.raw[4], 0xff);
  EXPECT_EQ(m.raw[13], 0x11);
  const CmSidrReq r = CmSidrReq::read(m.raw);
  EXPECT_EQ(r.request_id(), 0x01020304u);
  EXPECT_EQ(r.pkey(), 0xffff);
  EXPECT_EQ(r.service_id(), 0x0000000001110000ull | 7174);
}

TEST(CmSidrRep_Accessors, LayoutAndRoundTrip) {
  CmSidrRep m;
  m.set_request_id(7);
  m.set_status(kSidrRejected);
  m.set_qpn(0xabcdef);
  m.set_service_id(0x1122334455667788ull);
  m.set_qkey(0x01234567);
  EXPECT_EQ(m.raw[4], 2);
  EXPECT_EQ(m.raw[8], 0xab);
  EXPECT_EQ(m.raw[11], 0);
  EXPECT_EQ(m.raw[12], 0x11);
  EXPECT_EQ(m.raw[20], 0x01);
  const CmSidrRep r = CmSidrRep::read(m.raw);
  EXPECT_EQ(r.request_id(), 7u);
  EXPECT_EQ(r.status(), kSidrRejected);
  EXPECT_EQ(r.qpn(), 0xabcdefu);
  EXPECT_EQ(r.service_id(), 0x1122334455667788ull);
  EXPECT_EQ(r.qkey(), 0x01234567u);
}

}  // namespace
}  // namespace uroce::wire
