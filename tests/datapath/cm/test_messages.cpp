#include "datapath/cm/messages.h"

#include <gtest/gtest.h>

#include "datapath/wire/cm_req.h"

namespace uroce::cm {
namespace {

TEST(Messages_BuildReq, IpHeaderGidsAndServiceId) {
  ReqFields f;
  f.local_id = 42;
  f.service_id = wire::ip_service_id(wire::kIpProtoTcp, 7174);
  f.local.qpn = 0x11;
  f.local_ip = 0x0a000001;
  f.remote_ip = 0x0a000002;
  f.src_port = 1234;
  f.consumer.len = 2;
  f.consumer.b[0] = 0xaa;
  f.consumer.b[1] = 0xbb;
  const Mad m = build_req(f, 0x77);
  wire::CmAttr attr{};
  ASSERT_EQ(check_header(m, &attr), HeaderCheck::kOk);
  EXPECT_EQ(attr, wire::CmAttr::kReq);
  const wire::CmReq r = wire::CmReq::read(m.data());
  EXPECT_EQ(r.local_comm_id(), 42u);
  EXPECT_EQ(r.primary_local_gid(), ipv4_gid(0x0a000001));
  EXPECT_EQ(r.primary_remote_gid()[15], 2);
  EXPECT_EQ(r.primary_local_lid(), kPermissiveLid);
  const wire::CmIpPrivate ip = wire::CmIpPrivate::read(r.private_data());
  EXPECT_EQ(ip.src_port(), 1234);
  EXPECT_EQ(ip.dst_v4(), 0x0a000002u);
  EXPECT_EQ(r.private_data()[wire::CmIpPrivate::kSize], 0xaa);
  EXPECT_EQ(r.private_data()[wire::CmIpPrivate::kSize + 1], 0xbb);
}

TEST(Messages_Ipv4Gid, MappedAddress) {
  const auto g = ipv4_gid(0xc0a80001);
  const std::array<std::uint8_t, 16> want = {0, 0, 0,    0,    0,   0,   0, 0,
                                             0, 0, 0xff, 0xff, 192, 168, 0, 1};
  EXPECT_EQ(g, want);
}

TEST(Messages_CheckHeader, LapIsAnUnknownAttribute) {
  Mad m = cm_mad(wire::CmAttr::kLap, 1);
  wire::CmAttr attr{};
  EXPECT_EQ(check_header(m, &attr), HeaderCheck::kUnknownAttr);
  m.b[2] = 1;
  EXPECT_EQ(check_header(m, &attr), HeaderCheck::kBadHeader);
}

}  // namespace
}  // namespace uroce::cm
