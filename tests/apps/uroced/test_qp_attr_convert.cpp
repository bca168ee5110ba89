#include "apps/uroced/qp_attr_convert.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <cstring>

namespace uroce::daemon {
namespace {

namespace qa = transport::qp_attr;

const engine::PfcEndpointConfig kPfc{};

ibv_ah_attr av_to(std::uint8_t a, std::uint8_t b, std::uint8_t c, std::uint8_t d) {
  ibv_ah_attr ah{};
  ah.is_global = 1;
  ah.port_num = 1;
  ah.grh.sgid_index = 1;
  ah.grh.hop_limit = 7;
  ah.grh.traffic_class = 0xb8;  // DSCP 46
  ah.grh.dgid.raw[10] = 0xff;
  ah.grh.dgid.raw[11] = 0xff;
  ah.grh.dgid.raw[12] = a;
  ah.grh.dgid.raw[13] = b;
  ah.grh.dgid.raw[14] = c;
  ah.grh.dgid.raw[15] = d;
  return ah;
}

TEST(ValuesFromIbv_Valid, CopiesSelectedFields) {
  ibv_qp_attr a{};
  a.qp_state = IBV_QPS_RTS;
  a.sq_psn = 0xabcdef;
  a.timeout = 14;
  a.retry_cnt = 7;
  a.rnr_retry = 7;
  a.max_rd_atomic = 16;
  a.qkey = 0x11111111;  // not in the mask: left alone
  transport::QpAttrValues v;
  ASSERT_EQ(values_from_ibv(qa::kState | qa::kSqPsn | qa::kTimeout | qa::kRetryCnt | qa::kRnrRetry |
                                qa::kMaxQpRdAtomic,
                            a, wire::PathMtu::k4096, 16, &v),
            0);
  EXPECT_EQ(v.qp_state, transport::QpState::kRts);
  EXPECT_EQ(v.sq_psn, 0xabcdefu);
  EXPECT_EQ(v.timeout, 14);
  EXPECT_EQ(v.retry_cnt, 7);
  EXPECT_EQ(v.max_rd_atomic, 16);
  EXPECT_EQ(v.qkey, 0u);
}

TEST(ValuesFromIbv_Ranges, Einval) {
  transport::QpAttrValues v;
  auto check = [&](std::uint32_t mask, auto set) {
    ibv_qp_attr a{};
    a.port_num = 1;
    a.path_mtu = IBV_MTU_1024;
    set(a);
    return values_from_ibv(mask, a, wire::PathMtu::k1024, 16, &v);
  };
  EXPECT_EQ(check(qa::kState, [](ibv_qp_attr& a) { a.qp_state = static_cast<ibv_qp_state>(7); }),
            EINVAL);
  EXPECT_EQ(check(qa::kPathMtu, [](ibv_qp_attr& a) { a.path_mtu = IBV_MTU_2048; }), EINVAL);
  EXPECT_EQ(check(qa::kPathMtu, [](ibv_qp_attr& a) { a.path_mtu = static_cast<ibv_mtu>(0); }),
            EINVAL);
  EXPECT_EQ(check(qa::kPathMtu, [](ibv_qp_attr&) {}), 0);
  EXPECT_EQ(check(qa::kTimeout, [](ibv_qp_attr& a) { a.timeout = 32; }), EINVAL);
  EXPECT_EQ(check(qa::kRetryCnt, [](ibv_qp_attr& a) { a.retry_cnt = 8; }), EINVAL);
  EXPECT_EQ(check(qa::kRnrRetry, [](ibv_qp_attr& a) { a.rnr_retry = 8; }), EINVAL);
  EXPECT_EQ(check(qa::kMinRnrTimer, [](ibv_qp_attr& a) { a.min_rnr_timer = 32; }), EINVAL);
  EXPECT_EQ(check(qa::kMaxQpRdAtomic, [](ibv_qp_attr& a) { a.max_rd_atomic = 17; }), EINVAL);
  EXPECT_EQ(check(qa::kMaxDestRdAtomic, [](ibv_qp_attr& a) { a.max_dest_rd_atomic = 17; }), EINVAL);
  EXPECT_EQ(check(qa::kPort, [](ibv_qp_attr& a) { a.port_num = 2; }), EINVAL);
  EXPECT_EQ(check(qa::kPkeyIndex, [](ibv_qp_attr& a) { a.pkey_index = 1; }), EINVAL);
  EXPECT_EQ(check(qa::kDestQpn, [](ibv_qp_attr& a) { a.dest_qp_num = 1u << 24; }), EINVAL);
  EXPECT_EQ(check(qa::kRqPsn, [](ibv_qp_attr& a) { a.rq_psn = 1u << 24; }), EINVAL);
  EXPECT_EQ(check(qa::kSqPsn, [](ibv_qp_attr& a) { a.sq_psn = 1u << 24; }), EINVAL);
  EXPECT_EQ(check(qa::kAccessFlags, [](ibv_qp_attr& a) { a.qp_access_flags = IBV_ACCESS_MW_BIND; }),
            EINVAL);
}

TEST(ValuesFromIbv_Unsupported, Einval) {
  const ibv_qp_attr a{};
  transport::QpAttrValues v;
  for (std::uint32_t bit : {qa::kAltPath, qa::kPathMigState, qa::kCap, qa::kRateLimit,
                            qa::kEnSqdAsyncNotify, 1u << 30}) {
    EXPECT_EQ(values_from_ibv(bit, a, wire::PathMtu::k4096, 16, &v), EINVAL) << bit;
  }
}

// The GID table of the tests' device: fe80:: link-local, ::ffff:10.0.0.1,
// and a global IPv6 address at index 2.
const port::GidTable kGids(wire::MacAddr{{0x02, 0, 0, 0, 0, 0x01}}, wire::Ipv4Addr{0x0a000001},
                           *wire::Ipv6Addr::parse("2001:db8::1"));

TEST(AvFromIbv_Valid, Ipv4MappedGid) {
  transport::PathAddr av;
  ASSERT_EQ(av_from_ibv(av_to(10, 0, 0, 2), kPfc, kGids, &av), 0);
  EXPECT_EQ(av.dip.to_string(), "10.0.0.2");
  EXPECT_FALSE(av.ipv6);
  EXPECT_EQ(av.dscp, 46);  // the traffic class given
  EXPECT_EQ(av.ttl, 64);   // the device's TX TTL, not hop_limit 7
}

TEST(AvFromIbv_Valid, ServiceLevelPicksTheDscpAndDeviceTtl) {
  engine::PfcEndpointConfig pfc;
  pfc.ttl.tx_ttl = 33;
  transport::PathAddr av;
  ibv_ah_attr ah = av_to(10, 0, 0, 2);
  ah.grh.traffic_class = 0;
  ah.sl = 3;
  ASSERT_EQ(av_from_ibv(ah, pfc, kGids, &av), 0);
  EXPECT_EQ(av.dscp, 24);  // default map: SL 3 -> priority 3 -> CS3
  EXPECT_EQ(av.ttl, 33);
  ASSERT_EQ(pfc.map.set_priority_dscp(3, 26), pfc::PriorityMapError::kOk);
  ah.sl = 11;  // 11 mod 8 = priority 3
  ASSERT_EQ(av_from_ibv(ah, pfc, kGids, &av), 0);
  EXPECT_EQ(av.dscp, 26);
}

// A DC QP's AV: the traffic class (or the SL's DSCP) and the device's TX
// TTL; the destination GID is not looked at.
TEST(DcAvFromIbv, TrafficClassOnly) {
  engine::PfcEndpointConfig pfc;
  pfc.ttl.tx_ttl = 40;
  ibv_ah_attr ah{};
  ah.is_global = 1;
  ah.port_num = 1;
  ah.grh.traffic_class = 46 << 2;
  transport::PathAddr av;
  av.dip = wire::Ipv4Addr{0x01020304};
  ASSERT_EQ(dc_av_from_ibv(ah, pfc, &av), 0);
  EXPECT_EQ(av.dscp, 46);
  EXPECT_EQ(av.ttl, 40);
  EXPECT_EQ(av.dip.v, 0u);
  ah.is_global = 0;
  ah.sl = 3;
  ASSERT_EQ(dc_av_from_ibv(ah, pfc, &av), 0);
  EXPECT_EQ(av.dscp, 24);
  ah.port_num = 2;
  EXPECT_EQ(dc_av_from_ibv(ah, pfc, &av), EINVAL);
}

ibv_ah_attr av_to6(const char* gid, std::uint8_t sgid_index) {
  ibv_ah_attr ah = av_to(10, 0, 0, 2);
  const auto g = wire::Ipv6Addr::parse(gid);
  std::memcpy(ah.grh.dgid.raw, g->b.data(), 16);
  ah.grh.sgid_index = sgid_index;
  return ah;
}

TEST(AvFromIbv_Valid, LinkLocalGidZeroIsIpv6) {
  transport::PathAddr av;
  ASSERT_EQ(av_from_ibv(av_to6("fe80::ff:fe00:2", 0), kPfc, kGids, &av), 0);
  EXPECT_TRUE(av.ipv6);
  EXPECT_FALSE(av.global_src);
  EXPECT_EQ(av.route6.dst.to_string(), "fe80::ff:fe00:2");
  EXPECT_EQ(av.route6.src, wire::Ipv6Addr::link_local(wire::MacAddr{{0x02, 0, 0, 0, 0, 0x01}}));
  EXPECT_EQ(av.route6.flow_label, 0u);  // as rxe
  EXPECT_EQ(av.dscp, 46);
  EXPECT_EQ(av.ttl, 7);  // over IPv6 the AH's hop limit, as rxe sends it
  ibv_ah_attr ah = av_to6("fe80::ff:fe00:2", 0);
  ah.grh.hop_limit = 0;
  ASSERT_EQ(av_from_ibv(ah, kPfc, kGids, &av), 0);
  EXPECT_EQ(av.ttl, 64);  // none given: the device's TX TTL
}

TEST(AvFromIbv_Valid, GlobalGidIsIpv6FromTheGlobalAddress) {
  transport::PathAddr av;
  ASSERT_EQ(av_from_ibv(av_to6("2001:db8::2", 2), kPfc, kGids, &av), 0);
  EXPECT_TRUE(av.ipv6);
  EXPECT_TRUE(av.global_src);
  EXPECT_EQ(av.route6.dst.to_string(), "2001:db8::2");
  EXPECT_EQ(av.route6.src.to_string(), "2001:db8::1");
}

TEST(AvFromIbv_Rules, Einval) {
  transport::PathAddr av;
  ibv_ah_attr ah = av_to(10, 0, 0, 2);
  ah.is_global = 0;
  EXPECT_EQ(av_from_ibv(ah, kPfc, kGids, &av), EINVAL);
  ah = av_to(10, 0, 0, 2);
  ah.port_num = 2;
  EXPECT_EQ(av_from_ibv(ah, kPfc, kGids, &av), EINVAL);
  ah = av_to(10, 0, 0, 2);
  ah.grh.sgid_index = 0;  // an IPv4-mapped destination from the IPv6 GID
  EXPECT_EQ(av_from_ibv(ah, kPfc, kGids, &av), EINVAL);
  ah.grh.sgid_index = 3;  // empty entry
  EXPECT_EQ(av_from_ibv(ah, kPfc, kGids, &av), EINVAL);
  ah = av_to(10, 0, 0, 2);
  ah.grh.dgid.raw[0] = 0xfe;  // fe80::... from the IPv4 GID
  EXPECT_EQ(av_from_ibv(ah, kPfc, kGids, &av), EINVAL);
  EXPECT_EQ(av_from_ibv(av_to(0, 0, 0, 0), kPfc, kGids, &av), EINVAL);
  EXPECT_EQ(av_from_ibv(av_to(239, 1, 1, 1), kPfc, kGids, &av), EINVAL);
  EXPECT_EQ(av_from_ibv(av_to(255, 255, 255, 255), kPfc, kGids, &av), EINVAL);
  EXPECT_EQ(av_from_ibv(av_to6("ff02::1", 0), kPfc, kGids, &av), EINVAL);
  EXPECT_EQ(av_from_ibv(av_to6("::", 0), kPfc, kGids, &av), EINVAL);
  EXPECT_EQ(av_from_ibv(av_to6("::ffff:10.0.0.2", 2), kPfc, kGids, &av), EINVAL);
  const port::GidTable no_global(wire::MacAddr{{0x02, 0, 0, 0, 0, 0x01}},
                                 wire::Ipv4Addr{0x0a000001});
  EXPECT_EQ(av_from_ibv(av_to6("2001:db8::2", 2), kPfc, no_global, &av), EINVAL);
}

TEST(AvFromIbv_Group, AnAhMayNameAMulticastGroupAQpMayNot) {
  transport::PathAddr av;
  ASSERT_EQ(av_from_ibv(av_to(239, 1, 2, 3), kPfc, kGids, &av, /*group=*/true), 0);
  EXPECT_FALSE(av.ipv6);
  EXPECT_EQ(av.dip, (wire::Ipv4Addr{0xef010203}));
  ASSERT_EQ(av_from_ibv(av_to6("ff0e::5", 0), kPfc, kGids, &av, /*group=*/true), 0);
  EXPECT_TRUE(av.ipv6);
  EXPECT_EQ(av.route6.dst, *wire::Ipv6Addr::parse("ff0e::5"));
  // Still refused with `group`: broadcast, 0.0.0.0, ::.
  EXPECT_EQ(av_from_ibv(av_to(255, 255, 255, 255), kPfc, kGids, &av, true), EINVAL);
  EXPECT_EQ(av_from_ibv(av_to(0, 0, 0, 0), kPfc, kGids, &av, true), EINVAL);
  EXPECT_EQ(av_from_ibv(av_to6("::", 0), kPfc, kGids, &av, true), EINVAL);
}

TEST(IbvFromQuery, ShowsTheAv) {
  engine::QpQuery q;
  q.state = transport::QpState::kRts;
  q.values.path_mtu = wire::PathMtu::k4096;
  q.values.dest_qp_num = 0x42;
  q.values.av.dip = *wire::Ipv4Addr::parse("10.0.0.9");
  q.values.av.dscp = 46;
  q.values.av.ttl = 9;
  ibv_qp_attr a;
  ibv_from_query(q, kGids, &a);
  EXPECT_EQ(a.qp_state, IBV_QPS_RTS);
  EXPECT_EQ(a.cur_qp_state, IBV_QPS_RTS);
  EXPECT_EQ(a.path_mtu, IBV_MTU_4096);
  EXPECT_EQ(a.dest_qp_num, 0x42u);
  EXPECT_EQ(a.port_num, 1);
  EXPECT_EQ(a.ah_attr.is_global, 1);
  EXPECT_EQ(a.ah_attr.grh.sgid_index, 1);
  EXPECT_EQ(a.ah_attr.grh.traffic_class, 46 << 2);
  EXPECT_EQ(a.ah_attr.grh.hop_limit, 9);
  EXPECT_EQ(a.ah_attr.grh.dgid.raw[11], 0xff);
  EXPECT_EQ(a.ah_attr.grh.dgid.raw[15], 9);
  // No AV set yet: none shown.
  q.values.av = {};
  ibv_from_query(q, kGids, &a);
  EXPECT_EQ(a.ah_attr.is_global, 0);
}

TEST(IbvFromQuery, ShowsAnIpv6AvWithItsSourceIndex) {
  engine::QpQuery q;
  q.values.av.ipv6 = true;
  q.values.av.route6.dst = *wire::Ipv6Addr::parse("fe80::ff:fe00:2");
  q.values.av.ttl = 1;
  ibv_qp_attr a;
  ibv_from_query(q, kGids, &a);
  EXPECT_EQ(a.ah_attr.is_global, 1);
  EXPECT_EQ(a.ah_attr.grh.sgid_index, 0);
  EXPECT_EQ(a.ah_attr.grh.hop_limit, 1);
  EXPECT_EQ(a.ah_attr.grh.dgid.raw[0], 0xfe);
  EXPECT_EQ(a.ah_attr.grh.dgid.raw[15], 0x02);
  q.values.av.global_src = true;
  ibv_from_query(q, kGids, &a);
  EXPECT_EQ(a.ah_attr.grh.sgid_index, 2);
}

TEST(SrqAttr, RoundTrip) {
  const ibv_srq_attr in{100, 4, 10};
  const ibv_srq_attr out = ibv_from_srq_attr(srq_attr_from_ibv(in));
  EXPECT_EQ(out.max_wr, 100u);
  EXPECT_EQ(out.max_sge, 4u);
  EXPECT_EQ(out.srq_limit, 10u);
}

TEST(SchedFromReq, RateInKbpsBecomesBitsPerSecondWithBurstAndPacket) {
  ctl::SetQpSchedReq r{};
  r.flags = ctl::kSchedRate;
  r.rate_kbps = 250'000;
  r.max_burst_bytes = 65536;
  r.typical_pkt_bytes = 4096;
  engine::QpSched s;
  ASSERT_EQ(sched_from_req(r, &s), 0);
  EXPECT_TRUE(s.set_rate);
  EXPECT_FALSE(s.set_class);
  EXPECT_EQ(s.pace.rate_bps, 250'000'000u);
  EXPECT_EQ(s.pace.burst_bytes, 65536u);
  EXPECT_EQ(s.pace.typical_bytes, 4096u);
}

TEST(SchedFromReq, ZeroRateClearsTheLimit) {
  ctl::SetQpSchedReq r{};
  r.flags = ctl::kSchedRate;
  engine::QpSched s;
  ASSERT_EQ(sched_from_req(r, &s), 0);
  EXPECT_TRUE(s.set_rate);
  EXPECT_EQ(s.pace.rate_bps, 0u);
}

TEST(SchedFromReq, RateAboveThePacingMaximumIsEinval) {
  ctl::SetQpSchedReq r{};
  r.flags = ctl::kSchedRate;
  r.rate_kbps = ctl::kMaxRateKbps + 1;
  engine::QpSched s;
  EXPECT_EQ(sched_from_req(r, &s), EINVAL);
  r.rate_kbps = ctl::kMaxRateKbps;
  EXPECT_EQ(sched_from_req(r, &s), 0);
}

TEST(SchedFromReq, ClassInRangeOrFromDscpElseEinval) {
  ctl::SetQpSchedReq r{};
  r.flags = ctl::kSchedClass;
  r.tx_class = 7;
  engine::QpSched s;
  ASSERT_EQ(sched_from_req(r, &s), 0);
  EXPECT_TRUE(s.set_class);
  EXPECT_EQ(s.tx_class, 7);
  r.tx_class = ctl::kSchedClassFromDscp;
  ASSERT_EQ(sched_from_req(r, &s), 0);
  EXPECT_EQ(s.tx_class, engine::QpSched::kClassFromDscp);
  r.tx_class = 8;
  EXPECT_EQ(sched_from_req(r, &s), EINVAL);
}

TEST(SchedFromReq, UnknownFlagIsEinval) {
  ctl::SetQpSchedReq r{};
  r.flags = 4;
  engine::QpSched s;
  EXPECT_EQ(sched_from_req(r, &s), EINVAL);
}

}  // namespace
}  // namespace uroce::daemon
