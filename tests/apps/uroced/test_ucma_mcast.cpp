// rdma_cm multicast (apps/uroced/ucma_mcast.cpp): a group resolved with no
// ARP, JOIN_IP_MCAST / JOIN_MCAST answering a handle and a MULTICAST_JOIN
// event that addresses the group, LEAVE_MCAST counting the join's events,
// bad joins with their exact errors, and an id's destruction leaving its
// groups.
#include <arpa/inet.h>

#include "apps/uroced/cm_service.h"
#include "datapath/wire/bth.h"
#include "tests/apps/uroced/cm_fixture.h"

namespace uroce::daemon {
namespace {

using namespace testing;

constexpr std::uint32_t kGroup = (239u << 24) | (1u << 16) | (2u << 8) | 3;  // 239.1.2.3

struct Mcast : Service {
  std::uint32_t f = 0;
  std::uint32_t id = 0;

  // A UD id of file f resolved to group `group` from uroce0's address.
  void SetUp() override {
    Service::SetUp();
    f = open();
    id = create(f, 0x77, RDMA_PS_UDP, IBV_QPT_UD);
  }
  int resolve(std::uint32_t group) {
    rdma_ucm_resolve_ip ri{};
    ri.src_addr = v4(kIp0, 0);
    ri.dst_addr = v4(group, 0);
    ri.id = id;
    return run(f, cmd(RDMA_USER_CM_CMD_RESOLVE_IP, ri));
  }
  // JOIN_IP_MCAST of `group` by `who`: the errno, and the new handle in *mc.
  int join_ip(std::uint32_t who, const sockaddr_in6& group, std::uint64_t uid,
              std::uint32_t* mc = nullptr) {
    rdma_ucm_join_ip_mcast j{};
    j.response = 0x6000;
    j.uid = uid;
    j.addr = group;
    j.id = who;
    ctl::CmCommandRep rep{};
    const int rc = run(f, cmd(RDMA_USER_CM_CMD_JOIN_IP_MCAST, j, 4), &rep);
    if (rc == 0 && mc != nullptr) {
      EXPECT_EQ(rep.response_addr, 0x6000u);
      rdma_ucm_create_id_resp r;
      std::memcpy(&r, rep.resp, sizeof(r));
      *mc = r.id;
    }
    return rc;
  }
  int join(std::uint16_t flags, std::uint16_t addr_size, sa_family_t family = AF_INET,
           std::uint32_t who = 0) {
    rdma_ucm_join_mcast j{};
    j.response = 0x6000;
    j.uid = 1;
    sockaddr_in6 g = v4(kGroup, 0);
    g.sin6_family = family;
    std::memcpy(&j.addr, &g, sizeof(g));
    j.addr_size = addr_size;
    j.join_flags = flags;
    j.id = who != 0 ? who : id;
    return run(f, cmd(RDMA_USER_CM_CMD_JOIN_MCAST, j, 4));
  }
  // LEAVE_MCAST of `mc`: the errno, and events_reported in *reported.
  int leave(std::uint32_t mc, std::uint32_t* reported = nullptr) {
    rdma_ucm_destroy_id l{};
    l.response = 0x7000;
    l.id = mc;
    ctl::CmCommandRep rep{};
    const int rc = run(f, cmd(RDMA_USER_CM_CMD_LEAVE_MCAST, l, 4), &rep);
    if (rc == 0 && reported != nullptr) {
      rdma_ucm_destroy_id_resp r;
      std::memcpy(&r, rep.resp, sizeof(r));
      *reported = r.events_reported;
    }
    return rc;
  }
  int pending() {
    rdma_ucm_get_event g{};
    return run(f, cmd(RDMA_USER_CM_CMD_GET_EVENT, g));
  }
};

// A group's MAC is mapped from its address: the resolve needs no ARP and
// answers before any tick, even where no neighbour would answer.
TEST_F(Mcast, ResolveIp_GroupResolvesAtOnce) {
  d0.resolvable = false;
  d1.resolvable = false;
  ASSERT_EQ(resolve(kGroup), 0);
  const rdma_ucm_event_resp e = event(f);
  EXPECT_EQ(e.event, kEvAddrResolved);
  EXPECT_EQ(e.status, 0u);
  EXPECT_EQ(e.uid, 0x77u);
}

// The join's event carries the join's own context and handle, and UD
// parameters that address the group as the kernel's cma gives them on RoCE.
TEST_F(Mcast, JoinIpMcast_QueuesMulticastJoinAddressingTheGroup) {
  ASSERT_EQ(resolve(kGroup), 0);
  ASSERT_EQ(event(f).event, kEvAddrResolved);
  std::uint32_t mc = 0;
  ASSERT_EQ(join_ip(id, v4(kGroup, 0), 0xabc, &mc), 0);
  EXPECT_NE(mc, 0u);
  EXPECT_NE(mc, id);
  const rdma_ucm_event_resp e = event(f);
  EXPECT_EQ(e.event, kEvMulticastJoin);
  EXPECT_EQ(e.status, 0u);
  EXPECT_EQ(e.uid, 0xabcu);
  EXPECT_EQ(e.id, mc);
  EXPECT_EQ(e.param.ud.qp_num, wire::kMulticastQpn);
  EXPECT_EQ(e.param.ud.qkey, kUdpQkey);
  const std::uint8_t gid[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 239, 1, 2, 3};
  EXPECT_EQ(std::memcmp(e.param.ud.ah_attr.grh.dgid, gid, 16), 0);
  EXPECT_EQ(e.param.ud.ah_attr.is_global, 1);
  EXPECT_EQ(e.param.ud.ah_attr.grh.sgid_index, 1);
  EXPECT_EQ(e.param.ud.ah_attr.port_num, 1);
  EXPECT_EQ(pending(), ENODATA);
}

// A send-only join is a join (RoCE sends no IGMP either way).
TEST_F(Mcast, JoinMcast_FullAndSendOnlyMembersJoin) {
  ASSERT_EQ(resolve(kGroup), 0);
  ASSERT_EQ(event(f).event, kEvAddrResolved);
  EXPECT_EQ(join(RDMA_MC_JOIN_FLAG_FULLMEMBER, sizeof(sockaddr_in)), 0);
  EXPECT_EQ(event(f).event, kEvMulticastJoin);
  EXPECT_EQ(join(RDMA_MC_JOIN_FLAG_SENDONLY_FULLMEMBER, sizeof(sockaddr_in)), 0);
  EXPECT_EQ(event(f).event, kEvMulticastJoin);
}

// In the kernel's order: the address's size and family, the flags, the id.
TEST_F(Mcast, JoinMcast_BadInputGetsItsExactError) {
  ASSERT_EQ(resolve(kGroup), 0);
  ASSERT_EQ(event(f).event, kEvAddrResolved);
  EXPECT_EQ(join(RDMA_MC_JOIN_FLAG_SENDONLY_FULLMEMBER + 1, sizeof(sockaddr_in)), EINVAL);
  EXPECT_EQ(join(RDMA_MC_JOIN_FLAG_FULLMEMBER, sizeof(sockaddr_in6)), EINVAL);
  EXPECT_EQ(join(RDMA_MC_JOIN_FLAG_FULLMEMBER, sizeof(sockaddr_in), AF_UNIX), EINVAL);
  EXPECT_EQ(join(RDMA_MC_JOIN_FLAG_FULLMEMBER, 3, AF_INET, id + 100), EINVAL);  // size first
  EXPECT_EQ(join(RDMA_MC_JOIN_FLAG_FULLMEMBER, sizeof(sockaddr_in), AF_INET, id + 100), ENOENT);
  EXPECT_EQ(join(RDMA_MC_JOIN_FLAG_FULLMEMBER, sizeof(sockaddr_in6), AF_INET6), EAFNOSUPPORT);
  EXPECT_EQ(join_ip(id, v4(kIp1, 0), 1), EINVAL);  // not a group
  sockaddr_in6 odd = v4(kGroup, 0);
  odd.sin6_family = AF_UNIX;
  EXPECT_EQ(join_ip(id + 100, odd, 1), EINVAL);  // the family before the id
  sockaddr_in6 six{};
  six.sin6_family = AF_INET6;
  EXPECT_EQ(join_ip(id, six, 1), EAFNOSUPPORT);
  EXPECT_EQ(join_ip(id + 100, v4(kGroup, 0), 1), ENOENT);
  EXPECT_EQ(leave(id + 100), ENOENT);
  EXPECT_EQ(pending(), ENODATA);  // no join was made
}

// The kernel's states: ADDR_BOUND or ADDR_RESOLVED, not while the address
// is being resolved, nor once the route is.
TEST_F(Mcast, JoinIpMcast_OnlyBoundOrResolved) {
  d0.resolvable = false;
  d1.resolvable = false;
  ASSERT_EQ(resolve(kIp1), 0);  // ARP pending
  EXPECT_EQ(join_ip(id, v4(kGroup, 0), 1), EINVAL);
  d0.resolvable = true;
  d1.resolvable = true;
  cm.tick(0);
  ASSERT_EQ(event(f).event, kEvAddrResolved);
  EXPECT_EQ(join_ip(id, v4(kGroup, 0), 1), 0);
  EXPECT_EQ(event(f).event, kEvMulticastJoin);
  rdma_ucm_resolve_route rr{};
  rr.id = id;
  ASSERT_EQ(run(f, cmd(RDMA_USER_CM_CMD_RESOLVE_ROUTE, rr)), 0);
  EXPECT_EQ(join_ip(id, v4(kGroup, 0), 1), EINVAL);
}

// A join needs a UD id on a device: bound or resolved to one.
TEST_F(Mcast, JoinIpMcast_NeedsAUdIdOnADevice) {
  EXPECT_EQ(join_ip(id, v4(kGroup, 0), 1), EINVAL);  // on no device yet
  const std::uint32_t rc = create(f, 2);             // RDMA_PS_TCP, RC
  rdma_ucm_bind_ip b{};
  b.addr = v4(kIp0, 0);
  b.id = rc;
  ASSERT_EQ(run(f, cmd(RDMA_USER_CM_CMD_BIND_IP, b)), 0);
  EXPECT_EQ(join_ip(rc, v4(kGroup, 0), 1), EINVAL);
  b.id = id;
  ASSERT_EQ(run(f, cmd(RDMA_USER_CM_CMD_BIND_IP, b)), 0);
  EXPECT_EQ(join_ip(id, v4(kGroup, 0), 1), 0);  // bound to uroce0 is enough
  EXPECT_EQ(event(f).event, kEvMulticastJoin);
}

// librdmacm's rdma_leave_multicast waits until it has acked as many of the
// join's events as the leave reports: those taken, not those dropped.
TEST_F(Mcast, LeaveMcast_ReportsTheEventsTakenAndDropsTheRest) {
  ASSERT_EQ(resolve(kGroup), 0);
  ASSERT_EQ(event(f).event, kEvAddrResolved);
  std::uint32_t taken = 0, untaken = 0, reported = 99;
  ASSERT_EQ(join_ip(id, v4(kGroup, 0), 1, &taken), 0);
  ASSERT_EQ(event(f).event, kEvMulticastJoin);
  ASSERT_EQ(join_ip(id, v4(kGroup + 1, 0), 2, &untaken), 0);
  ASSERT_EQ(leave(taken, &reported), 0);
  EXPECT_EQ(reported, 1u);
  ASSERT_EQ(leave(untaken, &reported), 0);
  EXPECT_EQ(reported, 0u);
  EXPECT_EQ(pending(), ENODATA);
  EXPECT_EQ(leave(taken), ENOENT);  // left already
}

// Destroying an id leaves its groups; their events go with it, and the id
// counts those it reported.
TEST_F(Mcast, DestroyId_LeavesItsGroups) {
  ASSERT_EQ(resolve(kGroup), 0);
  ASSERT_EQ(event(f).event, kEvAddrResolved);
  std::uint32_t mc = 0;
  ASSERT_EQ(join_ip(id, v4(kGroup, 0), 1, &mc), 0);
  EXPECT_EQ(destroy_id(f, id), 1u);  // ADDR_RESOLVED; the join's was never taken
  EXPECT_EQ(pending(), ENODATA);
  EXPECT_EQ(leave(mc), ENOENT);
}

}  // namespace
}  // namespace uroce::daemon
