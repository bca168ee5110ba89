// The rdma_cm service (apps/uroced/cm_service.cpp, ucma_commands.cpp) over
// two fake devices whose QP1 MADs the test carries by hand: ucma commands
// as librdmacm writes them, a connection from one file to another, bad
// commands with their exact errors, and the reclaim of a closed file.
#include "apps/uroced/cm_service.h"

#include "datapath/wire/cm_dreq.h"
#include "tests/apps/uroced/cm_fixture.h"

namespace uroce::daemon {
namespace {

using namespace testing;

constexpr std::uint32_t kReadWriteAtomic =
    IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;

// As the Linux CM: no remote access before a connection exists, then
// remote WRITE, and READ and atomics when the QP answers any.
TEST_F(Service, InitQpAttr_AccessFlagsFollowResponderResources) {
  const std::uint32_t f = open();
  const std::uint32_t id = create(f, 9);
  ib_uverbs_qp_attr a{};
  EXPECT_EQ(init_attr(f, id, IBV_QPS_INIT, &a), EINVAL);  // not bound to a device yet
  rdma_ucm_resolve_ip ri{};
  ri.dst_addr = v4(kIp1, 7000);
  ri.id = id;
  ASSERT_EQ(run(f, cmd(RDMA_USER_CM_CMD_RESOLVE_IP, ri)), 0);
  cm.tick(0);
  ASSERT_EQ(init_attr(f, id, IBV_QPS_INIT, &a), 0);
  EXPECT_EQ(a.qp_access_flags, 0u);
  EXPECT_NE(a.qp_attr_mask & IBV_QP_ACCESS_FLAGS, 0u);
  EXPECT_EQ(init_attr(f, id, IBV_QPS_RTR, &a), EINVAL);  // no connection yet

  // The server accepts with 2 responder resources and an initiator depth
  // of 1; the client asked for 4 and 2.
  const Conn k = connect(2, 1);
  ASSERT_EQ(init_attr(k.c, k.id, IBV_QPS_INIT, &a), 0);
  EXPECT_EQ(a.qp_access_flags, kReadWriteAtomic);
  ASSERT_EQ(init_attr(k.c, k.id, IBV_QPS_RTR, &a), 0);
  EXPECT_EQ(a.max_dest_rd_atomic, 1);  // the REP's initiator depth
  ASSERT_EQ(init_attr(k.c, k.id, IBV_QPS_RTS, &a), 0);
  EXPECT_EQ(a.max_rd_atomic, 2);  // the REP's responder resources
  ASSERT_EQ(init_attr(k.s, k.child, IBV_QPS_INIT, &a), 0);
  EXPECT_EQ(a.qp_access_flags, kReadWriteAtomic);
  ASSERT_EQ(init_attr(k.s, k.child, IBV_QPS_RTR, &a), 0);
  EXPECT_EQ(a.max_dest_rd_atomic, 2);
  ASSERT_EQ(init_attr(k.s, k.child, IBV_QPS_RTS, &a), 0);
  EXPECT_EQ(a.max_rd_atomic, 1);
}

TEST_F(Service, InitQpAttr_NoResponderResourcesGivesRemoteWriteOnly) {
  const Conn k = connect(0, 0);
  ib_uverbs_qp_attr a{};
  ASSERT_EQ(init_attr(k.c, k.id, IBV_QPS_INIT, &a), 0);
  EXPECT_EQ(a.qp_access_flags, static_cast<std::uint32_t>(IBV_ACCESS_REMOTE_WRITE));
  ASSERT_EQ(init_attr(k.s, k.child, IBV_QPS_INIT, &a), 0);
  EXPECT_EQ(a.qp_access_flags, static_cast<std::uint32_t>(IBV_ACCESS_REMOTE_WRITE));
  ASSERT_EQ(init_attr(k.c, k.id, IBV_QPS_RTR, &a), 0);
  EXPECT_EQ(a.max_dest_rd_atomic, 0);
}

TEST_F(Service, Command_ConnectsTwoFilesOverQp1) {
  const Conn k = connect();
  // The active side's RTR attributes name the passive QP and the peer GID.
  rdma_ucm_init_qp_attr q{};
  q.response = 0x3000;
  q.id = k.id;
  q.qp_state = IBV_QPS_RTR;
  ctl::CmCommandRep rep{};
  ASSERT_EQ(run(k.c, cmd(RDMA_USER_CM_CMD_INIT_QP_ATTR, q, sizeof(ib_uverbs_qp_attr)), &rep), 0);
  ib_uverbs_qp_attr a;
  std::memcpy(&a, rep.resp, sizeof(a));
  EXPECT_EQ(a.dest_qp_num, 0x22u);
  EXPECT_EQ(a.ah_attr.grh.sgid_index, 1);
  EXPECT_EQ(a.ah_attr.grh.dgid[15], 2);
  EXPECT_EQ(a.ah_attr.grh.dgid[10], 0xff);
  EXPECT_NE(a.qp_attr_mask & IBV_QP_DEST_QPN, 0u);
  // QUERY_ROUTE: uroce0's GUID (the client reached 10.0.0.2 from uroce0).
  rdma_ucm_query qr{};
  qr.response = 0x4000;
  qr.id = k.id;
  ASSERT_EQ(run(k.c, cmd(RDMA_USER_CM_CMD_QUERY_ROUTE, qr, sizeof(rdma_ucm_query_route_resp)),
                &rep),
            0);
  rdma_ucm_query_route_resp r;
  std::memcpy(&r, rep.resp, sizeof(r));
  EXPECT_EQ(r.num_paths, 1u);
  EXPECT_EQ(r.ibdev_index, 0xffffffffu);
  EXPECT_EQ(reinterpret_cast<const std::uint8_t*>(&r.node_guid)[7], 1);
  const CmStatus st = cm.status();
  EXPECT_EQ(st.files, 2u);
  EXPECT_EQ(st.listeners, 1u);
  EXPECT_EQ(st.connections, 2u);
}

TEST_F(Service, Command_BadInputGetsItsExactError) {
  const std::uint32_t f = open();
  const std::uint32_t g = open();
  const std::uint32_t id = create(f, 1);
  rdma_ucm_listen l{};
  l.id = id;
  EXPECT_EQ(run(g, cmd(RDMA_USER_CM_CMD_LISTEN, l)), ENOENT);  // another file's id
  l.id = 9999;
  EXPECT_EQ(run(f, cmd(RDMA_USER_CM_CMD_LISTEN, l)), ENOENT);
  rdma_ucm_notify n{};
  EXPECT_EQ(run(f, cmd(RDMA_USER_CM_CMD_NOTIFY, n)), ENOSYS);
  rdma_ucm_get_event ge{};
  EXPECT_EQ(run(f, cmd(RDMA_USER_CM_CMD_GET_EVENT, ge)), ENODATA);
  rdma_ucm_create_id c{};
  c.ps = RDMA_PS_IPOIB;
  c.qp_type = IBV_QPT_UD;
  EXPECT_EQ(run(f, cmd(RDMA_USER_CM_CMD_CREATE_ID, c)), EPROTONOSUPPORT);
  c.ps = RDMA_PS_UDP;
  c.qp_type = IBV_QPT_RC;  // UDP's ids are UD
  EXPECT_EQ(run(f, cmd(RDMA_USER_CM_CMD_CREATE_ID, c)), EINVAL);
  rdma_ucm_bind b{};
  b.id = id;
  b.addr.ss_family = 27;  // AF_IB: librdmacm's probe
  EXPECT_EQ(run(f, cmd(RDMA_USER_CM_CMD_BIND, b)), EAFNOSUPPORT);
  rdma_ucm_bind_ip bi{};
  bi.id = id;
  bi.addr = v4((192u << 24) | 7, 1);
  EXPECT_EQ(run(f, cmd(RDMA_USER_CM_CMD_BIND_IP, bi)), EADDRNOTAVAIL);
  bi.addr = v4(kIp0, 5000);
  EXPECT_EQ(run(f, cmd(RDMA_USER_CM_CMD_BIND_IP, bi)), 0);
  const std::uint32_t other = create(f, 2);
  bi.id = other;
  EXPECT_EQ(run(f, cmd(RDMA_USER_CM_CMD_BIND_IP, bi)), EADDRINUSE);
  rdma_ucm_connect cn{};
  cn.id = other;
  EXPECT_EQ(run(f, cmd(RDMA_USER_CM_CMD_CONNECT, cn)), EINVAL);  // no route yet
  ctl::CmCommandReq big = cmd(RDMA_USER_CM_CMD_LISTEN, l);
  big.in = ctl::kUcmaMaxBody + 1;
  EXPECT_EQ(run(f, big), EINVAL);
  EXPECT_EQ(cm.command(12345, big, nullptr), EBADF);
  EXPECT_EQ(cm.status().service.bad_commands, 12u);
}

// As Linux's CM: a loopback address binds as the wildcard (no device), and
// takes the wildcard's ports.
TEST_F(Service, Bind_LoopbackBindsAsTheWildcard) {
  const std::uint32_t f = open();
  const std::uint32_t id = create(f, 1);
  rdma_ucm_bind_ip b{};
  b.id = id;
  b.addr = v4((127u << 24) | 1, 6000);
  ASSERT_EQ(run(f, cmd(RDMA_USER_CM_CMD_BIND_IP, b)), 0);
  rdma_ucm_query q{};
  q.response = 0x4000;
  q.id = id;
  ctl::CmCommandRep rep{};
  ASSERT_EQ(run(f, cmd(RDMA_USER_CM_CMD_QUERY_ROUTE, q, sizeof(rdma_ucm_query_route_resp)), &rep),
            0);
  rdma_ucm_query_route_resp r;
  std::memcpy(&r, rep.resp, sizeof(r));
  sockaddr_in in;
  std::memcpy(&in, &r.src_addr, sizeof(in));
  EXPECT_EQ(in.sin_addr.s_addr, htonl(INADDR_ANY));
  EXPECT_EQ(ntohs(in.sin_port), 6000);
  ib_uverbs_qp_attr a{};
  EXPECT_EQ(init_attr(f, id, IBV_QPS_INIT, &a), EINVAL);  // no device
  const std::uint32_t other = create(f, 2);
  b.id = other;
  b.addr = v4(0, 6000);
  EXPECT_EQ(run(f, cmd(RDMA_USER_CM_CMD_BIND_IP, b)), EADDRINUSE);
}

TEST_F(Service, Tick_UnresolvableAddressGivesAddrError) {
  d0.resolvable = false;
  d1.resolvable = false;
  const std::uint32_t f = open();
  const std::uint32_t id = create(f, 5);
  rdma_ucm_resolve_ip ri{};
  ri.dst_addr = v4((10u << 24) | 99, 1);
  ri.id = id;
  ASSERT_EQ(run(f, cmd(RDMA_USER_CM_CMD_RESOLVE_IP, ri)), 0);
  cm.tick(0);
  rdma_ucm_get_event ge{};
  EXPECT_EQ(run(f, cmd(RDMA_USER_CM_CMD_GET_EVENT, ge)), ENODATA);
  cm.tick(kLater);
  const rdma_ucm_event_resp e = event(f);
  EXPECT_EQ(e.event, kEvAddrError);
  EXPECT_EQ(static_cast<int>(e.status), -EHOSTUNREACH);
  EXPECT_EQ(e.uid, 5u);
}

TEST_F(Service, Tick_DrainsOnlyDevicesThatHoldAMad) {
  (void)open();
  cm.tick(0);
  EXPECT_EQ(d0.gsi_drains, 0);
  EXPECT_EQ(d1.gsi_drains, 0);
  const Conn k = connect();
  (void)k;
  const int before0 = d0.gsi_drains;
  const int before1 = d1.gsi_drains;
  d1.gsi_in.push_back(engine::GsiMad{});
  cm.tick(0);
  EXPECT_EQ(d0.gsi_drains, before0);
  EXPECT_EQ(d1.gsi_drains, before1 + 1);
  EXPECT_TRUE(d1.gsi_in.empty());
}

TEST_F(Service, NextNap_IdleWithAFileOpenIsTheLongest) {
  // A file open with nothing in flight (UCX opens one and never connects
  // through it) used to keep the thread at a 1 ms period.
  (void)create(open(), 1);
  cm.tick(0);
  EXPECT_EQ(cm.next_nap(0), CmService::kIdleNapMs * kNsPerMs);
}

TEST_F(Service, NextNap_ResolvingPollsEveryMillisecond) {
  d0.resolvable = false;
  d1.resolvable = false;
  const std::uint32_t f = open();
  rdma_ucm_resolve_ip ri{};
  ri.dst_addr = v4((10u << 24) | 99, 1);
  ri.id = create(f, 5);
  ASSERT_EQ(run(f, cmd(RDMA_USER_CM_CMD_RESOLVE_IP, ri)), 0);
  cm.tick(0);
  EXPECT_EQ(cm.next_nap(0), CmService::kResolveNapMs * kNsPerMs);
  cm.tick(kLater);  // gives up: the address error ends the polling
  EXPECT_EQ(cm.next_nap(kLater), CmService::kIdleNapMs * kNsPerMs);
}

TEST_F(Service, NextNap_EndsByTheMachinesTimer) {
  const Conn k = connect();
  EXPECT_EQ(cm.next_nap(kLater), CmService::kIdleNapMs * kNsPerMs);
  cm.close_file(k.c);  // a DREQ goes out and waits for its DREP
  ASSERT_EQ(d0.gsi_out.size(), 1u);
  // Its retry is due long before kLater: no nap at all then.
  EXPECT_EQ(cm.next_nap(kLater), 0);
}

TEST_F(Service, Start_GivesEveryDeviceTheBellAndStopTakesItBack) {
  cm.start();
  EXPECT_NE(d0.gsi_bell, nullptr);
  EXPECT_EQ(d0.gsi_bell, d1.gsi_bell);
  cm.stop();
  EXPECT_EQ(d0.gsi_bell, nullptr);
  EXPECT_EQ(d1.gsi_bell, nullptr);
}

TEST_F(Service, CloseFile_ReleasesConnectionsOnTheWire) {
  const Conn k = connect();
  cm.close_file(k.c);
  // The client's process is gone: its connection sends a DREQ.
  ASSERT_EQ(d0.gsi_out.size(), 1u);
  const wire::MadHdr h = wire::MadHdr::read(d0.gsi_out[0].mad.data());
  EXPECT_EQ(h.attr_id(), static_cast<std::uint16_t>(wire::CmAttr::kDreq));
  pump();
  EXPECT_EQ(event(k.s).event, kEvDisconnected);
  const CmStatus st = cm.status();
  EXPECT_EQ(st.files, 1u);
  EXPECT_EQ(st.ids, 2u);  // the listener and its accepted child
}

TEST_F(Service, DestroyId_DropsItsQueuedEventsAndCountsReported) {
  const std::uint32_t f = open();
  const std::uint32_t id = create(f, 7);
  rdma_ucm_resolve_ip ri{};
  ri.dst_addr = v4(kIp1, 1);
  ri.id = id;
  ASSERT_EQ(run(f, cmd(RDMA_USER_CM_CMD_RESOLVE_IP, ri)), 0);
  cm.tick(0);
  EXPECT_EQ(event(f).event, kEvAddrResolved);
  rdma_ucm_resolve_route rr{};
  rr.id = id;
  ASSERT_EQ(run(f, cmd(RDMA_USER_CM_CMD_RESOLVE_ROUTE, rr)), 0);
  EXPECT_EQ(destroy_id(f, id), 1u);  // ROUTE_RESOLVED was never taken
  rdma_ucm_get_event ge{};
  EXPECT_EQ(run(f, cmd(RDMA_USER_CM_CMD_GET_EVENT, ge)), ENODATA);
}

}  // namespace
}  // namespace uroce::daemon
